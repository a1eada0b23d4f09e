"""Sizes as operators write them."""

from __future__ import annotations

import re

import pytest

from decode_ring import USIZE_MAX
from decode_ring.printable import show
from decode_ring.units import ACCEPTED_FORMS, format_size, parse_memory_size, parse_size

from .support import whole


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("0", 0),
        ("123", 123),
        ("123B", 123),
        ("1KiB", 1024),
        ("7039MiB", 7039 * 2**20),
        ("151.5MiB", 158_859_264),
        ("14.1GiB", 15_139_759_718),  # 15,139,759,718.4: fractions of a byte drop
        ("14.1 GiB", 15_139_759_718),
        ("2TiB", 2 * 2**40),
        ("1.5KB", 1500),
        ("3MB", 3_000_000),
        ("64GB", 64 * 10**9),
        ("1TB", 10**12),
        ("64gib", 64 * 2**30),
        (".5KiB", 512),
        ("1.GiB", 2**30),
        ("5.GiB", 5 * 2**30),
        ("14.1G", 14_100_000_000),
        ("14.1g", 14_100_000_000),
        ("14.1Gi", 15_139_759_718),
        ("14.1 GB", 14_100_000_000),
        ("1k", 1000),
        ("1Ki", 1024),
        ("2M", 2_000_000),
        ("2Mi", 2 * 2**20),
        ("1T", 10**12),
        ("1Ti", 2**40),
        ("14B", 14),
        ("14.0", 14),
        (" 8GiB ", 8 * 2**30),
        ("16777215.99999TiB", 16777215 * 2**40 + int(0.99999 * 2**40)),
    ],
)
def test_parse_size(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize(
    "text",
    [
        "",
        "GiB",
        "-1",
        "-1GiB",
        "1e9",
        "inf",
        "nan",
        "1,5GiB",
        "14.1",
        "14.5B",
        ".5",
        "1.5 ",
        "5iB",
        "1KIBB",
        "1P",
        "1PiB",
        "12XB",
        "1 2",
        "1  GiB",
        "0x10",
        "\u0661GiB",
        "16777216TiB",
        "18446744073709551616",
    ],
)
def test_parse_size_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_size(text)


@pytest.mark.parametrize(
    ("size", "text"),
    [
        (0, "0 B"),
        (1023, "1023 B"),
        (1024, "1.00 KiB"),
        (158_859_264, "151.50 MiB"),
        (15_139_759_718, "14.10 GiB"),
        (2**40, "1.00 TiB"),
    ],
)
def test_format_size(size: int, text: str) -> None:
    assert format_size(size) == text


# Issue 19: a bare number under 1 MiB for an amount of memory is a missing unit.


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("0", 0),
        ("80B", 80),
        ("1048576", 2**20),
        (" 1048576 ", 2**20),
        ("80G", 80 * 10**9),
        ("80GiB", 80 * 2**30),
        ("1KiB", 1024),
    ],
)
def test_memory_sizes_that_stand(text: str, size: int) -> None:
    assert parse_memory_size(text) == size


@pytest.mark.parametrize(("text", "number"), [("80", "80"), ("1", "1"), ("1048575", "1048575")])
def test_a_bare_number_under_a_mebibyte_is_refused(text: str, number: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_memory_size(text)
    assert str(caught.value) == (
        f"'{text}' is {int(number)} bytes: did you mean {number} GiB? A bare number is bytes; "
        f"write {number}GiB, or {number}B to mean bytes"
    )


def test_a_memory_size_refuses_what_parse_size_refuses() -> None:
    with pytest.raises(ValueError, match=r"bytes must be whole; did you mean 14\.1GiB"):
        parse_memory_size("14.1")
    with pytest.raises(TypeError):
        parse_memory_size(80)  # type: ignore[arg-type]


# --- what mutation testing found: whole messages, the edges of sizes, quoting -------------------


def test_a_size_that_is_not_a_str_names_its_type() -> None:
    with pytest.raises(TypeError, match=whole("a size must be str, not int")):
        parse_size(5)  # type: ignore[arg-type]


def test_only_spaces_and_tabs_around_a_size_are_stripped() -> None:
    assert parse_size(" \t5 \t") == 5
    for text in ["\n5", "5\n", "5\r", "\x0b5", "X5", "5X", "XX5XX"]:
        with pytest.raises(
            ValueError, match=whole(f"invalid size {text!a}: write {ACCEPTED_FORMS}")
        ):
            parse_size(text)


def test_a_bare_fraction_suggests_the_same_number_in_gib() -> None:
    message = (
        f"invalid size '14.1': bytes must be whole; did you mean 14.1GiB? Write {ACCEPTED_FORMS}"
    )
    with pytest.raises(ValueError, match=whole(message)):
        parse_size("14.1")
    with pytest.raises(ValueError, match=re.escape("did you mean .5GiB?")):
        parse_size(".5 B")


def test_usize_max_bytes_is_a_size_and_one_more_is_not() -> None:
    assert parse_size(str(USIZE_MAX)) == USIZE_MAX
    too_many = str(USIZE_MAX + 1)
    message = f"size '{too_many}' exceeds the {USIZE_MAX} bytes a usize holds"
    with pytest.raises(ValueError, match=whole(message)):
        parse_size(too_many)


def test_every_refusal_quotes_at_most_40_characters_of_the_text() -> None:
    # 41 characters each: the first 40 quoted, then the length (show's default is 64).
    unknown = "x" * 41
    with pytest.raises(
        ValueError,
        match=whole(f"invalid size '{'x' * 40}'... (41 characters): write {ACCEPTED_FORMS}"),
    ):
        parse_size(unknown)
    fraction = "1." + "5" * 39
    message = (
        f"invalid size '1.{'5' * 38}'... (41 characters): bytes must be whole; "
        f"did you mean 1.{'5' * 39}GiB? Write {ACCEPTED_FORMS}"
    )
    with pytest.raises(ValueError, match=whole(message)):
        parse_size(fraction)
    huge = "1" * 41
    message = f"size '{'1' * 40}'... (41 characters) exceeds the {USIZE_MAX} bytes a usize holds"
    with pytest.raises(ValueError, match=whole(message)):
        parse_size(huge)
    bare = "0" * 39 + "80"
    message = (
        f"'{'0' * 39}8'... (41 characters) is 80 bytes: did you mean {bare} GiB? A bare number "
        f"is bytes; write {bare}GiB, or {bare}B to mean bytes"
    )
    with pytest.raises(ValueError, match=whole(message)):
        parse_memory_size(bare)


def test_show_keeps_its_limit_of_characters_whole() -> None:
    assert show("a" * 40, limit=40) == "'" + "a" * 40 + "'"
    assert show("a" * 41, limit=40) == "'" + "a" * 40 + "'... (41 characters)"
    assert show("b" * 5, limit=4) == "'bbbb'... (5 characters)"
    assert show("a" * 65) == "'" + "a" * 64 + "'... (65 characters)"
    assert show(2**200) == "<201-bit integer>"
    assert show(2**128 - 1) == str(2**128 - 1)
    assert show([1]) == "<list>"
    assert show(1.5) == "1.5"
    assert show("\n") == "'\\n'"


def test_show_prints_none_and_the_bools_as_python_writes_them() -> None:
    assert show(None) == "None"
    assert show(True) == "True"
    assert show(False) == "False"
