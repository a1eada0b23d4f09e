"""What ``decide``, ``fit`` and ``state`` show over the core: the decision with the variables
behind it, the preflight with the rule behind its requested depth, and a model's per-sequence
SSM state with the ring it implies at a batch. ``WORKED_EXAMPLE`` is the config behind the
README's worked example. Nothing here publishes a depth.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ._facade import (
    RESERVE_RING_FULL_VARIABLE,
    ExplainedDecision,
    explain_decode_rollback_ring_slots,
)
from ._selector import DECODE_ROLLBACK_RING_SLOTS, EnvironmentReader
from .models import ConfigSource, SsmState, ssm_state
from .preflight import Preflight, RingSlot, Yardstick, preflight, reserve_ring_full

__all__ = [
    "WORKED_EXAMPLE",
    "WORKED_EXAMPLE_LAYOUT",
    "DecisionReport",
    "FitReport",
    "StateReport",
    "explain_decision",
    "fit_report",
    "shown_value",
    "state_report",
]

# The reference server's worked example: 48 gated-delta-net layers with 16 key
# heads, 48 value heads of 128 by 128, a conv kernel of 4; laid out as the
# reference lays it out ("metrale"), 158,859,264 B (151.5 MiB) per sequence.
WORKED_EXAMPLE: Final[Mapping[str, Any]] = {
    "model_type": "qwen3_next",
    "num_hidden_layers": 48,
    "layer_types": ["linear_attention"] * 48,
    "hidden_size": 2048,
    "linear_num_key_heads": 16,
    "linear_num_value_heads": 48,
    "linear_key_head_dim": 128,
    "linear_value_head_dim": 128,
    "linear_conv_kernel_dim": 4,
    "torch_dtype": "bfloat16",
}
WORKED_EXAMPLE_LAYOUT: Final = "metrale"


@dataclass(frozen=True)
class StateReport:
    """A model's per-sequence SSM state and, with a batch, one ring slot
    (a snapshot of every sequence) and the full ring of
    ``DECODE_ROLLBACK_RING_SLOTS`` slots. Raises ``OverflowError`` when a
    slot exceeds ``USIZE_MAX`` bytes."""

    state: SsmState
    max_batch_size: int | None = None
    slot_bytes: int | None = field(init=False)

    def __post_init__(self) -> None:
        slot = None
        if self.max_batch_size is not None:
            slot = RingSlot(self.max_batch_size, self.state.per_sequence_bytes).bytes
        object.__setattr__(self, "slot_bytes", slot)

    @property
    def full_ring_bytes(self) -> int | None:
        return None if self.slot_bytes is None else DECODE_ROLLBACK_RING_SLOTS * self.slot_bytes


def state_report(
    config: ConfigSource, max_batch_size: int | None = None, **state_options: Any
) -> StateReport:
    """``ssm_state(config, **state_options)`` with the ring it implies at
    ``max_batch_size``. Raises as ``ssm_state`` does, and ``OverflowError``
    when a slot exceeds ``USIZE_MAX`` bytes."""
    return StateReport(ssm_state(config, **state_options), max_batch_size)


def not_valid_utf8(names: Sequence[str]) -> tuple[str, ...]:
    """The variables of ``names`` that are set to a value that is not valid
    UTF-8 (the core reads them as unset, as Rust's ``std::env::var`` does)."""
    reader = EnvironmentReader(tuple(names))
    return tuple(
        name
        for name, value, present in zip(names, reader.read(), reader.present(), strict=True)
        if present and value is None
    )


@dataclass(frozen=True)
class DecisionReport:
    """A depth decision with everything behind it (``explained``), and the
    variables whose values are not valid UTF-8, shown apart from any string."""

    explained: ExplainedDecision
    not_valid_utf8: tuple[str, ...]


def explain_decision(num_ssm_layers: int, use_speculative: bool) -> DecisionReport:
    """``explain_decode_rollback_ring_slots`` with the variables that are not
    valid UTF-8."""
    explained = explain_decode_rollback_ring_slots(num_ssm_layers, use_speculative)
    return DecisionReport(explained, not_valid_utf8(tuple(explained.environment)))


@dataclass(frozen=True)
class FitReport:
    """``decode-ring fit``: the preflight, the decision behind its requested
    depth and the rule that set it (``METRALE_SSM_RESERVE_RING_FULL`` and its
    value when that overrides the decision), and the model the layers and
    state came from, if any."""

    preflight: Preflight
    request: DecisionReport
    request_rule: str
    model: SsmState | None


def shown_value(report: DecisionReport, name: str) -> str:
    """A variable's value as the text shows it: escaped, or said to be unset
    or not valid UTF-8."""
    if name in report.not_valid_utf8:
        return "(not valid UTF-8)"
    value = report.explained.environment.get(name)
    return "(unset)" if value is None else ascii(value)


def fit_report(
    num_ssm_layers: int,
    use_speculative: bool,
    slot: RingSlot,
    yardstick: Yardstick,
    model: SsmState | None = None,
) -> FitReport:
    """Runs the server's preflight (``preflight``), after explaining the
    depth it will request: the decision's rule, or
    ``METRALE_SSM_RESERVE_RING_FULL`` where its presence asks for the full
    depth whatever the decision says."""
    request = explain_decision(num_ssm_layers, use_speculative)
    rule = request.explained.rule
    if reserve_ring_full() and num_ssm_layers > 0:
        value = shown_value(request, RESERVE_RING_FULL_VARIABLE)
        rule = (
            f"{RESERVE_RING_FULL_VARIABLE} is set ({value}): reserve the full depth, "
            f"whatever the decision ({rule})"
        )
    return FitReport(
        preflight(num_ssm_layers, use_speculative, slot, yardstick), request, rule, model
    )
