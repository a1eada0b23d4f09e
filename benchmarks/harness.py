"""Benchmark harness: builds the floors and keeps the ratio table.

Every public call is measured on both cores beside its floor, a compiled
no-op with the same argument signature and conversions (``floors.pyx``), in
the same run. The table at the end gives each call's median, its ratio to its
floor and, for the cores, how many times slower the pure-Python twin is.
Figures are ratios: the machines are shared, absolute times drift.

    pytest benchmarks --benchmark-enable --benchmark-only
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import decode_ring

BENCHMARKS = Path(__file__).parent


def build_floors() -> ModuleType:
    """Compiles ``floors.pyx`` against the installed package's ``_usize.pxd``
    into ``benchmarks/build/`` (ignored by git), once per interpreter."""
    from Cython.Build import cythonize
    from setuptools import Distribution, Extension

    build = BENCHMARKS / "build" / f"floors-{sys.implementation.cache_tag}"
    package_parent = Path(decode_ring.__file__).resolve().parent.parent
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
    sys.path.insert(0, str(build))
    return importlib.import_module("floors")


@dataclass
class Row:
    call: str
    case: str
    implementation: str
    median_ns: float
    floor_ns: float | None = None
    target: float | None = None


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)
    latest_floor_ns: dict[str, float] = field(default_factory=dict)

    def record(
        self,
        call: str,
        case: str,
        implementation: str,
        median_ns: float,
        floor: str | None,
        target: float | None,
    ) -> None:
        """Records one median; a call is set beside the latest run of its floor."""
        if implementation == "floor":
            self.latest_floor_ns[call] = median_ns
            return
        floor_ns = self.latest_floor_ns.get(floor) if floor else None
        self.rows.append(Row(call, case, implementation, median_ns, floor_ns, target))

    def median(self, call: str, case: str, implementation: str) -> float | None:
        for row in self.rows:
            if (row.call, row.case, row.implementation) == (call, case, implementation):
                return row.median_ns
        return None

    def lines(self) -> Iterator[str]:
        header = (
            f"{'call':<34} {'input':<18} {'core':<7} {'median':>10} "
            f"{'floor':>9} {'x floor':>8} {'target':>7} {'py/cy':>7}"
        )
        yield header
        yield "-" * len(header)
        for row in self.rows:
            floor = row.floor_ns
            ratio = f"{row.median_ns / floor:.2f}x" if floor else ""
            verdict = ""
            if row.target is not None and floor:
                met = row.median_ns / floor <= row.target
                verdict = f"{'<=' if met else 'MISS'}{row.target:g}"
            factor = ""
            if row.implementation == "python":
                compiled = self.median(row.call, row.case, "cython")
                factor = f"{row.median_ns / compiled:.1f}x" if compiled else ""
            yield (
                f"{row.call:<34} {row.case:<18} {row.implementation:<7} "
                f"{row.median_ns:>8.1f}ns {floor or 0:>7.1f}ns {ratio:>8} "
                f"{verdict:>7} {factor:>7}"
            )


REPORT = Report()
