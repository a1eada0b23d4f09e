"""Byte sizes as operators write them: ``7039MiB``, ``14.1GiB``, ``1.5 TB``."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Final

from ._checks import USIZE_MAX

UNITS: Final = {
    "": 1,
    "b": 1,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
}
_SIZE: Final = re.compile(r"([0-9]+(?:\.[0-9]+)?|\.[0-9]+)[ ]?([A-Za-z]*)", re.ASCII)


def parse_size(text: str) -> int:
    """Bytes in ``text``: a number, with decimals, and an optional unit:
    ``B``, ``KiB``..``TiB`` (powers of 1024) or ``KB``..``TB`` (powers of
    1000), in any case. Fractions of a byte are dropped. Raises ``ValueError``
    for anything else or for more than ``USIZE_MAX`` bytes."""
    match = _SIZE.fullmatch(text.strip())
    unit = UNITS.get(match.group(2).lower()) if match else None
    if match is None or unit is None:
        raise ValueError(
            f"invalid size {text!r}: write bytes or a number with a unit "
            "(B, KiB, MiB, GiB, TiB, KB, MB, GB, TB), e.g. 14.1GiB"
        )
    size = int(Decimal(match.group(1)) * unit)
    if size > USIZE_MAX:
        raise ValueError(f"size {text!r} exceeds the {USIZE_MAX} bytes a usize holds")
    return size


def format_size(size: int) -> str:
    """``size`` bytes in the largest binary unit that keeps it at least 1,
    with two decimals: ``4.73 GiB``; plain bytes below 1 KiB."""
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            return f"{size / scale:.2f} {unit}"
    return f"{size} B"
