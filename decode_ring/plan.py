"""The plan grid: for each tensor-parallel size and batch, the depth the reference server's
preflight would choose against free memory per rank, beside a reserve computed for each cell
(``plan``); or, under vLLM or SGLang, which batches of sequences each server's own sizing holds
in each rank's budget (``server_plan``), read from the server's reservation, never recomputed.
Neither publishes a depth.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ._selector import DECODE_ROLLBACK_RING_SLOTS
from .models import (
    DTYPE_BYTES,
    ConfigSource,
    ModelConfigError,
    SsmState,
    TensorParallelSplitError,
    load_config,
    ssm_state,
)
from .models.errors import check_within_64_bits, refuse_argument
from .preflight import PreLoadFreeMemory, RingFit, RingSlot, fit_ring, requested_slots
from .servers import ServerArgumentError, sglang_reservation, vllm_reservation

__all__ = [
    "DEFAULT_BATCH_SIZES",
    "DEFAULT_TP_SIZES",
    "GRID_AXES",
    "MAX_GRID_SIDE",
    "PLAN_SERVERS",
    "Plan",
    "PlanCell",
    "PlanRow",
    "Reserve",
    "ServerPlan",
    "ServerRow",
    "check_grid",
    "divided_evenly",
    "plan",
    "server_plan",
]

DEFAULT_TP_SIZES: Final = (1, 2, 4, 8)
DEFAULT_BATCH_SIZES: Final = (8, 16, 32, 64, 128, 256, 512)
# The bound of a plan: at most this many tensor-parallel sizes and batch sizes (4,096 cells),
# which a run plans, prints and draws in under 2 s and 200 MB (the README).
MAX_GRID_SIDE: Final = 64
GRID_AXES: Final = {"tp_sizes": "tensor-parallel sizes", "batch_sizes": "batch sizes"}


def grid_refusal(axis: str, count: int) -> str | None:
    """Why ``count`` values on the grid's ``axis`` (a key of ``GRID_AXES``) are too many, or
    ``None``."""
    if count <= MAX_GRID_SIDE:
        return None
    return (
        f"at most {MAX_GRID_SIDE} {GRID_AXES[axis]} (a plan is at most {MAX_GRID_SIDE} x "
        f"{MAX_GRID_SIDE} cells), got {count}"
    )


def check_grid(tp_sizes: Sequence[int], batch_sizes: Sequence[int]) -> None:
    """Refuses a grid past ``MAX_GRID_SIDE`` a side (``ModelConfigError`` naming the axis)."""
    for axis, sizes in (("tp_sizes", tp_sizes), ("batch_sizes", batch_sizes)):
        refusal = grid_refusal(axis, len(sizes))
        if refusal is not None:
            raise refuse_argument(axis, refusal)


def divided_evenly(total: int, tp_size: int) -> int:
    """One rank's share of ``total`` bytes split evenly over ``tp_size``
    ranks, rounded up: a rank holds at least its share."""
    return -(-total // tp_size)


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
    when the requested depth is not the full depth; ``largest_full_depth_batch``
    is ``None`` but for a batch)."""

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
    server_version: str | None = None

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
    ``none`` (no batch fits: no batch, not a batch of 0 sequences) or ``-``
    (the requested depth is not full)."""
    if requested != DECODE_ROLLBACK_RING_SLOTS:
        return None, "-"
    room = free - fixed
    grows = (DECODE_ROLLBACK_RING_SLOTS + 1) * per_sequence + kv
    if room < 0:
        return None, "none"
    if grows == 0:
        return None, "any"
    batch = room // grows
    return (batch, str(batch)) if batch else (None, "none")


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
    fixed = weights + reserve.other
    cells = []
    for batch in batch_sizes:
        # Exact sums, each within 64 bits: a saturated sum would fit a free memory of
        # USIZE_MAX that it exceeds.
        state_bytes, kv_bytes = batch * per_sequence, batch * kv
        beside = fixed + state_bytes + kv_bytes
        terms = {
            "state_bytes": state_bytes,
            "kv_bytes": kv_bytes,
            "reserve_without_ring_bytes": beside,
            "total_bytes": beside + requested * state_bytes,
        }
        check_within_64_bits(terms, f"plan at tp {tp}, batch {batch}")
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
    the server's (``requested_slots``). A grid past ``MAX_GRID_SIDE`` a side raises
    ``ModelConfigError``; a reserve or a ring past 64 bits, ``OverflowError``."""
    check_grid(tp_sizes, batch_sizes)
    loaded = None if config is None else load_config(config)
    rows = []
    first: SsmState | None = None
    layers = ssm_layers
    for tp in tp_sizes:
        if loaded is None:
            if ssm_layers is None or per_seq_state is None:
                raise ModelConfigError("a plan without a config needs ssm_layers and per_seq_state")
            state, per_sequence, kv = None, divided_evenly(per_seq_state, tp), 0
        else:
            try:
                state = ssm_state(loaded, tp_size=tp, **state_options)
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
        server_version=first.server_version if first else None,
    )


def kv_cache_for(state: SsmState, tp: int, max_model_len: int | None) -> int:
    """The KV cache one sequence of ``max_model_len`` tokens holds on one of ``tp`` ranks, in
    the model dtype (vLLM's ``--kv-cache-dtype auto``): ``AttentionLayers.kv_bytes_per_token``
    times the tokens; 0 without attention layers. Refuses a model with attention layers when
    ``max_model_len`` is not given."""
    attention = state.attention
    if attention is None or not attention.layer_indices:
        return 0
    if max_model_len is None:
        raise refuse_argument(
            "max_model_len",
            f"{state.model_type} has {len(attention.layer_indices)} attention layers, whose KV "
            "cache per sequence grows with it: give it",
        )
    per_token = attention.kv_bytes_per_token(tp, DTYPE_BYTES[attention.model_dtype])
    return per_token * max_model_len


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
    shows no ring depth. ``free`` None: the server computes its own budget
    from the GPU (``gpu``, what it was named as). ``server_version``: the
    release whose rules answer."""

    server: str
    model: str
    source: str | None
    free: int | None
    reserve: Reserve
    batch_sizes: tuple[int, ...]
    rows: tuple[ServerRow, ...]
    gpu: str | None = None
    server_version: str | None = None

    @property
    def boots(self) -> bool:
        """Whether some batch fits under some tensor-parallel size."""
        return any(any(row.fits) for row in self.rows)


def server_largest_batch(
    server: str,
    config: ConfigSource,
    tp: int,
    budget: int | None,
    max_model_len: int,
    spec: int,
    options: Mapping[str, Any] | None = None,
) -> tuple[int, int | None, dict[str, Any]]:
    """The most concurrent sequences of ``max_model_len`` tokens that ``server``'s own sizing
    holds on one of ``tp`` ranks, read from its reservation, the budget it sized from, and the
    figures it came from. ``budget``: the bytes a rank has for its caches; ``None``: the
    server's own budget from the launch's GPU in ``options`` (the reservation's keywords).
    vLLM: ``max_concurrency`` (num_blocks over the blocks one request needs), floored. SGLang:
    its running-request cap, or the sequences of ``max_model_len`` tokens its KV pool holds if
    fewer. Raises ``ServerArgumentError`` for a budget the server refuses to start with."""
    launch = dict(options or {})
    if server == "vllm":
        held = vllm_reservation(
            config,
            **{
                **launch,
                "tensor_parallel_size": tp,
                "max_model_len": max_model_len,
                "kv_cache_memory_bytes": budget,
                "num_speculative_tokens": launch.get("num_speculative_tokens", spec),
            },
        )
        concurrency = held.max_concurrency or 0.0
        return (
            int(concurrency),
            held.kv_cache_memory_bytes,
            {
                "num_blocks": held.num_blocks,
                "blocks_per_request": held.blocks_per_request_at_max_model_len,
                "max_concurrency": concurrency,
            },
        )
    pool = sglang_reservation(
        config,
        **{**launch, "tp_size": tp, "available_memory": budget, "context_length": max_model_len},
    )
    sequences = (pool.kv_tokens or 0) // max_model_len
    return (
        min(pool.max_running_requests, sequences),
        pool.available_memory,
        {
            "max_running_requests": pool.max_running_requests,
            "state_slots": pool.slots,
            "kv_cache_bytes": pool.kv_cache_bytes,
            "kv_tokens": pool.kv_tokens,
            "sequences_in_kv_cache": sequences,
        },
    )


def server_plan(
    server: str,
    config: ConfigSource,
    free: int | None,
    reserve: Reserve,
    tp_sizes: Sequence[int] = DEFAULT_TP_SIZES,
    batch_sizes: Sequence[int] = DEFAULT_BATCH_SIZES,
    speculative_tokens: int = 0,
    options: Mapping[str, Any] | None = None,
    gpu: str | None = None,
) -> ServerPlan:
    """For each ``tp_sizes``, the budget one rank has after its share of the
    weights and ``reserve.other`` (or, ``free`` None, the budget the server
    computes itself from the launch's GPU in ``options``), the largest batch
    of ``reserve.max_model_len``-token sequences that ``server`` (``vllm`` or
    ``sglang``, through ``decode_ring.servers``) holds in it, and which of
    ``batch_sizes`` fit. ``options``: the launch's other keywords for the
    reservation. Raises ``ModelConfigError`` as the servers' sizing does, but
    for a budget too small to start, which is a row that fits no batch."""
    check_grid(tp_sizes, batch_sizes)
    if reserve.max_model_len is None:
        raise refuse_argument(
            "max_model_len", f"under {server}, a plan fits sequences of this many tokens: give it"
        )
    config = load_config(config)
    version = (options or {}).get("version")
    rows = []
    first: SsmState | None = None
    for tp in tp_sizes:
        try:
            state = ssm_state(config, tp_size=tp, layout=server, version=version)
        except TensorParallelSplitError as error:
            rows.append(ServerRow(tp, None, 0, (), str(error), None, {}))
            continue
        first = first or state
        rows.append(
            _server_row(server, config, tp, free, reserve, batch_sizes, speculative_tokens, options)
        )
    refuse_unsplittable(rows)
    assert first is not None
    return ServerPlan(
        server,
        first.model_type,
        first.source,
        free,
        reserve,
        tuple(batch_sizes),
        tuple(rows),
        gpu,
        first.server_version,
    )


def _server_row(
    server: str,
    config: ConfigSource,
    tp: int,
    free: int | None,
    reserve: Reserve,
    batch_sizes: Sequence[int],
    spec: int,
    options: Mapping[str, Any] | None,
) -> ServerRow:
    """One tensor-parallel size under a server: its budget, the largest batch, which fit."""
    assert reserve.max_model_len is not None
    budget = None if free is None else free - divided_evenly(reserve.weights, tp) - reserve.other
    launch = dict(options or {})
    if free is None and reserve.weights_source == "--weights":
        launch["weights_bytes"] = divided_evenly(reserve.weights, tp)
    refusal = None
    largest, detail = 0, dict[str, Any]()
    if budget is not None and budget <= 0:
        refusal = "the weights and other alone fill free memory"
    else:
        try:
            largest, budget, detail = server_largest_batch(
                server, config, tp, budget, reserve.max_model_len, spec, launch
            )
        except ServerArgumentError as error:
            if error.field not in _BUDGET_FIELDS and error.server_refusal is None:
                raise
            refusal = str(error.server_refusal or error)
    fits = tuple(batch <= largest for batch in batch_sizes)
    return ServerRow(tp, budget, largest, fits, None, refusal, detail)
