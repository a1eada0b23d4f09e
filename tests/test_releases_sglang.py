"""SGLang's rules release by release (``releases.sglang``) and the reservation each release
answers: every number is written out from the release's own code (``sglang-X:path:line``) or
from a published startup log (the notes' LOGS.md), one pin where each rule changes."""

from __future__ import annotations

import json
from dataclasses import fields
from typing import Any

import pytest

from decode_ring.models import ModelConfigError, ssm_state
from decode_ring.releases import SGLANG_RELEASES, UnmodelledReleaseError
from decode_ring.releases.sglang import (
    BASELINE,
    CHANGES,
    MODELLED,
    SglangRules,
    rule_changes,
    served_releases,
    sglang_rules,
)
from decode_ring.releases.versions import parse_version
from decode_ring.servers import ServerArgumentError, compare_releases, sglang_reservation

from .support import CONFIGS, bailing, config, run, run_json

GIB = 1 << 30


def rules(version: str) -> SglangRules:
    return sglang_rules(parse_version(version).release)


def qwen3_5_9b() -> dict[str, Any]:
    """Qwen3.5-9B as the log's arithmetic reads it: 32 layers (24 gated delta nets, 8
    attention), 16 key / 32 value heads of 128, conv 4, 4 KV heads of 256, float32 SSM state;
    the 27B fixture with the 9B's sizes."""
    whole = config("qwen3.5-27b.json")
    text = whole["text_config"]
    text.pop("layer_types", None)
    text.update(
        num_hidden_layers=32, linear_num_value_heads=32, hidden_size=4096, num_attention_heads=16
    )
    return whole


# Qwen3.5-9B, tp 2, 2 x RTX 4090, --mem-fraction-static 0.8 --context-length 262144, a build
# between 0.5.10 and 0.5.11 (LOGS.md section 1): the budget that gives the log's K and tokens
# (K = int(rest x 0.9 / 1.9 // p) = 186 and int(rest - 186 p) // 16384 = 327310 both hold for
# rest in [9.455902, 9.455917] GiB).
QWEN_9B_AVAILABLE = 10_153_205_760
QWEN_9B_LOG = (
    "Mamba Cache is allocated. max_mamba_cache_size: 186, conv_state size: 0.10GB, "
    "ssm_state size: 4.38GB ",
    "KV Cache is allocated. #tokens: 327310, K size: 2.50 GB, V size: 2.50 GB",
    "max_total_num_tokens=327310, chunked_prefill_size=2048, max_prefill_tokens=16384, "
    "max_running_requests=62, context_len=262144, available_gpu_mem=? GB",
)


def qwen_9b(version: str, **options: Any) -> Any:
    given = {"tp_size": 2, "available_memory": QWEN_9B_AVAILABLE, "context_length": 262144}
    return sglang_reservation(qwen3_5_9b(), version=version, **(given | options))


# --- the rules --------------------------------------------------------------------------------


def test_the_rules_start_at_the_oldest_modelled_release_and_change_in_order() -> None:
    assert MODELLED == "0.5.2" and rules("0.5.10") == rules("0.5.10.post1")
    assert rules("0.5.2") == BASELINE.__class__(
        **{f.name: getattr(BASELINE, f.name) for f in fields(BASELINE)} | {"covered": frozenset()}
    )
    since = [parse_version(change.since).release for change in CHANGES]
    assert since == sorted(since)
    # A postN release changes nothing modelled here: each one's rules are its release's.
    for post in ("0.5.8.post1", "0.5.12.post1", "0.5.13.post1", "0.5.15.post1"):
        assert rules(post) == rules(post.rsplit(".post", 1)[0])
    assert rules("0.5.6.post2") == rules("0.5.6.post1") != rules("0.5.6")


@pytest.mark.parametrize(
    ("release", "rule", "before", "after"),
    [
        # sglang-0.5.2:sglang/srt/server_args.py:509-527 chunked prefill 8192 from 35 GiB;
        # sglang-0.5.3:sglang/srt/server_args.py:542-620 4096 from 35 to 60 GiB.
        ("0.5.3", "memory_tiers",
         ((35 * 1024, 2048, 8, 80), (160 * 1024, 8192, 160, 160)),
         ((20 * 1024, 2048, 8, 8), (35 * 1024, 2048, 16, 80), (60 * 1024, 4096, 32, 160),
          (90 * 1024, 8192, 256, 512), (160 * 1024, 8192, 256, 512))),
        # sglang-0.5.3.post2:sglang/srt/server_args.py:374: the flag, 0.2; before, no ratio.
        ("0.5.3.post2", "default_mamba_full_memory_ratio", None, 0.2),
        # sglang-0.5.3.post2:sglang/srt/model_executor/model_runner.py:401-404: only the mamba2
        # configs turn the radix cache off; before, ModelRunner.initialize turns it off for
        # Qwen3-Next too (sglang-0.5.3.post1:...:358-375).
        ("0.5.3.post2", "radix_off_archs",
         {"FalconH1ForCausalLM", "NemotronHForCausalLM", "Qwen3NextForCausalLM"},
         {"FalconH1ForCausalLM", "NemotronHForCausalLM"}),
        # sglang-0.5.3.post2:sglang/srt/mem_cache/memory_pool.py:257-280 (mamba_size) and
        # :192-205 (the log names it).
        ("0.5.3.post2", "mamba_pool_holds_requests", True, False),
        ("0.5.3.post2", "mamba_log_names_size", False, True),
        # sglang-0.5.3.post2:sglang/srt/server_args.py:374 0.2; sglang-0.5.3.post3:...:374 0.9.
        ("0.5.3.post3", "default_mamba_full_memory_ratio", 0.2, 0.9),
        # sglang-0.5.4:sglang/srt/server_args.py (_handle_gpu_memory_settings): 20-35 GiB max_bs
        # 16 below tp 4; sglang-0.5.4.post1:sglang/srt/server_args.py:679: 24.
        ("0.5.4.post1", "memory_tiers",
         ((20 * 1024, 2048, 8, 8), (35 * 1024, 2048, 16, 80), (60 * 1024, 4096, 32, 160),
          (90 * 1024, 8192, 256, 512), (160 * 1024, 8192, 256, 512)),
         ((20 * 1024, 2048, 8, 8), (35 * 1024, 2048, 24, 80), (60 * 1024, 4096, 32, 160),
          (90 * 1024, 8192, 256, 512), (160 * 1024, 8192, 256, 512))),
        # sglang-0.5.4.post2:sglang/srt/server_args.py:1031-1035: Kimi-Linear's radix cache off.
        ("0.5.4.post2", "radix_off_archs", {"FalconH1ForCausalLM", "NemotronHForCausalLM"},
         {"FalconH1ForCausalLM", "NemotronHForCausalLM", "KimiLinearForCausalLM"}),
        # sglang-0.5.5.post2:sglang/srt/server_args.py:1073-1079: Qwen3-Next's overlap off.
        ("0.5.5.post2", "radix_archs",
         {"FalconH1ForCausalLM", "NemotronHForCausalLM", "KimiLinearForCausalLM"},
         {"FalconH1ForCausalLM", "NemotronHForCausalLM", "KimiLinearForCausalLM",
          "Qwen3NextForCausalLM"}),
        # sglang-0.5.5.post3:sglang/srt/models/nemotron_h.py:304-308 (attention, MLP, Mamba);
        # sglang-0.5.6:sglang/srt/models/nemotron_h.py:502-507 (+ MoE).
        ("0.5.6", "nemotron_moe_layers", False, True),
        # sglang-0.5.6:sglang/srt/model_executor/model_runner.py:1507-1513: the VL wrapper's
        # llm_config is a mamba2 config (:448-451, radix cache off).
        ("0.5.6", "radix_off_archs",
         {"FalconH1ForCausalLM", "NemotronHForCausalLM", "KimiLinearForCausalLM"},
         {"FalconH1ForCausalLM", "NemotronHForCausalLM", "KimiLinearForCausalLM",
          "NemotronH_Nano_VL_V2"}),
        # sglang-0.5.6:sglang/srt/model_executor/model_runner.py:448-451 turns the radix cache
        # off for the mamba2 configs; 0.5.6.post1 does not.
        ("0.5.6.post1", "radix_off_archs", {"KimiLinearForCausalLM", "FalconH1ForCausalLM",
                                            "NemotronHForCausalLM", "NemotronH_Nano_VL_V2"},
         {"KimiLinearForCausalLM"}),
        # sglang-0.5.7:sglang/srt/server_args.py:193, :473 (no such flag in 0.5.6.post2).
        ("0.5.7", "strategy_flag", False, True),
        # sglang-0.5.6.post2:sglang/srt/model_executor/model_runner.py:1456-1481 (the flag only
        # with the radix cache off); sglang-0.5.7:.../model_runner_kv_cache_mixin.py:150-162.
        ("0.5.7", "slots_flag_with_radix", False, True),
        # sglang-0.5.6.post2:.../model_runner.py:1684-1688 (3 or 1);
        # sglang-0.5.7:.../model_runner_kv_cache_mixin.py:289-304 (3 + 2).
        ("0.5.7", "no_buffer_tracking_slots", 0, 2),
        # sglang-0.5.7:.../model_runner_kv_cache_mixin.py:289-304: additional ratio 2 unless
        # extra_buffer with speculation; sglang-0.5.8:...:268-281: 0 for no_buffer.
        ("0.5.8", "no_buffer_tracking_slots", 2, 0),
        # sglang-0.5.8:sglang/srt/server_args.py:1487-1518: Qwen3-Next's branch leaves the
        # overlap scheduler alone (its no_buffer block sits under Glm4MoeForCausalLM, :1541-1566).
        ("0.5.8", "radix_archs", {"KimiLinearForCausalLM", "NemotronHForCausalLM",
                                  "Qwen3NextForCausalLM", "FalconH1ForCausalLM",
                                  "JetNemotronForCausalLM", "JetVLMForConditionalGeneration"},
         {"KimiLinearForCausalLM", "NemotronHForCausalLM", "FalconH1ForCausalLM",
          "JetNemotronForCausalLM", "JetVLMForConditionalGeneration"}),
        # sglang-0.5.8:sglang/srt/configs/mamba_utils.py:47-53 (the environment's dtype, always
        # set from --mamba-ssm-dtype); sglang-0.5.9:...:47-107 mamba2_state_dtype(config).
        ("0.5.9", "ssm_dtype_from_config", False, True),
        # sglang-0.5.8:sglang/srt/server_args.py:202; sglang-0.5.9:sglang/srt/server_args.py:214.
        ("0.5.9", "mamba_ssm_dtypes", ("float32", "bfloat16"), ("float32", "bfloat16", "float16")),
        # sglang-0.5.8:.../model_runner_kv_cache_mixin.py:172-178 (512 without
        # max_running_requests); sglang-0.5.9:...:173-210 (the ratio split).
        ("0.5.9", "radix_off_default_slots", 512, None),
        # sglang-0.5.9:sglang/srt/server_args.py:1524-1528: Bailing-V2.5 support_mamba_cache=False.
        ("0.5.9", "radix_off_archs", {"KimiLinearForCausalLM"},
         {"KimiLinearForCausalLM", "BailingMoeV2_5ForCausalLM"}),
        # sglang-0.5.8:.../model_runner.py:950 "Load weight end. type="; sglang-0.5.9:...:1042
        # "elapsed=".
        ("0.5.9", "weight_log_names_elapsed", False, True),
        # sglang-0.5.9:.../model_runner.py:593-600 (min(flag // dp, req_to_token_pool.size));
        # sglang-0.5.10:.../model_runner_kv_cache_mixin.py:848-849 (min(flag // dp, estimated)).
        ("0.5.10", "running_flag_held_to", "slots", "estimate"),
        # sglang-0.5.9:.../model_runner_kv_cache_mixin.py:342-353 (the profiled tokens);
        # sglang-0.5.10:...:884-887 (_resolve_max_num_reqs(token_capacity)).
        ("0.5.10", "estimate_from_profiled_tokens", True, False),
        # sglang-0.5.9:.../model_runner.py:1044 "dtype="; sglang-0.5.10:...:1250 the quantization.
        ("0.5.10", "weight_log_names_dtype", True, False),
        # sglang-0.5.13:sglang/srt/server_args.py:2464-2469: Bailing-V2.5 support_mamba_cache=True.
        ("0.5.13", "radix_off_archs", {"KimiLinearForCausalLM", "BailingMoeV2_5ForCausalLM"},
         {"KimiLinearForCausalLM"}),
        # sglang-0.5.13:.../model_runner_kv_cache_mixin.py:165-178: RuntimeError on K <= 0.
        ("0.5.13", "empty_pool_refused", False, True),
        # sglang-0.5.13:sglang/srt/mem_cache/memory_pool.py:819 "KV Cache is allocated. dtype:".
        ("0.5.13", "kv_log_names_dtype", False, True),
        # sglang-0.5.14:sglang/srt/server_args.py:4385-4393: auto -> extra_buffer.
        ("0.5.14", "auto_strategy", "no_buffer", "extra_buffer"),
        # sglang-0.5.14:.../model_runner_kv_cache_mixin.py:988-991: min(flag, tokens // 2).
        ("0.5.14", "running_flag_held_to", "estimate", "half_tokens"),
        # sglang-0.5.17:sglang/srt/mem_cache/kv_cache_configurator.py:1954: (budget - p) // p.
        ("0.5.17", "charges_padding_slot", False, True),
        # sglang-0.5.18:sglang/srt/mem_cache/kv_cache_configurator.py:1785 (100 MB VLM cache).
        ("0.5.18", "multimodal_reserve_mib", 0, 100),
        # sglang-0.5.22:sglang/srt/arg_groups/memory_hook.py:136-143.
        ("0.5.22", "decode_graph_capped_by_running", False, True),
    ],
)  # fmt: skip
def test_a_rule_changes_at_its_release(release: str, rule: str, before: Any, after: Any) -> None:
    earlier = SGLANG_RELEASES[SGLANG_RELEASES.index(release) - 1]
    assert getattr(rules(earlier), rule) == before
    assert getattr(rules(release), rule) == after
    between = rule_changes(parse_version(earlier).release, parse_version(release).release)
    assert [c.rule for c in between].count(rule) == 1


def test_the_memory_tiers_change_for_24_gib_gpus_at_0_5_20() -> None:
    # sglang-0.5.19:sglang/srt/arg_groups/memory_hook.py:51-62 (2048, 24 / 80);
    # sglang-0.5.20:sglang/srt/arg_groups/memory_hook.py:101-117 (4096, 48 / 160).
    assert rules("0.5.19").memory_tiers[1] == (35 * 1024, 2048, 24, 80)
    assert rules("0.5.20").memory_tiers[1] == (35 * 1024, 4096, 48, 160)


def test_the_newest_lists_are_the_ones_0_5_23_states() -> None:
    newest = rules("0.5.23")
    # sglang-0.5.23:sglang/srt/arg_groups/overrides.py:369-436 (25 and 22 architectures).
    assert len(newest.radix_archs) == 25 and len(newest.extra_buffer_archs) == 22
    assert "MiniCPMV4_7ForConditionalGeneration" in newest.radix_archs
    assert "MiniCPMV4_7ForConditionalGeneration" not in rules("0.5.22").radix_archs
    assert newest.radix_off_archs == frozenset()


def test_served_architectures_are_generated_from_each_release() -> None:
    # tools/served-architectures-sglang: the EntryClass lists of sglang/srt/models.
    assert served_releases("Qwen3_5ForConditionalGeneration") == ("0.5.9", "0.5.23")
    assert served_releases("ZayaForCausalLM") == ("0.5.14", "0.5.23")
    assert served_releases("Qwen3_5ForCausalLM") == ("0.5.17", "0.5.23")
    assert served_releases("NoSuchForCausalLM") is None


def test_an_architecture_a_release_does_not_serve_is_refused() -> None:
    zaya = CONFIGS / "zaya1-8b.json"
    assert ssm_state(zaya, layout="sglang", version="0.5.14").ssm_layers > 0
    refusal = r"SGLang 0\.5\.13 does not serve 'ZayaForCausalLM' \(an EntryClass of its models"
    with pytest.raises(ModelConfigError, match=refusal + r" names it from 0\.5\.14 to 0\.5\.23\)"):
        ssm_state(zaya, layout="sglang", version="0.5.13")


# --- the published logs -----------------------------------------------------------------------


@pytest.mark.parametrize("version", ["0.5.10", "0.5.11"])
def test_qwen3_5_9b_log_between_0_5_10_and_0_5_11(version: str) -> None:
    answer = qwen_9b(version, gpu="NVIDIA GeForce RTX 4090", mem_fraction_static=0.8)
    assert answer.per_request_bytes == 25_755_648  # 24 x (24,576 + 1,048,576)
    assert (answer.slots, answer.kv_tokens, answer.max_running_requests) == (186, 327310, 62)
    assert (answer.mamba_radix_cache_strategy, answer.ratio) == ("no_buffer", 3)
    assert answer.log_lines == QWEN_9B_LOG


def test_qwen3_5_9b_under_0_5_14_and_0_5_17() -> None:
    # The same budget: auto is extra_buffer from 0.5.14 (186 // 5 = 37, as LOGS.md says), and
    # from 0.5.17 the padding slot is charged first (185 slots, the same KV pool).
    later = qwen_9b("0.5.14")
    assert (later.slots, later.ratio, later.max_running_requests) == (186, 5, 37)
    padded = qwen_9b("0.5.17")
    assert (padded.slots, padded.kv_tokens) == (185, 327310)
    assert later.slots_rule == "0.9/(1+0.9) of available_memory"
    assert padded.slots_rule == "0.9/(1+0.9) of available_memory, one slot padding"


# Qwen3.8-27B-FP8 (Qwen3_5ForConditionalGeneration, the 27B geometry), 1 x H100 80 GB,
# --mem-fraction-static 0.85 --max-running-requests 32, a release from 0.5.18 (LOGS.md
# section 3): K = 124 and 330323 tokens hold together only with the padding slot charged, at
# rest in [38.08276, 38.08282] GiB.
QWEN_27B_AVAILABLE = 40_891_088_896


def test_qwen3_8_27b_log_needs_the_padding_slot() -> None:
    options: dict[str, Any] = {"available_memory": QWEN_27B_AVAILABLE, "max_running_requests": 32}
    answer = sglang_reservation(CONFIGS / "qwen3.5-27b.json", version="0.5.18", **options)
    assert answer.log_lines[:2] == (
        "Mamba Cache is allocated. max_mamba_cache_size: 124, conv_state size: 0.34GB, "
        "ssm_state size: 17.58GB ",
        "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 330323, K size: 10.08 GB, "
        "V size: 10.08 GB",
    )
    # 0.5.16 takes no padding slot from the budget: 125 slots, not the log's 124.
    assert (
        sglang_reservation(CONFIGS / "qwen3.5-27b.json", version="0.5.16", **options).slots == 125
    )


@pytest.mark.parametrize(
    ("slots", "running", "capped"),
    # github.com/MiaAI-Lab/Qwen3.8-27B-SGLang-DGX-Spark/issues/7 (--max-mamba-cache-size 64:
    # "capped to 12 ... 5 state slots per request"); noonghunna/club-3090#1319 (K 33,
    # --max-running-requests 8 -> 6), both v0.5.19 with extra_buffer and the overlap scheduler.
    [(64, 4096, 12), (33, 8, 6)],
)
def test_extra_buffer_caps_at_five_slots_a_request_in_0_5_19(
    slots: int, running: int, capped: int
) -> None:
    answer = sglang_reservation(
        CONFIGS / "qwen3.5-27b.json",
        version="0.5.19",
        tp_size=2,
        max_mamba_cache_size=slots,
        max_running_requests=running,
        available_memory=40 * GIB,
    )
    assert (answer.ratio, answer.max_running_requests) == (5, capped)


# --- one pin per change in a reservation -------------------------------------------------------


def test_the_radix_cache_is_off_for_kimi_until_0_5_14_and_bailing_until_0_5_13() -> None:
    kimi = CONFIGS / "kimi-linear-48b-a3b-instruct.json"
    ratios = {
        v: sglang_reservation(kimi, version=v, available_memory=40 * GIB).ratio
        for v in ("0.5.13", "0.5.14", "0.5.16")
    }
    # Off (1); on, no extra buffer (no_buffer, 3); extra buffer with overlap (5).
    assert ratios == {"0.5.13": 1, "0.5.14": 3, "0.5.16": 5}
    # With the radix cache off by SGLang, --max-running-requests is the slots, as with the flag.
    held = sglang_reservation(kimi, version="0.5.13", available_memory=40 * GIB,
                              max_running_requests=10)  # fmt: skip
    assert (held.slots, held.slots_rule) == (
        10,
        "SGLang 0.5.13 turns the radix cache off: max_running_requests",
    )
    hybrid = bailing(architectures=["BailingMoeV2_5ForCausalLM"])
    before = sglang_reservation(hybrid, version="0.5.12", available_memory=40 * GIB)
    after = sglang_reservation(hybrid, version="0.5.13", available_memory=40 * GIB)
    assert (before.mamba_radix_cache_strategy, before.ratio) == ("none", 1)
    assert (after.mamba_radix_cache_strategy, after.ratio) == ("no_buffer", 3)


def test_before_0_5_14_the_running_flag_is_held_to_the_estimate() -> None:
    # 400 GiB at r = 9: K = int(400 x 0.9 GiB // p) = 15008, 2,621,824 KV tokens. 0.5.13
    # (sglang-0.5.13:.../model_runner_kv_cache_mixin.py:884-887) holds 4500 to the estimate's
    # ceiling, 4096; 0.5.14 (:988-1000) to the tokens // 2 and to 15008 // 5 = 3001.
    options = {"available_memory": 400 * GIB, "mamba_full_memory_ratio": 9.0}
    old, new = (qwen_9b(v, max_running_requests=4500, **options) for v in ("0.5.13", "0.5.14"))
    assert (old.slots, old.kv_tokens, old.max_running_requests) == (15008, 2621824, 4096)
    assert (new.ratio, new.max_running_requests) == (5, 3001)
    # Only the estimate is held to half the tokens there (:884-887): 1,000 tokens at 100 GiB
    # (K 1974) give min(2048, 1000 // 2, 1974 // 3) = 500 without the flag, and
    # min(1000, 2048, 658) = 658 with --max-running-requests 1000.
    capped = {"available_memory": 100 * GIB, "max_total_tokens": 1000}
    estimated = qwen_9b("0.5.13", **capped)
    flagged = qwen_9b("0.5.13", max_running_requests=1000, **capped)
    assert (estimated.slots, estimated.kv_tokens) == (1974, 1000)
    assert (estimated.max_running_requests, flagged.max_running_requests) == (500, 658)


def test_the_multimodal_reserve_comes_in_0_5_18() -> None:
    options: dict[str, Any] = {
        "gpu": "h100-sxm",
        "mem_fraction_static": 0.85,
        "weights_bytes": 28 * GIB,
    }
    path = CONFIGS / "qwen3.5-27b.json"
    early = sglang_reservation(path, version="0.5.17", **options)
    late = sglang_reservation(path, version="0.5.18", quantization="fp8", **options)
    before, after = early.available_memory, late.available_memory
    assert before is not None and after is not None
    assert before - after == 100 << 20
    assert early.available_memory_rule == (
        "85,061,827,297 B free x 0.85 - weights (kv_cache_configurator.py:2990-3060)"
    )
    assert late.available_memory_rule == (
        "85,061,827,297 B free x 0.85 - weights - 100 MiB multimodal cache "
        "(kv_cache_configurator.py:2990-3060)"
    )
    assert (late.weights_rule, late.quantization) == ("--weights-memory", "fp8")


def test_the_default_fraction_and_the_24_gib_tier() -> None:
    gpu = {"gpu": "NVIDIA GeForce RTX 4090", "weights_bytes": 4 * GIB}
    with pytest.raises(ServerArgumentError, match="default --mem-fraction-static"):
        qwen_9b("0.5.18", **gpu)
    chunked = {v: qwen_9b(v, **gpu).chunked_prefill_size for v in ("0.5.19", "0.5.20")}
    assert chunked == {"0.5.19": 2048, "0.5.20": 4096}


# --- 0.5.7 to 0.5.9 ----------------------------------------------------------------------------

QWEN3_NEXT = CONFIGS / "qwen3-next-80b-a3b-instruct.json"
KIMI = CONFIGS / "kimi-linear-48b-a3b-instruct.json"


def test_0_5_7_counts_a_no_buffer_request_as_five_slots() -> None:
    # Qwen3-Next tp 1: 36 GDN layers of conv (8192, 3) bf16 + SSM (32, 128, 128) fp32, p =
    # 36 x 2,146,304 = 77,266,944 B; 12 attention layers of 2 KV heads x (256 + 256) x 2 B =
    # 24,576 B a token. 40 GiB: K = int(40 x 0.9 / 1.9 x 2**30 // p) = 263, tokens
    # int((40 - 263 p / 2**30) x 2**30) // 24,576 = 920,754, estimate clamp(1798) = 2048.
    # sglang-0.5.7:.../model_runner_kv_cache_mixin.py:289-304: ratio 3 + 2, so 263 // 5 = 52;
    # sglang-0.5.8:...:268-281: 3, so 263 // 3 = 87.
    old, new = (
        sglang_reservation(QWEN3_NEXT, version=v, available_memory=40 * GIB)
        for v in ("0.5.7", "0.5.8")
    )
    assert (old.slots, old.kv_tokens) == (new.slots, new.kv_tokens) == (263, 920754)
    assert (old.ratio, old.max_running_requests) == (5, 52)
    assert (new.ratio, new.max_running_requests) == (3, 87)


def test_0_5_8_leaves_qwen3_next_the_overlap_scheduler() -> None:
    # sglang-0.5.7:sglang/srt/server_args.py:1429-1434 and sglang-0.5.9:...:1579-1605 (through
    # _handle_mamba_radix_cache, :1746-1752) turn it off for no_buffer; 0.5.8's Qwen3-Next
    # branch (:1487-1518) does not: the block sits under Glm4MoeForCausalLM (:1541-1566).
    overlap = {
        v: sglang_reservation(QWEN3_NEXT, version=v, available_memory=40 * GIB).overlap_schedule
        for v in ("0.5.7", "0.5.8", "0.5.8.post1", "0.5.9")
    }
    assert overlap == {"0.5.7": False, "0.5.8": True, "0.5.8.post1": True, "0.5.9": False}


def test_before_0_5_9_the_radix_cache_off_means_512_slots() -> None:
    # Kimi-Linear tp 1 (radix cache off, ratio 1): 20 KDA layers of conv 3 x (3, 4096) bf16 +
    # SSM (32, 128, 128) fp32, p = 20 x 2,170,880 = 43,417,600 B; 7 MLA layers of (512 + 64) x
    # 2 B = 8,064 B a token; context model_max_length 1,048,576.
    # sglang-0.5.8:.../model_runner_kv_cache_mixin.py:168-181: K = 512, tokens
    # int((40 - 512 p / 2**30) x 2**30) // 8064 = 2,569,427, cap min(2048, 512 // 1) = 512.
    # sglang-0.5.9:...:173-210: K = int(40 x 0.9 / 1.9 x 2**30 // p) = 468, 2,806,328 tokens.
    old, new = (
        sglang_reservation(KIMI, version=v, available_memory=40 * GIB) for v in ("0.5.8", "0.5.9")
    )
    assert (old.ratio, old.slots, old.kv_tokens, old.max_running_requests) == (1, 512, 2569427, 512)
    assert (new.ratio, new.slots, new.kv_tokens, new.max_running_requests) == (1, 468, 2806328, 468)
    # --max-running-requests sizes the pool with the radix cache off in both (:174-175, :178-185).
    asked = {
        v: sglang_reservation(
            KIMI, version=v, available_memory=40 * GIB, max_running_requests=100
        ).slots
        for v in ("0.5.8", "0.5.9")
    }
    assert asked == {"0.5.8": 100, "0.5.9": 100}
    # --disable-radix-cache alone: 512 for Qwen3-Next in 0.5.8 too (ratio 1).
    off = sglang_reservation(QWEN3_NEXT, version="0.5.8", available_memory=40 * GIB,
                             disable_radix_cache=True)  # fmt: skip
    assert (off.slots, off.ratio) == (512, 1)


def test_before_0_5_9_the_ssm_dtype_is_the_flag_s() -> None:
    # sglang-0.5.8:sglang/srt/configs/mamba_utils.py:47-53 reads only SGLANG_MAMBA_SSM_DTYPE,
    # which --mamba-ssm-dtype (default float32) always sets; sglang-0.5.9:...:73-92 reads a
    # NemotronH config's mamba_ssm_dtype. SSM (128 heads, 64, 128) per layer at tp 1.
    nemotron = config("nemotron-nano-9b-v2.json") | {"mamba_ssm_dtype": "bfloat16"}
    dtypes = {
        v: sglang_reservation(nemotron, version=v, available_memory=40 * GIB).ssm_dtype
        for v in ("0.5.8.post1", "0.5.9")
    }
    assert dtypes == {"0.5.8.post1": "float32", "0.5.9": "bfloat16"}
    # float16 is a choice from 0.5.9 (sglang-0.5.8:sglang/srt/server_args.py:202, 0.5.9: :214).
    half = sglang_reservation(nemotron, version="0.5.9", available_memory=40 * GIB,
                              mamba_ssm_dtype="float16")  # fmt: skip
    assert half.ssm_dtype == "float16"
    with pytest.raises(ServerArgumentError) as e:
        sglang_reservation(nemotron, version="0.5.8", mamba_ssm_dtype="float16")
    assert e.value.field == "mamba_ssm_dtype"
    assert str(e.value) == (
        "argument mamba_ssm_dtype: float16 is not a choice of SGLang 0.5.8's --mamba-ssm-dtype "
        "(float32, bfloat16; float16 from 0.5.9, sglang-0.5.9:sglang/srt/server_args.py:214)"
    )


def test_before_0_5_10_a_nemotron_layer_list_is_not_modelled() -> None:
    # sglang-0.5.9:sglang/srt/configs/nemotron_h.py:154-229 reads hybrid_override_pattern only
    # (default a 52-layer pattern); sglang-0.5.10:...:189-203, :297-332 reads layers_block_type.
    nemotron = config("nemotron-nano-9b-v2.json")
    kinds = {"M": "mamba", "*": "attention", "-": "mlp", "E": "moe"}
    nemotron["layers_block_type"] = [kinds[c] for c in nemotron.pop("hybrid_override_pattern")]
    # 56 layers: 27 Mamba-2, 4 attention.
    assert (
        sglang_reservation(nemotron, version="0.5.10", available_memory=40 * GIB).state_layers == 27
    )
    with pytest.raises(ModelConfigError) as error:
        sglang_reservation(nemotron, version="0.5.9", available_memory=40 * GIB)
    assert str(error.value) == (
        "field 'layers_block_type': SGLang 0.5.9's NemotronHConfig reads only "
        "hybrid_override_pattern (its 52-layer default where the config has none; "
        "layers_block_type from 0.5.10): not modelled"
    )
    assert error.value.field == "layers_block_type"
    # Beside a hybrid_override_pattern, the list is not what 0.5.9 reads, and not refused.
    both = config("nemotron-nano-9b-v2.json") | {"layers_block_type": nemotron["layers_block_type"]}
    assert sglang_reservation(both, version="0.5.9", available_memory=40 * GIB).state_layers == 27


def test_before_0_5_13_an_empty_pool_is_not_modelled() -> None:
    # sglang-0.5.13:.../model_runner_kv_cache_mixin.py:165-178 and :893-905 refuse a pool of no
    # slot and a cap of no request at startup; 0.5.12 checks neither, and what it does then is
    # not modelled. Qwen3.5-9B at tp 2 holds 25,755,648 B a request: 20 MiB hold no slot, and
    # 100 MiB hold one, which at 3 a request serves none.
    unchecked = (
        "argument available_memory: the state pool serves no request; SGLang 0.5.12 does not "
        "check this at startup (SGLang refuses it from 0.5.13) and what it does then is not "
        "modelled"
    )
    for budget in (20 << 20, 100 << 20):
        with pytest.raises(ServerArgumentError) as old:
            qwen_9b("0.5.12", available_memory=budget)
        assert (old.value.field, str(old.value)) == ("available_memory", unchecked)
        with pytest.raises(ServerArgumentError, match="SGLang refuses to start"):
            qwen_9b("0.5.13", available_memory=budget)


def test_before_0_5_13_no_slot_given_by_the_flag_is_refused_under_the_flag() -> None:
    # --max-mamba-cache-size 0 is given (SGLang tests `max_mamba_cache_size is not None`,
    # sglang-0.5.12:.../model_runner_kv_cache_mixin.py handle_max_mamba_cache): the refusal
    # names the flag under 0.5.12 as under 0.5.13, not the memory.
    with pytest.raises(ServerArgumentError) as old:
        qwen_9b("0.5.12", max_mamba_cache_size=0)
    assert old.value.field == "max_mamba_cache_size"
    assert "SGLang 0.5.12 does not check this at startup" in str(old.value)
    with pytest.raises(ServerArgumentError) as new:
        qwen_9b("0.5.13", max_mamba_cache_size=0)
    assert (new.value.field, str(new.value)) == (
        "max_mamba_cache_size",
        "argument max_mamba_cache_size: 0 state slots: SGLang refuses to start",
    )


def test_before_0_5_10_the_running_flag_is_held_to_the_slots_alone() -> None:
    # 400 GiB at r = 9 (K 15008, 2,621,824 KV tokens, as below): sglang-0.5.9:.../
    # model_runner_kv_cache_mixin.py:365-367 min(4500, 15008 // 3) and sglang-0.5.9:.../
    # model_runner.py:593-600 min(4500, req_to_token_pool.size) = 4500 -- neither the estimate's
    # 4096 (0.5.10) nor half the tokens.
    options = {"available_memory": 400 * GIB, "mamba_full_memory_ratio": 9.0}
    old = qwen_9b("0.5.9", max_running_requests=4500, **options)
    assert (old.slots, old.kv_tokens, old.max_running_requests) == (15008, 2621824, 4500)
    assert qwen_9b("0.5.10", max_running_requests=4500, **options).max_running_requests == 4096


def test_before_0_5_10_the_estimate_reads_the_profiled_tokens() -> None:
    # --max-total-tokens 1,048,576 at context 262,144: sglang-0.5.9:.../
    # model_runner_kv_cache_mixin.py:342-353 estimates from the profiled 2,621,824 tokens,
    # clamp(int(2621824 / 262144 x 512) = 5120) = 4096, before the cap (:377-390);
    # sglang-0.5.10:...:840-845 from the capped 1,048,576: int(2048) = 2048.
    options = {"available_memory": 400 * GIB, "mamba_full_memory_ratio": 9.0,
               "max_total_tokens": 1048576}  # fmt: skip
    old, new = (qwen_9b(v, **options) for v in ("0.5.9", "0.5.10"))
    assert old.kv_tokens == new.kv_tokens == 1048576
    assert (old.max_running_requests, new.max_running_requests) == (4096, 2048)
    assert old.max_running_requests_rule == (
        "min(SGLang's estimate clamp(2621824 profiled KV tokens / context 262144 x 512, 2048, "
        "4096), slots 15008 // ratio 3, 1048576 KV tokens // 2)"
    )


def test_the_tokens_are_capped_before_they_are_aligned_to_pages() -> None:
    # sglang-0.5.9:.../model_runner_kv_cache_mixin.py:377-390: min(profiled, 1000) // 16 * 16;
    # the same order in sglang-0.5.10:...:808-828 and sglang-0.5.23 (kv_cache_configurator.py:
    # 3212-3230 re-aligns a capped count, pool_configurator.py:652).
    for version in ("0.5.9", "0.5.23"):
        answer = qwen_9b(version, page_size=16, max_total_tokens=1000)
        assert answer.kv_tokens == 992


def test_the_weights_line_names_the_dtype_before_0_5_10() -> None:
    # sglang-0.5.8:.../model_runner.py:950-955, sglang-0.5.9:...:1041-1047,
    # sglang-0.5.10:...:1247-1253; the config's torch_dtype bfloat16 (_get_and_verify_dtype).
    options: dict[str, Any] = {"gpu": "h100-sxm", "mem_fraction_static": 0.85,
                               "weights_bytes": 20 * GIB}  # fmt: skip
    heads = {
        v: sglang_reservation(QWEN3_NEXT, version=v, **options).log_lines[0].split(" avail")[0]
        for v in ("0.5.8", "0.5.9", "0.5.10")
    }
    assert heads == {
        "0.5.8": "Load weight end. type=Qwen3NextForCausalLM, dtype=torch.bfloat16,",
        "0.5.9": "Load weight end. elapsed=? s, type=Qwen3NextForCausalLM, dtype=torch.bfloat16,",
        "0.5.10": "Load weight end. elapsed=? s, type=Qwen3NextForCausalLM,",
    }


def test_the_weights_line_names_the_dtype_sglang_verifies() -> None:
    # sglang-0.5.9:sglang/srt/configs/model_config.py:1109-1115 (_STR_DTYPE_TO_TORCH_DTYPE:
    # half is float16), :1126 (the config's dtype before its torch_dtype), :1149-1156 (--dtype
    # auto casts a float32 config to float16), :1157-1160 (--dtype given wins).
    options: dict[str, Any] = {"gpu": "h100-sxm", "mem_fraction_static": 0.85,
                               "weights_bytes": 20 * GIB}  # fmt: skip
    qwen = json.loads(QWEN3_NEXT.read_text(encoding="utf-8"))  # torch_dtype bfloat16
    half = qwen | {"torch_dtype": "float16"}
    launches: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
        "--dtype half": (qwen, {"dtype": "half"}),
        "--dtype float16": (qwen, {"dtype": "float16"}),
        "--dtype bfloat16 over float16": (half, {"dtype": "bfloat16"}),
        "dtype before torch_dtype": (qwen | {"dtype": "float16"}, {}),
        "torch_dtype float16": (half, {}),
        "torch_dtype float32": (qwen | {"torch_dtype": "float32"}, {}),
    }
    named = {
        launch: sglang_reservation(model, version="0.5.9", **(options | flags))
        .log_lines[0]
        .split("type=Qwen3NextForCausalLM, ")[1]
        .split(", avail")[0]
        for launch, (model, flags) in launches.items()
    }
    assert named == {
        "--dtype half": "dtype=torch.float16",
        "--dtype float16": "dtype=torch.float16",
        "--dtype bfloat16 over float16": "dtype=torch.bfloat16",
        "dtype before torch_dtype": "dtype=torch.float16",
        "torch_dtype float16": "dtype=torch.float16",
        "torch_dtype float32": "dtype=torch.float16",
    }


def granite_micro() -> dict[str, Any]:
    """granite-4.0-h-micro as LOGS.md section 2 reads it: the tiny fixture's 40 layers (36
    Mamba-2, 4 attention) with hidden 2048, 64 SSM heads of 64 (d_inner 4096), 32 attention
    heads of 64 and 8 KV heads."""
    return config("granite-4.0-h-tiny.json") | {
        "hidden_size": 2048,
        "mamba_n_heads": 64,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
    }


def test_granite_micro_log_of_0_5_9() -> None:
    # LOGS.md section 2 (a 0.5.9 build: "Load weight end. elapsed=..., dtype=..."): p = 36 x
    # ((4096 + 2 x 128) x 3 x 2 + 64 x 64 x 128 x 4) = 76,437,504 B, 8 x (64 + 64) x 4 x 2 =
    # 8,192 B a token; K = 38 and 399,740 tokens hold for rest in [38 p + 399,740 x 8,192,
    # + 8,192) B; the running cap min(2048, 38 // 3, 399740 // 2) = 12 (the log is cut there).
    answer = sglang_reservation(granite_micro(), version="0.5.9", available_memory=6_179_295_232)
    assert answer.per_request_bytes == 76_437_504 and answer.kv_bytes_per_token == 8192
    assert answer.log_lines[:2] == (
        "Mamba Cache is allocated. max_mamba_cache_size: 38, conv_state size: 0.03GB, "
        "ssm_state size: 2.74GB ",
        "KV Cache is allocated. #tokens: 399740, K size: 1.52 GB, V size: 1.52 GB",
    )
    assert (answer.mamba_radix_cache_strategy, answer.max_running_requests) == ("no_buffer", 12)


# --- 0.5.6 to 0.5.6.post2 ----------------------------------------------------------------------

NEMOTRON = CONFIGS / "nemotron-nano-9b-v2.json"
FALCON_H1 = CONFIGS / "falcon-h1-7b-instruct.json"


@pytest.mark.parametrize(
    ("path", "old", "new"),
    [
        # NemotronH tp 1: 27 Mamba-2 layers of conv (10240 + 2 x 8 x 128, 3) bf16 + SSM (128, 80,
        # 128) fp32, p = 143,548,416 B; 4 attention layers of 8 KV heads x 256 x 2 B = 16,384 B
        # a token, context 131,072. 100 GiB, 0.5.6: K = 512 (radix cache off), 2,067,712
        # tokens, cap min(4096, 512 // 1) = 512; 0.5.6.post1: K = int(100 x 0.9 / 1.9 x 2**30
        # // p) = 354, 3,452,029 tokens, cap 354 // 3 = 118.
        (NEMOTRON, (512, 2067712, 512, 1), (354, 3452029, 118, 3)),
        # FalconH1-7B tp 1: 44 layers of conv (3072 + 2 x 256, 3) bf16 + SSM (24, 128, 256) fp32,
        # p = 139,358,208 B; every layer attention, 2 KV heads x 256 x 44 x 2 B = 45,056 B a
        # token, context 262,144: 0.5.6 K = 512, 799,511 tokens; 0.5.6.post1 K = 364, 1,257,275
        # tokens, cap 364 // 3 = 121.
        (FALCON_H1, (512, 799511, 512, 1), (364, 1257275, 121, 3)),
    ],
)
def test_0_5_6_turns_the_radix_cache_off_for_the_mamba2_configs(
    path: Any, old: tuple[int, ...], new: tuple[int, ...]
) -> None:
    # sglang-0.5.6:sglang/srt/model_executor/model_runner.py:448-451 (mamba2_config, :1507-1513)
    # and :1460-1469 (K = max_running_requests or 512 with the radix cache off); 0.5.6.post1
    # keeps the radix cache (model_runner.py:1443-1490, the ratio split; :1681-1684, ratio 3).
    answers = [sglang_reservation(path, version=v, available_memory=100 * GIB)
               for v in ("0.5.6", "0.5.6.post1")]  # fmt: skip
    fields_ = [(a.slots, a.kv_tokens, a.max_running_requests, a.ratio) for a in answers]
    assert fields_ == [old, new]
    assert answers[0].mamba_radix_cache_strategy == "none"


def test_0_5_6_post1_leaves_nemotron_the_overlap_scheduler() -> None:
    # sglang-0.5.6.post1:sglang/srt/server_args.py:1301-1313 turns the overlap scheduler off for
    # FalconH1 and the Jet models; NemotronH takes the branch before it (:1221-1237, the
    # quantization only) until 0.5.7 (sglang-0.5.7:sglang/srt/server_args.py:1309-1375).
    overlap = {
        (path.name, v): sglang_reservation(
            path, version=v, available_memory=100 * GIB
        ).overlap_schedule
        for path in (NEMOTRON, FALCON_H1)
        for v in ("0.5.6.post2", "0.5.7")
    }
    assert overlap == {
        ("nemotron-nano-9b-v2.json", "0.5.6.post2"): True,
        ("nemotron-nano-9b-v2.json", "0.5.7"): False,
        ("falcon-h1-7b-instruct.json", "0.5.6.post2"): False,
        ("falcon-h1-7b-instruct.json", "0.5.7"): False,
    }


def test_before_0_5_7_the_slots_flag_is_overwritten_with_the_radix_cache_on() -> None:
    # sglang-0.5.6.post2:sglang/srt/model_executor/model_runner.py:1456-1481: with the radix
    # cache on, K = int(40 x 0.9 / 1.9 x 2**30 // p) = 263 whatever --max-mamba-cache-size says
    # (Qwen3-Next tp 1 as above, cap 263 // 3 = 87); off, the flag's 100.
    # sglang-0.5.7:.../model_runner_kv_cache_mixin.py:150-162: the flag's 100 (100 // 5 = 20).
    def qwen(version: str, off: bool) -> tuple[int, int]:
        answer = sglang_reservation(QWEN3_NEXT, version=version, available_memory=40 * GIB,
                                    max_mamba_cache_size=100, disable_radix_cache=off)  # fmt: skip
        return answer.slots, answer.max_running_requests

    assert (qwen("0.5.6.post2", False), qwen("0.5.6.post2", True)) == ((263, 87), (100, 100))
    assert qwen("0.5.7", False) == (100, 20)


def test_before_0_5_7_there_is_no_strategy_flag() -> None:
    with pytest.raises(ServerArgumentError) as error:
        sglang_reservation(
            QWEN3_NEXT, version="0.5.6.post2", mamba_radix_cache_strategy="no_buffer"
        )
    assert error.value.field == "mamba_radix_cache_strategy"
    assert str(error.value) == (
        "argument mamba_radix_cache_strategy: SGLang 0.5.6.post2 has no "
        "--mamba-scheduler-strategy (from 0.5.7, sglang-0.5.7:sglang/srt/server_args.py:193); "
        "its radix cache is no_buffer's"
    )


# --- 0.5.2 to 0.5.5.post3 ----------------------------------------------------------------------


def test_before_0_5_3_post2_the_radix_cache_is_off_and_the_pool_holds_512() -> None:
    # Qwen3-Next tp 1 (p = 77,266,944 B, 24,576 B a token) at 100 GiB. sglang-0.5.2:sglang/srt/
    # model_executor/model_runner.py:308-325: the radix cache off, K = 512 (no running
    # requests asked for); :1125-1132: (100 x 2**30 - 512 p) // 24,576 = 2,759,338 tokens;
    # :1251-1263: min(clamp(2,759,338 / 262,144 x 512, 2048, 4096), 512) = 512; the pool is
    # HybridReqToTokenPool(size=512)'s MambaPool, 513 slots (:1351-1352, memory_pool.py:207-235),
    # logged without max_mamba_cache_size (memory_pool.py:166-170): conv 513 x 36 layers x
    # 3 x 8,192 x 2 B = 0.85 GB, ssm 513 x 36 x 32 x 128 x 128 x 4 B = 36.07 GB.
    for version in ("0.5.2", "0.5.3", "0.5.3.post1"):
        answer = sglang_reservation(QWEN3_NEXT, version=version, available_memory=100 * GIB)
        assert (answer.mamba_radix_cache_strategy, answer.ratio) == ("none", 1)
        assert (answer.slots, answer.kv_tokens, answer.max_running_requests) == (
            512,
            2759338,
            512,
        )
        assert answer.pool_bytes == 513 * 77266944
        assert answer.mamba_full_memory_ratio is None
        assert (
            "Mamba Cache is allocated. conv_state size: 0.85GB, ssm_state size: 36.07GB "
            in answer.log_lines
        )


def test_before_0_5_3_post2_the_mamba_pool_holds_the_request_pool() -> None:
    # --max-mamba-cache-size 600 --max-running-requests 100 at 100 GiB, sglang-0.5.3.post1:
    # the KV budget takes K = 600 slots ((100 x 2**30 - 600 p) // 24,576 = 2,482,666 tokens,
    # model_runner.py profile_max_num_token), the request pool is min(100, 600) = 100
    # (init_memory_pool), and its MambaPool 101 slots; from 0.5.3.post2 the pool is K + 1.
    flags: dict[str, Any] = {"available_memory": 100 * GIB, "max_mamba_cache_size": 600}
    flags["max_running_requests"] = 100
    early = sglang_reservation(QWEN3_NEXT, version="0.5.3.post1", **flags)
    assert (early.slots, early.kv_tokens, early.max_running_requests) == (600, 2482666, 100)
    assert early.pool_bytes == 101 * 77266944
    assert early.pool_bytes_rule.startswith("(request pool 100 + 1) x per request")
    # Its log line sizes those 101 slots (sglang-0.5.3.post1:sglang/srt/mem_cache/
    # memory_pool.py:200-204): 36 layers of conv (8192, 3) bf16 = 1,769,472 B and of ssm 32 x
    # 128 x 128 float32 = 75,497,472 B a slot, x 101 = 0.17 and 7.10 GB.
    assert early.log_lines[0] == (
        "Mamba Cache is allocated. conv_state size: 0.17GB, ssm_state size: 7.10GB "
    )
    later = sglang_reservation(QWEN3_NEXT, version="0.5.3.post2", disable_radix_cache=True, **flags)
    assert (later.slots, later.pool_bytes) == (600, 601 * 77266944)


def test_before_0_5_3_post2_there_is_no_ratio_flag() -> None:
    with pytest.raises(ServerArgumentError, match="has no --mamba-full-memory-ratio") as error:
        sglang_reservation(QWEN3_NEXT, version="0.5.3.post1", mamba_full_memory_ratio=0.5)
    assert error.value.field == "mamba_full_memory_ratio"


def test_the_first_releases_serve_qwen3_next_then_falcon_h1_then_nemotron_h() -> None:
    # sglang-0.5.2: Qwen3-Next only; 0.5.3 registers FalconH1ForCausalLM, 0.5.3.post1
    # NemotronHForCausalLM (their model modules' EntryClass); each with the radix cache off.
    for path, first, before in (
        (FALCON_H1, "0.5.3", "0.5.2"),
        (NEMOTRON, "0.5.3.post1", "0.5.3"),
    ):
        answer = sglang_reservation(path, version=first, available_memory=100 * GIB)
        assert (answer.slots, answer.ratio, answer.mamba_radix_cache_strategy) == (512, 1, "none")
        with pytest.raises(ModelConfigError, match=f"SGLang {before} does not serve"):
            sglang_reservation(path, version=before, available_memory=100 * GIB)


def test_0_5_2_takes_8192_chunked_prefill_tokens_on_a_48_gb_gpu() -> None:
    # An L40S (< 60 GiB): sglang-0.5.2:sglang/srt/server_args.py:509-517 8192 below 160 GiB;
    # sglang-0.5.3:sglang/srt/server_args.py:542-620 4096 from 35 to 60 GiB.
    flags: dict[str, Any] = {"gpu": "l40s", "mem_fraction_static": 0.8, "weights_bytes": 0}
    flags["max_running_requests"] = 64
    chunked = {
        version: next(
            line
            for line in sglang_reservation(QWEN3_NEXT, version=version, **flags).log_lines
            if "chunked_prefill_size=" in line
        )
        .split("chunked_prefill_size=")[1]
        .split(",")[0]
        for version in ("0.5.2", "0.5.3")
    }
    assert chunked == {"0.5.2": "8192", "0.5.3": "4096"}


def test_0_5_3_post2_splits_a_fifth_of_the_rest_by_default() -> None:
    # Qwen3-Next tp 1 (p = 77,266,944 B, 24,576 B a token) at 100 GiB, radix cache on:
    # sglang-0.5.3.post2:sglang/srt/server_args.py:374 defaults the ratio to 0.2, so
    # model_runner.py:1375-1422 gives K = int(100 x 0.2 / 1.2 x 2**30 // p) = 231 and
    # (100 x 2**30 - 231 p) // 24,576 = 3,642,802 tokens; ratio 3, cap 231 // 3 = 77. The same
    # launch with the ratio given as 0.9 is 0.5.3.post3's default answer (658 slots).
    default = sglang_reservation(QWEN3_NEXT, version="0.5.3.post2", available_memory=100 * GIB)
    assert (default.slots, default.kv_tokens, default.ratio) == (231, 3642802, 3)
    assert (default.max_running_requests, default.mamba_full_memory_ratio) == (77, 0.2)
    given = sglang_reservation(
        QWEN3_NEXT, version="0.5.3.post2", available_memory=100 * GIB, mamba_full_memory_ratio=0.9
    )
    later = sglang_reservation(QWEN3_NEXT, version="0.5.3.post3", available_memory=100 * GIB)
    assert (given.slots, given.kv_tokens) == (later.slots, later.kv_tokens) == (658, 2300314)


def test_qwen3_next_keeps_the_overlap_scheduler_until_0_5_5_post2() -> None:
    # Qwen3-Next tp 1 (p = 77,266,944 B, 24,576 B a token) at 100 GiB:
    # sglang-0.5.3.post3:sglang/srt/model_executor/model_runner.py:1375-1422 K = int(100 x 0.9 /
    # 1.9 x 2**30 // p) = 658, 2,300,314 tokens; :1597-1605 ratio 3 (radix cache on), cap
    # min(4096, 658 // 3) = 219. No server_args branch turns the overlap scheduler off for it
    # until sglang-0.5.5.post2:sglang/srt/server_args.py:1073-1079.
    answers = {
        v: sglang_reservation(QWEN3_NEXT, version=v, available_memory=100 * GIB)
        for v in ("0.5.3.post3", "0.5.5.post1", "0.5.5.post2")
    }
    for answer in answers.values():
        assert (answer.slots, answer.kv_tokens, answer.ratio) == (658, 2300314, 3)
        assert answer.max_running_requests == 219
    assert [a.overlap_schedule for a in answers.values()] == [True, True, False]
    # No --mamba-scheduler-strategy before 0.5.7 (sglang-0.5.7:sglang/srt/server_args.py:193):
    # the radix cache, on or off, is no_buffer's.
    assert [a.mamba_radix_cache_strategy for a in answers.values()] == ["no_buffer"] * 3


def test_before_0_5_4_the_kv_cache_is_not_bf16_by_name() -> None:
    # sglang-0.5.3.post3:sglang/srt/server_args.py:1628; sglang-0.5.4:...:1789 adds bf16,
    # bfloat16 (the auto dtype's 2 B: 24,576 B a token for Qwen3-Next at tp 1).
    answer = sglang_reservation(
        QWEN3_NEXT, version="0.5.4", available_memory=100 * GIB, kv_cache_dtype="bf16"
    )
    assert answer.kv_bytes_per_token == 24576
    with pytest.raises(ServerArgumentError) as error:
        sglang_reservation(QWEN3_NEXT, version="0.5.3.post3", kv_cache_dtype="bf16")
    assert error.value.field == "kv_cache_dtype"
    # sglang-0.5.3.post3:sglang/srt/server_args.py:1625-1628, its choices in its order.
    assert str(error.value) == (
        "argument kv_cache_dtype: bf16 is not a choice of SGLang 0.5.3.post3's --kv-cache-dtype "
        "(auto, fp8_e5m2, fp8_e4m3; bf16 / bfloat16 from 0.5.4, "
        "sglang-0.5.4:sglang/srt/server_args.py:1789)"
    )


def test_before_0_5_6_nemotron_has_no_moe_layer() -> None:
    # sglang-0.5.5.post3:sglang/srt/models/nemotron_h.py:304-308, :338: an "E" layer is a
    # KeyError building the model; sglang-0.5.6:...:502-507 builds it. At 0.5.6 the radix cache
    # is still off (512 slots); the 27 Mamba-2 layers are unchanged.
    nemotron = config("nemotron-nano-9b-v2.json")
    pattern = nemotron["hybrid_override_pattern"]
    nemotron["hybrid_override_pattern"] = pattern.replace("-", "E", 1)
    answer = sglang_reservation(nemotron, version="0.5.6", available_memory=100 * GIB)
    assert (answer.slots, answer.state_layers) == (512, 27)
    with pytest.raises(ModelConfigError) as error:
        sglang_reservation(nemotron, version="0.5.5.post3", available_memory=100 * GIB)
    assert str(error.value) == (
        "field 'hybrid_override_pattern': SGLang 0.5.5.post3's NemotronH has no MoE ('E') layer "
        "(ALL_DECODER_LAYER_TYPES, sglang/srt/models/nemotron_h.py; from 0.5.6): SGLang fails "
        "to build the model"
    )
    assert error.value.field == "hybrid_override_pattern"


# --- refusals -----------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["0.5.1.post3", "0.5.1", "0.4.10"])
def test_releases_before_0_5_2_are_refused_naming_the_modelled_ones(version: str) -> None:
    with pytest.raises(UnmodelledReleaseError) as error:
        qwen_9b(version)
    assert error.value.modelled == SGLANG_RELEASES
    assert f"SGLang {version} predates the releases modelled: 0.5.2 to 0.5.23" in str(error.value)


def test_a_build_before_a_release_takes_its_rules() -> None:
    answer = sglang_reservation(QWEN3_NEXT, version="0.5.7rc1", available_memory=40 * GIB)
    assert (answer.server_version, answer.ratio) == ("0.5.7", 5)
    assert answer.server_version_note == "0.5.7rc1 is a build before 0.5.7: the rules of 0.5.7"


@pytest.mark.parametrize(
    ("version", "options", "argument"),
    [
        ("0.5.13", {"speculative_num_draft_tokens": 4}, "speculative_num_draft_tokens"),
        ("0.5.13", {"speculative_num_draft_tokens": 1}, "speculative_num_draft_tokens"),
        ("0.5.13", {"mamba_radix_cache_strategy": "extra_buffer"}, "mamba_radix_cache_strategy"),
        ("0.5.22", {"gpu_arch": "sm100"}, "gpu_arch"),
    ],
)
def test_what_is_modelled_only_from_a_later_release_is_refused(
    version: str, options: dict[str, Any], argument: str
) -> None:
    with pytest.raises(ServerArgumentError, match="is modelled from SGLang") as error:
        qwen_9b(version, **options)
    assert error.value.field == argument


# --- the command line and the comparison --------------------------------------------------------


def test_the_command_line_names_the_release(capsys: pytest.CaptureFixture[str]) -> None:
    line = ("sglang", "--sglang-version", "0.5.10.post1", "--tp", "2", "--available-memory",
            str(QWEN_9B_AVAILABLE), "--config", str(CONFIGS / "qwen3.5-27b.json"))  # fmt: skip
    status, out, _ = run(capsys, *line)
    assert status == 0 and out.startswith("SGLang 0.5.10.post1 reserves for qwen3_5 ")
    status, answer = run_json(capsys, *line)
    assert status == 0 and answer["server_version"] == "0.5.10.post1"
    status, out, _ = run(capsys, *line[:2], "0.5.9", *line[3:])
    assert status == 0 and out.startswith("SGLang 0.5.9 reserves for qwen3_5 ")
    status, out, err = run(capsys, *line[:2], "0.5.1.post3", *line[3:])
    assert status == 2 and "0.5.1.post3 predates the releases modelled: 0.5.2 to 0.5.23" in err


def test_compare_walks_the_sglang_rules(capsys: pytest.CaptureFixture[str]) -> None:
    comparison = compare_releases(
        sglang_reservation,
        qwen3_5_9b(),
        version="0.5.13",
        other="0.5.17",
        options={"tp_size": 2, "available_memory": QWEN_9B_AVAILABLE},
        server="sglang",
    )
    assert comparison.server == "SGLang"
    assert [step.release for step in comparison.steps] == ["0.5.14", "0.5.16", "0.5.17"]
    assert comparison.differences["ratio"] == (3, 5)
    assert comparison.differences["slots"] == (186, 185)
    with pytest.raises(UnmodelledReleaseError) as error:
        compare_releases(sglang_reservation, qwen3_5_9b(), version="0.5.13", other="0.5.1.post3",
                         options={"tp_size": 2}, server="sglang")  # fmt: skip
    assert error.value.argument == "compare"
    status, answer = run_json(
        capsys, "sglang", "--sglang-version", "0.5.13", "--compare", "0.5.17",
        "--available-memory", str(QWEN_9B_AVAILABLE), "--config", str(CONFIGS / "qwen3.5-27b.json"),
    )  # fmt: skip
    assert status == 0 and json.dumps(answer).count("charges_padding_slot") >= 1
