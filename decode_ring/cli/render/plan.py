"""``plan`` as JSON and text: the ring depth by tensor-parallel size and batch, or under a
server the batches it holds."""

from __future__ import annotations

from typing import Any, Final

from ..._selector import DECODE_ROLLBACK_RING_SLOTS
from ...plan import Plan, PlanCell, Reserve, ServerPlan
from ...releases import SGLANG, VLLM
from ...units import format_size
from .base import Rendered, layout_text, render

__all__: list[str] = []


PLAN_FORMULA: Final = "weights / tp + other + batch x (state/seq + kv/seq)"


def reserve_json(free: int | None, reserve: Reserve) -> dict[str, Any]:
    """A plan's memory inputs as JSON: free memory and the reserve's terms."""
    return {
        "free_bytes": free,
        "weights_bytes": reserve.weights,
        "weights_source": reserve.weights_source,
        "other_bytes": reserve.other,
        "max_model_len": reserve.max_model_len,
    }


def reserve_line(reserve: Reserve) -> str:
    """A plan's reserve inputs in one line of text."""
    length = "-" if reserve.max_model_len is None else f"{reserve.max_model_len:,}"
    return (
        f"weights {format_size(reserve.weights)} ({reserve.weights_source}), other "
        f"{format_size(reserve.other)}, max model len {length}"
    )


def cell_json(cell: PlanCell) -> dict[str, Any]:
    return {
        "batch": cell.batch,
        "depth": cell.depth,
        "boots": cell.boots,
        "weights_bytes": cell.weights_bytes,
        "other_bytes": cell.other_bytes,
        "state_bytes": cell.state_bytes,
        "kv_bytes": cell.kv_bytes,
        "reserve_without_ring_bytes": cell.reserve_without_ring,
        "ring_bytes": cell.fit.ring_bytes,
        "total_bytes": cell.fit.total,
    }


def plan_refusal(plan: Plan) -> str | None:
    """Why no cell of the grid boots, in one line; None when some cell does."""
    if plan.boots:
        return None
    least = min(
        (cell for row in plan.rows for cell in row.cells),
        key=lambda cell: cell.reserve_without_ring,
    )
    row = next(row for row in plan.rows if least in row.cells)
    return (
        f"refused: no cell of the plan boots; the smallest reserve, tp {row.tp_size} at batch "
        f"{least.batch}, is {format_size(least.reserve_without_ring)} > free memory "
        f"{format_size(plan.free)}"
    )


@render.register
def _(plan: Plan) -> Rendered:
    return Rendered(_plan_json(plan), _plan_lines(plan), plan_refusal(plan))


def _plan_json(plan: Plan) -> dict[str, Any]:
    """The plan's inputs, and each row with its cells."""
    reserve = plan.reserve
    return {
        "model": plan.model,
        "source": plan.source,
        "layout": plan.layout,
        "server_version": plan.server_version,
        "ssm_layers": plan.ssm_layers,
        **reserve_json(plan.free, reserve),
        "formula": PLAN_FORMULA,
        "requested": plan.requested,
        "boots": plan.boots,
        "batch_sizes": list(plan.batch_sizes),
        "rows": [
            {
                "tp_size": row.tp_size,
                "per_sequence_bytes": row.per_sequence_bytes,
                "kv_per_sequence_bytes": row.kv_per_sequence_bytes,
                "weights_bytes": row.weights_bytes,
                "problem": row.problem,
                "depths": list(row.depths),
                "largest_full_depth_batch": row.largest_full_depth_batch,
                "full_depth": row.full_depth,
                "cells": [cell_json(cell) for cell in row.cells],
            }
            for row in plan.rows
        ],
    }


def _plan_lines(plan: Plan) -> list[str]:
    """The grid as a table: one row per tensor-parallel size, a depth per batch."""
    reserve = plan.reserve
    layout = f", {layout_text(plan.layout, plan.server_version)}" if plan.layout else ""
    lines = [
        f"decode ring depth by tensor-parallel size and batch: {plan.model}{layout}, per rank",
        f"free memory {format_size(plan.free)}, requested depth {plan.requested}",
        reserve_line(reserve),
        "",
        f"  {'tp':>3}  {'state/seq':>11}  {'kv/seq':>11}  "
        + "".join(f"{batch:>6}" for batch in plan.batch_sizes)
        + f"  {'full depth up to batch':>22}",
    ]
    for row in plan.rows:
        if row.per_sequence_bytes is None or row.kv_per_sequence_bytes is None:
            lines.append(f"  {row.tp_size:>3}  {'-':>11}  {'-':>11}  cannot split: {row.problem}")
            continue
        cells = "".join(f"{'-' if depth is None else depth:>6}" for depth in row.depths)
        lines.append(
            f"  {row.tp_size:>3}  {format_size(row.per_sequence_bytes):>11}  "
            f"{format_size(row.kv_per_sequence_bytes):>11}  {cells}  {row.full_depth:>22}"
        )
    full = DECODE_ROLLBACK_RING_SLOTS
    lines += [
        "",
        f"reserve per rank = {PLAN_FORMULA}",
        "  the weights divided evenly by tp; the ring (depth x batch x state/seq) goes beside it",
        "- : the server refuses to boot (the reserve alone does not fit)",
        f"full depth up to batch: the largest batch at depth {full}; none: no batch is; "
        f"-: {full} is not requested",
    ]
    return lines


SERVER_NAMES: Final = {"vllm": str(VLLM), "sglang": str(SGLANG)}
SERVER_LARGEST: Final = {
    "vllm": "vLLM's maximum concurrency at max model len, num_blocks / blocks per request",
    "sglang": "SGLang's running-request cap, or the sequences its KV pool holds if fewer",
}


def server_plan_refusal(plan: ServerPlan) -> str | None:
    """Why no batch fits under the server, in one line; None when one does."""
    if plan.boots:
        return None
    why = next((row.refusal for row in plan.rows if row.refusal), None)
    return (
        f"refused: no batch of the plan fits {_release(plan)} at any tensor-parallel "
        f"size{f' ({why})' if why else ''}"
    )


def _release(plan: ServerPlan) -> str:
    """The server and the release whose rules answered."""
    server = SERVER_NAMES[plan.server].split(" ")[0]
    return f"{server} {plan.server_version}" if plan.server_version else SERVER_NAMES[plan.server]


@render.register
def _(plan: ServerPlan) -> Rendered:
    return Rendered(_server_plan_json(plan), _server_plan_lines(plan), server_plan_refusal(plan))


def _server_plan_json(plan: ServerPlan) -> dict[str, Any]:
    """The plan's inputs, and each row with the server's figures behind it."""
    reserve = plan.reserve
    return {
        "server": plan.server,
        "server_version": plan.server_version,
        "model": plan.model,
        "source": plan.source,
        **reserve_json(plan.free, reserve),
        "gpu": plan.gpu,
        "formula": "budget per rank = free - weights / tp - other"
        if plan.free is not None
        else "budget per rank: the server's own, from the GPU (log_lines of decode-ring "
        f"{plan.server})",
        "boots": plan.boots,
        "batch_sizes": list(plan.batch_sizes),
        "rows": [
            {
                "tp_size": row.tp_size,
                "budget_bytes": row.budget_bytes,
                "largest_batch": row.largest_batch,
                "fits": list(row.fits),
                "problem": row.problem,
                "refusal": row.refusal,
                plan.server: row.detail,
            }
            for row in plan.rows
        ],
    }


def _server_plan_lines(plan: ServerPlan) -> list[str]:
    """The grid as a table: one row per tensor-parallel size, whether each batch fits."""
    reserve = plan.reserve
    length = f"{reserve.max_model_len:,}" if reserve.max_model_len else "-"
    memory = (
        [f"free memory {format_size(plan.free)}", reserve_line(reserve)]
        if plan.free is not None
        else [
            f"GPU {plan.gpu or '(by its memory)'}: each tp's budget is the server's own, "
            f"max model len {length}"
        ]
    )
    lines = [
        f"{_release(plan)}: batches of {length}-token sequences by tensor-parallel "
        f"size, {plan.model}, per rank",
        *memory,
        "",
        f"  {'tp':>3}  {'budget':>11}  "
        + "".join(f"{batch:>6}" for batch in plan.batch_sizes)
        + f"  {'largest batch':>13}",
    ]
    for row in plan.rows:
        if row.problem is not None:
            lines.append(f"  {row.tp_size:>3}  {'-':>11}  cannot split: {row.problem}")
            continue
        cells = "".join(f"{'yes' if fits else 'no':>6}" for fits in row.fits)
        budget = "-" if row.budget_bytes is None else format_size(max(row.budget_bytes, 0))
        lines.append(f"  {row.tp_size:>3}  {budget:>11}  {cells}  {row.largest_batch:>13}")
        if row.refusal:
            lines.append(f"       does not start: {row.refusal}")
    formula = (
        "budget per rank = free - weights / tp - other: what the server sizes its caches from"
        if plan.free is not None
        else "budget per rank: the server's own from the GPU (weights, activation, graphs), "
        f"as decode-ring {plan.server} shows it"
    )
    lines += [
        "",
        formula,
        f"largest batch: {SERVER_LARGEST[plan.server]}",
        "no ring depth: the decode-rollback ring is the reference server's (--server metrale)",
    ]
    return lines
