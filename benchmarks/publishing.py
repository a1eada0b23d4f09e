"""Runs one benchmark case that needs a published depth, in a process of its
own: publishing is for good in a process, and the test process must never
publish (``tests/conftest.py`` fails any test that does).

    echo '{"case": "set_decode_ring_slots-later write (2)",
           "cores": {"python": "decode_ring._core_py"},
           "floors": null, "timing": false}' | python -m benchmarks.publishing

Reads the case's id, the cores to run it on (name: module), the floors' build
folder (or null) and whether to time from standard input as JSON; publishes
``case.published`` on every core, runs the case (``cases.run_case``) and prints
its ``Outcome`` as JSON. The parent, ``bench_calls.py``, checks the results
and records the measurement. Imports neither pytest nor ``tests``, to start
fast.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType

from .cases import CASES_BY_ID, Case, Outcome, run_case
from .harness import BENCHMARKS, import_floors


def run_in_child(
    case: Case, cores: Mapping[str, ModuleType], floors_build: Path | None, timing: bool
) -> Outcome:
    """Runs ``case`` on ``cores`` in a fresh interpreter with this process's
    environment."""
    request = {
        "case": case.id,
        "cores": {name: core.__name__ for name, core in cores.items()},
        "floors": None if floors_build is None else str(floors_build),
        "timing": timing,
    }
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks.publishing"],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        cwd=BENCHMARKS.parent,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return Outcome.from_json(json.loads(completed.stdout))


def main() -> None:
    request = json.load(sys.stdin)
    case = CASES_BY_ID[request["case"]]
    assert case.published is not None, f"{case.id} publishes nothing"
    floors = None if request["floors"] is None else import_floors(Path(request["floors"]))
    cores = {name: importlib.import_module(module) for name, module in request["cores"].items()}
    for name, core in cores.items():
        in_force = core.set_decode_ring_slots(case.published)
        assert in_force == case.published, f"{name} core: {in_force} in force"
    outcome = run_case(case, cores, floors, request["timing"])
    json.dump(outcome.as_json(), sys.stdout)


if __name__ == "__main__":
    main()
