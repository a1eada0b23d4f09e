"""``decide`` and ``fit`` as JSON and text: the decision with the variables behind it, the
preflight rung by rung, and the model a fit read its state from."""

from __future__ import annotations

from typing import Any

from ...models import SsmState
from ...preflight import Preflight, PreLoadFreeMemory
from ...reports import DecisionReport, FitReport, shown_value
from ...units import format_size
from .base import Rendered, layout_text, render, sized, source_text, table

__all__: list[str] = []


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
        f"  {'model':<22} {state.model_type} ({state.family}), "
        f"{layout_text(state.layout, state.server_version)}, "
        f"tp rank 1 of {state.tp_size}",
        f"  {'conv state dtype':<22} {state.conv_dtype} ({state.conv_dtype_rule})",
        f"  {'ssm state dtype':<22} {state.ssm_dtype} ({state.ssm_dtype_rule})",
    ]


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
    return Rendered(_preflight_json(report), _preflight_lines(report), report.fit.refusal)


def _preflight_json(report: Preflight) -> dict[str, Any]:
    """Every term of the fit, its inputs and each rung."""
    fit = report.fit
    pre_load = isinstance(fit.yardstick, PreLoadFreeMemory)
    return {
        "requested": fit.requested,
        "slots": fit.slots,
        "fits": fit.fits,
        "warning": fit.warning,
        "decision": fit.decision,
        "refused": fit.refusal,
        "yardstick": fit.yardstick.name,
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
            for rung in fit.rungs()
        ],
    }


def _preflight_lines(report: Preflight) -> list[str]:
    """The fit's terms, the ladder rung by rung, and the outcome."""
    fit = report.fit
    yardstick = fit.yardstick
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
        *_rung_lines(report),
    ]
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
    return lines


def _rung_lines(report: Preflight) -> list[str]:
    """One line per rung of the ladder, marked where the fit chose or refused it."""
    fit = report.fit
    lines = []
    for rung in fit.rungs():
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
    return lines
