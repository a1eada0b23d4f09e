"""The attention (KV-cache) side of a hybrid model, as vLLM reads it, and the attention side of
a tensor-parallel split.

Heads, KV heads and head size follow vLLM's ``ModelArchConfigConvertorBase``
(vllm/transformers_utils/model_arch_config_convertor.py:83-157): ``num_key_value_heads``
defaults to ``num_attention_heads``, and the head size is ``head_dim`` when positive, else
``hidden_size // num_attention_heads``. MLA (``get_head_size``, :91-98) keeps one latent of
``kv_lora_rank + qk_rope_head_dim`` per token.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..printable import show
from .dtypes import vllm_model_dtype
from .errors import ModelConfigError, TensorParallelSplitError
from .fields import Fields
from .state import AttentionLayers, DsaIndexer

__all__ = ["check_split", "dsa_indexer", "gqa", "mla"]


def gqa(
    cfg: Fields,
    layers: tuple[int, ...],
    *,
    head_dim_field: str = "head_dim",
) -> AttentionLayers | None:
    """Multi-head or grouped-query attention at ``layers``; ``None`` when there is none."""
    if not layers:
        return None
    heads = cfg.int_("num_attention_heads")
    kv_heads = cfg.opt_int("num_key_value_heads")
    head_dim = cfg.opt_int(head_dim_field, minimum=0) or _head_size(cfg, heads, head_dim_field)
    return AttentionLayers(
        layer_indices=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads if kv_heads is None else kv_heads,
        head_dim=head_dim,
        v_head_dim=head_dim,
        mla=False,
        kv_lora_rank=None,
        qk_rope_head_dim=None,
        model_dtype=vllm_model_dtype(cfg)[0],
    )


def _head_size(cfg: Fields, heads: int, head_dim_field: str) -> int:
    """``hidden_size // num_attention_heads``, vLLM's head size without a ``head_dim``; refused
    when it is 0 (more heads than the hidden size has), which no attention page holds."""
    hidden = cfg.int_("hidden_size")
    if hidden < heads:
        raise cfg.fail(
            "hidden_size",
            f"{show(hidden)} // num_attention_heads {show(heads)} is a head size of 0; "
            f"give {head_dim_field}",
        )
    return hidden // heads


def mla(cfg: Fields, layers: tuple[int, ...]) -> AttentionLayers | None:
    """Multi-head latent attention at ``layers``: one latent of ``kv_lora_rank +
    qk_rope_head_dim`` per token and layer; ``None`` when there is none."""
    if not layers:
        return None
    # GLM-5.3-Flash's MLA has no RoPE part (transformers Glm5NextTextConfig: qk_rope_head_dim 0).
    rank, rope = cfg.int_("kv_lora_rank"), cfg.int_("qk_rope_head_dim", minimum=0)
    return AttentionLayers(
        layer_indices=layers,
        num_attention_heads=cfg.int_("num_attention_heads"),
        num_key_value_heads=1,
        head_dim=rank + rope,
        v_head_dim=0,
        mla=True,
        kv_lora_rank=rank,
        qk_rope_head_dim=rope,
        model_dtype=vllm_model_dtype(cfg)[0],
    )


def check_split(cfg: Fields, attention: AttentionLayers, tp: int) -> None:
    """Refuse a ``tp`` that vLLM refuses on the attention side: ``num_attention_heads % tp``
    (``ModelConfig.verify_with_parallel_config``, vllm/config/model.py:1557-1564), and KV heads
    that neither divide ``tp`` nor are divided by it (``QKVParallelLinear``,
    vllm/model_executor/layers/linear.py:1066-1070); SGLang's models assert the same
    (sglang/srt/models/falcon_h1.py:119-131, granitemoehybrid.py:196-201). MLA's one latent is
    replicated."""
    if attention.num_attention_heads % tp:
        raise cfg.fail(
            "num_attention_heads",
            f"tp_size {show(tp)} does not divide {show(attention.num_attention_heads)}; the "
            "servers shard attention heads evenly (vllm/config/model.py:1557-1564)",
            TensorParallelSplitError,
        )
    kv = attention.num_key_value_heads
    if not attention.mla and kv % tp and tp % kv:
        raise cfg.fail(
            "num_key_value_heads",
            f"tp_size {show(tp)} neither divides {show(kv)} KV heads nor is a multiple of them; "
            "the servers shard or replicate them evenly",
            TensorParallelSplitError,
        )


def dsa_indexer(
    root: Mapping[str, Any], text: Mapping[str, Any], attention: AttentionLayers | None
) -> DsaIndexer:
    """The DeepSeek-sparse-attention indexer of a config with an ``index_topk``, as SGLang's
    config object reads it (a field of the whole config, else of its text config):
    ``index_head_dim``, ``index_kpool`` (default 1), and the attention layers that compute their
    own top-k (``dsa_layer_skips_topk``, sglang/srt/configs/model_config.py:488-522)."""
    head_dim = _positive(root, text, "index_head_dim")
    kpool = _positive(root, text, "index_kpool", default=1)
    layers = attention.layer_indices if attention is not None else ()
    keyed = tuple(layer for layer in layers if not _skips_topk(root, text, layer))
    return DsaIndexer(head_dim, kpool, keyed)


def _field(root: Mapping[str, Any], text: Mapping[str, Any], name: str) -> Any:
    """``name`` as SGLang's config object answers it: the whole config's, else its text
    config's (SGLang's wrapper configs carry their text fields)."""
    value = root.get(name)
    return text.get(name) if value is None else value


def _positive(
    root: Mapping[str, Any], text: Mapping[str, Any], name: str, default: int | None = None
) -> int:
    value = _field(root, text, name)
    if value is None and default is not None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ModelConfigError(
            f"field {name!a}: {show(value)} is not a positive integer", field=name
        )
    return value


def _skips_topk(root: Mapping[str, Any], text: Mapping[str, Any], layer: int) -> bool:
    """``dsa_layer_skips_topk``: whether DSA layer ``layer`` reuses the previous layer's top-k
    indices, and so keeps no indexer keys. Its counts are positive integers, as SGLang asserts
    (configs/model_config.py:488-522, 0.5.23): anything else is refused."""
    kinds = _field(root, text, "indexer_types")
    if isinstance(kinds, list):
        return layer < len(kinds) and kinds[layer] == "shared"
    factor = _positive(root, text, "cli_factor", default=1)
    if factor > 1:
        return layer % factor != 0
    pattern = _field(root, text, "index_topk_pattern")
    if isinstance(pattern, list | str):
        return layer < len(pattern) and pattern[layer] == "S"
    frequency = _positive(root, text, "index_topk_freq", default=1)
    if _field(root, text, "index_skip_topk_offset") is not None:
        offset = _positive(root, text, "index_skip_topk_offset")
        return max(layer - offset + 1, 0) % frequency != 0
    return max(layer - 1, 0) % frequency != 0
