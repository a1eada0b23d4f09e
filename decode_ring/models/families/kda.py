"""The families with KDA layers: kimi_linear, glm5_next, alice_ai, and bailing_hybrid (KDA, or
lightning linear attention in its older releases).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ...printable import show
from ...releases import VLLM
from ..attention import gqa, mla
from ..classes import Built
from ..fields import Fields, positions
from ..kinds import Kda, LinearAttention
from .base import (
    LINEAR,
    Geometry,
    Parsed,
    count,
    disagree,
    heads_default,
    layer_numbers,
    mla_by_default,
    one_kind,
    other_layers,
)

__all__ = [
    "read_alice_ai",
    "read_bailing_hybrid",
    "read_glm5_next",
    "read_kimi_linear",
    "rules_bailing_hybrid",
    "rules_glm5_next",
    "rules_kimi_linear",
]


def read_kimi_linear(cfg: Fields, server: str) -> Parsed:
    """``kimi_linear`` (KDA; Kimi-K3 wraps it as its ``text_config``): layer ``i`` is KDA when
    ``i + 1`` is in ``linear_attn_config.kda_layers`` and MLA attention otherwise;
    ``full_attn_layers`` must name exactly the others.
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

    if server == "vllm" and others:
        _kimi_mla(cfg)
    # Both servers build Kimi's attention layers as MLA whatever the config gives (vLLM above;
    # S:sglang/srt/models/kimi_linear.py:567-581, configs/model_config.py:1463-1474), so a config
    # without kv_lora_rank is refused, not read as another attention.
    return one_kind(geometry, layers, mla(cfg, others))


def _kimi_mla(cfg: Fields) -> None:
    """vLLM builds every attention layer of Kimi's model as NoPE MLA and asserts its fields
    (vllm/models/kimi_k3/nvidia/model.py:735-745)."""
    for name in ("qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "kv_lora_rank"):
        if cfg.fields.get(name) is None:
            raise cfg.fail(
                name,
                f"missing; {VLLM} builds Kimi's attention layers as MLA and asserts it "
                "(vllm/models/kimi_k3/nvidia/model.py:735-745)",
            )
    if not cfg.fields.get("mla_use_nope"):
        given = cfg.fields.get("mla_use_nope")
        raise cfg.fail(
            "mla_use_nope",
            f"is {show(given)}; {VLLM} asserts Kimi's MLA is NoPE-only "
            "(vllm/models/kimi_k3/nvidia/model.py:745)",
        )


def rules_kimi_linear(built: Built) -> None:
    """Kimi's own classes, vLLM's and SGLang's alike (vllm/transformers_utils/configs/
    kimi_linear.py:11-130, S:sglang/srt/configs/kimi_linear.py:16-130): ``head_dim`` ``null``
    is ``hidden_size // num_attention_heads``, ``num_key_value_heads`` ``null`` the heads; a
    ``linear_attn_config`` must give ``kda_layers`` and ``full_attn_layers``."""
    values = built.values
    if built.reading.cls is None:
        return
    heads, hidden = count(values, "num_attention_heads"), count(values, "hidden_size")
    if values.get("head_dim") is None and heads and hidden is not None:
        values["head_dim"] = hidden // heads
    if values.get("num_key_value_heads") is None:
        values["num_key_value_heads"] = values.get("num_attention_heads")


def rules_bailing_hybrid(built: Built) -> None:
    """BailingHybrid's classes. transformers 5.20's (vLLM's; BailingHybridConfig.__post_init__,
    configuration_bailing_hybrid.py:138-160) keeps the given ``head_dim`` as
    ``linear_head_dim`` and sets ``head_dim`` to ``qk_rope_head_dim``, which vLLM's
    BailingMoeV3 sizes its KDA heads by (vllm/model_executor/models/bailing_moe_v3.py:152,
    :675). SGLang's (S:sglang/srt/configs/bailing_hybrid.py:52-129): ``head_dim`` (default 128)
    ``or hidden_size // num_attention_heads``."""
    values = built.values
    if built.reading.cls is None:
        return
    heads, hidden = count(values, "num_attention_heads"), count(values, "hidden_size")
    if built.reading.server == "sglang":
        if not values.get("head_dim") and heads and hidden is not None:
            values["head_dim"] = hidden // heads
        return
    if "linear_head_dim" not in built.given:
        values["linear_head_dim"] = values.get("head_dim")
    values["head_dim"] = values.get("qk_rope_head_dim")
    heads_default(values)
    layers, group = count(values, "num_hidden_layers"), count(values, "layer_group_size")
    if values.get("layer_types") is None and layers is not None and group:
        values["layer_types"] = [
            "full_attention" if (i + 1) % group == 0 else "linear_attention" for i in range(layers)
        ]


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
    architectures = cfg.root.get("architectures")
    if server == "vllm" and isinstance(architectures, list) and architectures:
        kda = architectures[0] == "BailingMoeV3ForCausalLM"
    elif server == "vllm":
        # No architecture named (vLLM would resolve none it serves): as SGLang's use_kda, the
        # file's own kernel (transformers' class defaults one, 4).
        kda = cfg.given.get("short_conv_kernel_size") is not None
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

    # Both servers build the other layers as MLA (V:bailing_moe_linear.py:77-102, :371,
    # bailing_moe_v3.py:458-477, :1257; S:sglang/srt/configs/model_config.py:1476-1503, whatever
    # kv_lora_rank is): a null kv_lora_rank is refused, not read as another attention.
    return one_kind(geometry, layers, mla(cfg, other_layers(count, layers)))


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


# The top-level keys SGLang's Glm5NextConfig folds into a text config that lacks them
# (S:sglang/srt/configs/glm5_next.py:8-74, :301-311): those the package reads.
_GLM5_TOP_LEVEL: Final = (
    "hidden_size",
    "head_dim",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "max_position_embeddings",
    "kv_lora_rank",
    "qk_rope_head_dim",
    "linear_attn_config",
    "linear_head_dim",
    "linear_num_heads",
    "linear_conv_kernel_dim",
    "linear_lower_bound",
    "gate_lower_bound",
    "layer_types",
)


# transformers' Glm5NextTextConfig folds these keys of a linear_attn_config into the flat
# fields (configuration_glm5_next.py:188-194).
_GLM5_FOLDED: Final = (
    ("head_dim", "linear_head_dim"),
    ("num_heads", "linear_num_heads"),
    ("short_conv_kernel_size", "linear_conv_kernel_dim"),
    ("gate_lower_bound", "linear_lower_bound"),
)


def rules_glm5_next(built: Built) -> None:
    """GLM-5.3-Flash's text classes. transformers' (vLLM's; Glm5NextTextConfig.__post_init__,
    configuration_glm5_next.py:155-197): no KV heads are the heads; no ``layer_types`` is
    ``linear_attention`` where ``i % 4 != 3`` and ``indexed_attention`` else, and a given
    ``full_attention`` is ``indexed_attention``; a ``linear_attn_config`` is folded into the flat
    fields (``read_glm5_next``), and a ``safe_gate`` (default true) without a lower bound gets
    -5.0 (:189-197). SGLang's (S:sglang/srt/configs/glm5_next.py:82-311): the
    wrapper's top-level keys fill a text config that lacks them; with no
    ``linear_attn_config`` one is built from the ``linear_attention`` entries of the file's
    ``layer_types`` (else ``i % 4 != 3``) and the flat fields."""
    values, given = built.values, dict(built.given)
    root = built.cfg.root
    if built.reading.server == "sglang" and root is not built.given:
        for key in _GLM5_TOP_LEVEL:
            if key in root and key not in built.given:
                values[key] = given[key] = root[key]
    layers = count(values, "num_hidden_layers")
    if layers is None or built.reading.cls is None:
        return
    if built.reading.server != "sglang":
        heads_default(values)
        values["head_dim"] = values.get("qk_rope_head_dim")
        folded = values.get("linear_attn_config")
        if isinstance(folded, Mapping):
            for key, flat in _GLM5_FOLDED:
                values[flat] = folded.get(key, values.get(flat))
            if folded.get("safe_gate", True) and values.get("linear_lower_bound") is None:
                values["linear_lower_bound"] = -5.0
        kinds = values.get("layer_types")
        if kinds is None:
            kinds = ["linear_attention" if i % 4 != 3 else "full_attention" for i in range(layers)]
        if isinstance(kinds, list):
            values["layer_types"] = [
                "indexed_attention" if kind == "full_attention" else kind for kind in kinds
            ]
        return
    if values.get("linear_attn_config") is not None:
        return
    kinds = given.get("layer_types")
    if isinstance(kinds, list):
        kda = [i for i, kind in enumerate(kinds) if kind == "linear_attention"]
    else:
        kda = [i for i in range(layers) if i % 4 != 3]
    # A null gate_lower_bound falls back too (S:sglang/srt/configs/glm5_next.py:195-197).
    gate = given.get("gate_lower_bound")
    values["linear_attn_config"] = {
        "full_attn_layers": [i for i in range(layers) if i not in set(kda)],
        "head_dim": values.get("linear_head_dim"),
        "kda_layers": kda,
        "num_heads": values.get("linear_num_heads"),
        "short_conv_kernel_size": values.get("linear_conv_kernel_dim"),
        "gate_lower_bound": given.get("linear_lower_bound") if gate is None else gate,
    }


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
