"""Runs ``decode_ring.cli.main`` many times, each in a fresh fork.

The once-cell cannot be reset, and a new interpreter per run costs a tenth of
a second, so the command-line fuzzer sends its runs here: this process imports
the package once, then forks a child per run, which sees only the given
``METRALE_*`` variables, runs ``main(argv)`` with its output going to files,
and exits with main's status. A child reads nothing from stdin (``--config -``
sees an empty stream, not the protocol) and runs in a scratch directory, so
that ``--plot`` with a fuzzed name writes nowhere else. A child in which
anything escapes ``main`` prints the traceback and exits with ``UNCAUGHT``,
which no test accepts.

Protocol: one JSON object per line on stdin (``argv``, ``environment``); one
JSON object per line on stdout (``status``, ``stdout``, ``stderr``).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import traceback

from decode_ring.cli import main

UNCAUGHT = 99


def run_child(argv: list[str], environment: dict[str, str], out: str, err: str) -> None:
    for name in [name for name in os.environ if name.startswith("METRALE_")]:
        del os.environ[name]
    os.environ.update(environment)
    with open(out, "wb") as stdout_file, open(err, "wb") as stderr_file:
        os.dup2(stdout_file.fileno(), 1)
        os.dup2(stderr_file.fileno(), 2)
    with open(os.devnull, "rb") as nothing:
        os.dup2(nothing.fileno(), 0)
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 (the child's, for good)
    os.chdir(os.path.dirname(out))
    try:
        status = main(argv)
    except BaseException:  # main must return a status, whatever happens
        traceback.print_exc()
        status = UNCAUGHT
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(status)


def serve() -> None:
    scratch = tempfile.mkdtemp(prefix="decode-ring-fuzz-")
    out, err = os.path.join(scratch, "stdout"), os.path.join(scratch, "stderr")
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            run_child(request["argv"], request["environment"], out, err)
        _, wait_status = os.waitpid(pid, 0)
        with open(out, "rb") as stdout_file, open(err, "rb") as stderr_file:
            reply = {
                "status": os.waitstatus_to_exitcode(wait_status),
                "stdout": stdout_file.read().decode("utf-8", "backslashreplace"),
                "stderr": stderr_file.read().decode("utf-8", "backslashreplace"),
            }
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
