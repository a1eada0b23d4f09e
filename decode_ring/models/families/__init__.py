"""The registry of families: for each ``model_type``, how its fields give the geometry of each
kind of recurrent layer, which layers those are, its attention side, which servers serve it at
which version, its dtype hooks, and what the servers do with it (``Family``). A new family is
one reader, in the module of the kind of layer it holds, and one ``Family`` entry here.

Citations are paths inside the ``vllm-0.33.0`` and ``sglang-0.5.23`` wheels.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from ...releases import SGLANG, VLLM, Release
from ..classes import Rules, no_rules
from ..dtypes import NO_HOOKS, DtypeHooks
from .base import Geometry, Parsed, Reader
from .gated_delta_net import (
    read_gigachat3_5,
    read_jet_nemotron,
    read_olmo_hybrid,
    read_qwen4_exp,
    read_qwen_gated_delta_net,
    rules_gated_delta_net,
    rules_interns2_mobius,
    rules_olmo_hybrid,
)
from .kda import (
    read_alice_ai,
    read_bailing_hybrid,
    read_glm5_next,
    read_kimi_linear,
    rules_bailing_hybrid,
    rules_glm5_next,
    rules_kimi_linear,
)
from .linear_attention import read_minicpm_sala, rules_minicpm_sala
from .mamba import (
    read_falcon_h1,
    read_granitemoehybrid,
    read_jamba,
    read_mamba,
    read_mamba2,
    read_nemotron_h,
    read_zamba2,
    rules_falcon_h1,
    rules_granitemoehybrid,
    rules_jamba,
    rules_mamba,
    rules_nemotron_h,
    rules_zamba2,
)
from .short_conv import (
    read_inkling,
    read_lfm2,
    read_lfm2_moe,
    read_lfm2_vl,
    read_zaya,
    rules_lfm2,
    rules_zaya,
)

__all__ = [
    "FAMILIES",
    "REGISTRY",
    "REMOVED",
    "WRAPPED",
    "Family",
    "FlashKda",
    "Geometry",
    "Parsed",
]


@dataclass(frozen=True, slots=True)
class FlashKda:
    """When vLLM's KDA layer of a family prefills with FlashKDA (``auto``), which plans one
    prefill checkpoint block: a GPU of compute capability major in ``capability_majors``, head
    size 128, a bfloat16 model, a recurrent state in ``state_dtypes`` (``None``: any), and a
    gate lower bound in the text config at ``bound`` (a path of keys)."""

    capability_majors: frozenset[int]
    state_dtypes: frozenset[str] | None
    bound: tuple[str, ...]


# Kimi's layer (resolve_kda_prefill_backend, is_flashkda_supported,
# vllm/models/kimi_k3/nvidia/kda.py:363-379, :486-525, :618).
KIMI_FLASHKDA: Final = FlashKda(
    frozenset({9}), frozenset({"bfloat16", "float32"}), ("linear_attn_config", "gate_lower_bound")
)
# GLM-5.3-Flash's (_resolve_kda_prefill_backend, vllm/models/glm5next/common/kda.py:137-159,
# :338-351).
GLM5_FLASHKDA: Final = FlashKda(frozenset({9, 10, 12}), None, ("linear_lower_bound",))


@dataclass(frozen=True, slots=True)
class Family:
    """One family: its reader; the ``model_type`` values it reads (in the config itself, or in
    the ``text_config`` / ``llm_config`` of a wrapper; where ``wrapper``, they name the wrapper,
    whose text config holds the fields, or, where ``flat``, the wrapper itself when it has no
    text config); the servers that serve it (``None``: that server lacks it) and the
    architectures each serves it as (vLLM's registry, vllm/model_executor/models/registry.py;
    SGLang's ``EntryClass`` lists, sglang/srt/models/; the first is the one a config that names
    none is read as); its dtype facts; its config classes' rules (``Rules``, what they derive);
    and what the servers do with it that its kinds of layer do not say:

    ``attention_free``: vLLM builds it as ``IsAttentionFree`` (models/mamba.py, mamba2.py;
    every other family with recurrent state is ``IsHybrid``), so prefix caching is off by
    default and no attention page pads its state. ``vllm_replayssm``: vLLM supports
    ``--use-replayssm`` for it (``SupportsReplaySSM``, vllm/config/vllm.py:3475-3479).
    ``vllm_gdn_checkpoints``: its gated delta net is vLLM's ``QwenGatedDeltaNetAttention``,
    which exports FlashInfer prefill checkpoints (gdn/qwen_gdn_linear_attn.py:544, :689-760;
    Olmo's ``GatedDeltaNetAttention`` exports none). ``vllm_flashkda``: when its KDA layer
    prefills with FlashKDA (``None``: it never does, or it has no KDA layer). Which families'
    model-level ``get_mamba_state_shape_from_config`` leaves out the speculative tokens their
    layer adds is the release's (``VllmRules.model_window_exempt``)."""

    read: Reader
    model_types: tuple[str, ...]
    vllm_architectures: tuple[str, ...] = ()
    sglang_architectures: tuple[str, ...] = ()
    hooks: DtypeHooks = NO_HOOKS
    rules: Rules = no_rules
    wrapper: bool = False
    flat: bool = False
    attention_free: bool = False
    vllm_replayssm: bool = False
    vllm_gdn_checkpoints: bool = False
    vllm_flashkda: FlashKda | None = None

    @property
    def vllm(self) -> Release | None:
        """The vLLM release that serves the family, or ``None``."""
        return VLLM if self.vllm_architectures else None

    @property
    def sglang(self) -> Release | None:
        """The SGLang release that serves the family, or ``None``."""
        return SGLANG if self.sglang_architectures else None

    def architectures(self, server: str) -> tuple[str, ...]:
        """The architectures ``server`` (``vllm``, ``sglang``) serves the family as."""
        return self.vllm_architectures if server == "vllm" else self.sglang_architectures


_SGLANG_CONFIG: Final = DtypeHooks(sglang_passes_config=True)

_QWEN3_5_VLLM: Final = (
    "Qwen3_5ForConditionalGeneration",
    "Qwen3_5ForCausalLM",
    "ColQwen3_5",
    "ClefFlashForJointSchema",
    "D3ForSequenceClassification",
)
_QWEN3_5_MOE: Final = (
    "Qwen3_5MoeForConditionalGeneration",
    "Qwen3_5MoeForCausalLM",
    "InternS2PreviewForConditionalGeneration",
)
_NEMOTRON_H_VL: Final = (
    "NemotronH_Nano_VL_V2",
    "NemotronH_Nano_Omni_Reasoning_V3",
    "NemotronH_Omni_Reasoning_V3",
)
_BAILING: Final = (
    "BailingMoeV3ForCausalLM",
    "BailingMoeV2_5ForCausalLM",
    "BailingMoeV3VLForConditionalGeneration",
)

REGISTRY: Final[Mapping[str, Family]] = {
    # Neither KDA layer prefills with FlashKDA: BailingMoeV3KimiDeltaAttention keeps
    # MambaBase's spec, with no checkpoint block (vllm/model_executor/models/bailing_moe_v3.py:
    # 635), and AliceAI builds the shared Kimi layer, Triton only (layers/mamba/gdn/
    # kimi_gdn_linear_attn.py:278-288), on a config whose gate_lower_bound is None
    # (alice_ai.py:118-137, :335-336).
    "alice_ai": Family(
        read_alice_ai,
        ("alice_ai",),
        vllm_architectures=("AliceAIForCausalLM",),
    ),
    "bailing_hybrid": Family(
        read_bailing_hybrid,
        ("bailing_hybrid",),
        vllm_architectures=_BAILING,
        sglang_architectures=_BAILING,
        rules=rules_bailing_hybrid,
    ),
    "falcon_h1": Family(
        read_falcon_h1,
        ("falcon_h1",),
        vllm_architectures=("FalconH1ForCausalLM",),
        sglang_architectures=("FalconH1ForCausalLM",),
        hooks=_SGLANG_CONFIG,
        rules=rules_falcon_h1,
    ),
    "falcon_mamba": Family(
        read_mamba,
        ("falcon_mamba",),
        vllm_architectures=("FalconMambaForCausalLM",),
        sglang_architectures=("FalconMambaForCausalLM",),
        rules=rules_mamba,
        attention_free=True,
    ),
    "gigachat3_5": Family(
        read_gigachat3_5,
        ("gigachat3_5",),
        sglang_architectures=("GigaChat35ForCausalLM",),
        hooks=_SGLANG_CONFIG,
    ),
    "glm5_next": Family(
        read_glm5_next,
        ("glm5_next", "glm5_next_text"),
        vllm_architectures=("Glm5NextForConditionalGeneration", "Glm5NextForCausalLM"),
        sglang_architectures=("Glm5NextForConditionalGeneration",),
        rules=rules_glm5_next,
        wrapper=True,
        flat=True,
        vllm_flashkda=GLM5_FLASHKDA,
    ),
    "granitemoehybrid": Family(
        read_granitemoehybrid,
        ("granitemoehybrid",),
        vllm_architectures=("GraniteMoeHybridForCausalLM",),
        sglang_architectures=("GraniteMoeHybridForCausalLM",),
        rules=rules_granitemoehybrid,
    ),
    "inkling": Family(
        read_inkling,
        ("inkling_model", "inkling_text"),
        vllm_architectures=("InklingForConditionalGeneration", "InklingForCausalLM"),
        sglang_architectures=("InklingForConditionalGeneration",),
    ),
    "interns2_mobius": Family(
        read_qwen_gated_delta_net,
        ("interns2_mobius_text",),
        vllm_architectures=("InternS2MobiusForConditionalGeneration",),
        sglang_architectures=("InternS2MobiusForConditionalGeneration",),
        rules=rules_interns2_mobius,
        vllm_gdn_checkpoints=True,
    ),
    "jamba": Family(
        read_jamba,
        ("jamba",),
        vllm_architectures=("JambaForCausalLM", "JambaForSequenceClassification"),
        rules=rules_jamba,
    ),
    "jet_nemotron": Family(
        read_jet_nemotron,
        ("jet_nemotron",),
        sglang_architectures=("JetNemotronForCausalLM", "JetVLMForConditionalGeneration"),
        hooks=_SGLANG_CONFIG,
    ),
    "kimi_linear": Family(
        read_kimi_linear,
        ("kimi_linear",),
        vllm_architectures=("KimiLinearForCausalLM", "KimiK3ForConditionalGeneration"),
        sglang_architectures=(
            "KimiLinearForCausalLM",
            "KimiK3ForConditionalGeneration",
            "KimiK3LinearForCausalLM",
        ),
        hooks=DtypeHooks(vllm_kda_layer_gate=("linear_attn_config", "use_full_rank_gate")),
        rules=rules_kimi_linear,
        vllm_flashkda=KIMI_FLASHKDA,
    ),
    "lfm2": Family(
        read_lfm2,
        ("lfm2",),
        vllm_architectures=("Lfm2ForCausalLM",),
        sglang_architectures=("Lfm2ForCausalLM",),
        hooks=_SGLANG_CONFIG,
        rules=rules_lfm2,
    ),
    "lfm2_moe": Family(
        read_lfm2_moe,
        ("lfm2_moe",),
        vllm_architectures=("Lfm2MoeForCausalLM",),
        sglang_architectures=("Lfm2MoeForCausalLM",),
    ),
    "lfm2_vl": Family(
        read_lfm2_vl,
        ("lfm2_vl",),
        vllm_architectures=("Lfm2VlForConditionalGeneration",),
        sglang_architectures=("Lfm2VlForConditionalGeneration",),
        rules=rules_lfm2,
        wrapper=True,
    ),
    "mamba": Family(
        read_mamba,
        ("mamba",),
        vllm_architectures=("MambaForCausalLM",),
        sglang_architectures=("MambaForCausalLM",),
        rules=rules_mamba,
        attention_free=True,
    ),
    "mamba2": Family(
        read_mamba2,
        ("mamba2",),
        vllm_architectures=("Mamba2ForCausalLM",),
        sglang_architectures=("Mamba2ForCausalLM",),
        attention_free=True,
    ),
    "minicpm_sala": Family(
        read_minicpm_sala,
        ("minicpm_sala",),
        sglang_architectures=("MiniCPMSALAForCausalLM",),
        rules=rules_minicpm_sala,
    ),
    "minicpmv4_6": Family(
        read_qwen_gated_delta_net,
        ("minicpmv4_6", "minicpmv4_7", "minicpm_ocr"),
        vllm_architectures=(
            "MiniCPMV4_6ForConditionalGeneration",
            "MiniCPMV4_7ForConditionalGeneration",
            "MiniCPMOcrForConditionalGeneration",
        ),
        sglang_architectures=(
            "MiniCPMV4_6ForConditionalGeneration",
            "MiniCPMV4_7ForConditionalGeneration",
        ),
        hooks=_SGLANG_CONFIG,
        rules=rules_gated_delta_net,
        wrapper=True,
        vllm_gdn_checkpoints=True,
    ),
    "nemotron_h": Family(
        read_nemotron_h,
        ("nemotron_h",),
        vllm_architectures=(
            "NemotronHForCausalLM",
            *_NEMOTRON_H_VL,
            "NemotronH_Super_Omni_Reasoning_V3",
        ),
        sglang_architectures=("NemotronHForCausalLM", *_NEMOTRON_H_VL),
        hooks=_SGLANG_CONFIG,
        rules=rules_nemotron_h,
        vllm_replayssm=True,
    ),
    "nemotron_h_puzzle": Family(
        read_nemotron_h,
        ("nemotron_h_puzzle",),
        vllm_architectures=("NemotronHPuzzleForCausalLM",),
        sglang_architectures=("NemotronHPuzzleForCausalLM",),
        hooks=_SGLANG_CONFIG,
        rules=rules_nemotron_h,
        vllm_replayssm=True,
    ),
    "olmo_hybrid": Family(
        read_olmo_hybrid,
        ("olmo_hybrid",),
        vllm_architectures=("OlmoHybridForCausalLM",),
        rules=rules_olmo_hybrid,
    ),
    "qwen3_5": Family(
        read_qwen_gated_delta_net,
        ("qwen3_5_text",),
        vllm_architectures=_QWEN3_5_VLLM,
        sglang_architectures=_QWEN3_5_VLLM[:2],
        hooks=_SGLANG_CONFIG,
        rules=rules_gated_delta_net,
        vllm_gdn_checkpoints=True,
    ),
    "qwen3_5_moe": Family(
        read_qwen_gated_delta_net,
        ("qwen3_5_moe_text",),
        vllm_architectures=_QWEN3_5_MOE,
        sglang_architectures=_QWEN3_5_MOE,
        hooks=_SGLANG_CONFIG,
        rules=rules_gated_delta_net,
        vllm_gdn_checkpoints=True,
    ),
    "qwen3_next": Family(
        read_qwen_gated_delta_net,
        ("qwen3_next",),
        vllm_architectures=("Qwen3NextForCausalLM",),
        sglang_architectures=("Qwen3NextForCausalLM",),
        hooks=_SGLANG_CONFIG,
        rules=rules_gated_delta_net,
        vllm_gdn_checkpoints=True,
    ),
    "qwen4_exp": Family(
        read_qwen4_exp,
        ("qwen4_exp_text",),
        vllm_architectures=("Qwen4ExpForConditionalGeneration", "Qwen4ExpForCausalLM"),
        sglang_architectures=("Qwen4ExpForConditionalGeneration",),
    ),
    "zamba2": Family(
        read_zamba2,
        ("zamba2",),
        vllm_architectures=("Zamba2ForCausalLM",),
        rules=rules_zamba2,
    ),
    "zaya": Family(
        read_zaya,
        ("zaya",),
        sglang_architectures=("ZayaForCausalLM",),
        hooks=_SGLANG_CONFIG,
        rules=rules_zaya,
    ),
}
# A wrapper's model type -> the model type of the text config its class builds (in
# ``text_config``, or ``llm_config`` for NemotronH's VL wrappers) when the file gives none or
# gives one without a ``model_type`` (the classes' ``sub_configs`` and ``__init__``; the tables
# say which server's class refuses that: tools/config-classes).
WRAPPED: Final[Mapping[str, str]] = {
    "bailing_moe_v3_vl": "bailing_hybrid",
    "glm5_next": "glm5_next_text",
    "inkling_mm_model": "inkling_model",
    "intern_s2_preview": "qwen3_5_moe_text",
    "interns2_mobius": "interns2_mobius_text",
    "jet_vlm": "jet_nemotron",
    "kimi_k3": "kimi_linear",
    "lfm2_vl": "lfm2",
    "minicpm_ocr": "qwen3_5_text",
    "minicpmv4_6": "qwen3_5_text",
    "minicpmv4_7": "qwen3_5_text",
    "nemotron_h_omni": "nemotron_h",
    "NemotronH_Nano_Omni_Reasoning_V3": "nemotron_h",
    "NemotronH_Nano_VL_V2": "nemotron_h",
    "NemotronH_Omni_Reasoning_V3": "nemotron_h",
    "qwen3_5": "qwen3_5_text",
    "qwen3_5_moe": "qwen3_5_moe_text",
    "qwen4_exp": "qwen4_exp_text",
}
# vLLM 0.33.0 lists these as previously supported (vllm/model_executor/models/registry.py:
# 841-895), and SGLang 0.5.23 has no model for them.
REMOVED: Final[Mapping[str, tuple[str, str]]] = {
    "bamba": ("Bamba", "0.23.0"),
    "minimax": ("MiniMax", "0.23.0"),
    "minimax_m1": ("MiniMax-M1", "0.23.0"),
    "minimax_text_01": ("MiniMax-Text-01", "0.23.0"),
    "minimax_vl_01": ("MiniMax-VL-01", "0.23.0"),
    "phi4flash": ("Phi4Flash", "0.10.2"),
    "plamo2": ("Plamo2", "0.26.0"),
}
FAMILIES: Final = tuple(sorted(REGISTRY))
