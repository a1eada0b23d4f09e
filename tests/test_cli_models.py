"""``decode-ring state``, ``fit --config`` and ``plan``: the ring from a model's config."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .support import run_cli
from .test_models import EXPECTED

CONFIGS = Path(__file__).resolve().parent / "configs"
NEMOTRON = str(CONFIGS / "nemotron-nano-9b-v2.json")
GiB = 2**30
# Nemotron-Nano-9B-v2 under vLLM at tp 1: 27 Mamba layers, each a bfloat16
# conv state of (4 - 1) x (128 x 80 + 2 x 8 x 128) channels and a float32
# SSM state of 128 heads x 80 x 128.
NEMOTRON_CONV = 3 * (128 * 80 + 2 * 8 * 128) * 2
NEMOTRON_SSM = 128 * 80 * 128 * 4
NEMOTRON_PER_SEQUENCE = 27 * (NEMOTRON_CONV + NEMOTRON_SSM)


def as_json(completed: subprocess.CompletedProcess[str]) -> Any:
    assert completed.returncode in (0, 1), completed.stderr
    return json.loads(completed.stdout)


def test_state_of_nemotron_nano_9b_v2_matches_the_published_allocation() -> None:
    report = as_json(run_cli("state", "--config", NEMOTRON, "--max-batch-size", "256", "--json"))
    assert (report["family"], report["ssm_layers"]) == ("nemotron_h", 27)
    assert report["ssm_shape"] == [128, 80, 128]
    assert report["ssm_dtype"] == "float32"
    assert report["per_sequence_bytes"] == NEMOTRON_PER_SEQUENCE
    # vllm-project/vllm#23230: 33.75 GiB of SSM state at 256 sequences.
    assert report["ssm_bytes"] * report["ssm_layers"] * 256 == 33.75 * GiB
    # The ring is the reference server's: under vLLM's layout there is none (issue 25).
    assert (report["slot_bytes"], report["full_ring_bytes"]) == (None, None)


def test_state_text_names_the_dtype_rules_and_compresses_the_layers() -> None:
    completed = run_cli("state", "--config", NEMOTRON, "--max-batch-size", "32")
    assert completed.returncode == 0, completed.stderr
    out = completed.stdout
    assert "0,2,4,6-7,9,11,13,16,18,20,23,25,27,29,32,34,36,38,41,43-44,46,48,50,52,54" in out
    assert "(128, 80, 128) float32 (" in out
    assert f"({NEMOTRON_PER_SEQUENCE:,} B)" in out
    assert "full ring (8 slots)" not in out
    assert "no decode-rollback ring under vllm" in out
    ring = run_cli("state", "--config", NEMOTRON, "--max-batch-size", "32", "--layout", "metrale")
    assert "full ring (8 slots)" in ring.stdout


def test_state_reads_a_snapshot_directory_and_other_layouts(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text((CONFIGS / "metrale-gdn-48.json").read_text())
    report = as_json(run_cli("state", "--config", str(tmp_path), "--layout", "metrale", "--json"))
    assert report["per_sequence_bytes"] == 158_859_264
    sglang = as_json(run_cli("state", "--config", NEMOTRON, "--layout", "sglang", "--json"))
    assert sglang["per_sequence_bytes"] == NEMOTRON_PER_SEQUENCE


def test_fit_config_takes_layers_and_state_from_the_config() -> None:
    report = as_json(
        run_cli(
            "fit",
            "--config",
            NEMOTRON,
            "--max-batch-size",
            "256",
            "--reserve-without-ring",
            "20GiB",
            "--free",
            "80GiB",
            "--json",
        )
    )
    assert report["inputs"]["ssm_layers"] == 27
    assert report["inputs"]["per_seq_state"] == NEMOTRON_PER_SEQUENCE
    # 60 GiB of room: one slot (256 sequences) is 34.2 GiB, so depth 1.
    assert report["slots"] == 1


def test_fit_config_with_speculative_tokens_turns_speculative_decode_on() -> None:
    report = as_json(
        run_cli(
            "fit",
            "--config",
            NEMOTRON,
            "--max-batch-size",
            "8",
            "--reserve-without-ring",
            "20GiB",
            "--free",
            "80GiB",
            "--speculative-tokens",
            "2",
            "--json",
        )
    )
    assert (report["requested"], report["slots"]) == (0, 0)
    # vLLM widens the conv window by the draft tokens: (3 + 2) columns.
    widened = 27 * (5 * (128 * 80 + 2 * 8 * 128) * 2 + NEMOTRON_SSM)
    assert report["inputs"]["per_seq_state"] == widened


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["fit", "--config", NEMOTRON, "--ssm-layers", "4"], "drop --ssm-layers"),
        (["fit", "--config", NEMOTRON, "--per-seq-state", "1MiB"], "drop --ssm-layers"),
        (["state", "--config", "/nonexistent/config.json"], "/nonexistent/config.json"),
        (["state", "--config", str(CONFIGS / "..")], "config.json"),
        (["state", "--config", NEMOTRON, "--tp", "3"], "tp_size 3 does not divide"),
        (["state", "--config", NEMOTRON, "--tp", "0"], "at least 1"),
        (["state", "--config", NEMOTRON, "--conv-dtype", "float64"], "float64"),
        (["state", "--config", NEMOTRON, "--layout", "tgi"], "invalid choice"),
        (["plan", "--config", NEMOTRON, "--free", "1GiB"], "plan needs --weights SIZE"),
        (
            [
                "plan",
                "--config",
                NEMOTRON,
                "--free",
                "1GiB",
                "--weights",
                "0",
                "--tp",
                "1,1",
            ],
            "repeats",
        ),
    ],
)
def test_bad_model_input_is_one_line_and_exit_two(args: list[str], message: str) -> None:
    completed = run_cli(*args)
    assert completed.returncode == 2, completed.stdout
    assert completed.stderr.count("\n") == 1, completed.stderr
    assert completed.stderr.startswith("decode-ring: error: ")
    assert message in completed.stderr
    assert "Traceback" not in completed.stderr


def test_an_unknown_model_type_lists_the_families(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model_type": "rwkv7", "num_hidden_layers": 4, "ssm_x": 1}))
    completed = run_cli("state", "--config", str(config))
    assert completed.returncode == 2
    for family in ("mamba2", "nemotron_h", "qwen3_next", "zamba2"):
        assert family in completed.stderr


# Nemotron-Nano-9B-v2's 4 attention layers at tp 1: 8 KV heads x (128 + 128) head dims x
# 2 B (bfloat16) per token and layer, at 8,192 tokens.
NEMOTRON_KV = 4 * 8 * (128 + 128) * 2 * 8192
PLAN = ["plan", "--config", NEMOTRON, "--free", "80GiB", "--weights", "16GiB", "--other", "4GiB"]


def test_plan_grid_and_the_largest_batch_at_full_depth() -> None:
    report = as_json(
        run_cli(
            *PLAN,
            "--max-model-len",
            "8192",
            "--tp",
            "1,2,3,8",
            "--max-batch-size",
            "8,32,256",
            "--json",
        )
    )
    rows = {row["tp_size"]: row for row in report["rows"]}
    # tp 1, batch 256: 20 GiB + 256 x (state + KV) = 86.2 GiB of reserve > 80 GiB: refused.
    assert rows[1]["depths"] == [8, 8, None]
    assert rows[8]["depths"] == [8, 8, 8]
    # 60 GiB beside the weights and other: each sequence takes 9 states (live + 8 slots) + KV.
    assert rows[1]["largest_full_depth_batch"] == 60 * GiB // (
        9 * NEMOTRON_PER_SEQUENCE + NEMOTRON_KV
    )
    assert rows[1]["largest_full_depth_batch"] == 45
    assert rows[3]["problem"] is not None and rows[3]["depths"] == []
    assert rows[8]["per_sequence_bytes"] == NEMOTRON_PER_SEQUENCE // 8
    assert rows[8]["kv_per_sequence_bytes"] == NEMOTRON_KV // 8
    cell = rows[1]["cells"][1]
    assert (cell["batch"], cell["weights_bytes"], cell["other_bytes"]) == (32, 16 * GiB, 4 * GiB)
    assert (cell["state_bytes"], cell["kv_bytes"]) == (
        32 * NEMOTRON_PER_SEQUENCE,
        32 * NEMOTRON_KV,
    )
    assert cell["reserve_without_ring_bytes"] == 20 * GiB + 32 * (
        NEMOTRON_PER_SEQUENCE + NEMOTRON_KV
    )
    assert rows[2]["cells"][0]["weights_bytes"] == 8 * GiB


def test_plan_text_reads_at_a_glance() -> None:
    completed = run_cli(
        *["plan", "--config", NEMOTRON, "--free", "1GiB", "--weights", "16GiB"],
        *["--max-model-len", "8192"],
    )
    assert completed.returncode == 1
    assert completed.stderr.startswith("decode-ring: refused: no cell of the plan boots")
    lines = completed.stdout.splitlines()
    assert lines[4].split()[:3] == ["tp", "state/seq", "kv/seq"]
    assert [line.split()[0] for line in lines[5:9]] == ["1", "2", "4", "8"]
    assert all(line.split()[5:12] == ["-"] * 7 for line in lines[5:9])
    assert all(line.split()[12] == "none" for line in lines[5:9])


def test_plan_plots_a_heat_map(tmp_path: Path) -> None:
    pytest.importorskip(
        "matplotlib", reason="matplotlib not installed: pip install 'decode_ring[plot]'"
    )
    picture = tmp_path / "plan.png"
    completed = run_cli(*PLAN, "--max-model-len", "8192", "--plot", str(picture))
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == f"decode-ring: wrote {picture}\n"
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("layout", ["vllm", "sglang", "metrale"])
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_state_runs_on_every_fixture(name: str, layout: str) -> None:
    layers, by_layout = EXPECTED[name]
    completed = run_cli("state", "--config", str(CONFIGS / name), "--layout", layout, "--json")
    expected = by_layout[layout]
    if expected is None:
        # A layout whose server lacks the family, or a family vLLM removed: one line, exit 2.
        assert completed.returncode == 2, completed.stdout
        assert completed.stderr.count("\n") == 1 and "Traceback" not in completed.stderr
        return
    report = as_json(completed)
    assert (report["ssm_layers"], report["per_sequence_bytes"]) == (layers, expected[4])
    assert sum(group["bytes"] for group in report["groups"]) == expected[4]
    text = run_cli("state", "--config", str(CONFIGS / name), "--layout", layout)
    assert text.returncode == 0 and f"({expected[4]:,} B)" in text.stdout
