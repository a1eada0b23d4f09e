"""What the commands compute over the core: reports, the ring sized from a model, a plan grid.

``explain_decision`` and ``fit_report`` are what ``decide`` and ``fit`` show:
the decision (with the variables that are not valid UTF-8) and the preflight
with the rule behind its requested depth.

``state_report`` pairs a model's per-sequence SSM state (``models.ssm_state``)
with a batch: one ring slot and the full ring. ``plan`` runs the server's
preflight fit for every tensor-parallel size and batch of a grid, with memory
per rank, and finds for each tensor-parallel size the largest batch that keeps
the full depth. Neither publishes a depth. ``WORKED_EXAMPLE`` is the config
behind the README's worked example.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from ._facade import (
    RESERVE_RING_FULL_VARIABLE,
    ExplainedDecision,
    explain_decode_rollback_ring_slots,
)
from ._selector import DECODE_RING_FIT_LADDER, DECODE_ROLLBACK_RING_SLOTS, EnvironmentReader
from ._usize_py import saturating_add, saturating_mul
from .models import (
    DTYPE_BYTES,
    AttentionLayers,
    ConfigSource,
    ModelConfigError,
    SsmState,
    TensorParallelSplitError,
    ssm_state,
)
from .preflight import (
    Preflight,
    PreLoadFreeMemory,
    RingFit,
    RingSlot,
    Yardstick,
    fit_ring,
    preflight,
    requested_slots,
    reserve_ring_full,
)
from .units import format_size, quoted

if TYPE_CHECKING:
    from matplotlib.figure import Figure

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


def divided_evenly(total: int, tp_size: int) -> int:
    """One rank's share of ``total`` bytes split evenly over ``tp_size``
    ranks, rounded up: a rank holds at least its share."""
    return -(-total // tp_size)


def kv_cache_per_sequence(
    attention: AttentionLayers | None, tp_size: int, max_model_len: int
) -> int:
    """Bytes of KV cache one sequence of ``max_model_len`` tokens holds on one
    of ``tp_size`` ranks, in the model dtype (vLLM's ``--kv-cache-dtype
    auto``): per attention layer and token, the rank's KV heads times the key
    and value head dims. KV heads are split over the ranks and replicated
    when there are fewer than ranks (vLLM: ``max(1, heads // tp)``); MLA's
    one latent per token is not split. 0 without attention layers."""
    if attention is None or not attention.layer_indices:
        return 0
    heads = 1 if attention.mla else max(1, attention.num_key_value_heads // tp_size)
    per_token = heads * (attention.head_dim + attention.v_head_dim)
    return (
        len(attention.layer_indices)
        * per_token
        * DTYPE_BYTES[attention.model_dtype]
        * max_model_len
    )


@dataclass(frozen=True)
class Reserve:
    """What a server reserves beside the ring, before the ring: the weights
    (the whole model's, split evenly over the ranks), ``other`` bytes per
    rank that do not depend on the model (activations, workspace), and, per
    sequence, the live recurrent state and the KV cache at
    ``max_model_len`` tokens. ``weights_source`` says where the weights'
    size came from."""

    weights: int
    weights_source: str
    other: int
    max_model_len: int | None


@dataclass(frozen=True)
class PlanCell:
    """One tensor-parallel size and batch: each term of the reserve on one
    rank, and the ring's fit beside it (``depth`` None: the server refuses
    to boot)."""

    batch: int
    weights_bytes: int
    other_bytes: int
    state_bytes: int
    kv_bytes: int
    fit: RingFit

    @property
    def reserve_without_ring(self) -> int:
        return self.fit.beside

    @property
    def depth(self) -> int | None:
        return None if self.fit.refused else self.fit.slots

    @property
    def boots(self) -> bool:
        return not self.fit.refused


@dataclass(frozen=True)
class PlanRow:
    """One tensor-parallel size: one rank's live state and KV cache per
    sequence and its share of the weights (or why the model cannot be split
    so), a cell per batch, and the largest batch that keeps the full depth
    (``full_depth``: that batch, ``any``, ``none`` when no batch does, ``-``
    when the requested depth is not the full depth)."""

    tp_size: int
    state: SsmState | None
    problem: str | None
    per_sequence_bytes: int | None
    kv_per_sequence_bytes: int | None
    weights_bytes: int | None
    cells: tuple[PlanCell, ...]
    largest_full_depth_batch: int | None
    full_depth: str

    @property
    def depths(self) -> tuple[int | None, ...]:
        return tuple(cell.depth for cell in self.cells)


@dataclass(frozen=True)
class Plan:
    """The depth the preflight would choose for each tensor-parallel size and
    batch against ``free`` memory per rank, beside a reserve computed for
    each cell from ``reserve``."""

    model: str
    source: str | None
    layout: str | None
    ssm_layers: int
    free: int
    reserve: Reserve
    requested: int
    batch_sizes: tuple[int, ...]
    rows: tuple[PlanRow, ...]

    @property
    def boots(self) -> bool:
        """Whether some cell of the grid boots."""
        return any(cell.boots for row in self.rows for cell in row.cells)


def largest_full_depth_batch(
    requested: int, fixed: int, per_sequence: int, kv: int, free: int
) -> tuple[int | None, str]:
    """The largest batch whose reserve (``fixed`` plus the batch times the
    live state and the KV cache) and full ring fit ``free``, and how the
    plan shows it: the batch, ``any`` (nothing grows with the batch),
    ``none`` (no batch fits) or ``-`` (the requested depth is not full)."""
    if requested != DECODE_ROLLBACK_RING_SLOTS:
        return None, "-"
    room = free - fixed
    grows = (DECODE_ROLLBACK_RING_SLOTS + 1) * per_sequence + kv
    if room < 0:
        return 0, "none"
    if grows == 0:
        return None, "any"
    batch = room // grows
    return batch, str(batch) if batch else "none"


def plan_row(
    tp: int,
    state: SsmState | None,
    per_sequence: int,
    kv: int,
    requested: int,
    free: int,
    reserve: Reserve,
    batch_sizes: Sequence[int],
) -> PlanRow:
    """One tensor-parallel size's row: a cell per batch, each with its own
    reserve, and the largest batch at full depth."""
    weights = divided_evenly(reserve.weights, tp)
    fixed = saturating_add(weights, reserve.other)
    cells = []
    for batch in batch_sizes:
        state_bytes = saturating_mul(batch, per_sequence)
        kv_bytes = saturating_mul(batch, kv)
        beside = saturating_add(fixed, saturating_add(state_bytes, kv_bytes))
        fit = fit_ring(requested, RingSlot(batch, per_sequence), PreLoadFreeMemory(beside, free))
        cells.append(PlanCell(batch, weights, reserve.other, state_bytes, kv_bytes, fit))
    largest, shown = largest_full_depth_batch(requested, fixed, per_sequence, kv, free)
    return PlanRow(tp, state, None, per_sequence, kv, weights, tuple(cells), largest, shown)


def unsplittable_row(tp: int, problem: str) -> PlanRow:
    return PlanRow(tp, None, problem, None, None, None, (), None, "-")


def refuse_unsplittable(rows: Sequence[PlanRow | ServerRow]) -> None:
    """Refuses a plan in which no tensor-parallel size divides the model, or
    that has no tensor-parallel size at all."""
    if not any(row.problem is None for row in rows):
        raise ModelConfigError(
            "no tensor-parallel size of the plan divides the model: " + str(rows[0].problem)
            if rows
            else "the plan needs at least one tensor-parallel size"
        )


def plan(
    config: ConfigSource | None,
    free: int,
    reserve: Reserve,
    tp_sizes: Sequence[int] = DEFAULT_TP_SIZES,
    batch_sizes: Sequence[int] = DEFAULT_BATCH_SIZES,
    use_speculative: bool = False,
    *,
    ssm_layers: int | None = None,
    per_seq_state: int | None = None,
    **state_options: Any,
) -> Plan:
    """Fits the ring for every ``tp_sizes`` x ``batch_sizes``, memory per rank.

    With a ``config``, each rank's live state and KV cache per sequence come
    from the model (``ssm_state``; the KV cache at ``reserve.max_model_len``,
    which a model with attention layers needs); without one, from
    ``ssm_layers`` and ``per_seq_state`` (one sequence at tp 1, divided
    evenly by each tensor-parallel size), and no KV cache. Each cell's
    reserve is the rank's share of the weights, ``reserve.other``, and the
    batch times the live state and the KV cache.

    A tensor-parallel size the model cannot be split over gives a row with
    its ``problem`` and no cells; any other bad config raises
    ``ModelConfigError``. The requested depth comes from the environment as
    the server's (``requested_slots``)."""
    rows = []
    first: SsmState | None = None
    layers = ssm_layers
    for tp in tp_sizes:
        if config is None:
            if ssm_layers is None or per_seq_state is None:
                raise ModelConfigError("a plan without a config needs ssm_layers and per_seq_state")
            state, per_sequence, kv = None, divided_evenly(per_seq_state, tp), 0
        else:
            try:
                state = ssm_state(config, tp_size=tp, **state_options)
            except TensorParallelSplitError as error:
                rows.append(unsplittable_row(tp, str(error)))
                continue
            first = first or state
            layers = state.ssm_layers
            per_sequence = state.per_sequence_bytes
            kv = kv_cache_for(state, tp, reserve.max_model_len)
        assert layers is not None
        requested = requested_slots(layers, use_speculative)
        rows.append(plan_row(tp, state, per_sequence, kv, requested, free, reserve, batch_sizes))
    refuse_unsplittable(rows)
    assert layers is not None
    return Plan(
        model=first.model_type if first else "a model",
        source=first.source if first else None,
        layout=first.layout if first else None,
        ssm_layers=layers,
        free=free,
        reserve=reserve,
        requested=requested_slots(layers, use_speculative),
        batch_sizes=tuple(batch_sizes),
        rows=tuple(rows),
    )


def kv_cache_for(state: SsmState, tp: int, max_model_len: int | None) -> int:
    """The KV cache per sequence on one rank for ``state``'s model; refuses a
    model with attention layers when ``max_model_len`` is not given."""
    attention = state.attention
    if attention is None or not attention.layer_indices:
        return 0
    if max_model_len is None:
        raise ModelConfigError(
            f"argument max_model_len: {state.model_type} has {len(attention.layer_indices)} "
            "attention layers, whose KV cache per sequence grows with it: give it",
            field="max_model_len",
        )
    return kv_cache_per_sequence(attention, tp, max_model_len)


class PlotFormatError(ValueError):
    """``plot_plan`` was given a path whose extension names a format
    matplotlib cannot write."""


REFUSED_COLOUR: Final = "#8c1c13"
UNSPLIT_COLOUR: Final = "#d9d9d9"


def plot_format(path: str) -> str:
    """The format ``plot_plan`` writes ``path`` in: its extension's (``png``
    without one). Raises ``PlotFormatError`` for one matplotlib cannot
    write and ``ImportError`` without matplotlib."""
    from matplotlib.backend_bases import FigureCanvasBase

    extension = os.path.splitext(path)[1].lstrip(".").lower()
    formats = FigureCanvasBase.get_supported_filetypes()
    if extension and extension not in formats:
        raise PlotFormatError(
            f"matplotlib cannot write {quoted(extension)} files; use one of "
            f"{', '.join(sorted(formats))}"
        )
    return extension or "png"


def plot_title(plan: Plan) -> str:
    """The plot's title: the model and every input behind the grid."""
    reserve = plan.reserve
    length = "" if reserve.max_model_len is None else f", max model len {reserve.max_model_len:,}"
    layout = f" ({plan.layout})" if plan.layout else ""
    return (
        f"decode ring depth per rank: {plan.model}{layout}, requested depth {plan.requested}\n"
        f"free {format_size(plan.free)}, weights {format_size(reserve.weights)} / tp, "
        f"other {format_size(reserve.other)}{length}"
    )


def plot_plan(plan: Plan, path: str) -> None:
    """Draws ``plan`` (``plan_figure``) into exactly ``path``, in the format
    its extension names (PNG without one). Needs matplotlib (``pip install
    'decode_ring[plot]'``): raises ``ImportError`` without it,
    ``PlotFormatError`` for a format it cannot write, and ``OSError`` when
    the file cannot be written."""
    fmt = plot_format(path)
    import matplotlib.pyplot as pyplot

    figure = plan_figure(plan)
    try:
        with open(path, "wb") as target:
            figure.savefig(target, format=fmt, dpi=110)
    finally:
        pyplot.close(figure)


def plan_figure(plan: Plan) -> Figure:
    """``plan`` as a heat map: one discrete colour per depth, "refused" and
    "cannot split" in the legend, the inputs in the title, and the table's
    columns (state and KV cache per sequence beside each row, the largest
    batch at full depth after it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot
    from matplotlib.colors import BoundaryNorm, ListedColormap, to_hex
    from matplotlib.patches import Patch

    ladder = sorted(DECODE_RING_FIT_LADDER)
    viridis = matplotlib.colormaps["viridis"]
    depth_colours = [to_hex(viridis(i / (len(ladder) - 1))) for i in range(len(ladder))]
    colours = ListedColormap([*depth_colours, REFUSED_COLOUR, UNSPLIT_COLOUR])
    refused, unsplit = len(ladder), len(ladder) + 1
    norm = BoundaryNorm([i - 0.5 for i in range(len(ladder) + 3)], colours.N)
    grid = [
        [refused if cell.depth is None else ladder.index(cell.depth) for cell in row.cells]
        if row.problem is None
        else [unsplit] * len(plan.batch_sizes)
        for row in plan.rows
    ]
    figure, axes = pyplot.subplots(
        figsize=(1.0 * len(plan.batch_sizes) + 5.5, 0.6 * len(plan.rows) + 2.4)
    )
    axes.imshow(grid, cmap=colours, norm=norm, aspect="auto")
    axes.set_xticks(range(len(plan.batch_sizes)), [str(batch) for batch in plan.batch_sizes])
    axes.set_yticks(range(len(plan.rows)), [row_label(row) for row in plan.rows])
    axes.set_xlabel("max batch size")
    for y, row in enumerate(plan.rows):
        for x, cell in enumerate(row.cells):
            label = "refused" if cell.depth is None else str(cell.depth)
            dark = cell.depth is None or ladder.index(cell.depth) < len(ladder) - 2
            axes.text(x, y, label, ha="center", va="center", color="white" if dark else "black")
        if row.problem is not None:
            axes.text((len(plan.batch_sizes) - 1) / 2, y, "cannot split", ha="center", va="center")
        axes.text(len(plan.batch_sizes) - 0.3, y, f"  {row.full_depth}", va="center")
    axes.text(
        len(plan.batch_sizes) - 0.3, -0.75, "  full depth\n  up to batch", va="bottom", fontsize=8
    )
    axes.set_title(plot_title(plan), fontsize=9)
    legend = [
        Patch(color=colour, label=f"depth {depth}")
        for depth, colour in zip(ladder, depth_colours, strict=True)
    ]
    legend += [
        Patch(color=REFUSED_COLOUR, label="refused (does not boot)"),
        Patch(color=UNSPLIT_COLOUR, label="cannot split over tp"),
    ]
    figure.legend(handles=legend, loc="center right", fontsize=8, frameon=False)
    figure.tight_layout(rect=(0, 0, 0.86, 1))
    return figure


def row_label(row: PlanRow) -> str:
    """A row's label: its tensor-parallel size and, as the table shows them,
    the state and KV cache per sequence on one rank."""
    if row.per_sequence_bytes is None:
        return f"tp {row.tp_size}"
    kv = "" if not row.kv_per_sequence_bytes else f"\nkv {format_size(row.kv_per_sequence_bytes)}"
    return f"tp {row.tp_size}\nstate {format_size(row.per_sequence_bytes)}{kv}"


# --- the plan under a server -----------------------------------------------------------------

PLAN_SERVERS: Final = ("metrale", "vllm", "sglang")
_BUDGET_FIELDS: Final = frozenset({"kv_cache_memory_bytes", "available_memory"})


@dataclass(frozen=True)
class ServerRow:
    """One tensor-parallel size under a server: one rank's budget after the
    weights and ``other`` (what the server sizes its caches from), the
    largest number of concurrent sequences of ``max_model_len`` tokens the
    server holds in it (0 when it does not start, with ``refusal`` saying
    why), whether each batch fits, and the server's figures behind it.
    ``problem``, with no batches: the model cannot be split over this size."""

    tp_size: int
    budget_bytes: int | None
    largest_batch: int
    fits: tuple[bool, ...]
    problem: str | None
    refusal: str | None
    detail: dict[str, Any]


@dataclass(frozen=True)
class ServerPlan:
    """Which batches of ``max_model_len``-token sequences fit ``server``'s
    per-rank budget, for each tensor-parallel size. A server with no ring
    shows no ring depth."""

    server: str
    model: str
    source: str | None
    free: int
    reserve: Reserve
    batch_sizes: tuple[int, ...]
    rows: tuple[ServerRow, ...]

    @property
    def boots(self) -> bool:
        """Whether some batch fits under some tensor-parallel size."""
        return any(any(row.fits) for row in self.rows)


def server_largest_batch(
    server: str, config: ConfigSource, tp: int, budget: int, max_model_len: int, spec: int
) -> tuple[int, dict[str, Any]]:
    """The most concurrent sequences of ``max_model_len`` tokens that
    ``server``'s own sizing holds in ``budget`` bytes on one of ``tp`` ranks,
    and the figures it came from. vLLM: ``max_concurrency`` (num_blocks over
    the blocks one request needs), floored. SGLang: its running-request cap,
    and the KV pool's tokens over ``max_model_len``. Raises
    ``ServerArgumentError`` for a budget the server refuses to start with."""
    from .servers import sglang_reservation, vllm_reservation

    if server == "vllm":
        held = vllm_reservation(
            config,
            tensor_parallel_size=tp,
            max_num_seqs=1,
            max_model_len=max_model_len,
            kv_cache_memory_bytes=budget,
            num_speculative_tokens=spec,
        )
        concurrency = held.max_concurrency or 0.0
        return int(concurrency), {
            "num_blocks": held.num_blocks,
            "blocks_per_request": held.blocks_per_request_at_max_model_len,
            "max_concurrency": concurrency,
        }
    held_sglang = sglang_reservation(
        config, tp_size=tp, available_memory=budget, context_length=max_model_len
    )
    state = ssm_state(config, tp_size=tp)
    per_token = kv_cache_per_sequence(state.attention, tp, 1)
    kv = held_sglang.kv_cache_bytes or 0
    by_kv = kv // (per_token * max_model_len) if per_token else held_sglang.max_running_requests
    return min(held_sglang.max_running_requests, by_kv), {
        "max_running_requests": held_sglang.max_running_requests,
        "state_slots": held_sglang.slots,
        "kv_cache_bytes": held_sglang.kv_cache_bytes,
        "sequences_in_kv_cache": by_kv,
    }


def server_plan(
    server: str,
    config: ConfigSource,
    free: int,
    reserve: Reserve,
    tp_sizes: Sequence[int] = DEFAULT_TP_SIZES,
    batch_sizes: Sequence[int] = DEFAULT_BATCH_SIZES,
    speculative_tokens: int = 0,
) -> ServerPlan:
    """For each ``tp_sizes``, the budget one rank has after its share of the
    weights and ``reserve.other``, the largest batch of
    ``reserve.max_model_len``-token sequences that ``server`` (``vllm`` or
    ``sglang``, through ``decode_ring.servers``) holds in it, and which of
    ``batch_sizes`` fit. Raises ``ModelConfigError`` as the servers' sizing
    does, but for a budget too small to start, which is a row that fits no
    batch."""
    if reserve.max_model_len is None:
        raise ModelConfigError(
            f"argument max_model_len: under {server}, a plan fits sequences of this many "
            "tokens: give it",
            field="max_model_len",
        )
    rows = []
    first: SsmState | None = None
    for tp in tp_sizes:
        try:
            state = ssm_state(config, tp_size=tp)
        except TensorParallelSplitError as error:
            rows.append(ServerRow(tp, None, 0, (), str(error), None, {}))
            continue
        first = first or state
        budget = free - divided_evenly(reserve.weights, tp) - reserve.other
        refusal = None
        largest, detail = 0, dict[str, Any]()
        if budget <= 0:
            refusal = "the weights and other alone fill free memory"
        else:
            try:
                largest, detail = server_largest_batch(
                    server, config, tp, budget, reserve.max_model_len, speculative_tokens
                )
            except ModelConfigError as error:
                if getattr(error, "field", None) not in _BUDGET_FIELDS:
                    raise
                refusal = str(error)
        fits = tuple(batch <= largest for batch in batch_sizes)
        rows.append(ServerRow(tp, budget, largest, fits, None, refusal, detail))
    refuse_unsplittable(rows)
    assert first is not None
    return ServerPlan(
        server, first.model_type, first.source, free, reserve, tuple(batch_sizes), tuple(rows)
    )
