"""Helpers shared by the tests and the benchmarks."""

from __future__ import annotations

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


def blocks_allocated_by(function: Callable[..., object], *args: object) -> int:
    """Blocks still allocated after 10,000 calls. The least of three runs, so
    that a one-off allocation by the interpreter (a cache warming up) is not
    taken for one per call, which would show in every run."""
    counts = []
    for _ in range(3):
        before = sys.getallocatedblocks()
        for _ in itertools.repeat(None, 10_000):
            function(*args)
        counts.append(sys.getallocatedblocks() - before)
    return min(counts)


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
