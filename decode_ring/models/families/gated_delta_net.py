"""The families whose recurrent layers are gated delta nets: qwen3_next, qwen3_5, qwen3_5_moe,
interns2_mobius, olmo_hybrid, minicpmv4_6, gigachat3_5, jet_nemotron; and qwen4_exp, which the
package does not model yet.
"""

from __future__ import annotations

from typing import Final

from ...printable import show
from ...releases import SGLANG, VLLM
from ..attention import gqa
from ..classes import Built
from ..errors import NotModelledError
from ..fields import Fields, positions
from ..kinds import GatedDeltaNet
from .base import (
    ATTENTION_LAYERS,
    LINEAR,
    SSM_LAYERS,
    Parsed,
    count,
    heads_default,
    layer_numbers,
    mla_by_default,
    one_kind,
    other_layers,
)

# vLLM's Qwen gated delta net's output gates (qwen_gdn_linear_attn.py:659-663).
_GATES: Final = ("silu", "swish", "sigmoid")

__all__ = [
    "read_gated_delta_net",
    "read_gigachat3_5",
    "read_jet_nemotron",
    "read_olmo_hybrid",
    "read_qwen4_exp",
    "read_qwen_gated_delta_net",
    "rules_gated_delta_net",
    "rules_interns2_mobius",
    "rules_olmo_hybrid",
]


def read_gated_delta_net(cfg: Fields, server: str) -> Parsed:
    """``qwen3_next``, ``qwen3_5``, ``qwen3_5_moe``, ``interns2_mobius``, ``minicpmv4_6``
    (gated delta net): vLLM's models take the ``linear_attention`` entries of ``layer_types``
    (``num_hidden_layers`` of them), which transformers' class derives from
    ``full_attention_interval`` where the file gives none (``rules_gated_delta_net``); SGLang's
    class counts linear layers by the interval alone, ``i`` with ``(i + 1) % interval != 0``.
    ``linear_num_key_heads``, ``linear_num_value_heads``, ``linear_key_head_dim``,
    ``linear_value_head_dim``, ``linear_conv_kernel_dim``. vLLM models/qwen3_next.py:893-913,
    qwen3_5.py:388-418 and :609-639, olmo_hybrid.py:442-472; SGLang configs/qwen3_next.py:
    259-313, inherited by configs/qwen3_5.py:15."""

    def geometry() -> GatedDeltaNet:
        return GatedDeltaNet(
            cfg.int_("linear_num_key_heads"),
            cfg.int_("linear_num_value_heads"),
            cfg.int_("linear_key_head_dim"),
            cfg.int_("linear_value_head_dim"),
            cfg.int_("linear_conv_kernel_dim"),
        )

    count = cfg.num_layers()
    if server == "sglang" or not cfg.has("layer_types"):
        if not cfg.has("full_attention_interval"):
            why = (
                f"{SGLANG} counts linear layers by it alone (configs/qwen3_next.py:259-268)"
                if server == "sglang"
                else "needed when there is no layer_types"
            )
            raise cfg.fail("full_attention_interval", f"missing; {why}")
        interval = cfg.int_("full_attention_interval")
        listed = tuple(i for i in range(count) if (i + 1) % interval)
    else:
        listed = cfg.layer_list("layer_types", SSM_LAYERS, ATTENTION_LAYERS, count)
    return one_kind(geometry, listed, gqa(cfg, other_layers(count, listed)))


def read_qwen_gated_delta_net(cfg: Fields, server: str) -> Parsed:
    """``read_gated_delta_net`` for the families whose vLLM layer is
    ``QwenGatedDeltaNetAttention`` (all but OLMo-hybrid), which asserts its output gate, silu
    where the config gives none."""
    parsed = read_gated_delta_net(cfg, server)
    gate = cfg.fields.get("output_gate_type", "silu")
    if server == "vllm" and any(layers for _, layers in parsed.groups) and gate not in _GATES:
        raise cfg.fail(
            "output_gate_type",
            f"is {show(gate)}; {VLLM}'s QwenGatedDeltaNetAttention asserts silu, swish or sigmoid "
            "(vllm/model_executor/layers/mamba/gdn/qwen_gdn_linear_attn.py:659-663)",
        )
    return parsed


def rules_gated_delta_net(built: Built) -> None:
    """The Qwen gated-delta-net classes. transformers' (Qwen3NextConfig, Qwen3_5TextConfig,
    Qwen3_5MoeTextConfig, configuration_qwen3_next.py:127-137, configuration_qwen3_5.py:110-119):
    with no ``layer_types``, ``full_attention_interval`` (default 4) is popped and builds it.
    SGLang's (configs/qwen3_next.py:183-221, and its subclasses in qwen3_5.py,
    interns2_mobius.py): ``layer_types`` is taken and dropped."""
    values = built.values
    if built.reading.cls is None:
        return
    if built.reading.server == "sglang":
        values.pop("layer_types", None)
        return
    layers = count(values, "num_hidden_layers")
    if values.get("layer_types") is None and layers is not None:
        interval = values.pop("full_attention_interval", 4)
        if not isinstance(interval, int) or isinstance(interval, bool) or interval < 1:
            raise built.fail(
                "full_attention_interval",
                f"{show(interval)} is no layer interval; the class builds layer_types from it",
            )
        values["layer_types"] = [
            "linear_attention" if (i + 1) % interval else "full_attention" for i in range(layers)
        ]


def rules_interns2_mobius(built: Built) -> None:
    """InternS2-Mobius's text class: the Qwen classes' rules, but SGLang's keeps a given
    ``layer_types`` verbatim (S:sglang/srt/configs/interns2_mobius.py:17-31), which its layers
    still do not read (the interval does, ``read_gated_delta_net``)."""
    kinds = built.given.get("layer_types")
    rules_gated_delta_net(built)
    if built.reading.server == "sglang" and kinds is not None:
        built.values["layer_types"] = kinds


def read_olmo_hybrid(cfg: Fields, server: str) -> Parsed:
    """``olmo_hybrid`` (vLLM only): as ``read_gated_delta_net``, its layers from
    ``layer_types``; vLLM's layer asserts ``linear_use_gate`` (default true,
    vllm/model_executor/layers/mamba/gdn/olmo_gdn_linear_attn.py:80-82)."""
    parsed = read_gated_delta_net(cfg, server)
    if any(layers for _, layers in parsed.groups) and cfg.fields.get("linear_use_gate", True) in (
        False,
        None,
        0,
    ):
        raise cfg.fail(
            "linear_use_gate",
            f"is {show(cfg.fields['linear_use_gate'])}; {VLLM}'s OlmoHybridGatedDeltaNet requires "
            "linear_use_gate true (vllm/model_executor/layers/mamba/gdn/"
            "olmo_gdn_linear_attn.py:80-82)",
        )
    return parsed


def rules_olmo_hybrid(built: Built) -> None:
    """transformers' OlmoHybridConfig (configuration_olmo_hybrid.py:121-151): no ``layer_types``
    makes every fourth layer (``i % 4 == 3``) full attention, the last one at least; the linear
    heads default to ``num_attention_heads``, the key dim to ``int(0.75 * hidden_size /
    key heads)``, the value dim to twice it; it refuses a list with no linear or no attention
    layer."""
    values = built.values
    if built.reading.cls is None:
        return
    layers = count(values, "num_hidden_layers")
    if values.get("layer_types") is None and layers:
        kinds = ["full_attention" if i % 4 == 3 else "linear_attention" for i in range(layers)]
        kinds[-1] = kinds[-1] if "full_attention" in kinds else "full_attention"
        values["layer_types"] = kinds
    heads, hidden = count(values, "num_attention_heads"), count(values, "hidden_size")
    for name in ("linear_num_key_heads", "linear_num_value_heads"):
        if values.get(name) is None:
            values[name] = heads
    key_heads = count(values, "linear_num_key_heads")
    if values.get("linear_key_head_dim") is None and key_heads and hidden is not None:
        values["linear_key_head_dim"] = int(0.75 * hidden / key_heads)
    key_dim = count(values, "linear_key_head_dim")
    if values.get("linear_value_head_dim") is None and key_dim is not None:
        values["linear_value_head_dim"] = 2 * key_dim
    heads_default(values)
    given: object = values.get("layer_types")
    linear = isinstance(given, list) and "linear_attention" in given
    if isinstance(given, list) and given and (not linear or "full_attention" not in given):
        raise built.fail(
            "layer_types", "needs at least one linear_attention and one attention layer"
        )


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


def read_qwen4_exp(cfg: Fields, server: str) -> Parsed:
    """``qwen4_exp`` (Qwen4-Exp): gated delta nets, indexed attention and per-layer-embedding
    short convolutions, which vLLM keeps as two ``MambaSpec`` s of different pages in one
    model (``get_mamba_specs_from_config``, vllm/models/qwen4_exp/nvidia/model.py:880-900;
    vllm/platforms/interface.py:1049-1055). The package holds one state spec per kind of layer
    and no per-layer-embedding convolution: refused as not modelled."""
    raise cfg.fail(
        "model_type",
        "Qwen4-Exp holds several KV-cache specs per model (its gated delta nets and its "
        "per-layer-embedding short convolutions, vllm/models/qwen4_exp/nvidia/model.py:880-900), "
        "which this package does not model yet",
        NotModelledError,
    )
