"""``decode_ring.cli.main`` run in this process, over a stand-in once-cell, and what every run
must look like whatever it was given.

``InProcessCli`` patches the preflight's once-cell with a fresh stand-in before each run (as
``tests/test_mutants_cli.py`` does), so a run that would publish a depth publishes nothing in
the test process, and every run starts with nothing published. Each run gets its own stdout,
stderr and stdin (a ``StringIO``), the ring's variables unset, and a scratch working directory,
so that a ``--plot`` with a drawn name writes nowhere else. ``check_outcome`` holds a run to the
README's exit-status table: no traceback, a status of the table, one line on stderr for an
error, and the JSON the README promises.

The fuzzers (``tests/test_cli_hostile_configs.py``) and the exhaustive sweep
(``tools/sweep-config-fields``) share both.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from decode_ring import _facade, _selector, cli, preflight
from decode_ring._facade import watchdogs_disabled_from_value

from .support import FakeCell

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "tests" / "configs"

# The README's exit-status table.
EXIT_STATUSES = frozenset({0, 1, 2, 74, 130, 141})
PROGRAM_ERROR = "decode-ring: error: "
PROGRAM_REFUSED = "decode-ring: refused: "
# vllm and sglang (issue 25): a launch the server would not boot says why on stdout, and the
# server's own refusal (its exception and words) on stderr.
SERVERS = frozenset({"vllm", "sglang"})
SERVER_REFUSED = re.compile(r"decode-ring: (ValueError|RuntimeError): \S")
SERVER_WHY = "the server would not boot: "
# What an escaped exception is recorded as: no status of the table.
ESCAPED = -1


@dataclass(frozen=True)
class Outcome:
    """One run: its status, what it wrote, and the traceback of anything that escaped
    ``main`` (``status`` is then ``ESCAPED``)."""

    status: int
    stdout: str
    stderr: str
    escaped: str | None = None


class InProcessCli:
    """Runs ``cli.main`` over a stand-in once-cell that starts empty for every run."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, workdir: Path) -> None:
        self.cell = FakeCell()
        self.workdir = workdir

        def decide(layers: int, speculative: bool) -> Any:
            return _selector.decode_rollback_ring_slots_with(
                layers,
                speculative,
                self.cell.value,
                os.environ.get("METRALE_SSM_DECODE_RING"),
                watchdogs_disabled_from_value(os.environ.get("METRALE_DISABLE_WATCHDOGS")),
            )

        monkeypatch.setattr(preflight, "set_decode_ring_slots", lambda slots: self.cell.set(slots))
        monkeypatch.setattr(preflight, "published_decode_ring_slots", lambda: self.cell.get())
        monkeypatch.setattr(preflight, "decode_rollback_ring_slots", decide)
        monkeypatch.setattr(_facade, "published_decode_ring_slots", lambda: self.cell.get())
        for name in ("METRALE_SSM_DECODE_RING", "METRALE_DISABLE_WATCHDOGS"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv("METRALE_SSM_RESERVE_RING_FULL", raising=False)
        monkeypatch.setenv("COLUMNS", "100")
        monkeypatch.chdir(workdir)

    def run(self, argv: Sequence[str], stdin: str = "") -> Outcome:
        """``main(argv)`` with its own streams and an empty once-cell."""
        self.cell = FakeCell()
        out, err = io.StringIO(), io.StringIO()
        saved = sys.stdout, sys.stderr, sys.stdin
        sys.stdout, sys.stderr, sys.stdin = out, err, io.StringIO(stdin)
        escaped = None
        try:
            status = cli.main(list(argv))
        except BaseException:  # main must return a status, whatever happens
            status, escaped = ESCAPED, traceback.format_exc()
        finally:
            sys.stdout, sys.stderr, sys.stdin = saved
        return Outcome(status, out.getvalue(), err.getvalue(), escaped)


@contextmanager
def in_process_cli(workdir: Path) -> Iterator[InProcessCli]:
    """An ``InProcessCli`` outside pytest's fixtures (for a script)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield InProcessCli(monkeypatch, workdir)


def problems(argv: Sequence[str], outcome: Outcome) -> list[str]:
    """What is wrong with ``outcome`` by the README's exit-status table (empty when nothing)."""
    found = []
    if outcome.escaped is not None:
        return [f"escaped main: {outcome.escaped.strip().splitlines()[-1]}"]
    status, stdout, stderr = outcome.status, outcome.stdout, outcome.stderr
    if "Traceback" in stderr or "Traceback" in stdout:
        found.append("a traceback")
    if status not in EXIT_STATUSES - {130, 141}:  # nothing interrupts or closes a pipe here
        found.append(f"status {status} is not in the table")
    plot = "--plot" in argv
    if status == 74 and not plot:
        found.append("status 74 though the output is a StringIO")
    if plot and stderr.startswith("decode-ring: wrote "):  # then at most the refusal
        stderr = stderr.split("\n", 1)[1]
    if stderr.count("\n") > 1 or "\n" in stderr.rstrip("\n"):
        found.append(f"more than one line on stderr: {stderr[:200]!a}")
    helped = {"--version", "--help", "-h"} & set(argv)
    wants_json = "--json" in argv
    if status == 2:
        if not stderr.startswith(PROGRAM_ERROR):
            found.append(f"a usage error without its line: {stderr[:200]!a}")
        if wants_json:
            try:
                error = json.loads(stdout)
                assert set(error) == {"error", "status"} and error["status"] == 2
            except (ValueError, AssertionError, TypeError):
                found.append(f"a usage error's JSON is not the error object: {stdout[:200]!a}")
        elif stdout:
            found.append(f"a usage error wrote to stdout: {stdout[:200]!a}")
    server = bool(argv) and argv[0] in SERVERS
    if status == 1 and server:
        if not SERVER_REFUSED.match(stderr):
            found.append(f"a server's refusal without its own line: {stderr[:200]!a}")
        if wants_json:
            try:
                refusal = json.loads(stdout)
                assert refusal["status"] == 1 and isinstance(refusal["error"], str)
            except (ValueError, AssertionError, TypeError, KeyError):
                found.append(f"a server's refusal's JSON is not its object: {stdout[:200]!a}")
        elif not stdout.startswith(SERVER_WHY):
            found.append(f"a server's refusal without why on stdout: {stdout[:200]!a}")
    elif status == 1 and not stderr.startswith(PROGRAM_REFUSED):
        found.append(f"a refusal without its line: {stderr[:200]!a}")
    if status in (0, 1) and wants_json and not helped:
        try:
            json.loads(stdout)
        except ValueError:
            found.append(f"--json printed no JSON object: {stdout[:200]!a}")
    return found


def check_outcome(argv: Sequence[str], outcome: Outcome) -> None:
    """Fails with the run and what is wrong with it, if anything is."""
    found = problems(argv, outcome)
    assert not found, (list(argv), found, outcome)
