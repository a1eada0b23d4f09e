"""What vLLM 0.33.0 reserves for a hybrid model's recurrent state, per tensor-parallel rank.

vLLM keeps recurrent state in the same block pool as the KV cache. Each state layer's page (one
sequence's state, ``MambaSpec.page_size_bytes``) is padded to one attention page, the attention
block growing until its page holds the state page; layers are grouped in groups of equal size; a
block of the pool costs one page per layer slot of the largest group; a request holds a number of
blocks in every group. Citations are paths in the ``vllm-0.33.0`` wheel.

The steps, each as vLLM's own code does it:

1. The state of one layer for one sequence: ``decode_ring.models.ssm_state`` with the vLLM
   layout, the flags' dtypes, and the conv window widened by the speculative tokens
   (``MambaStateShapeCalculator``, vllm/model_executor/layers/mamba/mamba_utils.py:153-319);
   ``--use-replayssm`` appends its ring (``append_replayssm_ring``, :213-246).
2. The attention page of one token, ``A1 = kv_heads_per_rank * (head + head_v) * kv_bytes``
   (``FullAttentionSpec``, vllm/v1/kv_cache_interface.py:552-617; MLA keeps one latent).
3. ``_align_hybrid_block_size`` (vllm/platforms/interface.py:940-1137): ``k = max(kernel block,
   block_size)``, at least 128 with MLA, ``lcm(k, checkpoint alignment)`` in align mode;
   ``block = k * ceil(P / (k * A1))`` rounded up to every backend's kernel block; the state page
   is padded to ``block * A1``.
4. ``_get_kv_cache_groups_uniform_page_size`` (vllm/v1/core/kv_cache_planning.py:416-556): group
   size ``g = min`` layers per spec (``max`` when ``max < 1.5 * min``), ``ceil(n / g)`` groups per
   spec; one spec for every layer is one group of all of them (:1138-1147).
5. ``_get_kv_cache_bytes_per_block`` (:574-605): ``g`` pages.
6. Blocks per request (``MambaSpec.max_memory_usage_bytes``, vllm/v1/kv_cache_interface.py:
   1135-1141): planned ``2 + s + c`` in align mode (``c``: prefill checkpoint blocks), else
   ``1 + s``; held at decode ``1 + s``; ``s`` is 0 under ReplaySSM (mamba/abstract.py:72-91).
7. With a KV budget: ``num_blocks = budget // bytes_per_block`` (kv_cache_planning.py:1540-1544)
   and ``get_max_concurrency_for_kv_cache_config`` (vllm/v1/core/kv_cache_utils.py:1061-1093):
   ``num_blocks / sum over groups of the blocks one request at max_model_len takes``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Final

from ..models import AttentionLayers, ConfigSource, ModelConfigError, SsmState, ssm_state
from ._common import (
    check_choice,
    check_count,
    check_flag,
    check_optional_count,
    fail,
)
from ._config import load_config

__all__ = [
    "GPU_ARCHS",
    "KV_CACHE_DTYPES",
    "MAMBA_DTYPES",
    "VllmReservation",
    "vllm_reservation",
]

GPU_ARCHS: Final = {
    "sm80": "A100 (compute capability 8.0)",
    "sm86": "A10 / RTX 30 (compute capability 8.6)",
    "sm89": "L40S / RTX 40 (compute capability 8.9)",
    "sm90": "H100 / H200 (compute capability 9.0)",
}
# vllm/config/cache.py:175 (MambaDType).
MAMBA_DTYPES: Final = ("auto", "float32", "float16", "bfloat16")
# The CacheDType values (vllm/config/cache.py:44-60) modelled here, with their bytes; None:
# the model dtype. FlashAttention takes fp8 only as FA3, i.e. on SM90
# (vllm/v1/attention/backends/flash_attn.py:288-296).
KV_CACHE_DTYPES: Final[Mapping[str, int | None]] = {
    "auto": None,
    "float16": 2,
    "bfloat16": 2,
    "fp8": 1,
    "fp8_e4m3": 1,
}
_VLLM_CACHE_DTYPES: Final = (
    "fp8_e5m2",
    "fp8_inc",
    "fp8_ds_mla",
    "nvfp4_ds_mla",
    "turboquant_k8v4",
    "turboquant_4bit_nc",
    "turboquant_k3v4_nc",
)
_DTYPE_BYTES: Final = {"bfloat16": 2, "float16": 2, "float32": 4}
# Attention-free architectures: vLLM's IsAttentionFree classes (models/mamba.py, mamba2.py);
# every other family with recurrent state is IsHybrid.
_ATTENTION_FREE: Final = frozenset({"mamba", "mamba2", "falcon_mamba"})
# FlashAttention and Triton attention (and the MLA backends vLLM picks on SM8x/SM90) report
# MultipleOf(16) kernel blocks (flash_attn.py:356-367, triton_attn.py:339-340,
# mla/flashattn_mla.py:49-50, mla/triton_mla.py:114-115).
_KERNEL_BLOCK: Final = 16
_MLA_MIN_BLOCK: Final = 128  # platforms/interface.py:1083-1088
# vllm/v1/attention/backends/gdn_attn.py:34
_FLASHINFER_GDN_CHECKPOINT_ALIGNMENT: Final = 64
# The families whose gated delta net is QwenGatedDeltaNetAttention, which exports FlashInfer
# checkpoints (gdn/qwen_gdn_linear_attn.py:544, :689-760); Olmo's GatedDeltaNetAttention
# (gdn/olmo_gdn_linear_attn.py:52) exports none.
_QWEN_GDN_FAMILIES: Final = frozenset({"qwen3_next", "qwen3_5", "qwen3_5_moe", "minicpmv4_6"})
_REPLAYSSM_ARCHITECTURES: Final = frozenset({"nemotron_h"})  # SupportsReplaySSM: nemotron_h.py


@dataclass(frozen=True, slots=True)
class VllmReservation:
    """What vLLM 0.33.0 reserves on one tensor-parallel rank, with the inputs and assumptions
    behind it. Byte counts are exact integers; ``max_concurrency`` is vLLM's own float."""

    model_type: str
    family: str
    source: str | None
    tensor_parallel_size: int
    max_num_seqs: int
    max_model_len: int
    max_model_len_rule: str
    enable_prefix_caching: bool
    prefix_caching_rule: str
    mamba_cache_mode: str
    num_speculative_tokens: int
    use_replayssm: bool
    gpu_arch: str
    gpu: str
    attention_backend: str | None
    gdn_prefill_backend: str | None
    kv_cache_dtype: str
    conv_dtype: str
    conv_dtype_rule: str
    ssm_dtype: str
    ssm_dtype_rule: str
    state_layers: int
    attention_layers: int
    block_size: int
    block_size_rule: str
    attention_page_bytes: int
    state_page_bytes: int
    state_page_bytes_padded: int
    group_size: int
    state_groups: int
    attention_groups: int
    bytes_per_block: int
    state_blocks_per_request: int
    planned_blocks_per_request: int
    prefill_checkpoint_blocks: int
    state_bytes: int
    planned_state_bytes: int
    naive_state_bytes: int
    per_sequence_bytes: int
    kv_cache_memory_bytes: int | None
    num_blocks: int | None
    blocks_per_request_at_max_model_len: int
    max_concurrency: float | None
    assumptions: tuple[str, ...]

    @property
    def multiplier(self) -> float:
        """``state_bytes`` over the naive B x per-sequence figure."""
        return self.state_bytes / self.naive_state_bytes if self.naive_state_bytes else 1.0

    @property
    def planned_multiplier(self) -> float:
        """``planned_state_bytes`` over the naive B x per-sequence figure."""
        naive = self.naive_state_bytes
        return self.planned_state_bytes / naive if naive else 1.0

    def as_dict(self) -> dict[str, object]:
        """Every field, tuples as lists, and the multipliers: ready for ``json.dumps``."""
        fields = asdict(self)
        fields["assumptions"] = list(self.assumptions)
        fields["multiplier"] = self.multiplier
        fields["planned_multiplier"] = self.planned_multiplier
        return fields


@dataclass(frozen=True, slots=True)
class _Kind:
    """The state layers of one kind: one ``MambaSpec`` bucket."""

    kind: str
    layers: int
    page: int
    # get_prefill_checkpoint_alignment of its layers (None: cannot export checkpoints).
    checkpoint_alignment: int | None
    # KDA: FlashKDA prefill exports one checkpoint block.
    flashkda: bool = False


def _flashkda(state: SsmState, fields: Mapping[str, Any], gpu_arch: str) -> bool:
    """Whether vLLM's KDA layer prefills with FlashKDA (``auto``), which exports one prefill
    checkpoint block. Kimi's layer (``resolve_kda_prefill_backend`` and
    ``is_flashkda_supported``, vllm/models/kimi_k3/nvidia/kda.py:363-379, :486-525): SM90 here,
    head size 128, a bfloat16 model, a bfloat16 or float32 recurrent state, and a
    ``gate_lower_bound`` in ``linear_attn_config`` (:618). GLM-5.3-Flash's
    (``_resolve_kda_prefill_backend``, vllm/models/glm5next/common/kda.py:137-159, :338-351):
    compute capability 9, 10 or 12 (SM90 among ``GPU_ARCHS``), head size 128, a bfloat16 model
    and a ``linear_lower_bound``, whatever the state's dtype."""
    glm5_next = state.family == "glm5_next"
    if glm5_next:
        bound = fields.get("linear_lower_bound")
    else:
        linear = fields.get("linear_attn_config")
        bound = linear.get("gate_lower_bound") if isinstance(linear, Mapping) else None
    model_dtype = state.attention.model_dtype if state.attention is not None else None
    for group in state.groups:
        if group.kind != "kda":
            continue
        recurrent = group.tensors[-1]
        return (
            gpu_arch == "sm90"
            and recurrent.shape[-1] == 128
            and model_dtype == "bfloat16"
            and (glm5_next or recurrent.dtype in ("bfloat16", "float32"))
            and bound is not None
        )
    return False


def _state_kinds(
    state: SsmState, replay_ring: int, gdn_flashinfer_align: bool, flashkda: bool
) -> list[_Kind]:
    """One ``MambaSpec`` bucket per kind of recurrent layer, with its checkpoint alignment:
    MambaMixer2 declares none (the base ``get_prefill_checkpoint_alignment``,
    mamba/abstract.py:65-70); the gated delta net 64 where FlashInfer prefill runs in align mode
    (gdn/qwen_gdn_linear_attn.py:689-702); ``replay_ring`` bytes join each Mamba-2 page."""
    kinds = []
    for group in state.groups:
        alignment = (
            _FLASHINFER_GDN_CHECKPOINT_ALIGNMENT
            if group.kind == "gated_delta_net"
            and gdn_flashinfer_align
            and state.family in _QWEN_GDN_FAMILIES
            else None
        )
        ring = replay_ring if group.kind == "mamba2" else 0
        kinds.append(
            _Kind(
                group.kind,
                len(group.layer_indices),
                group.per_layer_bytes + ring,
                alignment,
                flashkda and group.kind == "kda",
            )
        )
    return kinds


def _prefill_checkpoint_blocks(kind: _Kind, all_aligned: bool) -> int:
    """``num_prefill_checkpoint_blocks`` of the kind's ``MambaSpec``: 1 for Mamba-2
    (mamba_mixer2.py:1108-1118); 1 for the gated delta net when every state layer exports
    checkpoints (qwen_gdn_linear_attn.py:739-760); 1 for KDA under FlashKDA
    (vllm/models/kimi_k3/nvidia/kda.py:901-908); else 0."""
    if kind.kind == "mamba2" or kind.flashkda:
        return 1
    if kind.kind == "gated_delta_net":
        return int(kind.checkpoint_alignment is not None and all_aligned)
    return 0


def _replayssm_ring_bytes(state: SsmState, buffer_len: int, model_dtype: str) -> int:
    """``append_replayssm_ring`` on the Triton backend (mamba_utils.py:92-95, :213-246): x and B
    caches in the activation dtype, dt in float32; the groups per rank are the conv channels
    less the heads' (``conv_dim = d_inner + 2 * groups * d_state``, :185-211)."""
    heads, head_dim, d_state = state.ssm_shape
    channels = state.conv_shape[1]
    groups = (channels - heads * head_dim) // (2 * d_state)
    activation = _DTYPE_BYTES[model_dtype]
    return (
        heads * buffer_len * head_dim * activation
        + heads * buffer_len * 4
        + groups * buffer_len * d_state * activation
    )


def _rope_parameters(fields: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """``iter_rope_parameters`` (vllm/transformers_utils/config.py:690-699): one dict, or one
    per layer type when nested; a legacy ``rope_scaling`` stands in for ``rope_parameters``."""
    raw = fields.get("rope_parameters") or fields.get("rope_scaling")
    if not isinstance(raw, Mapping) or not raw:
        return []
    if all(isinstance(value, Mapping) for value in raw.values()):
        return [value for value in raw.values() if value]
    return [raw]


# vllm/config/model.py:2611-2618: these leave max_position_embeddings already scaled.
_PRESCALED_ROPE: Final = (
    "su",
    "longrope",
    "llama3",
    "yarn",
    "deepseek_yarn",
    "deepseek_llama_scaling",
)


def _max_model_len(fields: Mapping[str, Any]) -> tuple[int, str]:
    """vLLM's derived ``max_model_len`` (``_get_and_verify_max_len``, vllm/config/model.py:
    2540-2652): the smallest of the length keys the text config has
    (``derive_max_model_len_and_key``, model_arch_config_convertor.py:374-407; 2048 when none
    is there), times the RoPE ``factor`` of a type that does not pre-scale it; LongRoPE takes
    ``original_max_position_embeddings``."""
    keys = (
        "max_position_embeddings",
        "n_positions",
        "max_seq_len",
        "seq_length",
        "model_max_length",
        "max_target_positions",
        "max_sequence_length",
        "max_seq_length",
        "seq_len",
    )
    found = {
        key: value
        for key in keys
        if isinstance(value := fields.get(key), int) and not isinstance(value, bool)
    }
    if "model_max_length" in found:
        length, rule = found["model_max_length"], "config model_max_length"
    elif not found:
        length, rule = 2048, "no length in config: 2048"
    else:
        key = min(found, key=lambda name: found[name])
        length, rule = found[key], f"config {key}"
    parameters = _rope_parameters(fields)
    types = [str(rp.get("rope_type", rp.get("type"))) for rp in parameters]
    if "longrope" in types:
        original = fields.get("original_max_position_embeddings", length)
        if not isinstance(original, int) or isinstance(original, bool):
            raise fail("max_model_len", "LongRoPE without an integer original length; give it")
        return original, "config original_max_position_embeddings (vLLM LongRoPE default)"
    factor: object = 1.0
    for rope_type, rp in zip(types, parameters, strict=True):
        if rope_type not in _PRESCALED_ROPE:
            factor = rp.get("factor", factor)
    if factor is None:
        factor = 1.0
    if isinstance(factor, bool) or not isinstance(factor, int | float) or factor <= 0:
        raise fail("max_model_len", f"the config's RoPE factor {factor!a} is not a number; give it")
    if factor != 1.0:
        rule += f" x RoPE factor {factor:g}"
    return int(length * factor), rule + " (vLLM derived)"


def _model_dtype(state: SsmState) -> str:
    """vLLM's model dtype, the activation dtype of the ReplaySSM ring: the attention side's, or
    (attention-free) the conv state's under ``--mamba-cache-dtype auto``."""
    return state.attention.model_dtype if state.attention is not None else state.conv_dtype


def _backend(attention: AttentionLayers | None, gpu_arch: str, kv_dtype: str) -> str | None:
    """The attention backend vLLM picks by default (``_get_backend_priorities``,
    vllm/platforms/cuda.py:84-178): FlashAttention first off Blackwell, FlashAttention-MLA on
    SM90 and Triton-MLA before it; ``None`` without attention layers."""
    if attention is None:
        return None
    if attention.mla:
        if kv_dtype not in ("auto", "bfloat16", "float16"):
            raise fail("kv_cache_dtype", f"{kv_dtype} with MLA is not modelled")
        return "FLASH_ATTN_MLA" if gpu_arch == "sm90" else "TRITON_MLA"
    head = attention.head_dim
    if head % 8 or head > 256:
        # flash_attn.py:424-433: vLLM would fall back to another backend.
        raise ModelConfigError(
            f"head_dim {head}: FlashAttention takes multiples of 8 up to 256; vLLM's fallback "
            "backend is not modelled",
            field="head_dim",
        )
    if KV_CACHE_DTYPES[kv_dtype] == 1 and gpu_arch != "sm90":
        raise fail(
            "kv_cache_dtype",
            f"{kv_dtype} needs FlashAttention 3 (SM90); vLLM's fallback backend on "
            f"{gpu_arch} is not modelled",
        )
    return "FLASH_ATTN"


def _attention_page_1_token(attention: AttentionLayers, tp: int, kv_dtype: str) -> int:
    """``FullAttentionSpec(block_size=1, ...).page_size_bytes`` as ``_align_hybrid_block_size``
    builds it (interface.py:981-1043) from ``get_num_kv_heads`` and ``get_head_size``, which
    the models package's attention side follows (Zamba2's convertor reads
    ``attention_head_dim``, model_arch_config_convertor.py:502-504)."""
    width = KV_CACHE_DTYPES[kv_dtype] or _DTYPE_BYTES[attention.model_dtype]
    if attention.mla:
        # MLAAttentionSpec: one latent of kv_lora_rank + rope, no V (kv_cache_interface.py:743).
        return attention.head_dim * width
    kv_heads = max(1, attention.num_key_value_heads // tp)
    return kv_heads * (attention.head_dim + attention.v_head_dim) * width


def vllm_reservation(
    config: ConfigSource,
    *,
    tensor_parallel_size: int = 1,
    max_num_seqs: int = 256,
    max_model_len: int | None = None,
    block_size: int | None = None,
    enable_prefix_caching: bool | None = None,
    num_speculative_tokens: int = 0,
    mamba_cache_dtype: str = "auto",
    mamba_ssm_cache_dtype: str = "auto",
    kv_cache_dtype: str = "auto",
    kv_cache_memory_bytes: int | None = None,
    use_replayssm: bool = False,
    replayssm_buffer_len: int = 16,
    gpu_arch: str = "sm90",
) -> VllmReservation:
    """What vLLM 0.33.0 reserves for the recurrent state of the model ``config`` describes, on
    one of ``tensor_parallel_size`` ranks, launched with these flags (their vLLM names and
    defaults; ``enable_prefix_caching=None`` is vLLM's default: on for a hybrid model, off for
    an attention-free one) on a GPU of ``gpu_arch`` (one of ``GPU_ARCHS``).

    Raises ``ServerArgumentError`` (a ``ValueError`` naming the argument) for a value vLLM
    refuses or this function does not model, ``ModelConfigError`` /
    ``TensorParallelSplitError`` as ``ssm_state`` does and for attention heads the TP cannot
    split, and ``TypeError`` for an argument of the wrong type."""
    tp = check_count("tensor_parallel_size", tensor_parallel_size, 1)
    seqs = check_count("max_num_seqs", max_num_seqs, 1)
    model_len_given = check_optional_count("max_model_len", max_model_len, 1)
    block_given = check_optional_count("block_size", block_size, 1)
    spec = check_count("num_speculative_tokens", num_speculative_tokens, 0)
    budget = check_optional_count("kv_cache_memory_bytes", kv_cache_memory_bytes, 0)
    replay = check_flag("use_replayssm", use_replayssm)
    ring_len = check_count("replayssm_buffer_len", replayssm_buffer_len, 1)
    arch = check_choice("gpu_arch", gpu_arch, tuple(GPU_ARCHS))
    conv_flag = check_choice("mamba_cache_dtype", mamba_cache_dtype, MAMBA_DTYPES)
    ssm_flag = check_choice("mamba_ssm_cache_dtype", mamba_ssm_cache_dtype, MAMBA_DTYPES)
    if isinstance(kv_cache_dtype, str) and kv_cache_dtype in _VLLM_CACHE_DTYPES:
        raise fail("kv_cache_dtype", f"{kv_cache_dtype} is not modelled")
    kv_dtype = check_choice("kv_cache_dtype", kv_cache_dtype, tuple(KV_CACHE_DTYPES))
    if enable_prefix_caching is not None:
        check_flag("enable_prefix_caching", enable_prefix_caching)

    _, family_fields = load_config(config)
    state = ssm_state(
        config,
        tp_size=tp,
        layout="vllm",
        conv_dtype=conv_flag,
        ssm_dtype=ssm_flag,
        speculative_tokens=spec,
    )
    if state.ssm_layers == 0:
        raise ModelConfigError(
            f"{state.model_type}: no recurrent layer, so vLLM reserves no state for it",
            family=state.family,
            field="model_type",
        )
    attention = state.attention
    attention_free = state.family in _ATTENTION_FREE

    assumptions = [
        "CUDA; a draft model's own KV layers are not counted",
    ]
    # Prefix caching: EngineArgs (vllm/engine/arg_utils.py:3075-3081) takes
    # ModelConfig.is_prefix_caching_supported (vllm/config/model.py:2239-2291).
    if enable_prefix_caching is None:
        caching = not attention_free
        caching_rule = (
            "vLLM default: off for an attention-free model"
            if attention_free
            else "vLLM default: on for a hybrid generative model"
        )
    else:
        caching = enable_prefix_caching
        caching_rule = "flag"
    # MambaModelConfig.verify_and_update_config (vllm/model_executor/models/config.py:750-787).
    mode = "align" if caching else "none"

    if replay:
        if state.family not in _REPLAYSSM_ARCHITECTURES:
            raise fail(
                "use_replayssm",
                f"vLLM 0.33 supports ReplaySSM only for NemotronH, not {state.family} "
                "(vllm/config/vllm.py:3475-3479)",
            )
        if spec:
            raise fail(
                "use_replayssm",
                "ReplaySSM with speculative decoding needs the FlashInfer mamba backend; "
                "not modelled",
            )
    if model_len_given is not None:
        model_len, model_len_rule = model_len_given, "flag"
    else:
        model_len, model_len_rule = _max_model_len(family_fields)

    ring = 0
    if replay:
        ring = _replayssm_ring_bytes(state, ring_len, _model_dtype(state))
    backend = _backend(attention, arch, kv_dtype)
    gdn = "flashinfer" if arch == "sm90" else "triton"  # _resolve_gdn_prefill_backend
    kinds = _state_kinds(
        state, ring, gdn == "flashinfer" and mode == "align", _flashkda(state, family_fields, arch)
    )
    largest_page = max(kind.page for kind in kinds)
    all_aligned = all(kind.checkpoint_alignment is not None for kind in kinds)

    block = block_given if block_given is not None else 16  # CacheConfig.DEFAULT_BLOCK_SIZE
    block_rule = "flag" if block_given is not None else "vLLM default 16"
    padded = largest_page
    attention_page = 0
    if attention is not None:
        page_1 = _attention_page_1_token(attention, tp, kv_dtype)
        alignment = max(_KERNEL_BLOCK, block)
        if attention.mla:
            alignment = max(alignment, _MLA_MIN_BLOCK)
        if mode == "align":
            checkpoint = 1
            if all_aligned:
                checkpoint = math.lcm(*(kind.checkpoint_alignment or 1 for kind in kinds))
            alignment = math.lcm(alignment, checkpoint)
        needed = alignment * -(-largest_page // (alignment * page_1))
        needed = _KERNEL_BLOCK * -(-needed // _KERNEL_BLOCK)
        if block < needed:
            block = needed
            block_rule = (
                "raised by _align_hybrid_block_size so that one attention page holds the state page"
            )
        padded = attention_page = block * page_1
    # Every state page is now the attention page; without attention,
    # unify_kv_cache_spec_page_size (kv_cache_planning.py:346-408) pads them to the largest.
    unified = padded
    attention_count = len(attention.layer_indices) if attention is not None else 0

    # Grouping (kv_cache_planning.py:1138-1147, :416-556): one spec for every layer is one
    # group of them all; otherwise g layers a group.
    buckets = [kind.layers for kind in kinds] + ([attention_count] if attention_count else [])
    if len(buckets) == 1:
        group = buckets[0]
    else:
        group = min(buckets)
        if max(buckets) < group * 1.5:
            group = max(buckets)
    state_groups = sum(-(-kind.layers // group) for kind in kinds)
    attention_groups = -(-attention_count // group) if attention_count else 0
    bytes_per_block = group * unified

    speculative_blocks = 0 if replay else spec
    checkpoint_blocks = max(_prefill_checkpoint_blocks(kind, all_aligned) for kind in kinds)
    held = 1 + speculative_blocks
    planned = 2 + speculative_blocks + checkpoint_blocks if mode == "align" else held
    attention_blocks = -(-model_len // block)
    per_request = attention_groups * attention_blocks + state_groups * planned
    num_blocks = None if budget is None else budget // bytes_per_block
    concurrency = None
    if num_blocks is not None:
        _check_budget(budget or 0, bytes_per_block, per_request, model_len)
        concurrency = num_blocks / per_request
    if attention is None and not attention_free:
        assumptions.append("no attention layer: no page alignment, one group of every layer")
    return VllmReservation(
        model_type=state.model_type,
        family=state.family,
        source=state.source,
        tensor_parallel_size=tp,
        max_num_seqs=seqs,
        max_model_len=model_len,
        max_model_len_rule=model_len_rule,
        enable_prefix_caching=caching,
        prefix_caching_rule=caching_rule,
        mamba_cache_mode=mode,
        num_speculative_tokens=spec,
        use_replayssm=replay,
        gpu_arch=arch,
        gpu=GPU_ARCHS[arch],
        attention_backend=backend,
        gdn_prefill_backend=gdn if any(k.kind == "gated_delta_net" for k in kinds) else None,
        kv_cache_dtype=kv_dtype,
        conv_dtype=state.conv_dtype,
        conv_dtype_rule=state.conv_dtype_rule,
        ssm_dtype=state.ssm_dtype,
        ssm_dtype_rule=state.ssm_dtype_rule,
        state_layers=state.ssm_layers,
        attention_layers=attention_count,
        block_size=block,
        block_size_rule=block_rule,
        attention_page_bytes=attention_page,
        state_page_bytes=largest_page,
        state_page_bytes_padded=unified,
        group_size=group,
        state_groups=state_groups,
        attention_groups=attention_groups,
        bytes_per_block=bytes_per_block,
        state_blocks_per_request=held,
        planned_blocks_per_request=planned,
        prefill_checkpoint_blocks=checkpoint_blocks if mode == "align" else 0,
        state_bytes=seqs * state_groups * held * bytes_per_block,
        planned_state_bytes=seqs * state_groups * planned * bytes_per_block,
        naive_state_bytes=seqs * state.per_sequence_bytes,
        per_sequence_bytes=state.per_sequence_bytes,
        kv_cache_memory_bytes=budget,
        num_blocks=num_blocks,
        blocks_per_request_at_max_model_len=per_request,
        max_concurrency=concurrency,
        assumptions=tuple(assumptions),
    )


def _check_budget(budget: int, bytes_per_block: int, per_request: int, model_len: int) -> None:
    """vLLM's startup check (``_check_enough_kv_cache_memory``, kv_cache_planning.py:50-87,
    run against the budget less the null block, :1533-1543): one request at ``max_model_len``
    must fit."""
    usable = budget - bytes_per_block
    needed = bytes_per_block * per_request
    if usable <= 0 or needed > usable:
        raise fail(
            "kv_cache_memory_bytes",
            f"{budget} B holds {max(usable, 0) // bytes_per_block} usable blocks of "
            f"{bytes_per_block} B; one request at max_model_len {model_len} needs "
            f"{per_request}: vLLM refuses to start",
        )
