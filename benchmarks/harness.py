"""Benchmark harness: builds the floors, times calls interleaved with them,
and keeps the ratio table.

    pytest benchmarks --benchmark-enable --benchmark-only   # the table
    python -m benchmarks.misses                             # its MISS rows

What is measured
    Every public call, on both cores, beside two *floors* (``floors.pyx``):
    compiled no-ops with the call's argument signature. ``noop*`` let Cython
    convert the arguments itself (``size_t``, ``bint``, ``str``): the
    cheapest crossing, and the one the targets are set against.
    ``own_noop*`` convert as the compiled core does, through
    ``decode_ring._usize.as_usize``; the table gives the ratio to them as a
    second column.

How a case is timed (``measure``)
    Each contestant (the cheapest floor, the own-conversion floor, the
    compiled call, the pure-Python call) gets a batch size calibrated so that
    a batch takes about ``BATCH_NS``. Then ``ROUNDS`` rounds, after
    ``WARMUP_ROUNDS`` discarded ones; a round times one batch of every
    contestant, in an order rotated by one each round, so that each goes
    first as often as the others and drift on a shared machine touches a call
    and its floor alike. A batch is a ``timeit.Timer`` loop over
    ``time.perf_counter_ns`` with the function and its arguments bound to
    local names (no ``*args``), the garbage collector off; its time divided
    by the batch size is that round's time per call. The loop's own cost is
    in every figure, the floors' included.

What the table says (``Report``)
    ns/call and floor: medians over the rounds. x floor: the median of the
    per-round ratios call / cheapest floor, with their interquartile range
    (IQR); x own: the same against the own-conversion floor. py/cy: the
    median of per-round ratios pure-Python / compiled, with its IQR. A target
    is met (ok), missed by no more than the IQR (~), or missed by more than
    the IQR (MISS). Environment-size rows also give the cost per variable: a
    least-squares slope of ns/call over the number of variables.

pytest-benchmark's part
    It is the switch: under ``--benchmark-disable`` (the suite's default,
    and CI's) each case calls each function once and checks the result
    written out in ``cases.py``, and nothing is timed. Under
    ``--benchmark-enable`` a case runs once inside ``benchmark.pedantic(...,
    rounds=1)``, so pytest-benchmark's own table gives how long each case's
    whole interleaved measurement took, not a time per call; the per-call
    figures are in this harness's table, printed at the end of the run and
    written to ``.benchmarks/decode_ring-latest.json`` (``LATEST``, under the
    rootdir; git ignores it), which ``python -m benchmarks.misses`` reads.
    Nothing in CI reads timings.

Publishing is for good in a process, so cases that need a published depth
run in a child process (``python -m benchmarks.publishing``), which publishes,
checks, measures with this same code and prints JSON.
"""

from __future__ import annotations

import gc
import importlib
import json
import math
import os
import platform
import statistics
import sys
import time
import timeit
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import decode_ring

BENCHMARKS = Path(__file__).parent
LATEST = Path(".benchmarks") / "decode_ring-latest.json"

ROUNDS = 301
WARMUP_ROUNDS = 10
BATCH_NS = 40_000

FLOOR, OWN_FLOOR = "floor", "own floor"


def floors_build_dir() -> Path:
    return BENCHMARKS / "build" / f"floors-{sys.implementation.cache_tag}"


def build_floors() -> ModuleType:
    """Compiles ``floors.pyx`` against the installed package's ``_usize.pxd``
    into ``benchmarks/build/`` (ignored by git), once per interpreter; the
    build is skipped while it is newer than ``floors.pyx`` and ``_usize.pxd``."""
    build = floors_build_dir()
    package_parent = Path(decode_ring.__file__).resolve().parent.parent
    sources = [BENCHMARKS / "floors.pyx", package_parent / "decode_ring" / "_usize.pxd"]
    built = sorted(build.glob("floors.*.so")) + sorted(build.glob("floors.*.pyd"))
    newest_source = max(source.stat().st_mtime for source in sources)
    if built and built[0].stat().st_mtime > newest_source:
        return import_floors(build)

    from Cython.Build import cythonize
    from setuptools import Distribution, Extension

    extensions = cythonize(  # type: ignore[no-untyped-call]
        [Extension("floors", [str(BENCHMARKS / "floors.pyx")])],
        build_dir=str(build),
        include_path=[str(package_parent)],
        compiler_directives={"language_level": 3},
        quiet=True,
    )
    distribution = Distribution({"ext_modules": extensions})
    command = distribution.get_command_obj("build_ext")
    command.build_lib = str(build)
    command.build_temp = str(build / "temp")
    command.ensure_finalized()
    command.run()
    return import_floors(build)


def import_floors(build: Path) -> ModuleType:
    if str(build) not in sys.path:
        sys.path.insert(0, str(build))
    return importlib.import_module("floors")


# Results, written out.


@dataclass(frozen=True)
class Decision:
    """An expected ``DecodeRingDecision``, written out."""

    slots: int
    skip_reason: str | None = None


def describe(value: object) -> object:
    """A result as plain JSON data that says its type, so that ``True`` is not
    taken for ``1`` and a decision of either core compares with a
    ``Decision``."""
    if isinstance(value, Decision) or type(value).__name__ == "DecodeRingDecision":
        decision: Any = value
        return {"DecodeRingDecision": [decision.slots, decision.skip_reason]}
    if value is None:
        return None
    if isinstance(value, (bool, int, str)):
        return {type(value).__name__: value}
    return {"repr": repr(value)}


# Timing.


def batch_timer(function: Callable[..., object], args: Sequence[object]) -> timeit.Timer:
    """A ``timeit.Timer`` calling ``function(*args)`` with the function and
    each argument bound to a local name; ``timeit(n)`` gives nanoseconds."""
    namespace: dict[str, Any] = {"function_": function}
    setup = ["f = function_"]
    for index, value in enumerate(args):
        namespace[f"value_{index}"] = value
        setup.append(f"a{index} = value_{index}")
    call = f"f({', '.join(f'a{index}' for index in range(len(args)))})"
    return timeit.Timer(call, "; ".join(setup), timer=time.perf_counter_ns, globals=namespace)


def batch_size(timer: timeit.Timer) -> int:
    """Calls per batch, so that a batch takes about ``BATCH_NS``."""
    number = 1
    while True:
        elapsed = min(timer.timeit(number) for _ in range(3))
        if elapsed >= BATCH_NS / 10 or number >= 10**7:
            return max(1, math.ceil(number * BATCH_NS / max(elapsed, 1)))
        number *= 10


Measurement = dict[str, list[float]]  # contestant -> ns per call, one entry a round


def measure(
    contestants: Mapping[str, Callable[..., object]],
    args: Sequence[object],
    rounds: int = ROUNDS,
    warmup_rounds: int = WARMUP_ROUNDS,
) -> Measurement:
    """Times ``contestants`` interleaved, round by round (see the module's
    docstring); returns each one's time per call in every round."""
    names = list(contestants)
    timers = {name: batch_timer(contestants[name], args) for name in names}
    sizes = {name: batch_size(timers[name]) for name in names}
    per_call: Measurement = {name: [] for name in names}
    gc.collect()
    for round_index in range(-warmup_rounds, rounds):
        shift = round_index % len(names)
        for name in names[shift:] + names[:shift]:
            elapsed = timers[name].timeit(sizes[name])
            if round_index >= 0:
                per_call[name].append(elapsed / sizes[name])
    return per_call


def median_and_iqr(values: Sequence[float]) -> tuple[float, float]:
    if len(values) < 2:
        return values[0], 0.0
    first, second, third = statistics.quantiles(values, n=4, method="inclusive")
    return second, third - first


def per_round_ratios(numerators: Sequence[float], denominators: Sequence[float]) -> list[float]:
    return [top / bottom for top, bottom in zip(numerators, denominators, strict=True)]


def verdict(value: float, spread: float, bound: float, at_least: bool) -> str:
    """ok: the target is met; ~: missed by no more than the spread; MISS:
    missed by more."""
    gap = bound - value if at_least else value - bound
    if gap <= 0:
        return "ok"
    return "~" if gap <= spread else "MISS"


# The table.


@dataclass
class Row:
    call: str
    case: str
    implementation: str
    median_ns: float
    floor_ns: float
    ratio: float
    ratio_iqr: float
    own_ratio: float | None
    py_cy: float | None
    py_cy_iqr: float | None
    target: str
    verdict: str
    environment_size: int
    sized_environment: bool
    order: int = 0  # the case's place in the case list: rows print in that order


IMPLEMENTATION_ORDER = {"cython": 0, "facade": 0, "python": 1}


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)

    def add(
        self,
        call: str,
        case: str,
        measurement: Measurement,
        target: float | None,
        python_at_least: float | None,
        environment_size: int,
        sized_environment: bool = False,
        order: int = 0,
    ) -> list[Row]:
        """Adds a row for each implementation measured in ``measurement``;
        returns them. Rows are kept in ``order``, whatever order the cases
        ran in."""
        floor = measurement[FLOOR]
        floor_ns, _ = median_and_iqr(floor)
        added = []
        for implementation, times in measurement.items():
            if implementation in (FLOOR, OWN_FLOOR):
                continue
            ratio, ratio_iqr = median_and_iqr(per_round_ratios(times, floor))
            own_ratio = None
            if OWN_FLOOR in measurement:
                own_ratio, _ = median_and_iqr(per_round_ratios(times, measurement[OWN_FLOOR]))
            py_cy = py_cy_iqr = None
            if implementation == "python" and "cython" in measurement:
                py_cy, py_cy_iqr = median_and_iqr(per_round_ratios(times, measurement["cython"]))
            target_text, outcome = "", ""
            if implementation == "python":
                if python_at_least is not None and py_cy is not None and py_cy_iqr is not None:
                    target_text = f"py/cy>={python_at_least:g}"
                    outcome = verdict(py_cy, py_cy_iqr, python_at_least, at_least=True)
            elif target is not None:
                target_text = f"<={target:g}"
                outcome = verdict(ratio, ratio_iqr, target, at_least=False)
            row = Row(
                call,
                case,
                implementation,
                statistics.median(times),
                floor_ns,
                ratio,
                ratio_iqr,
                own_ratio,
                py_cy,
                py_cy_iqr,
                target_text,
                outcome,
                environment_size,
                sized_environment,
                order,
            )
            self.rows.append(row)
            added.append(row)
        self.rows.sort(key=lambda row: (row.order, IMPLEMENTATION_ORDER.get(row.implementation, 2)))
        return added

    def per_variable_ns(self) -> dict[str, dict[str, Any]]:
        """For each call and implementation measured at several environment
        sizes: the least-squares slope of ns/call over the number of
        variables."""
        groups: dict[tuple[str, str], list[Row]] = {}
        for row in self.rows:
            if row.sized_environment:
                groups.setdefault((row.call, row.implementation), []).append(row)
        slopes = {}
        for (call, implementation), rows in groups.items():
            sizes = [float(row.environment_size) for row in rows]
            if len(set(sizes)) < 2:
                continue
            slope, intercept = statistics.linear_regression(sizes, [row.median_ns for row in rows])
            slopes[f"{call} {implementation}"] = {
                "ns_per_variable": slope,
                "ns_at_zero_variables": intercept,
                "points": {row.environment_size: row.median_ns for row in rows},
            }
        return slopes

    def lines(self) -> Iterator[str]:
        header = (
            f"{'call':<31} {'input':<17} {'core':<6} {'ns/call':>8} {'floor':>6} "
            f"{'x floor':>7} {'IQR':>5} {'x own':>5} {'target':>10} {'':<4} "
            f"{'py/cy':>6} {'IQR':>5}"
        )
        yield header
        yield "-" * len(header)
        for row in self.rows:
            own = f"{row.own_ratio:.2f}" if row.own_ratio is not None else "-"
            py_cy = f"{row.py_cy:.1f}x" if row.py_cy is not None else ""
            py_cy_iqr = f"{row.py_cy_iqr:.1f}" if row.py_cy_iqr is not None else ""
            yield (
                f"{row.call:<31} {row.case:<17} {row.implementation:<6} "
                f"{row.median_ns:>8.1f} {row.floor_ns:>6.1f} {row.ratio:>6.2f}x "
                f"{row.ratio_iqr:>5.2f} {own:>5} {row.target:>10} {row.verdict:<4} "
                f"{py_cy:>6} {py_cy_iqr:>5}"
            )
        slopes = self.per_variable_ns()
        if slopes:
            yield ""
            yield "Cost per environment variable (least-squares slope of ns/call):"
            for name, slope in slopes.items():
                points = ", ".join(
                    f"{size} vars {ns:.0f} ns" for size, ns in sorted(slope["points"].items())
                )
                yield f"  {name}: {slope['ns_per_variable']:.3f} ns per variable ({points})"
        yield ""
        yield (
            "ns/call, floor: medians over rounds; x floor, x own, py/cy: medians of per-round "
            "ratios. ok: met; ~: missed by no more than the IQR; MISS: missed by more."
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "generated": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "python": sys.version,
            "platform": platform.platform(),
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "core": decode_ring.CORE,
            "rounds": ROUNDS,
            "batch_ns": BATCH_NS,
            "rows": [asdict(row) for row in self.rows],
            "per_variable_ns": self.per_variable_ns(),
        }

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.as_json(), indent=1) + "\n")


REPORT = Report()
