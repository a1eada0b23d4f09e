"""What the reference server reserves: the live state of every sequence and the decode-rollback
ring beside it, through ``decode_ring.preflight`` as ``decode-ring fit`` runs it.

The live state is ``max_batch_size`` x the per-sequence state in the reference's own layout
(``ssm_state(layout="metrale")``); the ring is ``depth`` snapshots of it, at the depth the
preflight requests (``preflight.requested_slots``: the environment's ``METRALE_*`` variables
count) or, given ``free_memory``, the depth it fits beside the live state (``fit_ring``, which
publishes nothing).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..models import ConfigSource, ssm_state
from ..preflight import PreLoadFreeMemory, RingFit, RingSlot, fit_ring, requested_slots
from .common import check_count, check_optional_count, multiple, within_64_bits

__all__ = ["MetraleReservation", "metrale"]


@dataclass(frozen=True, slots=True)
class MetraleReservation:
    """The reference's reservation on one tensor-parallel rank: the live state, the ring, and
    the fit behind the ring's depth (``fit``; ``None`` without ``free_memory``)."""

    model_type: str
    family: str
    source: str | None
    tp_size: int
    max_batch_size: int
    speculative_tokens: int
    state_layers: int
    per_sequence_bytes: int
    live_state_bytes: int
    requested_slots: int
    ring_slots: int
    ring_bytes: int
    total_bytes: int
    free_memory: int | None
    fit: RingFit | None

    @property
    def multiplier(self) -> float:
        """``total_bytes`` over the naive figure, the live state alone."""
        return multiple(self.total_bytes, self.live_state_bytes)

    def as_dict(self) -> dict[str, object]:
        """Every field but the fit, the fit's decision line, and the multiplier."""
        return {
            "model_type": self.model_type,
            "family": self.family,
            "source": self.source,
            "tp_size": self.tp_size,
            "max_batch_size": self.max_batch_size,
            "speculative_tokens": self.speculative_tokens,
            "state_layers": self.state_layers,
            "per_sequence_bytes": self.per_sequence_bytes,
            "live_state_bytes": self.live_state_bytes,
            "requested_slots": self.requested_slots,
            "ring_slots": self.ring_slots,
            "ring_bytes": self.ring_bytes,
            "total_bytes": self.total_bytes,
            "free_memory": self.free_memory,
            "decision": None if self.fit is None else self.fit.decision,
            "refusal": None if self.fit is None else self.fit.refusal,
            "multiplier": self.multiplier,
        }


def metrale(
    config: ConfigSource,
    *,
    tp_size: int = 1,
    max_batch_size: int = 256,
    speculative_tokens: int = 0,
    free_memory: int | None = None,
) -> MetraleReservation:
    """The reference server's live state and ring for ``max_batch_size`` sequences of the model
    ``config`` describes, on one of ``tp_size`` ranks. Raises as ``ssm_state`` does,
    ``ServerArgumentError`` for a bad count and ``OverflowError`` past ``USIZE_MAX`` bytes."""
    tp = check_count("tp_size", tp_size, 1)
    batch = check_count("max_batch_size", max_batch_size, 0)
    spec = check_count("speculative_tokens", speculative_tokens, 0)
    free = check_optional_count("free_memory", free_memory, 0)
    state = ssm_state(config, tp_size=tp, layout="metrale", speculative_tokens=spec)
    slot = RingSlot(batch, state.per_sequence_bytes)
    requested = requested_slots(state.ssm_layers, spec > 0)
    fit = None
    slots = requested
    if free is not None:
        fit = fit_ring(requested, slot, PreLoadFreeMemory(slot.bytes, free))
        slots = fit.slots
    reservation = MetraleReservation(
        model_type=state.model_type,
        family=state.family,
        source=state.source,
        tp_size=tp,
        max_batch_size=batch,
        speculative_tokens=spec,
        state_layers=state.ssm_layers,
        per_sequence_bytes=state.per_sequence_bytes,
        live_state_bytes=slot.bytes,
        requested_slots=requested,
        ring_slots=slots,
        ring_bytes=slots * slot.bytes,
        total_bytes=slot.bytes + slots * slot.bytes,
        free_memory=free,
        fit=fit,
    )
    return within_64_bits(reservation)
