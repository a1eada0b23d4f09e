"""The harness's own logic, on made-up figures: no timing is checked here, so
these run in CI like any test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from decode_ring import _core_py

from . import misses
from .harness import FLOOR, OWN_FLOOR, Decision, Report, describe, measure, verdict


def test_a_result_says_its_type() -> None:
    assert describe(True) != describe(1)
    assert describe(None) is None
    assert describe(_core_py.DecodeRingDecision(0, "watchdogs disabled")) == describe(
        Decision(0, "watchdogs disabled")
    )
    assert describe(_core_py.DecodeRingDecision(8)) != describe(Decision(8, "x"))


@pytest.mark.parametrize(
    ("value", "spread", "bound", "at_least", "expected"),
    [
        (1.20, 0.05, 1.25, False, "ok"),
        (1.25, 0.00, 1.25, False, "ok"),
        (1.28, 0.05, 1.25, False, "~"),
        (1.40, 0.05, 1.25, False, "MISS"),
        (12.0, 1.0, 10.0, True, "ok"),
        (9.5, 1.0, 10.0, True, "~"),
        (8.0, 1.0, 10.0, True, "MISS"),
    ],
)
def test_verdict(value: float, spread: float, bound: float, at_least: bool, expected: str) -> None:
    assert verdict(value, spread, bound, at_least) == expected


def test_measure_gives_every_contestant_every_round() -> None:
    def floor(a: int) -> None:
        return None

    def call(a: int) -> int:
        return a

    measurement = measure({FLOOR: floor, "cython": call}, (1,), rounds=3, warmup_rounds=1)
    assert sorted(measurement) == ["cython", FLOOR]
    assert all(len(times) == 3 and min(times) > 0 for times in measurement.values())


def report_with(cython: list[float], target: float) -> Report:
    report = Report()
    report.add(
        "call",
        "input",
        {
            FLOOR: [10.0, 10.0, 10.0, 10.0],
            OWN_FLOOR: [20.0, 20.0, 20.0, 20.0],
            "cython": cython,
            "python": [c * 12 for c in cython],
        },
        target=target,
        python_at_least=10,
        environment_size=40,
    )
    return report


def test_ratios_are_medians_of_per_round_ratios() -> None:
    (cython, python) = report_with([11.0, 12.0, 13.0, 14.0], 1.25).rows
    assert cython.ratio == pytest.approx(1.25)
    assert cython.ratio_iqr == pytest.approx(0.15)
    assert cython.own_ratio == pytest.approx(0.625)
    assert (cython.target, cython.verdict) == ("<=1.25", "ok")
    assert python.py_cy == pytest.approx(12)
    assert (python.target, python.verdict) == ("py/cy>=10", "ok")


def test_misses_lists_a_target_missed_by_more_than_the_spread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "latest.json"
    report_with([20.0, 20.0, 21.0, 21.0], 1.25).write(path)
    assert misses.main([str(path)]) == 1
    assert "MISS call [input] cython" in capsys.readouterr().out

    report_with([11.0, 11.0, 12.0, 12.0], 1.25).write(path)
    assert misses.main([str(path)]) == 0
    assert misses.main([str(tmp_path / "none.json")]) == 2
    assert json.loads(path.read_text())["rows"][0]["verdict"] == "ok"
