"""What both servers' reservations share: the argument checks and the error they raise."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

from ..models import ModelConfigError

__all__ = [
    "MAX_COUNT",
    "ServerArgumentError",
    "check_choice",
    "check_count",
    "check_flag",
    "check_optional_count",
    "check_ratio",
    "naive_bytes",
]

# Tensor sizes are int64 in both servers; a larger count describes no launch.
MAX_COUNT: Final = 2**63 - 1


class ServerArgumentError(ModelConfigError):
    """An argument a server would refuse, or one this package does not model. The message is one
    line that names the argument (also in ``field``, as the API spells it)."""


def _kind(value: object) -> str:
    return ascii(type(value).__name__)[1:-1]


def _show(value: object) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"<{value.bit_length()}-bit integer>"
    text = ascii(value)
    return text if len(text) <= 64 else f"{text[:64]}... ({len(text)} characters)"


def fail(name: str, problem: str) -> ServerArgumentError:
    """The refusal of argument ``name``."""
    return ServerArgumentError(f"argument {name}: {problem}", field=name)


def check_count(name: str, value: object, minimum: int) -> int:
    """``value`` when it is an ``int`` (not ``bool``) from ``minimum`` to ``MAX_COUNT``; raises
    ``TypeError`` for another type and ``ServerArgumentError`` for another value."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"argument {name}: must be an int, not {_kind(value)}")
    if not minimum <= value <= MAX_COUNT:
        raise fail(name, f"must be from {minimum} to 2**63 - 1, got {_show(value)}")
    return value


def check_optional_count(name: str, value: object, minimum: int) -> int | None:
    """``check_count`` for an argument whose ``None`` means the server's default."""
    return None if value is None else check_count(name, value, minimum)


def check_flag(name: str, value: object) -> bool:
    """``value`` when it is a ``bool``; ``TypeError`` otherwise."""
    if not isinstance(value, bool):
        raise TypeError(f"argument {name}: must be a bool, not {_kind(value)}")
    return value


def check_choice(name: str, value: object, choices: Mapping[str, Any] | tuple[str, ...]) -> str:
    """``value`` when it is one of ``choices`` (the server's own spellings)."""
    if not isinstance(value, str):
        raise TypeError(f"argument {name}: must be a str, not {_kind(value)}")
    if value not in choices:
        raise fail(name, f"unknown value {_show(value)}; use {', '.join(choices)}")
    return value


def check_ratio(name: str, value: object) -> float:
    """``value`` as a finite float above 0 (an ``int`` is accepted, a ``bool`` is not)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"argument {name}: must be a float, not {_kind(value)}")
    ratio = float(value)
    if not math.isfinite(ratio) or ratio <= 0:
        raise fail(name, f"must be a finite number above 0, got {_show(value)}")
    return ratio


def naive_bytes(sequences: int, per_sequence: int) -> int:
    """What ``decode-ring state`` reports for ``sequences``: each sequence's state once."""
    return sequences * per_sequence
