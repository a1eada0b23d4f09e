"""Issue 19: answers an operator can act on.

The plan's reserve per cell and rank, its exit status and its picture; errors
that name what failed; flags that would do nothing refused; models named as
operators hold them. ``cli.main`` runs in this process over a stand-in
once-cell (``test_mutants_cli.cell``), so that mutation testing reaches it;
what needs a fresh interpreter (the Hugging Face cache, imports) runs in one.
Expected values are written out from the configs' published fields.
"""

from __future__ import annotations

import errno
import io
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from decode_ring import cli, snapshots
from decode_ring import plan as sizing
from decode_ring.cli import plot as _plot
from decode_ring.models import AttentionLayers, ModelConfigError
from decode_ring.plan import divided_evenly

from . import test_mutants_cli
from .support import FakeCell, run_cli
from .test_mutants_cli import run, run_json, usage_error

ROOT = Path(__file__).resolve().parent.parent
NEMOTRON = "tests/configs/nemotron-nano-9b-v2.json"
SNAPSHOT = "tests/snapshots/qwen3.5-18b-reap-a3b-coding"
GiB, MiB = 2**30, 2**20
# Nemotron-Nano-9B-v2 under vLLM at tp 1 (tests/test_cli_models.py): 27 Mamba layers of
# 5,316,608 B per sequence; 4 attention layers of 8 KV heads x (128 + 128) x 2 B per token.
STATE = 27 * (3 * (128 * 80 + 2 * 8 * 128) * 2 + 128 * 80 * 128 * 4)
KV_PER_TOKEN = 4 * 8 * (128 + 128) * 2
PLAN = ["plan", "--config", NEMOTRON, "--free", "80GiB", "--weights", "16GiB", "--other", "4GiB"]
PLAN_8K = [*PLAN, "--max-model-len", "8192"]
cell = test_mutants_cli.cell  # the CLI over a stand-in once-cell


# --- the plan's reserve, per cell and rank -------------------------------------


def test_each_cell_carries_every_term_of_its_reserve(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = run_json(capsys, *PLAN_8K, "--tp", "1,4", "--max-batch-size", "16,128")
    assert status == 0
    assert (out["weights_bytes"], out["weights_source"]) == (16 * GiB, "--weights")
    assert (out["other_bytes"], out["max_model_len"]) == (4 * GiB, 8192)
    assert out["formula"] == "weights / tp + other + batch x (state/seq + kv/seq)"
    tp4 = out["rows"][1]
    assert tp4["weights_bytes"] == 4 * GiB  # 16 GiB over 4 ranks
    assert tp4["per_sequence_bytes"] == STATE // 4
    assert tp4["kv_per_sequence_bytes"] == 2 * KV_PER_TOKEN // 8 * 8192  # 2 of 8 KV heads
    batch128 = tp4["cells"][1]
    assert batch128 == {
        "batch": 128,
        "depth": 8,
        "boots": True,
        "weights_bytes": 4 * GiB,
        "other_bytes": 4 * GiB,
        "state_bytes": 128 * STATE // 4,
        "kv_bytes": 128 * KV_PER_TOKEN // 4 * 8192,
        "reserve_without_ring_bytes": 8 * GiB + 128 * (STATE + KV_PER_TOKEN * 8192) // 4,
        "ring_bytes": 8 * 128 * STATE // 4,
        "total_bytes": 8 * GiB + 128 * (STATE + KV_PER_TOKEN * 8192) // 4 + 8 * 128 * STATE // 4,
    }


def test_the_reserve_grows_with_the_batch_so_a_large_batch_does_not_boot(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    # The case: 44 GiB free, Nemotron-Nano-9B-v2 at tp 1 and batch 512. Its live
    # state alone is 512 x 136.9 MiB = 68.4 GiB: the server cannot boot, at any depth.
    args = ["plan", "--config", NEMOTRON, "--free", "44GiB", "--weights", "0", "--tp", "1"]
    status, out = run_json(capsys, *args, "--max-batch-size", "512", "--max-model-len", "1")
    assert status == 1
    (batch512,) = out["rows"][0]["cells"]
    assert batch512["state_bytes"] == 512 * STATE > 68 * GiB
    assert (batch512["depth"], batch512["boots"]) == (None, False)
    assert out["boots"] is False


def test_the_kv_cache_follows_max_model_len(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    base = [*PLAN, "--tp", "1", "--max-batch-size", "8"]
    _, short = run_json(capsys, *base, "--max-model-len", "1024")
    _, long = run_json(capsys, *base, "--max-model-len", "131072")
    assert short["rows"][0]["kv_per_sequence_bytes"] == KV_PER_TOKEN * 1024 == 16 * MiB
    assert long["rows"][0]["kv_per_sequence_bytes"] == KV_PER_TOKEN * 131072 == 2 * GiB


def test_a_model_with_attention_needs_max_model_len(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    assert usage_error(capsys, *PLAN) == (
        "argument --max-model-len: nemotron_h has 4 attention layers, whose KV cache per "
        "sequence grows with it: give it"
    )


def test_kv_heads_split_over_ranks_and_replicate_past_them() -> None:
    gqa = AttentionLayers(
        layer_indices=(3, 7),
        num_attention_heads=16,
        num_key_value_heads=2,
        head_dim=256,
        v_head_dim=256,
        mla=False,
        kv_lora_rank=None,
        qk_rope_head_dim=None,
        model_dtype="float16",
    )
    # 2 layers x heads on the rank x (256 + 256) x 2 B per token.
    assert gqa.kv_bytes_per_token(1, 2) == 2 * 2 * 512 * 2
    assert gqa.kv_bytes_per_token(2, 2) == 2 * 1 * 512 * 2
    assert gqa.kv_bytes_per_token(8, 2) == 2 * 1 * 512 * 2  # replicated, not 1/4
    assert gqa.page_bytes_per_token(2, 1) == 1 * 512 * 1  # one layer, fp8


def test_mla_keeps_one_latent_per_token_on_every_rank() -> None:
    # DeepSeek-V3's MLA: kv_lora_rank 512 + qk_rope_head_dim 64, one latent per token.
    mla = AttentionLayers(
        layer_indices=tuple(range(61)),
        num_attention_heads=128,
        num_key_value_heads=1,
        head_dim=512 + 64,
        v_head_dim=0,
        mla=True,
        kv_lora_rank=512,
        qk_rope_head_dim=64,
        model_dtype="bfloat16",
    )
    assert mla.kv_bytes_per_token(1, 2) == 61 * 576 * 2
    assert mla.kv_bytes_per_token(8, 2) == 61 * 576 * 2
    # SGLang's use_mla_nope keeps the latent without its RoPE part.
    assert mla.kv_bytes_per_token(1, 2, latent_rope=False) == 61 * 512 * 2


def test_weights_divide_evenly_rounded_up() -> None:
    assert [divided_evenly(10, tp) for tp in (1, 2, 3, 4)] == [10, 5, 4, 3]


def test_the_text_says_the_formula_once_under_the_grid(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run(capsys, *PLAN_8K)
    assert status == 0
    lines = out.splitlines()
    assert lines[2] == "weights 16.00 GiB (--weights), other 4.00 GiB, max model len 8,192"
    assert out.count("reserve per rank = ") == 1
    formula = lines.index("reserve per rank = weights / tp + other + batch x (state/seq + kv/seq)")
    assert formula == len(lines) - 4
    assert lines[formula + 1] == (
        "  the weights divided evenly by tp; the ring (depth x batch x state/seq) goes beside it"
    )


# --- a snapshot directory ---------------------------------------------------------


def test_the_fixture_snapshot_carries_the_checkpoints_size() -> None:
    # bryce-hoehn/Qwen3.5-18B-REAP-A3B-Coding's index (tests/snapshots/.../PROVENANCE.md).
    assert snapshots.snapshot_weights(ROOT / SNAPSHOT) == 37_087_995_136


def test_a_plan_on_a_snapshot_takes_the_weights_from_its_index(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "config.json").write_text((ROOT / NEMOTRON).read_text())
    index = {"metadata": {"total_size": 17_780_000_000}, "weight_map": {}}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
    args = ["plan", "--config", str(tmp_path), "--free", "80GiB", "--max-model-len", "8192"]
    status, out = run_json(capsys, *args, "--tp", "1,2")
    assert status == 0
    assert out["weights_bytes"] == 17_780_000_000
    assert out["weights_source"] == "model.safetensors.index.json metadata.total_size"
    assert [row["weights_bytes"] for row in out["rows"]] == [17_780_000_000, 8_890_000_000]
    # --weights wins over the index, and says so.
    _, out = run_json(capsys, *args, "--weights", "1GiB")
    assert (out["weights_bytes"], out["weights_source"]) == (GiB, "--weights")


def test_a_snapshot_without_an_index_needs_weights(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "config.json").write_text((ROOT / NEMOTRON).read_text())
    assert usage_error(capsys, "plan", "--config", str(tmp_path), "--free", "80GiB") == (
        "plan needs --weights SIZE, the whole checkpoint's size (the snapshot has no "
        "model.safetensors.index.json)"
    )
    assert usage_error(capsys, "plan", "--config", NEMOTRON, "--free", "80GiB") == (
        "plan needs --weights SIZE, the whole checkpoint's size (a snapshot directory's "
        "model.safetensors.index.json would give it)"
    )


@pytest.mark.parametrize(
    ("index", "problem"),
    [
        ('{"metadata": {"total_size": -1}}', "field 'metadata.total_size'"),
        ('{"metadata": {"total_size": "1"}}', "field 'metadata.total_size'"),
        ('{"metadata": {}}', "field 'metadata.total_size'"),
        ("[1]", "JSON is list, not an object"),
        ('{"metadata": ', "malformed JSON: Expecting value at line 1 column 14"),
    ],
)
def test_a_bad_index_is_one_line(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], tmp_path: Path, index: str, problem: str
) -> None:
    (tmp_path / "config.json").write_text((ROOT / NEMOTRON).read_text())
    (tmp_path / "model.safetensors.index.json").write_text(index)
    message = usage_error(capsys, "plan", "--config", str(tmp_path), "--free", "80GiB")
    assert message.startswith(f"{str(tmp_path / 'model.safetensors.index.json')!a}: ")
    assert problem in message


# --- full depth, exit status -------------------------------------------------------


def test_full_depth_up_to_batch_is_none_when_no_batch_fits(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["plan", "--config", NEMOTRON, "--free", "10GiB", "--weights", "16GiB"]
    status, out = run_json(capsys, *args, "--max-model-len", "8192", "--tp", "1,8")
    assert status == 0  # tp 8 holds 2 GiB of weights: some cell boots
    assert [row["full_depth"] for row in out["rows"]] == ["none", "48"]
    assert out["rows"][0]["largest_full_depth_batch"] == 0
    # 8 GiB beside 2 GiB of weights; 9 states and the KV cache per sequence, on 1 of 8 ranks.
    assert 8 * GiB // ((9 * STATE + KV_PER_TOKEN * 8192) // 8) == 48
    status, text, _ = run(capsys, *args, "--max-model-len", "8192", "--tp", "1")
    assert status == 1
    assert text.splitlines()[5].split()[-1] == "none"


def test_full_depth_up_to_batch_is_a_dash_when_the_full_depth_is_not_requested(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, out = run_json(capsys, *PLAN_8K, "--speculative-tokens", "1")
    assert out["requested"] == 0
    assert {row["full_depth"] for row in out["rows"]} == {"-"}
    assert {row["largest_full_depth_batch"] for row in out["rows"]} == {None}
    monkeypatch.setenv("METRALE_SSM_DECODE_RING", "0")
    _, text, _ = run(capsys, *PLAN_8K)
    assert [line.split()[-1] for line in text.splitlines()[5:9]] == ["-"] * 4


def test_a_plan_where_no_cell_boots_exits_one_with_one_line(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["plan", "--config", NEMOTRON, "--free", "1GiB", "--weights", "16GiB"]
    status, out, err = run(capsys, *args, "--other", "4GiB", "--max-model-len", "1")
    assert status == 1
    # tp 8, batch 8: 2 GiB of weights + 4 GiB other + 8 x (17,943,552 B of state + 2,048 B of
    # KV for one token) = 6.134 GiB.
    assert err == (
        "decode-ring: refused: no cell of the plan boots; the smallest reserve, tp 8 at batch 8, "
        "is 6.13 GiB > free memory 1.00 GiB\n"
    )
    assert "tp" in out


# --- a plan without a config ----------------------------------------------------------


def test_a_plan_runs_from_layers_and_state_without_a_config(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["plan", "--ssm-layers", "48", "--per-seq-state", "151.5MiB", "--free", "80GiB"]
    status, out = run_json(capsys, *args, "--weights", "16GiB", "--tp", "1,3")
    assert status == 0
    assert (out["ssm_layers"], out["source"], out["layout"]) == (48, None, None)
    assert [row["per_sequence_bytes"] for row in out["rows"]] == [158_859_264, 52_953_088]
    assert [row["kv_per_sequence_bytes"] for row in out["rows"]] == [0, 0]
    assert usage_error(capsys, "plan", "--ssm-layers", "48", "--free", "1GiB") == (
        "plan needs --config, or --per-seq-state"
    )
    assert usage_error(capsys, *args, "--weights", "1GiB", "--layout", "sglang") == (
        "--layout shapes the state read from --config: give --config, or drop it"
    )
    assert usage_error(capsys, *args, "--weights", "1GiB", "--max-model-len", "8") == (
        "--max-model-len shapes the state read from --config: give --config, or drop it"
    )
    assert usage_error(capsys, *PLAN_8K, "--ssm-layers", "4") == (
        "--config gives the SSM layers and the per-sequence state: "
        "drop --ssm-layers and --per-seq-state"
    )


# --- the picture ----------------------------------------------------------------------


@pytest.fixture
def matplotlib_here() -> None:
    pytest.importorskip("matplotlib", reason="matplotlib not installed: pip install '.[plot]'")


def test_the_picture_has_discrete_colours_a_legend_and_the_inputs(
    cell: FakeCell, matplotlib_here: None
) -> None:
    import matplotlib.pyplot as pyplot

    grid = sizing.plan(
        NEMOTRON,
        44 * GiB,
        sizing.Reserve(16 * GiB, "--weights", 4 * GiB, 8192),
        (1, 3, 8),
        (8, 64, 512),
    )
    figure = _plot.plan_figure(grid)
    try:
        (legend,) = figure.legends
        labels = [text.get_text() for text in legend.get_texts()]
        assert labels == [
            *(f"depth {depth}" for depth in (0, 1, 2, 4, 8)),
            "refused (does not boot)",
            "cannot split over tp",
        ]
        colours = {tuple(patch.get_facecolor()) for patch in legend.get_patches()}
        assert len(colours) == 7  # one colour per depth, refused and cannot split
        (axes,) = figure.axes
        assert axes.get_title() == (
            "decode ring depth per rank: nemotron_h (vllm), requested depth 8\n"
            "free 44.00 GiB, weights 16.00 GiB / tp, other 4.00 GiB, max model len 8,192"
        )
        cells = [text.get_text() for text in axes.texts]
        # The table's columns: every cell, "cannot split" for tp 3, the full depth after each row.
        assert cells[:3] == ["8", "0", "refused"]
        assert "cannot split" in cells
        assert [label.get_text() for label in axes.get_yticklabels()] == [
            "tp 1\nstate 136.90 MiB\nkv 128.00 MiB",
            "tp 3",
            "tp 8\nstate 17.11 MiB\nkv 16.00 MiB",
        ]
        assert [label.get_text() for label in axes.get_xticklabels()] == ["8", "64", "512"]
    finally:
        pyplot.close(figure)


def test_plot_writes_exactly_the_path_given(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], tmp_path: Path, matplotlib_here: None
) -> None:
    target = tmp_path / "grid"
    status, _, err = run(capsys, *PLAN_8K, "--plot", str(target))
    assert (status, err) == (0, f"decode-ring: wrote {target}\n")
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(tmp_path.iterdir()) == [target]  # no grid.png beside it
    svg = tmp_path / "grid.svg"
    assert run(capsys, *PLAN_8K, "--plot", str(svg))[0] == 0
    assert b"<svg" in svg.read_bytes()[:400]


def test_plot_refuses_a_format_matplotlib_cannot_write(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], tmp_path: Path, matplotlib_here: None
) -> None:
    target = tmp_path / "out.txt"
    message = usage_error(capsys, *PLAN_8K, "--plot", str(target))
    assert message.startswith(f"--plot {str(target)!a}: matplotlib cannot write 'txt' files;")
    assert "png" in message and "svg" in message
    assert not target.exists()


def test_plot_to_a_full_disk_is_one_line_and_74(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], matplotlib_here: None
) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    status, out, err = run(capsys, *PLAN_8K, "--plot", "/dev/full")
    assert (status, out) == (74, "")
    assert err == "decode-ring: error: cannot write '/dev/full': No space left on device\n"


# --- errors that name what failed --------------------------------------------------------


def test_an_input_path_that_cannot_be_read_says_so(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    long = "a" * 5000
    assert usage_error(capsys, "state", "--config", long) == (
        f"cannot read {long!a}: File name too long"
    )
    folder = tmp_path / "config.json"
    folder.mkdir()
    assert usage_error(capsys, "state", "--config", str(tmp_path)) == (
        f"cannot read {str(folder)!a}: Is a directory"
    )
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    assert usage_error(capsys, "state", "--config", str(loop)) == (
        f"cannot read {str(loop)!a}: Too many levels of symbolic links (a symlink loop)"
    )
    looped = tmp_path / "looped"
    looped.mkdir()
    (looped / "config.json").symlink_to(looped / "config.json")
    assert usage_error(capsys, "state", "--config", str(looped)) == (
        f"cannot read {str(looped / 'config.json')!a}: Too many levels of symbolic links "
        "(a symlink loop)"
    )
    assert usage_error(capsys, "state", "--config", str(tmp_path / "none.json")) == (
        f"cannot read {str(tmp_path / 'none.json')!a}: No such file or directory"
    )


def test_the_api_raises_model_config_error_not_os_error(tmp_path: Path) -> None:
    with pytest.raises(ModelConfigError, match="File name too long"):
        snapshots.resolve_model("a" * 5000)
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(ModelConfigError, match="symlink loop"):
        snapshots.resolve_model(str(loop))


def test_a_read_error_is_whole_and_never_says_at_at(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    control = tmp_path / "control.json"
    control.write_text('{"a": "x\ny"}')
    assert usage_error(capsys, "state", "--config", str(control)) == (
        f"{str(control)!a}: malformed JSON: Invalid control character at line 1 column 9"
    )
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe{")
    assert usage_error(capsys, "state", "--config", str(binary)) == (
        f"cannot read {str(binary)!a}: not UTF-8 text ('utf-8' codec can't decode byte 0xff in "
        "position 0: invalid start byte)"
    )


def test_an_empty_path_is_an_error_not_the_current_directory(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    assert usage_error(capsys, "state", "--config", "").startswith("empty path; give a")


def test_an_os_error_while_computing_is_a_read_error(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def unreadable(args: object) -> object:
        raise OSError(errno.EIO, "Input/output error", "/models/x/config.json")

    monkeypatch.setitem(cli.COMMANDS, "state", replace(cli.COMMANDS["state"], run=unreadable))
    assert usage_error(capsys, "state", "--config", "x") == (
        "cannot read '/models/x/config.json': Input/output error"
    )


# --- fit says what it read and why ----------------------------------------------------------


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
        == "  model                  nemotron_h (nemotron_h), sglang layout, tp rank 1 of 2"
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


def test_max_batch_size_zero_is_refused_everywhere(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    for args in (
        ["fit", "--example", "--max-batch-size", "0"],
        ["state", "--config", NEMOTRON, "--max-batch-size", "0"],
        [*PLAN_8K, "--max-batch-size", "0"],
    ):
        assert usage_error(capsys, *args) == "argument --max-batch-size: must be at least 1"


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


# --- messages ------------------------------------------------------------------------------


def test_a_dtype_flag_is_named_as_typed(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    for flag in ("--ssm-dtype", "--conv-dtype"):
        message = usage_error(capsys, "state", "--config", NEMOTRON, flag, "float64")
        assert message.startswith(f"argument {flag}: unknown dtype 'float64'")


def test_an_integer_too_large_says_too_large(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    assert usage_error(capsys, "fit", "--example", "--max-batch-size", "18446744073709551616") == (
        "argument --max-batch-size: too large: '18446744073709551616' exceeds 18446744073709551615"
    )
    assert usage_error(capsys, "fit", "--example", "--max-batch-size", "-1") == (
        "argument --max-batch-size: not a non-negative integer: '-1'"
    )


def test_layer_counts_have_one_limit(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    # The models refuse more than 100,000 layers in a config; so does --ssm-layers.
    assert usage_error(capsys, "decide", "--ssm-layers", "100001") == (
        "argument --ssm-layers: 100001 layers is implausible (at most 100,000)"
    )
    status, out = run_json(capsys, "decide", "--ssm-layers", "100000")
    assert (status, out["ssm_layers"]) == (0, 100_000)


# --- sizes -----------------------------------------------------------------------------------


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


# --- the environment ----------------------------------------------------------------------------


def test_a_value_that_is_not_utf8_is_shown_as_such(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if not os.supports_bytes_environ:
        pytest.skip("no bytes environment here")
    monkeypatch.setitem(os.environb, b"METRALE_DISABLE_WATCHDOGS", b"\xff")
    monkeypatch.setenv("METRALE_SSM_DECODE_RING", "<not valid Unicode>")
    _, out = run_json(capsys, "decide", "--ssm-layers", "4")
    assert out["environment"]["METRALE_DISABLE_WATCHDOGS"] is None
    assert out["environment"]["METRALE_SSM_DECODE_RING"] == "<not valid Unicode>"
    assert out["environment_not_utf8"] == ["METRALE_DISABLE_WATCHDOGS"]
    _, text, _ = run(capsys, "decide", "--ssm-layers", "4")
    assert "METRALE_DISABLE_WATCHDOGS      (not valid UTF-8)\n" in text
    assert "METRALE_SSM_DECODE_RING        '<not valid Unicode>'\n" in text


# --- JSON errors, help ------------------------------------------------------------------------


def test_a_usage_error_with_json_is_a_json_object_too(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, "fit", "--example", "--free", "80", "--json")
    assert status == 2
    assert json.loads(out) == {"error": err[len("decode-ring: error: ") : -1], "status": 2}
    assert err.count("\n") == 1


def test_a_bare_decode_ring_suggests_help(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    assert usage_error(capsys) == (
        "no command: give one of decide, fit, state, plan, vllm, sglang "
        "(decode-ring --help says more)"
    )


# --- models as operators hold them ---------------------------------------------------------------


def test_decide_takes_the_ssm_layers_from_the_model(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = run_json(capsys, "decide", "--config", NEMOTRON)
    assert (status, out["ssm_layers"], out["slots"]) == (0, 27, 8)
    assert usage_error(capsys, "decide", "--config", NEMOTRON, "--ssm-layers", "4") == (
        "--config gives the SSM layers: drop --ssm-layers"
    )


def test_config_dash_reads_stdin(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO((ROOT / NEMOTRON).read_text()))
    status, out = run_json(capsys, "state", "--config", "-")
    assert (status, out["ssm_layers"], out["source"]) == (0, 27, None)
    monkeypatch.setattr("sys.stdin", io.StringIO("{"))
    assert usage_error(capsys, "state", "--config", "-") == (
        "stdin: malformed JSON: Expecting property name enclosed in double quotes at line 1 "
        "column 2"
    )


def cache_folder(cache: Path, repo: str, revision: str = "abc123") -> Path:
    """A Hugging Face cache entry for ``repo`` holding Nemotron's config and an index."""
    folder = cache / f"models--{repo.replace('/', '--')}"
    snapshot = folder / "snapshots" / revision
    snapshot.mkdir(parents=True)
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text(revision)
    (snapshot / "config.json").write_text((ROOT / NEMOTRON).read_text())
    index = {"metadata": {"total_size": 17_780_000_000}}
    (snapshot / "model.safetensors.index.json").write_text(json.dumps(index))
    return folder


def test_a_cache_folder_resolves_to_its_snapshot(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = cache_folder(tmp_path, "nvidia/NVIDIA-Nemotron-Nano-9B-v2")
    status, out = run_json(capsys, "state", "--config", str(folder))
    assert (status, out["ssm_layers"]) == (0, 27)
    assert out["source"] == str(folder / "snapshots" / "abc123" / "config.json")
    args = ["plan", "--config", str(folder), "--free", "80GiB", "--max-model-len", "8"]
    _, out = run_json(capsys, *args)
    assert out["weights_bytes"] == 17_780_000_000
    (folder / "refs" / "main").unlink()
    (folder / "snapshots" / "def456").mkdir()
    assert usage_error(capsys, "state", "--config", str(folder)) == (
        f"{str(folder)!a}: a cache folder with no refs/main and 2 snapshots; give one of them: "
        "'abc123', 'def456'"
    )


def hub_run(tmp: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``decode-ring ARGS`` in a fresh interpreter, run from ``tmp``, with no
    Hugging Face variables but ``env``."""
    child = {k: v for k, v in os.environ.items() if not k.startswith(("METRALE_", "HF_"))}
    child.update(env, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    return subprocess.run(
        [sys.executable, "-m", "decode_ring", *args],
        cwd=tmp,
        env=child,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_org_name_reads_the_hugging_face_cache(tmp_path: Path) -> None:
    pytest.importorskip("huggingface_hub", reason="pip install '.[hub]'")
    cache_folder(tmp_path / "hub-cache", "nvidia/NVIDIA-Nemotron-Nano-9B-v2")
    repo = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
    completed = hub_run(tmp_path, "state", "--config", repo, "--json", HF_HUB_CACHE="hub-cache")
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["ssm_layers"] == 27
    # HF_HOME: the cache is its hub/ folder.
    cache_folder(tmp_path / "home" / "hub", repo)
    completed = hub_run(tmp_path, "state", "--config", repo, "--json", HF_HOME="home")
    assert completed.returncode == 0, completed.stderr
    completed = hub_run(tmp_path, "state", "--config", "nobody/nothing", HF_HOME="home")
    assert completed.returncode == 2
    assert completed.stderr.startswith(
        "decode-ring: error: cannot read 'nobody/nothing': not a path, and its config.json is "
        "not in the Hugging Face cache at "
    )


def test_org_name_without_huggingface_hub_says_what_to_install(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # import raises ImportError
    assert usage_error(capsys, "state", "--config", "nvidia/NVIDIA-Nemotron-Nano-9B-v2") == (
        "cannot read 'nvidia/NVIDIA-Nemotron-Nano-9B-v2': no such file or directory; to read "
        "ORG/NAME from the Hugging Face cache: pip install 'decode_ring[hub]'"
    )


def test_import_decode_ring_never_imports_huggingface_hub() -> None:
    completed = run_cli("--version")  # a fresh interpreter, for the imports below
    assert completed.returncode in (0, 1)
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, decode_ring, decode_ring.cli, decode_ring.snapshots; "
            "print('huggingface_hub' in sys.modules, 'matplotlib' in sys.modules)",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert probe.stdout == "False False\n", probe.stderr


def test_hf_names_that_are_paths_stay_paths(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: Any
) -> None:
    # An ORG/NAME that exists as a relative path is that path, not a cache lookup.
    (tmp_path / "org").mkdir()
    (tmp_path / "org" / "name").mkdir()
    (tmp_path / "org" / "name" / "config.json").write_text((ROOT / NEMOTRON).read_text())
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    status, out = run_json(capsys, "state", "--config", "org/name")
    assert (status, out["ssm_layers"]) == (0, 27)


# --- the plan under a server -----------------------------------------------------------------


def test_plan_under_sglang_holds_its_running_request_cap(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 18, from SGLang 0.5.23's own sizing: Nemotron-Nano-9B-v2 with 60 GiB after the
    # weights gets 211 state slots and a cap of 42 running requests.
    status, out = run_json(
        capsys, *PLAN_8K, "--server", "sglang", "--tp", "1", "--max-batch-size", "42,43"
    )
    assert status == 0
    (row,) = out["rows"]
    assert row["budget_bytes"] == 80 * GiB - 16 * GiB - 4 * GiB == 60 * GiB
    assert (row["sglang"]["state_slots"], row["sglang"]["max_running_requests"]) == (211, 42)
    assert (row["largest_batch"], row["fits"]) == (42, [True, False])
    assert out["server"] == "sglang"
    assert "depths" not in row and "requested" not in out  # no ring under a server


def test_plan_under_vllm_holds_its_maximum_concurrency(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    from decode_ring.servers import vllm_reservation

    status, out = run_json(capsys, *PLAN_8K, "--server", "vllm", "--tp", "1,8")
    assert status == 0
    budgets = [row["budget_bytes"] for row in out["rows"]]
    assert budgets == [60 * GiB, 80 * GiB - 2 * GiB - 4 * GiB]
    for row, tp in zip(out["rows"], (1, 8), strict=True):
        held = vllm_reservation(
            NEMOTRON,
            tensor_parallel_size=tp,
            max_num_seqs=1,
            max_model_len=8192,
            kv_cache_memory_bytes=row["budget_bytes"],
        )
        assert held.max_concurrency is not None
        assert row["largest_batch"] == int(held.max_concurrency)
        assert row["fits"] == [batch <= row["largest_batch"] for batch in out["batch_sizes"]]
    status, text, _ = run(capsys, *PLAN_8K, "--server", "vllm", "--tp", "1")
    assert "depth" not in text.split("\n\n")[1]  # the grid: yes and no, never a depth
    assert text.splitlines()[-1] == (
        "no ring depth: the decode-rollback ring is the reference server's (--server metrale)"
    )


def test_plan_under_a_server_that_cannot_start_exits_one(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["plan", "--config", NEMOTRON, "--free", "20GiB", "--weights", "16GiB"]
    status, out, err = run(
        capsys,
        *args,
        "--other",
        "4GiB",
        "--max-model-len",
        "8192",
        "--server",
        "sglang",
        "--tp",
        "1",
    )
    assert status == 1
    assert "does not start: the weights and other alone fill free memory" in out
    assert err == (
        "decode-ring: refused: no batch of the plan fits SGLang 0.5.23 at any tensor-parallel "
        "size (the weights and other alone fill free memory)\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--server", "vllm", "--plot", "x.png"],
            "--plot does nothing under --server vllm: the server lays out its own state and "
            "there is no ring to draw; drop it",
        ),
        (
            ["--server", "vllm", "--layout", "sglang", "--ssm-dtype", "float32"],
            "--layout, --ssm-dtype do nothing under --server vllm: the server lays out its own "
            "state and there is no ring to draw; drop them",
        ),
        (
            ["--server", "sglang", "--speculative-tokens", "2"],
            "--speculative-tokens does nothing under --server sglang: the server lays out its "
            "own state and there is no ring to draw; drop it",
        ),
        (["--server", "tgi"], "argument --server: invalid choice: 'tgi'"),
    ],
)
def test_plan_under_a_server_refuses_what_it_would_ignore(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert usage_error(capsys, *PLAN_8K, *args).startswith(message)


def test_plan_under_a_server_needs_a_model_and_a_length(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    assert usage_error(capsys, *PLAN, "--server", "vllm") == (
        "argument --max-model-len: under vllm, a plan fits sequences of this many tokens: give it"
    )
    # Issue 25: the model may come from the launch line after "--" instead.
    assert usage_error(capsys, "plan", "--free", "1GiB", "--server", "vllm") == (
        "plan --server vllm needs --config (or the line's model)"
    )
