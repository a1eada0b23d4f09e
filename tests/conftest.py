"""One suite, run against both cores.

``api`` is parametrised over the compiled core and its pure-Python twin. The
compiled core may be missing only where it was not meant to be built
(``DECODE_RING_NO_EXTENSIONS`` or a non-CPython interpreter); anywhere else a
missing compiled core fails the run instead of skipping half of it.
"""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from decode_ring._facade import (
    make_decode_rollback_ring_slots,
    parse_decode_ring_slots,
    watchdogs_disabled_from_value,
)

from .support import CORE_MODULES, ROOT, FakeCell, RunPython, load_core, stand_in_once_cell


@pytest.fixture(scope="session", params=sorted(CORE_MODULES))
def core(request: pytest.FixtureRequest) -> ModuleType:
    """One core module, as ``_core`` or ``_core_py``."""
    return load_core(request.param)


@pytest.fixture
def api(core: ModuleType) -> SimpleNamespace:
    """The package's public API with ``core`` deciding: the core's own names,
    the facade's parsers and the environment-reading decision over it."""
    return SimpleNamespace(
        **{name: getattr(core, name) for name in dir(core) if not name.startswith("_")},
        parse_decode_ring_slots=parse_decode_ring_slots,
        watchdogs_disabled_from_value=watchdogs_disabled_from_value,
        decode_rollback_ring_slots=make_decode_rollback_ring_slots(core),
    )


@pytest.fixture(scope="session")
def both_cores() -> tuple[ModuleType, ModuleType]:
    return load_core("cython"), load_core("python")


@pytest.fixture(autouse=True)
def nothing_published_in_this_process() -> Iterator[None]:
    """The once-cell cannot be reset, so tests publish only in subprocesses."""
    yield
    for name in CORE_MODULES:
        try:
            module = importlib.import_module(CORE_MODULES[name])
        except ImportError:
            continue
        assert module.published_decode_ring_slots() is None, (
            f"a test published a depth in the test process ({name} core)"
        )


@pytest.fixture
def ring_environment(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """A monkeypatch with both of the reference's variables unset."""
    monkeypatch.delenv("METRALE_SSM_DECODE_RING", raising=False)
    monkeypatch.delenv("METRALE_DISABLE_WATCHDOGS", raising=False)
    monkeypatch.delenv("METRALE_SSM_RESERVE_RING_FULL", raising=False)
    return monkeypatch


@pytest.fixture
def cell(ring_environment: pytest.MonkeyPatch) -> Iterator[FakeCell]:
    """The package over a stand-in for the once-cell (a test may not publish), with the ring's
    variables unset, run from the repository's root (where the CLI tests name their configs)
    on a terminal 100 columns wide (where help text wraps)."""
    ring_environment.setenv("COLUMNS", "100")
    ring_environment.chdir(ROOT)
    with stand_in_once_cell() as fake:
        yield fake


@pytest.fixture
def run_python(tmp_path: Path) -> RunPython:
    """Runs a script in a fresh interpreter, with none of the ring's variables
    but those given, and returns what it prints: one ``repr`` a line, read
    back with ``ast.literal_eval``. The script is a file, so that ``spawn``
    children can import it as their ``__main__``."""

    def run(code: str, env: dict[str, str] | None = None, **popen: Any) -> list[Any]:
        script = tmp_path / f"script_{len(list(tmp_path.glob('script_*.py')))}.py"
        script.write_text(textwrap.dedent(code))
        child_env = {
            key: value for key, value in os.environ.items() if not key.startswith("METRALE_")
        }
        child_env.update(env or {})
        completed = subprocess.run(
            [sys.executable, str(script)],
            env=child_env,
            capture_output=True,
            text=True,
            timeout=120,
            **popen,
        )
        assert completed.returncode == 0, completed.stderr
        return [ast.literal_eval(line) for line in completed.stdout.splitlines()]

    return run
