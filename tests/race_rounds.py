"""The races of ``tests/test_races.py``, round after round, each round in a
process of its own, so that every round starts on an empty once-cell.

    python tests/race_rounds.py RACE CORE_MODULE ROUNDS

Imports the core once, then forks a child per round where ``os.fork`` is
(this process starts no thread before it forks), or starts a fresh
interpreter per round where it is not. In each round ``THREADS`` threads
start together on a ``threading.Barrier``, then spin until all are past it,
so that the threads the machine runs at once enter the call within
nanoseconds of each other. The races:

``publish``
    thread ``i`` publishes depth ``i``; every thread must return the same
    depth, and ``published_decode_ring_slots()`` must return it afterwards.
``environment``
    ``THREADS`` threads share one ``EnvironmentDecision`` and one
    ``EnvironmentReader`` over the ring's two variables while ``FLIPPERS``
    threads set them, through ``os.environ``, to the values of ``RING_VALUES``
    and ``WATCHDOGS_VALUES``; both stay set throughout. Every decision must
    be one of ``ALLOWED_DECISIONS`` and every reading one of the value pairs.

Prints one JSON object: the race, the core, the rounds run, the threads and
calls per round, and each failed round's number and what went wrong (at most
``SHOWN`` of them), then exits 0; the test decides.
"""

from __future__ import annotations

import importlib
import itertools
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

THREADS = 64
FLIPPERS = 2
CALLS_PER_THREAD = 200
SHOWN = 5
RING, WATCHDOGS = "METRALE_SSM_DECODE_RING", "METRALE_DISABLE_WATCHDOGS"
# Both variables stay set, to values that each decide something else: a read
# that loses the ring variable decides "watchdogs disabled", which no pair of
# these values allows.
RING_VALUES = ("1", "0")
WATCHDOGS_VALUES = ("1", " TRUE ")  # both disable the watchdogs; the second by trimming
ALLOWED_DECISIONS = {(8, None), (0, None)}  # RING=1: the full ring; RING=0: none


def start_together(work: Callable[[int], None], threads: int) -> None:
    """Runs ``work(i)`` on ``threads`` threads that start together on a
    barrier."""
    barrier = threading.Barrier(threads)

    def run(index: int) -> None:
        barrier.wait()
        work(index)

    workers = [threading.Thread(target=run, args=(index,)) for index in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


def publish_round(core: ModuleType) -> str | None:
    returned: list[int | None] = [None] * THREADS

    def publish(index: int) -> None:
        returned[index] = core.set_decode_ring_slots(index)

    start_together(publish, THREADS)
    winners = sorted(set(returned), key=repr)
    published = core.published_decode_ring_slots()
    if len(winners) != 1 or winners[0] != published or published not in range(THREADS):
        return f"threads returned {winners}; published_decode_ring_slots() {published!r}"
    return None


def environment_round(core: ModuleType) -> str | None:
    from decode_ring._facade import make_decode_rollback_ring_slots

    os.environ[RING], os.environ[WATCHDOGS] = RING_VALUES[0], WATCHDOGS_VALUES[0]
    decide = make_decode_rollback_ring_slots(core)
    reader = core.EnvironmentReader((RING, WATCHDOGS))
    allowed_readings = set(itertools.product(RING_VALUES, WATCHDOGS_VALUES))
    readers_left = [THREADS]
    readers_left_lock = threading.Lock()
    wrong: list[str] = []

    def flip(variable: str, values: tuple[str, ...]) -> None:
        for value in itertools.cycle(values):
            with readers_left_lock:
                if not readers_left[0]:
                    return
            os.environ[variable] = value

    def read() -> None:
        for _ in range(CALLS_PER_THREAD):
            decision = decide(48, False)
            reading = reader.read()
            if (decision.slots, decision.skip_reason) not in ALLOWED_DECISIONS:
                wrong.append(f"decision {decision!r}")
            if reading not in allowed_readings:
                wrong.append(f"reading {reading!r}")

    def call(index: int) -> None:
        if index == 0:
            flip(RING, RING_VALUES)
        elif index == 1:
            flip(WATCHDOGS, WATCHDOGS_VALUES)
        else:
            try:
                read()
            finally:
                with readers_left_lock:
                    readers_left[0] -= 1

    start_together(call, FLIPPERS + THREADS)
    if wrong:
        return f"{len(wrong)} wrong results, such as {sorted(set(wrong))[:3]}"
    return None


RACES: dict[str, Callable[[ModuleType], str | None]] = {
    "publish": publish_round,
    "environment": environment_round,
}


def one_round(race: str, core: ModuleType) -> str | None:
    """Runs one round here; what went wrong, or None."""
    try:
        return RACES[race](core)
    except Exception as error:
        return f"{type(error).__name__}: {error}"


def forked_round(race: str, core: ModuleType) -> str | None:
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the round's own process
        os.close(read_end)
        outcome = one_round(race, core)
        os.write(write_end, json.dumps(outcome).encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        report = pipe.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not report:
        return f"the round's process ended with wait status {status} and said {report!r}"
    said: str | None = json.loads(report)
    return said


def fresh_interpreter_round(race: str, core_module: str) -> str | None:
    completed = subprocess.run(
        [sys.executable, __file__, race, core_module, "1"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if completed.returncode != 0:
        return f"the round's interpreter exited {completed.returncode}: {completed.stderr[-500:]}"
    failures: list[dict[str, Any]] = json.loads(completed.stdout)["failures"]
    return failures[0]["what"] if failures else None


def main(argv: list[str]) -> int:
    race, core_module, rounds = argv[0], argv[1], int(argv[2])
    core = importlib.import_module(core_module)
    if race == "environment":
        importlib.import_module("decode_ring._facade")
    if hasattr(sys, "setswitchinterval"):
        sys.setswitchinterval(1e-6)  # with the GIL: switch threads as often as it can
    failures = []
    for number in range(rounds):
        if rounds == 1:
            outcome = one_round(race, core)
        elif hasattr(os, "fork"):
            outcome = forked_round(race, core)
        else:
            outcome = fresh_interpreter_round(race, core_module)
        if outcome is not None:
            failures.append({"round": number, "what": outcome})
    print(
        json.dumps(
            {
                "race": race,
                "core": core_module,
                "rounds": rounds,
                "threads": THREADS,
                "gil": getattr(sys, "_is_gil_enabled", lambda: True)(),
                "failed": len(failures),
                "failures": failures[:SHOWN],
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.exit(main(sys.argv[1:]))
