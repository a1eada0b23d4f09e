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
from dataclasses import asdict, dataclass, fields
from typing import Any, Final

from ..models import DTYPE_BYTES, KINDS, ConfigSource, ModelConfigError, class_fields, ssm_state
from ..models.kinds import Checkpoint
from ..releases import VLLM
from .common import (
    GPU_ARCHS,
    HybridModel,
    capability_major,
    check_choice,
    check_count,
    check_flag,
    check_optional_count,
    fail,
    hybrid_model,
)

__all__ = [
    "KV_CACHE_DTYPES",
    "MAMBA_DTYPES",
    "VllmReservation",
    "vllm_reservation",
]

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
_MLA_MIN_BLOCK: Final = 128  # platforms/interface.py:1083-1088
# vllm/v1/attention/backends/gdn_attn.py:34
_FLASHINFER_GDN_CHECKPOINT_ALIGNMENT: Final = 64
_DEFAULT_BLOCK_SIZE: Final = 16  # CacheConfig.DEFAULT_BLOCK_SIZE


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
    (``ServerArgumentError`` for a value vLLM refuses or this module does not model)."""

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

    def __post_init__(self) -> None:
        check_count("tensor_parallel_size", self.tensor_parallel_size, 1)
        check_count("max_num_seqs", self.max_num_seqs, 1)
        check_optional_count("max_model_len", self.max_model_len, 1)
        check_optional_count("block_size", self.block_size, 1)
        check_count("num_speculative_tokens", self.num_speculative_tokens, 0)
        check_optional_count("kv_cache_memory_bytes", self.kv_cache_memory_bytes, 0)
        check_flag("use_replayssm", self.use_replayssm)
        check_count("replayssm_buffer_len", self.replayssm_buffer_len, 1)
        check_choice("gpu_arch", self.gpu_arch, tuple(GPU_ARCHS))
        check_choice("mamba_cache_dtype", self.mamba_cache_dtype, MAMBA_DTYPES)
        check_choice("mamba_ssm_cache_dtype", self.mamba_ssm_cache_dtype, MAMBA_DTYPES)
        if self.kv_cache_dtype in _UNMODELLED_CACHE_DTYPES:
            raise fail("kv_cache_dtype", f"{self.kv_cache_dtype} is not modelled")
        check_choice("kv_cache_dtype", self.kv_cache_dtype, tuple(KV_CACHE_DTYPES))
        if self.enable_prefix_caching is not None:
            check_flag("enable_prefix_caching", self.enable_prefix_caching)


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
    launch = _Launch(
        tensor_parallel_size=tensor_parallel_size,
        max_num_seqs=max_num_seqs,
        max_model_len=max_model_len,
        block_size=block_size,
        enable_prefix_caching=enable_prefix_caching,
        num_speculative_tokens=num_speculative_tokens,
        mamba_cache_dtype=mamba_cache_dtype,
        mamba_ssm_cache_dtype=mamba_ssm_cache_dtype,
        kv_cache_dtype=kv_cache_dtype,
        kv_cache_memory_bytes=kv_cache_memory_bytes,
        use_replayssm=use_replayssm,
        replayssm_buffer_len=replayssm_buffer_len,
        gpu_arch=gpu_arch,
    )
    model = hybrid_model(
        config,
        VLLM,
        "vllm",
        "reserves no state",
        tp_size=tensor_parallel_size,
        conv_dtype=mamba_cache_dtype,
        ssm_dtype=mamba_ssm_cache_dtype,
        speculative_tokens=num_speculative_tokens,
    )
    caching = _prefix_caching(model, launch)
    _verify_replayssm(model, launch)
    length = _max_model_len(model.text, launch.max_model_len)
    backends = _attention_backends(model, launch)
    specs = _mamba_specs(model, launch, caching, backends)
    block = _align_hybrid_block_size(model, launch, caching, specs)
    groups = _kv_cache_groups(model, specs, block)
    blocks = _blocks_per_request(model, launch, caching, specs, groups, block, length)
    pool = _kv_cache_pool(launch, groups, blocks, length)
    return _reservation(model, launch, caching, length, backends, block, groups, blocks, pool)


# --- the steps ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _PrefixCaching:
    enable_prefix_caching: bool
    prefix_caching_rule: str
    mamba_cache_mode: str


def _prefix_caching(model: HybridModel, launch: _Launch) -> _PrefixCaching:
    """Prefix caching: ``EngineArgs`` (vllm/engine/arg_utils.py:3075-3081) takes
    ``ModelConfig.is_prefix_caching_supported`` (vllm/config/model.py:2239-2291) by default:
    on for a hybrid model, off for an attention-free one; on means ``mamba_cache_mode`` align
    (``MambaModelConfig.verify_and_update_config``, vllm/model_executor/models/config.py:
    750-787)."""
    if launch.enable_prefix_caching is not None:
        caching, rule = launch.enable_prefix_caching, "flag"
    elif model.family.attention_free:
        caching, rule = False, "vLLM default: off for an attention-free model"
    else:
        caching, rule = True, "vLLM default: on for a hybrid generative model"
    return _PrefixCaching(caching, rule, "align" if caching else "none")


def _verify_replayssm(model: HybridModel, launch: _Launch) -> None:
    """vLLM supports ``--use-replayssm`` only for ``SupportsReplaySSM`` models
    (vllm/config/vllm.py:3475-3479), and with speculative decoding only on the FlashInfer
    mamba backend, which is not modelled."""
    if not launch.use_replayssm:
        return
    if not model.family.vllm_replayssm:
        raise fail(
            "use_replayssm",
            f"{VLLM} supports ReplaySSM only for NemotronH, not {model.state.family} "
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
    if "model_max_length" in found:
        length, rule = found["model_max_length"], "config model_max_length"
    elif not found:
        length, rule = 2048, "no length in config: 2048"
    else:
        key = min(found, key=lambda name: found[name])
        length, rule = found[key], f"config {key}"
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


def _attention_backends(model: HybridModel, launch: _Launch) -> _Backends:
    """The attention backend vLLM picks by default (``_get_backend_priorities``,
    vllm/platforms/cuda.py:84-178): FlashAttention first off Blackwell, FlashAttention-MLA on
    SM90 and Triton-MLA before it; ``None`` without attention layers. The gated delta net's
    prefill (``_resolve_gdn_prefill_backend``): FlashInfer on SM90, else Triton; ``None``
    without such layers."""
    attention, arch, kv_dtype = model.state.attention, launch.gpu_arch, launch.kv_cache_dtype
    gdn = "flashinfer" if arch == "sm90" else "triton"
    prefills_gdn = any(
        KINDS[group.kind].vllm_checkpoint is Checkpoint.FLASHINFER_GDN
        for group in model.state.groups
    )
    gdn_backend = gdn if prefills_gdn else None
    if attention is None:
        return _Backends(None, gdn_backend)
    if attention.mla:
        if kv_dtype not in ("auto", "bfloat16", "float16"):
            raise fail("kv_cache_dtype", f"{kv_dtype} with MLA is not modelled")
        return _Backends("FLASH_ATTN_MLA" if arch == "sm90" else "TRITON_MLA", gdn_backend)
    head = attention.head_dim
    if head % 8 or head > 256:
        # flash_attn.py:424-433: vLLM would fall back to another backend.
        raise ModelConfigError(
            f"head_dim {head}: FlashAttention takes multiples of 8 up to 256; vLLM's fallback "
            "backend is not modelled",
            field="head_dim",
        )
    if KV_CACHE_DTYPES[kv_dtype] == 1 and arch != "sm90":
        raise fail(
            "kv_cache_dtype",
            f"{kv_dtype} needs FlashAttention 3 (SM90); vLLM's fallback backend on "
            f"{arch} is not modelled",
        )
    return _Backends("FLASH_ATTN", gdn_backend)


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
        tp_size=launch.tensor_parallel_size,
        conv_dtype=launch.mamba_cache_dtype,
        ssm_dtype=launch.mamba_ssm_cache_dtype,
        speculative_tokens=launch.num_speculative_tokens,
    )
    flashinfer_align = (
        backends.gdn_prefill_backend == "flashinfer" and caching.enable_prefix_caching
    )
    flashkda = _flashkda(model, launch)
    specs = []
    for group, level in zip(model.state.groups, view.groups, strict=True):
        traits = KINDS[group.kind]
        aligned = (
            traits.vllm_checkpoint is Checkpoint.FLASHINFER_GDN
            and flashinfer_align
            and model.family.vllm_gdn_checkpoints
        )
        blocks = traits.vllm_checkpoint is Checkpoint.ALWAYS or (
            traits.vllm_checkpoint is Checkpoint.FLASHKDA and flashkda
        )
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
    if rule is None:
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
    model: HybridModel, launch: _Launch, caching: _PrefixCaching, specs: tuple[_MambaSpec, ...]
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
    alignment = max(_KERNEL_BLOCK, block)
    if attention.mla:
        alignment = max(alignment, _MLA_MIN_BLOCK)
    if caching.mamba_cache_mode == "align":
        checkpoint = 1
        if all(spec.checkpoint_alignment is not None for spec in specs):
            checkpoint = math.lcm(*(spec.checkpoint_alignment or 1 for spec in specs))
        alignment = math.lcm(alignment, checkpoint)
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
        widened = launch.num_speculative_tokens and not model.family.vllm_model_window
        raise fail(
            "num_speculative_tokens" if widened else "mamba_ssm_cache_dtype",
            f"the layer allocates a state page of {largest} B, but {VLLM} pads state pages "
            f"to {padded} B ({block}-token attention blocks sized by the model-level page of "
            f"{model_page} B): its startup assert page_size_padded >= page_size fails "
            "(vllm/v1/kv_cache_interface.py:1127); a larger --block-size pads more",
        )
    return _BlockSize(block, rule, padded, largest, padded)


@dataclass(frozen=True, slots=True)
class _KvCacheGroups:
    group_size: int
    state_groups: int
    attention_groups: int
    bytes_per_block: int
    attention_layers: int


def _kv_cache_groups(
    model: HybridModel, specs: tuple[_MambaSpec, ...], block: _BlockSize
) -> _KvCacheGroups:
    """``_get_kv_cache_groups_uniform_page_size`` (kv_cache_planning.py:1138-1147, :416-556):
    one spec for every layer is one group of them all; otherwise ``g`` layers a group; a block
    costs ``g`` padded pages (``_get_kv_cache_bytes_per_block``, :574-605)."""
    attention = model.state.attention
    attention_count = len(attention.layer_indices) if attention is not None else 0
    buckets = [spec.layers for spec in specs] + ([attention_count] if attention_count else [])
    if len(buckets) == 1:
        group = buckets[0]
    else:
        group = min(buckets)
        if max(buckets) < group * 1.5:
            group = max(buckets)
    state_groups = sum(-(-spec.layers // group) for spec in specs)
    attention_groups = -(-attention_count // group) if attention_count else 0
    return _KvCacheGroups(
        group,
        state_groups,
        attention_groups,
        group * block.state_page_bytes_padded,
        attention_count,
    )


@dataclass(frozen=True, slots=True)
class _BlocksPerRequest:
    state_blocks_per_request: int
    planned_blocks_per_request: int
    prefill_checkpoint_blocks: int
    blocks_per_request_at_max_model_len: int
    state_bytes: int
    planned_state_bytes: int


def _blocks_per_request(
    model: HybridModel,
    launch: _Launch,
    caching: _PrefixCaching,
    specs: tuple[_MambaSpec, ...],
    groups: _KvCacheGroups,
    block: _BlockSize,
    length: _MaxModelLen,
) -> _BlocksPerRequest:
    """``MambaSpec.max_memory_usage_bytes`` (vllm/v1/kv_cache_interface.py:1135-1141): held at
    decode ``1 + s``, planned ``2 + s + c`` in align mode (``c``: the prefill checkpoint block,
    when any spec has one and, for the gated delta net, every state layer exports
    checkpoints), else ``1 + s``; ``s`` is 0 under ReplaySSM. One request at ``max_model_len``
    takes ``ceil(len / block)`` blocks in every attention group besides."""
    speculative = 0 if launch.use_replayssm else launch.num_speculative_tokens
    all_aligned = all(spec.checkpoint_alignment is not None for spec in specs)
    checkpoints = max(
        spec.checkpoint_blocks if spec.checkpoint_alignment is None or all_aligned else 0
        for spec in specs
    )
    held = 1 + speculative
    align = caching.mamba_cache_mode == "align"
    planned = 2 + speculative + checkpoints if align else held
    attention_blocks = -(-length.max_model_len // block.block_size)
    per_request = groups.attention_groups * attention_blocks + groups.state_groups * planned
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
    launch: _Launch, groups: _KvCacheGroups, blocks: _BlocksPerRequest, length: _MaxModelLen
) -> _KvCachePool:
    """With a KV budget: ``num_blocks = budget // bytes_per_block`` (kv_cache_planning.py:
    1540-1544); vLLM's startup check (``_check_enough_kv_cache_memory``, :50-87, against the
    budget less the null block, :1533-1543): one request at ``max_model_len`` must fit; and
    ``get_max_concurrency_for_kv_cache_config`` (kv_cache_utils.py:1061-1093)."""
    budget = launch.kv_cache_memory_bytes
    if budget is None:
        return _KvCachePool(None, None, None)
    per_block, per_request = groups.bytes_per_block, blocks.blocks_per_request_at_max_model_len
    usable = budget - per_block
    if usable <= 0 or per_block * per_request > usable:
        raise fail(
            "kv_cache_memory_bytes",
            f"{budget} B holds {max(usable, 0) // per_block} usable blocks of "
            f"{per_block} B; one request at max_model_len {length.max_model_len} needs "
            f"{per_request}: vLLM refuses to start",
        )
    num_blocks = budget // per_block
    return _KvCachePool(budget, num_blocks, num_blocks / per_request)


def _reservation(
    model: HybridModel,
    launch: _Launch,
    caching: _PrefixCaching,
    length: _MaxModelLen,
    backends: _Backends,
    block: _BlockSize,
    groups: _KvCacheGroups,
    blocks: _BlocksPerRequest,
    pool: _KvCachePool,
) -> VllmReservation:
    """The steps' values as one reservation, with the model, the launch and the assumptions."""
    state = model.state
    assumptions = ["CUDA; a draft model's own KV layers are not counted"]
    if state.attention is None and not model.family.attention_free:
        assumptions.append("no attention layer: no page alignment, one group of every layer")
    return VllmReservation(
        model_type=state.model_type,
        family=state.family,
        source=state.source,
        tensor_parallel_size=launch.tensor_parallel_size,
        max_num_seqs=launch.max_num_seqs,
        num_speculative_tokens=launch.num_speculative_tokens,
        use_replayssm=launch.use_replayssm,
        gpu_arch=launch.gpu_arch,
        gpu=GPU_ARCHS[launch.gpu_arch],
        kv_cache_dtype=launch.kv_cache_dtype,
        conv_dtype=state.conv_dtype,
        conv_dtype_rule=state.conv_dtype_rule,
        ssm_dtype=state.ssm_dtype,
        ssm_dtype_rule=state.ssm_dtype_rule,
        state_layers=state.ssm_layers,
        naive_state_bytes=launch.max_num_seqs * state.per_sequence_bytes,
        per_sequence_bytes=state.per_sequence_bytes,
        assumptions=tuple(assumptions),
        **_fields(caching, length, backends, block, groups, blocks, pool),
    )
