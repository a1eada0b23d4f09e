"""A plan grid and its picture have a documented bound, refused past it, and a plan's sums are
exact: a reserve past 64 bits is refused, never saturated into booting.

Issue 28, item 4: a 100 x 100 grid drew an 11,605 x 6,864 px picture (2.67 GB, 24 s), 200 x 200
ended in a MemoryError, 1,000 x 1,000 without a plot took 16.6 s and 875 MB from a 3.9 KB
argument. Item 8: at the 64-bit maximum, saturating sums made 2 x 16 EiB of reserve boot at
depth 8 while the same row said "full depth up to batch: none". The README's bound: at most 64
tensor-parallel sizes and 64 batch sizes (4,096 cells), pictures at most 4,096 pixels a side.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from decode_ring.models import ModelConfigError
from decode_ring.plan import Reserve, plan, server_plan

from .cli_in_process import InProcessCli, check_outcome

ROOT = Path(__file__).resolve().parent.parent
NEMOTRON = ROOT / "tests" / "configs" / "nemotron-nano-9b-v2.json"
ERROR = "decode-ring: error: "
USIZE_MAX = 2**64 - 1
GiB = 2**30
SIDE = 64  # the README's bound: 64 x 64 cells
PIXELS = 4096  # and 4,096 pixels a side
RING_ONLY = ["plan", "--ssm-layers", "48", "--per-seq-state", "151.5MiB", "--free", "80GiB"]
RING_ONLY += ["--weights", "16GiB"]


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> InProcessCli:
    return InProcessCli(monkeypatch, tmp_path)


def values(count: int, start: int = 1) -> str:
    return ",".join(str(value) for value in range(start, start + count))


def png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", header[16:24])
    return width, height


# --- the grid's bound ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "what"), [("--tp", "tensor-parallel sizes"), ("--max-batch-size", "batch sizes")]
)
def test_a_grid_past_64_a_side_is_refused_naming_the_bound(
    cli: InProcessCli, flag: str, what: str
) -> None:
    outcome = cli.run([*RING_ONLY, flag, values(65)])
    check_outcome([*RING_ONLY, flag], outcome)
    assert outcome.status == 2
    assert outcome.stderr == (
        f"{ERROR}argument {flag}: at most 64 {what} (a plan is at most 64 x 64 cells), got 65\n"
    )


def test_a_huge_list_is_refused_at_once(cli: InProcessCli) -> None:
    started = time.monotonic()
    outcome = cli.run([*RING_ONLY, "--max-batch-size", values(1_000), "--tp", values(1_000)])
    assert outcome.status == 2
    assert "at most 64" in outcome.stderr
    assert time.monotonic() - started < 1


def test_a_grid_of_64_by_64_is_planned(cli: InProcessCli) -> None:
    outcome = cli.run(
        [*RING_ONLY, "--tp", values(SIDE), "--max-batch-size", values(SIDE), "--json"]
    )
    assert outcome.status == 0
    rows = json.loads(outcome.stdout)["rows"]
    assert [len(row["cells"]) for row in rows] == [SIDE] * SIDE


@pytest.mark.parametrize("axis", ["tp_sizes", "batch_sizes"])
def test_the_api_refuses_a_grid_past_its_bound(axis: str) -> None:
    what = {"tp_sizes": "tensor-parallel sizes", "batch_sizes": "batch sizes"}[axis]
    many = tuple(range(1, 66))
    tp_sizes, batch_sizes = (many, (8,)) if axis == "tp_sizes" else ((1,), many)
    reserve = Reserve(16 * GiB, "--weights", 0, 8192)
    message = f"argument {axis}: at most 64 {what} (a plan is at most 64 x 64 cells), got 65"
    with pytest.raises(ModelConfigError) as caught:
        plan(None, 80 * GiB, reserve, tp_sizes, batch_sizes, ssm_layers=48, per_seq_state=2**20)
    assert (str(caught.value), caught.value.field) == (message, axis)
    with pytest.raises(ModelConfigError) as caught:
        server_plan("vllm", NEMOTRON, 80 * GiB, reserve, tp_sizes, batch_sizes)
    assert (str(caught.value), caught.value.field) == (message, axis)


# --- the picture's bound -------------------------------------------------------------------


def test_the_largest_grid_draws_within_4096_pixels_a_side(
    cli: InProcessCli, tmp_path: Path
) -> None:
    picture = tmp_path / "plan.png"
    grid = ["--tp", values(SIDE), "--max-batch-size", values(SIDE)]
    outcome = cli.run([*RING_ONLY, *grid, "--plot", str(picture)])
    assert outcome.status == 0, outcome
    width, height = png_size(picture)
    assert max(width, height) <= PIXELS
    assert width >= PIXELS - 1  # as wide as the bound allows: 69.5 x 40.8 inches


def test_a_small_grid_keeps_110_dots_an_inch(cli: InProcessCli, tmp_path: Path) -> None:
    # The README's picture: 7 batches and 4 sizes, (7 + 5.5) x (4 x 0.6 + 2.4) inches.
    picture = tmp_path / "plan.png"
    argv = ["plan", "--config", str(NEMOTRON), "--free", "80GiB", "--weights", "16.5GiB"]
    argv += ["--other", "4GiB", "--max-model-len", "8192", "--plot", str(picture)]
    assert cli.run(argv).status == 0
    assert png_size(picture) == (1375, 528)


def test_the_largest_plot_stays_under_200_mb(tmp_path: Path) -> None:
    # Its time is a benchmark (benchmarks/bench_plot.py), not a test: a loaded machine would
    # stretch it. The run's own high-water mark, from /proc (ru_maxrss would count this test
    # process, which the run is forked from).
    picture = tmp_path / "plan.png"
    grid = ["--tp", values(SIDE), "--max-batch-size", values(SIDE)]
    code = (
        "import atexit, runpy, sys\n"
        "def measured():\n"
        "    with open('/proc/self/status') as status:\n"
        "        peak = next(l.split()[1] for l in status if l.startswith('VmHWM:'))\n"
        "    with open('measured', 'w') as file:\n"
        "        file.write(peak)\n"
        "atexit.register(measured)\n"
        f"sys.argv = ['decode-ring', *{[*RING_ONLY, *grid, '--plot', str(picture)]!r}]\n"
        "runpy.run_module('decode_ring', run_name='__main__')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert int((tmp_path / "measured").read_text()) < 200 * 1024
    assert png_size(picture)[0] == PIXELS - 1


# --- exact sums at the 64-bit maximum -------------------------------------------------------


def test_a_reserve_past_64_bits_is_refused_not_saturated(cli: InProcessCli) -> None:
    top = str(USIZE_MAX)
    argv = ["plan", "--ssm-layers", "48", "--per-seq-state", "1MiB", "--free", top]
    argv += ["--weights", top, "--other", top, "--tp", "1", "--max-batch-size", "8"]
    outcome = cli.run([*argv, "--json"])
    check_outcome([*argv, "--json"], outcome)
    assert outcome.status == 2
    # The weights and other, 2 x (2**64 - 1) B, and 8 sequences of 1 MiB.
    message = (
        f"plan at tp 1, batch 8: reserve_without_ring_bytes would be {2 * USIZE_MAX + 8 * 2**20}, "
        "beyond the 18446744073709551615 a 64-bit count holds"
    )
    assert outcome.stderr == f"{ERROR}{message}\n"
    with pytest.raises(OverflowError) as caught:
        plan(
            None,
            USIZE_MAX,
            Reserve(USIZE_MAX, "--weights", USIZE_MAX, None),
            (1,),
            (8,),
            ssm_layers=48,
            per_seq_state=2**20,
        )
    assert str(caught.value) == message


def test_a_cells_state_or_kv_cache_past_64_bits_is_named() -> None:
    # 2**40 sequences of 1 GiB of state: 2**70 B.
    with pytest.raises(OverflowError) as caught:
        plan(
            None,
            80 * GiB,
            Reserve(0, "--weights", 0, None),
            (1,),
            (2**40,),
            ssm_layers=48,
            per_seq_state=GiB,
        )
    assert str(caught.value) == (
        "plan at tp 1, batch 1099511627776: state_bytes would be 1180591620717411303424, "
        "beyond the 18446744073709551615 a 64-bit count holds"
    )
    # Nemotron's KV cache: 4 attention layers x 8 KV heads x 128 x 2 (K and V) x 2 B (bfloat16)
    # = 16,384 B a token, so 2**50 tokens are 2**64 B.
    with pytest.raises(OverflowError) as caught:
        plan(NEMOTRON, 80 * GiB, Reserve(0, "--weights", 0, 2**50), (1,), (1,))
    assert str(caught.value) == (
        "plan at tp 1, batch 1: kv_bytes would be 18446744073709551616, beyond the "
        "18446744073709551615 a 64-bit count holds"
    )


def test_a_total_of_exactly_64_bits_boots_and_one_byte_more_is_refused(cli: InProcessCli) -> None:
    # One sequence of 1 B: a reserve of weights + 1 B, and 8 ring slots of 1 B beside it.
    fits = USIZE_MAX - 9
    argv = ["plan", "--ssm-layers", "48", "--per-seq-state", "1B", "--free", str(USIZE_MAX)]
    argv += ["--tp", "1", "--max-batch-size", "1", "--json"]
    outcome = cli.run([*argv, "--weights", str(fits)])
    assert outcome.status == 0
    cell = json.loads(outcome.stdout)["rows"][0]["cells"][0]
    assert (cell["depth"], cell["total_bytes"]) == (8, USIZE_MAX)
    outcome = cli.run([*argv, "--weights", str(fits + 1)])
    assert outcome.status == 2
    assert outcome.stderr == (
        f"{ERROR}plan at tp 1, batch 1: total_bytes would be 18446744073709551616, beyond the "
        "18446744073709551615 a 64-bit count holds\n"
    )
