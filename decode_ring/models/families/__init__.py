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
from ..dtypes import NEMOTRON_H_HOOK, NO_HOOKS, QWEN3_5_HOOK, DtypeHooks
from .base import Geometry, Parsed, Reader
from .gated_delta_net import read_gated_delta_net, read_gigachat3_5, read_jet_nemotron
from .kda import read_alice_ai, read_bailing_hybrid, read_glm5_next, read_kimi_linear
from .linear_attention import read_minicpm_sala
from .mamba import (
    read_falcon_h1,
    read_granitemoehybrid,
    read_jamba,
    read_mamba,
    read_mamba2,
    read_nemotron_h,
    read_zamba2,
)
from .short_conv import read_lfm2, read_lfm2_moe, read_lfm2_vl, read_zaya

__all__ = ["FAMILIES", "REGISTRY", "REMOVED", "Family", "FlashKda", "Geometry", "Parsed"]


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
    text config); the servers that serve it (``None``: that server lacks it); its dtype hooks;
    and what the servers do with it that its kinds of layer do not say:

    ``attention_free``: vLLM builds it as ``IsAttentionFree`` (models/mamba.py, mamba2.py;
    every other family with recurrent state is ``IsHybrid``), so prefix caching is off by
    default and no attention page pads its state. ``vllm_replayssm``: vLLM supports
    ``--use-replayssm`` for it (``SupportsReplaySSM``, vllm/config/vllm.py:3475-3479).
    ``vllm_gdn_checkpoints``: its gated delta net is vLLM's ``QwenGatedDeltaNetAttention``,
    which exports FlashInfer prefill checkpoints (gdn/qwen_gdn_linear_attn.py:544, :689-760;
    Olmo's ``GatedDeltaNetAttention`` exports none). ``vllm_flashkda``: when its KDA layer
    prefills with FlashKDA (``None``: it never does, or it has no KDA layer)."""

    read: Reader
    model_types: tuple[str, ...]
    vllm: Release | None = VLLM
    sglang: Release | None = SGLANG
    hooks: DtypeHooks = NO_HOOKS
    wrapper: bool = False
    flat: bool = False
    attention_free: bool = False
    vllm_replayssm: bool = False
    vllm_gdn_checkpoints: bool = False
    vllm_flashkda: FlashKda | None = None


_SGLANG_CONFIG: Final = DtypeHooks(sglang_passes_config=True)

_QWEN3_5: Final = DtypeHooks(sglang_passes_config=True, vllm_ssm=QWEN3_5_HOOK)

REGISTRY: Final[Mapping[str, Family]] = {
    # Neither KDA layer prefills with FlashKDA: BailingMoeV3KimiDeltaAttention keeps
    # MambaBase's spec, with no checkpoint block (vllm/model_executor/models/bailing_moe_v3.py:
    # 635), and AliceAI builds the shared Kimi layer, Triton only (layers/mamba/gdn/
    # kimi_gdn_linear_attn.py:278-288), on a config whose gate_lower_bound is None
    # (alice_ai.py:118-137, :335-336).
    "bailing_hybrid": Family(
        read_bailing_hybrid,
        ("bailing_hybrid",),
        hooks=DtypeHooks(vllm_kda_reads_ssm_dtype=False),
    ),
    "alice_ai": Family(
        read_alice_ai,
        ("alice_ai",),
        sglang=None,
        hooks=DtypeHooks(vllm_kda_reads_ssm_dtype=False),
    ),
    "falcon_h1": Family(read_falcon_h1, ("falcon_h1",), hooks=_SGLANG_CONFIG),
    "falcon_mamba": Family(read_mamba, ("falcon_mamba",), attention_free=True),
    "gigachat3_5": Family(read_gigachat3_5, ("gigachat3_5",), vllm=None, hooks=_SGLANG_CONFIG),
    "glm5_next": Family(
        read_glm5_next, ("glm5_next",), wrapper=True, flat=True, vllm_flashkda=GLM5_FLASHKDA
    ),
    "granitemoehybrid": Family(read_granitemoehybrid, ("granitemoehybrid",)),
    "jamba": Family(read_jamba, ("jamba",), sglang=None),
    "jet_nemotron": Family(read_jet_nemotron, ("jet_nemotron",), vllm=None, hooks=_SGLANG_CONFIG),
    "kimi_linear": Family(read_kimi_linear, ("kimi_linear",), vllm_flashkda=KIMI_FLASHKDA),
    "lfm2": Family(read_lfm2, ("lfm2",), hooks=_SGLANG_CONFIG),
    "lfm2_moe": Family(read_lfm2_moe, ("lfm2_moe",)),
    "lfm2_vl": Family(read_lfm2_vl, ("lfm2_vl",), wrapper=True),
    "mamba": Family(read_mamba, ("mamba",), attention_free=True),
    "mamba2": Family(read_mamba2, ("mamba2",), attention_free=True),
    "minicpm_sala": Family(read_minicpm_sala, ("minicpm_sala",), vllm=None),
    "minicpmv4_6": Family(
        read_gated_delta_net,
        ("minicpmv4_6",),
        hooks=_SGLANG_CONFIG,
        wrapper=True,
        vllm_gdn_checkpoints=True,
    ),
    "nemotron_h": Family(
        read_nemotron_h,
        ("nemotron_h",),
        hooks=DtypeHooks(sglang_passes_config=True, vllm_ssm=NEMOTRON_H_HOOK),
        vllm_replayssm=True,
    ),
    "olmo_hybrid": Family(read_gated_delta_net, ("olmo_hybrid",), sglang=None),
    "qwen3_5": Family(
        read_gated_delta_net, ("qwen3_5_text",), hooks=_QWEN3_5, vllm_gdn_checkpoints=True
    ),
    "qwen3_5_moe": Family(
        read_gated_delta_net, ("qwen3_5_moe_text",), hooks=_QWEN3_5, vllm_gdn_checkpoints=True
    ),
    "qwen3_next": Family(
        read_gated_delta_net, ("qwen3_next",), hooks=_SGLANG_CONFIG, vllm_gdn_checkpoints=True
    ),
    "zamba2": Family(read_zamba2, ("zamba2",), sglang=None),
    "zaya": Family(read_zaya, ("zaya",), vllm=None, hooks=_SGLANG_CONFIG),
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
