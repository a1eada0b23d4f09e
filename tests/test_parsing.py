"""The facade's parsers read strings as the reference's Rust does."""

from __future__ import annotations

import pytest

from decode_ring._facade import parse_decode_ring_slots, watchdogs_disabled_from_value

from .support import whole

UNKNOWN = "unknown ssm-decode-ring-slots '{}' (valid: auto, 0..=8)"
EXCEEDS = "ssm-decode-ring-slots {} exceeds the 8 the ring is sized for"


@pytest.mark.parametrize(
    ("text", "slots"),
    [
        ("auto", None),
        *[(str(n), n) for n in range(9)],
        ("+5", 5),
        ("+0", 0),
        ("0008", 8),
        ("0" * 5000 + "3", 3),  # Python's int() refuses this many digits
        ("+" + "0" * 30, 0),
    ],
)
def test_accepted(text: str, slots: int | None) -> None:
    assert parse_decode_ring_slots(text) == slots


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("9", 9),
        ("+09", 9),
        ("100", 100),
        ("18446744073709551615", 18446744073709551615),
        ("0" * 40 + "18446744073709551615", 18446744073709551615),
    ],
)
def test_too_deep_is_the_exceeds_error(text: str, shown: int) -> None:
    with pytest.raises(ValueError) as raised:
        parse_decode_ring_slots(text)
    assert str(raised.value) == EXCEEDS.format(shown)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "+",
        "-0",
        "-1",
        "++1",
        " 3",
        "3 ",
        "3\n",
        "1_0",
        "0x1",
        "1e1",
        "3.0",
        "AUTO",
        "Auto",
        " auto",
        "\u0663",  # ARABIC-INDIC DIGIT THREE: int() takes it, Rust does not
        "\uff13",  # FULLWIDTH DIGIT THREE
        "\u00b2",  # SUPERSCRIPT TWO
        "18446744073709551616",  # too large for usize: unknown, not exceeds
        "99999999999999999999999999",
    ],
)
def test_rejected_as_unknown_with_the_reference_message(text: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_decode_ring_slots(text)
    assert str(raised.value) == UNKNOWN.format(text)


@pytest.mark.parametrize("value", [b"auto", b"1", 1, None, 3.0, ["1"]])
def test_parse_takes_only_str(value: object) -> None:
    with pytest.raises(TypeError):
        parse_decode_ring_slots(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "disabled"),
    [
        (None, False),
        ("1", True),
        ("true", True),
        ("TRUE", True),
        ("tRuE", True),
        (" true\n", True),
        ("\t1\r\n", True),
        ("\u3000true\u2029", True),  # ideographic space, paragraph separator
        ("\u00a01\u0085", True),  # no-break space, next line
        ("\u1680\u2000\u200atrue\u202f\u205f", True),
        ("\x0b\x0c1", True),
        ("0", False),
        ("false", False),
        ("", False),
        ("yes", False),
        ("on", False),
        ("2", False),
        ("1 1", False),
        ("true!", False),
        # Python's str.strip() would strip these; Rust's str::trim does not.
        ("\x1ctrue", False),
        ("1\x1d", False),
        ("\x1e1\x1f", False),
        # Not White_Space at all.
        ("\u200btrue", False),
        ("\ufeff1", False),
        # ASCII-only lower-casing.
        ("\uff34\uff32\uff35\uff25", False),  # FULLWIDTH TRUE
    ],
)
def test_watchdogs_truthiness(value: str | None, disabled: bool) -> None:
    assert watchdogs_disabled_from_value(value) is disabled


@pytest.mark.parametrize("value", [b"1", 1, True, 0.0])
def test_watchdogs_take_str_or_none(value: object) -> None:
    with pytest.raises(TypeError):
        watchdogs_disabled_from_value(value)  # type: ignore[arg-type]


def test_facade_type_errors() -> None:
    with pytest.raises(TypeError, match=whole("ssm-decode-ring-slots must be str, not int")):
        parse_decode_ring_slots(3)  # type: ignore[arg-type]
    message = "watchdogs value must be str or None, not bytes"
    with pytest.raises(TypeError, match=whole(message)):
        watchdogs_disabled_from_value(b"1")  # type: ignore[arg-type]
