"""Picks the core: the compiled ``_core`` or its pure-Python twin ``_core_py``.

The one place that names either core. Every other module imports the selected
names from here. The twin is selected when ``DECODE_RING_NO_EXTENSIONS`` is
set to anything but empty or ``0`` (the same switch ``setup.py`` reads at
build time), on interpreters other than CPython, and when the compiled core
cannot be imported. ``CORE`` says which core is in use.
"""

from __future__ import annotations

import os
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Final

__all__ = [
    "CORE",
    "DECISION_RULES",
    "DECODE_RING_FIT_LADDER",
    "DECODE_ROLLBACK_RING_SLOTS",
    "NO_EXTENSIONS_VARIABLE",
    "USIZE_MAX",
    "DecodeRingDecision",
    "EnvironmentReader",
    "core",
    "decode_rollback_ring_slots_with",
    "decode_rollback_ring_slots_with_rule",
    "extensions_disabled",
    "fit_decode_ring_slots",
    "published_decode_ring_slots",
    "set_decode_ring_slots",
]

NO_EXTENSIONS_VARIABLE: Final = "DECODE_RING_NO_EXTENSIONS"


def extensions_disabled() -> bool:
    """Whether ``DECODE_RING_NO_EXTENSIONS`` asks for the pure-Python core."""
    return os.environ.get(NO_EXTENSIONS_VARIABLE, "") not in ("", "0")


def _load_core() -> tuple[ModuleType, str]:
    if not extensions_disabled() and sys.implementation.name == "cpython":
        try:
            from . import _core
        except ImportError:
            pass
        else:
            return _core, "cython"
    from . import _core_py

    return _core_py, "python"


if TYPE_CHECKING:
    # The compiled core's stub gives both cores' signatures.
    from . import _core as core

    CORE: str
else:
    core, CORE = _load_core()

DECODE_ROLLBACK_RING_SLOTS: Final = core.DECODE_ROLLBACK_RING_SLOTS
DECODE_RING_FIT_LADDER: Final = core.DECODE_RING_FIT_LADDER
DECISION_RULES: Final = core.DECISION_RULES
USIZE_MAX: Final = core.USIZE_MAX
DecodeRingDecision = core.DecodeRingDecision
EnvironmentReader = core.EnvironmentReader
set_decode_ring_slots = core.set_decode_ring_slots
published_decode_ring_slots = core.published_decode_ring_slots
decode_rollback_ring_slots_with = core.decode_rollback_ring_slots_with
decode_rollback_ring_slots_with_rule = core.decode_rollback_ring_slots_with_rule
fit_decode_ring_slots = core.fit_decode_ring_slots
