"""Builds the floors once per session and prints the ratio table at the end."""

from __future__ import annotations

from types import ModuleType

import pytest

from .harness import REPORT, build_floors


@pytest.fixture(scope="session")
def floors() -> ModuleType:
    return build_floors()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not REPORT.rows:
        return
    terminalreporter.section("decode_ring: medians and ratios to floors (same run)")
    for line in REPORT.lines():
        terminalreporter.write_line(line)
