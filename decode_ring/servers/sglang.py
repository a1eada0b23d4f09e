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

``sglang_reservation`` runs SGLang's steps in its order, one function each, named after the
SGLang code it mirrors and returning a small frozen value whose fields are the reservation's
fields of the same names: ``_derive_context_length``, ``_mamba_radix_cache_resolution``,
``_calculate_mamba_ratio``, ``_handle_eagle_family``, ``_handle_max_mamba_cache``,
``_compute_cell_size``, ``calculate_pool_sizes``, ``resolve_max_num_reqs`` and the speculative
scratch (``_speculative_scratch``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any, Final

from ..models import DTYPE_BYTES, KINDS, ConfigSource, ModelConfigError
from ..models.attention import dsa_indexer
from ..models.read import class_fields
from ..releases import SGLANG
from .common import (
    GPU_ARCHS,
    HybridModel,
    ServerArgumentError,
    check_choice,
    check_count,
    check_flag,
    check_optional_count,
    check_ratio,
    fail,
    hybrid_model,
)

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
# The architectures of a linear-attention spec that uses the mamba radix cache and supports no
# extra buffer (register_linear_attn_model: GigaChat35, S:sglang/srt/configs/gigachat35.py:
# 241-252), which get_linear_attn_spec finds by the config (overrides.py:470-473).
_LINEAR_ATTN_RADIX_ARCHS: Final = frozenset({"GigaChat35ForCausalLM", "GigaChat35ForCausalLMNextN"})
# SGLang keys Granite's radix cache by its config class's layer_types (overrides.py:462-466).
_GRANITE: Final = "GraniteMoeHybridForCausalLM"
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


def _fields(*steps: Any) -> dict[str, Any]:
    """The fields of the steps' frozen values, which are the reservation's fields of the same
    names."""
    return {field.name: getattr(step, field.name) for step in steps for field in fields(step)}


@dataclass(frozen=True, slots=True)
class _Launch:
    """The launch's flags, checked as SGLang's argument parsing checks them
    (``ServerArgumentError`` for a value SGLang refuses or this module does not model)."""

    tp_size: int
    available_memory: int | None
    max_mamba_cache_size: int | None
    mamba_full_memory_ratio: float
    mamba_radix_cache_strategy: str
    disable_radix_cache: bool
    max_running_requests: int | None
    speculative_num_draft_tokens: int
    mamba_ssm_dtype: str | None
    context_length: int | None
    max_total_tokens: int | None
    gpu_arch: str

    def __post_init__(self) -> None:
        check_count("tp_size", self.tp_size, 1)
        check_optional_count("available_memory", self.available_memory, 0)
        check_optional_count("max_mamba_cache_size", self.max_mamba_cache_size, 0)
        ratio = check_ratio("mamba_full_memory_ratio", self.mamba_full_memory_ratio)
        object.__setattr__(self, "mamba_full_memory_ratio", ratio)
        check_choice(
            "mamba_radix_cache_strategy",
            self.mamba_radix_cache_strategy,
            MAMBA_RADIX_CACHE_STRATEGIES,
        )
        check_flag("disable_radix_cache", self.disable_radix_cache)
        check_optional_count("max_running_requests", self.max_running_requests, 1)
        check_count("speculative_num_draft_tokens", self.speculative_num_draft_tokens, 0)
        if self.mamba_ssm_dtype is not None:
            check_choice("mamba_ssm_dtype", self.mamba_ssm_dtype, MAMBA_SSM_DTYPES)
        check_optional_count("context_length", self.context_length, 1)
        check_optional_count("max_total_tokens", self.max_total_tokens, 1)
        check_choice("gpu_arch", self.gpu_arch, tuple(GPU_ARCHS))


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
    launch = _Launch(
        tp_size=tp_size,
        available_memory=available_memory,
        max_mamba_cache_size=max_mamba_cache_size,
        mamba_full_memory_ratio=mamba_full_memory_ratio,
        mamba_radix_cache_strategy=mamba_radix_cache_strategy,
        disable_radix_cache=disable_radix_cache,
        max_running_requests=max_running_requests,
        speculative_num_draft_tokens=speculative_num_draft_tokens,
        mamba_ssm_dtype=mamba_ssm_dtype,
        context_length=context_length,
        max_total_tokens=max_total_tokens,
        gpu_arch=gpu_arch,
    )
    model = hybrid_model(
        config, SGLANG, "sglang", "keeps no state pool", tp_size=tp_size, ssm_dtype=mamba_ssm_dtype
    )
    architecture = _architecture(model.config.mapping)
    context = _derive_context_length(model.text, launch.context_length)
    strategy = _mamba_radix_cache_resolution(launch, architecture, model)
    ratio = _calculate_mamba_ratio(launch, strategy)
    running = _handle_eagle_family(launch)
    cache = _handle_max_mamba_cache(model, launch, ratio.ratio, running)
    cell = _compute_cell_size(model, architecture)
    tokens = _calculate_pool_sizes(launch, cache, cell, context)
    requests = _resolve_max_num_reqs(launch, ratio.ratio, running, cache, tokens, context)
    scratch = _speculative_scratch(model, requests.max_running_requests, launch)
    steps = (context, strategy, ratio, cache, cell, tokens, requests, scratch)
    return _reservation(model, launch, architecture, running, _fields(*steps))


# --- the steps ------------------------------------------------------------------------------


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


@dataclass(frozen=True, slots=True)
class _ContextLength:
    context_length: int
    context_length_rule: str


def _derive_context_length(text: Mapping[str, Any], given: int | None) -> _ContextLength:
    """``ModelConfig.context_len``: ``--context-length`` when it is at most what
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
        return _ContextLength(derived, rule)
    if given > derived:
        raise fail(
            "context_length",
            f"{given} is longer than the model's {derived} ({rule}); SGLang refuses it "
            "(configs/model_config.py:1295-1316)",
        )
    return _ContextLength(given, "--context-length")


@dataclass(frozen=True, slots=True)
class _Strategy:
    mamba_radix_cache_strategy: str
    strategy_rule: str
    overlap_schedule: bool


def _mamba_radix_cache_resolution(
    launch: _Launch, architecture: str, model: HybridModel
) -> _Strategy:
    """The strategy, the rule that chose it and whether the overlap scheduler runs, as
    ``_mamba_radix_cache_resolution`` (overrides.py:453-487) and ``handle_mamba_radix_cache``
    (model_hook.py:1048-1077, mamba_hook.py:115-163) resolve and check them for a default
    launch (overlap on, page size 1). SGLang keys the radix cache by the architecture (its lists,
    and a linear-attention spec's, ``_LINEAR_ATTN_RADIX_ARCHS``), and Granite by its config
    class's ``layer_types``, which SGLang's class names ``mamba`` (``class_fields``). An
    architecture without it ignores ``no_buffer`` and refuses the extra-buffer strategies."""
    requested = launch.mamba_radix_cache_strategy
    radix = architecture in _MAMBA_RADIX_CACHE_ARCHS or architecture in _LINEAR_ATTN_RADIX_ARCHS
    if architecture == _GRANITE:
        kinds = class_fields(model.config, layout="sglang").get("layer_types")
        radix = isinstance(kinds, list) and "mamba" in kinds
    if launch.disable_radix_cache or not radix:
        if requested in ("extra_buffer", "extra_buffer_lazy"):
            raise fail(
                "mamba_radix_cache_strategy",
                f"{requested} needs mamba state, got {architecture}: {SGLANG} refuses it where "
                "the mamba radix cache is off (sglang/srt/arg_groups/model_hook.py:1059-1066)",
            )
        if launch.disable_radix_cache:
            return _Strategy("none", "--disable-radix-cache", True)
        ignored = "; --mamba-radix-cache-strategy no_buffer ignored" if requested != "auto" else ""
        rule = f"{architecture} is not a mamba-radix-cache architecture{ignored}"
        return _Strategy("auto", rule, True)
    extra_buffer = architecture in _MAMBA_EXTRA_BUFFER_ARCHS
    if requested == "auto":
        if extra_buffer:
            return _Strategy(
                "extra_buffer", "auto: overlap scheduler on, architecture supports it", True
            )
        return _Strategy(
            "no_buffer", "auto: architecture has no extra_buffer; overlap turned off", False
        )
    if requested == "no_buffer":
        raise fail(
            "mamba_radix_cache_strategy",
            f"no_buffer needs --disable-overlap-schedule, which {SGLANG} asserts "
            "(sglang/srt/arg_groups/mamba_hook.py:156-160) and this package does not model; "
            "auto resolves no_buffer without the overlap scheduler where extra_buffer is not "
            "supported",
        )
    if not extra_buffer:
        raise fail(
            "mamba_radix_cache_strategy",
            f"{requested} is not supported for {architecture}; use no_buffer: {SGLANG} asserts "
            "it (sglang/srt/arg_groups/mamba_hook.py:115-119, overrides.py:403-451)",
        )
    return _Strategy(requested, "flag", True)


@dataclass(frozen=True, slots=True)
class _MambaRatio:
    ratio: int


def _calculate_mamba_ratio(launch: _Launch, strategy: _Strategy) -> _MambaRatio:
    """``_calculate_mamba_ratio`` (kv_cache_configurator.py:3062-3088), with
    SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK unset (sglang/srt/environ.py:1637): the state slots one
    request may hold."""
    if launch.disable_radix_cache:
        return _MambaRatio(1)
    return _MambaRatio(_BASE_RATIO + _TRACKING_SLOTS.get(strategy.mamba_radix_cache_strategy, 0))


def _handle_eagle_family(launch: _Launch) -> int | None:
    """The running requests asked for: ``--max-running-requests``, else 48 under speculative
    decoding (``_handle_eagle_family``, speculative_hook.py:1086-1094), else ``None`` (SGLang
    estimates it from the KV pool)."""
    if launch.max_running_requests is not None:
        return launch.max_running_requests
    return _SPECULATIVE_MAX_RUNNING_REQUESTS if launch.speculative_num_draft_tokens else None


@dataclass(frozen=True, slots=True)
class _MambaCache:
    slots: int
    slots_rule: str
    pool_bytes: int
    kv_cache_bytes: int | None


def _handle_max_mamba_cache(
    model: HybridModel, launch: _Launch, ratio: int, running: int | None
) -> _MambaCache:
    """``_handle_max_mamba_cache`` (kv_cache_configurator.py:3229-3409): the state slots ``K``
    (``--max-mamba-cache-size``; with the radix cache off, the running requests; else ``r / (1 +
    r)`` of the memory after the weights less one padding slot, and the speculative scratch of
    the capped running requests), the pool of ``K + 1`` slots (``MambaPool``,
    memory_pool.py:722-753), and what is left for the KV pool (:3042-3058)."""
    per_req, draft = model.state.per_sequence_bytes, launch.speculative_num_draft_tokens
    budget, slots_given = launch.available_memory, launch.max_mamba_cache_size
    rest = None if budget is None else budget / _GIB
    served = None  # the running requests the scratch is kept for, where the slots are they
    if slots_given is not None:
        slots, rule = slots_given, "--max-mamba-cache-size"
    elif launch.disable_radix_cache and running is not None:
        slots, rule = max(1, running), "--disable-radix-cache with max_running_requests"
        served = slots
    elif rest is None:
        raise fail(
            "available_memory",
            "needed: SGLang sizes the state pool from the memory left after the weights "
            "(or give max_mamba_cache_size)",
        )
    else:
        ratio_flag = launch.mamba_full_memory_ratio
        mamba_budget_bytes = rest * ratio_flag / (1 + ratio_flag) * _GIB
        spent = per_req * (1 + draft)
        slots = int((mamba_budget_bytes - spent) // (per_req * (1 + draft / ratio)))
        rule = f"{ratio_flag:g}/(1+{ratio_flag:g}) of available_memory, one slot padding"
    if draft and rest is not None:
        capped = served or min(max(1, running or 1), slots // ratio)
        rest -= per_req * (capped + 1) * draft / _GIB
    if slots <= 0:
        raise _no_slot(budget, per_req, slots_given)
    pool = (slots + 1) * per_req
    return _MambaCache(slots, rule, pool, _kv_cache_bytes(budget, rest, pool))


def _kv_cache_bytes(budget: int | None, rest: float | None, pool: int) -> int | None:
    """What is left for the KV pool after the state pool (kv_cache_configurator.py:3042-3058,
    :3409); SGLang refuses to start when nothing is."""
    if rest is None:
        return None
    left = rest - pool / _GIB
    if left <= 0:
        raise fail(
            "available_memory",
            f"{budget} B leaves no memory for the KV cache after the state pool of "
            f"{pool} B; SGLang refuses to start (kv_cache_configurator.py:3042-3058)",
        )
    return int(left * _GIB)


def _no_slot(budget: int | None, per_req: int, slots_given: int | None) -> ServerArgumentError:
    """SGLang's refusal of a pool of no slot (kv_cache_configurator.py:3386-3399)."""
    if slots_given is not None:
        return fail("max_mamba_cache_size", "0 state slots: SGLang refuses to start")
    return fail(
        "available_memory",
        f"{budget} B holds no state slot of {per_req} B (with one padding slot); SGLang "
        "refuses to start",
    )


@dataclass(frozen=True, slots=True)
class _CellSize:
    kv_bytes_per_token: int
    kv_bytes_per_token_rule: str


def _compute_cell_size(model: HybridModel, architecture: str) -> _CellSize:
    """KV cache bytes per token on one rank, as ``DefaultPoolConfigurator._compute_cell_size``
    (pool_configurator.py:340-534) sizes it for the full-attention layers (:226-235) with the
    auto KV dtype (``AttentionLayers.kv_bytes_per_token`` at 2 B an element): MLA without its
    RoPE part for BailingMoeV3 with ``use_mla_nope`` (configs/model_config.py:1420-1431), and a
    DeepSeek-sparse-attention indexer's keys for a DSA architecture with an ``index_topk``
    (``is_deepseek_dsa``, configs/model_config.py:191-211; ``_compute_dsa_indexer_cell_size``,
    pool_configurator.py:564-640, with no context parallelism and no hisparse)."""
    attention, tp = model.state.attention, model.state.tp_size
    if attention is None:
        return _CellSize(0, "no attention layer: no KV cache")
    rope = not (architecture in _MLA_NOPE_ARCHS and model.text.get("use_mla_nope"))
    root = model.config.mapping
    dsa = architecture in _DSA_ARCHS and _sglang_field(root, model.text, "index_topk") is not None
    indexer = dsa_indexer(root, model.text, attention) if dsa else None
    per_token = attention.kv_bytes_per_token(
        tp, _KV_ELEMENT_BYTES, latent_rope=rope, indexer=indexer
    )
    rule = attention.kv_terms(tp, _KV_ELEMENT_BYTES, latent_rope=rope)
    if indexer is not None:
        rule += f" + DSA indexer {indexer.rule}"
    return _CellSize(per_token, rule)


def _sglang_field(root: Mapping[str, Any], text: Mapping[str, Any], name: str) -> Any:
    """``name`` as SGLang's config object answers it: the whole config's, else its text
    config's."""
    value = root.get(name)
    return text.get(name) if value is None else value


@dataclass(frozen=True, slots=True)
class _PoolSizes:
    kv_tokens: int | None
    max_total_tokens: int | None


def _calculate_pool_sizes(
    launch: _Launch, cache: _MambaCache, cell: _CellSize, context: _ContextLength
) -> _PoolSizes:
    """The KV pool's tokens (``DefaultPoolConfigurator.calculate_pool_sizes``,
    pool_configurator.py:623-634, page size 1): what is left over the bytes per token; with no
    attention layer, the context (:243-248); at most ``--max-total-tokens``
    (``_apply_token_constraints``, kv_cache_configurator.py:3090-3117)."""
    limit = launch.max_total_tokens
    if cache.kv_cache_bytes is None:
        return _PoolSizes(None, limit)
    if cell.kv_bytes_per_token:
        tokens = cache.kv_cache_bytes // cell.kv_bytes_per_token
    else:
        tokens = limit or context.context_length
    return _PoolSizes(tokens if limit is None else min(tokens, limit), limit)


@dataclass(frozen=True, slots=True)
class _RunningRequests:
    max_running_requests: int
    max_running_requests_rule: str


def _resolve_max_num_reqs(
    launch: _Launch,
    ratio: int,
    running: int | None,
    cache: _MambaCache,
    tokens: _PoolSizes,
    context: _ContextLength,
) -> _RunningRequests:
    """``resolve_max_num_reqs`` (kv_cache_configurator.py:3119-3172): the requests asked for,
    else SGLang's estimate from the KV pool's tokens (``int(tokens / context_len * 512)``,
    clamped to [2048, 4096]), held to the slots over the ratio and to half the tokens; SGLang
    refuses to start when that serves no request (:3160-3168)."""
    kv_tokens, slots = tokens.kv_tokens, cache.slots
    if running is not None:
        wanted = running
        rule = (
            f"--max-running-requests {running}"
            if launch.max_running_requests is not None
            else "48 for speculative decoding"
        )
    elif kv_tokens is not None:
        estimate = int(kv_tokens / context.context_length * _ESTIMATE_REQUESTS_PER_CONTEXT)
        wanted = max(min(estimate, _ESTIMATE_CEILING), _ESTIMATE_FLOOR)
        rule = (
            f"SGLang's estimate clamp({kv_tokens} KV tokens / context {context.context_length} "
            f"x {_ESTIMATE_REQUESTS_PER_CONTEXT}, {_ESTIMATE_FLOOR}, {_ESTIMATE_CEILING})"
        )
    else:
        wanted = _ESTIMATE_CEILING
        rule = (
            f"SGLang's estimate from the KV pool, at most {_ESTIMATE_CEILING} (without "
            "available_memory the KV pool's tokens, and so the estimate, are unknown: an upper "
            "bound)"
        )
    capped = min(wanted, slots // ratio)
    rule = f"min({rule}, slots {slots} // ratio {ratio}"
    if kv_tokens is not None:
        capped = min(capped, kv_tokens // 2)
        rule += f", {kv_tokens} KV tokens // 2"
    if capped <= 0:
        field = (
            "max_mamba_cache_size"
            if launch.max_mamba_cache_size is not None
            else "available_memory"
        )
        short = (
            f"{slots} state slots at {ratio} per request serve"
            if slots // ratio <= 0
            else f"a KV pool of {kv_tokens} tokens (requests are capped at tokens // 2) serves"
        )
        raise fail(
            field,
            f"{short} no request; SGLang refuses to start (kv_cache_configurator.py:3160-3168)",
        )
    return _RunningRequests(capped, rule + ")")


@dataclass(frozen=True, slots=True)
class _SpeculativeScratch:
    speculative_num_draft_tokens: int
    speculative_scratch_bytes: int
    speculative_ssm_scratch_bytes: int
    speculative_conv_scratch_bytes: int


def _speculative_scratch(model: HybridModel, requests: int, launch: _Launch) -> _SpeculativeScratch:
    """``intermediate_ssm_state_cache`` and the conv windows per draft token, for ``requests +
    1`` rows (memory_pool.py:864-965): CUDA with a linear draft chain keeps one deduplicated
    window of ``D + K - 2`` columns per row (``conv_window_dedup_enabled``, :135-150;
    ``_allocate_deduplicated_conv_window``, :598-636) for a kind that deduplicates
    (``KindTraits.sglang_conv_dedup``), dense windows otherwise."""
    draft = launch.speculative_num_draft_tokens
    rows = requests + 1
    ssm = conv = 0
    for group in model.state.groups if draft else ():
        layers = len(group.layer_indices)
        for tensor in group.tensors:
            if not tensor.name.startswith("conv"):
                ssm += layers * rows * draft * tensor.bytes
            elif not KINDS[group.kind].sglang_conv_dedup:
                conv += layers * rows * draft * tensor.bytes
            else:
                # (channels, K - 1): the window axis grows to D + (K - 1) - 1 columns.
                channels, window = tensor.shape[0], tensor.shape[-1]
                conv += layers * rows * channels * (draft + window - 1) * DTYPE_BYTES[tensor.dtype]
    return _SpeculativeScratch(draft, ssm + conv, ssm, conv)


def _reservation(
    model: HybridModel,
    launch: _Launch,
    architecture: str,
    running: int | None,
    steps: dict[str, Any],
) -> SglangReservation:
    """The steps' values as one reservation, with the model, the launch and the assumptions;
    the requests asked to run (else those that run) take ``ratio`` slots each."""
    state, per_req = model.state, model.state.per_sequence_bytes
    assumptions = [
        "CUDA, one attention data-parallel rank, one pipeline stage, page size 1",
        "no ReplaySSM, no fused draft state, no multimodal reserve",
    ]
    if launch.speculative_num_draft_tokens:
        assumptions.append(
            "speculation is EAGLE/NEXTN with topk 1 and adds no draft-model KV; conv windows "
            "deduplicated (CUDA, linear chain)"
        )
    if not steps["overlap_schedule"]:
        assumptions.append("no_buffer runs without the overlap scheduler, as SGLang pairs them")
    ratio = steps["ratio"]
    asked = running if running is not None else steps["max_running_requests"]
    given_dtype = launch.mamba_ssm_dtype is not None
    return SglangReservation(
        model_type=state.model_type,
        family=state.family,
        architecture=architecture,
        source=state.source,
        tp_size=launch.tp_size,
        gpu_arch=launch.gpu_arch,
        state_layers=state.ssm_layers,
        conv_dtype=state.conv_dtype,
        conv_dtype_rule=state.conv_dtype_rule,
        ssm_dtype=state.ssm_dtype,
        ssm_dtype_rule="--mamba-ssm-dtype (SGLANG_MAMBA_SSM_DTYPE)"
        if given_dtype
        else state.ssm_dtype_rule,
        per_request_bytes=per_req,
        available_memory=launch.available_memory,
        mamba_full_memory_ratio=launch.mamba_full_memory_ratio,
        disable_radix_cache=launch.disable_radix_cache,
        requested_requests=asked,
        slots_for_requested=asked * ratio,
        pool_bytes_for_requested=(asked * ratio + 1) * per_req,
        naive_state_bytes=asked * per_req,
        assumptions=tuple(assumptions),
        **steps,
    )
