"""The ring sized from a model's own config: a state report, and a plan grid.

``state_report`` pairs a model's per-sequence SSM state (``models.ssm_state``)
with a batch: one ring slot and the full ring. ``plan`` runs the server's
preflight fit for every tensor-parallel size and batch of a grid, with memory
per rank, and finds for each tensor-parallel size the largest batch that keeps
the full depth. Neither publishes a depth. ``WORKED_EXAMPLE`` is the config
behind the README's worked example.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ._selector import DECODE_ROLLBACK_RING_SLOTS
from .models import ConfigSource, ModelConfigError, SsmState, TensorParallelSplitError, ssm_state
from .preflight import PreLoadFreeMemory, RingSlot, fit_ring, requested_slots

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

DEFAULT_TP_SIZES: Final = (1, 2, 4, 8)
DEFAULT_BATCH_SIZES: Final = (8, 16, 32, 64, 128, 256, 512)


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


@dataclass(frozen=True)
class PlanRow:
    """One tensor-parallel size: its per-rank state (or why it cannot run),
    the depth chosen at each batch (None: the server refuses to boot), and
    the largest batch that keeps the full depth (None: any batch does)."""

    tp_size: int
    state: SsmState | None
    problem: str | None
    depths: tuple[int | None, ...]
    largest_full_depth_batch: int | None


@dataclass(frozen=True)
class Plan:
    """The depth the preflight would choose for each tensor-parallel size and
    batch, against ``free`` memory beside ``reserve_without_ring``, per rank."""

    model: str
    source: str | None
    layout: str
    free: int
    reserve_without_ring: int
    requested: int
    batch_sizes: tuple[int, ...]
    rows: tuple[PlanRow, ...]


def largest_batch_at(slots: int, per_sequence: int, yardstick: PreLoadFreeMemory) -> int | None:
    """The largest batch whose ring of ``slots`` fits ``yardstick``; None when
    any batch fits (no state), 0 when none does."""
    if slots == 0 or per_sequence == 0:
        return None if yardstick.reserve_without_ring <= yardstick.free_mem else 0
    room = yardstick.free_mem - yardstick.reserve_without_ring
    return room // (slots * per_sequence) if room >= 0 else 0


def plan(
    config: ConfigSource,
    free: int,
    reserve_without_ring: int,
    tp_sizes: Sequence[int] = DEFAULT_TP_SIZES,
    batch_sizes: Sequence[int] = DEFAULT_BATCH_SIZES,
    use_speculative: bool = False,
    **state_options: Any,
) -> Plan:
    """Fits the ring for every ``tp_sizes`` x ``batch_sizes``, memory per rank.

    A tensor-parallel size the model cannot be split over (its heads or
    channels do not divide) gives a row with its ``problem`` and no depths;
    any other bad config raises ``ModelConfigError``. The requested depth
    comes from the environment as the server's (``requested_slots``)."""
    yardstick = PreLoadFreeMemory(reserve_without_ring, free)
    rows = []
    first: SsmState | None = None
    requested: int | None = None
    for tp in tp_sizes:
        try:
            state = ssm_state(config, tp_size=tp, **state_options)
        except TensorParallelSplitError as error:
            rows.append(PlanRow(tp, None, str(error), (), None))
            continue
        first = first or state
        if requested is None:
            requested = requested_slots(state.ssm_layers, use_speculative)
        depths = []
        for batch in batch_sizes:
            fit = fit_ring(requested, RingSlot(batch, state.per_sequence_bytes), yardstick)
            depths.append(None if fit.refused else fit.slots)
        full = largest_batch_at(DECODE_ROLLBACK_RING_SLOTS, state.per_sequence_bytes, yardstick)
        rows.append(PlanRow(tp, state, None, tuple(depths), full))
    if first is None:
        raise ModelConfigError(
            "no tensor-parallel size of the plan divides the model: " + rows[0].problem
            if rows and rows[0].problem
            else "the plan needs at least one tensor-parallel size"
        )
    return Plan(
        model=first.model_type,
        source=first.source,
        layout=first.layout,
        free=free,
        reserve_without_ring=reserve_without_ring,
        requested=requested if requested is not None else 0,
        batch_sizes=tuple(batch_sizes),
        rows=tuple(rows),
    )


def plot_plan(plan: Plan, path: str) -> None:
    """Draws ``plan`` as a heat map into ``path`` (PNG). Needs matplotlib
    (``pip install 'decode_ring[plot]'``); raises ``ImportError`` without it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    ladder_colours = matplotlib.colormaps["viridis"]
    depths = [
        [float("nan") if depth is None else depth for depth in row.depths]
        if row.state is not None
        else [float("nan")] * len(plan.batch_sizes)
        for row in plan.rows
    ]
    figure, axes = pyplot.subplots(
        figsize=(1.1 * len(plan.batch_sizes) + 2, 0.6 * len(plan.rows) + 1.8)
    )
    image = axes.imshow(
        depths, cmap=ladder_colours, vmin=0, vmax=DECODE_ROLLBACK_RING_SLOTS, aspect="auto"
    )
    axes.set_xticks(range(len(plan.batch_sizes)), [str(batch) for batch in plan.batch_sizes])
    axes.set_yticks(range(len(plan.rows)), [f"tp {row.tp_size}" for row in plan.rows])
    axes.set_xlabel("max batch size")
    for y, row in enumerate(plan.rows):
        for x in range(len(plan.batch_sizes)):
            depth = row.depths[x] if row.state is not None else None
            label = "-" if row.state is None else ("refused" if depth is None else str(depth))
            axes.text(
                x,
                y,
                label,
                ha="center",
                va="center",
                color="white" if (depth or 0) < 5 else "black",
            )
    axes.set_title(f"decode ring depth: {plan.model} ({plan.layout}), per rank", fontsize=10)
    figure.colorbar(image, ax=axes, label="ring depth")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)
