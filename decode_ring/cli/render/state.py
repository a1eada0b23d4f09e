"""``state`` as JSON and text: every tensor of every kind of recurrent layer, the bytes per
layer and per sequence, and the ring at a batch."""

from __future__ import annotations

from ..._selector import DECODE_ROLLBACK_RING_SLOTS
from ...models import SsmState
from ...reports import StateReport
from .base import Rendered, layout_text, render, sized, source_text

__all__: list[str] = []


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
    # The ring is the reference server's: its lines only under its layout (issue 25).
    ring = state.layout == "metrale"
    json.update(
        max_batch_size=report.max_batch_size,
        slot_bytes=report.slot_bytes if ring else None,
        full_ring_slots=DECODE_ROLLBACK_RING_SLOTS if ring else None,
        full_ring_bytes=report.full_ring_bytes if ring else None,
    )
    layers, sizes, width = _tensor_lines(state)
    lines = [
        f"ssm state of {state.model_type} ({state.family}) per sequence, tp rank 1 of "
        f"{state.tp_size}, {layout_text(state.layout, state.server_version)}",
        f"  {'config':<{width}} {source_text(state.source)}",
        f"  {'ssm layers':<{width}} {state.ssm_layers:>11}  {layer_ranges(state.layer_indices)}",
        *layers,
        f"  {'speculative tokens':<{width}} {state.speculative_tokens:>11}",
        *sizes,
        sized("per layer", state.per_layer_bytes, width),
        sized("per sequence", state.per_sequence_bytes, width),
    ]
    if report.max_batch_size is not None:
        lines += _batch_lines(report, ring, width)
    return Rendered(json, lines)


def _tensor_lines(state: SsmState) -> tuple[list[str], list[str], int]:
    """Every tensor of every kind of recurrent layer (a kind's own line where there are
    several): its shape lines, its bytes lines, and the label column's width, 22 or wider
    where a tensor's label is longer."""
    several = len(state.groups) > 1
    labels = {
        id(tensor): f"{group.kind} {tensor.name}" if several else tensor.name
        for group in state.groups
        for tensor in group.tensors
    }
    width = max([22, *(len(f"{label} bytes per layer") for label in labels.values())])
    lines: list[str] = []
    sizes: list[str] = []
    for group in state.groups:
        if several:
            lines.append(
                f"  {group.kind + ' layers':<{width}} {len(group.layer_indices):>11}  "
                f"{layer_ranges(group.layer_indices)}"
            )
        for tensor in group.tensors:
            label = labels[id(tensor)]
            lines.append(
                f"  {label + ' state':<{width}} {shape_text(tensor.shape)} {tensor.dtype} "
                f"({tensor.dtype_rule})"
            )
            sizes.append(sized(f"{label} bytes per layer", tensor.bytes, width))
    return lines, sizes, width


def _batch_lines(report: StateReport, ring: bool, width: int) -> list[str]:
    """At a batch: the ring's slot and depth under the reference's layout; elsewhere the batch's
    state, and no ring."""
    state, batch = report.state, report.max_batch_size
    assert batch is not None
    lines = [f"  {'max batch size':<{width}} {batch:>11}"]
    if ring:
        return [
            *lines,
            sized("one ring slot", report.slot_bytes, width),
            sized(f"full ring ({DECODE_ROLLBACK_RING_SLOTS} slots)", report.full_ring_bytes, width),
        ]
    return [
        *lines,
        sized("batch x per sequence", batch * state.per_sequence_bytes, width),
        f"  {'ring':<{width}} {'-':>11}  no decode-rollback ring under {state.layout}: it is the "
        "reference server's (--layout metrale)",
    ]
