"""The families whose recurrent layers are gated delta nets: qwen3_next, qwen3_5, qwen3_5_moe,
olmo_hybrid, minicpmv4_6, gigachat3_5, jet_nemotron.
"""

from __future__ import annotations

from typing import Final

from ...releases import SGLANG
from ..attention import gqa
from ..fields import Fields, positions
from ..kinds import GatedDeltaNet
from .base import (
    ATTENTION_LAYERS,
    LINEAR,
    SSM_LAYERS,
    Parsed,
    disagree,
    layer_numbers,
    mla_by_default,
    one_kind,
    other_layers,
)

__all__ = ["read_gated_delta_net", "read_gigachat3_5", "read_jet_nemotron"]


def read_gated_delta_net(cfg: Fields, server: str) -> Parsed:
    """``qwen3_next``, ``qwen3_5``, ``qwen3_5_moe``, ``olmo_hybrid`` (gated delta net): the
    ``linear_attention`` entries of ``layer_types`` (``num_hidden_layers`` of them), else ``i``
    with ``(i + 1) % full_attention_interval != 0``; the two, when both are given, must agree.
    SGLang reads the interval alone. ``linear_num_key_heads``, ``linear_num_value_heads``,
    ``linear_key_head_dim``, ``linear_value_head_dim``, ``linear_conv_kernel_dim``. vLLM
    models/qwen3_next.py:893-913, qwen3_5.py:388-418 and :609-639, olmo_hybrid.py:442-472 (the
    layers of ``config.layer_types``); SGLang configs/qwen3_next.py:259-313, inherited by
    configs/qwen3_5.py:15."""

    def geometry() -> GatedDeltaNet:
        return GatedDeltaNet(
            cfg.int_("linear_num_key_heads"),
            cfg.int_("linear_num_value_heads"),
            cfg.int_("linear_key_head_dim"),
            cfg.int_("linear_value_head_dim"),
            cfg.int_("linear_conv_kernel_dim"),
        )

    count = cfg.num_layers()
    listed = None
    if cfg.has("layer_types"):
        listed = cfg.layer_list("layer_types", SSM_LAYERS, ATTENTION_LAYERS, count)
    if cfg.has("full_attention_interval"):
        interval = cfg.int_("full_attention_interval")
        derived = tuple(i for i in range(count) if (i + 1) % interval)
        if listed is not None and listed != derived:
            index = min(set(listed) ^ set(derived))
            disagree(
                cfg,
                "layer_types",
                "full_attention_interval",
                index,
                cfg.fields["layer_types"][index],
                "linear_attention" if index in derived else "full_attention",
            )
        listed = derived
    elif server == "sglang" or listed is None:
        why = (
            f"{SGLANG} counts linear layers by it alone (configs/qwen3_next.py:259-268)"
            if server == "sglang"
            else "needed when there is no layer_types"
        )
        raise cfg.fail("full_attention_interval", f"missing; {why}")
    return one_kind(geometry, listed, gqa(cfg, other_layers(count, listed)))


def read_gigachat3_5(cfg: Fields, server: str) -> Parsed:
    """``gigachat3_5`` (SGLang only; gated delta net and MLA): the ``linear_attention``
    entries of ``layer_types`` (``num_hidden_layers`` of them, others ``attention`` or
    ``full_attention``), else every layer not in ``full_attention_layers`` (0-based), else every
    layer; ``linear_num_key_heads``, ``linear_num_value_heads``, ``linear_key_head_dim``,
    ``linear_value_head_dim``, ``linear_conv_kernel_dim``, read with no linear layer too, into
    the Qwen3-Next shape; the other layers MLA, ``kv_lora_rank`` (default 512) and
    ``qk_rope_head_dim`` (default 64). S:sglang/srt/configs/gigachat35.py:19-23, :51-53,
    :157-186, :210-231."""
    count = cfg.num_layers()
    if cfg.has("layer_types"):
        vocabulary = frozenset({"linear_attention", "attention", "full_attention"})
        layers = positions(cfg.layer_kinds("layer_types", vocabulary, count), LINEAR)
    elif cfg.has("full_attention_layers"):
        layers = other_layers(count, layer_numbers(cfg, "full_attention_layers", count, base=0))
    else:
        layers = tuple(range(count))
    built = GatedDeltaNet(
        cfg.int_("linear_num_key_heads"),
        cfg.int_("linear_num_value_heads"),
        cfg.int_("linear_key_head_dim"),
        cfg.int_("linear_value_head_dim"),
        cfg.int_("linear_conv_kernel_dim"),
    )
    # SGLang serves GigaChat35ForCausalLM as MLA (S:sglang/srt/configs/model_config.py:
    # 1393-1400), with GigaChat35Config's ranks where none is given (gigachat35.py:51-53).
    attention = mla_by_default(cfg, other_layers(count, layers), rope=64)
    return one_kind(lambda: built, layers, attention)


_JET_LAYERS: Final = frozenset({"jet"})
_JET_ATTENTION: Final = frozenset({"attn", "swa"})


def read_jet_nemotron(cfg: Fields, server: str) -> Parsed:
    """``jet_nemotron`` (SGLang only; ``jet_vlm`` wraps it as its ``text_config``): the ``jet``
    entries of ``layer_types``, ``num_hidden_layers`` of them (others ``attn``, ``swa``);
    ``efficient_attention_config.jet.{num_heads, head_dim, expand_v, conv_size}``, a gated delta
    net of ``num_heads`` key and value heads, key dim ``head_dim`` and value dim ``int(head_dim *
    expand_v)``. SGLang configs/jet_nemotron.py:41-80, jet_vlm.py:10-52."""
    count = cfg.num_layers()
    kinds = cfg.layer_kinds("layer_types", _JET_LAYERS | _JET_ATTENTION, count)

    def geometry() -> GatedDeltaNet:
        jet = cfg.nested("efficient_attention_config", "jet")
        heads, head_dim = jet.int_("num_heads"), jet.int_("head_dim")
        field = "efficient_attention_config.jet.num_heads"
        v_dim = int(head_dim * jet.number("expand_v"))
        return GatedDeltaNet(heads, heads, head_dim, v_dim, jet.int_("conv_size"), field, field)

    layers = positions(kinds, _JET_LAYERS)
    return one_kind(geometry, layers, gqa(cfg, positions(kinds, _JET_ATTENTION)))
