"""Issue 26: every vLLM release from 0.10.2, chosen by version, each under its own rules.

Expected values are written out from each release's own code (``vllm-X.Y.Z:path:line``, read
from its wheel; the worked arithmetic is in the notes the rules cite) or from the published
startup logs the issue quotes; none is computed by the code under test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from decode_ring.models import ModelConfigError, ssm_state
from decode_ring.releases import (
    VLLM_RELEASES,
    UnmodelledReleaseError,
    resolve_release,
)
from decode_ring.releases.versions import parse_version
from decode_ring.releases.vllm import BASELINE, CHANGES, VllmRules, rule_changes, vllm_rules
from decode_ring.servers import (
    ServerArgumentError,
    compare_releases,
    sglang_reservation,
    vllm_reservation,
)

from .support import DFLASH, VLLM_LIGHTNING
from .support import run as run_cli

CONFIGS = Path(__file__).parent / "configs"
QWEN3_NEXT = CONFIGS / "qwen3-next-80b-a3b-instruct.json"
NEMOTRON = CONFIGS / "nemotron-nano-9b-v2.json"
GRANITE_TINY = CONFIGS / "granite-4.0-h-tiny.json"
QWEN3_5 = CONFIGS / "qwen3.5-27b.json"
KIMI = CONFIGS / "kimi-linear-48b-a3b-instruct.json"
# The issue's granite-4.0-h-1b, trimmed to the fields a reader needs (tests/logs/README.md).
GRANITE_1B = Path(__file__).parent / "logs" / "granite-4.0-h-1b.json"
GIB = 1 << 30


# --- a version names a release -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("server", "given_version", "release", "noted"),
    [
        ("vllm", "0.19.1", "0.19.1", False),
        ("vllm", "0.10.2", "0.10.2", False),
        # A patch of a modelled minor the package has not read takes the minor's newest.
        ("vllm", "0.33.1", "0.33.0", True),
        ("vllm", "0.19.2", "0.19.1", True),
        # An rc or dev build maps to the release it precedes.
        ("vllm", "0.20.1rc1.dev91+g1a2b3c", "0.20.1", True),
        ("vllm", "0.11.1rc0", "0.11.1", True),
        ("vllm", "0.28.0.dev3", "0.28.0", True),
        # 0.11.0 and 0.11.1 are releases of their own: the patch changed the rules.
        ("vllm", "0.11.0", "0.11.0", False),
        ("vllm", "v0.11.0+cu128", "0.11.0", True),
        ("vllm", "0.19", "0.19.0", True),
        (" vllm", "0.19.1", "0.19.1", False),
        ("sglang", "0.5.3.post1", "0.5.3.post1", False),
        ("sglang", "0.5.3.post4", "0.5.3.post3", True),
        ("sglang", "0.5.10rc0", "0.5.10", True),
    ],
)
def test_a_version_string_names_the_release_whose_rules_answer(
    server: str, given_version: str, release: str, noted: bool
) -> None:
    resolved = resolve_release(server.strip(), given_version)
    assert resolved.release.version == release
    assert (resolved.note is not None) == noted


def test_no_version_is_the_newest_release() -> None:
    assert resolve_release("vllm").release.version == VLLM_RELEASES[-1] == "0.33.0"
    assert resolve_release("sglang").release.version == "0.5.23"


@pytest.mark.parametrize(
    ("server", "version", "words"),
    [
        ("vllm", "0.10.1", "vLLM 0.10.1 predates the releases modelled: 0.10.2 to 0.33.0"),
        ("vllm", "0.9.2", "predates"),
        ("vllm", "0.10.2rc1", None),  # a build before 0.10.2 maps to 0.10.2 itself
        ("vllm", "0.34.0", "vLLM 0.34.0 is newer than the releases modelled"),
        ("vllm", "1.0.0", "is newer than"),
        ("sglang", "0.5.1.post3", "SGLang 0.5.1.post3 predates"),
        ("sglang", "0.4.10", "predates"),
        ("sglang", "0.6.0", "is newer than"),
    ],
)
def test_a_release_outside_the_modelled_ones_is_refused(
    server: str, version: str, words: str | None
) -> None:
    if words is None:
        assert resolve_release(server, version).release.version == "0.10.2"
        return
    with pytest.raises(UnmodelledReleaseError, match=words) as raised:
        resolve_release(server, version)
    assert raised.value.modelled[0] in ("0.10.2", "0.5.2")
    assert "0.5.23" in str(raised.value) or "0.33.0" in str(raised.value)


@pytest.mark.parametrize(
    "text", ["", "abc", "0", "0.x", "0.19.1 extra", "1.2.3.4", "0.33.0-beta", "0.19.1+", "..."]
)
def test_a_string_that_is_no_version_is_refused(text: str) -> None:
    with pytest.raises(UnmodelledReleaseError, match="is not a version"):
        resolve_release("vllm", text)


@pytest.mark.parametrize("value", [19.1, b"0.19.1", 19, ["0.19.1"]])
def test_a_version_that_is_no_string_is_a_type_error(value: object) -> None:
    with pytest.raises(TypeError, match="must be a str"):
        resolve_release("vllm", value)


def test_a_version_with_numbers_longer_than_any_release_is_refused() -> None:
    with pytest.raises(UnmodelledReleaseError, match="longer than 6 digits"):
        resolve_release("vllm", "0.1000000.0")


@given(st.text(max_size=40))
def test_any_string_resolves_to_a_modelled_release_or_is_refused(text: str) -> None:
    try:
        resolved = resolve_release("vllm", text)
    except UnmodelledReleaseError as error:
        message = str(error)
    else:
        assert resolved.release.version in VLLM_RELEASES
        return
    assert message.startswith("argument version: ")
    assert "\n" not in message


@given(
    st.integers(10, 40),
    st.integers(0, 5),
    st.sampled_from(["", "rc1", ".dev7", "rc2.dev91+gabc", "+cu128", ".post1"]),
)
def test_a_version_takes_the_newest_read_release_of_its_minor_not_after_it(
    minor: int, micro: int, suffix: str
) -> None:
    text = f"0.{minor}.{micro}{suffix}"
    release_of = [parse_version(v).release for v in VLLM_RELEASES]
    wanted = parse_version(text).release
    candidates = [r for r in release_of if r.minor == minor and r <= wanted]
    if not candidates:
        with pytest.raises(UnmodelledReleaseError):
            resolve_release("vllm", text)
        return
    assert resolve_release("vllm", text).release.version == str(max(candidates))


# --- the rules, release by release ---------------------------------------------------------------


def test_each_change_is_at_a_modelled_release_in_order_and_names_a_rule() -> None:
    names = set(VllmRules.__dataclass_fields__)
    for change in CHANGES:
        assert change.since in VLLM_RELEASES
        assert change.rule in names
        assert change.where.startswith(f"vllm-{change.since[:4]}")
    order = [parse_version(change.since).release for change in CHANGES]
    assert order == sorted(order)


@pytest.mark.parametrize(
    ("version", "group_ratio", "utilization", "graphs", "concurrency_tokens"),
    [
        # vllm-0.10.2:vllm/v1/core/kv_cache_utils.py:981 (min), config 0.9, no graph profiling,
        # blocks // groups x block (:1022-1026).
        ("0.10.2", None, 0.9, False, False),
        ("0.11.2", None, 0.9, False, False),
        ("0.12.0", 1.25, 0.9, False, False),
        ("0.17.1", 1.25, 0.9, False, False),
        ("0.18.0", 1.5, 0.9, False, False),
        ("0.19.1", 1.5, 0.9, False, False),
        # vllm-0.20.0:vllm/envs.py:1724-1725 ("1"); 0.20.1: int(concurrency x len).
        ("0.20.0", 1.5, 0.92, True, False),
        ("0.20.1", 1.5, 0.92, True, True),
        ("0.33.0", 1.5, 0.92, True, True),
    ],
)
def test_the_rules_of_a_release_are_the_changes_up_to_it(
    version: str,
    group_ratio: float | None,
    utilization: float,
    graphs: bool,
    concurrency_tokens: bool,
) -> None:
    rules = vllm_rules(parse_version(version).release)
    assert rules.group_max_ratio == group_ratio
    assert rules.gpu_memory_utilization == utilization
    assert rules.profiles_cuda_graphs is graphs
    assert rules.kv_tokens_from_concurrency is concurrency_tokens


def test_the_baseline_is_the_first_release_and_changes_between_are_listed_once() -> None:
    first = parse_version("0.10.2").release
    assert vllm_rules(first) == BASELINE
    between = rule_changes(parse_version("0.19.1").release, parse_version("0.20.1").release)
    assert [(c.since, c.rule) for c in between] == [
        ("0.20.0", "block_size_aligns"),
        ("0.20.0", "mla_min_block"),
        ("0.20.0", "nemotron_h_ssm_default"),
        ("0.20.0", "gpu_memory_utilization"),
        ("0.20.0", "profiles_cuda_graphs"),
        ("0.20.1", "kv_tokens_from_concurrency"),
        ("0.20.1", "linear_attention_float32"),
    ]
    assert rule_changes(parse_version("0.20.1").release, parse_version("0.19.1").release) == (
        between
    )


# --- the published logs -------------------------------------------------------------------------


@pytest.mark.parametrize(
    # The interval of budgets that give 7162 blocks of 12 x 557,056 B; all print as 44.59 GiB.
    "budget",
    [47_875_620_864, 47_878_147_932, 47_882_305_535],
)
def test_vllm_0_10_2_qwen3_next_log_is_reproduced(budget: int) -> None:
    # "Setting attention block size to 544 tokens", "Padding mamba page size by 1.49%",
    # "Available KV cache memory: 44.59 GiB", num_gpu_blocks 7162, "Maximum concurrency for
    # 262,144 tokens per request: 14.77x" (Qwen3-Next-80B-A3B-Instruct, tp 2, bf16).
    answer = vllm_reservation(
        QWEN3_NEXT,
        version="0.10.2",
        tensor_parallel_size=2,
        dtype="bfloat16",
        kv_cache_memory_bytes=budget,
    )
    assert (answer.block_size, answer.num_blocks) == (544, 7162)
    assert f"{budget / GIB:.2f}" == "44.59"
    lines = answer.log_lines
    assert lines[0] == (
        "Setting attention block size to 544 tokens to ensure that attention page size is >= "
        "mamba page size."
    )
    assert lines[1] == (
        "Padding mamba page size by 1.49% to ensure that mamba page size and attention page "
        "size are exactly equal."
    )
    # vllm-0.10.2:vllm/v1/core/kv_cache_utils.py:1026-1033: 7162 // 4 x 544, two lines.
    assert lines[-2:] == (
        "GPU KV cache size: 973,760 tokens",
        "Maximum concurrency for 262,144 tokens per request: 14.77x",
    )
    assert answer.server_version == "0.10.2"
    assert not answer.enable_prefix_caching


def test_qwen3_next_under_the_newest_rules_is_the_issues_576_and_14_55x() -> None:
    answer = vllm_reservation(
        QWEN3_NEXT, tensor_parallel_size=2, dtype="bfloat16", kv_cache_memory_bytes=47_878_147_932
    )
    assert answer.block_size == 576
    assert f"{answer.max_concurrency:.2f}" == "14.55"


@pytest.mark.parametrize(
    ("version", "prefix_caching", "concurrency", "tokens"),
    [
        # RULES.md §9, each release's own code run at 47,875,620,864 B.
        ("0.11.0", True, "14.77", 973_760),  # forced off for every hybrid
        ("0.14.1", True, "14.77", 973_760),  # off: Qwen3-Next is no SupportsMambaPrefixCaching
        ("0.15.0", True, "14.68", 973_760),  # align: 2 pages a GDN group, 482 + 3 x 2
        ("0.20.0", None, "14.77", 973_760),
        ("0.20.1", None, "14.77", 3_871_083),  # int(14.767... x 262,144)
        ("0.21.0", True, "14.68", 3_847_285),
    ],
)
def test_qwen3_next_release_by_release(
    version: str, prefix_caching: bool | None, concurrency: str, tokens: int
) -> None:
    answer = vllm_reservation(
        QWEN3_NEXT,
        version=version,
        tensor_parallel_size=2,
        enable_prefix_caching=prefix_caching,
        kv_cache_memory_bytes=47_875_620_864,
    )
    assert (answer.block_size, answer.num_blocks) == (544, 7162)
    assert f"{answer.max_concurrency:.2f}" == concurrency
    assert answer.kv_cache_tokens == tokens


@pytest.mark.parametrize(
    # 1339 blocks of 4 x 819,200 B print as 4.09 GiB (4.0863 to 4.0894 GiB).
    "budget",
    [4_387_635_200, 4_390_911_999],
)
def test_vllm_0_19_0_granite_4_0_h_1b_log_is_reproduced(budget: int) -> None:
    # granite-4.0-h-1b, vLLM 0.19.0, tp 1, bf16, --max-model-len 4096 --max-num-seqs 2,
    # "Available KV cache memory: 4.09 GiB": block 400, padding 1.59%, 66.95x.
    answer = vllm_reservation(
        GRANITE_1B,
        version="0.19.0",
        max_model_len=4096,
        max_num_seqs=2,
        dtype="bfloat16",
        kv_cache_memory_bytes=budget,
    )
    assert f"{budget / GIB:.2f}" == "4.09"
    assert (answer.block_size, answer.num_blocks) == (400, 1339)
    assert f"{answer.mamba_page_padding_percent:.2f}" == "1.59"
    assert answer.log_lines[-1] == "Maximum concurrency for 4,096 tokens per request: 66.95x"
    assert answer.log_lines[-2] == "GPU KV cache size: 53,200 tokens"  # 1339 // 10 x 400


def test_before_0_20_1_the_token_count_is_blocks_a_group_times_the_smallest_block() -> None:
    # vllm-0.19.0:vllm/v1/core/kv_cache_utils.py: num_blocks // len(kv_cache_groups) x the
    # smallest group block. Mamba-2.8B alone, no prefix caching: the one Mamba group's block is
    # max_model_len. A block is 64 layers x (conv (5120, 3) + SSM (5120, 16)) x 2 B =
    # 12,451,840 B; 4 GiB holds 344 of them: 344 // 1 x 4,096 = 1,409,024 tokens.
    mamba = vllm_reservation(
        CONFIGS / "mamba-2.8b-hf.json",
        version="0.19.0",
        max_model_len=4096,
        enable_prefix_caching=False,
        kv_cache_memory_bytes=4 * GIB,
    )
    assert (mamba.attention_groups, mamba.state_groups, mamba.num_blocks) == (0, 1, 344)
    assert mamba.kv_cache_tokens == 1_409_024
    assert mamba.log_lines[-2] == "GPU KV cache size: 1,409,024 tokens"
    # Qwen3-Next with every layer a gated delta net: one group of 48 pages of 548,864 B (tp 2),
    # 26,345,472 B a block, 163 of them in 4 GiB. Without prefix caching the group's block is
    # max_model_len: 163 x 4,096 = 667,648 tokens; in align mode it is the 16-token block:
    # 163 x 16 = 2,608.
    gdn = {**json.loads(QWEN3_NEXT.read_text()), "full_attention_interval": 100}
    for caching, mode, tokens in ((False, "none", 667_648), (True, "align", 2_608)):
        held = vllm_reservation(
            gdn,
            version="0.20.0",
            tensor_parallel_size=2,
            max_model_len=4096,
            enable_prefix_caching=caching,
            kv_cache_memory_bytes=4 * GIB,
        )
        assert (held.mamba_cache_mode, held.attention_groups, held.num_blocks) == (mode, 0, 163)
        assert held.kv_cache_tokens == tokens
    # A DFlash drafter's group is counted beside the target's (tests/test_draft_models.py):
    # 1,305 blocks // (4 attention + 10 GDN + 1 draft groups) x 816 = 87 x 816 = 70,992.
    drafted = vllm_reservation(
        QWEN3_5,
        version="0.20.0",
        draft_config=DFLASH,
        tensor_parallel_size=2,
        max_model_len=200_000,
        kv_cache_memory_bytes=int(10.16 * GIB),
        num_speculative_tokens=5,
        gpu="rtx-3090",
    )
    assert (drafted.attention_groups, drafted.state_groups, drafted.draft_groups) == (4, 10, 1)
    assert (drafted.num_blocks, drafted.block_size) == (1305, 816)
    assert drafted.kv_cache_tokens == 70_992


def test_before_0_14_0_the_budget_prints_two_decimals() -> None:
    # vllm-0.10.2:vllm/v1/worker/gpu_worker.py:298-299 prints "%.2f"; from 0.14.0 format_gib
    # (round(x, 2)) drops the trailing 0. Before 0.20.0 the default utilization is 0.9:
    # ceil(150,119,844,413 x 0.9) = 135,107,859,972 B less 70.125 + 5 + 1 GiB is
    # 53,369,263,620 B, 49.7037 GiB.
    given: dict[str, Any] = {
        "tensor_parallel_size": 2,
        "gpu": "h200",
        "weights_bytes": 70 * GIB + GIB // 8,
        "activation_bytes": 5 * GIB,
        "non_torch_bytes": GIB,
        "cuda_graph_bytes": 0,
    }
    for version, shown in (("0.13.0", "49.70"), ("0.14.0", "49.7")):
        held = vllm_reservation(QWEN3_NEXT, version=version, **given)
        assert held.available_kv_cache_memory == 53_369_263_620
        assert f"Available KV cache memory: {shown} GiB" in held.log_lines


def test_the_estimates_name_the_oldest_release_they_are_calibrated_on() -> None:
    # servers.profile's estimates are fitted to the logs of vLLM 0.27.0 on (tests/logs/).
    given: dict[str, Any] = {"gpu": "h200", "weights_bytes": 70 * GIB}
    calibrated = "the estimates are calibrated on the logs of vLLM 0.27.0 and later"
    assert calibrated in vllm_reservation(QWEN3_NEXT, version="0.26.0", **given).assumptions
    assert calibrated not in vllm_reservation(QWEN3_NEXT, version="0.27.0", **given).assumptions


def test_granite_4_0_h_1b_under_the_newest_rules_is_the_issues_35_26x() -> None:
    # 0.33.0 plans three state blocks a request with prefix caching on: 11 + 9 x 3 = 38.
    answer = vllm_reservation(
        GRANITE_1B, max_model_len=4096, max_num_seqs=2, dtype="bfloat16",
        kv_cache_memory_bytes=int(4.09 * GIB),
    )  # fmt: skip
    assert (answer.block_size, answer.blocks_per_request_at_max_model_len) == (400, 38)
    assert f"{answer.max_concurrency:.2f}" == "35.26"


def test_prefix_caching_a_mamba_family_before_0_28_is_refused_as_not_modelled() -> None:
    # 0.11.1-0.27.x put SupportsMambaPrefixCaching models in the chunk-aligned 'all' mode.
    with pytest.raises(ServerArgumentError) as raised:
        vllm_reservation(GRANITE_1B, version="0.15.0", enable_prefix_caching=True)
    assert raised.value.field == "enable_prefix_caching"
    assert str(raised.value) == (
        "argument enable_prefix_caching: vLLM 0.15.0 caches granitemoehybrid prefixes in "
        "mamba_cache_mode 'all' (chunk-aligned blocks, a state page per block of context); not "
        "modelled"
    )
    # 0.10.2 turns it off for every hybrid, so there is nothing to refuse.
    off = vllm_reservation(GRANITE_1B, version="0.10.2", enable_prefix_caching=True)
    assert (off.enable_prefix_caching, off.mamba_cache_mode) == (False, "none")
    assert off.prefix_caching_rule == "vLLM 0.10.2 turns it off for a hybrid generative model"


# --- the state and the refusals of a release -----------------------------------------------------


@pytest.mark.parametrize(
    ("version", "ssm_dtype"),
    [
        ("0.12.0", "bfloat16"),  # no NemotronH hook: the conv state's dtype
        ("0.13.0", "float16"),  # vllm-0.13.0:vllm/model_executor/models/config.py:493-510
        ("0.19.1", "float16"),
        ("0.20.0", "float32"),  # vllm-0.20.0:vllm/model_executor/models/config.py:409-436
    ],
)
def test_nemotron_h_ssm_dtype_default_by_release(version: str, ssm_dtype: str) -> None:
    assert ssm_state(NEMOTRON, version=version).ssm_dtype == ssm_dtype


def test_a_gated_delta_net_reads_the_ssm_dtype_flag_from_0_17_0() -> None:
    # vllm-0.16.0:mamba_utils.py gated_delta_net_state_dtype: (state_dtype, state_dtype).
    before = ssm_state(QWEN3_NEXT, tp_size=2, ssm_dtype="float32", version="0.16.0")
    after = ssm_state(QWEN3_NEXT, tp_size=2, ssm_dtype="float32", version="0.17.0")
    assert (before.ssm_dtype, before.per_layer_bytes) == ("bfloat16", 548_864)
    assert (after.ssm_dtype, after.per_layer_bytes) == ("float32", 12_288 * 2 + 262_144 * 4)


@pytest.mark.parametrize(
    ("version", "layer_window", "model_window"),
    [
        ("0.16.0", 3, 3),  # Mamba-2 never widened before 0.17.0 (mamba_utils.py:120-148)
        ("0.17.0", 5, 3),  # the layer widens; GraniteMoeHybrid's classmethod does not
        ("0.31.0", 5, 3),
        ("0.32.0", 5, 5),  # vllm-0.32.0:vllm/model_executor/models/granitemoehybrid.py:618-647
    ],
)
def test_mamba2_conv_window_with_speculative_tokens_by_release(
    version: str, layer_window: int, model_window: int
) -> None:
    layer = ssm_state(GRANITE_TINY, speculative_tokens=2, version=version)
    model = ssm_state(GRANITE_TINY, speculative_tokens=2, version=version, view="model")
    assert (layer.conv_shape[0], model.conv_shape[0]) == (layer_window, model_window)


@pytest.mark.parametrize(
    ("config", "refused", "served", "first"),
    [
        (QWEN3_5, "0.16.0", "0.17.0", "0.17.0"),
        (KIMI, "0.11.0", "0.11.1", "0.11.1"),
    ],
)
def test_an_architecture_a_release_does_not_register_is_refused(
    config: Path, refused: str, served: str, first: str
) -> None:
    with pytest.raises(ModelConfigError, match=f"vLLM {refused} does not serve .*from {first}"):
        ssm_state(config, version=refused)
    assert ssm_state(config, version=served).server_version == served


def test_speculative_decoding_before_0_17_only_for_qwen3_next() -> None:
    # vllm-0.10.2:vllm/v1/worker/gpu_model_runner.py:3701-3705, in its words.
    with pytest.raises(ServerArgumentError) as raised:
        vllm_reservation(NEMOTRON, version="0.16.0", num_speculative_tokens=2)
    assert raised.value.field == "num_speculative_tokens"
    assert str(raised.value) == (
        "argument num_speculative_tokens: vLLM 0.16.0 refuses it for nemotron_h: 'Mamba with "
        "speculative decoding is not supported yet.'"
    )
    assert vllm_reservation(QWEN3_NEXT, version="0.16.0", num_speculative_tokens=2)
    assert vllm_reservation(NEMOTRON, version="0.17.0", num_speculative_tokens=2)


def test_replayssm_before_0_27_is_refused() -> None:
    with pytest.raises(ServerArgumentError) as raised:
        vllm_reservation(NEMOTRON, version="0.26.0", use_replayssm=True)
    assert raised.value.field == "use_replayssm"
    assert str(raised.value) == "argument use_replayssm: vLLM 0.26.0 has no --use-replayssm"
    assert vllm_reservation(NEMOTRON, version="0.27.0", use_replayssm=True).use_replayssm


def test_a_bad_version_changes_nothing_and_is_refused_before_the_config_is_read() -> None:
    with pytest.raises(UnmodelledReleaseError, match="argument version: "):
        vllm_reservation(CONFIGS / "missing.json", version="0.9.0")
    with pytest.raises(UnmodelledReleaseError):
        ssm_state(NEMOTRON, version="0.34.0")
    with pytest.raises(ModelConfigError, match="metrale layout has no server release"):
        ssm_state(NEMOTRON, layout="metrale", version="0.19.1")


# --- what changed between two releases -----------------------------------------------------------


def test_compare_steps_through_each_release_where_a_rule_changed() -> None:
    comparison = compare_releases(
        vllm_reservation,
        QWEN3_NEXT,
        version="0.10.2",
        other="0.33.0",
        options={"tensor_parallel_size": 2, "kv_cache_memory_bytes": 47_875_620_864},
    )
    steps = {step.release: step for step in comparison.steps}
    assert "0.28.0" in steps and not steps["0.28.0"].undone
    assert steps["0.28.0"].differences["enable_prefix_caching"] == (False, True)
    assert steps["0.28.0"].as_dict()["differences"] == {
        key: [old, new] for key, (old, new) in steps["0.28.0"].differences.items()
    }
    assert steps["0.28.0"].differences["enable_prefix_caching"] == (False, True)
    # The rule's prose changes at 0.28.0 too (prefix_caching_rule); a figure is what differs.
    assert not [key for key in steps["0.28.0"].differences if key.endswith("_rule")]
    assert steps["0.33.0"].differences["block_size"] == (544, 576)
    assert steps["0.20.1"].differences["kv_cache_tokens"] == (973_760, 3_871_083)
    assert "block_size" not in steps["0.18.0"].differences
    assert comparison.differences["block_size"] == (544, 576)
    assert [c.rule for c in steps["0.33.0"].changes] == ["checkpoint_kinds"]


def test_compare_back_to_a_release_that_refuses_the_launch_says_so() -> None:
    comparison = compare_releases(
        vllm_reservation, QWEN3_5, version="0.33.0", other="0.16.0",
        options={"kv_cache_memory_bytes": 40 * GIB},
    )  # fmt: skip
    assert all(step.undone for step in comparison.steps)
    assert comparison.steps[0].release == "0.33.0"
    assert comparison.other_refusal is not None
    assert "does not serve" in comparison.other_refusal


def test_compare_back_undoes_each_step_from_the_newer_release_to_the_older() -> None:
    # Going back from 0.33.0 to 0.31.0 walks 0.33.0 then 0.32.0, each figure as (at the release,
    # before it): 0.33.0's extra GDN checkpoint block and 64-token alignment undone give
    # 0.10.2's published figures again (block 544, 7,162 blocks: tests/logs).
    comparison = compare_releases(
        vllm_reservation, QWEN3_NEXT, version="0.33.0", other="0.31.0",
        options={"tensor_parallel_size": 2, "kv_cache_memory_bytes": 47_875_620_864},
    )  # fmt: skip
    assert [(step.release, step.undone) for step in comparison.steps] == [
        ("0.33.0", True),
        ("0.32.0", True),
    ]
    newest, older = comparison.steps
    assert (newest.differences["block_size"], newest.differences["num_blocks"]) == (
        (576, 544),
        (6764, 7162),
    )
    assert newest.differences["planned_blocks_per_request"] == (3, 2)
    assert older.differences == {}
    assert (newest.refusal, older.refusal, comparison.other_refusal) == (None, None, None)
    assert comparison.other_note is None
    # Only figures: no rule's prose, no log line, no assumption differs.
    assert not [key for key in comparison.differences if key.endswith("_rule")]
    assert not {"log_lines", "assumptions", "source"} & set(comparison.differences)
    assert comparison.differences == newest.differences
    # The rules' sets print sorted in the JSON.
    assert newest.as_dict()["changes"] == [
        {
            "rule": "checkpoint_kinds",
            "value": ["always", "flashinfer_gdn", "flashkda"],
            "what": newest.changes[0].what,
            "where": newest.changes[0].where,
        }
    ]


def test_compare_with_a_release_that_refuses_names_the_refusal_at_its_step() -> None:
    comparison = compare_releases(
        vllm_reservation, QWEN3_5, version="0.33.0", other="0.16.0",
        options={"kv_cache_memory_bytes": 40 * GIB},
    )  # fmt: skip
    refused = (
        f"{str(QWEN3_5)!r}: qwen3_5 config: field 'architectures': vLLM 0.16.0 does not serve "
        "'Qwen3_5ForConditionalGeneration' (its registry names it from 0.17.0 to 0.33.0)"
    )
    last = comparison.steps[-1]
    assert (last.release, last.refusal, last.differences) == ("0.17.0", refused, {})
    assert [step.refusal for step in comparison.steps[:-1]] == [None] * (len(comparison.steps) - 1)
    assert (comparison.other_refusal, comparison.differences) == (refused, {})
    assert comparison.as_dict()["other_refusal"] == refused


def test_compare_passes_on_the_reservations_refusal_of_a_release_it_does_not_model() -> None:
    # The reservation, not the comparison, refuses a release it does not model: here SGLang's,
    # handed vLLM's releases. At the release --compare names, the refusal names `compare`;
    # at any other it is passed on as it is.
    options: dict[str, Any] = {"available_memory": 40 * GIB}
    newer = "SGLang 0.28.0 is newer than the releases modelled: 0.5.2 to 0.5.23 ("
    for version, other, argument in (("0.28.0", "0.33.0", "version"),
                                     ("0.33.0", "0.28.0", "compare")):  # fmt: skip
        with pytest.raises(UnmodelledReleaseError) as raised:
            compare_releases(
                sglang_reservation, QWEN3_NEXT, version=version, other=other, options=options,
                server="vllm",
            )  # fmt: skip
        assert raised.value.argument == argument
        assert str(raised.value).startswith(f"argument {argument}: {newer}0.5.2, 0.5.3, ")
        assert raised.value.modelled[:2] == ("0.5.2", "0.5.3")


def test_compare_with_a_build_names_the_release_it_is_read_as() -> None:
    comparison = compare_releases(
        vllm_reservation, QWEN3_NEXT, version="0.19.1", other="0.20.1rc1.dev91+g1a2b3c",
        options={"tensor_parallel_size": 2, "kv_cache_memory_bytes": 47_875_620_864},
    )  # fmt: skip
    assert comparison.other == "0.20.1"
    assert comparison.other_note is not None
    assert "0.20.1rc1.dev91+g1a2b3c is a build before 0.20.1" in comparison.other_note


# --- the command line ----------------------------------------------------------------------------


def test_the_first_line_and_the_json_name_the_release(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--config", str(QWEN3_NEXT), "--tensor-parallel-size", "2",
            "--kv-cache-memory-bytes", "47875620864"]  # fmt: skip
    status, out, err = run_cli(capsys, "vllm", "--vllm-version", "0.20.1rc1.dev91+g1a2b3c", *args)
    assert (status, err) == (0, "")
    assert out.splitlines()[0].startswith("vLLM 0.20.1 reserves for qwen3_next")
    assert "0.20.1rc1.dev91+g1a2b3c is a build before 0.20.1" in out.splitlines()[0]
    status, out, _ = run_cli(capsys, "vllm", "--vllm-version", "0.10.2", "--json", *args)
    answer = json.loads(out)
    assert (answer["server_version"], answer["max_concurrency"]) == ("0.10.2", 7162 / 485)


def test_the_command_line_refuses_an_unmodelled_release_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = run_cli(capsys, "vllm", "--vllm-version", "0.9.2", "--config", str(NEMOTRON))
    assert (status, out) == (2, "")
    assert err.startswith("decode-ring: error: argument --vllm-version: vLLM 0.9.2 predates")
    assert err.count("\n") == 1


def test_a_flag_the_release_lacks_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run_cli(
        capsys, "vllm", "--vllm-version", "0.19.1", "serve", str(NEMOTRON), "--use-replayssm"
    )
    assert status == 2
    assert err == (
        "decode-ring: error: vLLM 0.19.1 has no such flag: --use-replayssm (in 0.27.0-0.33.0)\n"
    )


def test_compare_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--config", str(QWEN3_NEXT), "-tp", "2", "--kv-cache-memory-bytes",
            "47875620864"]  # fmt: skip
    status, out, _ = run_cli(capsys, "vllm", "--vllm-version", "0.19.1", "--compare", "0.33.0",
                             "--json", *args)  # fmt: skip
    assert status == 0
    compare = json.loads(out)["compare"]
    assert (compare["release"], compare["other"]) == ("0.19.1", "0.33.0")
    assert compare["differences"]["block_size"] == [544, 576]
    status, out, _ = run_cli(capsys, "vllm", "--vllm-version", "0.19.1", "--compare", "0.33.0",
                             *args)  # fmt: skip
    assert "compared with vLLM 0.33.0: from 0.19.1 on to 0.33.0" in out
    assert "    0.28.0   brings hybrid_prefix_caching_default, all_mode_families," in out


def test_compare_json_is_each_step_with_its_rules_and_what_they_did(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # 0.11.0 to 0.12.0 for Qwen3-Next: two steps of rules (vllm-0.11.1, vllm-0.12.0) that change
    # none of its figures.
    status, out, _ = run_cli(capsys, "vllm", "--vllm-version", "0.11.0", "--compare", "0.12.0",
                             "--json", "--config", str(QWEN3_NEXT), "-tp", "2",
                             "--kv-cache-memory-bytes", "47875620864")  # fmt: skip
    assert status == 0
    compare = json.loads(out)["compare"]
    rules = [[(c["rule"], c["value"]) for c in step.pop("changes")] for step in compare["steps"]]
    assert rules == [
        [("prefix_caching", "mamba"), ("attention_free_prefix_caching_default", True),
         ("mla_min_block", 64), ("blackwell_head256_block", 32)],
        [("attention_free_prefix_caching_default", False), ("group_max_ratio", 1.25)],
    ]  # fmt: skip
    assert compare == {
        "release": "0.11.0",
        "other": "0.12.0",
        "other_note": None,
        "steps": [
            {"release": "0.11.1", "undone": False, "differences": {}, "refusal": None},
            {"release": "0.12.0", "undone": False, "differences": {}, "refusal": None},
        ],
        "differences": {},
        "other_refusal": None,
    }


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["state", "--layout", "vllm", "--sglang-version", "0.5.22"],
            "--sglang-version does nothing",
        ),
        (
            ["state", "--layout", "metrale", "--vllm-version", "0.19.1"],
            "--vllm-version does nothing",
        ),
        (["state", "--vllm-version", "0.10.1"], "vLLM 0.10.1 predates"),
    ],
)
def test_state_refuses_a_version_it_cannot_use(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    status, out, err = run_cli(capsys, *argv, "--config", str(NEMOTRON))
    assert (status, out) == (2, "")
    assert message in err and err.count("\n") == 1


def test_state_names_the_release_beside_the_layout(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, "state", "--config", str(NEMOTRON), "--vllm-version", "0.13")
    assert status == 0
    assert out.splitlines()[0].endswith("vllm layout (vLLM 0.13.0)")
    assert "ssm state" in out and "float16" in out


def test_align_mode_refuses_speculative_decoding_in_0_15_and_0_16() -> None:
    # vllm-0.15.0:vllm/model_executor/models/config.py:357 asserts it; 0.17.0 takes it.
    for version in ("0.15.0", "0.16.0"):
        with pytest.raises(ServerArgumentError, match="mamba_cache_mode 'align'") as raised:
            vllm_reservation(
                QWEN3_NEXT, version=version, num_speculative_tokens=2, enable_prefix_caching=True
            )
        assert raised.value.field == "enable_prefix_caching"
        assert raised.value.server_refusal == (
            "AssertionError: Mamba cache mode 'align' is currently not compatible with "
            "speculative decoding."
        )
    later = vllm_reservation(
        QWEN3_NEXT, version="0.17.0", num_speculative_tokens=2, enable_prefix_caching=True
    )
    assert later.mamba_cache_mode == "align"


def test_a_family_vllm_removed_is_not_modelled_where_it_was_still_served() -> None:
    # vllm-0.23.0:vllm/model_executor/models/registry.py:167 registers MiniMaxM1ForCausalLM;
    # 0.24.0 lists it in _PREVIOUSLY_SUPPORTED_MODELS with "0.23.0".
    from decode_ring.models import NotModelledError

    with pytest.raises(NotModelledError, match=r"vLLM 0\.23\.0 serves MiniMax-M1"):
        ssm_state(CONFIGS / "minimax-m1.json", version="0.23.0")
    with pytest.raises(ModelConfigError, match=r"vLLM served MiniMax-M1 until version 0\.23\.0"):
        ssm_state(CONFIGS / "minimax-m1.json", version="0.24.0")


def test_a_removed_family_in_a_wrapper_is_not_modelled_where_it_was_still_served(
    tmp_path: Path,
) -> None:
    # vLLM 0.33.0's registry lists Bamba as previously supported, last served by 0.23.0
    # (models.families.REMOVED), so 0.20.0 serves it; the text config's type is looked up.
    from decode_ring.models import NotModelledError

    bamba = {"model_type": "bamba", "num_hidden_layers": 2}
    wrapper = {"model_type": "vl", "text_config": 3, "llm_config": bamba}
    message = (
        "field 'model_type': vLLM 0.20.0 serves Bamba (vLLM served it until 0.23.0); the "
        "package does not model its state"
    )
    with pytest.raises(NotModelledError) as caught:
        ssm_state(wrapper, version="0.20.0")
    assert str(caught.value) == message
    assert (caught.value.path, caught.value.family, caught.value.field) == (
        None,
        "bamba",
        "model_type",
    )
    path = tmp_path / "config.json"
    path.write_text(json.dumps(wrapper), encoding="utf-8")
    with pytest.raises(NotModelledError) as caught:
        ssm_state(path, version="0.20.0")
    assert str(caught.value) == f"{str(path)!a}: {message}"
    assert caught.value.path == str(path)


def test_an_architecture_refused_by_release_names_the_releases_that_serve_it() -> None:
    # vLLM's registry names BailingMoeV2_5ForCausalLM from 0.17.0 (vllm-architectures.json).
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(VLLM_LIGHTNING, version="0.16.0")
    assert str(caught.value) == (
        "bailing_hybrid config: field 'architectures': vLLM 0.16.0 does not serve "
        "'BailingMoeV2_5ForCausalLM' (its registry names it from 0.17.0 to 0.33.0)"
    )
    assert caught.value.field == "architectures"


# --- the machinery both servers' rules share --------------------------------------------------


def test_a_version_keeps_the_string_given_and_the_newest_is_the_release_itself() -> None:
    from decode_ring.releases import VLLM

    assert resolve_release("vllm").given == "0.33.0"
    assert resolve_release("vllm", "0.33.1").given == "0.33.1"
    # The newest release resolves to the one Release the package names everywhere.
    assert resolve_release("vllm", "0.33.0").release == VLLM
    assert resolve_release("vllm", "0.33.0").release.transformers == "5.20.2"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("abc", "'abc' is not a version"),
        ("\u20000.19.1", "is not a version"),  # only ASCII whitespace is ignored
        ("0.19.1000000", "'0.19.1000000' has a number longer than 6 digits"),
    ],
)
def test_a_malformed_version_is_quoted_in_its_refusal(text: str, words: str) -> None:
    with pytest.raises(UnmodelledReleaseError) as raised:
        resolve_release("vllm", text)
    assert words in str(raised.value)


def test_six_digits_are_a_number_and_a_float_is_named_in_the_type_error() -> None:
    assert resolve_release("vllm", "0.19.999999").release.version == "0.19.1"
    with pytest.raises(TypeError, match="must be a str, not float"):
        resolve_release("vllm", 0.19)


def test_an_sglang_release_after_the_newest_micro_is_refused() -> None:
    # SGLang's series is X.Y.Z (its .postN releases change rules): 0.5.24 is not 0.5.23's.
    with pytest.raises(UnmodelledReleaseError, match=r"SGLang 0\.5\.24 is newer than"):
        resolve_release("sglang", "0.5.24")


def test_the_changes_between_two_releases_leave_out_the_older_ones_own() -> None:
    old, new = parse_version("0.20.0").release, parse_version("0.20.1").release
    assert {c.since for c in rule_changes(old, new)} == {"0.20.1"}


def test_fold_applies_each_change_up_to_the_release_in_order() -> None:
    from dataclasses import dataclass

    from decode_ring.releases.changes import RuleChange, check_changes, fold

    @dataclass(frozen=True)
    class Toy:
        size: int
        name: str

    changes = (
        RuleChange("0.2.0", "size", 2, "", ""),
        RuleChange("0.3.0", "size", 3, "", ""),
        RuleChange("0.3.0", "name", "c", "", ""),
    )
    check_changes(Toy, changes)
    at = [fold(Toy(1, "a"), changes, parse_version(v).release) for v in ("0.1.9", "0.2.0", "0.3.1")]
    assert at == [Toy(1, "a"), Toy(2, "a"), Toy(3, "c")]
    with pytest.raises(AssertionError) as unknown:
        check_changes(Toy, (RuleChange("0.1.0", "colour", 1, "", ""),))
    assert str(unknown.value) == "unknown rule in CHANGES"
    with pytest.raises(AssertionError, match="unknown rule"):
        check_changes(Toy, changes, not_rules=("name",))
    with pytest.raises(AssertionError) as disordered:
        check_changes(Toy, tuple(reversed(changes)))
    assert str(disordered.value) == "CHANGES out of release order"


def test_release_rule_questions_answer_by_family_and_architecture() -> None:
    from decode_ring.releases.sglang import sglang_rules

    def rules(version: str) -> VllmRules:
        return vllm_rules(parse_version(version).release)

    # vllm-0.29.0 Kimi's KDA plans a FlashKDA checkpoint; GLM-5.3-Flash's from 0.32.0.
    assert not rules("0.28.0").plans_flashkda_checkpoint("kimi_linear")
    assert rules("0.29.0").plans_flashkda_checkpoint("kimi_linear")
    assert not rules("0.31.0").plans_flashkda_checkpoint("glm5_next")
    assert rules("0.32.0").plans_flashkda_checkpoint("glm5_next")
    # SGLang 0.5.20 keeps GLM-5-Next's prefill graphs (multimodal_breakable_cuda_graph list).
    glm = "Glm5NextForConditionalGeneration"
    assert not sglang_rules(parse_version("0.5.19").release).keeps_prefill_graphs(glm)
    assert sglang_rules(parse_version("0.5.20").release).keeps_prefill_graphs(glm)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("abc", "argument compare: 'abc' is not a version"),
        ("X0.19.1", "argument compare: 'X0.19.1' is not a version"),
        ("0.1234567.0", "argument compare: '0.1234567.0' has a number longer than 6 digits"),
        ("0.9.0", "argument compare: vLLM 0.9.0 predates the releases modelled: 0.10.2 to 0.33.0 "
                  "(0.10.2, 0.11.0, 0.11.1, "),
    ],
)  # fmt: skip
def test_a_refusal_names_the_argument_that_carried_the_version(text: str, message: str) -> None:
    with pytest.raises(UnmodelledReleaseError) as raised:
        resolve_release("vllm", text, argument="compare")
    assert str(raised.value).startswith(message)
    assert raised.value.argument == "compare"
    with pytest.raises(UnmodelledReleaseError, match=r"^argument version: 'abc' is not"):
        parse_version("abc")


@pytest.mark.parametrize(
    ("text", "note"),
    [
        ("0.20.1rc1", "0.20.1rc1 is a build before 0.20.1: the rules of 0.20.1"),
        ("0.20.1.dev3", "0.20.1.dev3 is a build before 0.20.1: the rules of 0.20.1"),
        ("0.33.1", "0.33.1 is not a release the package has read: the rules of 0.33.0"),
        ("0.11.0+cu128", "0.11.0+cu128 is 0.11.0"),
    ],
)
def test_the_note_says_how_the_version_became_the_release(text: str, note: str) -> None:
    assert resolve_release("vllm", text).note == note


@pytest.mark.parametrize(
    ("version", "arch", "backend", "block"),
    [
        # Kimi-Linear at tp 2, prefix caching off: a state page of 3 x [3, 2048] bfloat16 conv
        # (36,864 B) and [16, 128, 128] float32 (1,048,576 B), 1,085,440 B; an MLA token page of
        # 576 x 2 = 1,152 B (one KV head).
        # 0.19.1: the model hook's MLA alignment 64 (vllm-0.19.1:vllm/model_executor/models/
        # config.py:206-214, :273-281): 64 x ceil(1085440 / 73728) = 960, on either GPU.
        ("0.19.1", "sm90", "FLASH_ATTN_MLA", 960),
        ("0.19.1", "sm100", "FLASHINFER_MLA", 960),
        # 0.20.0 to 0.26.0: max(the backend's smallest kernel block, block_size)
        # (vllm-0.20.0:vllm/platforms/interface.py:575-582): FlashAttention-MLA's MultipleOf(16)
        # on SM90, 16 x ceil(1085440 / 18432) = 944; FlashInfer-MLA's [32, 64] on SM10x
        # (v1/attention/backends/mla/flashinfer_mla.py:49-50), 32 x ceil(1085440 / 36864) = 960.
        ("0.20.0", "sm90", "FLASH_ATTN_MLA", 944),
        ("0.20.0", "sm100", "FLASHINFER_MLA", 960),
        ("0.26.0", "sm100", "FLASHINFER_MLA", 960),
        # 0.27.0: the MLA floor of 128 (vllm-0.27.0:vllm/platforms/interface.py:883-888):
        # 128 x ceil(1085440 / 147456) = 1024.
        ("0.27.0", "sm100", "FLASHINFER_MLA", 1024),
    ],
)
def test_the_mla_block_aligns_to_the_backends_kernel_block(
    version: str, arch: str, backend: str, block: int
) -> None:
    r = vllm_reservation(
        KIMI,
        version=version,
        gpu_arch=arch,
        tensor_parallel_size=2,
        enable_prefix_caching=False,
        kv_cache_memory_bytes=40 * GIB,
    )
    assert (r.attention_backend, r.block_size) == (backend, block)
    assert r.state_page_bytes == 3 * 3 * 2048 * 2 + 16 * 128 * 128 * 4
    assert r.state_page_bytes_padded == block * 576 * 2


@pytest.mark.parametrize(
    ("version", "arch", "block_size", "block"),
    [
        # Qwen3-Next at tp 4: a state page of 3 x (2 x 16 x 128 + 32 x 128) / 4 bfloat16 conv
        # (12,288 B) and (32 / 4, 128, 128) bfloat16 (262,144 B), 274,432 B; an attention token
        # page of 1 KV head x 256 x 2 x 2 B = 1,024 B (its 2 heads replicated across 4 ranks).
        # Before 0.11.1 a kernel block of 16: 16 x ceil(274432 / 16384) = 272, on either GPU.
        ("0.10.2", "sm100", None, 272),
        # 0.11.1 to 0.17.x: a head of 256 on SM10x under FlashInfer aligns to 32
        # (vllm-0.11.1:vllm/model_executor/models/config.py:357-368): 32 x ceil(274432 / 32768).
        ("0.11.1", "sm100", None, 288),
        ("0.13.0", "sm100", None, 288),
        ("0.13.0", "sm90", None, 272),
        # 0.18.0 drops that floor (16 again on SM10x).
        ("0.18.0", "sm100", None, 272),
        # Before 0.20.0 --block-size 32 is kept only if larger than the aligned block
        # (vllm-0.19.1:vllm/model_executor/models/config.py:218, :273-280): 272.
        ("0.19.1", "sm90", 32, 272),
        # From 0.20.0 it is the granularity, max(16, 32) (vllm-0.20.0:vllm/platforms/
        # interface.py:575-582): 32 x ceil(274432 / 32768) = 288.
        ("0.20.0", "sm90", 32, 288),
    ],
)
def test_the_hybrid_block_of_a_256_wide_head_by_release_and_gpu(
    version: str, arch: str, block_size: int | None, block: int
) -> None:
    r = vllm_reservation(
        QWEN3_NEXT, version=version, gpu_arch=arch, tensor_parallel_size=4, block_size=block_size
    )
    assert r.state_page_bytes == 3 * (2 * 16 * 128 + 32 * 128) // 4 * 2 + 8 * 128 * 128 * 2
    assert (r.block_size, r.state_page_bytes_padded) == (block, block * 1024)


def test_kdas_conv_state_is_three_tensors_before_0_23() -> None:
    # vllm-0.22.1:vllm/model_executor/layers/mamba/mamba_utils.py:237-267 (kda_state_shape):
    # q, k and v conv states of (K - 1, H x d / tp) each, then (H / tp, d, d); 0.23.0 joins the
    # three into one (:252-260). Kimi-Linear: 32 heads of 128, kernel 4, tp 2.
    old = ssm_state(KIMI, version="0.22.1", tp_size=2)
    assert [(t.name, t.shape) for t in old.groups[0].tensors] == [
        ("conv_q", (3, 2048)),
        ("conv_k", (3, 2048)),
        ("conv_v", (3, 2048)),
        ("recurrent", (16, 128, 128)),
    ]
    new = ssm_state(KIMI, version="0.23.0", tp_size=2)
    assert [(t.name, t.shape) for t in new.groups[0].tensors] == [
        ("conv", (3, 6144)),
        ("recurrent", (16, 128, 128)),
    ]
    assert old.per_sequence_bytes == new.per_sequence_bytes
    # SGLang keeps one conv state, window first (KimiLinearStateShape).
    sglang = ssm_state(KIMI, layout="sglang", tp_size=2)
    assert [t.shape for t in sglang.groups[0].tensors] == [(3, 6144), (16, 128, 128)]
