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
    assert MODELLED == "0.5.10" and rules("0.5.10") == rules("0.5.10.post1")
    assert rules("0.5.10") == BASELINE.__class__(
        **{f.name: getattr(BASELINE, f.name) for f in fields(BASELINE)} | {"covered": frozenset()}
    )
    since = [parse_version(change.since).release for change in CHANGES]
    assert since == sorted(since)
    # A postN release changes nothing modelled here: each one's rules are its release's.
    for post in ("0.5.12.post1", "0.5.13.post1", "0.5.15.post1"):
        assert rules(post) == rules(post.rsplit(".post", 1)[0])


@pytest.mark.parametrize(
    ("release", "rule", "before", "after"),
    [
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
        ("0.5.14", "running_flag_capped_by_estimate", True, False),
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


def test_the_multimodal_reserve_comes_in_0_5_18() -> None:
    options: dict[str, Any] = {
        "gpu": "h100-sxm",
        "mem_fraction_static": 0.85,
        "weights_bytes": 28 * GIB,
    }
    path = CONFIGS / "qwen3.5-27b.json"
    before = sglang_reservation(path, version="0.5.17", **options).available_memory
    after = sglang_reservation(path, version="0.5.18", **options).available_memory
    assert before is not None and after is not None
    assert before - after == 100 << 20


def test_the_default_fraction_and_the_24_gib_tier() -> None:
    gpu = {"gpu": "NVIDIA GeForce RTX 4090", "weights_bytes": 4 * GIB}
    with pytest.raises(ServerArgumentError, match="default --mem-fraction-static"):
        qwen_9b("0.5.18", **gpu)
    chunked = {v: qwen_9b(v, **gpu).chunked_prefill_size for v in ("0.5.19", "0.5.20")}
    assert chunked == {"0.5.19": 2048, "0.5.20": 4096}


# --- refusals -----------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["0.5.9", "0.5.2", "0.5.3.post1", "0.5.8rc1"])
def test_releases_before_0_5_10_are_refused_naming_the_modelled_ones(version: str) -> None:
    with pytest.raises(UnmodelledReleaseError) as error:
        qwen_9b(version)
    assert error.value.modelled == SGLANG_RELEASES[SGLANG_RELEASES.index("0.5.10") :]
    assert "models SGLang's rules from 0.5.10 to 0.5.23" in str(error.value)


@pytest.mark.parametrize(
    ("version", "options", "argument"),
    [
        ("0.5.13", {"speculative_num_draft_tokens": 4}, "speculative_num_draft_tokens"),
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
    status, out, err = run(capsys, *line[:2], "0.5.9", *line[3:])
    assert status == 2 and "0.5.9" in err and "from 0.5.10 to 0.5.23" in err


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
        compare_releases(sglang_reservation, qwen3_5_9b(), version="0.5.13", other="0.5.9",
                         options={"tp_size": 2}, server="sglang")  # fmt: skip
    assert error.value.argument == "compare"
    status, answer = run_json(
        capsys, "sglang", "--sglang-version", "0.5.13", "--compare", "0.5.17",
        "--available-memory", str(QWEN_9B_AVAILABLE), "--config", str(CONFIGS / "qwen3.5-27b.json"),
    )  # fmt: skip
    assert status == 0 and json.dumps(answer).count("charges_padding_slot") >= 1
