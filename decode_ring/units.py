"""Byte sizes as operators write them: ``7039MiB``, ``14.1Gi``, ``64 GB``.

The grammar, everywhere a size is read: a number (digits, with an optional
decimal point and decimals: ``5``, ``5.``, ``.5``, ``14.1``), an optional
single space, and a unit in any case. Units have Kubernetes' meaning:
``Ki``/``KiB`` to ``Ti``/``TiB`` are powers of 1024, ``K``/``KB`` to
``T``/``TB`` powers of 1000, and ``B`` (or none) is bytes. Bytes are whole: a
bare fractional number is refused; with a unit, fractions of a byte are
dropped.

``parse_memory_size`` reads a memory flag: the same grammar, but a bare
number from 1 to under 1 MiB is refused as a likely missing unit (``--free
80`` is 80 bytes; did you mean 80 GiB?). ``80G`` stays 80 x 10^9 bytes.
"""

from __future__ import annotations

import re
from decimal import Decimal, localcontext
from typing import Final

from ._usize_py import USIZE_MAX
from .printable import show

_POWERS: Final = {"k": 1, "m": 2, "g": 3, "t": 4}
UNITS: Final = {
    "": 1,
    "b": 1,
    **{prefix + suffix: 1024**power for prefix, power in _POWERS.items() for suffix in ("i", "ib")},
    **{prefix + suffix: 1000**power for prefix, power in _POWERS.items() for suffix in ("", "b")},
}
ACCEPTED_FORMS: Final = (
    "bytes, or a number with a unit: Ki/KiB, Mi/MiB, Gi/GiB, Ti/TiB (powers of 1024) "
    "or K/KB, M/MB, G/GB, T/TB (powers of 1000), any case, e.g. 14.1GiB"
)
_SIZE: Final = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+) ?([A-Za-z]*)", re.ASCII)


def parse_size(text: str) -> int:
    """Bytes in ``text`` (the grammar above). Raises ``ValueError`` naming the
    accepted forms for anything else, for a bare fractional number, and for
    more than ``USIZE_MAX`` bytes; ``TypeError`` when ``text`` is not a str."""
    if not isinstance(text, str):
        raise TypeError(f"a size must be str, not {type(text).__name__}")
    match = _SIZE.fullmatch(text.strip(" \t"))
    unit = UNITS.get(match.group(2).lower()) if match else None
    if match is None or unit is None:
        raise ValueError(f"invalid size {show(text, limit=40)}: write {ACCEPTED_FORMS}")
    number = Decimal(match.group(1))
    if match.group(2).lower() in ("", "b") and number != number.to_integral_value():
        raise ValueError(
            f"invalid size {show(text, limit=40)}: bytes must be whole; "
            f"did you mean {match.group(1)}GiB? Write {ACCEPTED_FORMS}"
        )
    with localcontext() as exact:
        exact.prec = len(match.group(1)) + 20  # room for every digit times the unit
        size = int(number * unit)
    if size > USIZE_MAX:
        raise ValueError(f"size {show(text, limit=40)} exceeds the {USIZE_MAX} bytes a usize holds")
    return size


SMALLEST_BARE_MEMORY: Final = 2**20


def parse_memory_size(text: str) -> int:
    """``parse_size(text)`` for an amount of memory: a bare number (no unit,
    not even ``B``) of 1 to under ``SMALLEST_BARE_MEMORY`` bytes is refused
    with ``ValueError`` asking whether GiB was meant; 0 and ``80B`` stand."""
    size = parse_size(text)
    match = _SIZE.fullmatch(text.strip(" \t"))
    if match is not None and match.group(2) == "" and 0 < size < SMALLEST_BARE_MEMORY:
        number = match.group(1)
        raise ValueError(
            f"{show(text, limit=40)} is {size} bytes: did you mean {number} GiB? A bare number "
            f"is bytes; write {number}GiB, or {number}B to mean bytes"
        )
    return size


def format_size(size: int) -> str:
    """``size`` bytes in the largest binary unit that keeps it at least 1,
    with two decimals: ``4.73 GiB``; plain bytes below 1 KiB."""
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            return f"{size / scale:.2f} {unit}"
    return f"{size} B"
