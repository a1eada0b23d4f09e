"""Depth of the per-sequence SSM decode-rollback ring.

A Python port of the reference ``decode_ring.rs``: the depth decision, the
process-wide published depth, and the fit to free memory. ``_selector`` picks
the core that decides (``CORE`` says which); ``_facade`` parses strings and
reads the environment. This module only gathers the public names.
"""

from __future__ import annotations

from ._facade import (
    ExplainedDecision,
    decode_rollback_ring_slots,
    explain_decode_rollback_ring_slots,
    parse_decode_ring_slots,
    watchdogs_disabled_from_value,
)
from ._selector import (
    CORE,
    DECISION_RULES,
    DECODE_RING_FIT_LADDER,
    DECODE_ROLLBACK_RING_SLOTS,
    USIZE_MAX,
    DecodeRingDecision,
    decode_rollback_ring_slots_with,
    decode_rollback_ring_slots_with_rule,
    fit_decode_ring_slots,
    published_decode_ring_slots,
    set_decode_ring_slots,
)

__version__ = "0.1.0"

__all__ = [
    "CORE",
    "DECISION_RULES",
    "DECODE_RING_FIT_LADDER",
    "DECODE_ROLLBACK_RING_SLOTS",
    "USIZE_MAX",
    "DecodeRingDecision",
    "ExplainedDecision",
    "__version__",
    "decode_rollback_ring_slots",
    "decode_rollback_ring_slots_with",
    "decode_rollback_ring_slots_with_rule",
    "explain_decode_rollback_ring_slots",
    "fit_decode_ring_slots",
    "parse_decode_ring_slots",
    "published_decode_ring_slots",
    "set_decode_ring_slots",
    "watchdogs_disabled_from_value",
]
