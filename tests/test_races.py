"""Races that can fail: many threads on one once-cell and one environment
decision, round after round, each round in a process of its own
(``tests/race_rounds.py``), on both cores.

With the GIL the threads interleave at the interpreter's switches; on a
free-threaded CPython (``PYTHON_GIL=0``) they run at once, and these are the
tests that a check-and-set that is not atomic, or a reader that shares its
scratch memory between threads, fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROUNDS = {"publish": 60, "environment": 12}
RACE_ROUNDS = Path(__file__).with_name("race_rounds.py")


def run_rounds(race: str, core: ModuleType) -> dict[str, Any]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("METRALE_")}
    completed = subprocess.run(
        [sys.executable, str(RACE_ROUNDS), race, core.__name__, str(ROUNDS[race])],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    outcome: dict[str, Any] = json.loads(completed.stdout)
    return outcome


@pytest.mark.parametrize("race", sorted(ROUNDS))
def test_every_round_of_the_race_agrees(core: ModuleType, race: str) -> None:
    outcome = run_rounds(race, core)
    assert (outcome["rounds"], outcome["threads"]) == (ROUNDS[race], 64)
    assert outcome["failures"] == [], (
        f"{outcome['failed']} of {outcome['rounds']} rounds failed (GIL "
        f"{'on' if outcome['gil'] else 'off'}): {outcome['failures']}"
    )
