"""The Python facade: parses strings and reads the environment.

The cores decide; this module turns strings into their arguments, the way the
reference reads them with Rust's standard library: ``usize::from_str`` for
numbers, ``str::trim`` and ``to_ascii_lowercase`` for truthiness,
``std::env::var`` for the environment.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Final

from . import _selector
from ._selector import (
    CORE,
    DECODE_ROLLBACK_RING_SLOTS,
    USIZE_MAX,
    DecodeRingDecision,
    EnvironmentReader,
    decode_rollback_ring_slots_with_rule,
    published_decode_ring_slots,
)

RING_OVERRIDE_VARIABLE: Final = "METRALE_SSM_DECODE_RING"
DISABLE_WATCHDOGS_VARIABLE: Final = "METRALE_DISABLE_WATCHDOGS"
RESERVE_RING_FULL_VARIABLE: Final = "METRALE_SSM_RESERVE_RING_FULL"

# Rust's str::trim strips the Unicode White_Space set. Python's str.strip()
# also strips U+001C..U+001F, which White_Space does not contain.
RUST_WHITESPACE: Final = (
    "\t\n\v\f\r \x85\xa0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
_ASCII_LOWERCASE: Final = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)

# Unset and the exact spellings that servers set, answered without trimming
# or lower-casing.
_COMMON_WATCHDOG_VALUES: Final[dict[str | None, bool]] = {
    None: False,
    "1": True,
    "true": True,
    "0": False,
    "false": False,
}
_COMMON_SLOT_VALUES: Final[dict[str, int | None]] = {
    "auto": None,
    **{str(slots): slots for slots in range(DECODE_ROLLBACK_RING_SLOTS + 1)},
}


def rust_usize_from_str(s: str) -> int | None:
    """``s.parse::<usize>()``: ASCII digits after an optional ``+``, any number
    of leading zeros, at most ``USIZE_MAX``; None where Rust errs."""
    digits = s[1:] if s.startswith("+") else s
    if not digits or not (digits.isascii() and digits.isdigit()):
        return None
    # int() refuses very long strings; leading zeros cannot make a value large.
    significant = digits.lstrip("0") or "0"
    if len(significant) > len(str(USIZE_MAX)):
        return None
    value = int(significant)
    return value if value <= USIZE_MAX else None


def parse_decode_ring_slots(s: str) -> int | None:
    """Parse ``--ssm-decode-ring-slots``: ``auto`` gives None (fit at
    preflight), a number up to ``DECODE_ROLLBACK_RING_SLOTS`` gives that int,
    anything else raises ``ValueError`` with the reference's message."""
    if not isinstance(s, str):
        raise TypeError(f"ssm-decode-ring-slots must be str, not {type(s).__name__}")
    try:
        return _COMMON_SLOT_VALUES[s]
    except KeyError:
        pass
    slots = rust_usize_from_str(s)
    if slots is None:
        raise ValueError(
            f"unknown ssm-decode-ring-slots '{s}' (valid: auto, 0..={DECODE_ROLLBACK_RING_SLOTS})"
        )
    if slots > DECODE_ROLLBACK_RING_SLOTS:
        raise ValueError(
            f"ssm-decode-ring-slots {slots} exceeds the "
            f"{DECODE_ROLLBACK_RING_SLOTS} the ring is sized for"
        )
    return slots


def watchdogs_disabled_from_value(value: str | None) -> bool:
    """``METRALE_DISABLE_WATCHDOGS`` truthiness: ``1`` or ``true``, trimmed as
    Rust's ``str::trim`` does and lower-cased in ASCII only."""
    if value is None:
        return False
    if not isinstance(value, str):
        raise TypeError(f"watchdogs value must be str or None, not {type(value).__name__}")
    common = _COMMON_WATCHDOG_VALUES.get(value)
    if common is not None:
        return common
    normalised = value.strip(RUST_WHITESPACE).translate(_ASCII_LOWERCASE)
    return normalised == "1" or normalised == "true"


def make_decode_rollback_ring_slots(
    core: ModuleType,
) -> Callable[[int, bool], DecodeRingDecision]:
    """Returns ``decode_rollback_ring_slots`` over ``core``: the core reads the
    environment and decides in one call; this facade names the variables and
    says what a watchdogs value means (``watchdogs_disabled_from_value``), which
    the core asks only when the value changed.

    The returned function is the per-sequence ring depth, from the published
    depth and the environment, read afresh at every call:
    ``METRALE_SSM_DECODE_RING`` and ``METRALE_DISABLE_WATCHDOGS`` (unset when
    not valid Unicode). Preflight and the allocation must pass the same
    ``use_speculative``, or the reserve and the ring differ.
    """
    decision = core.EnvironmentDecision(
        RING_OVERRIDE_VARIABLE, DISABLE_WATCHDOGS_VARIABLE, watchdogs_disabled_from_value
    )
    return decision.decode_rollback_ring_slots  # type: ignore[no-any-return]


decode_rollback_ring_slots: Final = make_decode_rollback_ring_slots(_selector.core)

NOT_VALID_UNICODE: Final = "<not valid Unicode>"
_explained_environment: Final = EnvironmentReader(
    (RING_OVERRIDE_VARIABLE, DISABLE_WATCHDOGS_VARIABLE, RESERVE_RING_FULL_VARIABLE)
)


@dataclass(frozen=True)
class ExplainedDecision:
    """A depth decision with everything behind it: the rule of
    ``DECISION_RULES`` that decided, the inputs, and the environment as read
    (a variable that is set but not valid Unicode shows as
    ``NOT_VALID_UNICODE``, and reads as unset)."""

    decision: DecodeRingDecision
    rule: str
    num_ssm_layers: int
    use_speculative: bool
    published: int | None
    environment: dict[str, str | None]
    core: str


def explain_decode_rollback_ring_slots(
    num_ssm_layers: int, use_speculative: bool
) -> ExplainedDecision:
    """``decode_rollback_ring_slots`` with the rule that decided, from one
    reading of the environment."""
    values = _explained_environment.read()
    present = _explained_environment.present()
    ring_override, disable_watchdogs, _ = values
    published = published_decode_ring_slots()
    decision, rule = decode_rollback_ring_slots_with_rule(
        num_ssm_layers,
        use_speculative,
        published,
        ring_override,
        watchdogs_disabled_from_value(disable_watchdogs),
    )
    environment = {
        name: NOT_VALID_UNICODE if value is None and is_set else value
        for name, value, is_set in zip(_explained_environment.names, values, present, strict=True)
    }
    return ExplainedDecision(
        decision, rule, num_ssm_layers, bool(use_speculative), published, environment, CORE
    )
