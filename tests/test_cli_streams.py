"""Every error path honours the README's exit-status table whatever stdout, stderr and stdin are:
closed (``>&-``), full (``/dev/full``), usage errors and ``--help`` / ``--version`` included.
An error while saying an error does not change the status.

Issue 28, item 6: a ``--json`` usage error with stdout full or closed, a command with stdout
closed, ``--config -`` with stdin closed, and a usage error with stderr full each ended in a
traceback and exit 1; ``--help`` and ``--version`` to a full disk exited 0, having said nothing.
These run ``python -m decode_ring`` with real descriptors.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
NEMOTRON = str(ROOT / "tests" / "configs" / "nemotron-nano-9b-v2.json")
ERROR = "decode-ring: error: "
CLOSED = "closed"
FULL = "/dev/full"
# A usage error, a run that prints, and one the server refuses (exit 1).
USAGE = ["decide", "--ssm-layers", "48", "--bogus"]
PRINTS = ["decide", "--ssm-layers", "48"]
REFUSED = ["fit", "--example", "--free", "1GiB"]
BAD_DESCRIPTOR = "[Errno 9] Bad file descriptor"
NO_SPACE = "[Errno 28] No space left on device"


def run(
    argv: list[str], stdout: str | None = None, stderr: str | None = None, stdin: str | None = None
) -> tuple[int, str, str]:
    """``python -m decode_ring ARGV`` with each stream captured, closed (``CLOSED``) or opened
    on a path (``/dev/full``). What a closed or full stream would have carried is lost; what a
    captured one carries is returned."""
    closing = [fd for fd, how in ((0, stdin), (1, stdout), (2, stderr)) if how == CLOSED]
    opened: list[Any] = []

    def target(how: str | None, mode: str) -> Any:
        if how in (None, CLOSED):
            return subprocess.PIPE if mode == "w" else subprocess.DEVNULL
        handle = open(how, mode)  # noqa: SIM115 (closed below)
        opened.append(handle)
        return handle

    def close_them() -> None:
        for fd in closing:
            os.close(fd)

    env = {k: v for k, v in os.environ.items() if not k.startswith("METRALE_")}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "decode_ring", *argv],
            stdin=target(stdin, "r"),
            stdout=target(stdout, "w"),
            stderr=target(stderr, "w"),
            preexec_fn=close_them if closing else None,
            env=env,
            timeout=60,
        )
    finally:
        for handle in opened:
            handle.close()
    out = done.stdout.decode() if isinstance(done.stdout, bytes) else ""
    err = done.stderr.decode() if isinstance(done.stderr, bytes) else ""
    return done.returncode, out, err


def no_traceback(err: str) -> None:
    assert "Traceback" not in err and "Exception ignored" not in err, err


@pytest.mark.parametrize("stdout", [CLOSED, FULL])
def test_a_json_usage_error_with_stdout_closed_or_full_is_status_2(stdout: str) -> None:
    status, _, err = run([*USAGE, "--json"], stdout=stdout)
    assert status == 2
    assert err == f"{ERROR}unrecognized arguments: --bogus\n"


@pytest.mark.parametrize(
    ("stdout", "reason"),
    [(CLOSED, "[Errno 9] Bad file descriptor"), (FULL, "[Errno 28] No space left on device")],
)
def test_output_to_a_closed_or_full_stdout_is_status_74(stdout: str, reason: str) -> None:
    status, _, err = run(PRINTS, stdout=stdout)
    assert status == 74
    assert err == f"{ERROR}cannot write the output: {reason}\n"


def test_a_closed_stdin_is_a_config_that_cannot_be_read() -> None:
    status, out, err = run(["state", "--config", "-", "--json"], stdin=CLOSED)
    assert status == 2
    message = "cannot read the config from stdin: standard input is closed"
    assert err == f"{ERROR}{message}\n"
    assert out == f'{{"error": "{message}", "status": 2}}\n'


@pytest.mark.parametrize("stderr", [CLOSED, FULL])
@pytest.mark.parametrize(("argv", "expected"), [(USAGE, 2), (REFUSED, 1), (PRINTS, 0)])
def test_a_closed_or_full_stderr_keeps_the_status(
    stderr: str, argv: list[str], expected: int
) -> None:
    status, out, _ = run(argv, stderr=stderr)
    assert status == expected
    if expected == 2:
        assert out == ""


def test_a_usage_error_with_both_closed_is_status_2() -> None:
    assert run(USAGE, stdout=CLOSED, stderr=CLOSED)[0] == 2


@pytest.mark.parametrize("flag", ["--help", "--version"])
@pytest.mark.parametrize(
    ("stdout", "reason"),
    [(CLOSED, "[Errno 9] Bad file descriptor"), (FULL, "[Errno 28] No space left on device")],
)
def test_help_and_version_that_cannot_be_written_are_status_74(
    flag: str, stdout: str, reason: str
) -> None:
    status, _, err = run([flag], stdout=stdout)
    assert status == 74
    assert err == f"{ERROR}cannot write the output: {reason}\n"


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["plan", "--help"]])
def test_help_and_version_print_to_stdout_and_exit_0(argv: list[str]) -> None:
    status, out, err = run(argv)
    assert (status, err) == (0, "")
    assert out.startswith("usage: decode-ring") or out.startswith("decode-ring ")


def test_the_plot_line_on_a_full_stderr_keeps_status_0(tmp_path: Path) -> None:
    picture = tmp_path / "plan.png"
    argv = ["plan", "--config", NEMOTRON, "--free", "80GiB", "--weights", "16GiB"]
    argv += ["--max-model-len", "8192", "--plot", str(picture)]
    status, out, _ = run(argv, stderr=FULL)
    assert status == 0
    assert picture.stat().st_size > 0 and out.startswith("decode ring depth")


@pytest.mark.parametrize(
    "streams",
    [
        {"stdout": CLOSED},
        {"stdout": FULL},
        {"stderr": CLOSED},
        {"stderr": FULL},
        {"stdin": CLOSED},
    ],
)
@pytest.mark.parametrize(
    "argv",
    [USAGE, [*USAGE, "--json"], PRINTS, REFUSED, ["--help"], ["state", "--config", "-"]],
)
def test_no_stream_makes_a_traceback_or_a_status_outside_the_table(
    streams: dict[str, str], argv: list[str]
) -> None:
    status, _, err = run(argv, **streams)
    assert status in (0, 1, 2, 74), (status, err)
    no_traceback(err)
