"""Rust's ``usize`` in pure Python, the twin of ``_usize.pxd``: argument
checks that raise as the compiled core's conversions do, and saturating
arithmetic. A usize is anything with ``__index__`` in ``0..=USIZE_MAX``."""

from __future__ import annotations

import operator
import sys
from typing import Final

USIZE_MAX: Final = sys.maxsize * 2 + 1


def usize(value: object, name: str) -> int:
    """``value`` as a usize: ``TypeError`` for a non-integer (also when its
    ``__index__`` raises), ``OverflowError`` out of range."""
    if not hasattr(type(value), "__index__"):
        raise TypeError(f"{name} must be an integer, not {type(value).__name__}")
    try:
        number = operator.index(value)  # type: ignore[arg-type]
    except Exception as error:
        raise TypeError(
            f"{name} must be an integer: {type(value).__name__}.__index__ "
            f"raised {type(error).__name__}"
        ) from error
    if not 0 <= number <= USIZE_MAX:
        raise OverflowError(f"{name} must be in 0..={USIZE_MAX}, got {short_integer(number)}")
    return number


def short_integer(value: int) -> str:
    """``value`` as an error message quotes it: in full up to 128 bits, else
    by its size (``str()`` of an int past 4,300 digits raises ``ValueError``)."""
    bits = value.bit_length()
    if bits <= 128:
        return str(value)
    return f"{'a negative' if value < 0 else 'an'} integer of {bits} bits"


def optional_str(value: object, name: str) -> str | None:
    """``value`` when it is a str or None; ``TypeError`` otherwise."""
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{name} must be str or None, not {type(value).__name__}")
    return value


def saturating_add(a: int, b: int) -> int:
    """``a.saturating_add(b)`` on usize operands."""
    return min(a + b, USIZE_MAX)


def saturating_mul(a: int, b: int) -> int:
    """``a.saturating_mul(b)`` on usize operands."""
    return min(a * b, USIZE_MAX)
