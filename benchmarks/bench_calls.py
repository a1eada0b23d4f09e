"""Every public call on both cores, beside its floor.

Cases run in the order listed, each call's floor just before it, so that
drift on a shared machine touches a call and its floor alike. Publishing is
for good in a process, so ``set_decode_ring_slots`` comes last: it measures
the later writes, the ones a running server makes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pytest

from decode_ring._facade import (
    make_decode_rollback_ring_slots,
    parse_decode_ring_slots,
    watchdogs_disabled_from_value,
)
from tests.support import load_core

from .harness import REPORT

MiB, GiB = 2**20, 2**30
WORKED_EXAMPLE_FIT = (8, 7039 * MiB, 32 * 158_859_264, int(14.1 * GiB))
BOTH_SET = {"METRALE_SSM_DECODE_RING": "1", "METRALE_DISABLE_WATCHDOGS": "true"}


@dataclass(frozen=True)
class Case:
    call: str
    case: str
    implementation: str  # "cython", "python", "facade" or "floor"
    args: tuple[Any, ...] = ()
    floor: str | None = None
    target: float | None = None
    environment: tuple[tuple[str, str], ...] = ()

    @property
    def id(self) -> str:
        return "-".join(part for part in (self.call, self.case, self.implementation) if part)


def core_cases(
    call: str,
    case: str,
    args: tuple[Any, ...],
    floor: str,
    target: float | None,
    environment: dict[str, str] | None = None,
) -> list[Case]:
    env = tuple(sorted((environment or {}).items()))
    return [
        Case(floor, case, "floor", args, environment=env),
        Case(call, case, "cython", args, floor, target, env),
        Case(call, case, "python", args, floor, None, env),
    ]


def facade_cases(call: str, inputs: list[tuple[str, Any]]) -> list[Case]:
    return [Case("noop_1_str", call, "floor", (inputs[0][1],))] + [
        Case(call, label, "facade", (value,), "noop_1_str") for label, value in inputs
    ]


CASES = [
    *core_cases("fit_decode_ring_slots", "worked example", WORKED_EXAMPLE_FIT, "noop_4", 1.25),
    *core_cases(
        "decode_rollback_ring_slots_with", "default", (48, False, None, None, False), "noop_5", 1.25
    ),
    *core_cases("published_decode_ring_slots", "unpublished", (), "noop_0", 1.25),
    *core_cases(
        "DecodeRingDecision", "(0, reason)", (0, "watchdogs disabled"), "noop_decision", None
    ),
    *core_cases("decode_rollback_ring_slots", "env unset", (48, False), "noop_2", 6),
    *core_cases("decode_rollback_ring_slots", "env both set", (48, False), "noop_2", 9, BOTH_SET),
    *facade_cases("parse_decode_ring_slots", [("auto", "auto"), ("3", "3"), ("+0008", "+0008")]),
    *facade_cases(
        "watchdogs_disabled_from_value", [("None", None), ("true", "true"), ("' TRUE '", " TRUE ")]
    ),
    *core_cases("set_decode_ring_slots", "later write", (4,), "noop_1_usize", 1.25),
]


def function_for(case: Case, floors: ModuleType) -> Callable[..., object]:
    if case.implementation == "floor":
        return getattr(floors, case.call)  # type: ignore[no-any-return]
    if case.implementation == "facade":
        return {
            "parse_decode_ring_slots": parse_decode_ring_slots,
            "watchdogs_disabled_from_value": watchdogs_disabled_from_value,
        }[case.call]
    core = load_core(case.implementation)
    if case.call == "decode_rollback_ring_slots":
        return make_decode_rollback_ring_slots(core)
    return getattr(core, case.call)  # type: ignore[no-any-return]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_call(
    benchmark: Any, floors: ModuleType, monkeypatch: pytest.MonkeyPatch, case: Case
) -> None:
    for name in ("METRALE_SSM_DECODE_RING", "METRALE_DISABLE_WATCHDOGS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in case.environment:
        monkeypatch.setenv(name, value)
    function = function_for(case, floors)
    if case.call == "set_decode_ring_slots":
        function(*case.args)  # the first write; the benchmark times later ones
    benchmark.group = case.call if case.implementation != "floor" else None
    benchmark.extra_info.update(call=case.call, case=case.case, implementation=case.implementation)
    result = benchmark(function, *case.args)
    if case.implementation == "floor":
        assert result is None
    else:
        assert result == function(*case.args)
    if benchmark.stats is not None:  # None under --benchmark-disable
        REPORT.record(
            case.call,
            case.case,
            case.implementation,
            benchmark.stats.stats.median * 1e9,
            case.floor,
            case.target,
        )
