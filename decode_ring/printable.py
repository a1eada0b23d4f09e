"""Any value as an error message can quote it: one line, ASCII, short.

``show`` is the one way the package prints a value it was given (a config field, an argument, a
command-line word): whatever the value, the result is printable in any terminal encoding and
stays one line; long strings and huge integers are cut, and other objects are named by type.
"""

from __future__ import annotations

from typing import Final

__all__ = ["show", "type_name"]

# Beyond 4300 digits str() of an int raises; beyond a few dozen nobody reads them.
_LARGEST_SHOWN_BITS: Final = 128


def show(value: object, *, limit: int = 64) -> str:
    """``value`` for a message: ``ascii()`` of a bool, None, float or int of at most 128 bits;
    of a string's first ``limit`` characters (then ``... (N characters)``); ``<N-bit integer>``
    for a larger int and ``<type>`` for anything else."""
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return ascii(value)
    if isinstance(value, int):
        if value.bit_length() <= _LARGEST_SHOWN_BITS:
            return ascii(value)
        return f"<{value.bit_length()}-bit integer>"
    if isinstance(value, str):
        text = ascii(value[:limit])
        return text if len(value) <= limit else f"{text}... ({len(value)} characters)"
    return f"<{type_name(value)}>"


def type_name(value: object) -> str:
    """The type name of ``value``, ASCII."""
    return ascii(type(value).__name__)[1:-1]
