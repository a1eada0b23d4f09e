"""Builds the floors once per session; prints the ratio table at the end of a
timed run and writes it where ``python -m benchmarks.misses`` reads it."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.support import compiled_core_may_be_missing

from .harness import LATEST, REPORT, build_floors


@pytest.fixture(scope="session")
def floors() -> ModuleType | None:
    """The floors, or None where they cannot be built and the compiled core
    need not be (no compiler, ``DECODE_RING_NO_EXTENSIONS``, not CPython)."""
    try:
        return build_floors()
    except Exception:
        if compiled_core_may_be_missing():
            return None
        raise


@pytest.hookimpl(trylast=True)  # after pytest-benchmark's own table
def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    if not REPORT.rows:
        return
    path = config.rootpath / LATEST
    REPORT.write(path)
    terminalreporter.section("decode_ring: interleaved with floors (same run)")
    for line in REPORT.lines():
        terminalreporter.write_line(line)
    terminalreporter.write_line(f"Written to {path}; its misses: python -m benchmarks.misses")
