"""Sizes as operators write them."""

from __future__ import annotations

import pytest

from decode_ring.units import format_size, parse_size


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
