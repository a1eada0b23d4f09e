"""``KindTraits``: what the servers do with a kind of recurrent layer, whatever the family."""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["Checkpoint", "KindTraits"]


class Checkpoint(enum.Enum):
    """When vLLM's layer of a kind plans one prefill checkpoint block
    (``num_prefill_checkpoint_blocks`` of its ``MambaSpec``)."""

    NEVER = "never"
    # MambaMixer2.get_kv_cache_spec (vllm/model_executor/layers/mamba/mamba_mixer2.py:1108-1118).
    ALWAYS = "always"
    # QwenGatedDeltaNetAttention, with FlashInfer prefill in align mode, when every state layer
    # exports checkpoints; it also aligns blocks to 64 tokens
    # (gdn/qwen_gdn_linear_attn.py:689-702, :739-760; v1/attention/backends/gdn_attn.py:34).
    FLASHINFER_GDN = "flashinfer_gdn"
    # The KDA layer under FlashKDA prefill (vllm/models/kimi_k3/nvidia/kda.py:901-908).
    FLASHKDA = "flashkda"


@dataclass(frozen=True, slots=True)
class KindTraits:
    """One kind's behaviour in the servers.

    ``one_conv_one_state``: its layers hold exactly one conv and one state tensor (the 0.1
    ``conv_shape``/``ssm_shape`` fields describe it). ``sglang_window_first``: SGLang lays its
    conv state out window first, ``(K - 1, channels)`` (``KimiLinearStateShape``), where the
    others are channels first. ``sglang_conv_dedup``: SGLang's speculative scratch keeps one
    deduplicated conv window per row (``conv_window_dedup_enabled``,
    sglang/srt/mem_cache/memory_pool.py:135-150) rather than dense windows per draft token.
    ``vllm_checkpoint``: when vLLM plans a prefill checkpoint block for it.
    ``vllm_replayssm_ring``: vLLM's ReplaySSM ring joins its page (``append_replayssm_ring``,
    vllm/model_executor/layers/mamba/mamba_utils.py:213-246)."""

    name: str
    one_conv_one_state: bool
    sglang_window_first: bool = False
    sglang_conv_dedup: bool = True
    vllm_checkpoint: Checkpoint = Checkpoint.NEVER
    vllm_replayssm_ring: bool = False
