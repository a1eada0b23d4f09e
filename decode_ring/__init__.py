"""Depth of the per-sequence SSM decode-rollback ring.

A Python port of the reference ``decode_ring.rs``: the depth decision, the
process-wide published depth, and the fit to free memory. The compiled core
(``_core``) is used when it was built; ``DECODE_RING_NO_EXTENSIONS=1`` at
import time, or a core that cannot be imported, selects the pure-Python twin
(``_core_py``). ``CORE`` says which is in use.
"""

from __future__ import annotations

import os
import sys
from types import ModuleType
from typing import TYPE_CHECKING

from . import _core_py
from ._facade import (
    environment_reader,
    parse_decode_ring_slots,
    watchdogs_disabled_from_value,
)

__version__ = "0.1.0"


def _extensions_disabled() -> bool:
    # Any value but empty or "0" asks for the pure-Python core, at build time
    # (setup.py) and at import time alike.
    return os.environ.get("DECODE_RING_NO_EXTENSIONS", "") not in ("", "0")


def _select_core() -> tuple[ModuleType, str]:
    if _extensions_disabled() or sys.implementation.name != "cpython":
        return _core_py, "python"
    try:
        from . import _core
    except ImportError:
        return _core_py, "python"
    return _core, "cython"


if TYPE_CHECKING:
    # The stub of the compiled core gives both cores' signatures.
    from . import _core as _selected_core

    CORE: str
else:
    # preflight and cli read the environment through the selected core too.
    _selected_core, CORE = _select_core()

DECODE_ROLLBACK_RING_SLOTS = _selected_core.DECODE_ROLLBACK_RING_SLOTS
DECODE_RING_FIT_LADDER = _selected_core.DECODE_RING_FIT_LADDER
USIZE_MAX = _selected_core.USIZE_MAX
DecodeRingDecision = _selected_core.DecodeRingDecision
set_decode_ring_slots = _selected_core.set_decode_ring_slots
published_decode_ring_slots = _selected_core.published_decode_ring_slots
decode_rollback_ring_slots_with = _selected_core.decode_rollback_ring_slots_with
fit_decode_ring_slots = _selected_core.fit_decode_ring_slots
decode_rollback_ring_slots = environment_reader(_selected_core)

__all__ = [
    "CORE",
    "DECODE_RING_FIT_LADDER",
    "DECODE_ROLLBACK_RING_SLOTS",
    "USIZE_MAX",
    "DecodeRingDecision",
    "__version__",
    "decode_rollback_ring_slots",
    "decode_rollback_ring_slots_with",
    "fit_decode_ring_slots",
    "parse_decode_ring_slots",
    "published_decode_ring_slots",
    "set_decode_ring_slots",
    "watchdogs_disabled_from_value",
]
