"""vLLM's sizing rules release by release: each change stated once, as a rule that holds from
one release onward, in the step of ``servers.vllm`` it changes.

``VllmRules`` is every rule one release follows; ``BASELINE`` is 0.10.2's (the first V1 engine
release serving Qwen3-Next); ``CHANGES`` lists, oldest first, the release where a rule took a
new value, with what changed and where (``vllm-X.Y.Z:path:line`` in that release's wheel).
``vllm_rules`` folds the changes up to a release; ``rule_changes`` lists those between two. The
architectures each release registers are data, ``vllm-architectures.json`` (generated from the
releases' registries by ``tools/served-architectures``).

Read from every wheel 0.10.2 to 0.33.0; patch releases change nothing here except 0.11.1 and
0.20.1, which are releases of their own below.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Final

from .changes import RuleChange, changes_between, check_changes, fold, served_span
from .versions import ReleaseVersion

__all__ = [
    "BASELINE",
    "CHANGES",
    "RuleChange",
    "VllmRules",
    "rule_changes",
    "served_releases",
    "vllm_rules",
]


@dataclass(frozen=True, slots=True)
class VllmRules:
    """The rules of one vLLM release that ``servers.vllm`` and the vLLM layout of
    ``models.ssm_state`` follow, by the step they belong to.

    The state (``MambaStateShapeCalculator`` and ``MambaStateDtypeCalculator``):
    ``widened_kinds``, the kinds whose layer widens its conv window by the speculative tokens;
    ``split_conv_kinds``, the kinds whose conv state is one tensor per projection (KDA's q, k and
    v) rather than one of their joint width;
    ``model_window_exempt``, the families whose model-level ``get_mamba_state_shape_from_config``
    leaves them out although their layer widens (so pages are sized without them);
    ``gdn_reads_ssm_dtype``, whether a gated delta net's recurrent state takes
    ``--mamba-ssm-cache-dtype`` (before, it is the conv dtype); ``nemotron_h_ssm_default``, the
    NemotronH hook's dtype for an ``auto`` flag (``None``: no hook, the conv dtype);
    ``kda_ssm_dtype_families``, the KDA families whose recurrent state reads the flag (else it
    is float32); ``linear_attention_float32``, whether a float32 linear-attention state is
    accepted; ``speculative_families``, the families served with speculative decoding
    (``None``: every one); ``replayssm``, whether ``--use-replayssm`` exists.

    Prefix caching and the cache mode (``EngineArgs`` and ``MambaModelConfig``):
    ``prefix_caching``: ``"off"`` (every hybrid and Mamba model has it forced off), ``"mamba"``
    (only ``SupportsMambaPrefixCaching`` models have it, chunk-aligned), ``"modes"`` (the
    ``mamba_cache_mode`` of ``all``/``align``/``none``); ``hybrid_prefix_caching_default`` and
    ``attention_free_prefix_caching_default``, the defaults; ``all_mode_families``, the families
    prefix caching puts in the ``all`` mode (the rest: ``align``); ``align_refuses_speculative``,
    whether the ``align`` mode refuses speculative decoding.

    The block (``_align_hybrid_block_size``): ``block_size_aligns``, whether a ``--block-size``
    is the alignment granularity (before 0.20 the aligned block replaces a smaller one only);
    ``mla_min_block``, the MLA floor on the granularity (``None``: the kernel's);
    ``blackwell_head256_block``, the floor for a 256-wide attention head on SM10x (FlashInfer);
    ``checkpoint_kinds``, the ``models.kinds.Checkpoint`` values whose prefill checkpoint plans
    a block in align mode (and, for FlashInfer's gated delta net, aligns it to 64 tokens);
    ``flashkda_families``, the families whose KDA plans one under FlashKDA.

    Groups, pool and logs: ``group_max_ratio`` (group size ``g = max`` when ``max < ratio x
    min``; ``None``: always ``min``); ``plans_speculative_blocks`` (``max_memory_usage_bytes``
    counts ``1 + s`` blocks and align mode's; before, one page); ``gpu_memory_utilization``, the
    default; ``profiles_cuda_graphs``, whether CUDA-graph memory is taken from the KV budget by
    default; ``null_block_checked``, whether the startup check leaves out the null block;
    ``kv_tokens_from_concurrency``, whether "GPU KV cache size" is ``int(concurrency x len)``
    (else ``blocks // groups x block``); ``available_memory_rounded``, whether the budget is
    logged as ``round(x, 2)`` (``44.6``) rather than ``%.2f``; ``capacity_one_line``, whether the
    cache size and concurrency are one log line."""

    widened_kinds: frozenset[str]
    split_conv_kinds: frozenset[str]
    model_window_exempt: frozenset[str]
    gdn_reads_ssm_dtype: bool
    nemotron_h_ssm_default: str | None
    kda_ssm_dtype_families: frozenset[str]
    linear_attention_float32: bool
    speculative_families: frozenset[str] | None
    replayssm: bool
    prefix_caching: str
    hybrid_prefix_caching_default: bool
    attention_free_prefix_caching_default: bool
    all_mode_families: frozenset[str]
    align_refuses_speculative: bool
    block_size_aligns: bool
    mla_min_block: int | None
    blackwell_head256_block: int | None
    checkpoint_kinds: frozenset[str]
    flashkda_families: frozenset[str]
    group_max_ratio: float | None
    plans_speculative_blocks: bool
    gpu_memory_utilization: float
    profiles_cuda_graphs: bool
    null_block_checked: bool
    kv_tokens_from_concurrency: bool
    available_memory_rounded: bool
    capacity_one_line: bool

    def serves_speculative(self, family: str) -> bool:
        """Whether the release serves ``family`` with speculative decoding."""
        return self.speculative_families is None or family in self.speculative_families

    def caches_all(self, family: str) -> bool:
        """Whether prefix caching puts ``family`` in the ``all`` mode."""
        return family in self.all_mode_families

    def sizes_pages_unwidened(self, family: str) -> bool:
        """Whether ``family``'s model-level state shape leaves out the speculative tokens."""
        return family in self.model_window_exempt

    def plans_flashkda_checkpoint(self, family: str) -> bool:
        """Whether ``family``'s KDA plans a checkpoint block under FlashKDA."""
        return family in self.flashkda_families


# The families vLLM gives SupportsMambaPrefixCaching, which prefix caching puts in "all" mode
# (vllm-0.11.1:vllm/model_executor/models/{bamba,falcon_h1,granitemoehybrid,jamba,mamba,mamba2,
# nemotron_h,zamba2}.py class bases; vllm-0.15.0:vllm/model_executor/models/config.py:402-414).
_MAMBA_PREFIX_CACHING: Final = frozenset(
    {
        "falcon_h1",
        "falcon_mamba",
        "granitemoehybrid",
        "jamba",
        "mamba",
        "mamba2",
        "nemotron_h",
        "nemotron_h_puzzle",
        "zamba2",
    }
)
# Mamba-2 families whose get_mamba_state_shape_from_config passes num_spec only from 0.32.0
# (vllm-0.32.0:vllm/model_executor/models/falcon_h1.py:539-573, granitemoehybrid.py:618-647,
# zamba2.py:871-900; NemotronH and Mamba2 pass it from 0.17.0), and the LFM2 classmethods, which
# never pass it (vllm-0.33.0:vllm/model_executor/models/lfm2.py, lfm2_moe.py, lfm2_vl.py).
_MAMBA2_LATE: Final = frozenset({"falcon_h1", "granitemoehybrid", "zamba2"})
_LFM2: Final = frozenset({"lfm2", "lfm2_moe", "lfm2_vl"})

BASELINE: Final = VllmRules(
    # vllm-0.10.2:vllm/model_executor/layers/mamba/mamba_utils.py:97-202: only the gated delta
    # net's conv_state_shape adds num_spec.
    widened_kinds=frozenset({"gated_delta_net"}),
    # vllm-0.11.1:vllm/model_executor/layers/mamba/mamba_utils.py:199-225 (kda_state_shape, from
    # the first release that has it): q, k and v conv states, then the recurrent one.
    split_conv_kinds=frozenset({"kda"}),
    model_window_exempt=frozenset(),
    gdn_reads_ssm_dtype=False,  # mamba_utils.py:74-80: (state_dtype, state_dtype)
    nemotron_h_ssm_default=None,  # no MODELS_CONFIG_MAP entry for NemotronH before 0.13.0
    kda_ssm_dtype_families=frozenset(),
    linear_attention_float32=False,  # mamba_utils.py:21-22: "fp32 state for minimax ..."
    # vllm-0.10.2:vllm/v1/worker/gpu_model_runner.py:3701-3705
    speculative_families=frozenset({"qwen3_next"}),
    replayssm=False,
    # vllm-0.10.2:vllm/config/__init__.py: "Hybrid or mamba-based model detected: disabling
    # prefix caching since it is not yet supported."
    prefix_caching="off",
    hybrid_prefix_caching_default=False,
    attention_free_prefix_caching_default=False,
    all_mode_families=_MAMBA_PREFIX_CACHING,
    align_refuses_speculative=False,
    # vllm-0.10.2:vllm/model_executor/models/config.py:381-393: 16 * cdiv(P, 16 * A1), set only
    # where block_size is None or smaller.
    block_size_aligns=False,
    mla_min_block=None,
    blackwell_head256_block=None,
    checkpoint_kinds=frozenset(),
    flashkda_families=frozenset(),
    group_max_ratio=None,  # vllm-0.10.2:vllm/v1/core/kv_cache_utils.py:981: min
    plans_speculative_blocks=False,  # vllm-0.10.2:vllm/v1/kv_cache_interface.py:209-213
    gpu_memory_utilization=0.9,  # vllm-0.10.2:vllm/config/__init__.py (CacheConfig)
    profiles_cuda_graphs=False,
    null_block_checked=False,
    kv_tokens_from_concurrency=False,  # vllm-0.10.2:vllm/v1/core/kv_cache_utils.py:1022-1028
    available_memory_rounded=False,  # vllm-0.10.2:vllm/v1/worker/gpu_worker.py:298-299 %.2f
    capacity_one_line=False,
)


CHANGES: Final = (
    RuleChange(
        "0.11.1", "prefix_caching", "mamba",
        "prefix caching for SupportsMambaPrefixCaching models (chunk-aligned blocks); the "
        "others keep it forced off",
        "vllm-0.11.1:vllm/model_executor/models/config.py:315-461",
    ),
    RuleChange(
        "0.11.1", "attention_free_prefix_caching_default", True,
        "prefix caching on by default where the model is not hybrid (pure Mamba)",
        "vllm-0.11.1:vllm/engine/arg_utils.py (enable_prefix_caching = not is_hybrid)",
    ),
    RuleChange(
        "0.11.1", "mla_min_block", 64,
        "MLA aligns hybrid blocks to 64 tokens (kernel_block_alignment_size)",
        "vllm-0.11.1:vllm/model_executor/models/config.py:315-461",
    ),
    RuleChange(
        "0.11.1", "blackwell_head256_block", 32,
        "on SM10x a 256-wide attention head aligns hybrid blocks to 32 tokens",
        "vllm-0.11.1:vllm/model_executor/models/config.py:315-461",
    ),
    RuleChange(
        "0.12.0", "attention_free_prefix_caching_default", False,
        "prefix caching off by default for attention-free models too "
        "(ModelConfig.is_prefix_caching_supported)",
        "vllm-0.12.0:vllm/config/model.py (is_prefix_caching_supported)",
    ),
    RuleChange(
        "0.12.0", "group_max_ratio", 1.25,
        "KV-cache group size is the largest layer count where it is under 1.25x the smallest",
        "vllm-0.12.0:vllm/v1/core/kv_cache_utils.py (_get_kv_cache_groups_uniform_page_size)",
    ),
    RuleChange(
        "0.13.0", "nemotron_h_ssm_default", "float16",
        "NemotronH's SSM state: the config's mamba_ssm_cache_dtype, else float16",
        "vllm-0.13.0:vllm/model_executor/models/config.py:493-510",
    ),
    RuleChange(
        "0.14.0", "available_memory_rounded", True,
        "'Available KV cache memory' printed as round(x, 2)",
        "vllm-0.14.0:vllm/v1/worker/gpu_worker.py",
    ),
    RuleChange(
        "0.15.0", "prefix_caching", "modes",
        "--mamba-cache-mode: prefix caching is 'all' for Mamba families, 'align' for the rest",
        "vllm-0.15.0:vllm/model_executor/models/config.py:384-540",
    ),
    RuleChange(
        "0.15.0", "align_refuses_speculative", True,
        "the align mode refuses speculative decoding",
        "vllm-0.15.0:vllm/model_executor/models/config.py:357",
    ),
    RuleChange(
        "0.15.0", "plans_speculative_blocks", True,
        "a state group plans 1 + s blocks a request (2 + s in align mode), not one page",
        "vllm-0.15.0:vllm/v1/kv_cache_interface.py (MambaSpec.max_memory_usage_bytes)",
    ),
    RuleChange(
        "0.17.0", "speculative_families", None,
        "speculative decoding served for every Mamba model (the qwen3_next-only check removed)",
        "vllm-0.17.0:vllm/model_executor/layers/mamba/abstract.py:43-58",
    ),
    RuleChange(
        "0.17.0", "align_refuses_speculative", False,
        "the align mode takes speculative decoding",
        "vllm-0.17.0:vllm/model_executor/models/config.py (MambaModelConfig)",
    ),
    RuleChange(
        "0.17.0", "widened_kinds", frozenset({"gated_delta_net", "mamba2"}),
        "Mamba-2 conv window K - 1 + s",
        "vllm-0.17.0:vllm/model_executor/layers/mamba/mamba_utils.py:145",
    ),
    RuleChange(
        "0.17.0", "model_window_exempt", _MAMBA2_LATE,
        "FalconH1, GraniteMoeHybrid and Zamba2 size pages without the widened window",
        "vllm-0.17.0:vllm/model_executor/models/falcon_h1.py (get_mamba_state_shape_from_config)",
    ),
    RuleChange(
        "0.17.0", "gdn_reads_ssm_dtype", True,
        "gated delta net's recurrent state takes --mamba-ssm-cache-dtype",
        "vllm-0.17.0:vllm/model_executor/layers/mamba/mamba_utils.py:79-88",
    ),
    RuleChange(
        "0.18.0", "blackwell_head256_block", None,
        "the SM10x head-256 floor of 32 dropped (16 again)",
        "vllm-0.18.0:vllm/model_executor/models/config.py:104-248",
    ),
    RuleChange(
        "0.18.0", "group_max_ratio", 1.5,
        "group-size threshold 1.25 -> 1.5",
        "vllm-0.18.0:vllm/v1/core/kv_cache_utils.py (_get_kv_cache_groups_uniform_page_size)",
    ),
    RuleChange(
        "0.20.0", "block_size_aligns", True,
        "alignment in Platform._align_hybrid_block_size: k = max(kernel block, block_size)",
        "vllm-0.20.0:vllm/platforms/interface.py (_align_hybrid_block_size)",
    ),
    RuleChange(
        "0.20.0", "mla_min_block", None,
        "MLA no longer forced to 64: the backend's kernel block",
        "vllm-0.20.0:vllm/platforms/interface.py (_align_hybrid_block_size)",
    ),
    RuleChange(
        "0.20.0", "nemotron_h_ssm_default", "float32",
        "NemotronH's default SSM dtype float32",
        "vllm-0.20.0:vllm/model_executor/models/config.py:409-436",
    ),
    RuleChange(
        "0.20.0", "gpu_memory_utilization", 0.92,
        "--gpu-memory-utilization default 0.92",
        "vllm-0.20.0:vllm/config/cache.py",
    ),
    RuleChange(
        "0.20.0", "profiles_cuda_graphs", True,
        "CUDA-graph memory profiled by default and taken from the KV budget",
        "vllm-0.20.0:vllm/envs.py:1724-1725 (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS '1')",
    ),
    RuleChange(
        "0.20.1", "kv_tokens_from_concurrency", True,
        "'GPU KV cache size' is int(max_concurrency x max_model_len)",
        "vllm-0.20.1:vllm/v1/core/kv_cache_utils.py",
    ),
    RuleChange(
        "0.20.1", "linear_attention_float32", True,
        "float32 linear-attention (MiniMax) state accepted",
        "vllm-0.20.1:vllm/model_executor/layers/mamba/mamba_utils.py:53-60",
    ),
    RuleChange(
        "0.23.0", "split_conv_kinds", frozenset(),
        "KDA's conv state one tensor of the q, k and v channels (was three)",
        "vllm-0.23.0:vllm/model_executor/layers/mamba/mamba_utils.py:252-260",
    ),
    RuleChange(
        "0.27.0", "widened_kinds", frozenset({"gated_delta_net", "mamba2", "kda"}),
        "KDA conv window K - 1 + s",
        "vllm-0.27.1:vllm/model_executor/layers/mamba/mamba_utils.py:291",
    ),
    RuleChange(
        "0.27.0", "replayssm", True,
        "--use-replayssm (ReplaySSM ring for NemotronH)",
        "vllm-0.27.1:vllm/config/cache.py (use_replayssm, replayssm_buffer_len)",
    ),
    RuleChange(
        "0.27.0", "mla_min_block", 128,
        "MLA hybrids align to at least 128 tokens",
        "vllm-0.27.0:vllm/platforms/interface.py (_align_hybrid_block_size)",
    ),
    RuleChange(
        "0.28.0", "hybrid_prefix_caching_default", True,
        "prefix caching on by default for hybrid models",
        "vllm-0.28.0:vllm/config/model.py (is_prefix_caching_supported)",
    ),
    RuleChange(
        "0.28.0", "all_mode_families", frozenset(),
        "prefix caching defaults to the align mode for every family ('all' only if asked)",
        "vllm-0.28.0:vllm/model_executor/models/config.py (MambaModelConfig)",
    ),
    RuleChange(
        "0.28.0", "capacity_one_line", True,
        "'GPU KV cache size' and 'Maximum concurrency' become one log line",
        "vllm-0.28.0:vllm/v1/core/kv_cache_utils.py",
    ),
    RuleChange(
        "0.29.0", "widened_kinds", frozenset({"gated_delta_net", "mamba2", "kda", "short_conv"}),
        "short-conv layer window K - 1 + s (the LFM2 classmethods still leave it out)",
        "vllm-0.29.0:vllm/model_executor/layers/mamba/short_conv.py:350-356",
    ),
    RuleChange(
        "0.29.0", "model_window_exempt", _MAMBA2_LATE | _LFM2,
        "the LFM2 classmethods size pages without the widened short-conv window",
        "vllm-0.29.0:vllm/model_executor/models/lfm2.py (get_mamba_state_shape_from_config)",
    ),
    RuleChange(
        "0.29.0", "checkpoint_kinds", frozenset({"flashkda"}),
        "align mode plans 2 + s + c; c = 1 for KDA under FlashKDA",
        "vllm-0.29.0:vllm/v1/kv_cache_interface.py (max_memory_usage_bytes)",
    ),
    RuleChange(
        "0.29.0", "flashkda_families", frozenset({"kimi_linear"}),
        "Kimi's KDA plans a checkpoint block under FlashKDA",
        "vllm-0.29.0:vllm/models/kimi_k3/nvidia/kda.py",
    ),
    RuleChange(
        "0.29.0", "null_block_checked", True,
        "the startup check leaves out the null block",
        "vllm-0.29.0:vllm/v1/core/kv_cache_utils.py",
    ),
    RuleChange(
        "0.30.0", "kda_ssm_dtype_families", frozenset({"kimi_linear"}),
        "Kimi's KDA recurrent dtype honours --mamba-ssm-cache-dtype",
        "vllm-0.30.0:vllm/models/kimi_k3/nvidia/kda.py:540-554",
    ),
    RuleChange(
        "0.32.0", "model_window_exempt", _LFM2,
        "FalconH1, GraniteMoeHybrid and Zamba2 size pages with the widened window",
        "vllm-0.32.0:vllm/model_executor/models/falcon_h1.py:539-573",
    ),
    RuleChange(
        "0.32.0", "checkpoint_kinds", frozenset({"flashkda", "always"}),
        "Mamba-2 plans one prefill checkpoint block in align mode",
        "vllm-0.32.0:vllm/model_executor/layers/mamba/mamba_mixer2.py",
    ),
    RuleChange(
        "0.32.0", "flashkda_families", frozenset({"kimi_linear", "glm5_next"}),
        "GLM-5.3-Flash's KDA plans a checkpoint block under FlashKDA",
        "vllm-0.32.0:vllm/models/glm5next/common/kda.py",
    ),
    RuleChange(
        "0.32.0", "kda_ssm_dtype_families", frozenset({"kimi_linear", "glm5_next"}),
        "GLM-5.3-Flash's KDA honours --mamba-ssm-cache-dtype",
        "vllm-0.32.0:vllm/models/glm5next/common/kda.py:178-187",
    ),
    RuleChange(
        "0.33.0", "checkpoint_kinds", frozenset({"flashkda", "always", "flashinfer_gdn"}),
        "Qwen's gated delta net under FlashInfer prefill: 64-token alignment and one checkpoint "
        "block in align mode",
        "vllm-0.33.0:vllm/v1/attention/backends/gdn_attn.py:34; "
        "gdn/qwen_gdn_linear_attn.py:544, :689-760",
    ),
)  # fmt: skip


check_changes(VllmRules, CHANGES)


@cache
def vllm_rules(version: ReleaseVersion) -> VllmRules:
    """The rules of vLLM ``version``: ``BASELINE`` with every change up to it."""
    return fold(BASELINE, CHANGES, version)


def rule_changes(old: ReleaseVersion, new: ReleaseVersion) -> tuple[RuleChange, ...]:
    """The changes after ``old`` up to ``new`` (or back from ``old`` to ``new``), oldest first."""
    return changes_between(CHANGES, old, new)


def served_releases(architecture: str) -> tuple[str, str] | None:
    """The first and last modelled vLLM release whose registry names ``architecture``
    (``None``: none does)."""
    return served_span("vllm-architectures.json", architecture)
