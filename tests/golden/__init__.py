"""Golden files: the exact output of ``decode-ring ARGS``, one file per case.

``cases.json`` names each case: its command line (run from the repository's root, so that the
configs it names are shown as ``tests/configs/...``), its exit status, what it reads on stdin
(a file, for ``--config -``) and what it writes on stderr. ``<case>.txt`` is a text case's
whole stdout; ``<case>.json`` is a ``--json`` case's one line of JSON, indented two spaces, so
that a change shows as the fields that changed.

Each case runs through ``cli.main`` in this process, with none of the ring's variables set and
a stand-in for the once-cell (a command may publish a depth). ``tests/test_golden.py`` compares
every case with its file; ``python -m tests.golden`` regenerates them:

    python -m tests.golden --check     the unified diff of every case that differs; exit 1 if any
    python -m tests.golden --update    rewrite the files that differ (and write new cases' files),
                                       showing the same diff, and delete files no case names
    python -m tests.golden --update NAME...   only those cases
"""

from __future__ import annotations

import contextlib
import difflib
import io
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent
ROOT = GOLDEN.parent.parent
CASES = GOLDEN / "cases.json"


@dataclass(frozen=True)
class Case:
    name: str
    argv: tuple[str, ...]
    status: int = 0
    stdin: str | None = None  # a file, relative to ROOT, read on stdin
    stderr: str = ""

    @property
    def is_json(self) -> bool:
        return "--json" in self.argv

    @property
    def path(self) -> Path:
        return GOLDEN / f"{self.name}.{'json' if self.is_json else 'txt'}"


def load_cases() -> list[Case]:
    """Every case of ``cases.json``, in its order."""
    cases = json.loads(CASES.read_text(encoding="utf-8"))
    return [
        Case(
            name,
            tuple(case["argv"]),
            case.get("status", 0),
            case.get("stdin"),
            case.get("stderr", ""),
        )
        for name, case in cases.items()
    ]


@contextlib.contextmanager
def _as_in_a_fresh_shell(case: Case) -> Iterator[tuple[io.StringIO, io.StringIO]]:
    """Run from ROOT with none of the ring's variables, ``case.stdin`` on stdin and a stand-in
    once-cell; stdout and stderr captured. Everything is put back afterwards."""
    from ..support import stand_in_once_cell

    saved = {name: value for name, value in os.environ.items() if name.startswith("METRALE_")}
    cwd = Path.cwd()
    stdin = (ROOT / case.stdin).read_text(encoding="utf-8") if case.stdin else ""
    out, err = io.StringIO(), io.StringIO()
    try:
        for name in saved:
            del os.environ[name]
        os.chdir(ROOT)
        with (
            stand_in_once_cell(),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            _stdin(io.StringIO(stdin)),
        ):
            yield out, err
    finally:
        os.chdir(cwd)
        os.environ.update(saved)


@contextlib.contextmanager
def _stdin(stream: io.StringIO) -> Iterator[None]:
    saved, sys.stdin = sys.stdin, stream
    try:
        yield
    finally:
        sys.stdin = saved


def run(case: Case) -> tuple[int, str, str]:
    """``decode-ring`` on the case's command line: the exit status, stdout and stderr."""
    from decode_ring.cli import main

    with _as_in_a_fresh_shell(case) as (out, err):
        status = main(list(case.argv))
    return status, out.getvalue(), err.getvalue()


def as_golden(case: Case, stdout: str) -> str:
    """What the case's file holds for this stdout: the text itself, or the JSON indented."""
    if not case.is_json:
        return stdout
    return json.dumps(json.loads(stdout), indent=2, ensure_ascii=False) + "\n"


def diff(case: Case, expected: str, actual: str) -> str:
    """A unified diff from the file's text to the output's."""
    name = str(case.path.relative_to(ROOT))
    return "".join(
        difflib.unified_diff(
            expected.splitlines(keepends=True),
            actual.splitlines(keepends=True),
            fromfile=f"{name} (golden)",
            tofile=f"{name} (decode-ring {' '.join(case.argv)})",
        )
    )
