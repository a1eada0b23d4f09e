"""What ``ssm_state`` returns: each state tensor of each kind of recurrent layer, the attention
side, and the totals; and ``Sizing``, what a kind of state needs to lay its tensors out."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Final

from .dtypes import DTYPE_BYTES, DtypeRules, Rule

__all__ = ["AttentionLayers", "LayerStates", "Sizing", "SsmState", "StateTensor", "tensor"]

KINDS: Final = (
    "mamba1",
    "mamba2",
    "gated_delta_net",
    "kda",
    "short_conv",
    "linear_attention",
)


@dataclass(frozen=True, slots=True)
class StateTensor:
    """One state tensor of one layer, for one sequence on one TP rank, in the layout's order.

    ``name`` is ``"conv"``, ``"ssm"`` (Mamba), ``"recurrent"`` (gated delta net, KDA, linear
    attention), or the peer's own name where a layer holds several conv tensors. ``bytes`` is
    ``prod(shape) * DTYPE_BYTES[dtype]``, exactly."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    dtype_rule: str
    bytes: int


@dataclass(frozen=True, slots=True)
class LayerStates:
    """The recurrent layers of one kind, that hold the same tensors: ``per_layer_bytes`` is the
    sum of the tensors' bytes and ``bytes`` that times the number of layers."""

    kind: str
    layer_indices: tuple[int, ...]
    tensors: tuple[StateTensor, ...]
    per_layer_bytes: int
    bytes: int


@dataclass(frozen=True, slots=True)
class AttentionLayers:
    """The attention (KV-cache) side, whole-model figures (not per rank).

    For MLA, ``num_key_value_heads`` is 1, ``head_dim`` is ``kv_lora_rank + qk_rope_head_dim``
    and ``v_head_dim`` 0 (vLLM stores one latent). ``model_dtype`` is vLLM's ``--dtype auto``
    for the config, the KV cache's ``auto`` dtype."""

    layer_indices: tuple[int, ...]
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    v_head_dim: int
    mla: bool
    kv_lora_rank: int | None
    qk_rope_head_dim: int | None
    model_dtype: str


@dataclass(frozen=True, slots=True)
class SsmState:
    """The recurrent state of one sequence on one tensor-parallel rank, as ``layout`` lays it
    out, and the model's attention side.

    ``groups`` holds one ``LayerStates`` per kind of recurrent layer, in layer order;
    ``ssm_layers`` and ``layer_indices`` are all recurrent layers and ``per_sequence_bytes`` the
    sum of the groups' bytes. ``attention`` is ``None`` for an attention-free model (and for a
    plain transformer whose config gives no ``num_attention_heads``).

    Compatibility (0.1): ``conv_shape``, ``ssm_shape``, ``conv_bytes`` and ``ssm_bytes`` are
    those of the one conv and the one state tensor where the model has exactly one kind of
    recurrent layer holding exactly those two (Mamba, Mamba-2, gated delta net, KDA); otherwise
    the shapes are ``()`` and the bytes 0. ``per_layer_bytes`` is one layer's bytes when every
    recurrent layer holds the same bytes (0 with no recurrent layer), else ``None``.
    ``conv_dtype`` / ``ssm_dtype`` and their rules are those two tensors', else the layout's conv
    and SSM rules for this config (each tensor's own are in ``groups``). ``source`` is the file
    the config came from."""

    family: str
    model_type: str
    layout: str
    tp_size: int
    speculative_tokens: int
    source: str | None
    groups: tuple[LayerStates, ...]
    attention: AttentionLayers | None
    ssm_layers: int
    layer_indices: tuple[int, ...]
    per_sequence_bytes: int
    conv_shape: tuple[int, ...]
    ssm_shape: tuple[int, ...]
    conv_dtype: str
    ssm_dtype: str
    conv_dtype_rule: str
    ssm_dtype_rule: str
    conv_bytes: int
    ssm_bytes: int
    per_layer_bytes: int | None

    def as_dict(self) -> dict[str, object]:
        """Every field, nested dataclasses as dicts and tuples as lists: ready for
        ``json.dumps``."""
        return {field.name: _plain(getattr(self, field.name)) for field in dataclasses.fields(self)}


def _plain(value: object) -> object:
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            field.name: _plain(getattr(value, field.name)) for field in dataclasses.fields(value)
        }
    return value


@dataclass(frozen=True, slots=True)
class Sizing:
    """What laying out a layer's state depends on besides its geometry: the layout, the TP size,
    the speculative tokens and the dtype rules."""

    layout: str
    tp: int
    spec: int
    dtypes: DtypeRules


def tensor(name: str, shape: tuple[int, ...], rule: Rule) -> StateTensor:
    """The tensor ``name`` of ``shape`` in ``rule``'s dtype, with its exact bytes."""
    dtype, why = rule
    return StateTensor(name, shape, dtype, why, math.prod(shape) * DTYPE_BYTES[dtype])


def conv_window(sizing: Sizing, channels: int, kernel: int, *, widened: bool) -> tuple[int, int]:
    """A conv state's shape in the layout's order: vLLM ``(K - 1 [+ spec], channels)`` (the
    default SD layout, mamba_utils.py:28-45; ``widened``: the kind takes ``num_spec``), SGLang
    ``(channels, K - 1)`` (never widened), metrale ``(K, channels)``."""
    if sizing.layout == "vllm":
        return (kernel - 1 + (sizing.spec if widened else 0), channels)
    if sizing.layout == "sglang":
        return (channels, kernel - 1)
    return (kernel, channels)
