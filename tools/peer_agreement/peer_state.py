"""The record both servers' oracles return: the recurrent state one server keeps for one sequence
on one tensor-parallel rank, or its refusal, with what ran to decide it.

Plain data, no peer code: ``states.py`` fills it, ``compare.py`` compares it with decode_ring.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["PeerGroup", "PeerState", "PeerTensor", "tensor"]

DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4, "float64": 8, "uint8": 1, "int8": 1}


@dataclass(frozen=True)
class PeerTensor:
    """One state tensor of one layer: its name, per-rank shape, dtype name and bytes."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    bytes: int


def tensor(name: str, shape: tuple[int, ...], dtype: str, itemsize: int) -> PeerTensor:
    """A ``PeerTensor`` with its bytes worked out as the servers do: numel times itemsize."""
    return PeerTensor(name, tuple(int(d) for d in shape), dtype, math.prod(shape) * itemsize)


@dataclass(frozen=True)
class PeerGroup:
    """The recurrent layers of one kind (``mamba1``, ``mamba2``, ``gated_delta_net``, ``kda``,
    ``short_conv``, ``linear_attention``) and the tensors each of them holds."""

    kind: str
    layer_indices: tuple[int, ...]
    tensors: tuple[PeerTensor, ...]

    @property
    def per_layer_bytes(self) -> int:
        return sum(item.bytes for item in self.tensors)

    @property
    def bytes(self) -> int:
        return self.per_layer_bytes * len(self.layer_indices)


@dataclass(frozen=True)
class PeerState:
    """What one server keeps, or why it refuses.

    ``refusal`` is ``"ExceptionType: message"`` from the peer's own code (or the oracle's
    statement that the server lacks the family, naming the server and version). ``ran`` cites
    the wheel functions that produced the figures (``path:first-last``); ``layer_rule`` says how
    the server finds the recurrent layers; ``notes`` records what a reader should know (the
    model-level shape function disagreeing with the layer, the dtype hook that applied)."""

    server: str
    family: str
    tp: int
    spec: int
    groups: tuple[PeerGroup, ...] = ()
    refusal: str | None = None
    attention_refusal: str | None = None
    layer_rule: str = ""
    dtype_rule: str = ""
    ran: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def recurrent_layers(self) -> int:
        return sum(len(group.layer_indices) for group in self.groups)

    @property
    def per_sequence_bytes(self) -> int:
        return sum(group.bytes for group in self.groups)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, with the derived totals."""
        data = asdict(self)
        data["recurrent_layers"] = self.recurrent_layers
        data["per_sequence_bytes"] = self.per_sequence_bytes
        for group, raw in zip(self.groups, data["groups"], strict=True):
            raw["per_layer_bytes"] = group.per_layer_bytes
            raw["bytes"] = group.bytes
        return data


def refusal_text(error: BaseException) -> str:
    """``"Type: message"`` on one line, as the reports print a refusal."""
    message = " ".join(str(error).split())
    return f"{type(error).__name__}: {message}" if message else type(error).__name__
