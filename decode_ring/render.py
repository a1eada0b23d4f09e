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
from typing import Any

from ._facade import ExplainedDecision
from .preflight import Preflight, PreLoadFreeMemory
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


@render.register
def _(explained: ExplainedDecision) -> Rendered:
    decision = explained.decision
    json = {
        "slots": decision.slots,
        "skip_reason": decision.skip_reason,
        "rule": explained.rule,
        "ssm_layers": explained.num_ssm_layers,
        "speculative": explained.use_speculative,
        "published": explained.published,
        "environment": explained.environment,
        "core": explained.core,
    }
    rows = [
        ("ring depth", str(decision.slots)),
        ("rule", explained.rule),
        ("skip reason", decision.skip_reason or "-"),
        ("ssm layers", str(explained.num_ssm_layers)),
        ("speculative", "yes" if explained.use_speculative else "no"),
        ("published", "none" if explained.published is None else str(explained.published)),
        *(
            (name, "(unset)" if value is None else ascii(value))
            for name, value in explained.environment.items()
        ),
        ("core", explained.core),
    ]
    return Rendered(json, table(rows))


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
