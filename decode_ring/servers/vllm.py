"""What vLLM 0.33.0 reserves for a hybrid model's recurrent state, per tensor-parallel rank.

vLLM keeps recurrent state in the same block pool as the KV cache. Each state layer's page (one
sequence's state, ``MambaSpec.page_size_bytes``) is padded to one attention page, the attention
block growing until its page holds the state page; layers are grouped in groups of equal size; a
block of the pool costs one page per layer slot of the largest group; a request holds a number of
blocks in every group. Citations are paths in the ``vllm-0.33.0`` wheel.

``vllm_reservation`` runs vLLM's steps in its order, one function each, named after the vLLM
code it mirrors and returning a small frozen value; the reservation is the union of the values
(each step's fields are the reservation's fields of the same name):

1. ``_hybrid_model``: the state of one layer for one sequence, ``decode_ring.models.ssm_state``
   with the vLLM layout, the flags' dtypes, and the conv window widened by the speculative
   tokens (``MambaStateShapeCalculator``, vllm/model_executor/layers/mamba/mamba_utils.py:
   153-319).
2. ``_prefix_caching``: ``EngineArgs``' default and ``MambaModelConfig``'s cache mode;
   ``_verify_replayssm``; ``_max_model_len`` (``_get_and_verify_max_len``).
3. ``_attention_backends``: ``_get_backend_priorities`` and the GDN prefill backend.
4. ``_mamba_specs``: one ``MambaSpec`` per kind of recurrent layer (its page, with the ReplaySSM
   ring, ``append_replayssm_ring``, :213-246; its prefill checkpoint alignment and blocks).
5. ``_align_hybrid_block_size`` (vllm/platforms/interface.py:940-1137): ``k = max(kernel block,
   block_size)``, at least 128 with MLA, ``lcm(k, checkpoint alignment)`` in align mode;
   ``block = k * ceil(P / (k * A1))`` rounded up to every backend's kernel block, ``A1`` the
   attention page of one token (``AttentionLayers.page_bytes_per_token``); the state page is
   padded to ``block * A1``.
6. ``_kv_cache_groups`` (``_get_kv_cache_groups_uniform_page_size``,
   vllm/v1/core/kv_cache_planning.py:416-556): group size ``g = min`` layers per spec (``max``
   when ``max < 1.5 * min``), ``ceil(n / g)`` groups per spec; one spec for every layer is one
   group of all of them (:1138-1147); a block costs ``g`` pages (``_get_kv_cache_bytes_per_block``,
   :574-605).
7. ``_blocks_per_request`` (``MambaSpec.max_memory_usage_bytes``,
   vllm/v1/kv_cache_interface.py:1135-1141): planned ``2 + s + c`` in align mode (``c``:
   prefill checkpoint blocks), else ``1 + s``; held at decode ``1 + s``; ``s`` is 0 under
   ReplaySSM (mamba/abstract.py:72-91).
8. ``_kv_cache_pool``: with a KV budget, ``num_blocks = budget // bytes_per_block``
   (kv_cache_planning.py:1540-1544), the startup check, and
   ``get_max_concurrency_for_kv_cache_config`` (vllm/v1/core/kv_cache_utils.py:1061-1093):
   ``num_blocks / sum over groups of the blocks one request at max_model_len takes``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any, Final

from ..checkpoints import read_checkpoint
from ..models import (
    DTYPE_BYTES,
    KINDS,
    AttentionLayers,
    ConfigSource,
    ModelConfigError,
    class_fields,
    load_config,
    ssm_state,
)
from ..models.kinds import Checkpoint
from ..printable import show, type_name
from ..releases import VLLM, ResolvedRelease, resolve_release
from ..releases.versions import parse_version
from ..releases.vllm import VllmRules, vllm_rules
from .common import (
    GPU_ARCHS,
    Device,
    HybridModel,
    capability_major,
    check_choice,
    check_count,
    check_dtype,
    check_flag,
    check_optional_count,
    check_ratio,
    device,
    fail,
    gib,
    hybrid_model,
    multiple,
    overridden,
    within_64_bits,
)
from .profile import cuda_graph_estimate, non_torch_estimate, peak_activation_estimate
from .weights import quantization_method, weights_per_rank

__all__ = [
    "KV_CACHE_DTYPES",
    "MAMBA_DTYPES",
    "VllmReservation",
    "vllm_reservation",
]

# vllm/config/cache.py:175 (MambaDType).
MAMBA_DTYPES: Final = ("auto", "float32", "float16", "bfloat16")
# The CacheDType values (vllm/config/cache.py:44-60) modelled here, with their bytes; None:
# the model dtype. Which backend takes fp8 on which GPU: ``_refusal``.
KV_CACHE_DTYPES: Final[Mapping[str, int | None]] = {
    "auto": None,
    "float16": 2,
    "bfloat16": 2,
    "fp8": 1,
    "fp8_e4m3": 1,
}
_UNMODELLED_CACHE_DTYPES: Final = (
    "fp8_e5m2",
    "fp8_inc",
    "fp8_ds_mla",
    "nvfp4_ds_mla",
    "turboquant_k8v4",
    "turboquant_4bit_nc",
    "turboquant_k3v4_nc",
)
# FlashAttention and Triton attention (and the MLA backends vLLM picks on SM8x/SM90) report
# MultipleOf(16) kernel blocks (flash_attn.py:356-367, triton_attn.py:339-340,
# mla/flashattn_mla.py:49-50, mla/triton_mla.py:114-115).
_KERNEL_BLOCK: Final = 16
# The smallest kernel block (get_supported_kernel_block_sizes) of the attention backends whose
# smallest is not 16: FlashInfer-MLA's [32, 64] (v1/attention/backends/mla/flashinfer_mla.py:
# 49-50, 0.20.0 to 0.33.0), SM10x's first MLA backend.
_BACKEND_KERNEL_BLOCK: Final = {"FLASHINFER_MLA": 32}
# vllm/v1/attention/backends/gdn_attn.py:34
_FLASHINFER_GDN_CHECKPOINT_ALIGNMENT: Final = 64
_DEFAULT_BLOCK_SIZE: Final = 16  # CacheConfig.DEFAULT_BLOCK_SIZE
_BLACKWELL: Final = 10  # SM10x, where VllmRules.blackwell_head256_block applies


@dataclass(frozen=True, slots=True)
class VllmReservation:
    """What a vLLM release reserves on one tensor-parallel rank, with the inputs and
    assumptions behind it: ``server_version`` the release whose rules answer,
    ``server_version_note`` how the version asked for mapped to it (``None``: it is that
    release). Byte counts are exact integers; ``max_concurrency`` is vLLM's own float."""

    server_version: str
    server_version_note: str | None
    model_type: str
    family: str
    source: str | None
    tensor_parallel_size: int
    max_num_seqs: int
    max_num_batched_tokens: int | None
    max_model_len: int
    max_model_len_rule: str
    enable_prefix_caching: bool
    prefix_caching_rule: str
    mamba_cache_mode: str
    num_speculative_tokens: int
    use_replayssm: bool
    gpu_arch: str
    gpu: str
    gpu_name: str | None
    gpu_memory_bytes: int | None
    gpu_memory_rule: str | None
    enforce_eager: bool
    attention_backend: str | None
    gdn_prefill_backend: str | None
    attention_backend_rule: str
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
    draft_groups: int
    draft_attention_layers: int
    draft_block_size: int | None
    draft_same_spec: bool
    draft_weights_bytes: int
    draft_rule: str
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
    weights_bytes: int | None
    weights_rule: str
    quantization: str | None
    gpu_memory_utilization: float
    requested_memory_bytes: int | None
    peak_activation_bytes: int | None
    peak_activation_rule: str
    cuda_graph_bytes: int | None
    cuda_graph_rule: str
    cuda_graph_sizes: int
    non_torch_bytes: int | None
    non_torch_rule: str
    available_kv_cache_memory: int | None
    kv_cache_memory_rule: str
    kv_cache_tokens: int | None
    full_context_sequences: int | None
    mamba_page_padding_percent: float | None
    log_lines: tuple[str, ...]
    assumptions: tuple[str, ...]

    @property
    def multiplier(self) -> float:
        """``state_bytes`` over the naive B x per-sequence figure."""
        return multiple(self.state_bytes, self.naive_state_bytes)

    @property
    def planned_multiplier(self) -> float:
        """``planned_state_bytes`` over the naive B x per-sequence figure."""
        return multiple(self.planned_state_bytes, self.naive_state_bytes)

    def as_dict(self) -> dict[str, object]:
        """Every field, tuples as lists, and the multipliers: ready for ``json.dumps``."""
        fields = asdict(self)
        fields["assumptions"] = list(self.assumptions)
        fields["log_lines"] = list(self.log_lines)
        fields["multiplier"] = self.multiplier
        fields["planned_multiplier"] = self.planned_multiplier
        return fields


def _fields(*steps: object) -> dict[str, Any]:
    """The fields of the steps' frozen values, which are the reservation's fields of the same
    names."""
    return {
        field.name: getattr(step, field.name)
        for step in steps
        for field in fields(step)  # type: ignore[arg-type]
    }


@dataclass(frozen=True, slots=True)
class _Launch:
    """The launch's flags, checked as vLLM's argument parsing and config classes check them
    (``ServerArgumentError`` for a value vLLM refuses or this module does not model), with the
    GPU they name (``gpu``) and the defaults that hang on it (``gpu_arch``, ``max_num_seqs``,
    ``_device_defaults``); ``max_num_batched_tokens`` hangs on the model too, and is ``None``
    until ``_scheduler_defaults`` resolves it."""

    release: ResolvedRelease
    rules: VllmRules
    tensor_parallel_size: int
    max_num_seqs: int
    max_model_len: int | None
    block_size: int | None
    enable_prefix_caching: bool | None
    num_speculative_tokens: int
    mamba_cache_dtype: str
    mamba_ssm_cache_dtype: str
    kv_cache_dtype: str
    kv_cache_memory_bytes: int | None
    use_replayssm: bool
    replayssm_buffer_len: int
    gpu_arch: str
    gpu: Device | None
    gpu_memory_bytes: int | None
    gpu_memory_utilization: float
    dtype: str
    quantization: str | None
    max_num_batched_tokens: int | None
    enforce_eager: bool
    cudagraph_mode: str | None
    cudagraph_capture_sizes: tuple[int, ...] | None
    max_cudagraph_capture_size: int | None
    cpu_offload_gb: float
    hf_overrides: Mapping[str, Any] | None
    speculative_method: str | None
    draft_config: ConfigSource | None
    weights_bytes: int | None
    activation_bytes: int | None
    cuda_graph_bytes: int | None
    non_torch_bytes: int | None

    def __post_init__(self) -> None:
        check_count("tensor_parallel_size", self.tensor_parallel_size, 1)
        check_count("max_num_seqs", self.max_num_seqs, 1)
        check_optional_count("max_model_len", self.max_model_len, 1)
        check_optional_count("block_size", self.block_size, 1)
        check_count("num_speculative_tokens", self.num_speculative_tokens, 0)
        check_optional_count("kv_cache_memory_bytes", self.kv_cache_memory_bytes, 0)
        check_flag("use_replayssm", self.use_replayssm)
        if self.use_replayssm and not self.rules.replayssm:
            raise fail("use_replayssm", f"{self.release.release} has no --use-replayssm")
        check_count("replayssm_buffer_len", self.replayssm_buffer_len, 1)
        check_choice("gpu_arch", self.gpu_arch, tuple(GPU_ARCHS))
        check_choice("mamba_cache_dtype", self.mamba_cache_dtype, MAMBA_DTYPES)
        check_choice("mamba_ssm_cache_dtype", self.mamba_ssm_cache_dtype, MAMBA_DTYPES)
        if self.kv_cache_dtype in _UNMODELLED_CACHE_DTYPES:
            raise fail("kv_cache_dtype", f"{self.kv_cache_dtype} is not modelled")
        check_choice("kv_cache_dtype", self.kv_cache_dtype, tuple(KV_CACHE_DTYPES))
        if self.enable_prefix_caching is not None:
            check_flag("enable_prefix_caching", self.enable_prefix_caching)
        self._check_budget()

    def _check_budget(self) -> None:
        """The budget's flags, as ``CacheConfig`` (vllm/config/cache.py:215, ``gt=0, le=1``),
        ``ModelConfig`` and ``CompilationConfig`` check them."""
        utilization = check_ratio("gpu_memory_utilization", self.gpu_memory_utilization)
        if utilization > 1:
            raise fail(
                "gpu_memory_utilization",
                f"1 validation error for CacheConfig: Input should be less than or equal to 1 "
                f"(input_value={utilization!r}): vLLM refuses it",
            )
        check_dtype(self.dtype, _DTYPES, "vLLM")
        check_optional_count("max_num_batched_tokens", self.max_num_batched_tokens, 1)
        check_flag("enforce_eager", self.enforce_eager)
        if self.cudagraph_mode is not None:
            check_choice("cudagraph_mode", self.cudagraph_mode, _CUDAGRAPH_MODES)
        for size in self.cudagraph_capture_sizes or ():
            check_count("cudagraph_capture_sizes", size, 1)
        check_optional_count("max_cudagraph_capture_size", self.max_cudagraph_capture_size, 1)
        offload = self.cpu_offload_gb
        if isinstance(offload, bool) or not isinstance(offload, int | float):
            raise TypeError("argument cpu_offload_gb: must be a number")
        if not self.cpu_offload_gb >= 0:
            raise fail("cpu_offload_gb", f"must be 0 or more, got {self.cpu_offload_gb!r}")
        for name in ("weights_bytes", "activation_bytes", "cuda_graph_bytes", "non_torch_bytes"):
            check_optional_count(name, getattr(self, name), 0)


# --dtype (vllm/engine/arg_utils.py: ModelConfig.dtype's choices) that the models' dtype rule
# reads; float32 is refused as not modelled (check_dtype).
_DTYPES: Final = ("auto", "bfloat16", "float16", "half")
# CUDAGraphMode names (vllm/config/compilation.py).
_CUDAGRAPH_MODES: Final = (
    "NONE",
    "PIECEWISE",
    "FULL",
    "FULL_DECODE_ONLY",
    "FULL_AND_PIECEWISE",
)


def vllm_reservation(
    config: ConfigSource,
    *,
    version: str | None = None,
    tensor_parallel_size: int = 1,
    max_num_seqs: int | None = None,
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
    gpu_arch: str | None = None,
    gpu: object = None,
    gpu_memory_bytes: int | None = None,
    gpu_memory_utilization: float | None = None,
    dtype: str = "auto",
    quantization: str | None = None,
    max_num_batched_tokens: int | None = None,
    enforce_eager: bool = False,
    cudagraph_mode: str | None = None,
    cudagraph_capture_sizes: tuple[int, ...] | None = None,
    max_cudagraph_capture_size: int | None = None,
    cpu_offload_gb: float = 0,
    hf_overrides: Mapping[str, Any] | None = None,
    speculative_method: str | None = None,
    draft_config: ConfigSource | None = None,
    weights_bytes: int | None = None,
    activation_bytes: int | None = None,
    cuda_graph_bytes: int | None = None,
    non_torch_bytes: int | None = None,
) -> VllmReservation:
    """What vLLM ``version`` (``releases.resolve_release``: ``None`` the newest modelled, 0.33.0;
    any release from 0.10.2, each under its own rules, ``releases.vllm``) reserves for the
    recurrent state of the model ``config`` describes, on one of ``tensor_parallel_size`` ranks,
    launched with these flags (their vLLM names and the release's defaults: in 0.33.0
    ``gpu_memory_utilization`` 0.92, ``max_num_seqs`` and ``max_num_batched_tokens`` by the
    GPU's memory, ``enable_prefix_caching=None`` on for a hybrid model) on ``gpu`` (a
    ``decode_ring.gpus`` key or ``nvidia-smi`` name; ``gpu_memory_bytes`` its total, or any
    GPU's) or, without one, a GPU of ``gpu_arch`` (default sm90) with no budget.

    With a GPU, the KV budget is vLLM's: ``ceil(total x utilization)`` less the weights (the
    snapshot's safetensors, or ``weights_bytes`` per rank), the peak activation, non-torch
    memory and CUDA graphs (estimates, or the ``*_bytes`` given); ``kv_cache_memory_bytes``
    skips all of that, as vLLM skips profiling.

    Raises ``UnmodelledReleaseError`` (a ``ValueError``) for a version outside the modelled
    releases, ``ServerArgumentError`` (a ``ValueError`` naming the argument) for a value vLLM
    refuses, a launch it would not boot (``server_refusal`` holds vLLM's own words) or what
    this function does not model, ``ModelConfigError`` / ``TensorParallelSplitError`` as
    ``ssm_state`` does and for attention heads the TP cannot split, and ``TypeError`` for an
    argument of the wrong type."""
    arguments = {k: v for k, v in locals().items() if k not in ("config", "version")}
    launch = _Launch(**_release_defaults(_device_defaults(arguments), version))
    gpu_device = launch.gpu
    model = hybrid_model(
        _configured(config, launch),
        launch.release.release,
        "vllm",
        "reserves no state",
        tp_size=tensor_parallel_size,
        conv_dtype=mamba_cache_dtype,
        ssm_dtype=mamba_ssm_cache_dtype,
        speculative_tokens=num_speculative_tokens,
        version=launch.release.release.version,
    )
    _verify_speculative(model, launch)
    caching = _prefix_caching(model, launch)
    _verify_replayssm(model, launch)
    length = _max_model_len(model.text, launch.max_model_len)
    launch = _scheduler_defaults(launch, gpu_device, length)
    backends = _attention_backends(model, launch)
    specs = _mamba_specs(model, launch, caching, backends)
    block = _align_hybrid_block_size(model, launch, caching, specs, backends)
    drafter = _load_drafter(model, launch, block)
    groups = _kv_cache_groups(model, launch, specs, block, drafter)
    blocks = _blocks_per_request(launch, caching, specs, (groups, drafter), block, length)
    weights = _load_model(model, launch, drafter)
    memory = _determine_available_memory(model, launch, gpu_device, weights)
    pool = _kv_cache_pool(launch, memory, groups, blocks, length)
    steps = (caching, length, backends, block, drafter, groups, blocks, pool, weights, memory)
    log = _log_lines(launch, _fields(*steps))
    return within_64_bits(_reservation(model, launch, gpu_device, _fields(*steps, log)))


# --- the steps ------------------------------------------------------------------------------


# --- the GPU, the model and the defaults that hang on them ------------------------------------

_GIB: Final = 1 << 30
# get_batch_defaults (vllm/engine/arg_utils.py:2939-3000), for `vllm serve`
# (UsageContext.OPENAI_API_SERVER): (max_num_seqs, max_num_batched_tokens) by the GPU's NVML
# total; the middle tier not for an A100 or a GB10. Without a GPU, vLLM's fallback tier.
_LARGE_GPU: Final = (160 * _GIB, 1024, 16384)
_HOPPER_CLASS_GPU: Final = (70 * _GIB, 1024, 8192)
_SMALL_GPU: Final = (0, 256, 2048)


def _device_defaults(arguments: dict[str, Any]) -> dict[str, Any]:
    """The launch's arguments with the GPU they name (``gpu`` and ``gpu_memory_bytes``), its
    architecture (``gpu_arch`` overrides it; sm90 without a GPU) and vLLM's ``max_num_seqs``
    for its memory."""
    gpu = device(arguments["gpu"], arguments["gpu_memory_bytes"])
    given = arguments["gpu_arch"]
    if given is not None and not isinstance(given, str):
        raise TypeError(f"argument gpu_arch: must be a str, not {type_name(given)}")
    arch = given or (gpu.gpu_arch if gpu is not None else None) or "sm90"
    seqs = arguments["max_num_seqs"]
    if seqs is None:
        seqs = _batch_tier(gpu, arch)[1]
    return {**arguments, "gpu": gpu, "gpu_arch": arch, "max_num_seqs": seqs}


def _release_defaults(arguments: dict[str, Any], version: object) -> dict[str, Any]:
    """The launch's arguments with the release whose rules answer (``release`` and its
    ``rules``) and the defaults that are the release's own."""
    release = resolve_release("vllm", version)
    rules = vllm_rules(release.version)
    utilization = arguments["gpu_memory_utilization"]
    if utilization is None:
        utilization = rules.gpu_memory_utilization
    return {**arguments, "release": release, "rules": rules, "gpu_memory_utilization": utilization}


def _batch_tier(gpu: Device | None, arch: str) -> tuple[int, int, int]:
    """vLLM's batch defaults' tier for ``gpu`` (get_batch_defaults)."""
    if gpu is None:
        return _SMALL_GPU
    if gpu.memory_bytes >= _LARGE_GPU[0]:
        return _LARGE_GPU
    name = (gpu.name or "").lower()
    if gpu.memory_bytes >= _HOPPER_CLASS_GPU[0] and "a100" not in name and arch != "sm121":
        return _HOPPER_CLASS_GPU
    return _SMALL_GPU


def _configured(config: ConfigSource, launch: _Launch) -> ConfigSource:
    """The config as vLLM reads it: ``--hf-overrides`` applied, and ``--dtype`` as the model's
    dtype (``ModelConfig.dtype``), which the models' dtype rule then reads."""
    overrides = dict(launch.hf_overrides or {})
    if launch.dtype != "auto":
        overrides["dtype"] = "float16" if launch.dtype == "half" else launch.dtype
    return overridden(config, overrides) if overrides else config


def _scheduler_defaults(launch: _Launch, gpu: Device | None, length: _MaxModelLen) -> _Launch:
    """``max_num_batched_tokens``: the flag, else the GPU tier's, at most ``max_num_seqs x
    max_model_len`` (``_set_default_max_num_seqs_and_batched_tokens_args``,
    vllm/engine/arg_utils.py:3151-3230; chunked prefill on, as for a generative model)."""
    if launch.max_num_batched_tokens is not None:
        return launch
    tokens = _batch_tier(gpu, launch.gpu_arch)[2]
    tokens = min(launch.max_num_seqs * length.max_model_len, tokens)
    return replace(launch, max_num_batched_tokens=tokens)


@dataclass(frozen=True, slots=True)
class _LoadedModel:
    weights_bytes: int | None
    weights_rule: str
    quantization: str | None


def _load_model(model: HybridModel, launch: _Launch, drafter: _Drafter) -> _LoadedModel:
    """The weights one rank loads (``load_model``, vllm/v1/worker/gpu_model_runner.py:
    4960-5092, logged as "Model loading took"): ``weights_bytes`` as given, else the
    snapshot's safetensors under ``servers.weights``' rule, less what ``--cpu-offload-gb``
    moves to the host (the UVA offloader moves parameters until it reaches that many GiB,
    vllm/model_executor/offloader/uva.py:84-94)."""
    quantization = quantization_method(model.config.mapping, launch.quantization)
    if launch.weights_bytes is not None:
        return _LoadedModel(launch.weights_bytes, "--weights-memory", quantization)
    path = model.config.path
    checkpoint = read_checkpoint(Path(path).parent) if path is not None else None
    attention = model.state.attention
    dtype = attention.model_dtype if attention is not None else model.state.conv_dtype
    quantized = model.config.mapping.get("quantization_config") is not None
    online = launch.quantization == "fp8" and not quantized
    mtp = (launch.speculative_method or "").endswith("mtp")
    found = weights_per_rank(
        attention, checkpoint, launch.tensor_parallel_size, dtype, online_fp8=online, mtp=mtp
    )
    weights, rule = found.weights_bytes, found.weights_rule
    if weights is not None and drafter.draft_weights_bytes:
        weights += drafter.draft_weights_bytes
        rule += f"; and the drafter's {drafter.draft_weights_bytes:,} B"
    if weights is not None and launch.cpu_offload_gb:
        offloaded = min(weights, int(launch.cpu_offload_gb * _GIB))
        weights -= offloaded
        rule += f"; less {offloaded:,} B offloaded (--cpu-offload-gb {launch.cpu_offload_gb:g})"
    return _LoadedModel(weights, rule, quantization)


@dataclass(frozen=True, slots=True)
class _AvailableMemory:
    gpu_memory_utilization: float
    requested_memory_bytes: int | None
    peak_activation_bytes: int | None
    peak_activation_rule: str
    cuda_graph_bytes: int | None
    cuda_graph_rule: str
    cuda_graph_sizes: int
    non_torch_bytes: int | None
    non_torch_rule: str
    available_kv_cache_memory: int | None
    kv_cache_memory_rule: str


def _determine_available_memory(
    model: HybridModel, launch: _Launch, gpu: Device | None, weights: _LoadedModel
) -> _AvailableMemory:
    """``Worker.determine_available_memory`` (vllm/v1/worker/gpu_worker.py:641-820): with
    ``--kv-cache-memory-bytes``, that, and no profiling; else ``requested`` (``request_memory``,
    ceil(runtime total x utilization), vllm/v1/worker/utils.py:716-723) less what profiling
    finds: the weights and non-torch memory (``total_consumed``), the peak activation
    (``transient_peak_headroom``) and the CUDA-graph estimate (``profile_cudagraph_memory``,
    applied by default, :708-743). The profiled terms are the estimates of ``_profile``."""
    utilization = launch.gpu_memory_utilization
    sizes = _capture_sizes(model, launch)
    if launch.kv_cache_memory_bytes is not None:
        rule = "--kv-cache-memory-bytes"  # profiling skipped, utilization ignored (:655-681)
        return _AvailableMemory(
            utilization, None, None, "", None, "", len(sizes), None, "",
            launch.kv_cache_memory_bytes, rule,
        )  # fmt: skip
    if gpu is None:
        return _AvailableMemory(
            utilization, None, None, "", None, "", len(sizes), None, "", None, ""
        )  # fmt: skip
    requested = math.ceil(gpu.runtime_bytes * utilization)
    activation, activation_rule = _profile_run_peak(model, launch)
    graphs, graphs_rule = _profile_cudagraph_memory(model, launch, sizes)
    if not launch.rules.profiles_cuda_graphs:
        graphs, graphs_rule = 0, f"{launch.release.release} does not profile CUDA graphs by default"
    non_torch, non_torch_rule = _non_torch_memory(launch)
    if weights.weights_bytes is None:
        raise fail(
            "weights_bytes",
            "the snapshot holds no safetensors to size the weights from; give their size",
        )
    available = requested - weights.weights_bytes - activation - graphs - non_torch
    rule = (
        f"requested {requested:,} B - weights - peak activation - non-torch - CUDA graphs "
        "(gpu_worker.py:739-743)"
    )
    if available <= 0:
        raise fail(
            "gpu",
            f"{requested:,} B requested ({utilization:g} of {gpu.runtime_bytes:,} B) leaves "
            f"{available:,} B for the KV cache after the weights and the profiled terms; vLLM "
            "refuses to start",
            _NO_MEMORY,
        )
    return _AvailableMemory(
        utilization, requested, activation, activation_rule, graphs, graphs_rule, len(sizes),
        non_torch, non_torch_rule, available, rule,
    )  # fmt: skip


# --- the profiled terms: estimates ------------------------------------------------------------

# _set_cudagraph_sizes (vllm/config/vllm.py:2398-2470): 1, 2, 4, multiples of 8 below 256,
# multiples of 16 up to the largest; the largest 1024 on SM10x, else 512.
_LARGEST_GRAPH: Final = {10: 1024}
_DEFAULT_LARGEST_GRAPH: Final = 512


def _profile_run_peak(model: HybridModel, launch: _Launch) -> tuple[int, str]:
    """The peak activation ``profile_run`` leaves, ``profile.peak_activation_estimate`` for the
    model's text config at the launch's batch; or ``activation_bytes``."""
    if launch.activation_bytes is not None:
        return launch.activation_bytes, "--activation-memory"
    attention = model.state.attention
    return peak_activation_estimate(
        model.text,
        tp=launch.tensor_parallel_size,
        max_num_seqs=launch.max_num_seqs,
        max_num_batched_tokens=launch.max_num_batched_tokens or 0,
        element=DTYPE_BYTES[attention.model_dtype if attention is not None else "bfloat16"],
    )


def _capture_sizes(model: HybridModel, launch: _Launch) -> tuple[int, ...]:
    """The batch sizes vLLM captures CUDA graphs for: none eager or with mode NONE; the flag's;
    else the default list up to ``min(max_num_seqs x (1 + s) x 2, 512 or 1024 on SM10x)``
    (``--max-cudagraph-capture-size`` instead), with ``max_num_batched_tokens`` where it fits."""
    if launch.enforce_eager or launch.cudagraph_mode == "NONE":
        return ()
    if launch.cudagraph_capture_sizes:
        return tuple(sorted(set(launch.cudagraph_capture_sizes)))
    largest = launch.max_cudagraph_capture_size or min(
        launch.max_num_seqs * (1 + launch.num_speculative_tokens) * 2,
        _LARGEST_GRAPH.get(capability_major(launch.gpu_arch), _DEFAULT_LARGEST_GRAPH),
    )
    sizes = {1, 2, 4, *range(8, 256, 8), *range(256, largest + 1, 16)}
    tokens = launch.max_num_batched_tokens
    if tokens is not None and tokens <= largest:
        sizes.add(tokens)
    return tuple(sorted(size for size in sizes if size <= largest))


def _profile_cudagraph_memory(
    model: HybridModel, launch: _Launch, sizes: tuple[int, ...]
) -> tuple[int, str]:
    """The CUDA-graph memory vLLM estimates and takes from the KV budget
    (``profile_cudagraph_memory``, gpu_model_runner.py:6268-6380, applied as
    VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS defaults, vllm/envs.py:329), estimated: the
    graphs ``CudagraphDispatcher`` keys (every size in the mixed mode; under the default
    FULL_AND_PIECEWISE also a FULL decode graph for each size from 1 + s to (1 + s) x
    max_num_seqs: V1 vllm/v1/cudagraph_dispatcher.py:186-227, V2 vllm/v1/worker/gpu/
    cudagraph_utils.py:302-372) x decoder layers x 0.30 MiB, and a 0.1 GiB pool; none eager;
    or ``cuda_graph_bytes``."""
    if not sizes:
        return 0, "no CUDA graphs (--enforce-eager or cudagraph_mode NONE)"
    if launch.cuda_graph_bytes is not None:
        return launch.cuda_graph_bytes, "--cuda-graph-memory"
    graphs = len(sizes)
    if launch.cudagraph_mode in (None, "FULL_AND_PIECEWISE"):
        query = 1 + launch.num_speculative_tokens
        graphs += sum(1 for size in sizes if query <= size <= query * launch.max_num_seqs)
    layers = model.text.get("num_hidden_layers")
    if not isinstance(layers, int) or isinstance(layers, bool) or layers <= 0:
        layers = model.state.ssm_layers
    return cuda_graph_estimate(graphs=graphs, layers=layers)


def _non_torch_memory(launch: _Launch) -> tuple[int, str]:
    """Non-torch memory vLLM counts as consumed (``MemorySnapshot.non_torch_memory``,
    vllm/utils/mem_utils.py:140-170), estimated per rank and per tensor-parallel peer (NCCL,
    custom all-reduce) by ``profile.non_torch_estimate``; or ``non_torch_bytes``."""
    if launch.non_torch_bytes is not None:
        return launch.non_torch_bytes, "--non-torch-memory"
    return non_torch_estimate(launch.tensor_parallel_size)


@dataclass(frozen=True, slots=True)
class _PrefixCaching:
    enable_prefix_caching: bool
    prefix_caching_rule: str
    mamba_cache_mode: str


def _prefix_caching(model: HybridModel, launch: _Launch) -> _PrefixCaching:
    """Prefix caching: ``EngineArgs`` (vllm/engine/arg_utils.py:3075-3081) takes
    ``ModelConfig.is_prefix_caching_supported`` (vllm/config/model.py:2239-2291) by default (the
    release's: ``VllmRules.*_prefix_caching_default``; in 0.33.0 on for a hybrid model, off for
    an attention-free one); on means ``mamba_cache_mode`` align
    (``MambaModelConfig.verify_and_update_config``, vllm/model_executor/models/config.py:
    750-787), or, before 0.28.0, ``all`` for the Mamba families, which is not modelled. Before
    0.11.1 vLLM turns it off for every hybrid and Mamba model, and before 0.15.0 for every
    family but those (``VllmRules.prefix_caching``)."""
    rules, release = launch.rules, launch.release.release
    kind = "an attention-free model" if model.family.attention_free else "a hybrid generative model"
    if launch.enable_prefix_caching is not None:
        caching, rule = launch.enable_prefix_caching, "flag"
    else:
        if model.family.attention_free:
            caching = rules.attention_free_prefix_caching_default
        else:
            caching = rules.hybrid_prefix_caching_default
        rule = f"vLLM default: {'on' if caching else 'off'} for {kind}"
    family = model.state.family
    all_mode = rules.caches_all(family)
    forced_off = rules.prefix_caching == "off" or (rules.prefix_caching == "mamba" and not all_mode)
    if caching and forced_off:
        return _PrefixCaching(False, f"{release} turns it off for {kind}", "none")
    if caching and all_mode:
        raise fail(
            "enable_prefix_caching",
            f"{release} caches {family} prefixes in mamba_cache_mode 'all' (chunk-aligned "
            "blocks, a state page per block of context); not modelled",
        )
    if caching and launch.num_speculative_tokens and rules.align_refuses_speculative:
        raise fail(
            "enable_prefix_caching",
            f"{release} refuses speculative decoding in mamba_cache_mode 'align'",
            "AssertionError: Mamba cache mode 'align' is currently not compatible with "
            "speculative decoding.",
        )
    return _PrefixCaching(caching, rule, "align" if caching else "none")


def _verify_speculative(model: HybridModel, launch: _Launch) -> None:
    """Before 0.17.0 vLLM builds a Mamba layer with speculative decoding only for Qwen3-Next
    (vllm-0.10.2:vllm/v1/worker/gpu_model_runner.py:3701-3705)."""
    if launch.num_speculative_tokens and not launch.rules.serves_speculative(model.state.family):
        raise fail(
            "num_speculative_tokens",
            f"{launch.release.release} refuses it for {model.state.family}: 'Mamba with "
            "speculative decoding is not supported yet.'",
        )


def _verify_replayssm(model: HybridModel, launch: _Launch) -> None:
    """vLLM supports ``--use-replayssm`` only for ``SupportsReplaySSM`` models
    (vllm/config/vllm.py:3475-3479), and with speculative decoding only on the FlashInfer
    mamba backend, which is not modelled."""
    if not launch.use_replayssm:
        return
    if not model.family.vllm_replayssm:
        raise fail(
            "use_replayssm",
            f"{launch.release.release} supports ReplaySSM only for NemotronH, not "
            f"{model.state.family} "
            "(vllm/config/vllm.py:3475-3479)",
        )
    if launch.num_speculative_tokens:
        raise fail(
            "use_replayssm",
            "ReplaySSM with speculative decoding needs the FlashInfer mamba backend; not modelled",
        )


@dataclass(frozen=True, slots=True)
class _MaxModelLen:
    max_model_len: int
    max_model_len_rule: str


# vllm/config/model.py:2611-2618: these leave max_position_embeddings already scaled.
_PRESCALED_ROPE: Final = (
    "su",
    "longrope",
    "llama3",
    "yarn",
    "deepseek_yarn",
    "deepseek_llama_scaling",
)
# derive_max_model_len_and_key (model_arch_config_convertor.py:374-407), in its order.
_LENGTH_KEYS: Final = (
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


def _max_model_len(text: Mapping[str, Any], given: int | None) -> _MaxModelLen:
    """The flag, else vLLM's derived ``max_model_len`` (``_get_and_verify_max_len``,
    vllm/config/model.py:2540-2652): the smallest of the length keys the text config has
    (``model_max_length`` where given; 2048 when none is there), times the RoPE ``factor`` of
    a type that does not pre-scale it; LongRoPE takes ``original_max_position_embeddings``."""
    if given is not None:
        return _MaxModelLen(given, "flag")
    found = {
        key: value
        for key in _LENGTH_KEYS
        if isinstance(value := text.get(key), int) and not isinstance(value, bool)
    }
    key = "model_max_length" if "model_max_length" in found else None
    key = key or (min(found, key=lambda name: found[name]) if found else None)
    length, rule = (found[key], f"config {key}") if key else (2048, "no length in config: 2048")
    if key is not None and length < 1:
        # vLLM's ModelConfig refuses a max_model_len below 1 (vllm/config/model.py:1070-1075).
        raise ModelConfigError(
            f"field {key!r}: {show(length)} is not a count of tokens from 1 to 2**63 - 1; vLLM "
            "refuses a max_model_len below 1 (vllm/config/model.py:1070-1075)",
            field=key,
        )
    parameters = _rope_parameters(text)
    types = [str(rp.get("rope_type", rp.get("type"))) for rp in parameters]
    if "longrope" in types:
        original = text.get("original_max_position_embeddings", length)
        if not isinstance(original, int) or isinstance(original, bool):
            raise fail("max_model_len", "LongRoPE without an integer original length; give it")
        return _MaxModelLen(
            original, "config original_max_position_embeddings (vLLM LongRoPE default)"
        )
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
    return _MaxModelLen(int(length * factor), rule + " (vLLM derived)")


def _rope_parameters(text: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """``iter_rope_parameters`` (vllm/transformers_utils/config.py:690-699): one dict, or one
    per layer type when nested; a legacy ``rope_scaling`` stands in for ``rope_parameters``."""
    raw = text.get("rope_parameters") or text.get("rope_scaling")
    if not isinstance(raw, Mapping) or not raw:
        return []
    if all(isinstance(value, Mapping) for value in raw.values()):
        return [value for value in raw.values() if value]
    return [raw]


@dataclass(frozen=True, slots=True)
class _Backends:
    attention_backend: str | None
    gdn_prefill_backend: str | None
    attention_backend_rule: str


# _get_backend_priorities (vllm/platforms/cuda.py:84-178) for a causal GQA/MHA model: FlashInfer
# first on SM10x, FlashAttention first elsewhere; the first whose checks pass is used
# (:377-470). FLEX_ATTENTION and TURBOQUANT follow, not modelled.
_ATTENTION_PRIORITIES: Final[Mapping[int, tuple[str, ...]]] = {
    10: ("FLASHINFER", "FLASH_ATTN", "TRITON_ATTN"),
}
_DEFAULT_PRIORITIES: Final = ("FLASH_ATTN", "FLASHINFER", "TRITON_ATTN")
# FlashInfer's head sizes (flashinfer.py:690-693) and compute capabilities 8.0 to 12.1
# (:695-704).
_FLASHINFER_HEADS: Final = (64, 128, 256, 512)
_FLASHINFER_MAX_CAPABILITY: Final = 121
# The GDN layer's FlashInfer prefill off SM90 needs this key head size (and CUDA 13, which this
# wheel is built for): _resolve_gdn_prefill_backend (gdn/qwen_gdn_linear_attn.py:148-270).
_FLASHINFER_GDN_HEAD_K: Final = 128


def _attention_backends(model: HybridModel, launch: _Launch) -> _Backends:
    """The attention backend vLLM picks by default: the first of ``_get_backend_priorities``
    (vllm/platforms/cuda.py:84-178) whose checks pass (``_refusal``); for MLA, FlashAttention-MLA
    on SM90, FlashInfer-MLA on SM10x, Triton-MLA elsewhere (the first that passes its
    capability check, cuda.py:96-156); ``None`` without attention layers. The gated delta net's
    prefill (``_resolve_gdn_prefill_backend``, gdn/qwen_gdn_linear_attn.py:148-270): FlashInfer
    on SM90, and on SM10x/SM12x when the text config's ``linear_key_head_dim`` is 128; else
    Triton; ``None`` without such layers."""
    attention, arch, kv_dtype = model.state.attention, launch.gpu_arch, launch.kv_cache_dtype
    major = capability_major(arch)
    flashinfer_gdn = major == 9 or (
        major in (10, 12) and model.text.get("linear_key_head_dim") == _FLASHINFER_GDN_HEAD_K
    )
    prefills_gdn = any(
        KINDS[group.kind].vllm_checkpoint is Checkpoint.FLASHINFER_GDN
        for group in model.state.groups
    )
    gdn_backend = ("flashinfer" if flashinfer_gdn else "triton") if prefills_gdn else None
    if attention is None:
        return _Backends(None, gdn_backend, "no attention layer")
    if attention.mla:
        if kv_dtype not in ("auto", "bfloat16", "float16"):
            raise fail("kv_cache_dtype", f"{kv_dtype} with MLA is not modelled")
        # FlashAttention-MLA needs FA3 (SM90); FlashMLA and FlashInfer-MLA SM90/SM10x.
        mla = {9: "FLASH_ATTN_MLA", 10: "FLASHINFER_MLA"}.get(major, "TRITON_MLA")
        return _Backends(mla, gdn_backend, f"vLLM's first MLA backend on {arch}")
    priorities = _ATTENTION_PRIORITIES.get(major, _DEFAULT_PRIORITIES)
    passed: list[str] = []
    for backend in priorities:
        refusal = _refusal(backend, attention.head_dim, KV_CACHE_DTYPES[kv_dtype] == 1, arch)
        if refusal is None:
            rule = f"first of {', '.join(priorities)} on {arch}"
            return _Backends(backend, gdn_backend, "; ".join([*passed, rule]))
        passed.append(f"{backend} refused: {refusal}")
    raise ModelConfigError(
        f"no attention backend vLLM tries takes this launch on {arch}: {'; '.join(passed)}",
        field="head_dim",
    )


def _refusal(backend: str, head: int, fp8: bool, arch: str) -> str | None:
    """Why ``backend`` refuses a head size, an fp8 KV cache or the GPU, as its checks say; None
    when it takes them. FlashAttention: heads a multiple of 8 up to 256 (flash_attn.py:424-435),
    an fp8 KV cache only as FA3 on SM90 or FA4 on SM10x (``flash_attn_supports_kv_cache_dtype``,
    fa_utils.py:282-313). FlashInfer: its head sizes, capability 8.0 to 12.1 (flashinfer.py:
    690-704), fp8 taken. Triton: heads of 32 or more (triton_attn.py:379-380), an fp8 KV cache
    from SM89 (:511-524)."""
    capability = int(arch[2:])
    if backend == "FLASH_ATTN":
        if head % 8 or head > 256:
            return f"head size {head}"
        if fp8 and capability_major(arch) not in (9, 10):
            return "an fp8 KV cache needs FA3 (SM90) or FA4 (SM10x)"
        return None
    if backend == "FLASHINFER":
        if head not in _FLASHINFER_HEADS:
            return f"head size {head}"
        return None if capability <= _FLASHINFER_MAX_CAPABILITY else f"capability {arch}"
    if head < 32:
        return f"head size {head}"
    return "an fp8 KV cache needs SM89 or later" if fp8 and capability < 89 else None


@dataclass(frozen=True, slots=True)
class _MambaSpec:
    """The state layers of one kind: one ``MambaSpec`` bucket, its page as the layer allocates
    it (``get_state_shape`` / ``get_state_dtype``, with the ReplaySSM ring where it joins it),
    its page in the model-level view (``get_mamba_state_shape_from_config`` /
    ``..._dtype_from_config``, which size the attention block and the padding,
    vllm/platforms/interface.py:1045-1061), its ``get_prefill_checkpoint_alignment`` (``None``:
    it exports no checkpoints), and its ``num_prefill_checkpoint_blocks`` when every state layer
    exports checkpoints."""

    layers: int
    page: int
    model_page: int
    checkpoint_alignment: int | None
    checkpoint_blocks: int


def _mamba_specs(
    model: HybridModel, launch: _Launch, caching: _PrefixCaching, backends: _Backends
) -> tuple[_MambaSpec, ...]:
    """One ``MambaSpec`` per kind of recurrent layer (``MambaBase.get_kv_cache_spec``,
    mamba/abstract.py:72-91, and the layers' overrides): MambaMixer2 declares no alignment
    (the base ``get_prefill_checkpoint_alignment``, :65-70) and one checkpoint block; the gated
    delta net of a family whose layer exports FlashInfer checkpoints 64 tokens and one block in
    align mode; KDA one block under FlashKDA. vLLM's two views of a layer's state: the layer's
    page (``model.state``) and the model-level one (``ssm_state(view="model")``)."""
    ring = _replayssm_ring_bytes(model, launch) if launch.use_replayssm else 0
    view = ssm_state(
        model.config,
        layout="vllm",
        view="model",
        version=launch.release.release.version,
        tp_size=launch.tensor_parallel_size,
        conv_dtype=launch.mamba_cache_dtype,
        ssm_dtype=launch.mamba_ssm_cache_dtype,
        speculative_tokens=launch.num_speculative_tokens,
    )
    flashinfer_align = (
        backends.gdn_prefill_backend == "flashinfer" and caching.enable_prefix_caching
    )
    flashkda = _flashkda(model, launch)
    planned = launch.rules.checkpoint_kinds
    specs = []
    for group, level in zip(model.state.groups, view.groups, strict=True):
        traits = KINDS[group.kind]
        checkpoint = traits.vllm_checkpoint if traits.vllm_checkpoint.value in planned else None
        aligned = (
            checkpoint is Checkpoint.FLASHINFER_GDN
            and flashinfer_align
            and model.family.vllm_gdn_checkpoints
        )
        blocks = checkpoint is Checkpoint.ALWAYS or (checkpoint is Checkpoint.FLASHKDA and flashkda)
        joined = ring if traits.vllm_replayssm_ring else 0
        page, model_page = group.per_layer_bytes + joined, level.per_layer_bytes + joined
        alignment = _FLASHINFER_GDN_CHECKPOINT_ALIGNMENT if aligned else None
        checkpoints = int(blocks or aligned)
        specs.append(_MambaSpec(len(group.layer_indices), page, model_page, alignment, checkpoints))
    return tuple(specs)


def _flashkda(model: HybridModel, launch: _Launch) -> bool:
    """Whether vLLM's KDA layer prefills with FlashKDA (``auto``), as the family's rule says
    (``Family.vllm_flashkda``): the GPU's compute capability, head size 128, a bfloat16 model,
    the recurrent state's dtype, and a gate lower bound in the text config as vLLM's config
    class holds it (``class_fields``: GLM-5.3-Flash's class defaults one)."""
    rule = model.family.vllm_flashkda
    if rule is None or not launch.rules.plans_flashkda_checkpoint(model.state.family):
        return False
    bound: object = class_fields(model.config, layout="vllm")
    for key in rule.bound:
        bound = bound.get(key) if isinstance(bound, Mapping) else None
    attention = model.state.attention
    model_dtype = attention.model_dtype if attention is not None else None
    for group in model.state.groups:
        if KINDS[group.kind].vllm_checkpoint is Checkpoint.FLASHKDA:
            recurrent = group.tensors[-1]
            return (
                capability_major(launch.gpu_arch) in rule.capability_majors
                and recurrent.shape[-1] == 128
                and model_dtype == "bfloat16"
                and (rule.state_dtypes is None or recurrent.dtype in rule.state_dtypes)
                and bound is not None
            )
    return False


def _replayssm_ring_bytes(model: HybridModel, launch: _Launch) -> int:
    """``append_replayssm_ring`` on the Triton backend (mamba_utils.py:92-95, :213-246): x and B
    caches in the activation dtype (the model's), dt in float32; the groups per rank are the
    conv channels less the heads' (``conv_dim = d_inner + 2 * groups * d_state``, :185-211)."""
    state = model.state
    group = next(group for group in state.groups if KINDS[group.kind].vllm_replayssm_ring)
    conv, ssm = group.tensors
    heads, head_dim, d_state = ssm.shape
    groups = (conv.shape[1] - heads * head_dim) // (2 * d_state)
    model_dtype = state.attention.model_dtype if state.attention is not None else state.conv_dtype
    activation = DTYPE_BYTES[model_dtype]
    length = launch.replayssm_buffer_len
    return (
        heads * length * head_dim * activation
        + heads * length * 4
        + groups * length * d_state * activation
    )


@dataclass(frozen=True, slots=True)
class _BlockSize:
    block_size: int
    block_size_rule: str
    attention_page_bytes: int
    state_page_bytes: int
    state_page_bytes_padded: int


def _align_hybrid_block_size(
    model: HybridModel,
    launch: _Launch,
    caching: _PrefixCaching,
    specs: tuple[_MambaSpec, ...],
    backends: _Backends,
) -> _BlockSize:
    """``_align_hybrid_block_size`` (vllm/platforms/interface.py:940-1137): the attention block
    raised until one attention page holds the largest model-level state page, to which every
    layer's page is padded; a layer page larger than that padding fails vLLM's startup assert
    (``MambaSpec.page_size_bytes``, vllm/v1/kv_cache_interface.py:1120-1129). Without
    attention, ``unify_kv_cache_spec_page_size`` (kv_cache_planning.py:346-408) pads every
    state page to the largest."""
    largest = max(spec.page for spec in specs)
    block = launch.block_size if launch.block_size is not None else _DEFAULT_BLOCK_SIZE
    rule = "flag" if launch.block_size is not None else f"vLLM default {_DEFAULT_BLOCK_SIZE}"
    attention = model.state.attention
    if attention is None:
        return _BlockSize(block, rule, 0, largest, largest)
    element = KV_CACHE_DTYPES[launch.kv_cache_dtype] or DTYPE_BYTES[attention.model_dtype]
    page_1 = attention.page_bytes_per_token(launch.tensor_parallel_size, element)
    if page_1 <= 0:
        raise ModelConfigError(
            "attention page of 0 bytes a token: vLLM divides by it sizing the block "
            "(vllm/platforms/interface.py:1098-1101)",
            field="head_dim",
        )
    alignment = _granularity(attention, launch, caching, specs, block, backends)
    model_page = max(spec.model_page for spec in specs)
    needed = alignment * -(-model_page // (alignment * page_1))
    needed = _KERNEL_BLOCK * -(-needed // _KERNEL_BLOCK)
    if block < needed:
        block = needed
        rule = "raised by _align_hybrid_block_size so that one attention page holds the state page"
    padded = block * page_1
    if largest > padded:
        # The two views differ by the conv window (speculative tokens the model-level view
        # leaves out) or by the state's dtype (a flag the layer does not read).
        widened = launch.num_speculative_tokens and launch.rules.sizes_pages_unwidened(
            model.state.family
        )
        raise fail(
            "num_speculative_tokens" if widened else "mamba_ssm_cache_dtype",
            f"the layer allocates a state page of {largest} B, but {launch.release.release} pads "
            "state pages "
            f"to {padded} B ({block}-token attention blocks sized by the model-level page of "
            f"{model_page} B): its startup assert page_size_padded >= page_size fails "
            "(vllm/v1/kv_cache_interface.py:1127); a larger --block-size pads more",
        )
    return _BlockSize(block, rule, padded, largest, padded)


def _granularity(
    attention: AttentionLayers,
    launch: _Launch,
    caching: _PrefixCaching,
    specs: tuple[_MambaSpec, ...],
    block: int,
    backends: _Backends,
) -> int:
    """The token count the aligned block is a multiple of: from 0.20.0 ``max(the backend's
    smallest kernel block, block_size)`` (vllm-0.20.0:vllm/platforms/interface.py:575-582;
    before, 16, a larger ``--block-size`` kept as it is), the release's MLA and SM10x head-256
    floors, and in align mode the checkpoints' alignment."""
    rules = launch.rules
    kernel = _BACKEND_KERNEL_BLOCK.get(backends.attention_backend or "", _KERNEL_BLOCK)
    alignment = max(kernel, block) if rules.block_size_aligns else _KERNEL_BLOCK
    if attention.mla and rules.mla_min_block is not None:
        alignment = max(alignment, rules.mla_min_block)
    floor = rules.blackwell_head256_block
    blackwell = capability_major(launch.gpu_arch) == _BLACKWELL
    if floor is not None and blackwell and not attention.mla and attention.head_dim == 256:
        alignment = max(alignment, floor)
    if caching.mamba_cache_mode == "align":
        checkpoint = 1
        if all(spec.checkpoint_alignment is not None for spec in specs):
            checkpoint = math.lcm(*(spec.checkpoint_alignment or 1 for spec in specs))
        alignment = math.lcm(alignment, checkpoint)
    return alignment


@dataclass(frozen=True, slots=True)
class _KvCacheGroups:
    group_size: int
    state_groups: int
    attention_groups: int
    bytes_per_block: int
    attention_layers: int
    draft_groups: int


def _kv_cache_groups(
    model: HybridModel,
    launch: _Launch,
    specs: tuple[_MambaSpec, ...],
    block: _BlockSize,
    drafter: _Drafter,
) -> _KvCacheGroups:
    """``_get_kv_cache_groups_uniform_page_size`` (kv_cache_planning.py:1138-1147, :416-556):
    one spec for every layer is one group of them all; otherwise ``g`` layers a group (the
    fewest per spec, or the most where under ``VllmRules.group_max_ratio`` times that); a block
    costs ``g`` padded pages (``_get_kv_cache_bytes_per_block``, :574-605). A drafter's
    attention layers join the target's spec where theirs is the same page, else are a spec of
    their own (their block scaled to the page, ``unify_kv_cache_spec_page_size``, :346-408)."""
    attention = model.state.attention
    target = len(attention.layer_indices) if attention is not None else 0
    merged = drafter.draft_same_spec
    attention_count = target + (drafter.draft_attention_layers if merged else 0)
    own = drafter.draft_attention_layers if not merged else 0
    buckets = [spec.layers for spec in specs] + [n for n in (attention_count, own) if n]
    ratio = launch.rules.group_max_ratio
    if len(buckets) == 1:
        group = buckets[0]
    else:
        group = min(buckets)
        if ratio is not None and max(buckets) < group * ratio:
            group = max(buckets)
    state_groups = sum(-(-spec.layers // group) for spec in specs)
    attention_groups = -(-attention_count // group) if attention_count else 0
    return _KvCacheGroups(
        group,
        state_groups,
        attention_groups,
        group * block.state_page_bytes_padded,
        target,
        -(-own // group) if own else 0,
    )


@dataclass(frozen=True, slots=True)
class _Drafter:
    draft_attention_layers: int
    draft_block_size: int | None
    draft_same_spec: bool
    draft_weights_bytes: int
    draft_rule: str


def _load_drafter(model: HybridModel, launch: _Launch, block: _BlockSize) -> _Drafter:
    """A separate draft model (``--speculative-config``'s ``model``: EAGLE, EAGLE3, DFlash, a
    small LM): its attention layers, which vLLM caches beside the target's
    (``get_kv_cache_spec``, gpu_model_runner.py:7081-7120), their block, and its weights, which
    load with the target's (``load_model``, :4960-5076). A recurrent drafter is not modelled."""
    if launch.draft_config is None:
        return _Drafter(0, None, False, 0, "")
    loaded = load_config(launch.draft_config)
    tp = launch.tensor_parallel_size
    state = ssm_state(loaded, layout="vllm", tp_size=tp, version=launch.release.release.version)
    attention = state.attention
    if attention is None or state.ssm_layers:
        raise fail(
            "draft_config", "a drafter with recurrent layers (or no attention) is not modelled"
        )
    element = KV_CACHE_DTYPES[launch.kv_cache_dtype] or DTYPE_BYTES[attention.model_dtype]
    page = attention.page_bytes_per_token(tp, element)
    padded = block.state_page_bytes_padded
    if padded % page:
        raise fail("draft_config", f"its {page} B a token does not divide the {padded} B page")
    causal = _drafter_causal(loaded.mapping)
    same = model.state.attention is not None and causal and page * block.block_size == padded
    path = loaded.path
    checkpoint = read_checkpoint(Path(path).parent) if path is not None else None
    found = weights_per_rank(attention, checkpoint, tp, attention.model_dtype)
    kind = (
        "the target's spec" if same else "a spec of their own" + ("" if causal else ", non-causal")
    )
    rule = (
        f"{len(attention.layer_indices)} draft attention layers, {page} B a token a rank, "
        f"{kind}, block {padded // page}; weights {found.weights_rule}"
    )
    layers = len(attention.layer_indices)
    return _Drafter(layers, padded // page, same, found.weights_bytes or 0, rule)


def _drafter_causal(root: Mapping[str, Any]) -> bool:
    """Whether a drafter's attention is causal: a DFlash drafter's is not unless its config
    says so (``_dflash_layer_causal``, vllm/model_executor/models/qwen3_dflash.py:62-81), and a
    non-causal layer's ``FullAttentionSpec(non_causal=True)`` is a spec of its own
    (vllm/v1/kv_cache_interface.py:634-640), grouped apart from the target's."""
    names = root.get("architectures")
    name = names[0] if isinstance(names, list) and names else ""
    if not (isinstance(name, str) and "DFlash" in name):
        return True
    if root.get("is_causal") is not None:
        return bool(root.get("is_causal"))
    flash = root.get("dflash_config")
    if isinstance(flash, Mapping) and flash.get("causal") is not None:
        return bool(flash.get("causal"))
    types = root.get("layer_types")
    return isinstance(types, list) and bool(types) and all(k == "sliding_attention" for k in types)


@dataclass(frozen=True, slots=True)
class _BlocksPerRequest:
    state_blocks_per_request: int
    planned_blocks_per_request: int
    prefill_checkpoint_blocks: int
    blocks_per_request_at_max_model_len: int
    state_bytes: int
    planned_state_bytes: int


def _blocks_per_request(
    launch: _Launch,
    caching: _PrefixCaching,
    specs: tuple[_MambaSpec, ...],
    grouped: tuple[_KvCacheGroups, _Drafter],
    block: _BlockSize,
    length: _MaxModelLen,
) -> _BlocksPerRequest:
    """``MambaSpec.max_memory_usage_bytes`` (vllm/v1/kv_cache_interface.py:1135-1141): held at
    decode ``1 + s``, planned ``2 + s + c`` in align mode (``c``: the prefill checkpoint block,
    when any spec has one and, for the gated delta net, every state layer exports
    checkpoints), else ``1 + s``; ``s`` is 0 under ReplaySSM. One request at ``max_model_len``
    takes ``ceil(len / block)`` blocks in every attention group besides, and a drafter's own
    groups ``ceil(len / its block)``."""
    groups, drafter = grouped
    speculative = 0 if launch.use_replayssm else launch.num_speculative_tokens
    all_aligned = all(spec.checkpoint_alignment is not None for spec in specs)
    checkpoints = max(
        spec.checkpoint_blocks if spec.checkpoint_alignment is None or all_aligned else 0
        for spec in specs
    )
    held = 1 + speculative
    align = caching.mamba_cache_mode == "align"
    planned = 2 + speculative + checkpoints if align else held
    if not launch.rules.plans_speculative_blocks:
        planned = 1  # before 0.15.0: max_memory_usage_bytes is one page
    attention_blocks = -(-length.max_model_len // block.block_size)
    per_request = groups.attention_groups * attention_blocks + groups.state_groups * planned
    if groups.draft_groups and drafter.draft_block_size:
        per_request += groups.draft_groups * -(-length.max_model_len // drafter.draft_block_size)
    state = launch.max_num_seqs * groups.state_groups * groups.bytes_per_block
    return _BlocksPerRequest(
        held, planned, checkpoints if align else 0, per_request, state * held, state * planned
    )


@dataclass(frozen=True, slots=True)
class _KvCachePool:
    kv_cache_memory_bytes: int | None
    num_blocks: int | None
    max_concurrency: float | None


def _kv_cache_pool(
    launch: _Launch,
    memory: _AvailableMemory,
    groups: _KvCacheGroups,
    blocks: _BlocksPerRequest,
    length: _MaxModelLen,
) -> _KvCachePool:
    """With a KV budget: ``num_blocks = budget // bytes_per_block`` (kv_cache_planning.py:
    1540-1544); vLLM's startup check (``_check_enough_kv_cache_memory``, :50-87, against the
    budget less the null block, :1533-1543): one request at ``max_model_len`` must fit; and
    ``get_max_concurrency_for_kv_cache_config`` (kv_cache_utils.py:1061-1093)."""
    budget = memory.available_kv_cache_memory
    if budget is None:
        return _KvCachePool(None, None, None)
    per_block, per_request = groups.bytes_per_block, blocks.blocks_per_request_at_max_model_len
    usable = budget - per_block if launch.rules.null_block_checked else budget
    field = "kv_cache_memory_bytes" if launch.kv_cache_memory_bytes is not None else "gpu"
    if usable <= 0:
        raise fail(
            field,
            f"{budget} B holds {max(usable, 0) // per_block} usable blocks of {per_block} B; "
            "vLLM refuses to start",
            _NO_MEMORY,
        )
    if per_block * per_request > usable:
        raise fail(
            field,
            f"{budget} B holds {max(usable, 0) // per_block} usable blocks of "
            f"{per_block} B; one request at max_model_len {length.max_model_len} needs "
            f"{per_request}: vLLM refuses to start",
            _not_enough(length.max_model_len, per_block * per_request, usable),
        )
    num_blocks = budget // per_block
    return _KvCachePool(budget, num_blocks, num_blocks / per_request)


# _check_enough_kv_cache_memory's refusals (vllm/v1/core/kv_cache_planning.py:50-87).
_NO_MEMORY: Final = (
    "ValueError: No available memory for the cache blocks. Try increasing "
    "`gpu_memory_utilization` when initializing the engine (this flag also controls CPU memory "
    "reservation on the CPU backend, despite its name). See "
    "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
)


def _not_enough(max_model_len: int, needed: int, available: int) -> str:
    """vLLM's refusal when one request at ``max_model_len`` does not fit (without its estimate
    of the length that would, which it searches for)."""
    return (
        f"ValueError: To serve at least one request with the model's max seq len "
        f"({max_model_len}), ({gib(needed)} GiB KV cache is needed, which is larger than the "
        f"available KV cache memory ({gib(available)} GiB). Try increasing "
        "`gpu_memory_utilization` (which also controls CPU memory on the CPU backend) or "
        "decreasing `max_model_len` when initializing the engine. See "
        "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
    )


# --- what vLLM logs --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Log:
    kv_cache_tokens: int | None
    full_context_sequences: int | None
    mamba_page_padding_percent: float | None
    log_lines: tuple[str, ...]


# The oldest release whose startup logs calibrated servers.profile's estimates.
_CALIBRATED: Final = parse_version("0.27.0").release
# What vLLM leaves free of its KV-cache suggestion (gpu_worker.py:1018-1021).
_REDUNDANCY_BUFFER: Final = 150 * (1 << 20)


def _log_lines(launch: _Launch, steps: Mapping[str, Any]) -> _Log:
    """The lines the vLLM release logs at boot about this reservation, in its words, with the
    predicted numbers: "Model loading took" (gpu_model_runner.py:5088-5092), the block and
    padding lines (``_align_hybrid_block_size``, platforms/interface.py:1106-1137), the KV
    budget (gpu_worker.py:655-681 or :772-799), the capacity (``update_kv_cache_capacity``,
    kv_cache_utils.py:1136-1158; before 0.28.0 two lines, and before 0.20.1 the token count is
    ``num_blocks // groups x block``, vllm-0.10.2:vllm/v1/core/kv_cache_utils.py:1022-1033) and
    the memory summary (gpu_worker.py:1010-1062, from 0.20.0, when CUDA graphs are profiled).
    What the package cannot predict (seconds) is ``?``."""
    lines = []
    if steps["weights_bytes"] is not None:
        lines.append(f"Model loading took {gib(steps['weights_bytes'])} GiB memory and ? seconds")
    block, page, padded = (
        steps["block_size"],
        steps["state_page_bytes"],
        steps["state_page_bytes_padded"],
    )
    if steps["block_size_rule"].startswith("raised"):
        lines.append(
            f"Setting attention block size to {block} tokens to ensure that attention page size "
            "is >= mamba page size."
        )
    padding = 100 * (padded - page) / page if page and padded > page else None
    if padding is not None and steps["attention_page_bytes"]:
        lines.append(
            f"Padding mamba page size by {padding:.2f}% to ensure that mamba page size and "
            "attention page size are exactly equal."
        )
    lines += _budget_lines(launch, steps)
    concurrency, length = steps["max_concurrency"], steps["max_model_len"]
    tokens = _kv_cache_tokens(launch, steps)
    if tokens is not None:
        size = f"GPU KV cache size: {tokens:,} tokens"
        most = f"Maximum concurrency for {length:,} tokens per request: {concurrency:.2f}x"
        lines += [f"{size}, {most}"] if launch.rules.capacity_one_line else [size, most]
    if launch.rules.profiles_cuda_graphs:
        lines += _summary_line(launch, steps)
    sequences = int(concurrency) if concurrency is not None else None
    return _Log(tokens, sequences, padding, tuple(lines))


def _kv_cache_tokens(launch: _Launch, steps: Mapping[str, Any]) -> int | None:
    """The "GPU KV cache size" token count: ``int(concurrency x max_model_len)`` from 0.20.1,
    before ``num_blocks // groups x`` the smallest group block (the attention block; a Mamba
    group's is ``max_model_len`` without prefix caching)."""
    concurrency, length = steps["max_concurrency"], steps["max_model_len"]
    if concurrency is None:
        return None
    if launch.rules.kv_tokens_from_concurrency:
        return int(concurrency * length)
    groups = steps["attention_groups"] + steps["state_groups"] + steps["draft_groups"]
    smallest = steps["block_size"] if steps["attention_groups"] else length
    if steps["mamba_cache_mode"] == "align":
        smallest = steps["block_size"]
    return int(steps["num_blocks"] // groups * smallest)


def _budget_lines(launch: _Launch, steps: Mapping[str, Any]) -> list[str]:
    """The KV budget's lines: the flag's, or the profiled one and the CUDA-graph note."""
    gpu = launch.gpu
    if launch.kv_cache_memory_bytes is not None:
        free = gib(gpu.runtime_bytes) if gpu is not None else "?"
        return [
            f"Initial free memory {free} GiB, reserved {gib(launch.kv_cache_memory_bytes)} GiB "
            "memory for KV Cache as specified by kv_cache_memory_bytes config and skipped "
            "memory profiling. This does not respect the gpu_memory_utilization config. Only "
            "use kv_cache_memory_bytes config when you want manual control of KV cache memory "
            "size. If OOM'ed, check the difference of initial free memory between the current "
            "run and the previous run where kv_cache_memory_bytes is suggested and update it "
            "correspondingly."
        ]
    available = steps["available_kv_cache_memory"]
    if available is None or gpu is None:
        return []
    shown = gib(available) if launch.rules.available_memory_rounded else f"{available / _GIB:.2f}"
    lines = [f"Available KV cache memory: {shown} GiB"]
    graphs = steps["cuda_graph_bytes"] or 0
    if graphs > 0 and launch.rules.profiles_cuda_graphs:
        util = launch.gpu_memory_utilization
        delta = graphs / gpu.runtime_bytes
        lines.append(
            "CUDA graph memory profiling is enabled (default since v0.21.0). The current "
            f"--gpu-memory-utilization={util:.4f} is equivalent to --gpu-memory-utilization="
            f"{round(util - delta, 4):.4f} without CUDA graph memory profiling. To maintain the "
            "same effective KV cache size as before, increase --gpu-memory-utilization to "
            f"{min(round(util + delta, 4), 1.0):.4f}. To disable, set "
            "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0."
        )
    return lines


def _summary_line(launch: _Launch, steps: Mapping[str, Any]) -> list[str]:
    """The memory summary after the graphs are captured, the captured graphs taken as the
    estimate; none with ``--kv-cache-memory-bytes`` (gpu_worker.py:1010-1062)."""
    gpu, requested = launch.gpu, steps["requested_memory_bytes"]
    if gpu is None or requested is None:
        return []
    consumed = steps["weights_bytes"] + steps["non_torch_bytes"]
    peak = steps["peak_activation_bytes"] + steps["cuda_graph_bytes"]
    graphs = steps["cuda_graph_bytes"]
    non_kv = consumed + peak + graphs
    to_requested = requested - non_kv - _REDUNDANCY_BUFFER
    to_gpu = gpu.runtime_bytes - non_kv - _REDUNDANCY_BUFFER
    return [
        f"Free memory on device ({gib(gpu.runtime_bytes)}/{gib(gpu.runtime_bytes)} GiB) on "
        f"startup. Desired GPU memory utilization is ({launch.gpu_memory_utilization}, "
        f"{gib(requested)} GiB). Actual usage is {gib(consumed)} GiB for consumed memory "
        f"(weights + non-torch), {gib(peak)} GiB for peak activation, and {gib(graphs)} GiB "
        "for CUDAGraph memory. Replace gpu_memory_utilization config with "
        f"`--kv-cache-memory={to_requested}` ({gib(to_requested)} GiB) to fit into requested "
        f"memory, or `--kv-cache-memory={to_gpu}` ({gib(to_gpu)} GiB) to fully utilize gpu "
        f"memory. Current kv cache memory in use is {gib(steps['available_kv_cache_memory'])} "
        "GiB."
    ]


def _reservation(
    model: HybridModel, launch: _Launch, gpu: Device | None, steps: dict[str, Any]
) -> VllmReservation:
    """The steps' values as one reservation, with the model, the launch and the assumptions."""
    state = model.state
    return VllmReservation(
        server_version=launch.release.release.version,
        server_version_note=launch.release.note,
        model_type=state.model_type,
        family=state.family,
        source=state.source,
        tensor_parallel_size=launch.tensor_parallel_size,
        max_num_seqs=launch.max_num_seqs,
        max_num_batched_tokens=launch.max_num_batched_tokens,
        num_speculative_tokens=launch.num_speculative_tokens,
        use_replayssm=launch.use_replayssm,
        gpu_arch=launch.gpu_arch,
        gpu=GPU_ARCHS[launch.gpu_arch],
        gpu_name=gpu.name if gpu is not None else None,
        gpu_memory_bytes=gpu.runtime_bytes if gpu is not None else None,
        gpu_memory_rule=gpu.rule if gpu is not None else None,
        enforce_eager=launch.enforce_eager,
        kv_cache_dtype=launch.kv_cache_dtype,
        conv_dtype=state.conv_dtype,
        conv_dtype_rule=state.conv_dtype_rule,
        ssm_dtype=state.ssm_dtype,
        ssm_dtype_rule=state.ssm_dtype_rule,
        state_layers=state.ssm_layers,
        naive_state_bytes=launch.max_num_seqs * state.per_sequence_bytes,
        per_sequence_bytes=state.per_sequence_bytes,
        assumptions=_assumptions(model, launch, gpu),
        **steps,
    )


def _assumptions(model: HybridModel, launch: _Launch, gpu: Device | None) -> tuple[str, ...]:
    """What the reservation takes for granted that the launch does not say."""
    assumptions = [
        "CUDA"
        if launch.draft_config is not None
        else "CUDA; a draft model's own KV layers are not counted"
    ]
    if model.state.attention is None and not model.family.attention_free:
        assumptions.append("no attention layer: no page alignment, one group of every layer")
    if launch.release.release != VLLM:
        assumptions.append(
            f"the rules of {launch.release.release} (decode_ring.releases.vllm, each change "
            f"cited in its release); the line citations here are {VLLM}'s"
        )
    if gpu is not None and launch.kv_cache_memory_bytes is None:
        assumptions.append(
            "the GPU holds nothing else at startup; the profiled terms are estimates"
        )
        if launch.release.version < _CALIBRATED:
            assumptions.append(
                f"the estimates are calibrated on the logs of vLLM {_CALIBRATED} and later"
            )
    return tuple(assumptions)
