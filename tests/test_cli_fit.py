"""``decode-ring fit``: the ring's depth fitted to memory, from the worked example, from flags or
from a model's config, pre-load or post-load, and what it publishes.

Every command line runs through ``cli.main`` in this process over a stand-in for the once-cell
(the ``cell`` fixture), from the repository's root. Expected values are the README's, written
out: its worked example (48 layers, 32 sequences of 151.5 MiB = 158,859,264 B, 7,039 MiB of
reserve without the ring, 14.1 GiB free) and Nemotron-Nano-9B-v2 (27 Mamba layers, each a
bfloat16 conv state of (4 - 1) x (128 x 80 + 2 x 8 x 128) channels and a float32 SSM state of
128 heads x 80 x 128 under vLLM: 143,548,416 B a sequence). The whole text of
``fit --example`` is a golden file (tests/golden/fit-example.txt).
"""

from __future__ import annotations

import json

import pytest

from decode_ring.cli.render import render
from decode_ring.preflight import Preflight, PreLoadFreeMemory, fit_ring

from .support import FREE, PER_SEQ, RESERVE, SLOT, FakeCell, GiB, MiB, run, run_json, usage_error

NEMOTRON = "tests/configs/nemotron-nano-9b-v2.json"
NEMOTRON_CONV = 3 * (128 * 80 + 2 * 8 * 128) * 2
NEMOTRON_SSM = 128 * 80 * 128 * 4
NEMOTRON_PER_SEQUENCE = 27 * (NEMOTRON_CONV + NEMOTRON_SSM)  # 143,548,416 B
EXAMPLE_SIZES = [
    "--ssm-layers",
    "48",
    "--max-batch-size",
    "32",
    "--per-seq-state",
    "151.5MiB",
    "--reserve-without-ring",
    "7039MiB",
]


# --- the worked example ---------------------------------------------------------------------------


def test_the_example_fits_depth_one_with_a_warning_and_publishes_it(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, "fit", "--example")
    assert (status, err) == (0, "")
    assert "chosen depth   1" in out
    assert "lowered from 8 to 1" in out
    for rung_line in (
        "8    37.88 GiB    44.75 GiB  no",
        "1     4.73 GiB    11.61 GiB  yes  <- chosen",
    ):
        assert rung_line in out
    assert cell.writes == [1]


def test_the_example_as_json(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    status, report = run_json(capsys, "fit", "--example")
    assert status == 0
    assert (report["requested"], report["slots"], report["fits"]) == (8, 1, True)
    assert "from 8 to 1" in report["warning"]
    assert report["decision"].startswith("ssm decode ring: 1 of 8")
    assert report["refused"] is None
    assert report["published"] == 1
    assert [rung["slots"] for rung in report["rungs"]] == [8, 4, 2, 1, 0]
    assert set(report["rungs"][0]) == {"slots", "ring_bytes", "total_bytes", "fits"}
    assert [rung["fits"] for rung in report["rungs"]] == [False, False, False, True, True]
    assert report["rungs"][3]["ring_bytes"] == 32 * 158_859_264


def test_fit_example_json_inputs(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run_json(capsys, "fit", "--example")
    assert status == 0
    assert out["inputs"] == {
        "ssm_layers": 48,
        "max_batch_size": 32,
        "per_seq_state": PER_SEQ,
        "reserve_without_ring": RESERVE,
        "free": FREE,
        "speculative": False,
        "kv_floor": None,
        "headroom": None,
    }
    assert (out["requested"], out["slots"], out["published"]) == (8, 1, 1)
    assert (out["slot_bytes"], out["limit_bytes"]) == (SLOT, FREE)


def test_flags_given_override_the_example(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = run_json(
        capsys,
        "fit",
        "--example",
        "--ssm-layers",
        "3",
        "--max-batch-size",
        "2",
        "--per-seq-state",
        "1MiB",
        "--reserve-without-ring",
        "1GiB",
        "--free",
        "2GiB",
    )
    assert status == 0
    assert out["inputs"] == {
        "ssm_layers": 3,
        "max_batch_size": 2,
        "per_seq_state": MiB,
        "reserve_without_ring": GiB,
        "free": 2 * GiB,
        "speculative": False,
        "kv_floor": None,
        "headroom": None,
    }
    assert (out["requested"], out["slots"], out["slot_bytes"]) == (8, 8, 2 * MiB)
    assert cell.writes == []


def test_fit_without_example_takes_every_flag(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = run_json(
        capsys,
        "fit",
        "--ssm-layers",
        "48",
        "--max-batch-size",
        "32",
        "--per-seq-state",
        "151.5MiB",
        "--reserve-without-ring",
        "7039MiB",
        "--free",
        "14.1GiB",
    )
    assert status == 0
    assert (out["slots"], out["slot_bytes"], out["beside_bytes"]) == (1, SLOT, RESERVE)


def test_fit_speculative_requests_no_ring(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = run_json(capsys, "fit", "--example", "--speculative")
    assert status == 0
    assert (out["requested"], out["slots"], out["inputs"]["speculative"]) == (0, 0, True)
    assert cell.writes == []


def test_fit_speculative_tokens_turn_speculative_decode_on(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = run_json(capsys, "fit", "--example", "--speculative-tokens", "1")
    assert (status, out["requested"], out["inputs"]["speculative"]) == (0, 0, True)
    status, out = run_json(capsys, "fit", "--example", "--speculative-tokens", "0")
    assert (status, out["requested"], out["inputs"]["speculative"]) == (0, 8, False)


def test_fit_post_load(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run_json(capsys, "fit", "--example", "--kv-floor", "1GiB", "--headroom", "8GiB")
    assert status == 0
    assert out["yardstick"] == "post-load KV headroom"
    assert out["inputs"]["kv_floor"] == GiB and out["inputs"]["headroom"] == 8 * GiB
    assert (out["beside_bytes"], out["limit_bytes"], out["slots"]) == (GiB, 8 * GiB, 1)
    assert (out["inputs"]["reserve_without_ring"], out["inputs"]["free"]) == (None, None)


def test_fit_post_load_needs_no_pre_load_pair(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    # Without --example: --reserve-without-ring and --free are not asked for.
    status, out = run_json(
        capsys,
        "fit",
        "--ssm-layers",
        "48",
        "--max-batch-size",
        "32",
        "--per-seq-state",
        "151.5MiB",
        "--kv-floor",
        "0",
        "--headroom",
        "64GiB",
    )
    assert (status, out["slots"], out["beside_bytes"]) == (0, 8, 0)


def test_fit_a_pinned_depth_that_does_not_fit_is_refused(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, "fit", "--example", "--ssm-decode-ring-slots", "4")
    assert status == 1
    assert err == (
        "decode-ring: refused: ring depth 4 does not fit pre-load free memory: ring 4 x batch 32 "
        "x per-sequence state 151.50 MiB = 18.94 GiB, + reserve without ring 6.87 GiB = "
        "25.81 GiB > free memory 14.10 GiB; the deepest depth that fits is 1\n"
    )
    assert "chosen depth   none: the server refuses to boot" in out
    assert cell.writes == [4]


def test_fit_json_refusal_is_one_object(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run_json(capsys, "fit", "--example", "--ssm-decode-ring-slots", "2")
    assert status == 1
    assert (out["slots"], out["fits"]) == (2, False)
    assert capsys.readouterr() == ("", "")


def test_fit_auto_publishes_nothing_first(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = run_json(capsys, "fit", "--example", "--ssm-decode-ring-slots", "auto")
    assert (status, out["slots"]) == (0, 1)
    assert cell.writes == [1]


def test_fit_with_a_config(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run_json(
        capsys,
        "fit",
        "--config",
        NEMOTRON,
        "--max-batch-size",
        "256",
        "--reserve-without-ring",
        "20GiB",
        "--free",
        "44GiB",
    )
    # README: tp 1, batch 256 keeps depth 0 (one slot is 34.22 GiB).
    assert (status, out["slots"]) == (0, 0)
    assert out["inputs"]["ssm_layers"] == 27
    assert out["inputs"]["per_seq_state"] == 143_548_416
    assert out["slot_bytes"] == 36_748_394_496


def test_fit_with_a_config_follows_the_model_flags(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    common: tuple[str, ...] = ("fit", "--config", NEMOTRON, "--max-batch-size", "1")
    common = (*common, "--reserve-without-ring", "1GiB", "--free", "2GiB")
    # README: 68.45 MiB per sequence at tp 2.
    status, out = run_json(capsys, *common, "--tp", "2")
    assert (status, out["inputs"]["per_seq_state"]) == (0, 143_548_416 // 2)
    # float32 conv state: (3 x 12288) x 4 B more per layer, 27 layers.
    status, out = run_json(capsys, *common, "--conv-dtype", "float32")
    assert out["inputs"]["per_seq_state"] == 143_548_416 + 27 * 3 * 12288 * 2
    # bfloat16 SSM state: half of 128 x 80 x 128 x 4 B per layer.
    status, out = run_json(capsys, *common, "--ssm-dtype", "bfloat16")
    assert out["inputs"]["per_seq_state"] == 143_548_416 - 27 * 128 * 80 * 128 * 2
    # SGLang lays the same bytes out as vLLM; metrale keeps all 4 columns, float32.
    status, out = run_json(capsys, *common, "--layout", "sglang")
    assert out["inputs"]["per_seq_state"] == 143_548_416
    status, out = run_json(capsys, *common, "--layout", "metrale")
    assert out["inputs"]["per_seq_state"] == 27 * (4 * 12288 * 4 + 128 * 80 * 128 * 4)
    # One draft token widens vLLM's conv window from 3 to 4 columns.
    status, out = run_json(capsys, *common, "--speculative-tokens", "1")
    assert out["inputs"]["per_seq_state"] == 143_548_416 + 27 * 12288 * 2
    assert out["inputs"]["speculative"] is True


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--kv-floor", "1GiB"], "--kv-floor and --headroom go together"),
        (["--headroom", "1GiB"], "--kv-floor and --headroom go together"),
        (
            ["--kv-floor", "1GiB", "--headroom", "2GiB", "--free", "1GiB"],
            "--reserve-without-ring and --free fit pre-load; --kv-floor and --headroom "
            "post-load: give one pair",
        ),
        (
            ["--kv-floor", "1GiB", "--headroom", "2GiB", "--reserve-without-ring", "1GiB"],
            "--reserve-without-ring and --free fit pre-load; --kv-floor and --headroom "
            "post-load: give one pair",
        ),
        (
            ["--config", NEMOTRON, "--ssm-layers", "1"],
            "--config gives the SSM layers and the per-sequence state: "
            "drop --ssm-layers and --per-seq-state",
        ),
        (
            ["--config", NEMOTRON, "--per-seq-state", "1MiB"],
            "--config gives the SSM layers and the per-sequence state: "
            "drop --ssm-layers and --per-seq-state",
        ),
    ],
)
def test_fit_flag_combinations_that_are_refused(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert usage_error(capsys, "fit", "--example", *args) == message


def test_fit_names_every_missing_flag(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    assert usage_error(capsys, "fit") == (
        "fit needs --ssm-layers, --max-batch-size, --per-seq-state, --reserve-without-ring, "
        "--free (or --config, or --example)"
    )
    assert usage_error(
        capsys, "fit", "--ssm-layers", "1", "--kv-floor", "1GiB", "--headroom", "1GiB"
    ) == ("fit needs --max-batch-size, --per-seq-state (or --config, or --example)")
    assert usage_error(
        capsys, "fit", "--config", NEMOTRON, "--reserve-without-ring", "1GiB", "--free", "1GiB"
    ) == ("fit needs --max-batch-size")


def test_fit_a_slot_past_usize_is_a_usage_error(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    big = str(2**63)
    assert usage_error(capsys, "fit", "--example", "--max-batch-size", big) == (
        f"max batch size {big} x per-sequence state {PER_SEQ} B exceeds "
        f"the {2**64 - 1} B a usize holds"
    )


# --- room, refusals and the yardsticks ------------------------------------------------------------


def test_with_room_the_full_ring_stands_without_warning(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    status, report = run_json(capsys, "fit", *EXAMPLE_SIZES, "--free", "64GiB")
    assert status == 0
    assert (report["slots"], report["warning"], report["published"]) == (8, None, None)
    assert cell.writes == []


def test_an_explicit_depth_is_not_shrunk_and_is_refused(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, "fit", "--example", "--ssm-decode-ring-slots", "8", "--json")
    assert status == 1
    assert out.count("\n") == 1
    report = json.loads(out)
    assert (report["slots"], report["fits"], report["warning"]) == (8, False, None)
    assert "ring 8 x batch 32 x per-sequence state 151.50 MiB" in report["refused"]
    assert err.count("\n") == 1
    assert err.startswith("decode-ring: refused: ")


def test_a_reserve_that_alone_exceeds_free_memory_is_refused(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, "fit", "--example", "--reserve-without-ring", "20GiB")
    assert status == 1
    assert "chosen depth   none: the server refuses to boot" in out
    assert "<- chosen" not in out
    assert "warning        -" in out
    assert err == (
        "decode-ring: refused: the reserve without ring alone, 20.00 GiB, exceeds free memory "
        "14.10 GiB by 5.90 GiB; no ring depth helps, 0 included\n"
    )


def test_no_depth_fitting_is_said_as_it_is(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, "fit", "--example", "--free", "5GiB")
    assert status == 1
    assert "<- chosen" not in out
    assert "      0          0 B     6.87 GiB  no" in out
    assert err == (
        "decode-ring: refused: the reserve without ring alone, 6.87 GiB, exceeds free memory "
        "5.00 GiB by 1.87 GiB; no ring depth helps, 0 included\n"
    )


def test_a_pinned_depth_that_does_not_fit_names_the_deepest_that_does(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, "fit", "--example", "--ssm-decode-ring-slots", "4")
    assert status == 1
    assert "4    18.94 GiB    25.81 GiB  no   <- pinned, refused" in out
    assert err.endswith("the deepest depth that fits is 1\n")


def test_a_json_refusal_is_one_object(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    status, report = run_json(capsys, "fit", "--example", "--free", "1GiB")
    assert status == 1
    assert report["fits"] is False


def test_reserve_ring_full_requests_eight_under_speculative_decode(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ("fit", *EXAMPLE_SIZES, "--free", "64GiB", "--speculative")
    _, report = run_json(capsys, *args)
    assert (report["requested"], report["slots"]) == (0, 0)
    monkeypatch.setenv("METRALE_SSM_RESERVE_RING_FULL", "0")
    _, report = run_json(capsys, *args)
    assert (report["requested"], report["slots"]) == (8, 8)


@pytest.mark.parametrize(
    ("layers", "requested", "rule"),
    [
        (
            "1",
            8,
            "METRALE_SSM_RESERVE_RING_FULL is set ('1'): reserve the full depth, whatever the "
            "decision (default)",
        ),
        ("0", 0, "no SSM layers"),  # no layer: no ring, set or not
    ],
)
def test_reserve_ring_full_needs_an_ssm_layer(
    cell: FakeCell,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    layers: str,
    requested: int,
    rule: str,
) -> None:
    monkeypatch.setenv("METRALE_SSM_RESERVE_RING_FULL", "1")
    _, report = run_json(
        capsys,
        *("fit", "--ssm-layers", layers, "--per-seq-state", "1MiB", "--max-batch-size", "8"),
        *("--reserve-without-ring", "1GiB", "--free", "10GiB"),
    )
    assert (report["requested"], report["request_rule"]) == (requested, rule)


def test_post_load_leaves_what_does_not_fit_to_the_kv_budget(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run(capsys, "fit", "--example", "--kv-floor", "20GiB", "--headroom", "10GiB")
    assert status == 0
    assert "KV budget stage" in out
    assert cell.writes == [0]
    cell.value = None  # as in a fresh process: nothing published yet
    _, report = run_json(capsys, "fit", "--example", "--kv-floor", "1GiB", "--headroom", "12GiB")
    assert (report["slots"], report["yardstick"]) == (2, "post-load KV headroom")


# --- sizes as operators write them ----------------------------------------------------------------


def test_a_bare_fractional_size_is_refused_with_a_hint(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    message = usage_error(capsys, "fit", "--example", "--free", "14.1")
    assert "bytes must be whole; did you mean 14.1GiB?" in message
    assert "Ki/KiB" in message and "K/KB" in message


@pytest.mark.parametrize("free", ["14.1G", "14.1g", "14.1 GB", "14.1GB"])
def test_operators_unit_spellings_are_taken_with_kubernetes_meaning(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], free: str
) -> None:
    _, report = run_json(capsys, "fit", "--example", "--free", free)
    assert report["limit_bytes"] == 14_100_000_000


def test_five_dot_and_dot_five_gib_behave_alike(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    _, five = run_json(capsys, "fit", "--example", "--free", "5.GiB")
    _, half = run_json(capsys, "fit", "--example", "--free", ".5GiB")
    assert (five["limit_bytes"], half["limit_bytes"]) == (5 * GiB, GiB // 2)


# --- from a model's config ----------------------------------------------------------------------


def test_a_config_gives_the_layers_and_the_state(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("fit", "--config", NEMOTRON, "--max-batch-size", "256")
    _, report = run_json(capsys, *args, "--reserve-without-ring", "20GiB", "--free", "80GiB")
    assert report["inputs"]["ssm_layers"] == 27
    assert report["inputs"]["per_seq_state"] == NEMOTRON_PER_SEQUENCE
    # 60 GiB of room: one slot (256 sequences) is 34.2 GiB, so depth 1.
    assert report["slots"] == 1


def test_a_configs_speculative_tokens_turn_speculative_decode_on(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    _, report = run_json(
        capsys,
        *("fit", "--config", NEMOTRON, "--max-batch-size", "8"),
        *("--reserve-without-ring", "20GiB", "--free", "80GiB", "--speculative-tokens", "2"),
    )
    assert (report["requested"], report["slots"]) == (0, 0)
    # vLLM widens the conv window by the draft tokens: (3 + 2) columns.
    widened = 27 * (5 * (128 * 80 + 2 * 8 * 128) * 2 + NEMOTRON_SSM)
    assert report["inputs"]["per_seq_state"] == widened


FIT_CONFIG = ["fit", "--config", NEMOTRON, "--max-batch-size", "8"]
FIT_CONFIG += ["--reserve-without-ring", "20GiB", "--free", "80GiB"]


def test_fit_config_records_the_model(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run_json(capsys, *FIT_CONFIG, "--tp", "2", "--layout", "sglang")
    assert status == 0
    assert out["model"] == {
        "config": NEMOTRON,
        "family": "nemotron_h",
        "model_type": "nemotron_h",
        "layout": "sglang",
        "tp_size": 2,
        "conv_dtype": "bfloat16",
        "conv_dtype_rule": out["model"]["conv_dtype_rule"],
        "ssm_dtype": "float32",
        "ssm_dtype_rule": out["model"]["ssm_dtype_rule"],
        "speculative_tokens": 0,
    }
    assert "SGLang" in out["model"]["conv_dtype_rule"]
    status, text, _ = run(capsys, *FIT_CONFIG, "--tp", "2", "--layout", "sglang")
    lines = text.splitlines()
    assert lines[1] == f"  config                 {NEMOTRON!a}"
    assert (
        lines[2]
        == "  model                  nemotron_h (nemotron_h), sglang layout (SGLang 0.5.23), "
        "tp rank 1 of 2"
    )
    assert lines[3].startswith("  conv state dtype       bfloat16 (SGLang")
    assert lines[4].startswith("  ssm state dtype        float32 (")
    _, out = run_json(capsys, "fit", "--example")
    assert out["model"] is None


def test_fit_shows_the_rule_behind_the_requested_depth(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, out = run_json(capsys, *FIT_CONFIG, "--speculative-tokens", "2")
    assert (out["requested"], out["request_rule"]) == (0, "speculative decode")
    _, text, _ = run(capsys, *FIT_CONFIG, "--speculative-tokens", "2")
    assert "  requested by           speculative decode\n" in text
    monkeypatch.setenv("METRALE_SSM_RESERVE_RING_FULL", "0")
    _, out = run_json(capsys, *FIT_CONFIG, "--speculative-tokens", "2")
    assert out["requested"] == 8
    assert out["request_rule"] == (
        "METRALE_SSM_RESERVE_RING_FULL is set ('0'): reserve the full depth, whatever the "
        "decision (speculative decode)"
    )
    assert out["environment"]["METRALE_SSM_RESERVE_RING_FULL"] == "0"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tp", "2"], "--tp shapes the state read from --config: give --config, or drop it"),
        (
            ["--layout", "sglang", "--conv-dtype", "float32", "--ssm-dtype", "bfloat16"],
            "--layout, --conv-dtype, --ssm-dtype shape the state read from --config: give "
            "--config, or drop them",
        ),
        (["--tp", "1"], "--tp shapes the state read from --config: give --config, or drop it"),
        (
            ["--config", NEMOTRON],
            "--example is the worked example's model and --config another: give one",
        ),
        (
            ["--free", "1GiB", "--free", "2GiB"],
            "argument --free: given twice, with different values",
        ),
        (
            ["--max-batch-size", "4", "--max-batch-size", "8"],
            "argument --max-batch-size: given twice, with different values",
        ),
        (["--max-batch-size", "0"], "argument --max-batch-size: must be at least 1"),
    ],
)
def test_flags_that_would_do_nothing_are_refused(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert usage_error(capsys, "fit", "--example", *args) == message


def test_a_flag_repeated_with_the_same_value_stands(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = run_json(capsys, "fit", "--example", "--free", "1GiB", "--free", "1024MiB")
    assert (status, out["limit_bytes"]) == (1, GiB)


def test_the_hint_fits_the_command(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    # The case: --config given, so neither --config nor --example would help.
    args = ["fit", "--config", NEMOTRON, "--max-batch-size", "8", "--free", "10GiB"]
    assert usage_error(capsys, *args) == "fit needs --reserve-without-ring"
    assert usage_error(capsys, "fit", "--ssm-layers", "1", "--per-seq-state", "1MiB") == (
        "fit needs --max-batch-size, --reserve-without-ring, --free (or --example)"
    )
    assert usage_error(capsys, "fit", "--max-batch-size", "1") == (
        "fit needs --ssm-layers, --per-seq-state, --reserve-without-ring, --free "
        "(or --config, or --example)"
    )


def test_a_bare_number_under_a_mebibyte_asks_for_a_unit(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    # The case: --free 80 was 80 bytes and booted nothing, with no hint.
    assert usage_error(capsys, "fit", "--example", "--free", "80") == (
        "argument --free: '80' is 80 bytes: did you mean 80 GiB? A bare number is bytes; "
        "write 80GiB, or 80B to mean bytes"
    )
    for free, limit in (("80B", 80), ("0", 0), ("1048576", MiB), ("80G", 80 * 10**9)):
        _, out = run_json(capsys, "fit", "--example", "--free", free)
        assert out["limit_bytes"] == limit


def test_an_integer_too_large_says_too_large(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    assert usage_error(capsys, "fit", "--example", "--max-batch-size", "18446744073709551616") == (
        "argument --max-batch-size: too large: '18446744073709551616' exceeds 18446744073709551615"
    )
    assert usage_error(capsys, "fit", "--example", "--max-batch-size", "-1") == (
        "argument --max-batch-size: not a non-negative integer: '-1'"
    )


def test_a_preflight_fitted_from_one_slots_bytes_shows_no_batch() -> None:
    # Through the API a fit may be given one slot's bytes instead of a batch (fit_ring's
    # slot_bytes as an int): the rendering shows neither a batch nor a per-sequence state.
    fit = fit_ring(8, 64 * MiB, PreLoadFreeMemory(reserve_without_ring=GiB, free_mem=80 * GiB))
    lines = render(Preflight(48, False, fit, None)).lines
    assert lines[1:4] == [
        "  ssm layers                      48",
        "  max batch size                   -",
        "  per-sequence state               -",
    ]
