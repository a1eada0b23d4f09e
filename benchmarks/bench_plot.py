"""The plan's bound in time: the largest plan the bound allows (64 x 64 cells), run as an
operator runs it, a fresh interpreter each time (imports included), with and without
``--plot``, beside the floor of starting that interpreter and doing nothing.

Under ``--benchmark-disable`` (the suite's default) each runs once and checks what it wrote;
under ``--benchmark-enable`` pytest-benchmark times the rounds and prints their medians, the
figures the README states under "The plan's bound" (issue 28: under 2 s below the bound). No
test times it: the memory half of the bound is checked in ``tests/test_plan_bounds.py``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.test_plan_bounds import PIXELS, RING_ONLY, SIDE, png_size, values

GRID = ["--tp", values(SIDE), "--max-batch-size", values(SIDE)]
ROUNDS = 5


def run(argv: list[str], cwd: Path) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=cwd)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("picture", [False, True], ids=["table", "plot"])
def test_the_largest_plan(benchmark: Any, tmp_path: Path, picture: bool) -> None:
    png = tmp_path / "plan.png"
    argv = [sys.executable, "-m", "decode_ring", *RING_ONLY, *GRID]
    if picture:
        argv += ["--plot", str(png)]
    benchmark.pedantic(run, args=(argv, tmp_path), rounds=ROUNDS, iterations=1)
    if picture:
        width, height = png_size(png)
        assert max(width, height) < PIXELS
    else:
        assert not png.exists()


def test_the_floor_starting_python(benchmark: Any, tmp_path: Path) -> None:
    benchmark.pedantic(run, args=([sys.executable, "-c", "pass"], tmp_path), rounds=ROUNDS)
