"""The benchmark cases: every public call, its input, its result written out,
its floors and its target.

Targets are ratios to the cheapest floor (``noop*`` in ``floors.pyx``), for the
compiled core (or the facade); ``python_at_least`` is the least factor by
which the pure-Python twin must be slower than the compiled core. A case with
``published`` runs in a child process that publishes that depth first, since
the test process must never publish.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from decode_ring._facade import (
    make_decode_rollback_ring_slots,
    parse_decode_ring_slots,
    watchdogs_disabled_from_value,
)

from .harness import FLOOR, OWN_FLOOR, Decision, Measurement, describe, measure

MiB, GiB = 2**20, 2**30
WORKED_EXAMPLE_FIT = (8, 7039 * MiB, 32 * 158_859_264, int(14.1 * GiB))
RING, WATCHDOGS = "METRALE_SSM_DECODE_RING", "METRALE_DISABLE_WATCHDOGS"
RING_VARIABLES = (RING, WATCHDOGS)
PAD_PREFIX = "DECODE_RING_BENCH_PAD_"

FACADE_CALLS: dict[str, Callable[..., object]] = {
    "parse_decode_ring_slots": parse_decode_ring_slots,
    "watchdogs_disabled_from_value": watchdogs_disabled_from_value,
}
ENVIRONMENT_CALL = "decode_rollback_ring_slots"


@dataclass(frozen=True)
class Case:
    call: str
    label: str
    args: tuple[Any, ...]
    expected: object
    floor: str
    own_floor: str | None = None
    target: float | None = None
    python_at_least: float | None = None
    environment: tuple[tuple[str, str], ...] = ()
    environment_size: int | None = None  # pad the environment to about this many variables
    published: int | None = None

    @property
    def id(self) -> str:
        return f"{self.call}-{self.label}"


def environment_case(
    label: str,
    expected: Decision,
    environment: dict[str, str] | None = None,
    *,
    target: float | None = 6,
    environment_size: int | None = None,
    published: int | None = None,
    floor: str = "noop2",
) -> Case:
    return Case(
        ENVIRONMENT_CALL,
        label,
        (48, False),
        expected,
        floor,
        "own_noop2",
        target,
        environment=tuple(sorted((environment or {}).items())),
        environment_size=environment_size,
        published=published,
    )


def facade_case(call: str, label: str, value: str | None, expected: object) -> Case:
    return Case(call, label, (value,), expected, "noop1_str", "own_noop1_str")


WATCHDOGS_DISABLED = Decision(0, "watchdogs disabled")

CASES = [
    Case(
        "fit_decode_ring_slots",
        "worked example",
        WORKED_EXAMPLE_FIT,
        1,
        "noop4",
        "own_noop4",
        1.25,
        python_at_least=10,
    ),
    Case(
        "fit_decode_ring_slots",
        "(8, 0, 1, 8)",
        (8, 0, 1, 8),
        8,
        "noop4",
        "own_noop4",
        1.25,
        python_at_least=10,
    ),
    Case(
        "decode_rollback_ring_slots_with",
        "default",
        (48, False, None, None, False),
        Decision(8),
        "noop5",
        "own_noop5",
        1.25,
    ),
    Case(
        "decode_rollback_ring_slots_with",
        "published 4",
        (48, False, 4, None, False),
        Decision(4),
        "noop5",
        "own_noop5",
        1.25,
    ),
    Case(
        "decode_rollback_ring_slots_with",
        "watchdogs off",
        (48, False, None, None, True),
        WATCHDOGS_DISABLED,
        "noop5",
        "own_noop5",
        1.25,
    ),
    Case("published_decode_ring_slots", "unpublished", (), None, "noop0", None, 1.25),
    Case("published_decode_ring_slots", "published 4", (), 4, "noop0", None, 1.25, published=4),
    # The first write published 4; a later write returns the depth in force.
    Case(
        "set_decode_ring_slots",
        "later write (2)",
        (2,),
        4,
        "noop1",
        "own_noop1",
        1.25,
        published=4,
    ),
    Case(
        "DecodeRingDecision",
        "(0, reason)",
        (0, "watchdogs disabled"),
        WATCHDOGS_DISABLED,
        "noop_decision",
        "own_noop_decision",
    ),
    environment_case("unset", Decision(8)),
    environment_case("WD=1", WATCHDOGS_DISABLED, {WATCHDOGS: "1"}),
    environment_case("WD=true", WATCHDOGS_DISABLED, {WATCHDOGS: "true"}),
    environment_case("RING=1 WD=true", Decision(8), {RING: "1", WATCHDOGS: "true"}),
    environment_case("RING=0", Decision(0), {RING: "0"}),
    environment_case("WD=' TRUE '", WATCHDOGS_DISABLED, {WATCHDOGS: " TRUE "}),
    environment_case("WD='True'", WATCHDOGS_DISABLED, {WATCHDOGS: "True"}),
    environment_case("WD='yes'", Decision(8), {WATCHDOGS: "yes"}),
    environment_case("published 4", Decision(4), published=4),
    # How the cost grows with the environment's size (the table ends with the
    # cost per variable). In a large environment the floor is one C getenv
    # of the unset variable, one whole scan (floors.getenv2): the decision's
    # single pass for both variables must cost about as much.
    environment_case("unset, ~40 vars", Decision(8), environment_size=40),
    environment_case(
        "~400 vs getenv", Decision(8), environment_size=400, target=1.2, floor="getenv2"
    ),
    environment_case(
        "~4000 vs getenv", Decision(8), environment_size=4000, target=1.2, floor="getenv2"
    ),
    facade_case("parse_decode_ring_slots", "auto", "auto", None),
    facade_case("parse_decode_ring_slots", "3", "3", 3),
    facade_case("parse_decode_ring_slots", "+0008", "+0008", 8),
    facade_case("watchdogs_disabled_from_value", "None", None, False),
    facade_case("watchdogs_disabled_from_value", "true", "true", True),
    facade_case("watchdogs_disabled_from_value", "' TRUE '", " TRUE ", True),
    facade_case("watchdogs_disabled_from_value", "'True'", "True", True),
]

CASES_BY_ID = {case.id: case for case in CASES}
assert len(CASES_BY_ID) == len(CASES), "two cases share an id"


def functions_for(case: Case, cores: Mapping[str, ModuleType]) -> dict[str, Callable[..., object]]:
    """The implementations of ``case.call`` over ``cores`` (name: module), by name."""
    if case.call in FACADE_CALLS:
        return {"facade": FACADE_CALLS[case.call]}
    if case.call == ENVIRONMENT_CALL:
        return {name: make_decode_rollback_ring_slots(core) for name, core in cores.items()}
    return {name: getattr(core, case.call) for name, core in cores.items()}


def floors_for(case: Case, floors: ModuleType) -> dict[str, Callable[..., object]]:
    """The case's floors: the cheapest, and the own-conversion one if any."""
    chosen = {FLOOR: getattr(floors, case.floor)}
    if case.own_floor is not None:
        chosen[OWN_FLOOR] = getattr(floors, case.own_floor)
    return chosen


@dataclass
class Outcome:
    """What running a case gave: each implementation's result and each
    floor's, described (``harness.describe``), and the measurement if timed."""

    results: dict[str, object]
    floor_results: dict[str, object]
    measurement: Measurement | None
    environment_size: int

    def as_json(self) -> dict[str, Any]:
        return {
            "results": self.results,
            "floor_results": self.floor_results,
            "measurement": self.measurement,
            "environment_size": self.environment_size,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Outcome:
        return cls(
            data["results"], data["floor_results"], data["measurement"], data["environment_size"]
        )


def run_case(
    case: Case, cores: Mapping[str, ModuleType], floors: ModuleType | None, timing: bool
) -> Outcome:
    """Calls every implementation and floor once, then, if ``timing``, times
    them interleaved. The environment is the caller's to set; ``published``
    is not looked at here."""
    functions = functions_for(case, cores)
    floor_functions = floors_for(case, floors) if floors is not None else {}
    results = {name: describe(function(*case.args)) for name, function in functions.items()}
    floor_results = {
        name: describe(function(*case.args)) for name, function in floor_functions.items()
    }
    measurement = measure({**floor_functions, **functions}, case.args) if timing else None
    return Outcome(results, floor_results, measurement, len(os.environ))
