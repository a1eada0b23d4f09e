"""What an SGLang release reserves for a hybrid model's recurrent state, per tensor-parallel rank.

Each step reads the release's rules (``launch.rules``, a ``releases.sglang.SglangRules``), so one
launch is answered under any release from ``releases.sglang.MODELLED`` to the newest; an older
release is refused (``UnmodelledReleaseError``), and what the package models only from a later
release (``releases.sglang.COVERAGE``) is refused for the releases before it. The description and
the citations below are the newest release's (paths in its wheel); where a rule differs in an
older release, the step says so and names the rule.

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

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any, Final

from ..checkpoints import read_checkpoint
from ..models import DTYPE_BYTES, KINDS, ConfigSource, ModelConfigError, load_config, ssm_state
from ..models.attention import dsa_indexer
from ..models.read import class_fields
from ..printable import show
from ..releases import (
    SGLANG,
    SGLANG_RELEASES,
    ResolvedRelease,
    UnmodelledReleaseError,
    resolve_release,
)
from ..releases.sglang import COVERAGE, MODELLED, SglangRules, sglang_rules
from ..releases.versions import parse_version
from .common import (
    GPU_ARCHS,
    MAX_COUNT,
    Device,
    HybridModel,
    ServerArgumentError,
    capability_major,
    check_choice,
    check_count,
    check_dtype,
    check_flag,
    check_optional_count,
    check_ratio,
    device,
    fail,
    hybrid_model,
    multiple,
    overridden,
    scaled_context_length,
    within_64_bits,
)
from .weights import quantization_method, weights_per_rank

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
# Beyond this, rest x r overflows a float before SGLang divides it by 1 + r.
_LARGEST_RATIO: Final = 1e300
# MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO (kv_cache_configurator.py:227): the slots a request
# holds before the extra buffer's tracking slots (allocation_sizing.py:11-19) are added.
_BASE_RATIO: Final = 3
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
# --kv-cache-dtype values modelled (sglang/srt/arg_groups/fields: kv_cache_dtype's choices),
# with their bytes; None: the auto 2 B above.
_KV_CACHE_DTYPES: Final[Mapping[str, int | None]] = {
    "auto": None,
    "bf16": 2,
    "bfloat16": 2,
    "fp8_e4m3": 1,
    "fp8_e5m2": 1,
}

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
    """What an SGLang release reserves on one tensor-parallel rank, with the inputs and the
    assumptions behind it: ``server_version`` the release whose rules answer,
    ``server_version_note`` how the version asked for mapped to it. Byte counts are exact
    integers; ``None`` where the inputs do not determine a figure (no ``available_memory``)."""

    server_version: str
    server_version_note: str | None
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
    gpu_name: str | None
    gpu_memory_bytes: int | None
    gpu_memory_rule: str | None
    mem_fraction_static: float | None
    mem_fraction_static_rule: str
    chunked_prefill_size: int | None
    pre_model_load_bytes: int | None
    weights_bytes: int | None
    weights_rule: str
    quantization: str | None
    available_memory: int | None
    available_memory_rule: str
    kv_cache_dtype: str
    page_size: int
    page_size_rule: str
    mamba_full_memory_ratio: float | None
    mamba_radix_cache_strategy: str
    strategy_rule: str
    overlap_schedule: bool
    disable_radix_cache: bool
    ratio: int
    slots: int
    slots_rule: str
    pool_bytes: int
    pool_bytes_rule: str
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
    full_context_sequences: int | None
    log_lines: tuple[str, ...]
    assumptions: tuple[str, ...]

    @property
    def multiplier(self) -> float:
        """What really admitting ``requested_requests`` takes (``pool_bytes_for_requested``)
        over the naive figure, ``requested_requests`` x per request."""
        return multiple(self.pool_bytes_for_requested, self.naive_state_bytes)

    def as_dict(self) -> dict[str, object]:
        """Every field, tuples as lists, and the multiplier: ready for ``json.dumps``."""
        fields = asdict(self)
        fields["assumptions"] = list(self.assumptions)
        fields["log_lines"] = list(self.log_lines)
        fields["multiplier"] = self.multiplier
        return fields


def _fields(*steps: Any) -> dict[str, Any]:
    """The fields of the steps' frozen values, which are the reservation's fields of the same
    names; a field whose name starts with ``_`` passes between steps only."""
    return {
        field.name: getattr(step, field.name)
        for step in steps
        for field in fields(step)
        if not field.name.startswith("_")
    }


@dataclass(frozen=True, slots=True)
class _Launch:
    """The launch's flags, checked as SGLang's argument parsing checks them
    (``ServerArgumentError`` for a value SGLang refuses or this module does not model), and
    the release whose rules answer."""

    release: ResolvedRelease
    rules: SglangRules
    tp_size: int
    available_memory: int | None
    max_mamba_cache_size: int | None
    mamba_full_memory_ratio: float | None
    mamba_radix_cache_strategy: str
    disable_radix_cache: bool
    disable_overlap_schedule: bool
    max_running_requests: int | None
    speculative_num_draft_tokens: int
    mamba_ssm_dtype: str | None
    context_length: int | None
    max_total_tokens: int | None
    gpu_arch: str
    gpu: Device | None
    gpu_memory_bytes: int | None
    mem_fraction_static: float | None
    page_size: int | None
    kv_cache_dtype: str
    chunked_prefill_size: int | None
    dtype: str
    quantization: str | None
    json_model_override_args: Mapping[str, Any] | None
    weights_bytes: int | None
    draft_config: ConfigSource | None

    def __post_init__(self) -> None:
        check_count("tp_size", self.tp_size, 1)
        if self.mem_fraction_static is not None:
            fraction = check_ratio("mem_fraction_static", self.mem_fraction_static)
            if fraction >= 1:
                raise fail("mem_fraction_static", f"must be below 1, got {fraction!r}")
        check_optional_count("page_size", self.page_size, 1)
        check_choice("kv_cache_dtype", self.kv_cache_dtype, tuple(_KV_CACHE_DTYPES))
        check_optional_count("chunked_prefill_size", self.chunked_prefill_size, 1)
        check_dtype(self.dtype, ("auto", "bfloat16", "float16", "half"), "SGLang")
        check_optional_count("weights_bytes", self.weights_bytes, 0)
        check_optional_count("available_memory", self.available_memory, 0)
        check_optional_count("max_mamba_cache_size", self.max_mamba_cache_size, 0)
        if self.mamba_full_memory_ratio is not None:
            ratio = check_ratio("mamba_full_memory_ratio", self.mamba_full_memory_ratio)
            if ratio > _LARGEST_RATIO:
                raise fail(
                    "mamba_full_memory_ratio",
                    f"{ratio!r} overflows SGLang's rest x r / (1 + r) (at most {_LARGEST_RATIO:g})",
                )
            object.__setattr__(self, "mamba_full_memory_ratio", ratio)
        check_choice(
            "mamba_radix_cache_strategy",
            self.mamba_radix_cache_strategy,
            MAMBA_RADIX_CACHE_STRATEGIES,
        )
        check_flag("disable_radix_cache", self.disable_radix_cache)
        check_flag("disable_overlap_schedule", self.disable_overlap_schedule)
        check_optional_count("max_running_requests", self.max_running_requests, 1)
        check_count("speculative_num_draft_tokens", self.speculative_num_draft_tokens, 0)
        if self.mamba_ssm_dtype is not None:
            check_choice("mamba_ssm_dtype", self.mamba_ssm_dtype, MAMBA_SSM_DTYPES)
        check_optional_count("context_length", self.context_length, 1)
        check_optional_count("max_total_tokens", self.max_total_tokens, 1)
        check_choice("gpu_arch", self.gpu_arch, tuple(GPU_ARCHS))
        self._check_release()
        self._check_covered()

    def _check_release(self) -> None:
        """Refuse a value the release's own flags do not take."""
        release, rules = self.release.release, self.rules
        if self.mamba_radix_cache_strategy != "auto" and not rules.strategy_flag:
            raise fail(
                "mamba_radix_cache_strategy",
                f"{release} has no --mamba-scheduler-strategy (from 0.5.7, "
                "sglang-0.5.7:sglang/srt/server_args.py:193); its radix cache is no_buffer's",
            )
        if self.kv_cache_dtype not in rules.kv_cache_dtypes:
            raise fail(
                "kv_cache_dtype",
                f"{self.kv_cache_dtype} is not a choice of {release}'s --kv-cache-dtype "
                f"({', '.join(rules.kv_cache_dtypes)}; bf16 / bfloat16 from 0.5.4, "
                "sglang-0.5.4:sglang/srt/server_args.py:1789)",
            )
        dtype = self.mamba_ssm_dtype
        if dtype is not None and dtype not in rules.mamba_ssm_dtypes:
            raise fail(
                "mamba_ssm_dtype",
                f"{dtype} is not a choice of {release}'s --mamba-ssm-dtype "
                f"({', '.join(rules.mamba_ssm_dtypes)}; float16 from 0.5.9, "
                "sglang-0.5.9:sglang/srt/server_args.py:214)",
            )

    def _check_covered(self) -> None:
        """Refuse what the package does not model for this release (``COVERAGE``)."""
        wanted = {
            "speculative": ("speculative_num_draft_tokens", self.speculative_num_draft_tokens > 0),
            "extra_buffer_by_name": (
                "mamba_radix_cache_strategy",
                self.mamba_radix_cache_strategy.startswith("extra_buffer"),
            ),
            "sm100": ("gpu_arch", capability_major(self.gpu_arch) == 10),
        }
        for feature, (argument, used) in wanted.items():
            if used and not self.rules.covers(feature):
                raise not_covered(self.release, feature, argument)


def _ratio_flag(release: ResolvedRelease, rules: SglangRules, given: float | None) -> float | None:
    """``--mamba-full-memory-ratio``: as given, else the release's default; a release without
    the flag (before 0.5.3.post2) refuses it."""
    if rules.default_mamba_full_memory_ratio is None and given is not None:
        raise fail(
            "mamba_full_memory_ratio",
            f"{release.release} has no --mamba-full-memory-ratio (SGLang 0.5.3.post2 adds it)",
        )
    return rules.default_mamba_full_memory_ratio if given is None else given


def sglang_reservation(
    config: ConfigSource,
    *,
    version: str | None = None,
    tp_size: int = 1,
    available_memory: int | None = None,
    max_mamba_cache_size: int | None = None,
    mamba_full_memory_ratio: float | None = None,
    mamba_radix_cache_strategy: str = "auto",
    disable_radix_cache: bool = False,
    disable_overlap_schedule: bool = False,
    max_running_requests: int | None = None,
    speculative_num_draft_tokens: int = 0,
    mamba_ssm_dtype: str | None = None,
    context_length: int | None = None,
    max_total_tokens: int | None = None,
    gpu_arch: str | None = None,
    gpu: object = None,
    gpu_memory_bytes: int | None = None,
    mem_fraction_static: float | None = None,
    page_size: int | None = None,
    kv_cache_dtype: str = "auto",
    chunked_prefill_size: int | None = None,
    dtype: str = "auto",
    quantization: str | None = None,
    json_model_override_args: Mapping[str, Any] | None = None,
    weights_bytes: int | None = None,
    draft_config: ConfigSource | None = None,
) -> SglangReservation:
    """What SGLang ``version`` (``None``: the newest modelled; see ``releases.resolve_release``)
    reserves for the recurrent state of the model ``config`` describes, on one of ``tp_size``
    ranks, launched with these flags (SGLang's names and defaults; the strategy flag is
    ``--mamba-scheduler-strategy`` before 0.5.14).
    ``available_memory`` is the post-weights budget per rank in bytes (the ``rest`` that
    ``_handle_max_mamba_cache`` receives); it sizes the pool unless ``max_mamba_cache_size`` (or
    ``disable_radix_cache`` with ``max_running_requests``) fixes it, and it is needed for
    ``kv_cache_bytes``, the KV pool's tokens and so the running-request cap SGLang derives from
    them.
    ``mamba_full_memory_ratio`` ``None`` is the release's default (0.9; 0.2 in 0.5.3.post2;
    none before, where the flag is refused).
    ``speculative_num_draft_tokens > 0`` means EAGLE/NEXTN speculation with topk 1.
    ``context_length`` (default: SGLang's reading of the config) enters that cap; one longer
    than the config's is refused, as SGLang refuses it. ``max_total_tokens`` caps the KV pool's
    tokens (``_apply_token_constraints``, kv_cache_configurator.py:3090-3117).
    ``disable_overlap_schedule`` turns the overlap scheduler off, which ``auto`` then resolves
    to ``no_buffer`` (page size 1), ``no_buffer`` by name needs (from 0.5.14), and which takes an
    explicit ``extra_buffer`` from two tracking slots to one.

    Raises ``ServerArgumentError`` (a ``ValueError`` naming the argument) for a value SGLang
    refuses, for a budget that holds no state slot, and for what is not modelled (for the
    release); ``UnmodelledReleaseError`` for a release not modelled;
    ``ModelConfigError`` / ``TensorParallelSplitError`` as ``ssm_state`` does; ``TypeError``
    for an argument of the wrong type."""
    arguments = {
        name: value for name, value in locals().items() if name not in ("config", "version")
    }
    release = _modelled_release(version)
    gpu_device = device(gpu, gpu_memory_bytes)
    arch = gpu_arch or (gpu_device.gpu_arch if gpu_device is not None else None) or "sm90"
    rules = sglang_rules(release.version)
    given = {"release": release, "rules": rules, "gpu": gpu_device, "gpu_arch": arch}
    given["mamba_full_memory_ratio"] = _ratio_flag(release, rules, mamba_full_memory_ratio)
    launch = _Launch(**{**arguments, **given})
    model = hybrid_model(
        _configured(config, launch),
        release.release,
        "sglang",
        "keeps no state pool",
        tp_size=tp_size,
        ssm_dtype=mamba_ssm_dtype,
        version=release.release.version,
    )
    architecture = _architecture(model.config.mapping, model, launch)
    context = _derive_context_length(model.text, launch.context_length)
    fraction = _handle_gpu_memory_settings(model, launch, architecture)
    budget = _profile_available_bytes(model, launch, fraction)
    launch = replace(launch, available_memory=budget.available_memory)
    strategy = _mamba_radix_cache_resolution(launch, architecture, model)
    ratio = _calculate_mamba_ratio(launch, strategy)
    running = _handle_eagle_family(launch)
    cache = _handle_max_mamba_cache(model, launch, ratio.ratio, running, strategy)
    cell = _draft_cell(model, launch, _compute_cell_size(model, architecture, launch))
    page = _page_size(launch, architecture, strategy)
    tokens = _calculate_pool_sizes(launch, cache, cell, context, page)
    requests = _resolve_max_num_reqs(launch, ratio.ratio, running, cache, (cell, tokens), context)
    pool = _mamba_pool(model, launch, cache.slots, requests)
    scratch = _speculative_scratch(model, requests.max_running_requests, launch)
    steps = (context, fraction, budget, strategy, ratio, cache, pool, cell, page, tokens, requests)
    log = _log_lines(model, launch, architecture, _fields(*steps, scratch))
    return within_64_bits(
        _reservation(model, launch, architecture, running, _fields(*steps, scratch, log))
    )


# The releases whose rules releases.sglang states, oldest first.
_MODELLED: Final = SGLANG_RELEASES[SGLANG_RELEASES.index(MODELLED) :]
_FEATURES: Final = {
    "speculative": "speculative decoding",
    "extra_buffer_by_name": "an extra-buffer --mamba-radix-cache-strategy asked for by name",
    "default_mem_fraction": "SGLang's default --mem-fraction-static (give --mem-fraction-static)",
    "sm100": "a Blackwell (SM10x) GPU's attention and page defaults",
}


def _modelled_release(version: object) -> ResolvedRelease:
    """The SGLang release whose rules answer ``version``; one older than the releases
    ``releases.sglang`` states is refused rather than answered with another's rules."""
    release = resolve_release("sglang", version)
    if release.version < parse_version(MODELLED).release:
        raise UnmodelledReleaseError(
            f"{release.release}: the package models SGLang's rules from {MODELLED} to "
            f"{_MODELLED[-1]} ({', '.join(_MODELLED)}); older releases size the state pool "
            "with code of their own, not modelled",
            argument="version",
            modelled=_MODELLED,
        )
    return release


def not_covered(release: ResolvedRelease, feature: str, argument: str) -> ServerArgumentError:
    """A launch feature the package models only from a later release (``COVERAGE``)."""
    return fail(
        argument,
        f"{_FEATURES[feature]} is modelled from SGLang {COVERAGE[feature]}, not for "
        f"{release.release}",
    )


# --- the budget: the GPU, the static fraction, the weights -------------------------------------

_MIB: Final = 1 << 20
# handle_gpu_memory_settings (sglang/srt/arg_groups/memory_hook.py:47-345): above the release's
# tiers (SglangRules.memory_tiers), the default chunked prefill and the decode CUDA graphs'
# largest batch.
_LARGEST_TIER: Final = (16384, 512, 512)
_RESERVED_FLOOR_MIB: Final = 10 * 1024  # above 60 GiB of GPU memory


def _configured(config: ConfigSource, launch: _Launch) -> ConfigSource:
    """The config as SGLang reads it: ``--json-model-override-args`` applied
    (``ModelConfig``'s override of the HF config), and ``--dtype`` as the model's dtype."""
    overrides = dict(launch.json_model_override_args or {})
    if launch.dtype != "auto":
        overrides["dtype"] = "float16" if launch.dtype == "half" else launch.dtype
    return overridden(config, overrides) if overrides else config


@dataclass(frozen=True, slots=True)
class _StaticFraction:
    mem_fraction_static: float | None
    mem_fraction_static_rule: str
    chunked_prefill_size: int | None


def _handle_gpu_memory_settings(
    model: HybridModel, launch: _Launch, architecture: str
) -> _StaticFraction:
    """``--mem-fraction-static``, else SGLang's default for the GPU and tp
    (``handle_gpu_memory_settings``, memory_hook.py:47-345): ``round((gpu_mem - reserved) /
    gpu_mem, 3)``, ``reserved`` = 512 + max(chunked prefill, 2048) x 1.5 + tp / 8 x 1024 + the
    CUDA graphs' (decode max_bs x 2, and 8 a prefill graph size, memory_hook.py:357-399), at
    least 10 GiB above 60 GiB; a vision model's fraction scaled down
    (``adjust_mem_fraction_for_vlm``, :417-462)."""
    gpu = launch.gpu
    if gpu is None:
        return _StaticFraction(launch.mem_fraction_static, "", launch.chunked_prefill_size)
    gpu_mem, rules = gpu.memory_bytes / _MIB, launch.rules
    chunked, max_bs = _memory_tier(rules, gpu_mem, launch.tp_size)
    chunked = launch.chunked_prefill_size or chunked
    if launch.max_running_requests is not None and rules.decode_graph_capped_by_running:
        max_bs = min(max_bs, launch.max_running_requests)
    if launch.mem_fraction_static is not None:
        return _StaticFraction(launch.mem_fraction_static, "--mem-fraction-static", chunked)
    if not rules.covers("default_mem_fraction"):
        raise not_covered(launch.release, "default_mem_fraction", "mem_fraction_static")
    vision = model.config.mapping.get("vision_config")
    prefill_graphs = vision is None or rules.keeps_prefill_graphs(architecture)
    graphs = max_bs * 2 + (len(_prefill_graph_sizes(chunked)) * 8 if prefill_graphs else 0)
    reserved = 512 + max(chunked, 2048) * 1.5 + launch.tp_size / 8 * 1024 + graphs
    if gpu_mem > 60 * 1024:
        reserved = max(reserved, _RESERVED_FLOOR_MIB)
    fraction = round((gpu_mem - reserved) / gpu_mem, 3)
    rule = f"SGLang's default: round(({gpu_mem:g} - {reserved:g} MiB reserved) / {gpu_mem:g}, 3)"
    if isinstance(vision, Mapping):
        fraction = _adjust_for_vlm(fraction, vision)
        rule += ", scaled for the vision tower"
    return _StaticFraction(fraction, rule, chunked)


def _memory_tier(rules: SglangRules, gpu_mem: float, tp: int) -> tuple[int, int]:
    """The default chunked prefill and decode CUDA-graph max_bs for ``gpu_mem`` MiB
    (``SglangRules.memory_tiers``)."""
    for ceiling, chunked, small_tp, large_tp in rules.memory_tiers:
        if gpu_mem < ceiling:
            return chunked, small_tp if tp < 4 else large_tp
    return _LARGEST_TIER[0], _LARGEST_TIER[1]


def _prefill_graph_sizes(max_bs: int) -> list[int]:
    """``generate_prefill_cuda_graph_batch_sizes`` (cuda_graph_hook.py:480-497)."""
    sizes = [
        *range(4, 33, 4),
        *range(48, 257, 16),
        *range(288, 513, 32),
        *range(576, 1025, 64),
        *range(1280, 4097, 256),
        *range(4608, max_bs + 1, 512),
    ]
    return [size for size in sizes if size <= max_bs]


def _adjust_for_vlm(fraction: float, vision: Mapping[str, Any]) -> float:
    """``adjust_mem_fraction_for_vlm`` (memory_hook.py:417-462): 0.95 x a factor of the vision
    tower's size against ViT-L/14's, within [0.8, 1.05]."""
    layers = _vision_size(vision, "num_hidden_layers" if "num_hidden_layers" in vision else "depth")
    hidden = _vision_size(vision, "hidden_size")
    ratio = (layers * hidden**2) / (24 * 1024**2)
    factor = max(0.8, min(1.05, 1.0 - 0.1 * (ratio - 1.0)))
    return float(fraction * 0.95 * factor)


# What the vision config's class defaults SGLang reads (getattr with a default, memory_hook.py:
# 439-440; num_hidden_layers is depth under the Qwen vision classes' attribute_map).
_VISION_DEFAULTS: Final = {"num_hidden_layers": 24, "depth": 24, "hidden_size": 1024}


def _vision_size(vision: Mapping[str, Any], key: str) -> int:
    """A size of the vision tower, or SGLang's default where the config has none. Raises
    ``ModelConfigError`` naming the field for one that is not a count from 1 to 2**63 - 1: SGLang
    multiplies by it (a null fails there)."""
    value = vision.get(key, _VISION_DEFAULTS[key])
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_COUNT:
        field = f"vision_config.{key}"
        raise ModelConfigError(
            f"field {field!r}: {show(value)} is not a count from 1 to 2**63 - 1; SGLang scales "
            "its default memory fraction by the vision tower's size (memory_hook.py:439-447)",
            field=field,
        )
    return value


@dataclass(frozen=True, slots=True)
class _Budget:
    available_memory: int | None
    available_memory_rule: str
    weights_bytes: int | None
    weights_rule: str
    quantization: str | None
    pre_model_load_bytes: int | None


def _profile_available_bytes(
    model: HybridModel, launch: _Launch, fraction: _StaticFraction
) -> _Budget:
    """What ``_handle_max_mamba_cache`` receives (``_profile_available_bytes``,
    kv_cache_configurator.py:2990-3060): free memory after the weights less ``pre-load free x
    (1 - mem_fraction_static)`` and a vision model's cache (``mm_runtime_reservation_gb``,
    :202-219), i.e. ``free x fraction - weights``, with free memory before the load taken as the
    GPU's runtime total; ``available_memory`` given instead."""
    quantization = quantization_method(model.config.mapping, launch.quantization)
    weights = _weights(model, launch)
    gpu = launch.gpu
    if launch.available_memory is not None:
        return _Budget(launch.available_memory, "--available-memory", *weights, quantization, None)
    if gpu is None or fraction.mem_fraction_static is None:
        return _Budget(None, "", *weights, quantization, None)
    if weights[0] is None:
        raise fail(
            "weights_bytes",
            "the snapshot holds no safetensors to size the weights from; give their size",
        )
    vision = model.config.mapping.get("vision_config")
    multimodal = launch.rules.multimodal_reserve_mib * _MIB if vision else 0
    pre = gpu.runtime_bytes
    rest = pre * fraction.mem_fraction_static - weights[0] - multimodal
    if rest <= 0:
        minimum = 1 - (pre - weights[0]) / pre
        raise fail(
            "mem_fraction_static",
            f"the weights ({weights[0]:,} B) leave nothing of {fraction.mem_fraction_static} x "
            f"{pre:,} B; SGLang refuses to start",
            "ValueError: Loaded weights leave no GPU memory for the KV cache under "
            f"--mem-fraction-static={fraction.mem_fraction_static}. Raise "
            f"--mem-fraction-static above {math.ceil(minimum * 1000) / 1000:.3f} (minimum "
            f"viable = 1 - available/pre = {minimum:.4f}). If using speculative decoding, draft "
            "weights are now counted.",
        )
    rule = (
        f"{pre:,} B free x {fraction.mem_fraction_static} - weights"
        + (f" - {launch.rules.multimodal_reserve_mib} MiB multimodal cache" if multimodal else "")
        + " (kv_cache_configurator.py:2990-3060)"
    )
    return _Budget(int(rest), rule, *weights, quantization, pre)


def _weights(model: HybridModel, launch: _Launch) -> tuple[int | None, str]:
    """The weights one rank loads (``servers.weights``' rule; SGLang's parallel layers shard as
    vLLM's), or ``weights_bytes``; with a separate draft model, its weights too ("draft
    weights are now counted", kv_cache_configurator.py:3050-3058)."""
    if launch.weights_bytes is not None:
        return launch.weights_bytes, "--weights-memory"
    path = model.config.path
    checkpoint = read_checkpoint(Path(path).parent) if path is not None else None
    attention = model.state.attention
    dtype = attention.model_dtype if attention is not None else "bfloat16"
    found = weights_per_rank(attention, checkpoint, launch.tp_size, dtype)
    if launch.draft_config is None or found.weights_bytes is None:
        return found.weights_bytes, found.weights_rule
    draft = load_config(launch.draft_config)
    state = ssm_state(draft, layout="sglang", tp_size=launch.tp_size)
    draft_path = draft.path
    drafted = weights_per_rank(
        state.attention,
        read_checkpoint(Path(draft_path).parent) if draft_path is not None else None,
        launch.tp_size,
        dtype,
    )
    extra = drafted.weights_bytes or 0
    return found.weights_bytes + extra, f"{found.weights_rule}; and the draft's {extra:,} B"


def _draft_cell(model: HybridModel, launch: _Launch, cell: _CellSize) -> _CellSize:
    """An EAGLE/NEXTN draft's KV beside the target's: ``cell x draft layers / target layers``
    more bytes a token (``DefaultPoolConfigurator``, pool_configurator.py:259-313), the draft
    layers as ``_draft_layers`` counts them."""
    if not launch.speculative_num_draft_tokens or not cell.kv_bytes_per_token:
        return cell
    attention = model.state.attention
    target = len(attention.layer_indices) if attention is not None else 0
    layers = _draft_layers(model, launch)
    if not layers or not target:
        return cell
    extra = int(cell.kv_bytes_per_token * layers / target)
    return _CellSize(
        cell.kv_bytes_per_token + extra,
        f"{cell.kv_bytes_per_token_rule} + the draft's {layers} layers ({extra} B)",
    )


def _draft_layers(model: HybridModel, launch: _Launch) -> int:
    """The draft's KV layers (``draft_kv_num_layers``, spec_aux_hidden_state.py:156-163): the
    draft config's ``num_nextn_predict_layers`` where its class holds one, else the larger of
    its hidden and its attention layers (one where SGLang rewrites the checkpoint into its MTP
    model: ``SglangRules.draft_mtp_archs``); without a draft config, the target's
    ``num_nextn_predict_layers`` as SGLang's config class holds it (transformers'
    ``Glm5NextConfig`` defaults it to 1: ``class_fields``), none where it holds none. SGLang
    takes ``int()`` of the count; a count that is not a whole number of 0 or more is refused."""
    if launch.draft_config is None:
        nextn = class_fields(model.config, layout="sglang").get("num_nextn_predict_layers")
        return 0 if nextn is None else _layer_count("num_nextn_predict_layers", nextn)
    loaded = load_config(launch.draft_config)
    # The draft is split at the target's tp (its heads refused where they do not divide).
    draft = ssm_state(loaded, layout="sglang", tp_size=launch.tp_size)
    names = loaded.mapping.get("architectures")
    if isinstance(names, list) and names and names[0] in launch.rules.draft_mtp_archs:
        return 1  # SGLang rewrites the checkpoint into its MTP model of one layer
    fields = class_fields(loaded, layout="sglang")
    nextn = fields.get("num_nextn_predict_layers")
    if nextn is not None:
        return _layer_count("num_nextn_predict_layers", nextn)
    attention = len(draft.attention.layer_indices) if draft.attention is not None else 0
    hidden = fields.get("num_hidden_layers", attention)
    return max(_layer_count("num_hidden_layers", hidden), attention)


def _layer_count(name: str, value: object) -> int:
    """A draft layer count SGLang passes through ``int()``: a whole number (a bool counts as 0
    or 1, as ``int`` reads it) of 0 or more; anything else refused naming the field."""
    if isinstance(value, bool) or (isinstance(value, int) and value >= 0):
        return int(value)
    raise ModelConfigError(
        f"field {name!a}: {show(value)} is not a count of draft layers (SGLang takes int() of "
        "it, model_runner_components/spec_aux_hidden_state.py:156-163)",
        field=name,
    )


@dataclass(frozen=True, slots=True)
class _PageSize:
    page_size: int
    page_size_rule: str


# Blackwell model overrides: Qwen3.5's and NemotronH's SM100 defaults pick trtllm_mha with
# 64-token pages (arg_groups/model_overrides/qwen3_5.py:26-48, nemotron_h.py:123-148;
# overrides.py:1180-1187).
_SM100_PAGE_64_ARCHS: Final = frozenset(
    {
        "Qwen3_5ForConditionalGeneration",
        "Qwen3_5MoeForConditionalGeneration",
        "Qwen3_5ForCausalLM",
        "Qwen3_5MoeForCausalLM",
        "NemotronHForCausalLM",
    }
)


def _page_size(launch: _Launch, architecture: str, strategy: _Strategy | None = None) -> _PageSize:
    """``--page-size``, else SGLang's: 64 where a Blackwell model override picks trtllm_mha,
    else 1 (overrides.py:1341-1363); 1 where the release sets it so for the strategy
    (``no_buffer`` in 0.5.11 to 0.5.13, sglang-0.5.11:sglang/srt/server_args.py:2420-2427)."""
    given = launch.page_size
    if strategy is not None and strategy._resets_page and given not in (None, 1):
        return _PageSize(1, f"{launch.release.release} sets 1 for no_buffer (--page-size {given})")
    if launch.page_size is not None:
        return _PageSize(launch.page_size, "--page-size")
    if capability_major(launch.gpu_arch) == 10 and architecture in _SM100_PAGE_64_ARCHS:
        return _PageSize(64, f"{architecture} on SM100: trtllm_mha, 64-token pages")
    return _PageSize(1, "SGLang default 1")


# --- the steps ------------------------------------------------------------------------------


# The architectures SGLang builds on its NemotronHConfig before 0.5.10 (sglang-0.5.9:sglang/srt/
# configs/nemotron_h.py; configs/nano_nemotron_vl.py:63, its llm_config).
_NEMOTRON_H_CONFIG_ARCHS: Final = frozenset({"NemotronHForCausalLM", "NemotronH_Nano_VL_V2"})


def _architecture(root: Mapping[str, Any], model: HybridModel, launch: _Launch) -> str:
    """The model class SGLang builds: ``architectures[0]`` (overrides.py:458). Before 0.5.10 a
    NemotronH config that gives its layers as ``layers_block_type`` alone is refused as not
    modelled: SGLang's ``NemotronHConfig`` then reads its own default
    ``hybrid_override_pattern`` (sglang-0.5.9:sglang/srt/configs/nemotron_h.py:154-229;
    ``SglangRules.nemotron_reads_layers_block_type``), not the list the package reads."""
    names = root.get("architectures")
    if not (isinstance(names, list) and names and isinstance(names[0], str)):
        raise ModelConfigError(
            "field 'architectures': missing; SGLang picks the model class, and with it the "
            "cache strategy, from architectures[0]",
            field="architectures",
        )
    if names[0] in _NEMOTRON_H_CONFIG_ARCHS:
        _nemotron_layers(model.text, launch)
    return names[0]


def _nemotron_layers(text: Mapping[str, Any], launch: _Launch) -> None:
    """Refuse the NemotronH layers a release does not read as the package does: a
    ``layers_block_type`` alone before 0.5.10 (its ``NemotronHConfig`` then reads its own
    default pattern: not modelled), MoE (``E``) layers before 0.5.6 (its model has no such
    layer and SGLang fails to build it)."""
    rules, release = launch.rules, launch.release.release
    listed = "layers_block_type" in text and "hybrid_override_pattern" not in text
    if listed and not rules.nemotron_reads_layers_block_type:
        raise ModelConfigError(
            f"field 'layers_block_type': {release}'s NemotronHConfig reads only "
            "hybrid_override_pattern (its 52-layer default where the config has none; "
            "layers_block_type from 0.5.10): not modelled",
            field="layers_block_type",
        )
    pattern = text.get("hybrid_override_pattern")
    if isinstance(pattern, str) and "E" in pattern and not rules.nemotron_moe_layers:
        raise ModelConfigError(
            f"field 'hybrid_override_pattern': {release}'s NemotronH has no MoE ('E') layer "
            "(ALL_DECODER_LAYER_TYPES, sglang/srt/models/nemotron_h.py; from 0.5.6): SGLang "
            "fails to build the model",
            field="hybrid_override_pattern",
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
    factor = _rope_scaling_factor(text.get("rope_scaling"))
    derived, rule = _DEFAULT_CONTEXT_LENGTH, "no context-length field: SGLang's default"
    for key in _CONTEXT_LENGTH_KEYS:
        value = text.get(key)
        if value is not None:
            derived = scaled_context_length(key, value, factor)
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


def _rope_scaling_factor(scaling: object) -> object:
    """``get_context_length``'s RoPE factor (common.py:680-688): a truthy ``rope_scaling``'s
    ``factor`` (default 1), 1 with ``original_max_position_embeddings`` or the llama3 type.
    SGLang calls ``.get`` on any truthy value, so one that is not a mapping stops it
    (``ModelConfigError``)."""
    if not scaling:
        return 1
    if not isinstance(scaling, Mapping):
        raise ModelConfigError(
            f"field 'rope_scaling': {show(scaling)} is not a mapping; SGLang reads its factor "
            "with .get (common.py:680-686)",
            field="rope_scaling",
        )
    if "original_max_position_embeddings" in scaling or scaling.get("rope_type") == "llama3":
        return 1
    return scaling.get("factor", 1)


@dataclass(frozen=True, slots=True)
class _Strategy:
    mamba_radix_cache_strategy: str
    strategy_rule: str
    overlap_schedule: bool
    # Whether the release sets --page-size to 1 for it (SglangRules.no_buffer_resets_page).
    _resets_page: bool = False


def _mamba_radix_cache_resolution(
    launch: _Launch, architecture: str, model: HybridModel
) -> _Strategy:
    """The strategy, the rule that chose it and whether the overlap scheduler runs, as
    ``_mamba_radix_cache_resolution`` (overrides.py:453-487) and ``handle_mamba_radix_cache``
    (model_hook.py:1048-1077, mamba_hook.py:115-163) resolve and check them for the launch's
    overlap scheduler and page size; ``none`` where the radix cache is off (by the flag, or, in
    the releases that do, by SGLang for the architecture: ``SglangRules.radix_off_archs``).
    SGLang keys the radix cache by the architecture (the release's lists, and a linear-attention
    spec's, ``_LINEAR_ATTN_RADIX_ARCHS``), and Granite by its config class's ``layer_types``,
    which SGLang's class names ``mamba`` (``class_fields``). An architecture without it ignores
    ``no_buffer`` and refuses the extra-buffer strategies."""
    rules, requested = launch.rules, launch.mamba_radix_cache_strategy
    overlap = not launch.disable_overlap_schedule
    radix = rules.keeps_radix_cache(architecture) or architecture in _LINEAR_ATTN_RADIX_ARCHS
    if architecture == _GRANITE:
        kinds = class_fields(model.config, layout="sglang").get("layer_types")
        radix = isinstance(kinds, list) and "mamba" in kinds
    if launch.disable_radix_cache or not radix:
        if requested in ("extra_buffer", "extra_buffer_lazy"):
            raise fail(
                "mamba_radix_cache_strategy",
                f"{requested} needs mamba state, got {architecture}: {launch.release.release} "
                "refuses it where the mamba radix cache is off "
                "(sglang/srt/arg_groups/model_hook.py:1059-1066)",
            )
        if launch.disable_radix_cache:
            return _Strategy("none", "--disable-radix-cache", overlap)
        ignored = "; --mamba-radix-cache-strategy no_buffer ignored" if requested != "auto" else ""
        rule = f"{architecture} is not a mamba-radix-cache architecture{ignored}"
        return _Strategy(_unhandled_strategy(rules), rule, overlap)
    if rules.turns_radix_cache_off(architecture):
        return _Strategy(
            "none", f"{launch.release.release} turns the radix cache off for it", overlap
        )
    return _resolved_strategy(launch, architecture, requested)


def _unhandled_strategy(rules: SglangRules) -> str:
    """What a launch of an architecture SGLang's radix-cache hook does not handle reports: the
    flag's ``auto``, or, where ``auto`` was made ``no_buffer`` for every launch, that."""
    return "no_buffer" if rules.auto_strategy == "no_buffer" else "auto"


def _resolved_strategy(launch: _Launch, architecture: str, requested: str) -> _Strategy:
    """The strategy of a mamba-radix-cache architecture and whether the overlap scheduler runs.
    Before 0.5.14 every such launch is ``no_buffer``, which turns the overlap scheduler off.
    From 0.5.14 (``_mamba_radix_cache_resolution``, overrides.py:476-487): ``auto`` is
    ``extra_buffer`` where the architecture supports it and the overlap scheduler runs or pages
    hold more than one token, else ``no_buffer`` with the overlap scheduler off; a strategy by
    name is checked as ``validate_mamba_no_buffer`` (mamba_hook.py:155-162: overlap off, page
    size 1) and ``validate_mamba_extra_buffer`` (:115-119: the architecture's support) check it,
    and a lazy extra buffer needs the overlap scheduler (kv_cache_configurator.py:3071-3076)."""
    rules, release = launch.rules, launch.release.release
    overlap = not launch.disable_overlap_schedule
    if rules.auto_strategy == "no_buffer":
        named = "auto: no_buffer" if requested == "auto" else "flag"
        off = f"{release} turns the overlap scheduler off"
        if not overlap:
            off = "overlap scheduler off (--disable-overlap-schedule)"
        return _Strategy("no_buffer", f"{named}; {off}", False, rules.no_buffer_resets_page)
    extra_buffer = rules.supports_extra_buffer(architecture)
    page_size = launch.page_size or 1
    if requested == "auto":
        if extra_buffer and (overlap or page_size > 1):
            why = "overlap scheduler on" if overlap else f"--page-size {page_size}"
            return _Strategy("extra_buffer", f"auto: {why}, architecture supports it", overlap)
        if not extra_buffer:
            why = "architecture has no extra_buffer"
        else:
            why = "--disable-overlap-schedule with 1-token pages"
        return _no_buffer(launch, architecture, f"auto: {why}; overlap turned off")
    if requested == "no_buffer":
        if overlap:
            raise fail(
                "mamba_radix_cache_strategy",
                f"no_buffer needs --disable-overlap-schedule: {release} asserts the overlap "
                "scheduler off (sglang/srt/arg_groups/mamba_hook.py:156-160); auto resolves "
                "no_buffer, and turns it off, where extra_buffer is not supported",
            )
        return _no_buffer(launch, architecture, "flag, with --disable-overlap-schedule")
    if not extra_buffer:
        raise fail(
            "mamba_radix_cache_strategy",
            f"{requested} is not supported for {architecture}; use no_buffer: {release} asserts "
            "it (sglang/srt/arg_groups/mamba_hook.py:115-119, overrides.py:403-451)",
        )
    if requested == "extra_buffer_lazy" and not overlap:
        raise fail(
            "mamba_radix_cache_strategy",
            f"extra_buffer_lazy needs the overlap scheduler: {release} asserts it "
            "(--disable-overlap-schedule is incompatible; "
            "sglang/srt/mem_cache/kv_cache_configurator.py:3071-3076)",
        )
    return _Strategy(requested, "flag", overlap)


def _no_buffer(launch: _Launch, architecture: str, rule: str) -> _Strategy:
    """``no_buffer`` (overlap scheduler off) where ``validate_mamba_no_buffer`` passes it: pages
    of one token (mamba_hook.py:155-157). SGLang's 64-token default on SM100 for the
    architectures it gives trtllm_mha is refused as not modelled: no_buffer refuses that
    backend (:161-162), and which of the two SGLang checks first is not modelled."""
    page = _page_size(launch, architecture)
    if page.page_size > 1 and launch.page_size is not None:
        raise fail(
            "page_size",
            f"{page.page_size}: no_buffer supports only page_size=1, which "
            f"{launch.release.release} asserts (sglang/srt/arg_groups/mamba_hook.py:155-157); "
            f"the strategy is no_buffer ({rule.split(';')[0]})",
        )
    if page.page_size > 1:
        raise fail(
            "mamba_radix_cache_strategy",
            f"no_buffer for {architecture} on SM100, where SGLang gives it trtllm_mha and "
            f"{page.page_size}-token pages, is not modelled: no_buffer refuses that backend "
            "(sglang/srt/arg_groups/mamba_hook.py:161-162)",
        )
    return _Strategy("no_buffer", rule, False)


@dataclass(frozen=True, slots=True)
class _MambaRatio:
    ratio: int


def _calculate_mamba_ratio(launch: _Launch, strategy: _Strategy) -> _MambaRatio:
    """``_calculate_mamba_ratio`` (kv_cache_configurator.py:3062-3088), with
    SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK unset (sglang/srt/environ.py:1637): the state slots one
    request may hold; 1 with the radix cache off."""
    if strategy.mamba_radix_cache_strategy == "none":
        return _MambaRatio(1)
    return _MambaRatio(_BASE_RATIO + _tracking_slots(launch, strategy))


def _tracking_slots(launch: _Launch, strategy: _Strategy) -> int:
    """``get_mamba_tracking_slots`` (allocation_sizing.py:11-19): an extra buffer's ping-pong
    slots, two with the overlap scheduler and one without; one for a lazy extra buffer, which
    defers the second; none for ``no_buffer`` (two in 0.5.7, which adds them to every
    radix-cache launch: ``SglangRules.no_buffer_tracking_slots``)."""
    name = strategy.mamba_radix_cache_strategy
    if name == "extra_buffer_lazy":
        return 1
    if name == "extra_buffer":
        return 2 if strategy.overlap_schedule else 1
    return launch.rules.no_buffer_tracking_slots


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
    kv_cache_bytes: int | None


def _handle_max_mamba_cache(
    model: HybridModel, launch: _Launch, ratio: int, running: int | None, strategy: _Strategy
) -> _MambaCache:
    """``_handle_max_mamba_cache`` (kv_cache_configurator.py:3229-3409): the state slots ``K``
    (``--max-mamba-cache-size``; with the radix cache off, the running requests; else ``r / (1 +
    r)`` of the memory after the weights, less the speculative scratch of the capped running
    requests and, from 0.5.17, one padding slot; before 0.5.9, 512 with the radix cache off and
    no running requests asked for: ``SglangRules.radix_off_default_slots``; before 0.5.7 the
    ratio split overwrites ``--max-mamba-cache-size`` with the radix cache on:
    ``slots_flag_with_radix``), and what is left for the KV pool (:3042-3058) after the ``K + 1``
    slots from 0.5.17, ``K`` before (``SglangRules.charges_padding_slot``)."""
    per_req, draft = model.state.per_sequence_bytes, launch.speculative_num_draft_tokens
    budget, slots_given = launch.available_memory, launch.max_mamba_cache_size
    rest = None if budget is None else budget / _GIB
    padding = 1 if launch.rules.charges_padding_slot else 0
    served = None  # the running requests the scratch is kept for, where the slots are they
    radix_off = strategy.mamba_radix_cache_strategy == "none"
    ignored = ""
    if slots_given is not None and not (radix_off or launch.rules.slots_flag_with_radix):
        ignored = f"; {launch.release.release} overwrites --max-mamba-cache-size {slots_given}"
        slots_given = None
    fixed = _fixed_slots(launch, slots_given, running if radix_off else None, radix_off)
    if fixed is not None:
        slots, rule, served = fixed
    elif rest is None:
        raise fail(
            "available_memory",
            "needed: SGLang sizes the state pool from the memory left after the weights "
            "(or give max_mamba_cache_size)",
        )
    else:
        slots, rule = _ratio_slots(launch, rest, per_req, ratio, padding)
        rule += ignored
    if draft and rest is not None:
        capped = served or min(max(1, running or 1), slots // ratio)
        rest -= per_req * (capped + padding) * draft / _GIB
    if slots <= 0:
        if not launch.rules.empty_pool_refused:
            raise _unchecked(launch, _pool_field(slots_given))
        raise _no_slot(budget, per_req, slots_given)
    charged = (slots + padding) * per_req
    return _MambaCache(slots, rule, _kv_cache_bytes(budget, rest, charged))


def _fixed_slots(
    launch: _Launch, slots_given: int | None, running: int | None, radix_off: bool
) -> tuple[int, str, int | None] | None:
    """The slots a flag fixes, the rule, and the running requests the speculative scratch is
    kept for where they are the slots: ``--max-mamba-cache-size``; with the radix cache off,
    the running requests asked for, else (before 0.5.9) ``radix_off_default_slots``; ``None``
    where the ratio split sizes them."""
    release, fixed = launch.release.release, launch.rules.radix_off_default_slots
    if slots_given is not None:
        return slots_given, "--max-mamba-cache-size", None
    if running is not None:
        rule = "--disable-radix-cache with max_running_requests"
        if not launch.disable_radix_cache:
            rule = f"{release} turns the radix cache off: max_running_requests"
        return max(1, running), rule, max(1, running)
    if radix_off and fixed is not None:
        return fixed, f"radix cache off without max_running_requests: {release}'s {fixed}", None
    return None


def _ratio_slots(
    launch: _Launch, rest: float, per_req: int, ratio: int, padding: int
) -> tuple[int, str]:
    """The slots ``r / (1 + r)`` of ``rest`` GiB holds: less one padding slot from 0.5.17, and
    with speculative decoding solved together with the scratch of ``K / ratio`` requests
    (``D`` draft tokens each)."""
    draft, ratio_flag = launch.speculative_num_draft_tokens, launch.mamba_full_memory_ratio
    # Before 0.5.3.post2 every hybrid architecture's radix cache is off: K is fixed, never split.
    assert ratio_flag is not None, "no ratio split before SGLang 0.5.3.post2"
    mamba_budget_bytes = rest * ratio_flag / (1 + ratio_flag) * _GIB
    spent = per_req * (1 + draft) * padding
    slots = int((mamba_budget_bytes - spent) // (per_req * (1 + draft / ratio)))
    held = ", one slot padding" if padding else ""
    return slots, f"{ratio_flag:g}/(1+{ratio_flag:g}) of available_memory{held}"


def _pool_field(slots_given: int | None) -> str:
    """The argument a pool that serves no request is refused under: the slots, where they are
    given (``0`` is: SGLang tests ``max_mamba_cache_size is not None``), else the memory."""
    return "max_mamba_cache_size" if slots_given is not None else "available_memory"


def _unchecked(launch: _Launch, field: str) -> ServerArgumentError:
    """A launch that leaves no state slot, or no request, under a release that does not check
    it at startup (SGLang refuses it from 0.5.13): what that release does then is not
    modelled."""
    return fail(
        field,
        f"the state pool serves no request; {launch.release.release} does not check this at "
        "startup (SGLang refuses it from 0.5.13) and what it does then is not modelled",
    )


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
            "ValueError: Loaded weights leave no GPU memory for the KV cache (the state pool of "
            f"{pool / _GIB:.2f} GB takes what is left); raise --mem-fraction-static",
        )
    return int(left * _GIB)


def _no_slot(budget: int | None, per_req: int, slots_given: int | None) -> ServerArgumentError:
    """SGLang's refusal of a pool of no slot (kv_cache_configurator.py:3386-3399)."""
    words = (
        "RuntimeError: Not enough GPU memory for hybrid (mamba/linear-attention) state cache. "
        f"Computed max_mamba_cache_size={{slots}} (total_rest_memory={(budget or 0) / _GIB:.2f} "
        f"GB, mamba_cache_per_req={per_req / (1 << 20):.2f} MB). Try: (1) reduce "
        "--max-running-requests, (2) increase --mem-fraction-static, (3) reduce "
        "--speculative-num-draft-tokens, or (4) use GPUs with more memory."
    )
    if slots_given is not None:
        return fail(
            "max_mamba_cache_size",
            "0 state slots: SGLang refuses to start",
            words.format(slots=slots_given),
        )
    return fail(
        "available_memory",
        f"{budget} B holds no state slot of {per_req} B (with one padding slot); SGLang "
        "refuses to start",
        words.format(slots=0),
    )


@dataclass(frozen=True, slots=True)
class _CellSize:
    kv_bytes_per_token: int
    kv_bytes_per_token_rule: str


def _compute_cell_size(model: HybridModel, architecture: str, launch: _Launch) -> _CellSize:
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
    element = _KV_CACHE_DTYPES[launch.kv_cache_dtype] or _KV_ELEMENT_BYTES
    rope = not (architecture in _MLA_NOPE_ARCHS and model.text.get("use_mla_nope"))
    root = model.config.mapping
    dsa = architecture in _DSA_ARCHS and _sglang_field(root, model.text, "index_topk") is not None
    indexer = dsa_indexer(root, model.text, attention) if dsa else None
    per_token = attention.kv_bytes_per_token(tp, element, latent_rope=rope, indexer=indexer)
    rule = attention.kv_terms(tp, element, latent_rope=rope)
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
    launch: _Launch, cache: _MambaCache, cell: _CellSize, context: _ContextLength, page: _PageSize
) -> _PoolSizes:
    """The KV pool's tokens (``DefaultPoolConfigurator.calculate_pool_sizes``,
    pool_configurator.py:623-652): what is left over the bytes per token, at most
    ``--max-total-tokens`` (``_apply_token_constraints``, kv_cache_configurator.py:3090-3117), in
    whole pages (pool_configurator.py:646, :652: a capped count is aligned again; every release
    from 0.5.7 aligns after the cap); with no attention layer, the context (:243-248)."""
    limit = launch.max_total_tokens
    if cache.kv_cache_bytes is None:
        return _PoolSizes(None, limit)
    if not cell.kv_bytes_per_token:
        tokens = limit or context.context_length
        return _PoolSizes(tokens, limit)
    tokens = _profiled_tokens(cache, cell) or 0
    if limit is not None:
        tokens = min(tokens, limit)
    return _PoolSizes(tokens // page.page_size * page.page_size, limit)


def _profiled_tokens(cache: _MambaCache, cell: _CellSize) -> int | None:
    """The tokens the KV budget holds, before ``--max-total-tokens`` and the page alignment
    (``profile_max_num_token``'s answer)."""
    if cache.kv_cache_bytes is None or not cell.kv_bytes_per_token:
        return None
    return cache.kv_cache_bytes // cell.kv_bytes_per_token


@dataclass(frozen=True, slots=True)
class _RunningRequests:
    max_running_requests: int
    max_running_requests_rule: str
    _request_pool: int  # req_to_token_pool.size: the cap before the tokens // 2 one


def _resolve_max_num_reqs(
    launch: _Launch,
    ratio: int,
    running: int | None,
    cache: _MambaCache,
    cells: tuple[_CellSize, _PoolSizes],
    context: _ContextLength,
) -> _RunningRequests:
    """``resolve_max_num_reqs`` (kv_cache_configurator.py:3119-3172): the requests asked for,
    else SGLang's estimate from the KV pool's tokens (``int(tokens / context_len * 512)``,
    clamped to [2048, 4096]), held to the slots over the ratio and to half the tokens; SGLang
    refuses to start when that serves no request (:3160-3168). Requests asked for are held to
    the estimate instead of half the tokens in 0.5.10-0.5.13, and to neither before
    (``SglangRules.running_flag_held_to``); before 0.5.10 the estimate reads the profiled tokens,
    before ``--max-total-tokens`` and the page alignment (``estimate_from_profiled_tokens``:
    sglang-0.5.9:sglang/srt/model_executor/model_runner_kv_cache_mixin.py:339-389,
    sglang-0.5.9:sglang/srt/model_executor/model_runner.py:592-600)."""
    cell, tokens = cells
    kv_tokens, slots, held = tokens.kv_tokens, cache.slots, launch.rules.running_flag_held_to
    profiled = _profiled_tokens(cache, cell)
    if launch.rules.estimate_from_profiled_tokens and profiled is not None:
        estimate, estimated = _estimate(profiled, context, "profiled ")
    else:
        estimate, estimated = _estimate(kv_tokens, context)
    if running is not None:
        wanted = running
        rule = (
            f"--max-running-requests {running}"
            if launch.max_running_requests is not None
            else "48 for speculative decoding"
        )
        if held == "estimate":  # 0.5.10-0.5.13
            wanted, rule = min(wanted, estimate), f"{rule}, {estimated}"
    else:
        wanted, rule = estimate, estimated
    capped = request_pool = min(wanted, slots // ratio)
    rule = f"min({rule}, slots {slots} // ratio {ratio}"
    if kv_tokens is not None and (running is None or held == "half_tokens"):
        capped = min(capped, kv_tokens // 2)
        rule += f", {kv_tokens} KV tokens // 2"
    if capped <= 0:
        if not launch.rules.empty_pool_refused:
            raise _unchecked(launch, "available_memory")
        raise _no_request(launch, slots, ratio, kv_tokens, capped)
    return _RunningRequests(capped, rule + ")", request_pool)


@dataclass(frozen=True, slots=True)
class _MambaPool:
    pool_bytes: int
    pool_bytes_rule: str


def _mamba_pool(
    model: HybridModel, launch: _Launch, slots: int, requests: _RunningRequests
) -> _MambaPool:
    """``MambaPool`` (memory_pool.py:722-753): one slot more than it is built with, for padding:
    ``K``; before 0.5.3.post2 the request pool's size (``HybridReqToTokenPool(size=max_num_reqs)``,
    sglang-0.5.2:sglang/srt/model_executor/model_runner.py:1351-1352, mem_cache/memory_pool.py:
    207-235; ``SglangRules.mamba_pool_holds_requests``), though the KV budget took ``K`` slots."""
    per_req = model.state.per_sequence_bytes
    if launch.rules.mamba_pool_holds_requests:
        held = requests._request_pool
        return _MambaPool(
            (held + 1) * per_req,
            f"(request pool {held} + 1) x per request (HybridReqToTokenPool's MambaPool, "
            f"{launch.release.release})",
        )
    return _MambaPool(
        (slots + 1) * per_req,
        "(K + 1) x per request (MambaPool, sglang/srt/mem_cache/memory_pool.py:722-753)",
    )


def _estimate(kv_tokens: int | None, context: _ContextLength, which: str = "") -> tuple[int, str]:
    """SGLang's estimate of the running requests from the KV pool's tokens (``which``: the
    profiled ones), and how it was found; without them, its ceiling (an upper bound)."""
    if kv_tokens is None:
        return _ESTIMATE_CEILING, (
            f"SGLang's estimate from the KV pool, at most {_ESTIMATE_CEILING} (without "
            "available_memory the KV pool's tokens, and so the estimate, are unknown: an upper "
            "bound)"
        )
    estimate = int(kv_tokens / context.context_length * _ESTIMATE_REQUESTS_PER_CONTEXT)
    return max(min(estimate, _ESTIMATE_CEILING), _ESTIMATE_FLOOR), (
        f"SGLang's estimate clamp({kv_tokens} {which}KV tokens / context {context.context_length} "
        f"x {_ESTIMATE_REQUESTS_PER_CONTEXT}, {_ESTIMATE_FLOOR}, {_ESTIMATE_CEILING})"
    )


def _no_request(
    launch: _Launch, slots: int, ratio: int, kv_tokens: int | None, capped: int
) -> ServerArgumentError:
    """SGLang's refusal of a launch that serves no request (kv_cache_configurator.py:
    3160-3168)."""
    field = _pool_field(launch.max_mamba_cache_size)
    short = (
        f"{slots} state slots at {ratio} per request serve"
        if slots // ratio <= 0
        else f"a KV pool of {kv_tokens} tokens (requests are capped at tokens // 2) serves"
    )
    return fail(
        field,
        f"{short} no request; SGLang refuses to start (kv_cache_configurator.py:3160-3168)",
        "RuntimeError: Hybrid (mamba/linear-attention) state cache is too small to serve any "
        f"requests. max_mamba_cache_size={slots}, mamba_ratio={ratio}, resulting "
        f"max_num_reqs={capped}. Try: (1) reduce --max-running-requests, (2) increase "
        "--mem-fraction-static, or (3) use GPUs with more memory.",
    )


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


# --- what SGLang logs ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Log:
    full_context_sequences: int | None
    log_lines: tuple[str, ...]


# The KV pool's dtype as SGLang prints it (torch's names), and its default prefill budget
# (--max-prefill-tokens, sglang/srt/arg_groups/fields/schedule.py:71).
_TORCH_DTYPES: Final = {2: "torch.bfloat16", 1: "torch.float8_e4m3fn"}
_MAX_PREFILL_TOKENS: Final = 16384


def _log_lines(
    model: HybridModel, launch: _Launch, architecture: str, steps: Mapping[str, Any]
) -> _Log:
    """The lines the SGLang release logs at boot about this reservation, in its words, with the
    predicted numbers: "Load weight end" (model_executor/model_runner.py:1372-1379), "Mamba
    Cache is allocated" (mem_cache/memory_pool.py:983-1009), "KV Cache is allocated"
    (:2080-2099) and the scheduler's summary (managers/scheduler.py:1267-1276); GB there is
    2**30 B; the KV line names its dtype from 0.5.13 (``SglangRules.kv_log_names_dtype``), the
    weights line the time it took from 0.5.9 and the model's dtype before 0.5.10
    (``weight_log_names_elapsed``, ``weight_log_names_dtype``). What the package cannot predict
    is ``?``."""
    lines = [*_weights_line(model, launch, architecture, steps)]
    slots, per_req = steps["slots"], model.state.per_sequence_bytes
    allocated = steps["pool_bytes"] // per_req if per_req else slots + 1
    conv = ssm = 0
    for group in model.state.groups:
        for tensor in group.tensors:
            size = allocated * len(group.layer_indices) * tensor.bytes
            conv, ssm = (conv + size, ssm) if tensor.name.startswith("conv") else (conv, ssm + size)
    named = f"max_mamba_cache_size: {slots}, " if launch.rules.mamba_log_names_size else ""
    mamba = (
        f"Mamba Cache is allocated. {named}conv_state size: "
        f"{conv / _GIB:.2f}GB, ssm_state size: {ssm / _GIB:.2f}GB "
    )
    if launch.speculative_num_draft_tokens:  # the speculative pool's line names its scratch
        mamba += (
            f"intermediate_ssm_state_cache size: "
            f"{steps['speculative_ssm_scratch_bytes'] / _GIB:.2f}GB "
            f"intermediate_conv_window_cache size: "
            f"{steps['speculative_conv_scratch_bytes'] / _GIB:.2f}GB "
        )
    lines.append(mamba)
    tokens, per_token = steps["kv_tokens"], steps["kv_bytes_per_token"]
    if tokens is not None and per_token:
        half = tokens * per_token / 2 / _GIB
        element = _KV_CACHE_DTYPES[launch.kv_cache_dtype] or _KV_ELEMENT_BYTES
        named = f"dtype: {_TORCH_DTYPES[element]}, " if launch.rules.kv_log_names_dtype else ""
        lines.append(
            f"KV Cache is allocated. {named}#tokens: {tokens}, "
            f"K size: {half:.2f} GB, V size: {half:.2f} GB"
        )
    if tokens is not None:
        lines.append(
            f"max_total_num_tokens={tokens}, chunked_prefill_size="
            f"{steps['chunked_prefill_size'] or '?'}, max_prefill_tokens={_MAX_PREFILL_TOKENS}, "
            f"max_running_requests={steps['max_running_requests']}, context_len="
            f"{steps['context_length']}, available_gpu_mem=? GB"
        )
    sequences = tokens // steps["context_length"] if tokens is not None else None
    return _Log(sequences, tuple(lines))


def _weights_line(
    model: HybridModel, launch: _Launch, architecture: str, steps: Mapping[str, Any]
) -> tuple[str, ...]:
    """ "Load weight end", where the weights and the free memory before them are known."""
    rules = launch.rules
    weights, pre = steps["weights_bytes"], steps["pre_model_load_bytes"]
    if weights is None or pre is None:
        return ()
    elapsed = "elapsed=? s, " if rules.weight_log_names_elapsed else ""
    dtype = f"dtype={_model_dtype(model, launch)}, " if rules.weight_log_names_dtype else ""
    return (
        f"Load weight end. {elapsed}type={architecture}, {dtype}avail mem="
        f"{(pre - weights) / _GIB:.2f} GB, mem usage={weights / _GIB:.2f} GB.",
    )


def _model_dtype(model: HybridModel, launch: _Launch) -> str:
    """``ModelConfig.dtype`` as the weights line prints it (``_get_and_verify_dtype``,
    sglang-0.5.9:sglang/srt/configs/model_config.py:1119-1165): ``--dtype``, else the text
    config's ``dtype`` / ``torch_dtype`` (bfloat16 and float16 kept, float32 cast to float16);
    ``?`` where the file states none (transformers' config object answers then)."""
    if launch.dtype != "auto":
        return f"torch.{'float16' if launch.dtype == 'half' else launch.dtype}"
    for key in ("dtype", "torch_dtype"):
        raw = model.text.get(key)
        if raw in ("bfloat16", "float16"):
            return f"torch.{raw}"
        if raw == "float32":
            return "torch.float16"
        if raw is not None:
            return "?"
    return "?"


def _assumptions(launch: _Launch, steps: Mapping[str, Any]) -> list[str]:
    """What the reservation takes for granted about the launch."""
    assumptions = [
        "CUDA, one attention data-parallel rank, one pipeline stage"
        + (", page size 1" if steps["page_size"] == 1 else ""),
        "no ReplaySSM, no fused draft state, no multimodal reserve",
    ]
    if launch.speculative_num_draft_tokens:
        counted = "the draft's" in steps["kv_bytes_per_token_rule"]
        assumptions.append(
            "speculation is EAGLE/NEXTN with topk 1"
            + ("" if counted else " and adds no draft-model KV")
            + "; conv windows deduplicated (CUDA, linear chain)"
        )
    if launch.disable_overlap_schedule:
        assumptions.append("no overlap scheduler (--disable-overlap-schedule)")
    elif not steps["overlap_schedule"]:
        assumptions.append("no_buffer runs without the overlap scheduler, as SGLang pairs them")
    if launch.release.release != SGLANG:
        assumptions.append(
            f"the rules of {launch.release.release} (decode_ring.releases.sglang, each change "
            f"cited in its release); the line citations here are {SGLANG}'s"
        )
    return assumptions


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
    assumptions = _assumptions(launch, steps)
    ratio = steps["ratio"]
    asked = running if running is not None else steps["max_running_requests"]
    given_dtype = launch.mamba_ssm_dtype is not None
    return SglangReservation(
        server_version=launch.release.release.version,
        server_version_note=launch.release.note,
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
        gpu_name=launch.gpu.name if launch.gpu is not None else None,
        gpu_memory_bytes=launch.gpu.memory_bytes if launch.gpu is not None else None,
        gpu_memory_rule=launch.gpu.rule if launch.gpu is not None else None,
        kv_cache_dtype=launch.kv_cache_dtype,
        mamba_full_memory_ratio=launch.mamba_full_memory_ratio,
        disable_radix_cache=launch.disable_radix_cache,
        requested_requests=asked,
        slots_for_requested=asked * ratio,
        pool_bytes_for_requested=(asked * ratio + 1) * per_req,
        naive_state_bytes=asked * per_req,
        assumptions=tuple(assumptions),
        **steps,
    )
