"""SGLang's sizing rules release by release: each change stated once, as a rule that holds from
one release onward, in the step of ``servers.sglang`` it changes.

``SglangRules`` is every rule one release follows; ``BASELINE`` is 0.5.2's, the oldest release
modelled; ``CHANGES`` lists, oldest first, the release where a rule took a new value, with what
changed and where (``sglang-X:path:line`` in that release's wheel). ``sglang_rules`` folds the
changes up to a release; ``rule_changes`` lists those between two. The architectures each
release serves are data, ``sglang-architectures.json`` (generated from the releases' model
modules by ``tools/served-architectures-sglang``).

Read from every wheel 0.5.2 to 0.5.23; a ``.postN`` release is a release of its own (some,
such as 0.5.3.post2, 0.5.3.post3, 0.5.4.post1, 0.5.4.post2, 0.5.5.post2 and 0.5.6.post1, change a
rule; 0.5.6.post2's and 0.5.8.post1's sizing code is 0.5.6.post1's and 0.5.8's). Until
0.5.6.post2 the pool is sized in ``model_runner.py`` and a KV token as ``2 x head_dim``, the same
bytes as the later ``head_dim + v_head_dim`` for every architecture those releases serve (none
has an MHA ``v_head_dim`` of its own); the conv state's list form (0.5.6) keeps its bytes.
0.5.2 is the first release with a mamba pool (Qwen3-Next; 0.5.1.post3 has none); until
0.5.3.post1 ``ModelRunner.initialize`` turns the radix cache off for every hybrid architecture
it serves and sizes ``K`` as the flag, the running requests or 512, with no ratio and no
``--mamba-full-memory-ratio``, and the mamba pool holds the request pool's slots. 0.5.3.post2's
sizing code is 0.5.3.post3's but for the ratio's default (0.2, then 0.9). Where a rule did not
change, ``BASELINE`` cites 0.5.3.post3's lines (the earlier releases' were diffed against them).

Where the package models a launch only from some release on (``COVERAGE``: speculative
decoding, the extra-buffer strategies asked for by name, the default ``--mem-fraction-static``,
a Blackwell GPU's defaults), an older release refuses that launch as not modelled; those are the
package's limits, not SGLang's changes, so they are not in ``CHANGES``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from typing import Final

from .changes import RuleChange, changes_between, check_changes, fold, served_span
from .versions import ReleaseVersion, parse_version

__all__ = [
    "BASELINE",
    "CHANGES",
    "COVERAGE",
    "MODELLED",
    "RuleChange",
    "SglangRules",
    "rule_changes",
    "served_releases",
    "sglang_rules",
]


@dataclass(frozen=True, slots=True)
class SglangRules:
    """The rules of one SGLang release that ``servers.sglang`` and the SGLang layout of
    ``models.ssm_state`` follow, by the step they belong to.

    The state: ``ssm_dtype_from_config``, whether ``mamba2_state_dtype`` reads the config's
    ``mamba_ssm_dtype`` where the family passes its config (before: the ``--mamba-ssm-dtype``
    default float32); ``mamba_ssm_dtypes``, the values ``--mamba-ssm-dtype`` accepts;
    ``nemotron_reads_layers_block_type``, whether SGLang's ``NemotronHConfig`` reads a
    ``layers_block_type`` list (before, only ``hybrid_override_pattern``, defaulting to its own);
    ``nemotron_moe_layers``, whether SGLang's NemotronH builds MoE (``E``) layers.

    The KV pool: ``kv_cache_dtypes``, the ``--kv-cache-dtype`` values it accepts (of those the
    package models).

    The default memory fraction (``handle_gpu_memory_settings``): ``memory_tiers``, by GPU
    memory (MiB) the default chunked prefill and decode CUDA-graph ``max_bs`` below and from
    tp 4; ``decode_graph_capped_by_running``, whether a default ``max_bs`` is held to
    ``--max-running-requests``; ``multimodal_prefill_graph_archs``, the vision architectures
    that keep prefill CUDA graphs.

    The budget (``_profile_available_bytes``): ``multimodal_reserve_mib``, what a vision model's
    runtime takes off it.

    The strategy and ratio (``_handle_mamba_radix_cache``): ``auto_strategy``, what ``auto``
    resolves to where the architecture supports it (``no_buffer``: every mamba-radix-cache
    architecture, the overlap scheduler turned off); ``radix_archs``, the architectures that
    call it (the rest keep the radix cache and the overlap scheduler, ratio 3);
    ``radix_off_archs``, those whose call turns the radix cache off (ratio 1);
    ``extra_buffer_archs``, those that support the extra buffer; ``no_buffer_asserts_overlap``,
    whether ``no_buffer`` asked for by name needs ``--disable-overlap-schedule`` (before, it
    turns the overlap scheduler off); ``no_buffer_resets_page``, whether ``no_buffer`` with the
    radix cache sets ``--page-size`` to 1 (0.5.11 to 0.5.13; from 0.5.14 it asserts 1 instead,
    and before it keeps the page); ``no_buffer_tracking_slots``, the slots a ``no_buffer``
    request holds beyond the base 3 (0.5.7 adds the extra buffer's 2 to every radix-cache
    launch).

    The strategy flag: ``strategy_flag``, whether ``--mamba-scheduler-strategy`` exists (before,
    the radix cache on is the ``no_buffer`` behaviour, and only ``auto`` is a value).

    The pool (``handle_max_mamba_cache``): ``default_mamba_full_memory_ratio``, what
    ``--mamba-full-memory-ratio`` is when not given (``None``: the release has no such flag and
    no ratio split); ``mamba_pool_holds_requests``, whether the mamba pool is built with the
    request pool's size (before 0.5.3.post2; from it, with ``K``); ``slots_flag_with_radix``,
    whether ``--max-mamba-cache-size`` sizes the pool with the radix cache on (before, the ratio
    split overwrites it); ``radix_off_default_slots``, the slots with the radix cache off and
    neither ``--max-mamba-cache-size`` nor ``--max-running-requests`` given
    (``None``: the ratio split sizes them); ``charges_padding_slot``, whether the padding slot is
    taken from the budget before it is divided into slots (and from the KV budget with the
    others); ``joint_speculative_solve``, whether the ratio-sized pool and its speculative
    scratch are solved together; ``empty_pool_refused``, whether SGLang refuses a pool of no
    slot or a cap of no request at startup.

    The running cap (``_resolve_max_num_reqs``): ``running_flag_held_to``, what
    ``--max-running-requests`` is held to besides the slots over the ratio: ``slots`` (nothing
    else), ``estimate`` (SGLang's estimate) or ``half_tokens`` (half the KV tokens);
    ``estimate_from_profiled_tokens``, whether SGLang's estimate reads the profiled tokens, before
    ``--max-total-tokens`` and the page alignment (else the pool's final tokens).

    The draft (``ModelConfig._config_draft_model``): ``draft_mtp_archs``, the architectures whose
    draft checkpoint SGLang rewrites into its MTP model with ``num_nextn_predict_layers = 1``,
    whatever count the checkpoint states: its draft holds one layer's KV.

    Logs: ``mamba_log_names_size``, whether "Mamba Cache is allocated" names
    ``max_mamba_cache_size``; ``kv_log_names_dtype``, whether "KV Cache is allocated" names the
    dtype; ``weight_log_names_elapsed`` and ``weight_log_names_dtype``, whether "Load weight
    end" names the time it took and the model's dtype."""

    ssm_dtype_from_config: bool
    mamba_ssm_dtypes: tuple[str, ...]
    nemotron_reads_layers_block_type: bool
    nemotron_moe_layers: bool
    kv_cache_dtypes: tuple[str, ...]
    memory_tiers: tuple[tuple[int, int, int, int], ...]
    decode_graph_capped_by_running: bool
    multimodal_prefill_graph_archs: frozenset[str]
    multimodal_reserve_mib: int
    auto_strategy: str
    radix_archs: frozenset[str]
    radix_off_archs: frozenset[str]
    extra_buffer_archs: frozenset[str]
    no_buffer_asserts_overlap: bool
    no_buffer_resets_page: bool
    no_buffer_tracking_slots: int
    strategy_flag: bool
    default_mamba_full_memory_ratio: float | None
    mamba_pool_holds_requests: bool
    slots_flag_with_radix: bool
    radix_off_default_slots: int | None
    charges_padding_slot: bool
    joint_speculative_solve: bool
    empty_pool_refused: bool
    running_flag_held_to: str
    estimate_from_profiled_tokens: bool
    draft_mtp_archs: frozenset[str]
    mamba_log_names_size: bool
    kv_log_names_dtype: bool
    weight_log_names_elapsed: bool
    weight_log_names_dtype: bool
    # The package's coverage of this release (COVERAGE), not one of SGLang's rules.
    covered: frozenset[str] = frozenset()

    def covers(self, feature: str) -> bool:
        """Whether the package models ``feature`` (a ``COVERAGE`` key) for this release."""
        return feature in self.covered

    def keeps_radix_cache(self, architecture: str) -> bool:
        """Whether ``architecture`` calls SGLang's mamba radix-cache handling."""
        return architecture in self.radix_archs

    def turns_radix_cache_off(self, architecture: str) -> bool:
        """Whether SGLang turns the radix cache off for ``architecture``."""
        return architecture in self.radix_off_archs

    def supports_extra_buffer(self, architecture: str) -> bool:
        """Whether ``architecture`` supports the extra-buffer strategies."""
        return architecture in self.extra_buffer_archs

    def keeps_prefill_graphs(self, architecture: str) -> bool:
        """Whether a vision model of ``architecture`` keeps prefill CUDA graphs."""
        return architecture in self.multimodal_prefill_graph_archs


# sglang-0.5.10:sglang/srt/server_args.py:1141 (_handle_gpu_memory_settings) through
# sglang-0.5.19:sglang/srt/arg_groups/memory_hook.py:47-130: (ceiling MiB, chunked prefill,
# max_bs below tp 4, max_bs from tp 4); above the last, 16384 and 512.
_TIERS_0_5_10: Final = (
    (20 * 1024, 2048, 8, 8),
    (35 * 1024, 2048, 24, 80),
    (60 * 1024, 4096, 32, 160),
    (90 * 1024, 8192, 256, 512),
    (160 * 1024, 8192, 256, 512),
)
# sglang-0.5.19:sglang/srt/configs/model_config.py:1985-1994.
_PREFILL_GRAPH_ARCHS_0_5_19: Final = frozenset(
    {
        "InternS2MobiusForConditionalGeneration",
        "Qwen3_5ForConditionalGeneration",
        "Qwen3_5MoeForConditionalGeneration",
        "KimiK3ForConditionalGeneration",
        "KimiK25ForConditionalGeneration",
    }
)
# The architectures whose radix cache SGLang 0.5.3.post3 handles: ModelRunner turns it off for
# the mamba2 configs, FalconH1 and NemotronH (sglang-0.5.3.post3:sglang/srt/model_executor/
# model_runner.py:399-402, :1432-1436); later, server_args for Kimi-Linear (0.5.4.post2), the
# overlap scheduler for Qwen3-Next (0.5.5.post2) and the NemotronH VL wrapper's llm_config
# (0.5.6).
_RADIX_0_5_3_POST3: Final = frozenset({"FalconH1ForCausalLM", "NemotronHForCausalLM"})
# Before 0.5.3.post2 ModelRunner.initialize turns the radix cache off for every hybrid
# architecture it serves (sglang-0.5.2:sglang/srt/model_executor/model_runner.py:308-325,
# Qwen3-Next; sglang-0.5.3:...:357-375, :1301-1307, and FalconH1; sglang-0.5.3.post1:...:
# 358-375, :1315-1330, the Qwen3-Next, FalconH1 and NemotronH configs).
_RADIX_0_5_2: Final = _RADIX_0_5_3_POST3 | {"Qwen3NextForCausalLM"}
_RADIX_0_5_6: Final = _RADIX_0_5_3_POST3 | {
    "KimiLinearForCausalLM",
    "Qwen3NextForCausalLM",
    "NemotronH_Nano_VL_V2",
}
# The architectures whose branch of _handle_model_specific_adjustments handles the mamba radix
# cache: turns it off, or turns the overlap scheduler off for no_buffer (sglang-0.5.7:sglang/srt/
# server_args.py:1304-1308 Kimi-Linear, :1309-1375 NemotronH, :1376-1434 Qwen3-Next, :1436-1459
# FalconH1 and the Jet models).
_RADIX_0_5_7: Final = frozenset(
    {
        "KimiLinearForCausalLM",
        "NemotronHForCausalLM",
        "Qwen3NextForCausalLM",
        "FalconH1ForCausalLM",
        "JetNemotronForCausalLM",
        "JetVLMForConditionalGeneration",
    }
)
# From 0.5.9 the branches call _handle_mamba_radix_cache (sglang-0.5.9:sglang/srt/server_args.py:
# 1524-1665; the same list in sglang-0.5.10:sglang/srt/server_args.py:1914-2060).
_RADIX_0_5_10: Final = frozenset(
    {
        "KimiLinearForCausalLM",
        "BailingMoeV2_5ForCausalLM",
        "NemotronHForCausalLM",
        "Qwen3NextForCausalLM",
        "Qwen3_5ForConditionalGeneration",
        "Qwen3_5MoeForConditionalGeneration",
        "FalconH1ForCausalLM",
        "JetNemotronForCausalLM",
        "JetVLMForConditionalGeneration",
        "Lfm2ForCausalLM",
    }
)
# sglang-0.5.14:sglang/srt/server_args.py:4338-4353 (_support_mamba_cache_extra_buffer, with the
# default triton linear-attention backend); the same list opens overrides.py in 0.5.15.
_EXTRA_BUFFER_0_5_14: Final = frozenset(
    {
        "Qwen3_5ForConditionalGeneration",
        "Qwen3_5MoeForConditionalGeneration",
        "Qwen3NextForCausalLM",
        "InternS2PreviewForConditionalGeneration",
        "MiniCPMV4_6ForConditionalGeneration",
        "BailingMoeV2_5ForCausalLM",
        "FalconH1ForCausalLM",
        "GraniteMoeHybridForCausalLM",
        "NemotronHForCausalLM",
        "NemotronHPuzzleForCausalLM",
    }
)

# The draft architectures SGLang rewrites into an MTP model of one layer, by release.
_DRAFT_MTP_0_5_3: Final = frozenset({"Qwen3NextForCausalLM"})
_DRAFT_MTP_0_5_8: Final = _DRAFT_MTP_0_5_3 | frozenset({"NemotronHForCausalLM"})
_DRAFT_MTP_0_5_9: Final = _DRAFT_MTP_0_5_8 | frozenset(
    {"Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration"}
)
_DRAFT_MTP_0_5_12: Final = _DRAFT_MTP_0_5_9 | frozenset({"InternS2PreviewForConditionalGeneration"})
_DRAFT_MTP_0_5_13: Final = _DRAFT_MTP_0_5_12 | frozenset({"NemotronHPuzzleForCausalLM"})
_DRAFT_MTP_0_5_17: Final = _DRAFT_MTP_0_5_13 | frozenset(
    {"Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM"}
)
_DRAFT_MTP_0_5_18: Final = _DRAFT_MTP_0_5_17 | frozenset({"InternS2MobiusForConditionalGeneration"})
_DRAFT_MTP_0_5_20: Final = _DRAFT_MTP_0_5_18 | frozenset(
    {"Glm5NextForConditionalGeneration", "NemotronH_Omni_Reasoning_V3"}
)


BASELINE: Final = SglangRules(
    # sglang-0.5.3.post3:sglang/srt/configs/mamba_utils.py:97-103: the SSM dtype is the
    # environment's SGLANG_MAMBA_SSM_DTYPE, which server_args always sets from --mamba-ssm-dtype
    # (default float32, choices float32 / bfloat16: sglang-0.5.3.post3:sglang/srt/
    # server_args.py:373, :1368, :2495-2500).
    ssm_dtype_from_config=False,
    mamba_ssm_dtypes=("float32", "bfloat16"),
    # sglang-0.5.3.post3:sglang/srt/configs/nemotron_h.py (__init__): hybrid_override_pattern
    # only, with a 52-layer default.
    nemotron_reads_layers_block_type=False,
    # sglang-0.5.3.post3:sglang/srt/models/nemotron_h.py: ALL_DECODER_LAYER_TYPES has no MoE.
    nemotron_moe_layers=False,
    # sglang-0.5.3.post3:sglang/srt/server_args.py:1628 (choices auto, fp8_e5m2, fp8_e4m3).
    kv_cache_dtypes=("auto", "fp8_e5m2", "fp8_e4m3"),
    # sglang-0.5.2:sglang/srt/server_args.py:509-527 (__post_init__): chunked prefill 2048 below
    # 35 GiB, 8192 below 160 GiB, 16384 above; max_bs 8 (80 from tp 4) below 35 GiB, else the
    # default 160.
    memory_tiers=((35 * 1024, 2048, 8, 80), (160 * 1024, 8192, 160, 160)),
    decode_graph_capped_by_running=False,
    multimodal_prefill_graph_archs=_PREFILL_GRAPH_ARCHS_0_5_19,
    multimodal_reserve_mib=0,
    # The radix cache on is MambaRadixCache, what 0.5.7 names no_buffer.
    auto_strategy="no_buffer",
    radix_archs=_RADIX_0_5_2,
    radix_off_archs=_RADIX_0_5_2,
    extra_buffer_archs=frozenset(),
    no_buffer_asserts_overlap=False,
    no_buffer_resets_page=False,
    # sglang-0.5.3.post3:sglang/srt/model_executor/model_runner.py:1597-1605: ratio 3 with the
    # radix cache on, 1 off.
    no_buffer_tracking_slots=0,
    strategy_flag=False,
    # No --mamba-full-memory-ratio (sglang-0.5.2:sglang/srt/server_args.py); the mamba pool is
    # built with the request pool's size (sglang-0.5.2:sglang/srt/model_executor/
    # model_runner.py:1351-1352, mem_cache/memory_pool.py:207-235: HybridReqToTokenPool(size=
    # max_num_reqs) builds MambaPool(size)).
    default_mamba_full_memory_ratio=None,
    mamba_pool_holds_requests=True,
    # sglang-0.5.3.post3:sglang/srt/model_executor/model_runner.py:1375-1422: K = the flag, else
    # max_running_requests, else 512 with the radix cache off; the ratio split (overwriting the
    # flag) with it on; the KV budget rest - K p.
    slots_flag_with_radix=False,
    radix_off_default_slots=512,
    charges_padding_slot=False,
    joint_speculative_solve=False,
    empty_pool_refused=False,
    # sglang-0.5.3.post3:sglang/srt/model_executor/model_runner.py:1545-1640 (the estimate only
    # without the flag, both held to K // ratio, before --max-total-tokens and the pages) and
    # sglang-0.5.3.post3:sglang/srt/managers/tp_worker.py:139-148 (half the final tokens only
    # without the flag).
    running_flag_held_to="slots",
    estimate_from_profiled_tokens=True,
    # sglang-0.5.2:sglang/srt/configs/model_config.py:150-151: a Qwen3-Next draft is renamed
    # Qwen3NextForCausalLMMTP and keeps the checkpoint's count.
    draft_mtp_archs=frozenset(),
    mamba_log_names_size=False,  # sglang-0.5.2:sglang/srt/mem_cache/memory_pool.py:166-170
    kv_log_names_dtype=False,  # sglang-0.5.3.post3:sglang/srt/mem_cache/memory_pool.py:451
    # sglang-0.5.3.post3:sglang/srt/model_executor/model_runner.py:898-904.
    weight_log_names_elapsed=False,
    weight_log_names_dtype=True,
)


CHANGES: Final = (
    RuleChange(
        "0.5.3", "memory_tiers",
        ((20 * 1024, 2048, 8, 8), (35 * 1024, 2048, 16, 80), *_TIERS_0_5_10[2:]),
        "GPU tiers of _handle_gpu_memory_settings: chunked prefill 4096 from 35 to 60 GiB (was "
        "8192), max_bs 8 below 20 GiB and 16 to 35 GiB below tp 4",
        "sglang-0.5.3:sglang/srt/server_args.py:542-620",
    ),
    RuleChange(
        "0.5.3", "draft_mtp_archs", _DRAFT_MTP_0_5_3,
        "a Qwen3-Next draft checkpoint is Qwen3-Next's MTP model with one NEXTN layer",
        "sglang-0.5.3:sglang/srt/configs/model_config.py:249-251",
    ),
    RuleChange(
        "0.5.3.post2", "default_mamba_full_memory_ratio", 0.2,
        "--mamba-full-memory-ratio (default 0.2) and the ratio split with the radix cache on",
        "sglang-0.5.3.post2:sglang/srt/server_args.py:374; model_runner.py:1376-1423",
    ),
    RuleChange(
        "0.5.3.post2", "radix_archs", _RADIX_0_5_3_POST3,
        "ModelRunner handles the radix cache of the mamba2 configs only (FalconH1, NemotronH)",
        "sglang-0.5.3.post2:sglang/srt/model_executor/model_runner.py:401-404",
    ),
    RuleChange(
        "0.5.3.post2", "radix_off_archs", _RADIX_0_5_3_POST3,
        "Qwen3-Next keeps the radix cache (only the mamba2 configs turn it off)",
        "sglang-0.5.3.post2:sglang/srt/model_executor/model_runner.py:401-404",
    ),
    RuleChange(
        "0.5.3.post2", "mamba_pool_holds_requests", False,
        "the mamba pool is built with K slots (HybridReqToTokenPool's mamba_size)",
        "sglang-0.5.3.post2:sglang/srt/mem_cache/memory_pool.py:257-280",
    ),
    RuleChange(
        "0.5.3.post2", "mamba_log_names_size", True,
        '"Mamba Cache is allocated" names max_mamba_cache_size',
        "sglang-0.5.3.post2:sglang/srt/mem_cache/memory_pool.py:192-205",
    ),
    RuleChange(
        "0.5.3.post3", "default_mamba_full_memory_ratio", 0.9,
        "--mamba-full-memory-ratio defaults to 0.9 (was 0.2)",
        "sglang-0.5.3.post3:sglang/srt/server_args.py:374",
    ),
    RuleChange(
        "0.5.4", "kv_cache_dtypes", ("auto", "fp8_e5m2", "fp8_e4m3", "bf16", "bfloat16"),
        "--kv-cache-dtype bf16 / bfloat16 accepted",
        "sglang-0.5.4:sglang/srt/server_args.py:1789",
    ),
    RuleChange(
        "0.5.4.post1", "memory_tiers", _TIERS_0_5_10,
        "20-35 GiB GPUs: decode max_bs 24 (was 16) below tp 4",
        "sglang-0.5.4.post1:sglang/srt/server_args.py:679",
    ),
    RuleChange(
        "0.5.4.post2", "radix_archs", _RADIX_0_5_3_POST3 | {"KimiLinearForCausalLM"},
        "Kimi-Linear served with the radix cache off",
        "sglang-0.5.4.post2:sglang/srt/server_args.py:1031-1035",
    ),
    RuleChange(
        "0.5.4.post2", "radix_off_archs", _RADIX_0_5_3_POST3 | {"KimiLinearForCausalLM"},
        "Kimi-Linear's radix cache off",
        "sglang-0.5.4.post2:sglang/srt/server_args.py:1031-1035",
    ),
    RuleChange(
        "0.5.5.post2", "radix_archs",
        _RADIX_0_5_3_POST3 | {"KimiLinearForCausalLM", "Qwen3NextForCausalLM"},
        "Qwen3-Next's mamba radix cache turns the overlap scheduler off",
        "sglang-0.5.5.post2:sglang/srt/server_args.py:1073-1079",
    ),
    RuleChange(
        "0.5.6", "radix_archs", _RADIX_0_5_6,
        "the NemotronH VL wrapper's llm_config is a mamba2 config: radix cache off",
        "sglang-0.5.6:sglang/srt/model_executor/model_runner.py:448-451, :1507-1513",
    ),
    RuleChange(
        "0.5.6", "radix_off_archs",
        _RADIX_0_5_3_POST3 | {"KimiLinearForCausalLM", "NemotronH_Nano_VL_V2"},
        "the NemotronH VL wrapper's radix cache off",
        "sglang-0.5.6:sglang/srt/model_executor/model_runner.py:448-451, :1507-1513",
    ),
    RuleChange(
        "0.5.6", "nemotron_moe_layers", True,
        "NemotronH builds MoE ('E') layers",
        "sglang-0.5.6:sglang/srt/models/nemotron_h.py:502-507",
    ),
    RuleChange(
        "0.5.6.post1", "radix_archs",
        frozenset({"KimiLinearForCausalLM", "Qwen3NextForCausalLM", "FalconH1ForCausalLM",
                   "JetNemotronForCausalLM", "JetVLMForConditionalGeneration"}),
        "ModelRunner no longer turns the radix cache off for FalconH1 and NemotronH; FalconH1 "
        "and the Jet models turn the overlap scheduler off for it (NemotronH's own earlier "
        "branch leaves it on)",
        "sglang-0.5.6.post1:sglang/srt/server_args.py:1216-1220, :1261-1300, :1301-1313",
    ),
    RuleChange(
        "0.5.6.post1", "radix_off_archs", frozenset({"KimiLinearForCausalLM"}),
        "FalconH1 and NemotronH keep the radix cache (ratio 3, the ratio split)",
        "sglang-0.5.6.post1:sglang/srt/model_executor/model_runner.py (no mamba2_config branch "
        "in __init__; sglang-0.5.6:sglang/srt/model_executor/model_runner.py:448-451)",
    ),
    RuleChange(
        "0.5.7", "strategy_flag", True,
        "--mamba-scheduler-strategy (auto, no_buffer, extra_buffer; auto is no_buffer)",
        "sglang-0.5.7:sglang/srt/server_args.py:193, :473",
    ),
    RuleChange(
        "0.5.7", "slots_flag_with_radix", True,
        "--max-mamba-cache-size sizes the pool with the radix cache on too",
        "sglang-0.5.7:sglang/srt/model_executor/model_runner_kv_cache_mixin.py:150-162",
    ),
    RuleChange(
        "0.5.7", "no_buffer_tracking_slots", 2,
        "every radix-cache launch adds the extra buffer's 2 slots: no_buffer counts 5",
        "sglang-0.5.7:sglang/srt/model_executor/model_runner_kv_cache_mixin.py:289-304",
    ),
    RuleChange(
        "0.5.7", "radix_archs", _RADIX_0_5_7,
        "NemotronH's branch turns the overlap scheduler off for the radix cache",
        "sglang-0.5.7:sglang/srt/server_args.py:1309-1375",
    ),
    RuleChange(
        "0.5.8", "no_buffer_tracking_slots", 0,
        "no_buffer holds the base 3 slots a request (the extra buffer's 2 only with extra_buffer)",
        "sglang-0.5.8:sglang/srt/model_executor/model_runner_kv_cache_mixin.py:268-281",
    ),
    RuleChange(
        "0.5.8", "radix_archs", _RADIX_0_5_7 - {"Qwen3NextForCausalLM"},
        "Qwen3-Next's no_buffer handling sits in the GLM-4-MoE branch: it keeps the overlap "
        "scheduler (ratio 3 all the same)",
        "sglang-0.5.8:sglang/srt/server_args.py:1487-1518, :1519-1566",
    ),
    RuleChange(
        "0.5.8", "draft_mtp_archs", _DRAFT_MTP_0_5_8,
        "a NemotronH draft checkpoint is NemotronH's MTP model with one NEXTN layer",
        "sglang-0.5.8:sglang/srt/configs/model_config.py:310-312",
    ),
    RuleChange(
        "0.5.9", "ssm_dtype_from_config", True,
        "mamba2_state_dtype(config) reads the config's mamba_ssm_dtype; --mamba-ssm-dtype "
        "defaults to None and overrides it only when given",
        "sglang-0.5.9:sglang/srt/configs/mamba_utils.py:47-107; "
        "sglang-0.5.9:sglang/srt/server_args.py:522, :2675-2676",
    ),
    RuleChange(
        "0.5.9", "mamba_ssm_dtypes", ("float32", "bfloat16", "float16"),
        "--mamba-ssm-dtype float16 accepted",
        "sglang-0.5.9:sglang/srt/server_args.py:214",
    ),
    RuleChange(
        "0.5.9", "radix_archs", _RADIX_0_5_10,
        "_handle_mamba_radix_cache: Qwen3-Next again, Qwen3.5, Qwen3.5-MoE, Bailing-V2.5 and "
        "LFM2 handle the mamba radix cache",
        "sglang-0.5.9:sglang/srt/server_args.py:1524-1528, :1579-1605, :1654-1665",
    ),
    RuleChange(
        "0.5.9", "radix_off_archs",
        frozenset({"KimiLinearForCausalLM", "BailingMoeV2_5ForCausalLM"}),
        "Bailing-V2.5 runs with the radix cache off (support_mamba_cache=False)",
        "sglang-0.5.9:sglang/srt/server_args.py:1524-1528",
    ),
    RuleChange(
        "0.5.9", "radix_off_default_slots", None,
        "the 512-slot default is gone: with the radix cache off and no --max-running-requests "
        "the ratio split sizes the pool",
        "sglang-0.5.9:sglang/srt/model_executor/model_runner_kv_cache_mixin.py:173-210",
    ),
    RuleChange(
        "0.5.9", "weight_log_names_elapsed", True,
        "'Load weight end. elapsed=... s, '",
        "sglang-0.5.9:sglang/srt/model_executor/model_runner.py:1041-1047",
    ),
    RuleChange(
        "0.5.9", "draft_mtp_archs", _DRAFT_MTP_0_5_9,
        "a Qwen3.5 draft checkpoint is Qwen3.5's MTP model with one NEXTN layer",
        "sglang-0.5.9:sglang/srt/configs/model_config.py:324-329",
    ),
    RuleChange(
        "0.5.10", "running_flag_held_to", "estimate",
        "--max-running-requests held to SGLang's estimate (_resolve_max_num_reqs)",
        "sglang-0.5.10:sglang/srt/model_executor/model_runner_kv_cache_mixin.py:840-859",
    ),
    RuleChange(
        "0.5.10", "estimate_from_profiled_tokens", False,
        "the estimate reads the tokens after --max-total-tokens and the page alignment",
        "sglang-0.5.10:sglang/srt/model_executor/model_runner_kv_cache_mixin.py:808-838, "
        ":871-889",
    ),
    RuleChange(
        "0.5.10", "nemotron_reads_layers_block_type", True,
        "NemotronHConfig reads layers_block_type (hybrid_override_pattern becomes its alias)",
        "sglang-0.5.10:sglang/srt/configs/nemotron_h.py:189-203, :297-332",
    ),
    RuleChange(
        "0.5.10", "weight_log_names_dtype", False,
        "'Load weight end' names the quantization, not the dtype",
        "sglang-0.5.10:sglang/srt/model_executor/model_runner.py:1246-1253",
    ),
    RuleChange(
        "0.5.11", "no_buffer_resets_page", True,
        "no_buffer with the radix cache sets --page-size to 1 (with a warning)",
        "sglang-0.5.11:sglang/srt/server_args.py:2420-2427",
    ),
    RuleChange(
        "0.5.12", "radix_archs",
        _RADIX_0_5_10 | {"InternS2PreviewForConditionalGeneration",
                         "MiniCPMV4_6ForConditionalGeneration"},
        "InternS2-Preview and MiniCPM-V 4.6 get the mamba radix cache",
        "sglang-0.5.12:sglang/srt/server_args.py:2291, :2337-2352",
    ),
    RuleChange(
        "0.5.12", "draft_mtp_archs", _DRAFT_MTP_0_5_12,
        "an Intern-S2 preview draft checkpoint is Qwen3.5's MTP model with one NEXTN layer",
        "sglang-0.5.12:sglang/srt/configs/model_config.py:470-476",
    ),
    RuleChange(
        "0.5.13", "radix_archs",
        _RADIX_0_5_10 | {"InternS2PreviewForConditionalGeneration",
                         "MiniCPMV4_6ForConditionalGeneration", "NemotronHPuzzleForCausalLM"},
        "NemotronH-Puzzle gets the mamba radix cache",
        "sglang-0.5.13:sglang/srt/server_args.py:2470",
    ),
    RuleChange(
        "0.5.13", "radix_off_archs", frozenset({"KimiLinearForCausalLM"}),
        "Bailing-V2.5 keeps the radix cache (ratio 3, not 1)",
        "sglang-0.5.13:sglang/srt/server_args.py:2464-2469",
    ),
    RuleChange(
        "0.5.13", "joint_speculative_solve", True,
        "the ratio-sized pool and its speculative scratch solved together: K = budget // "
        "(p (1 + D / ratio))",
        "sglang-0.5.13:sglang/srt/model_executor/model_runner_kv_cache_mixin.py:82-184",
    ),
    RuleChange(
        "0.5.13", "empty_pool_refused", True,
        "a pool of no slot, or a cap of no request, refused at startup",
        "sglang-0.5.13:sglang/srt/model_executor/model_runner_kv_cache_mixin.py:165-178, "
        ":893-905",
    ),
    RuleChange(
        "0.5.13", "kv_log_names_dtype", True,
        "'KV Cache is allocated. dtype: ...'",
        "sglang-0.5.13:sglang/srt/mem_cache/memory_pool.py:819",
    ),
    RuleChange(
        "0.5.13", "draft_mtp_archs", _DRAFT_MTP_0_5_13,
        "a NemotronH Puzzle draft checkpoint is NemotronH's MTP model with one NEXTN layer",
        "sglang-0.5.13:sglang/srt/configs/model_config.py:493-498",
    ),
    RuleChange(
        "0.5.14", "auto_strategy", "extra_buffer",
        "--mamba-radix-cache-strategy auto is extra_buffer where the architecture supports it "
        "and the overlap scheduler runs (else no_buffer, overlap off)",
        "sglang-0.5.14:sglang/srt/server_args.py:4380-4398",
    ),
    RuleChange(
        "0.5.14", "radix_archs",
        _RADIX_0_5_10 | {"InternS2PreviewForConditionalGeneration",
                         "MiniCPMV4_6ForConditionalGeneration", "NemotronHPuzzleForCausalLM",
                         "ZayaForCausalLM"},
        "Zaya gets the mamba radix cache",
        "sglang-0.5.14:sglang/srt/server_args.py:4274",
    ),
    RuleChange(
        "0.5.14", "radix_off_archs", frozenset(),
        "Kimi-Linear keeps the radix cache (ratio 3, not 1)",
        "sglang-0.5.14:sglang/srt/server_args.py:4142-4143, :4380-4384",
    ),
    RuleChange(
        "0.5.14", "extra_buffer_archs", _EXTRA_BUFFER_0_5_14,
        "the extra-buffer architectures listed",
        "sglang-0.5.14:sglang/srt/server_args.py:4338-4353",
    ),
    RuleChange(
        "0.5.14", "no_buffer_resets_page", False,
        "no_buffer asserts page_size 1 (_validate_mamba_no_buffer) rather than setting it",
        "sglang-0.5.14:sglang/srt/server_args.py:4355-4356",
    ),
    RuleChange(
        "0.5.14", "no_buffer_asserts_overlap", True,
        "no_buffer by name asserts --disable-overlap-schedule",
        "sglang-0.5.14:sglang/srt/server_args.py:4355-4362",
    ),
    RuleChange(
        "0.5.14", "running_flag_held_to", "half_tokens",
        "--max-running-requests held to half the KV tokens, not to SGLang's estimate",
        "sglang-0.5.14:sglang/srt/model_executor/model_runner_kv_cache_mixin.py:981-1000",
    ),
    RuleChange(
        "0.5.16", "extra_buffer_archs", _EXTRA_BUFFER_0_5_14 | {"KimiLinearForCausalLM"},
        "Kimi-Linear supports the extra buffer",
        "sglang-0.5.16:sglang/srt/arg_groups/overrides.py:1133",
    ),
    RuleChange(
        "0.5.17", "radix_archs",
        _RADIX_0_5_10 | {"InternS2PreviewForConditionalGeneration",
                         "MiniCPMV4_6ForConditionalGeneration", "NemotronHPuzzleForCausalLM",
                         "ZayaForCausalLM", "KimiK3ForConditionalGeneration",
                         "Lfm2MoeForCausalLM"},
        "Kimi-K3 and LFM2-MoE get the mamba radix cache",
        "sglang-0.5.17:sglang/srt/arg_groups/overrides.py:1408",
    ),
    RuleChange(
        "0.5.17", "extra_buffer_archs",
        _EXTRA_BUFFER_0_5_14 | {"KimiLinearForCausalLM", "KimiK3ForConditionalGeneration"},
        "Kimi-K3 supports the extra buffer",
        "sglang-0.5.17:sglang/srt/arg_groups/overrides.py:1432",
    ),
    RuleChange(
        "0.5.17", "charges_padding_slot", True,
        "the padding slot is charged: K = (budget - p) // p, the KV budget rest - (K + 1) p",
        "sglang-0.5.17:sglang/srt/mem_cache/kv_cache_configurator.py:1816-1982",
    ),
    RuleChange(
        "0.5.17", "draft_mtp_archs", _DRAFT_MTP_0_5_17,
        "a text-only Qwen3.5 draft checkpoint is Qwen3.5's MTP model with one NEXTN layer",
        "sglang-0.5.17:sglang/srt/configs/model_config.py:668-676",
    ),
    RuleChange(
        "0.5.18", "radix_archs",
        _RADIX_0_5_10 | {"InternS2PreviewForConditionalGeneration",
                         "MiniCPMV4_6ForConditionalGeneration", "NemotronHPuzzleForCausalLM",
                         "ZayaForCausalLM", "KimiK3ForConditionalGeneration",
                         "Lfm2MoeForCausalLM", "InternS2MobiusForConditionalGeneration"},
        "InternS2-Mobius gets the mamba radix cache",
        "sglang-0.5.18:sglang/srt/arg_groups/overrides.py:1495",
    ),
    RuleChange(
        "0.5.18", "multimodal_reserve_mib", 100,
        "a vision model's runtime cache (SGLANG_VLM_CACHE_SIZE_MB) off the budget",
        "sglang-0.5.18:sglang/srt/mem_cache/kv_cache_configurator.py:130, :1785",
    ),
    RuleChange(
        "0.5.18", "draft_mtp_archs", _DRAFT_MTP_0_5_18,
        "an InternS2-Mobius draft checkpoint is Qwen3.5's MTP model with one NEXTN layer",
        "sglang-0.5.18:sglang/srt/configs/model_config.py:706-728",
    ),
    RuleChange(
        "0.5.19", "radix_archs",
        _RADIX_0_5_10 | {"InternS2PreviewForConditionalGeneration",
                         "MiniCPMV4_6ForConditionalGeneration", "NemotronHPuzzleForCausalLM",
                         "ZayaForCausalLM", "KimiK3ForConditionalGeneration",
                         "Lfm2MoeForCausalLM", "InternS2MobiusForConditionalGeneration",
                         "BailingMoeV3ForCausalLM", "Qwen3_5ForCausalLM",
                         "Qwen3_5MoeForCausalLM"},
        "Bailing-V3 and the text-only Qwen3.5 classes get the mamba radix cache",
        "sglang-0.5.19:sglang/srt/arg_groups/overrides.py:490",
    ),
    RuleChange(
        "0.5.19", "extra_buffer_archs",
        _EXTRA_BUFFER_0_5_14 | {"KimiLinearForCausalLM", "KimiK3ForConditionalGeneration",
                                "BailingMoeV3ForCausalLM", "Qwen3_5ForCausalLM",
                                "Qwen3_5MoeForCausalLM"},
        "Bailing-V3 and the text-only Qwen3.5 classes support the extra buffer",
        "sglang-0.5.19:sglang/srt/arg_groups/overrides.py:519",
    ),
    RuleChange(
        "0.5.20", "memory_tiers",
        ((20 * 1024, 2048, 8, 8), (35 * 1024, 4096, 48, 160), *_TIERS_0_5_10[2:]),
        "20-35 GiB GPUs: chunked prefill 4096, decode max_bs 48 (160 from tp 4)",
        "sglang-0.5.20:sglang/srt/arg_groups/memory_hook.py:101-117",
    ),
    RuleChange(
        "0.5.20", "multimodal_prefill_graph_archs",
        _PREFILL_GRAPH_ARCHS_0_5_19 | {"Glm5NextForConditionalGeneration"},
        "GLM-5-Next keeps prefill CUDA graphs",
        "sglang-0.5.20:sglang/srt/configs/model_config.py:2207",
    ),
    RuleChange(
        "0.5.20", "radix_archs",
        _RADIX_0_5_10 | {"InternS2PreviewForConditionalGeneration",
                         "MiniCPMV4_6ForConditionalGeneration", "NemotronHPuzzleForCausalLM",
                         "ZayaForCausalLM", "KimiK3ForConditionalGeneration",
                         "Lfm2MoeForCausalLM", "InternS2MobiusForConditionalGeneration",
                         "BailingMoeV3ForCausalLM", "Qwen3_5ForCausalLM",
                         "Qwen3_5MoeForCausalLM", "Glm5NextForConditionalGeneration",
                         "NemotronH_Omni_Reasoning_V3", "Qwen4ExpForConditionalGeneration"},
        "GLM-5-Next, NemotronH Omni-V3 and Qwen4-Exp get the mamba radix cache",
        "sglang-0.5.20:sglang/srt/arg_groups/overrides.py:442",
    ),
    RuleChange(
        "0.5.20", "extra_buffer_archs",
        _EXTRA_BUFFER_0_5_14 | {"KimiLinearForCausalLM", "KimiK3ForConditionalGeneration",
                                "BailingMoeV3ForCausalLM", "Qwen3_5ForCausalLM",
                                "Qwen3_5MoeForCausalLM", "Glm5NextForConditionalGeneration",
                                "NemotronH_Omni_Reasoning_V3",
                                "Qwen4ExpForConditionalGeneration"},
        "GLM-5-Next, NemotronH Omni-V3 and Qwen4-Exp support the extra buffer",
        "sglang-0.5.20:sglang/srt/arg_groups/overrides.py:474",
    ),
    RuleChange(
        "0.5.20", "draft_mtp_archs", _DRAFT_MTP_0_5_20,
        "a GLM-5-Next draft checkpoint is its NEXTN model with one layer (its text config's "
        "count), a NemotronH Omni one NemotronH's MTP model",
        "sglang-0.5.20:sglang/srt/configs/model_config.py:822-829, :927-933",
    ),
    RuleChange(
        "0.5.21", "radix_archs",
        _RADIX_0_5_10 | {"InternS2PreviewForConditionalGeneration",
                         "MiniCPMV4_6ForConditionalGeneration", "NemotronHPuzzleForCausalLM",
                         "ZayaForCausalLM", "KimiK3ForConditionalGeneration",
                         "Lfm2MoeForCausalLM", "InternS2MobiusForConditionalGeneration",
                         "BailingMoeV3ForCausalLM", "Qwen3_5ForCausalLM",
                         "Qwen3_5MoeForCausalLM", "Glm5NextForConditionalGeneration",
                         "NemotronH_Omni_Reasoning_V3", "Qwen4ExpForConditionalGeneration",
                         "BailingMoeV3VLForConditionalGeneration"},
        "Bailing-V3-VL gets the mamba radix cache",
        "sglang-0.5.21:sglang/srt/arg_groups/overrides.py:345",
    ),
    RuleChange(
        "0.5.21", "extra_buffer_archs",
        _EXTRA_BUFFER_0_5_14 | {"KimiLinearForCausalLM", "KimiK3ForConditionalGeneration",
                                "BailingMoeV3ForCausalLM", "Qwen3_5ForCausalLM",
                                "Qwen3_5MoeForCausalLM", "Glm5NextForConditionalGeneration",
                                "NemotronH_Omni_Reasoning_V3",
                                "Qwen4ExpForConditionalGeneration",
                                "BailingMoeV3VLForConditionalGeneration",
                                "InklingForConditionalGeneration",
                                "InklingForConditionalGenerationMTP"},
        "Bailing-V3-VL and Inkling support the extra buffer",
        "sglang-0.5.21:sglang/srt/arg_groups/overrides.py:378",
    ),
    RuleChange(
        "0.5.22", "decode_graph_capped_by_running", True,
        "a default decode CUDA-graph max_bs held to --max-running-requests",
        "sglang-0.5.22:sglang/srt/arg_groups/memory_hook.py:83, :136-143",
    ),
    RuleChange(
        "0.5.22", "multimodal_prefill_graph_archs",
        _PREFILL_GRAPH_ARCHS_0_5_19 | {"Glm5NextForConditionalGeneration",
                                       "Qwen4ExpForConditionalGeneration"},
        "Qwen4-Exp keeps prefill CUDA graphs",
        "sglang-0.5.22:sglang/srt/configs/model_config.py:2388",
    ),
    RuleChange(
        "0.5.23", "radix_archs",
        _RADIX_0_5_10 | {"InternS2PreviewForConditionalGeneration",
                         "MiniCPMV4_6ForConditionalGeneration", "NemotronHPuzzleForCausalLM",
                         "ZayaForCausalLM", "KimiK3ForConditionalGeneration",
                         "Lfm2MoeForCausalLM", "InternS2MobiusForConditionalGeneration",
                         "BailingMoeV3ForCausalLM", "Qwen3_5ForCausalLM",
                         "Qwen3_5MoeForCausalLM", "Glm5NextForConditionalGeneration",
                         "NemotronH_Omni_Reasoning_V3", "Qwen4ExpForConditionalGeneration",
                         "BailingMoeV3VLForConditionalGeneration",
                         "MiniCPMV4_7ForConditionalGeneration"},
        "MiniCPM-V 4.7 gets the mamba radix cache",
        "sglang-0.5.23:sglang/srt/arg_groups/overrides.py:369",
    ),
    RuleChange(
        "0.5.23", "extra_buffer_archs",
        _EXTRA_BUFFER_0_5_14 | {"KimiLinearForCausalLM", "KimiK3ForConditionalGeneration",
                                "BailingMoeV3ForCausalLM", "Qwen3_5ForCausalLM",
                                "Qwen3_5MoeForCausalLM", "Glm5NextForConditionalGeneration",
                                "NemotronH_Omni_Reasoning_V3",
                                "Qwen4ExpForConditionalGeneration",
                                "BailingMoeV3VLForConditionalGeneration",
                                "InklingForConditionalGeneration",
                                "InklingForConditionalGenerationMTP",
                                "MiniCPMV4_7ForConditionalGeneration"},
        "MiniCPM-V 4.7 supports the extra buffer",
        "sglang-0.5.23:sglang/srt/arg_groups/overrides.py:403",
    ),
)  # fmt: skip

# The oldest release modelled, and from which release the package models each launch feature
# (older releases refuse it as not modelled): speculative decoding (EAGLE/NEXTN, topk 1) and the
# extra-buffer strategies by name from 0.5.14, where auto first picks the extra buffer; the
# default --mem-fraction-static from 0.5.19 (arg_groups/memory_hook.py); a Blackwell (SM10x)
# GPU's attention and page defaults in 0.5.23 only.
MODELLED: Final = "0.5.2"
COVERAGE: Final = {
    "speculative": "0.5.14",
    "extra_buffer_by_name": "0.5.14",
    "default_mem_fraction": "0.5.19",
    "sm100": "0.5.23",
}


check_changes(SglangRules, CHANGES, not_rules=("covered",))


@cache
def sglang_rules(version: ReleaseVersion) -> SglangRules:
    """The rules of SGLang ``version``: ``BASELINE`` with every change up to it, and the
    features the package models for it."""
    covered = frozenset(
        feature for feature, since in COVERAGE.items() if parse_version(since).release <= version
    )
    return replace(fold(BASELINE, CHANGES, version), covered=covered)


def rule_changes(old: ReleaseVersion, new: ReleaseVersion) -> tuple[RuleChange, ...]:
    """The changes after ``old`` up to ``new`` (or back from ``old`` to ``new``), oldest first."""
    return changes_between(CHANGES, old, new)


def served_releases(architecture: str) -> tuple[str, str] | None:
    """The first and last SGLang release whose model modules name ``architecture`` in an
    ``EntryClass`` (``None``: none does)."""
    return served_span("sglang-architectures.json", architecture)
