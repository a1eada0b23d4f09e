"""The families with KDA layers: kimi_linear, glm5_next, alice_ai, and bailing_hybrid (KDA, or
lightning linear attention in its older releases).
"""

from __future__ import annotations

from typing import Final

from ...printable import show
from ...releases import VLLM
from ..attention import gqa, mla
from ..fields import Fields, positions
from ..kinds import Kda, LinearAttention
from .base import (
    LINEAR,
    Geometry,
    Parsed,
    disagree,
    layer_numbers,
    mla_by_default,
    one_kind,
    other_layers,
)

__all__ = ["read_alice_ai", "read_bailing_hybrid", "read_glm5_next", "read_kimi_linear"]


def read_kimi_linear(cfg: Fields, server: str) -> Parsed:
    """``kimi_linear`` (KDA; Kimi-K3 wraps it as its ``text_config``): layer ``i`` is KDA when
    ``i + 1`` is in ``linear_attn_config.kda_layers`` and attention otherwise (MLA where the
    config gives ``kv_lora_rank``); ``full_attn_layers`` must name exactly the others.
    ``linear_attn_config.{num_heads, head_dim, short_conv_kernel_size}``. vLLM
    vllm/models/kimi_k3/nvidia/model.py:1494-1523 and transformers_utils/configs/kimi_linear.py:
    157-161; SGLang configs/kimi_linear.py:157-182."""
    count = cfg.num_layers()
    linear = cfg.nested("linear_attn_config")
    layers = layer_numbers(linear, "kda_layers", count, base=1)
    full = layer_numbers(linear, "full_attn_layers", count, base=1)
    others = other_layers(count, layers)
    if full != others:
        index = min(set(full) ^ set(others))
        disagree(
            linear,
            "full_attn_layers",
            "kda_layers",
            index,
            "full attention" if index in full else "not listed",
            "KDA" if index in layers else "attention",
        )

    def geometry() -> Kda:
        return Kda(
            linear.int_("num_heads"),
            linear.int_("head_dim"),
            linear.int_("short_conv_kernel_size"),
            "linear_attn_config.num_heads",
        )

    attention = mla(cfg, others) if cfg.has("kv_lora_rank") else gqa(cfg, others)
    return one_kind(geometry, layers, attention)


def read_bailing_hybrid(cfg: Fields, server: str) -> Parsed:
    """``bailing_hybrid``: KDA layers (BailingMoeV3, Ling 3) where the config gives
    ``short_conv_kernel_size`` (SGLang's ``use_kda``; vLLM: the ``BailingMoeV3ForCausalLM``
    architecture), else lightning linear-attention layers (BailingMoeV2.5, Ling/Ring 2.5); MLA
    attention in the others. Layers by ``layer_group_size`` ``g``: SGLang makes layer ``i``
    linear when ``(i + 1) % g != 0`` (or, for a list, where its entry is 1); vLLM the same for
    lightning, and for KDA not in the tail past the last whole group. Heads
    ``num_attention_heads`` of ``head_dim`` (else ``hidden_size // num_attention_heads``).
    vLLM's KDA layer refuses a config whose ``no_kda_lora`` is not true (:686-687).
    vLLM models/bailing_moe_v3.py:131-157, :1477-1489, bailing_moe_linear.py:68-72, :768-795;
    SGLang configs/bailing_hybrid.py:80-236."""
    count = cfg.num_layers()
    architectures = cfg.fields.get("architectures")
    if server == "vllm" and isinstance(architectures, list) and architectures:
        kda = architectures[0] == "BailingMoeV3ForCausalLM"
    else:
        kda = cfg.has("short_conv_kernel_size")
    if server == "sglang" and isinstance(cfg.fields.get("layer_group_size"), list):
        kinds = cfg.entries("layer_group_size", count)
        layers = tuple(i for i, entry in enumerate(kinds) if entry == 1)
    else:
        group = cfg.int_("layer_group_size")
        layers = tuple(i for i in range(count) if (i + 1) % group)
        if server == "vllm" and kda:
            layers = tuple(i for i in layers if i < count // group * group)
    heads = cfg.int_("num_attention_heads")
    head_dim = cfg.opt_int("head_dim") or cfg.int_("hidden_size") // heads

    def geometry() -> Geometry:
        if kda:
            if server == "vllm" and not cfg.fields.get("no_kda_lora"):
                # Its KDA layer takes getattr(config, "no_kda_lora", False) as Python truth.
                given = cfg.fields.get("no_kda_lora")
                shown = f"is {show(given)}" if "no_kda_lora" in cfg.fields else "missing"
                raise cfg.fail(
                    "no_kda_lora",
                    f"{shown}; {VLLM}'s BailingMoeV3 KDA layer requires no_kda_lora true "
                    "(vllm/model_executor/models/bailing_moe_v3.py:686-687)",
                )
            kernel = cfg.int_("short_conv_kernel_size")
            return Kda(heads, head_dim, kernel, "num_attention_heads")
        return LinearAttention(heads, head_dim, "num_attention_heads")

    others = other_layers(count, layers)
    attention = mla(cfg, others) if cfg.has("kv_lora_rank") else gqa(cfg, others)
    return one_kind(geometry, layers, attention)


_GLM5_ATTENTION: Final = frozenset(
    {"full_attention", "indexed_attention", "attention", "deepseek_sparse_attention"}
)


def read_glm5_next(cfg: Fields, server: str) -> Parsed:
    """``glm5_next`` (GLM-5.3-Flash: KDA and MLA; a wrapper whose text config sits in
    ``text_config`` or, for a text-only checkpoint, at its top level). Layer ``i`` is KDA when
    ``layer_types[i]`` is ``linear_attention`` (``num_hidden_layers`` entries; others
    attention), or, with no list, when ``i % 4 != 3``; the others are MLA. vLLM reads
    transformers' Glm5NextTextConfig: the flat ``linear_num_heads``, ``linear_head_dim``,
    ``linear_conv_kernel_dim``, each overridden by ``linear_attn_config``'s ``num_heads``,
    ``head_dim``, ``short_conv_kernel_size`` where that gives it (transformers
    configuration_glm5_next.py:150-177; vLLM vllm/models/glm5next/common/model.py:141-147,
    :1101-1118, kda.py:189-222). SGLang's own Glm5NextTextConfig takes a given
    ``linear_attn_config`` whole (its ``kda_layers`` 0-based layer numbers, ``num_heads``,
    ``head_dim``, ``short_conv_kernel_size``), else builds it from the flat fields and the
    layers above (S:sglang/srt/configs/glm5_next.py:186-232, :256-279). Both servers read the
    geometry with no KDA layer too (their shape functions run for the model)."""
    count = cfg.num_layers()
    linear = cfg.nested("linear_attn_config") if cfg.has("linear_attn_config") else None
    if server == "sglang" and linear is not None:
        layers = layer_numbers(linear, "kda_layers", count, base=0)
        built = Kda(
            linear.int_("num_heads"),
            linear.int_("head_dim"),
            linear.int_("short_conv_kernel_size"),
            "linear_attn_config.num_heads",
        )
    else:
        if cfg.has("layer_types"):
            kinds = cfg.layer_kinds("layer_types", _GLM5_ATTENTION | {"linear_attention"}, count)
            layers = positions(kinds, LINEAR)
        else:
            layers = tuple(i for i in range(count) if i % 4 != 3)

        def folded(key: str, flat: str) -> tuple[int, str]:
            if linear is not None and key in linear.fields:
                return linear.int_(key), f"linear_attn_config.{key}"
            return cfg.int_(flat), flat

        heads, heads_field = folded("num_heads", "linear_num_heads")
        built = Kda(
            heads,
            folded("head_dim", "linear_head_dim")[0],
            folded("short_conv_kernel_size", "linear_conv_kernel_dim")[0],
            heads_field,
        )
    # Both servers serve it as MLA (V:vllm/models/glm5next/common/model.py:391-405,
    # S:sglang/srt/configs/model_config.py:1376-1377), with their config classes' ranks,
    # kv_lora_rank 512 and qk_rope_head_dim 0, where none is given (transformers
    # configuration_glm5_next.py:112-114, S:configs/glm5_next.py:118-120).
    return one_kind(lambda: built, layers, mla_by_default(cfg, other_layers(count, layers), rope=0))


def read_alice_ai(cfg: Fields, server: str) -> Parsed:
    """``alice_ai`` (vLLM only; KDA through Kimi's layer, Qwen3-Next attention): the
    ``linear_attention`` entries of ``layer_types`` (``num_hidden_layers`` of them, others
    ``full_attention``); ``linear_num_key_heads`` heads of ``linear_key_head_dim``, which the
    value ones must equal, kernel ``linear_conv_kernel_dim`` (read with no KDA layer too). vLLM
    refuses the config unless ``kda_allow_negative_eigenvalues`` is false,
    ``router_score_function`` ``sigmoid``, ``router_bias_correction`` true, and
    ``block_attn_res_block_size`` and ``num_experts`` positive. vLLM
    model_executor/models/alice_ai.py:106-137, :321-342, :491-495, :686-701,
    model_executor/models/config.py:29-50."""
    required: tuple[tuple[str, object, str], ...] = (
        ("kda_allow_negative_eigenvalues", False, "false"),
        ("router_score_function", "sigmoid", "'sigmoid'"),
        ("router_bias_correction", True, "true"),
    )
    for field, wanted, shown in required:
        given = cfg.fields.get(field)
        # vLLM compares the flags by identity (``is not False``) and the name by equality.
        if not (given is wanted if isinstance(wanted, bool) else given == wanted):
            where = f"is {show(given)}" if field in cfg.fields else "missing"
            raise cfg.fail(
                field,
                f"{where}; {VLLM} requires {shown} (vllm/model_executor/models/config.py:29-50)",
            )
    cfg.int_("block_attn_res_block_size")
    cfg.int_("num_experts")
    count = cfg.num_layers()
    kinds = cfg.layer_kinds("layer_types", frozenset({"linear_attention", "full_attention"}), count)
    layers = positions(kinds, LINEAR)
    built = Kda(
        cfg.int_("linear_num_key_heads"),
        cfg.int_("linear_key_head_dim"),
        cfg.int_("linear_conv_kernel_dim"),
        "linear_num_key_heads",
    )

    def geometry() -> Kda:
        # Kimi's layer takes one head count and dim (alice_ai.py:118-127).
        for key_field, value_field in (
            ("linear_num_key_heads", "linear_num_value_heads"),
            ("linear_key_head_dim", "linear_value_head_dim"),
        ):
            if cfg.int_(value_field) != cfg.int_(key_field):
                raise cfg.fail(
                    value_field,
                    f"is {show(cfg.int_(value_field))} but {key_field} is "
                    f"{show(cfg.int_(key_field))}; {VLLM}'s AliceAI KDA requires them equal",
                )
        return built

    return one_kind(geometry, layers, gqa(cfg, other_layers(count, layers)))
