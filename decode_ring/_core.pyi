# The compiled core has exactly the API of its pure-Python twin, which the
# test suite checks name for name and call for call; a type checker sees the
# same signatures whichever core is in use.
from ._core_py import DECISION_RULES as DECISION_RULES
from ._core_py import DECODE_RING_FIT_LADDER as DECODE_RING_FIT_LADDER
from ._core_py import DECODE_ROLLBACK_RING_SLOTS as DECODE_ROLLBACK_RING_SLOTS
from ._core_py import USIZE_MAX as USIZE_MAX
from ._core_py import DecodeRingDecision as DecodeRingDecision
from ._core_py import EnvironmentDecision as EnvironmentDecision
from ._core_py import EnvironmentReader as EnvironmentReader
from ._core_py import decode_rollback_ring_slots_with as decode_rollback_ring_slots_with
from ._core_py import (
    decode_rollback_ring_slots_with_rule as decode_rollback_ring_slots_with_rule,
)
from ._core_py import fit_decode_ring_slots as fit_decode_ring_slots
from ._core_py import published_decode_ring_slots as published_decode_ring_slots
from ._core_py import set_decode_ring_slots as set_decode_ring_slots
