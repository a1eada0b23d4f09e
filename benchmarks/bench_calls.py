"""Every public call on both cores, beside its floors: one test a case.

Under ``--benchmark-disable`` (the suite's default) each case calls every
implementation and floor once and checks the result written out in
``cases.py``; under ``--benchmark-enable`` it also times them interleaved
(``harness.measure``) and adds rows to the table. Cases with a published depth
run in a child process (``publishing.py``), so this process never publishes.
"""

from __future__ import annotations

import os
from dataclasses import asdict
from types import ModuleType
from typing import Any

import pytest

from tests.support import load_core

from .cases import CASES, PAD_PREFIX, RING_VARIABLES, Case, Outcome, run_case
from .harness import REPORT, describe, floors_build_dir
from .publishing import run_in_child


@pytest.fixture(scope="session")
def cores() -> dict[str, ModuleType]:
    """Both cores, less the compiled one where it may be missing and is
    (``load_core``); anywhere else a missing compiled core fails the run."""
    found = {}
    for name in ("cython", "python"):
        try:
            found[name] = load_core(name)
        except pytest.skip.Exception:
            continue
    return found


def set_environment(monkeypatch: pytest.MonkeyPatch, case: Case) -> None:
    """The ring's variables as the case sets them, and dummy variables up to
    about ``case.environment_size``; ``os.environ`` calls ``putenv``, so the C
    environment the compiled reader scans has them too."""
    for name in RING_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in case.environment:
        monkeypatch.setenv(name, value)
    if case.environment_size is not None:
        for index in range(case.environment_size - len(os.environ)):
            monkeypatch.setenv(f"{PAD_PREFIX}{index:04d}", "x")


def run(
    case: Case, cores: dict[str, ModuleType], floors: ModuleType | None, timing: bool
) -> Outcome:
    if case.published is not None:
        return run_in_child(case, cores, None if floors is None else floors_build_dir(), timing)
    return run_case(case, cores, floors, timing)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_call(
    benchmark: Any,
    cores: dict[str, ModuleType],
    floors: ModuleType | None,
    monkeypatch: pytest.MonkeyPatch,
    case: Case,
) -> None:
    set_environment(monkeypatch, case)
    timing = bool(benchmark.enabled)
    if timing and floors is None:
        pytest.skip("the floors could not be built here, so there is nothing to time against")
    benchmark.group = "whole interleaved measurement of a case; per-call figures: decode_ring table"
    outcome: Outcome = benchmark.pedantic(
        run, args=(case, cores, floors, timing), rounds=1, iterations=1
    )

    expected = describe(case.expected)
    assert outcome.results, f"{case.id}: no implementation ran"
    for implementation, result in outcome.results.items():
        assert result == expected, f"{case.id} on {implementation}: {result} != {expected}"
    for floor, result in outcome.floor_results.items():
        assert result is None, f"{case.id}: {floor} returned {result}"

    if outcome.measurement is not None:
        rows = REPORT.add(
            case.call,
            case.label,
            outcome.measurement,
            case.target,
            case.python_at_least,
            outcome.environment_size,
            sized_environment=case.environment_size is not None,
            order=CASES.index(case),
        )
        benchmark.extra_info.update(rows=[asdict(row) for row in rows])
