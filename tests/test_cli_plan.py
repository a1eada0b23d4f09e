"""``decode-ring plan``: the ring's depth by tensor-parallel size and batch, memory per rank; the
reserve of each cell, the weights from a snapshot, the picture, and the plan under a server.

Every command line runs through ``cli.main`` in this process over a stand-in for the once-cell
(the ``cell`` fixture), from the repository's root. Expected values are written out from the
configs' published fields: Nemotron-Nano-9B-v2 under vLLM at tp 1 has 27 Mamba layers of
5,316,608 B per sequence (tests/test_cli_state.py) and 4 attention layers of 8 KV heads x
(128 + 128) x 2 B per token. The README's whole text of ``plan`` is a golden file
(tests/golden/plan-nemotron-nano-9b-v2.txt).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from decode_ring import snapshots
from decode_ring.models import ModelConfigError
from decode_ring.plan import Reserve, plan, server_plan
from decode_ring.servers import vllm_reservation

from .support import ROOT, GiB, MiB, run, run_json, usage_error

NEMOTRON = "tests/configs/nemotron-nano-9b-v2.json"
SNAPSHOT = "tests/snapshots/qwen3.5-18b-reap-a3b-coding"
STATE = 27 * (3 * (128 * 80 + 2 * 8 * 128) * 2 + 128 * 80 * 128 * 4)
KV_PER_TOKEN = 4 * 8 * (128 + 128) * 2
NEMOTRON_KV = KV_PER_TOKEN * 8192  # the KV cache of one sequence of 8,192 tokens, at tp 1
PLAN = ["plan", "--config", NEMOTRON, "--free", "80GiB", "--weights", "16GiB", "--other", "4GiB"]
PLAN_8K = [*PLAN, "--max-model-len", "8192"]
PLAN_ARGS = ["plan", "--config", NEMOTRON, "--free", "1GiB", "--weights", "1GiB"]
# The README's plan: Nemotron-Nano-9B-v2 on 80 GiB per rank, 8,192 tokens per sequence.
PLAN_README = [
    *["plan", "--config", NEMOTRON, "--free", "80GiB", "--weights", "16.5GiB"],
    *["--other", "4GiB", "--max-model-len", "8192"],
]
pytestmark = pytest.mark.usefixtures("cell")


# --- the grid -------------------------------------------------------------------------------------


def test_the_grid_and_the_largest_batch_at_full_depth(capsys: pytest.CaptureFixture[str]) -> None:
    _, report = run_json(capsys, *PLAN_8K, "--tp", "1,2,3,8", "--max-batch-size", "8,32,256")
    rows = {row["tp_size"]: row for row in report["rows"]}
    # tp 1, batch 256: 20 GiB + 256 x (state + KV) = 86.2 GiB of reserve > 80 GiB: refused.
    assert rows[1]["depths"] == [8, 8, None]
    assert rows[8]["depths"] == [8, 8, 8]
    # 60 GiB beside the weights and other: each sequence takes 9 states (live + 8 slots) + KV.
    assert rows[1]["largest_full_depth_batch"] == 60 * GiB // (9 * STATE + NEMOTRON_KV)
    assert rows[1]["largest_full_depth_batch"] == 45
    assert rows[3]["problem"] is not None and rows[3]["depths"] == []
    assert rows[8]["per_sequence_bytes"] == STATE // 8
    assert rows[8]["kv_per_sequence_bytes"] == NEMOTRON_KV // 8
    cell = rows[1]["cells"][1]
    assert (cell["batch"], cell["weights_bytes"], cell["other_bytes"]) == (32, 16 * GiB, 4 * GiB)
    assert (cell["state_bytes"], cell["kv_bytes"]) == (32 * STATE, 32 * NEMOTRON_KV)
    assert cell["reserve_without_ring_bytes"] == 20 * GiB + 32 * (STATE + NEMOTRON_KV)
    assert rows[2]["cells"][0]["weights_bytes"] == 8 * GiB


def test_the_text_reads_at_a_glance(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["plan", "--config", NEMOTRON, "--free", "1GiB", "--weights", "16GiB"]
    status, out, err = run(capsys, *args, "--max-model-len", "8192")
    assert status == 1
    assert err.startswith("decode-ring: refused: no cell of the plan boots")
    lines = out.splitlines()
    assert lines[4].split()[:3] == ["tp", "state/seq", "kv/seq"]
    assert [line.split()[0] for line in lines[5:9]] == ["1", "2", "4", "8"]
    assert all(line.split()[5:12] == ["-"] * 7 for line in lines[5:9])
    assert all(line.split()[12] == "none" for line in lines[5:9])


def test_the_rows_keep_the_order_given(capsys: pytest.CaptureFixture[str]) -> None:
    _, report = run_json(capsys, *PLAN_8K, "--tp", "8,1,4", "--max-batch-size", "3")
    assert [row["tp_size"] for row in report["rows"]] == [8, 1, 4]
    assert report["batch_sizes"] == [3]


def test_each_cell_carries_every_term_of_its_reserve(capsys: pytest.CaptureFixture[str]) -> None:
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
    capsys: pytest.CaptureFixture[str],
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


def test_the_kv_cache_follows_max_model_len(capsys: pytest.CaptureFixture[str]) -> None:
    base = [*PLAN, "--tp", "1", "--max-batch-size", "8"]
    _, short = run_json(capsys, *base, "--max-model-len", "1024")
    _, long = run_json(capsys, *base, "--max-model-len", "131072")
    assert short["rows"][0]["kv_per_sequence_bytes"] == KV_PER_TOKEN * 1024 == 16 * MiB
    assert long["rows"][0]["kv_per_sequence_bytes"] == KV_PER_TOKEN * 131072 == 2 * GiB


def test_a_model_with_attention_needs_max_model_len(capsys: pytest.CaptureFixture[str]) -> None:
    assert usage_error(capsys, *PLAN) == (
        "argument --max-model-len: nemotron_h has 4 attention layers, whose KV cache per "
        "sequence grows with it: give it"
    )


def kv_per_sequence(
    capsys: pytest.CaptureFixture[str], config: str, tps: str
) -> list[tuple[int, int]]:
    """Each row's tp and KV cache per sequence, at 100 tokens, for ``config``."""
    args = ["plan", "--config", config, "--free", "80GiB", "--weights", "0"]
    _, report = run_json(capsys, *args, "--max-model-len", "100", "--tp", tps)
    return [(row["tp_size"], row["kv_per_sequence_bytes"]) for row in report["rows"]]


def test_kv_heads_split_over_ranks_and_replicate_past_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Qwen3-Next-80B-A3B: 12 attention layers of 2 KV heads x (256 + 256) x 2 B (bfloat16).
    qwen = "tests/configs/qwen3-next-80b-a3b-instruct.json"
    assert kv_per_sequence(capsys, qwen, "1,2,8") == [
        (1, 12 * 2 * 512 * 2 * 100),
        (2, 12 * 1 * 512 * 2 * 100),
        (8, 12 * 1 * 512 * 2 * 100),  # replicated, not 1/4
    ]
    # No attention layer: no KV cache.
    assert kv_per_sequence(capsys, "tests/configs/mamba-2.8b-hf.json", "1") == [(1, 0)]


def test_mla_keeps_one_latent_per_token_on_every_rank(capsys: pytest.CaptureFixture[str]) -> None:
    # Kimi-Linear's MLA: kv_lora_rank 512 + qk_rope_head_dim 64, one latent per token for its 7
    # attention layers, bfloat16.
    kimi = "tests/configs/kimi-linear-48b-a3b-instruct.json"
    assert kv_per_sequence(capsys, kimi, "1,8") == [(1, 7 * 576 * 2 * 100), (8, 7 * 576 * 2 * 100)]


def test_weights_divide_evenly_rounded_up(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["plan", "--ssm-layers", "48", "--per-seq-state", "151.5MiB", "--free", "80GiB"]
    _, report = run_json(capsys, *args, "--weights", "10B", "--tp", "1,2,3,4")
    assert [row["weights_bytes"] for row in report["rows"]] == [10, 5, 4, 3]


def test_the_text_says_the_formula_once_under_the_grid(capsys: pytest.CaptureFixture[str]) -> None:
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


def test_full_depth_up_to_batch_is_none_when_no_batch_fits(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["plan", "--config", NEMOTRON, "--free", "10GiB", "--weights", "16GiB"]
    status, out = run_json(capsys, *args, "--max-model-len", "8192", "--tp", "1,8")
    assert status == 0  # tp 8 holds 2 GiB of weights: some cell boots
    assert [row["full_depth"] for row in out["rows"]] == ["none", "48"]
    assert out["rows"][0]["largest_full_depth_batch"] is None  # no batch is not 0 sequences
    # 8 GiB beside 2 GiB of weights; 9 states and the KV cache per sequence, on 1 of 8 ranks.
    assert 8 * GiB // ((9 * STATE + KV_PER_TOKEN * 8192) // 8) == 48
    status, text, _ = run(capsys, *args, "--max-model-len", "8192", "--tp", "1")
    assert status == 1
    assert text.splitlines()[5].split()[-1] == "none"


def test_full_depth_up_to_batch_is_a_dash_when_the_full_depth_is_not_requested(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, out = run_json(capsys, *PLAN_8K, "--speculative-tokens", "1")
    assert out["requested"] == 0
    assert {row["full_depth"] for row in out["rows"]} == {"-"}
    assert {row["largest_full_depth_batch"] for row in out["rows"]} == {None}
    monkeypatch.setenv("METRALE_SSM_DECODE_RING", "0")
    _, text, _ = run(capsys, *PLAN_8K)
    assert [line.split()[-1] for line in text.splitlines()[5:9]] == ["-"] * 4


def test_a_plan_where_no_cell_boots_exits_one_with_one_line(
    capsys: pytest.CaptureFixture[str],
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


def test_a_plan_runs_from_layers_and_state_without_a_config(
    capsys: pytest.CaptureFixture[str],
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


def test_plan_json_and_flags(capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run_json(
        capsys,
        *PLAN_README,
        "--tp",
        "1,8",
        "--max-batch-size",
        "8,512",
    )
    assert status == 0
    # README's grid: tp 1 gives 8 and refuses 512, tp 8 gives 8 and 4.
    assert [row["depths"] for row in out["rows"]] == [[8, None], [8, 4]]
    assert [row["tp_size"] for row in out["rows"]] == [1, 8]


def test_plan_follows_the_model_flags(capsys: pytest.CaptureFixture[str]) -> None:
    args = PLAN_README
    _, out = run_json(capsys, *args, "--tp", "1", "--max-batch-size", "8", "--layout", "metrale")
    # metrale keeps all 4 conv columns, float32: 27 x (4 x 12288 x 4 + 128 x 80 x 128 x 4) B.
    assert out["rows"][0]["per_sequence_bytes"] == 27 * (4 * 12288 * 4 + 128 * 80 * 128 * 4)
    assert out["layout"] == "metrale"


def test_plan_speculative_tokens_turn_speculative_decode_on(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = PLAN_README
    _, out = run_json(capsys, *args, "--tp", "8", "--max-batch-size", "8")
    assert out["rows"][0]["depths"] == [8]
    _, out = run_json(
        capsys, *args, "--tp", "8", "--max-batch-size", "8", "--speculative-tokens", "1"
    )
    assert out["rows"][0]["depths"] == [0]


# --- a snapshot's weights ---------------------------------------------------------------------


def test_the_fixture_snapshot_carries_the_checkpoints_size() -> None:
    # bryce-hoehn/Qwen3.5-18B-REAP-A3B-Coding's index (tests/snapshots/.../PROVENANCE.md).
    assert snapshots.snapshot_weights(ROOT / SNAPSHOT) == 37_087_995_136


def test_an_index_of_zero_bytes_gives_zero_weights(tmp_path: Path) -> None:
    (tmp_path / "model.safetensors.index.json").write_text('{"metadata": {"total_size": 0}}')
    assert snapshots.snapshot_weights(tmp_path) == 0


def test_a_plan_on_a_snapshot_takes_the_weights_from_its_index(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
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
    # Under a server too: a rank's budget is free less the index's size, divided by tp.
    status, out = run_json(capsys, *args, "--server", "vllm", "--tp", "1")
    assert status == 0
    assert out["weights_source"] == "model.safetensors.index.json metadata.total_size"
    assert out["rows"][0]["budget_bytes"] == 80 * GiB - 17_780_000_000


def test_a_snapshot_without_an_index_needs_weights(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
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


TOTAL_SIZE = "field 'metadata.total_size': must be a non-negative integer of bytes"


@pytest.mark.parametrize(
    ("index", "problem"),
    [
        ('{"metadata": {"total_size": -1}}', TOTAL_SIZE),
        ('{"metadata": {"total_size": "1"}}', TOTAL_SIZE),
        ('{"metadata": {}}', TOTAL_SIZE),
        ('{"metadata": [1]}', TOTAL_SIZE),
        ("{}", TOTAL_SIZE),
        ("[1]", "JSON is an array, not an object"),
        ('{"metadata": ', "malformed JSON: Expecting value at line 1 column 14"),
    ],
)
def test_a_bad_index_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, index: str, problem: str
) -> None:
    (tmp_path / "config.json").write_text((ROOT / NEMOTRON).read_text())
    (tmp_path / "model.safetensors.index.json").write_text(index)
    message = usage_error(capsys, "plan", "--config", str(tmp_path), "--free", "80GiB")
    assert message.startswith(f"{str(tmp_path / 'model.safetensors.index.json')!a}: ")
    assert problem in message


# --- the picture ----------------------------------------------------------------------------------


@pytest.fixture
def matplotlib_here() -> None:
    pytest.importorskip("matplotlib", reason="matplotlib not installed: pip install '.[plot]'")


def test_plot_without_matplotlib_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("matplotlib", "matplotlib.backend_bases", "matplotlib.pyplot"):
        monkeypatch.setitem(sys.modules, name, None)  # importing it raises ImportError
    target = tmp_path / "grid.png"
    assert usage_error(capsys, *PLAN_README, "--plot", str(target)) == (
        "--plot needs matplotlib: pip install 'decode_ring[plot]'"
    )
    assert not target.exists()


def drawn_figure(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, path: Path, *args: str
) -> Any:
    """The figure ``decode-ring ARGS --plot PATH`` draws, as matplotlib saved it."""
    from matplotlib.figure import Figure

    saved: list[Figure] = []
    savefig = Figure.savefig

    def record(figure: Figure, *where: Any, **options: Any) -> None:
        saved.append(figure)
        savefig(figure, *where, **options)

    monkeypatch.setattr(Figure, "savefig", record)
    status, _, err = run(capsys, *args, "--plot", str(path))
    assert (status, err) == (0, f"decode-ring: wrote {path}\n")
    (figure,) = saved
    return figure


def test_the_picture_has_discrete_colours_a_legend_and_the_inputs(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    matplotlib_here: None,
) -> None:
    figure = drawn_figure(
        capsys,
        monkeypatch,
        tmp_path / "grid.png",
        *("plan", "--config", NEMOTRON, "--free", "44GiB", "--weights", "16GiB"),
        *("--other", "4GiB", "--max-model-len", "8192"),
        *("--tp", "1,3,8", "--max-batch-size", "8,64,512"),
    )
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


def test_the_picture_draws_each_cell_where_the_table_has_it(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    matplotlib_here: None,
) -> None:
    import matplotlib
    from matplotlib.colors import BoundaryNorm, to_hex

    picture = tmp_path / "grid.png"
    figure = drawn_figure(
        capsys,
        monkeypatch,
        picture,
        *("plan", "--config", NEMOTRON, "--free", "44GiB", "--weights", "16GiB"),
        *("--other", "4GiB", "--max-model-len", "8192"),
        *("--tp", "1,3,8", "--max-batch-size", "8,64,300,512"),
    )
    # The table of this plan: tp 1 holds depth 8, 0 and refuses twice, full depth up to 18; tp
    # 3 cannot split; tp 8 holds 8, 8, 4 and 2, full depth up to 228. One colour per rung of
    # the ladder (0, 1, 2, 4, 8: viridis from 0 to 1), then refused and cannot split.
    viridis = matplotlib.colormaps["viridis"]
    (axes,) = figure.axes
    # The grid is one mesh of cells (a picture past 256 cells stays cheap to draw).
    (image,) = axes.collections
    assert image.get_array().tolist() == [[4, 0, 5, 5], [6, 6, 6, 6], [4, 4, 3, 2]]
    assert list(image.cmap.colors) == [
        *(to_hex(viridis(i / 4)) for i in range(5)),
        "#8c1c13",
        "#d9d9d9",
    ]
    assert isinstance(image.norm, BoundaryNorm)
    assert image.norm.boundaries.tolist() == [-0.5, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5]
    assert axes.get_aspect() == "auto"
    assert axes.get_xlabel() == "max batch size"
    assert axes.title.get_fontsize() == 9
    # Dark cells (refused, and the three shallowest rungs) carry white labels.
    texts = [
        (t.get_position(), t.get_text(), t.get_ha(), t.get_va(), t.get_color(), t.get_fontsize())
        for t in axes.texts
    ]
    assert texts == [
        ((0, 0), "8", "center", "center", "black", 10),
        ((1, 0), "0", "center", "center", "white", 10),
        ((2, 0), "refused", "center", "center", "white", 10),
        ((3, 0), "refused", "center", "center", "white", 10),
        ((3.7, 0), "  18", "left", "center", "black", 10),
        ((1.5, 1), "cannot split", "center", "center", "black", 10),
        ((3.7, 1), "  -", "left", "center", "black", 10),
        ((0, 2), "8", "center", "center", "black", 10),
        ((1, 2), "8", "center", "center", "black", 10),
        ((2, 2), "4", "center", "center", "black", 10),
        ((3, 2), "2", "center", "center", "white", 10),
        ((3.7, 2), "  228", "left", "center", "black", 10),
        ((3.7, -0.75), "  full depth\n  up to batch", "left", "bottom", "black", 8),
    ]
    (legend,) = figure.legends
    assert legend.get_frame_on() is False
    assert {text.get_fontsize() for text in legend.get_texts()} == {8}
    assert [to_hex(patch.get_facecolor()) for patch in legend.get_patches()] == list(
        image.cmap.colors
    )
    assert legend._loc == 7  # "center right"
    # The grid and its labels keep left of the legend, inside the figure.
    box = axes.get_position()
    assert 0 < box.x0 < box.x1 <= 0.86 and 0 < box.y0 < box.y1 <= 1
    # 1 inch a batch and 5.5 more, 0.6 inch a row and 2.4 more, at 110 dots an inch.
    assert tuple(figure.get_size_inches()) == pytest.approx((9.5, 4.2))
    header = picture.read_bytes()[16:24]
    width, height = int.from_bytes(header[:4], "big"), int.from_bytes(header[4:], "big")
    # 9.5 x 110 and 4.2 x 110 pixels; matplotlib releases round 462.00000000000006 either way.
    assert width == 1045 and height in (461, 462)


def test_the_picture_of_a_plan_without_a_config(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    matplotlib_here: None,
) -> None:
    figure = drawn_figure(
        capsys,
        monkeypatch,
        tmp_path / "grid.png",
        *("plan", "--ssm-layers", "48", "--per-seq-state", "151.5MiB", "--free", "40GiB"),
        *("--weights", "10GiB", "--tp", "1", "--max-batch-size", "8"),
    )
    (axes,) = figure.axes
    # No layout, no length and no KV cache: none is named.
    assert axes.get_title() == (
        "decode ring depth per rank: a model, requested depth 8\n"
        "free 40.00 GiB, weights 10.00 GiB / tp, other 0 B"
    )
    assert [label.get_text() for label in axes.get_yticklabels()] == ["tp 1\nstate 151.50 MiB"]


@pytest.mark.parametrize(
    ("name", "extension"),
    [
        # The extension is what follows the last dot, whatever its case.
        ("grid.Xpng", "'xpng'"),
        ("grid." + "e" * 41, "'" + "e" * 40 + "'... (41 characters)"),
    ],
)
def test_plot_names_the_format_it_cannot_write(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    matplotlib_here: None,
    name: str,
    extension: str,
) -> None:
    from matplotlib.backend_bases import FigureCanvasBase

    target = tmp_path / name
    formats = ", ".join(sorted(FigureCanvasBase.get_supported_filetypes()))
    assert usage_error(capsys, *PLAN_8K, "--plot", str(target)) == (
        f"--plot {str(target)!a}: matplotlib cannot write {extension} files; use one of {formats}"
    )
    assert not target.exists()


def test_plot_draws_a_png(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, matplotlib_here: None
) -> None:
    picture = tmp_path / "plan.png"
    status, _, err = run(capsys, *PLAN_8K, "--plot", str(picture))
    assert (status, err) == (0, f"decode-ring: wrote {picture}\n")
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_writes_exactly_the_path_given(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, matplotlib_here: None
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
    capsys: pytest.CaptureFixture[str], tmp_path: Path, matplotlib_here: None
) -> None:
    target = tmp_path / "out.txt"
    message = usage_error(capsys, *PLAN_8K, "--plot", str(target))
    assert message.startswith(f"--plot {str(target)!a}: matplotlib cannot write 'txt' files;")
    assert "png" in message and "svg" in message
    assert not target.exists()


def test_plot_to_a_full_disk_is_one_line_and_74(
    capsys: pytest.CaptureFixture[str], matplotlib_here: None
) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    status, out, err = run(capsys, *PLAN_8K, "--plot", "/dev/full")
    assert (status, out) == (74, "")
    assert err == "decode-ring: error: cannot write '/dev/full': No space left on device\n"


# --- the plan as a library ----------------------------------------------------------------------

NO_WEIGHTS = Reserve(0, "--weights", 0, None)


def test_a_plan_requests_the_full_ring_unless_told_of_speculation() -> None:
    # The decision without speculative decode is the full ring, 8 slots (README, "decide").
    grid = plan(None, 40 * GiB, NO_WEIGHTS, (1,), (8,), ssm_layers=48, per_seq_state=MiB)
    assert grid.requested == 8
    assert (grid.model, grid.source, grid.layout) == ("a model", None, None)
    assert grid.rows[0].state is None
    with_model = plan(
        NEMOTRON, 80 * GiB, Reserve(0, "--weights", 0, 8192), (1, 3), (8,), layout="sglang"
    )
    state = with_model.rows[0].state
    assert state is not None and (state.tp_size, state.layout) == (1, "sglang")
    assert with_model.rows[1].state is None  # 3 ranks cannot split the model
    assert (with_model.rows[1].full_depth, with_model.rows[1].largest_full_depth_batch) == (
        "-",
        None,
    )


@pytest.mark.parametrize(("layers", "state"), [(48, None), (None, MiB)])
def test_a_plan_without_a_config_needs_both_layers_and_state(
    layers: int | None, state: int | None
) -> None:
    with pytest.raises(ModelConfigError) as raised:
        plan(None, 40 * GiB, NO_WEIGHTS, (1,), (8,), ssm_layers=layers, per_seq_state=state)
    assert str(raised.value) == "a plan without a config needs ssm_layers and per_seq_state"


def test_a_plan_needs_a_tensor_parallel_size_that_splits_the_model() -> None:
    with pytest.raises(ModelConfigError) as raised:
        plan(None, 40 * GiB, NO_WEIGHTS, (), (8,), ssm_layers=48, per_seq_state=MiB)
    assert str(raised.value) == "the plan needs at least one tensor-parallel size"
    with pytest.raises(ModelConfigError) as raised:
        plan(NEMOTRON, 80 * GiB, Reserve(0, "--weights", 0, 8192), (3, 5), (8,))
    assert str(raised.value) == (
        "no tensor-parallel size of the plan divides the model: 'tests/configs/"
        "nemotron-nano-9b-v2.json': nemotron_h config: field 'mamba_num_heads': tp_size 3 does "
        "not divide 128; the servers shard it evenly"
    )


def test_a_server_plan_passes_no_speculative_tokens_unless_given() -> None:
    # The peer oracle: vLLM holds 107 requests of 8,192 tokens in 60 GiB at tp 1, and 71 with 2
    # speculative tokens.
    reserve = Reserve(16 * GiB, "--weights", 4 * GiB, 8192)
    (row,) = server_plan("vllm", NEMOTRON, 80 * GiB, reserve, (1,), (8,)).rows
    assert row.largest_batch == 107
    assert row.detail["max_concurrency"] == 107.03571428571429
    (row,) = server_plan("vllm", NEMOTRON, 80 * GiB, reserve, (1,), (8,), 2).rows
    assert row.largest_batch == 71
    # The launch's own --num-speculative-tokens wins over the plan's count.
    options = {"num_speculative_tokens": 2}
    (row,) = server_plan("vllm", NEMOTRON, 80 * GiB, reserve, (1,), (8,), 0, options).rows
    assert row.largest_batch == 71


def test_a_server_plan_reads_the_model_under_the_release_it_names() -> None:
    reserve = Reserve(16 * GiB, "--weights", 4 * GiB, 8192)
    grid = server_plan("vllm", NEMOTRON, 80 * GiB, reserve, (1,), (8,), 0, {"version": "0.30.0"})
    assert grid.server_version == "0.30.0"
    grid = server_plan("sglang", NEMOTRON, 80 * GiB, reserve, (1,), (8,), 0, {"version": "0.5.9"})
    assert grid.server_version == "0.5.9"


@pytest.mark.parametrize(
    ("state", "free", "column"),
    [
        # Nothing grows with the batch: every batch keeps the full ring.
        ("0", "40GiB", "any"),
        # Even when the weights fill free memory to the byte.
        ("0", "10GiB", "any"),
        # The weights fill free memory: room for the reserve, none for a sequence.
        ("1GiB", "10GiB", "none"),
    ],
)
def test_the_full_depth_column_says_any_and_none(
    capsys: pytest.CaptureFixture[str], state: str, free: str, column: str
) -> None:
    _, out, _ = run(
        capsys,
        *("plan", "--ssm-layers", "48", "--per-seq-state", state, "--free", free),
        *("--weights", "10GiB", "--tp", "1", "--max-batch-size", "8"),
    )
    assert out.splitlines()[5].split()[-1] == column


def test_a_budget_of_one_byte_is_the_servers_to_refuse(capsys: pytest.CaptureFixture[str]) -> None:
    # free is the weights, the other bytes and 1 B: vLLM refuses a 1 B KV budget itself
    # (_check_enough_kv_cache_memory, kv_cache_planning.py:50-87), not the plan.
    status, out, _ = run(
        capsys,
        *("plan", "--config", NEMOTRON, "--free", str(20 * GiB + 1), "--weights", "16GiB"),
        *("--other", "4GiB", "--max-model-len", "8192", "--server", "vllm", "--tp", "1"),
        *("--max-batch-size", "8"),
    )
    assert status == 1
    assert out.splitlines()[5:7] == [
        "    1          1 B      no              0",
        # The budget less vLLM's null block is not above 0 (kv_cache_planning.py:1533-1543).
        "       does not start: ValueError: No available memory for the cache blocks. Try "
        "increasing `gpu_memory_utilization` when initializing the engine (this flag also "
        "controls CPU memory reservation on the CPU backend, despite its name). See "
        "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.",
    ]


# --- the plan under a server ---------------------------------------------------------------------


def test_plan_under_sglang_holds_its_running_request_cap(
    capsys: pytest.CaptureFixture[str],
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


def test_plan_under_vllm_holds_its_maximum_concurrency(capsys: pytest.CaptureFixture[str]) -> None:
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
    capsys: pytest.CaptureFixture[str],
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
        (
            ["--server", "vllm", "--conv-dtype", "float32", "--ssm-layers", "4"],
            "--conv-dtype, --ssm-layers do nothing under --server vllm: the server lays out its "
            "own state and there is no ring to draw; drop them",
        ),
        (
            ["--server", "vllm", "--per-seq-state", "1MiB"],
            "--per-seq-state does nothing under --server vllm: the server lays out its own state "
            "and there is no ring to draw; drop it",
        ),
        (
            ["--server", "sglang", "--layout", "vllm", "--speculative-tokens", "2"],
            "--layout, --speculative-tokens do nothing under --server sglang: the server lays out "
            "its own state and there is no ring to draw; drop them",
        ),
        (["--server", "tgi"], "argument --server: invalid choice: 'tgi'"),
    ],
)
def test_plan_under_a_server_refuses_what_it_would_ignore(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert usage_error(capsys, *PLAN_8K, *args).startswith(message)


def test_plan_without_a_config_names_what_it_needs(capsys: pytest.CaptureFixture[str]) -> None:
    free = ["plan", "--free", "40GiB", "--weights", "10GiB"]
    assert usage_error(capsys, *free) == (
        "plan needs --config, or --ssm-layers and --per-seq-state"
    )
    assert usage_error(capsys, *free, "--conv-dtype", "float32", "--ssm-dtype", "float32") == (
        "--conv-dtype, --ssm-dtype shape the state read from --config: give --config, or drop them"
    )


def test_plan_under_a_server_needs_a_model_and_a_length(capsys: pytest.CaptureFixture[str]) -> None:
    assert usage_error(capsys, *PLAN, "--server", "vllm") == (
        "argument --max-model-len: under vllm, a plan fits sequences of this many tokens: give it"
    )
    # Issue 25: the model may come from the launch line after "--" instead.
    assert usage_error(capsys, "plan", "--free", "1GiB", "--server", "vllm") == (
        "plan --server vllm needs --config (or the line's model)"
    )


@pytest.mark.parametrize(
    ("extra", "idle"),
    [
        (["--gpu-memory", "80GiB"], "--gpu-memory: a"),
        (["--", "--max-num-seqs", "8"], "--: a"),
        (["--gpu", "h200", "--", "--max-num-seqs", "8"], "--gpu, --: a"),
    ],
)
def test_the_servers_gpu_and_launch_line_are_refused_under_metrale(
    capsys: pytest.CaptureFixture[str], extra: list[str], idle: str
) -> None:
    # A launch line and its GPU size a server's own budget: without --server they do nothing.
    drop = "them" if "," in idle else "it"
    assert usage_error(capsys, *PLAN_8K, *extra) == (
        f"{idle} launch line and its GPU are the servers' (--server vllm or sglang); drop {drop}"
    )


def test_plan_without_free_memory_says_which_budgets_there_are(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["plan", "--config", NEMOTRON, "--weights", "16GiB", "--max-model-len", "8192"]
    assert usage_error(capsys, *argv) == (
        "plan needs --free SIZE (or --server vllm|sglang with --gpu)"
    )
