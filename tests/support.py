"""Helpers shared by the tests and the benchmarks."""

from __future__ import annotations

import gc
import importlib
import itertools
import os
import subprocess
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

CORE_MODULES = {"cython": "decode_ring._core", "python": "decode_ring._core_py"}
# Why a torch test skips. Not 'decode_ring[torch]', which resolves to the CUDA build on this
# kind of machine: about 3 GB of wheels (the README says so).
TORCH_MISSING = "torch not installed: pip install torch==2.13.0 (the CPU build)"


def compiled_core_may_be_missing() -> bool:
    """Where the compiled core is not meant to be built or imported: the
    switch set to anything but empty or "0" (as the README says), or not
    CPython."""
    switch = os.environ.get("DECODE_RING_NO_EXTENSIONS", "")
    return switch not in ("", "0") or sys.implementation.name != "cpython"


def load_core(name: str) -> ModuleType:
    try:
        return importlib.import_module(CORE_MODULES[name])
    except ImportError as error:
        if name == "cython" and compiled_core_may_be_missing():
            pytest.skip(f"compiled core not built here: {error}")
        raise


RunPython = Callable[..., Any]


CALLS_PER_COUNT = 10_000


def blocks_allocated_by(function: Callable[..., object], *args: object) -> int:
    """Blocks that one call leaves allocated, from runs of ``CALLS_PER_COUNT``
    calls each, with the garbage collector off (so it frees nothing then): a call
    that allocates even one block for good leaves at least 10,000 in a run.

    What the interpreter allocates or frees once during a run (a cache
    warming up, or emptied; a free list trimmed) changes a run's count by a
    few dozen blocks, in either direction, so a run's count is rounded to
    blocks per call: anything short of half a block per call is none. A first
    run warms up and is not counted; of three more, the most is taken: a free
    can then hide a per-call allocation only by freeing 5,000 blocks or more
    in every one of the three runs, and a one-off allocation is taken for one
    per call only if it reaches 5,000 blocks in a single run."""
    counts = []
    collecting = gc.isenabled()
    gc.disable()
    try:
        for _ in range(4):
            before = sys.getallocatedblocks()
            for _ in itertools.repeat(None, CALLS_PER_COUNT):
                function(*args)
            counts.append(sys.getallocatedblocks() - before)
    finally:
        if collecting:
            gc.enable()
    return max(round(count / CALLS_PER_COUNT) for count in counts[1:])


class FakeCell:
    """Stands in for the process's once-cell, which a test may not set: the
    first write wins, as in the real one, and every write is recorded."""

    def __init__(self, value: int | None = None) -> None:
        self.value = value
        self.writes: list[int] = []

    def set(self, slots: int) -> int:
        self.writes.append(slots)
        if self.value is None:
            self.value = slots
        return self.value

    def get(self) -> int | None:
        return self.value


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m decode_ring ARGS`` in a fresh process, with none of the
    ring's variables but those given."""
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("METRALE_")}
    child_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "decode_ring", *args],
        env=child_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
