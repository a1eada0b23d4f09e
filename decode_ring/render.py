"""The text and JSON forms of what the commands compute, side by side.

Each command computes a value in the module that owns it
(``ExplainedDecision``, ``preflight.Preflight``, ...); ``render`` turns that
value into a ``Rendered``: its JSON object, its text lines, and a refusal line
when the server would not boot. A new command registers its value's renderer
here. Text shows every value that came from the user or the environment
escaped (as ``ascii()`` writes it), so that any stdout encoding can print it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import singledispatch
from typing import Any, Final

from ._selector import DECODE_ROLLBACK_RING_SLOTS
from .models import SsmState
from .preflight import Preflight, PreLoadFreeMemory
from .sizing import (
    DecisionReport,
    FitReport,
    Plan,
    PlanCell,
    Reserve,
    ServerPlan,
    StateReport,
    shown_value,
)
from .units import format_size


@dataclass(frozen=True)
class Rendered:
    """A command's result, ready to print: one JSON object, or text lines;
    ``refusal`` is one line for stderr when the server would refuse to boot."""

    json: dict[str, Any]
    lines: list[str]
    refusal: str | None = None


@singledispatch
def render(value: object) -> Rendered:
    """The ``Rendered`` form of a command's value."""
    raise TypeError(f"no renderer for {type(value).__name__}")


def table(rows: list[tuple[str, str]]) -> list[str]:
    """Label and value rows, the values in one column."""
    width = max(len(label) for label, _ in rows)
    return [f"{label:<{width}}  {value}" for label, value in rows]


def sized(label: str, value: int | None) -> str:
    """One labelled size line, in binary units and in bytes."""
    if value is None:
        return f"  {label:<22} {'-':>11}"
    return f"  {label:<22} {format_size(value):>11}  ({value:,} B)"


def environment_json(report: DecisionReport) -> dict[str, Any]:
    """The variables as JSON: a value that is not valid UTF-8 is null, and
    its name is in ``environment_not_utf8``."""
    return {
        "environment": {
            name: None if name in report.not_valid_utf8 else value
            for name, value in report.explained.environment.items()
        },
        "environment_not_utf8": list(report.not_valid_utf8),
    }


@render.register
def _(report: DecisionReport) -> Rendered:
    explained = report.explained
    decision = explained.decision
    json = {
        "slots": decision.slots,
        "skip_reason": decision.skip_reason,
        "rule": explained.rule,
        "ssm_layers": explained.num_ssm_layers,
        "speculative": explained.use_speculative,
        "published": explained.published,
        **environment_json(report),
        "core": explained.core,
    }
    rows = [
        ("ring depth", str(decision.slots)),
        ("rule", explained.rule),
        ("skip reason", decision.skip_reason or "-"),
        ("ssm layers", str(explained.num_ssm_layers)),
        ("speculative", "yes" if explained.use_speculative else "no"),
        ("published", "none" if explained.published is None else str(explained.published)),
        *((name, shown_value(report, name)) for name in explained.environment),
        ("core", explained.core),
    ]
    return Rendered(json, table(rows))


def model_json(state: SsmState) -> dict[str, Any]:
    """What ``fit --config`` records of the model it read."""
    return {
        "config": state.source,
        "family": state.family,
        "model_type": state.model_type,
        "layout": state.layout,
        "tp_size": state.tp_size,
        "conv_dtype": state.conv_dtype,
        "conv_dtype_rule": state.conv_dtype_rule,
        "ssm_dtype": state.ssm_dtype,
        "ssm_dtype_rule": state.ssm_dtype_rule,
        "speculative_tokens": state.speculative_tokens,
    }


def model_lines(state: SsmState) -> list[str]:
    return [
        f"  {'config':<22} {source_text(state.source)}",
        f"  {'model':<22} {state.model_type} ({state.family}), {state.layout} layout, "
        f"tp rank 1 of {state.tp_size}",
        f"  {'conv state dtype':<22} {state.conv_dtype} ({state.conv_dtype_rule})",
        f"  {'ssm state dtype':<22} {state.ssm_dtype} ({state.ssm_dtype_rule})",
    ]


def source_text(source: str | None) -> str:
    return ascii(source) if source else "(mapping)"


@render.register
def _(report: FitReport) -> Rendered:
    rendered = render(report.preflight)
    json = {
        **rendered.json,
        "request_rule": report.request_rule,
        **environment_json(report.request),
        "model": None if report.model is None else model_json(report.model),
    }
    lines = list(rendered.lines)
    at = next(i for i, line in enumerate(lines) if line.startswith("  requested depth"))
    lines.insert(at + 1, f"  {'requested by':<22} {report.request_rule}")
    if report.model is not None:
        lines[1:1] = model_lines(report.model)
    return Rendered(json, lines, rendered.refusal)


@render.register
def _(report: Preflight) -> Rendered:
    fit = report.fit
    yardstick = fit.yardstick
    pre_load = isinstance(yardstick, PreLoadFreeMemory)
    rungs = fit.rungs()
    json = {
        "requested": fit.requested,
        "slots": fit.slots,
        "fits": fit.fits,
        "warning": fit.warning,
        "decision": fit.decision,
        "refused": fit.refusal,
        "yardstick": yardstick.name,
        "slot_bytes": fit.slot_bytes,
        "ring_bytes": fit.ring_bytes,
        "beside_bytes": fit.beside,
        "limit_bytes": fit.limit,
        "total_bytes": fit.total,
        "published": report.published,
        "inputs": {
            "ssm_layers": report.num_ssm_layers,
            "max_batch_size": fit.max_batch_size,
            "per_seq_state": fit.per_seq_state,
            "reserve_without_ring": fit.beside if pre_load else None,
            "free": fit.limit if pre_load else None,
            "speculative": report.use_speculative,
            "kv_floor": None if pre_load else fit.beside,
            "headroom": None if pre_load else fit.limit,
        },
        "rungs": [
            {
                "slots": rung.slots,
                "ring_bytes": rung.ring_bytes,
                "total_bytes": rung.total_bytes,
                "fits": rung.fits,
            }
            for rung in rungs
        ],
    }
    batch = "-" if fit.max_batch_size is None else str(fit.max_batch_size)
    lines = [
        f"decode ring fit against {yardstick.name}",
        f"  {'ssm layers':<22} {report.num_ssm_layers:>11}",
        f"  {'max batch size':<22} {batch:>11}",
        sized("per-sequence state", fit.per_seq_state),
        sized("one ring slot", fit.slot_bytes),
        sized(yardstick.beside_term, fit.beside),
        sized(yardstick.limit_term, fit.limit),
        f"  {'requested depth':<22} {fit.requested:>11}",
        "",
        f"  {'depth':>5}  {'ring':>11}  {'total':>11}  fits",
    ]
    for rung in rungs:
        marks = []
        if rung.slots > fit.requested:
            marks.append("above the request")
        if rung.slots == fit.slots and not fit.refused:
            marks.append("<- chosen")
        if rung.slots == fit.slots and fit.refused and fit.beside_alone_fits:
            marks.append("<- pinned, refused")
        lines.append(
            f"  {rung.slots:>5}  {format_size(rung.ring_bytes):>11}  "
            f"{format_size(rung.total_bytes):>11}  {'yes' if rung.fits else 'no ':<4} "
            f"{' '.join(marks)}".rstrip()
        )
    chosen = "none: the server refuses to boot" if fit.refused else str(fit.slots)
    lines += [
        "",
        f"chosen depth   {chosen}",
        f"decision       {fit.decision}",
        f"warning        {fit.warning or '-'}",
    ]
    if fit.refused:
        lines.append(f"refusal        {fit.refusal}")
    if not fit.fits and not yardstick.refuses_boot:
        lines.append("note           the KV budget stage decides whether the server boots")
    return Rendered(json, lines, fit.refusal)


def layer_ranges(indices: tuple[int, ...]) -> str:
    """Layer indices with runs compressed: ``0-3,5,7-9``; ``none`` when empty."""
    runs: list[str] = []
    start = previous = None
    for index in (*indices, None):
        if index is not None and previous is not None and index == previous + 1:
            previous = index
            continue
        if start is not None:
            runs.append(str(start) if start == previous else f"{start}-{previous}")
        start = previous = index
    return ",".join(runs) or "none"


def shape_text(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(size) for size in shape) + ")" if shape else "-"


@render.register
def _(report: StateReport) -> Rendered:
    state = report.state
    json = state.as_dict()
    json.update(
        max_batch_size=report.max_batch_size,
        slot_bytes=report.slot_bytes,
        full_ring_slots=DECODE_ROLLBACK_RING_SLOTS,
        full_ring_bytes=report.full_ring_bytes,
    )
    lines = [
        f"ssm state of {state.model_type} ({state.family}) per sequence, tp rank 1 of "
        f"{state.tp_size}, {state.layout} layout",
        f"  {'config':<22} {source_text(state.source)}",
        f"  {'ssm layers':<22} {state.ssm_layers:>11}  {layer_ranges(state.layer_indices)}",
    ]
    # Every tensor of every kind of recurrent layer; a kind's own line where there are several.
    several = len(state.groups) > 1
    sizes: list[str] = []
    for group in state.groups:
        if several:
            lines.append(
                f"  {group.kind + ' layers':<22} {len(group.layer_indices):>11}  "
                f"{layer_ranges(group.layer_indices)}"
            )
        for tensor in group.tensors:
            label = f"{group.kind} {tensor.name}" if several else tensor.name
            lines.append(
                f"  {label + ' state':<22} {shape_text(tensor.shape)} {tensor.dtype} "
                f"({tensor.dtype_rule})"
            )
            sizes.append(sized(f"{label} bytes per layer", tensor.bytes))
    lines += [
        f"  {'speculative tokens':<22} {state.speculative_tokens:>11}",
        *sizes,
        sized("per layer", state.per_layer_bytes),
        sized("per sequence", state.per_sequence_bytes),
    ]
    if report.max_batch_size is not None:
        lines += [
            f"  {'max batch size':<22} {report.max_batch_size:>11}",
            sized("one ring slot", report.slot_bytes),
            sized(f"full ring ({DECODE_ROLLBACK_RING_SLOTS} slots)", report.full_ring_bytes),
        ]
    return Rendered(json, lines)


PLAN_FORMULA: Final = "weights / tp + other + batch x (state/seq + kv/seq)"


def reserve_json(free: int, reserve: Reserve) -> dict[str, Any]:
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
    reserve = plan.reserve
    json = {
        "model": plan.model,
        "source": plan.source,
        "layout": plan.layout,
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
    layout = f", {plan.layout} layout" if plan.layout else ""
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
    return Rendered(json, lines, plan_refusal(plan))


SERVER_NAMES: Final = {"vllm": "vLLM 0.33.0", "sglang": "SGLang 0.5.23"}
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
        f"refused: no batch of the plan fits {SERVER_NAMES[plan.server]} at any tensor-parallel "
        f"size{f' ({why})' if why else ''}"
    )


@render.register
def _(plan: ServerPlan) -> Rendered:
    reserve = plan.reserve
    json = {
        "server": plan.server,
        "model": plan.model,
        "source": plan.source,
        **reserve_json(plan.free, reserve),
        "formula": "budget per rank = free - weights / tp - other",
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
    length = f"{reserve.max_model_len:,}" if reserve.max_model_len else "-"
    lines = [
        f"{SERVER_NAMES[plan.server]}: batches of {length}-token sequences by tensor-parallel "
        f"size, {plan.model}, per rank",
        f"free memory {format_size(plan.free)}",
        reserve_line(reserve),
        "",
        f"  {'tp':>3}  {'budget':>11}  "
        + "".join(f"{batch:>6}" for batch in plan.batch_sizes)
        + f"  {'largest batch':>13}",
    ]
    for row in plan.rows:
        if row.budget_bytes is None:
            lines.append(f"  {row.tp_size:>3}  {'-':>11}  cannot split: {row.problem}")
            continue
        cells = "".join(f"{'yes' if fits else 'no':>6}" for fits in row.fits)
        lines.append(
            f"  {row.tp_size:>3}  {format_size(max(row.budget_bytes, 0)):>11}  {cells}  "
            f"{row.largest_batch:>13}"
        )
        if row.refusal:
            lines.append(f"       does not start: {row.refusal}")
    lines += [
        "",
        "budget per rank = free - weights / tp - other: what the server sizes its caches from",
        f"largest batch: {SERVER_LARGEST[plan.server]}",
        "no ring depth: the decode-rollback ring is the reference server's (--server metrale)",
    ]
    return Rendered(json, lines, server_plan_refusal(plan))
