"""The attention (KV-cache) side of a hybrid model, as vLLM 0.33.0 reads it.

A stand-in for ``SsmState.attention`` of the state-model contract (issue 17), for the families the
models module reads today; it goes when the models package carries the attention side itself.

vLLM reads the head size as ``head_dim`` when positive, else ``hidden_size //
num_attention_heads`` (``get_head_size``, vllm/transformers_utils/model_arch_config_convertor.py:
91-118) and the KV heads per rank as ``max(1, num_key_value_heads // tp)``
(``ModelConfig.get_num_kv_heads``, vllm/config/model.py:1663-1683). Its attention layer checks
``num_attention_heads % tp == 0`` and ``num_key_value_heads % tp == 0 or tp %
num_key_value_heads == 0`` (``QKVParallelLinear``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..models import ModelConfigError, SsmState, TensorParallelSplitError

__all__ = ["AttentionLayers", "attention_layers"]


@dataclass(frozen=True, slots=True)
class AttentionLayers:
    """The attention side, whole-model figures (the contract's ``AttentionLayers``)."""

    layer_indices: tuple[int, ...]
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    v_head_dim: int
    mla: bool
    kv_lora_rank: int | None
    qk_rope_head_dim: int | None
    model_dtype: str


def _fields(root: Mapping[str, Any], family: str) -> Mapping[str, Any]:
    text = root.get("text_config")
    if root.get("model_type") != family and isinstance(text, Mapping):
        return text
    return root


def _int(fields: Mapping[str, Any], family: str, name: str) -> int:
    value = fields.get(name)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ModelConfigError(
            f"{family} config: field {name!a}: must be an integer of at least 1 (vLLM's "
            "attention layers read it)",
            family=family,
            field=name,
        )
    return value


def _layers(fields: Mapping[str, Any], state: SsmState, count: int) -> tuple[int, ...]:
    """Which layers keep a KV cache, as each family's vLLM model builds them."""
    family = state.family
    if family in ("mamba", "mamba2"):
        return ()
    if family == "falcon_h1":
        # Attention and the Mamba-2 mixer side by side in every layer (falcon_h1.py).
        return tuple(range(count))
    if family == "jamba":
        period = _int(fields, family, "attn_layer_period")
        offset = fields.get("attn_layer_offset")
        return tuple(i for i in range(count) if i % period == offset)
    listed = fields.get("layers_block_type") or fields.get("layer_types")
    if isinstance(listed, list) and len(listed) == count:
        names = {"attention", "full_attention", "*"}
        return tuple(i for i, kind in enumerate(listed) if kind in names)
    pattern = fields.get("hybrid_override_pattern")
    if isinstance(pattern, str):
        return tuple(i for i, mark in enumerate(pattern) if mark == "*")
    interval = _int(fields, family, "full_attention_interval")
    return tuple(i for i in range(count) if (i + 1) % interval == 0)


def attention_layers(
    root: Mapping[str, Any], state: SsmState, model_dtype: str
) -> AttentionLayers | None:
    """The attention side of the model ``root`` describes (``None``: attention-free); raises
    ``TensorParallelSplitError`` for a ``state.tp_size`` vLLM's attention cannot split."""
    if state.family == "zamba2":
        raise ModelConfigError(
            "zamba2: vLLM sizes its shared attention blocks with attention_head_dim while its "
            "block alignment reads get_head_size(); not modelled",
            family="zamba2",
            field="model_type",
        )
    fields = _fields(root, state.family)
    count = fields.get("num_hidden_layers")
    layers = _layers(fields, state, count if isinstance(count, int) else 0)
    if not layers:
        return None
    heads = _int(fields, state.family, "num_attention_heads")
    kv_heads = fields.get("num_key_value_heads") or heads
    if not isinstance(kv_heads, int) or isinstance(kv_heads, bool) or kv_heads < 1:
        kv_heads = _int(fields, state.family, "num_key_value_heads")
    head_dim = fields.get("head_dim")
    if not isinstance(head_dim, int) or isinstance(head_dim, bool) or head_dim <= 0:
        head_dim = _int(fields, state.family, "hidden_size") // heads
    tp = state.tp_size
    for name, value, splits in (
        ("num_attention_heads", heads, heads % tp == 0),
        ("num_key_value_heads", kv_heads, kv_heads % tp == 0 or tp % kv_heads == 0),
    ):
        if not splits:
            raise TensorParallelSplitError(
                f"{state.family} config: field {name!a}: tp_size {tp} does not split "
                f"{value} heads; vLLM's attention layers shard them evenly",
                family=state.family,
                field=name,
            )
    return AttentionLayers(
        layer_indices=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        head_dim=head_dim,
        v_head_dim=head_dim,
        mla=False,
        kv_lora_rank=None,
        qk_rope_head_dim=None,
        model_dtype=model_dtype,
    )
