"""Helpers shared by the tests and the benchmarks."""

from __future__ import annotations

import contextlib
import gc
import importlib
import itertools
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any
from unittest import mock

import pytest
from hypothesis import strategies as st

CORE_MODULES = {"cython": "decode_ring._core", "python": "decode_ring._core_py"}

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "tests" / "configs"
WRITTEN = CONFIGS / "written"
KiB, MiB, GiB = 2**10, 2**20, 2**30
# The fixtures the tests name most, as paths and as the command line writes them (relative to
# ROOT, where the CLI tests run).
NEMOTRON = CONFIGS / "nemotron-nano-9b-v2.json"
NEMOTRON_ARG = "tests/configs/nemotron-nano-9b-v2.json"
QWEN3_NEXT = CONFIGS / "qwen3-next-80b-a3b-instruct.json"
MAMBA = CONFIGS / "mamba-2.8b-hf.json"
KIMI_LINEAR = CONFIGS / "kimi-linear-48b-a3b-instruct.json"
# The README's worked example: 48 layers, 32 sequences of 151.5 MiB, 7,039 MiB of reserve
# without the ring, 14.1 GiB free.
PER_SEQ = 158_859_264
RESERVE = 7039 * MiB
FREE = 15_139_759_718
SLOT = 32 * PER_SEQ  # 5,083,496,448 B


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


@contextlib.contextmanager
def stand_in_once_cell() -> Iterator[FakeCell]:
    """The package over a ``FakeCell`` wherever it reads or writes the process's once-cell
    (publishing, the published depth, the decision that reads it), for as long as the block
    runs; the decision reads the ring's variables from the environment as the real one does."""
    from decode_ring import _facade, _selector, preflight

    fake = FakeCell()

    def decide(layers: int, speculative: bool) -> Any:
        return _selector.decode_rollback_ring_slots_with(
            layers,
            speculative,
            fake.value,
            os.environ.get("METRALE_SSM_DECODE_RING"),
            _facade.watchdogs_disabled_from_value(os.environ.get("METRALE_DISABLE_WATCHDOGS")),
        )

    with contextlib.ExitStack() as stack:
        stack.enter_context(mock.patch.object(preflight, "set_decode_ring_slots", fake.set))
        stack.enter_context(mock.patch.object(preflight, "published_decode_ring_slots", fake.get))
        stack.enter_context(mock.patch.object(preflight, "decode_rollback_ring_slots", decide))
        stack.enter_context(mock.patch.object(_facade, "published_decode_ring_slots", fake.get))
        yield fake


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``decode-ring ARGS`` through ``cli.main`` in this process: status, stdout, stderr."""
    from decode_ring.cli import main

    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    """``decode-ring ARGS --json``: the status and the one JSON line on stdout, read."""
    status, out, _ = run(capsys, *args, "--json")
    assert out.count("\n") == 1
    return status, json.loads(out)


def usage_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """The one stderr line of a refused command line, which exits 2 and prints nothing."""
    status, out, err = run(capsys, *args)
    assert (status, out) == (2, ""), err
    assert err.startswith("decode-ring: error: ") and err.endswith("\n")
    assert err.count("\n") == 1
    return err[len("decode-ring: error: ") : -1]


def whole(text: str) -> str:
    """A ``pytest.raises(match=...)`` pattern that matches exactly ``text``."""
    return f"^{re.escape(text)}$"


def squeeze(text: str) -> str:
    """``text`` with every run of whitespace made one space (help text wraps to the terminal)."""
    return " ".join(text.split())


# --- the servers' reservations under hostile arguments ---------------------------------------

# Values of every type and edge a launch line's argument may take, for the servers' fuzzers.
HOSTILE_ARGUMENTS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, 1, 2, 4, 8, 3, 4096, 2**63, 2**64, 20 * GiB, 60 * GiB, 10**30]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from(["auto", "float32", "bfloat16", "float16", "no_buffer", "extra_buffer"]),
)
FUZZED_CONFIGS = (
    NEMOTRON,
    QWEN3_NEXT,
    MAMBA,
    CONFIGS / "zaya1-8b-legacy.json",
    KIMI_LINEAR,
)


def answer_or_refusal(call: Callable[..., Any], config: Path, values: dict[str, Any]) -> Any:
    """``call``'s answer, or None where it refused with a documented, typed error whose message
    names what it refuses (an argument, or a config field)."""
    from hypothesis import event

    from decode_ring.models import ModelConfigError

    refusal: Exception | None = None
    try:
        answer = call(config, **values)
        event("answered")
        return answer
    except (ModelConfigError, TypeError) as error:
        refusal = error
    assert isinstance(refusal, ValueError | TypeError)
    message = str(refusal)
    assert "\n" not in message
    assert "argument " in message or "field " in message or "config" in message, message
    return None


def nemotron_with(**fields: object) -> dict[str, Any]:
    """Nemotron-Nano-9B-v2's config without its length keys, with ``fields`` added."""
    config: dict[str, Any] = json.loads(NEMOTRON.read_text())
    config.pop("max_position_embeddings", None)
    config.update(fields)
    return config
