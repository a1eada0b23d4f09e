"""What SGLang 0.5.23 reserves for a hybrid model's recurrent state, per tensor-parallel rank.

SGLang sizes its state pool from memory, not from the batch: ``_handle_max_mamba_cache``
(sglang/srt/mem_cache/kv_cache_configurator.py:3229-3409) turns a share ``r / (1 + r)`` of the
memory left after the weights into ``K`` state slots (``--max-mamba-cache-size``), ``MambaPool``
allocates ``K + 1`` of them (one is padding, sglang/srt/mem_cache/memory_pool.py:722-753), and the
scheduler caps running requests at ``K // ratio`` (``resolve_max_num_reqs``, :3119-3172), where
``ratio`` is the state slots one request may hold (``_calculate_mamba_ratio``, :3062-3088), and
at its estimate from the KV pool's tokens (what is left after the state pool, over the KV bytes
per token of ``DefaultPoolConfigurator``, sglang/srt/model_executor/pool_configurator.py).
With speculative decoding the pool also keeps scratch per running request
(memory_pool.py:864-965). Citations are paths in the ``sglang-0.5.23`` wheel.

Floating-point steps are SGLang's own, in its order: the budget arrives in GiB as a float
(``available_memory / 2**30``), and the KV budget leaves as ``int(GiB * 2**30)``
(``_profile_available_bytes``, :2990-3060).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Final

from ..models import DTYPE_BYTES, ConfigSource, ModelConfigError, SsmState, ssm_state
from ._common import (
    ServerArgumentError,
    check_choice,
    check_count,
    check_flag,
    check_optional_count,
    check_ratio,
    fail,
)
from ._config import load_config
from .vllm import GPU_ARCHS

__all__ = [
    "MAMBA_RADIX_CACHE_STRATEGIES",
    "MAMBA_SSM_DTYPES",
    "SglangReservation",
    "sglang_reservation",
]

# sglang/srt/arg_groups/fields/exec_.py:490-519.
MAMBA_SSM_DTYPES: Final = ("float32", "bfloat16", "float16")
MAMBA_RADIX_CACHE_STRATEGIES: Final = ("auto", "no_buffer", "extra_buffer", "extra_buffer_lazy")
_GIB: Final = 1 << 30
# kv_cache_configurator.py:227 and allocation_sizing.py:11-19 (extra_buffer with overlap: two
# ping-pong tracking slots; lazy: one).
_BASE_RATIO: Final = 3
_TRACKING_SLOTS: Final = {"extra_buffer": 2, "extra_buffer_lazy": 1, "no_buffer": 0}
# speculative_hook.py:1086-1094 (_handle_eagle_family).
_SPECULATIVE_MAX_RUNNING_REQUESTS: Final = 48
# resolve_max_num_reqs (kv_cache_configurator.py:3119-3132): the default estimate is
# int(tokens / context_len * 512), clamped to [2048, 4096], and every cap to half the tokens.
_ESTIMATE_REQUESTS_PER_CONTEXT: Final = 512
_ESTIMATE_FLOOR: Final = 2048
_ESTIMATE_CEILING: Final = 4096
# get_context_length (sglang/srt/utils/hf_transformers/common.py:668-695), in its order.
_CONTEXT_LENGTH_KEYS: Final = (
    "max_sequence_length",
    "seq_length",
    "max_seq_len",
    "model_max_length",
    "max_position_embeddings",
)
_DEFAULT_CONTEXT_LENGTH: Final = 2048
# _get_and_verify_dtype (configs/model_config.py:2284-2340): --dtype auto keeps a bfloat16 or
# float16 config and casts float32 (or none) to float16, so the auto KV cache holds 2 bytes.
_KV_ELEMENT_BYTES: Final = 2

# is_deepseek_dsa (configs/model_config.py:191-211): with an index_topk, an indexer's keys join
# each attention layer's KV; DSATokenToKVPool.quant_block_size (mem_cache/memory_pool.py:5280).
_DSA_ARCHS: Final = frozenset(
    {
        "DeepseekV3ForCausalLM",
        "DeepseekV32ForCausalLM",
        "DeepseekV3ForCausalLMNextN",
        "MistralLarge3ForCausalLM",
        "PixtralForConditionalGeneration",
        "GlmMoeDsaForCausalLM",
        "GlmMoeDsaForCausalLMNextN",
        "Glm5NextForConditionalGenerationNextN",
        "Glm5NextForConditionalGeneration",
        "LongcatFlashForCausalLM",
        "LongcatFlashForCausalLMNextN",
        "Dots3NoteForCausalLM",
        "Dots3NoteForCausalLMNextN",
        "HYV4ForCausalLM",
        "HYV4ForCausalLMNextN",
    }
)
_DSA_QUANT_BLOCK: Final = 128

# configs/model_config.py:1420-1431: their MLA reads qk_rope_head_dim as 0 under use_mla_nope.
_MLA_NOPE_ARCHS: Final = frozenset(
    {"BailingMoeV3ForCausalLM", "BailingMoeV3VLForConditionalGeneration"}
)

# sglang/srt/arg_groups/overrides.py:369-399 (_MAMBA_RADIX_CACHE_ARCHS).
_MAMBA_RADIX_CACHE_ARCHS: Final = frozenset(
    {
        "KimiLinearForCausalLM",
        "KimiK3ForConditionalGeneration",
        "BailingMoeV2_5ForCausalLM",
        "BailingMoeV3ForCausalLM",
        "BailingMoeV3VLForConditionalGeneration",
        "Qwen3NextForCausalLM",
        "Qwen3_5MoeForConditionalGeneration",
        "InternS2PreviewForConditionalGeneration",
        "InternS2MobiusForConditionalGeneration",
        "Qwen3_5ForConditionalGeneration",
        "Qwen3_5MoeForCausalLM",
        "Qwen3_5ForCausalLM",
        "Qwen4ExpForConditionalGeneration",
        "MiniCPMV4_6ForConditionalGeneration",
        "MiniCPMV4_7ForConditionalGeneration",
        "NemotronHForCausalLM",
        "NemotronHPuzzleForCausalLM",
        "NemotronH_Omni_Reasoning_V3",
        "FalconH1ForCausalLM",
        "JetNemotronForCausalLM",
        "JetVLMForConditionalGeneration",
        "Lfm2ForCausalLM",
        "Lfm2MoeForCausalLM",
        "ZayaForCausalLM",
        "Glm5NextForConditionalGeneration",
    }
)
# overrides.py:403-436 (_MAMBA_EXTRA_BUFFER_ARCHS), which supports_mamba_cache_extra_buffer
# accepts with the default triton linear-attention backend (:439-451).
_MAMBA_EXTRA_BUFFER_ARCHS: Final = frozenset(
    {
        "KimiLinearForCausalLM",
        "Qwen3_5ForConditionalGeneration",
        "Qwen3_5MoeForConditionalGeneration",
        "Qwen3_5MoeForCausalLM",
        "Qwen3_5ForCausalLM",
        "Qwen3NextForCausalLM",
        "Qwen4ExpForConditionalGeneration",
        "InternS2PreviewForConditionalGeneration",
        "MiniCPMV4_6ForConditionalGeneration",
        "MiniCPMV4_7ForConditionalGeneration",
        "BailingMoeV2_5ForCausalLM",
        "BailingMoeV3ForCausalLM",
        "BailingMoeV3VLForConditionalGeneration",
        "FalconH1ForCausalLM",
        "GraniteMoeHybridForCausalLM",
        "Glm5NextForConditionalGeneration",
        "NemotronHForCausalLM",
        "NemotronHPuzzleForCausalLM",
        "NemotronH_Omni_Reasoning_V3",
        "KimiK3ForConditionalGeneration",
        "InklingForConditionalGeneration",
        "InklingForConditionalGenerationMTP",
    }
)


@dataclass(frozen=True, slots=True)
class SglangReservation:
    """What SGLang 0.5.23 reserves on one tensor-parallel rank, with the inputs and the
    assumptions behind it. Byte counts are exact integers; ``None`` where the inputs do not
    determine a figure (no ``available_memory``)."""

    model_type: str
    family: str
    architecture: str
    source: str | None
    tp_size: int
    gpu_arch: str
    state_layers: int
    conv_dtype: str
    conv_dtype_rule: str
    ssm_dtype: str
    ssm_dtype_rule: str
    per_request_bytes: int
    available_memory: int | None
    mamba_full_memory_ratio: float
    mamba_radix_cache_strategy: str
    strategy_rule: str
    overlap_schedule: bool
    disable_radix_cache: bool
    ratio: int
    slots: int
    slots_rule: str
    pool_bytes: int
    max_running_requests: int
    max_running_requests_rule: str
    speculative_num_draft_tokens: int
    speculative_scratch_bytes: int
    speculative_ssm_scratch_bytes: int
    speculative_conv_scratch_bytes: int
    kv_cache_bytes: int | None
    kv_bytes_per_token: int
    kv_bytes_per_token_rule: str
    kv_tokens: int | None
    requested_requests: int
    slots_for_requested: int
    pool_bytes_for_requested: int
    naive_state_bytes: int
    context_length: int
    context_length_rule: str
    max_total_tokens: int | None
    assumptions: tuple[str, ...]

    @property
    def multiplier(self) -> float:
        """What really admitting ``requested_requests`` takes (``pool_bytes_for_requested``)
        over the naive figure, ``requested_requests`` x per request."""
        naive = self.naive_state_bytes
        return self.pool_bytes_for_requested / naive if naive else 1.0

    def as_dict(self) -> dict[str, object]:
        """Every field, tuples as lists, and the multiplier: ready for ``json.dumps``."""
        fields = asdict(self)
        fields["assumptions"] = list(self.assumptions)
        fields["multiplier"] = self.multiplier
        return fields


def _architecture(root: Mapping[str, Any]) -> str:
    """The model class SGLang builds: ``architectures[0]`` (overrides.py:458)."""
    names = root.get("architectures")
    if isinstance(names, list) and names and isinstance(names[0], str):
        return names[0]
    raise ModelConfigError(
        "field 'architectures': missing; SGLang picks the model class, and with it the cache "
        "strategy, from architectures[0]",
        field="architectures",
    )


def _strategy(
    requested: str, architecture: str, layer_types: object, disable_radix_cache: bool
) -> tuple[str, str, bool]:
    """(strategy, the rule that chose it, overlap scheduler on), as
    ``_mamba_radix_cache_resolution`` (overrides.py:453-487) and ``handle_mamba_radix_cache``
    (model_hook.py:1050-1075) resolve them for a default launch (overlap on, page size 1)."""
    if disable_radix_cache:
        return "none", "--disable-radix-cache", True
    radix = architecture in _MAMBA_RADIX_CACHE_ARCHS or (
        architecture == "GraniteMoeHybridForCausalLM"
        and isinstance(layer_types, list)
        and "mamba" in layer_types
    )
    if not radix:
        if requested != "auto":
            raise fail(
                "mamba_radix_cache_strategy",
                f"{requested} needs the hybrid-mamba radix cache, which SGLang does not use "
                f"for {architecture} (model_hook.py:1059-1066)",
            )
        return "auto", f"{architecture} is not a mamba-radix-cache architecture", True
    extra_buffer = architecture in _MAMBA_EXTRA_BUFFER_ARCHS
    if requested == "auto":
        if extra_buffer:
            return "extra_buffer", "auto: overlap scheduler on, architecture supports it", True
        return "no_buffer", "auto: architecture has no extra_buffer; overlap turned off", False
    if requested != "no_buffer" and not extra_buffer:
        raise fail(
            "mamba_radix_cache_strategy",
            f"SGLang 0.5.23 supports {requested} only for its extra_buffer architectures, not "
            f"{architecture} (overrides.py:403-451)",
        )
    return requested, "flag", True


def _speculative_scratch(state: SsmState, requests: int, draft_tokens: int) -> tuple[int, int]:
    """(``intermediate_ssm_state_cache``, the conv windows) per draft token, for
    ``requests + 1`` rows (memory_pool.py:864-965): CUDA with a linear draft chain keeps one
    deduplicated window of ``D + K - 2`` columns per row (``conv_window_dedup_enabled``,
    :135-150; ``_allocate_deduplicated_conv_window``, :598-636), except KDA, whose windows stay
    dense (``KimiLinearStateShape.disable_conv_window_dedup``, configs/mamba_utils.py:305)."""
    if draft_tokens == 0:
        return 0, 0
    rows = requests + 1
    ssm = conv = 0
    for group in state.groups:
        layers = len(group.layer_indices)
        for tensor in group.tensors:
            if not tensor.name.startswith("conv"):
                ssm += layers * rows * draft_tokens * tensor.bytes
            elif group.kind == "kda":
                conv += layers * rows * draft_tokens * tensor.bytes
            else:
                # (channels, K - 1): the window axis grows to D + (K - 1) - 1 columns.
                channels, window = tensor.shape[0], tensor.shape[-1]
                width = DTYPE_BYTES[tensor.dtype]
                conv += layers * rows * channels * (draft_tokens + window - 1) * width
    return ssm, conv


def sglang_reservation(
    config: ConfigSource,
    *,
    tp_size: int = 1,
    available_memory: int | None = None,
    max_mamba_cache_size: int | None = None,
    mamba_full_memory_ratio: float = 0.9,
    mamba_radix_cache_strategy: str = "auto",
    disable_radix_cache: bool = False,
    max_running_requests: int | None = None,
    speculative_num_draft_tokens: int = 0,
    mamba_ssm_dtype: str | None = None,
    context_length: int | None = None,
    max_total_tokens: int | None = None,
    gpu_arch: str = "sm90",
) -> SglangReservation:
    """What SGLang 0.5.23 reserves for the recurrent state of the model ``config`` describes, on
    one of ``tp_size`` ranks, launched with these flags (SGLang's names and defaults).
    ``available_memory`` is the post-weights budget per rank in bytes (the ``rest`` that
    ``_handle_max_mamba_cache`` receives); it sizes the pool unless ``max_mamba_cache_size`` (or
    ``disable_radix_cache`` with ``max_running_requests``) fixes it, and it is needed for
    ``kv_cache_bytes``, the KV pool's tokens and so the running-request cap SGLang derives from
    them.
    ``speculative_num_draft_tokens > 0`` means EAGLE/NEXTN speculation with topk 1.
    ``context_length`` (default: SGLang's reading of the config) enters that cap; one longer
    than the config's is refused, as SGLang refuses it. ``max_total_tokens`` caps the KV pool's
    tokens (``_apply_token_constraints``, kv_cache_configurator.py:3090-3117).

    Raises ``ServerArgumentError`` (a ``ValueError`` naming the argument) for a value SGLang
    refuses, for a budget that holds no state slot, and for what is not modelled;
    ``ModelConfigError`` / ``TensorParallelSplitError`` as ``ssm_state`` does; ``TypeError``
    for an argument of the wrong type."""
    tp = check_count("tp_size", tp_size, 1)
    budget = check_optional_count("available_memory", available_memory, 0)
    slots_given = check_optional_count("max_mamba_cache_size", max_mamba_cache_size, 0)
    ratio_flag = check_ratio("mamba_full_memory_ratio", mamba_full_memory_ratio)
    requested = check_choice(
        "mamba_radix_cache_strategy", mamba_radix_cache_strategy, MAMBA_RADIX_CACHE_STRATEGIES
    )
    radix_off = check_flag("disable_radix_cache", disable_radix_cache)
    running_given = check_optional_count("max_running_requests", max_running_requests, 1)
    draft = check_count("speculative_num_draft_tokens", speculative_num_draft_tokens, 0)
    if mamba_ssm_dtype is not None:
        check_choice("mamba_ssm_dtype", mamba_ssm_dtype, MAMBA_SSM_DTYPES)
    context = check_optional_count("context_length", context_length, 1)
    token_limit = check_optional_count("max_total_tokens", max_total_tokens, 1)
    arch = check_choice("gpu_arch", gpu_arch, tuple(GPU_ARCHS))

    root, family_fields = load_config(config)
    state = ssm_state(config, tp_size=tp, layout="sglang", ssm_dtype=mamba_ssm_dtype)
    if state.ssm_layers == 0:
        raise ModelConfigError(
            f"{state.model_type}: no recurrent layer, so SGLang keeps no state pool for it",
            family=state.family,
            field="model_type",
        )
    architecture = _architecture(root)
    context_len, context_rule = _context_length(family_fields, context)
    strategy, strategy_rule, overlap = _strategy(
        requested, architecture, family_fields.get("layer_types"), radix_off
    )
    # _calculate_mamba_ratio (kv_cache_configurator.py:3062-3088), SGLANG_OPT_MAMBA_SKIP_
    # DECODE_LOCK unset (sglang/srt/environ.py:1637).
    ratio = 1 if radix_off else _BASE_RATIO + _TRACKING_SLOTS.get(strategy, 0)
    per_req = state.per_sequence_bytes
    assumptions = [
        "CUDA, one attention data-parallel rank, one pipeline stage, page size 1",
        "no ReplaySSM, no fused draft state, no multimodal reserve",
    ]
    running_default = None
    if draft:
        assumptions.append(
            "speculation is EAGLE/NEXTN with topk 1 and adds no draft-model KV; conv windows "
            "deduplicated (CUDA, linear chain)"
        )
        if running_given is None:
            running_default = _SPECULATIVE_MAX_RUNNING_REQUESTS
    running = running_given if running_given is not None else running_default
    if strategy == "no_buffer" and not overlap:
        assumptions.append("no_buffer runs without the overlap scheduler, as SGLang pairs them")

    rest = None if budget is None else budget / _GIB
    if slots_given is not None:
        slots = slots_given
        slots_rule = "--max-mamba-cache-size"
        if draft and rest is not None:
            capped = min(max(1, running or 1), slots // ratio)
            rest = rest - (per_req * (capped + 1) * draft / _GIB)
    elif radix_off and running is not None:
        slots = max(1, running)
        slots_rule = "--disable-radix-cache with max_running_requests"
        if draft and rest is not None:
            rest = rest - (per_req * (slots + 1) * draft / _GIB)
    else:
        if rest is None:
            raise fail(
                "available_memory",
                "needed: SGLang sizes the state pool from the memory left after the weights "
                "(or give max_mamba_cache_size)",
            )
        mamba_budget_bytes = rest * ratio_flag / (1 + ratio_flag) * _GIB
        if draft:
            slots = int(
                (mamba_budget_bytes - per_req * (1 + draft)) // (per_req * (1 + draft / ratio))
            )
            capped = min(max(1, running or 1), slots // ratio)
            rest = rest - (per_req * (capped + 1) * draft / _GIB)
        else:
            slots = int((mamba_budget_bytes - per_req) // per_req)
        slots_rule = f"{ratio_flag:g}/(1+{ratio_flag:g}) of available_memory, one slot padding"
    if slots <= 0:
        raise _no_slot(budget, per_req, slots_given)
    pool = (slots + 1) * per_req
    kv_bytes = None
    if rest is not None:
        left = rest - pool / _GIB
        if left <= 0:
            raise fail(
                "available_memory",
                f"{budget} B leaves no memory for the KV cache after the state pool of "
                f"{pool} B; SGLang refuses to start (kv_cache_configurator.py:3042-3058)",
            )
        kv_bytes = int(left * _GIB)

    kv_per_token, kv_rule = _kv_bytes_per_token(state, architecture, family_fields, tp)
    if _is_dsa(architecture, root, family_fields):
        indexer, indexer_rule = _dsa_indexer_bytes_per_token(state, root, family_fields)
        kv_per_token += indexer
        kv_rule += f" + DSA indexer {indexer_rule}"
    # DefaultPoolConfigurator.calculate_pool_sizes (pool_configurator.py:623-634): page size 1;
    # with no attention layer the pool is sized to the context (:243-248).
    kv_tokens = None
    if kv_bytes is not None:
        kv_tokens = kv_bytes // kv_per_token if kv_per_token else token_limit or context_len
        if token_limit is not None:
            kv_tokens = min(kv_tokens, token_limit)
    cap = slots // ratio
    if running is not None:
        wanted = running
        running_rule = (
            f"--max-running-requests {running}"
            if running_given is not None
            else "48 for speculative decoding"
        )
    elif kv_tokens is not None:
        estimate = int(kv_tokens / context_len * _ESTIMATE_REQUESTS_PER_CONTEXT)
        wanted = max(min(estimate, _ESTIMATE_CEILING), _ESTIMATE_FLOOR)
        running_rule = (
            f"SGLang's estimate clamp({kv_tokens} KV tokens / context {context_len} x "
            f"{_ESTIMATE_REQUESTS_PER_CONTEXT}, {_ESTIMATE_FLOOR}, {_ESTIMATE_CEILING})"
        )
    else:
        wanted = _ESTIMATE_CEILING
        running_rule = (
            f"SGLang's estimate from the KV pool, at most {_ESTIMATE_CEILING} (without "
            "available_memory the KV pool's tokens, and so the estimate, are unknown: an upper "
            "bound)"
        )
    capped_running = min(wanted, cap)
    running_rule = f"min({running_rule}, slots {slots} // ratio {ratio}"
    if kv_tokens is not None:
        capped_running = min(capped_running, kv_tokens // 2)
        running_rule += f", {kv_tokens} KV tokens // 2"
    running_rule += ")"
    if capped_running <= 0:
        field = "max_mamba_cache_size" if slots_given is not None else "available_memory"
        short = (
            f"{slots} state slots at {ratio} per request serve"
            if cap <= 0
            else f"a KV pool of {kv_tokens} tokens (requests are capped at tokens // 2) serves"
        )
        raise ServerArgumentError(
            f"argument {field}: {short} no request; SGLang refuses to start "
            "(kv_cache_configurator.py:3160-3168)",
            field=field,
        )
    # What the operator asked to run (else what runs): it takes ratio slots each.
    requested_requests = running if running is not None else capped_running
    ssm_scratch, conv_scratch = _speculative_scratch(state, capped_running, draft)
    return SglangReservation(
        model_type=state.model_type,
        family=state.family,
        architecture=architecture,
        source=state.source,
        tp_size=tp,
        gpu_arch=arch,
        state_layers=state.ssm_layers,
        conv_dtype=state.conv_dtype,
        conv_dtype_rule=state.conv_dtype_rule,
        ssm_dtype=state.ssm_dtype,
        ssm_dtype_rule=state.ssm_dtype_rule
        if mamba_ssm_dtype is None
        else "--mamba-ssm-dtype (SGLANG_MAMBA_SSM_DTYPE)",
        per_request_bytes=per_req,
        available_memory=budget,
        mamba_full_memory_ratio=ratio_flag,
        mamba_radix_cache_strategy=strategy,
        strategy_rule=strategy_rule,
        overlap_schedule=overlap,
        disable_radix_cache=radix_off,
        ratio=ratio,
        slots=slots,
        slots_rule=slots_rule,
        pool_bytes=pool,
        max_running_requests=capped_running,
        max_running_requests_rule=running_rule,
        speculative_num_draft_tokens=draft,
        speculative_scratch_bytes=ssm_scratch + conv_scratch,
        speculative_ssm_scratch_bytes=ssm_scratch,
        speculative_conv_scratch_bytes=conv_scratch,
        kv_cache_bytes=kv_bytes,
        kv_bytes_per_token=kv_per_token,
        kv_bytes_per_token_rule=kv_rule,
        kv_tokens=kv_tokens,
        requested_requests=requested_requests,
        slots_for_requested=requested_requests * ratio,
        pool_bytes_for_requested=(requested_requests * ratio + 1) * per_req,
        naive_state_bytes=requested_requests * per_req,
        context_length=context_len,
        context_length_rule=context_rule,
        max_total_tokens=token_limit,
        assumptions=tuple(assumptions),
    )


def _context_length(text: Mapping[str, Any], given: int | None) -> tuple[int, str]:
    """(``ModelConfig.context_len``, its rule): ``--context-length`` when it is at most what
    ``get_context_length`` reads from the text config (common.py:677-695: the first of
    ``_CONTEXT_LENGTH_KEYS``, times a RoPE scaling factor, else 2048), which SGLang refuses to
    exceed (``_derive_context_length``, configs/model_config.py:1291-1316, without
    SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN). Fields transformers' config class would
    default are not read: a key missing from the file is missing here."""
    scaling = text.get("rope_scaling")
    factor: Any = 1
    if isinstance(scaling, Mapping) and scaling:
        factor = scaling.get("factor", 1)
        if "original_max_position_embeddings" in scaling or scaling.get("rope_type") == "llama3":
            factor = 1
    derived, rule = _DEFAULT_CONTEXT_LENGTH, "no context-length field: SGLang's default"
    for key in _CONTEXT_LENGTH_KEYS:
        value = text.get(key)
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int):
                raise ModelConfigError(f"field {key!r}: {value!r} is not an integer", field=key)
            derived = int(factor * value) if isinstance(factor, int | float) else value
            rule = f"config {key}" + (f" x RoPE factor {factor}" if factor != 1 else "")
            break
    if given is None:
        return derived, rule
    if given > derived:
        raise fail(
            "context_length",
            f"{given} is longer than the model's {derived} ({rule}); SGLang refuses it "
            "(configs/model_config.py:1295-1316)",
        )
    return given, "--context-length"


def _kv_bytes_per_token(
    state: SsmState, architecture: str, text: Mapping[str, Any], tp: int
) -> tuple[int, str]:
    """(KV cache bytes per token on one rank, its rule), as
    ``DefaultPoolConfigurator._compute_cell_size`` (pool_configurator.py:340-534) sizes it for
    the full-attention layers (:226-235) with the auto KV dtype: MLA keeps one latent of
    ``kv_lora_rank + qk_rope_head_dim`` per layer (``calculate_mla_kv_cache_dim``,
    kv_cache_configurator.py:3412-3423; BailingMoeV3 with ``use_mla_nope`` drops the rope
    part, configs/model_config.py:1420-1431), other attention ``max(1, kv_heads // tp)`` heads
    of ``head_dim + v_head_dim`` (``get_num_kv_heads``, :1700-1711)."""
    attention = state.attention
    if attention is None:
        return 0, "no attention layer: no KV cache"
    layers = len(attention.layer_indices)
    if attention.mla:
        rank, rope = attention.kv_lora_rank or 0, attention.qk_rope_head_dim or 0
        if architecture in _MLA_NOPE_ARCHS and text.get("use_mla_nope"):
            rope = 0
        return (
            (rank + rope) * layers * _KV_ELEMENT_BYTES,
            f"MLA ({rank} + {rope}) x {layers} layers x {_KV_ELEMENT_BYTES} B",
        )
    heads = max(1, attention.num_key_value_heads // tp)
    width = attention.head_dim + attention.v_head_dim
    return (
        heads * width * layers * _KV_ELEMENT_BYTES,
        f"{heads} KV heads x ({attention.head_dim} + {attention.v_head_dim}) x {layers} layers "
        f"x {_KV_ELEMENT_BYTES} B",
    )


def _is_dsa(architecture: str, root: Mapping[str, Any], text: Mapping[str, Any]) -> bool:
    """``is_deepseek_dsa`` (configs/model_config.py:191-211): a DeepSeek-sparse-attention
    architecture with an ``index_topk``, which keeps an indexer's keys beside the latent KV."""
    return architecture in _DSA_ARCHS and _field(root, text, "index_topk") is not None


def _field(root: Mapping[str, Any], text: Mapping[str, Any], name: str) -> Any:
    """``name`` as SGLang's config object answers it: the whole config's, else its text
    config's (SGLang's wrapper configs carry their text fields)."""
    value = root.get(name)
    return text.get(name) if value is None else value


def _dsa_indexer_bytes_per_token(
    state: SsmState, root: Mapping[str, Any], text: Mapping[str, Any]
) -> tuple[int, str]:
    """(the DSA indexer's bytes per token on one rank, its rule), as
    ``_compute_dsa_indexer_cell_size`` (pool_configurator.py:564-640) sizes it with no context
    parallelism and no hisparse: ``ceil((index_head_dim + index_head_dim // 128 x 4) /
    index_kpool)`` uint8 bytes (``DSATokenToKVPool``, mem_cache/memory_pool.py:5280-5281) for
    each attention layer that computes its own top-k (``dsa_layer_skips_topk``,
    configs/model_config.py:488-522)."""
    head_dim = _int_field(root, text, "index_head_dim")
    kpool = _int_field(root, text, "index_kpool", default=1)
    per_layer = -(-(head_dim + head_dim // _DSA_QUANT_BLOCK * 4) // kpool)
    attention = state.attention
    layer_ids = attention.layer_indices if attention is not None else ()
    fresh = [layer for layer in layer_ids if not _skips_topk(root, text, layer)]
    return (
        per_layer * len(fresh),
        f"ceil(({head_dim} + {head_dim} // {_DSA_QUANT_BLOCK} x 4) / {kpool}) x {len(fresh)} "
        "layers x 1 B",
    )


def _int_field(
    root: Mapping[str, Any], text: Mapping[str, Any], name: str, default: int | None = None
) -> int:
    value = _field(root, text, name)
    if value is None and default is not None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ModelConfigError(f"field {name!r}: {value!r} is not a positive integer", field=name)
    return value


def _skips_topk(root: Mapping[str, Any], text: Mapping[str, Any], layer: int) -> bool:
    """``dsa_layer_skips_topk`` (configs/model_config.py:488-522): whether DSA layer ``layer``
    reuses the previous layer's top-k indices, and so keeps no indexer keys."""
    kinds = _field(root, text, "indexer_types")
    if isinstance(kinds, list):
        return layer < len(kinds) and kinds[layer] == "shared"
    factor = _field(root, text, "cli_factor") or 1
    if isinstance(factor, int) and factor > 1:
        return layer % factor != 0
    pattern = _field(root, text, "index_topk_pattern")
    if isinstance(pattern, list | str):
        return layer < len(pattern) and pattern[layer] == "S"
    frequency = _field(root, text, "index_topk_freq") or 1
    offset = _field(root, text, "index_skip_topk_offset")
    if not isinstance(frequency, int) or frequency <= 0:
        raise ModelConfigError(
            f"field 'index_topk_freq': {frequency!r} is not a positive integer",
            field="index_topk_freq",
        )
    if isinstance(offset, int) and offset > 0:
        return max(layer - offset + 1, 0) % frequency != 0
    return max(layer - 1, 0) % frequency != 0


def _no_slot(budget: int | None, per_req: int, slots_given: int | None) -> ServerArgumentError:
    """SGLang's refusal of a pool of no slot (kv_cache_configurator.py:3386-3399)."""
    if slots_given is not None:
        return fail("max_mamba_cache_size", "0 state slots: SGLang refuses to start")
    return fail(
        "available_memory",
        f"{budget} B holds no state slot of {per_req} B (with one padding slot); SGLang "
        "refuses to start",
    )
