"""What ``decode-ring`` writes, and its exit status when writing fails or it is interrupted: a full
disk is one line and 74, a closed pipe is quiet and 141, an interrupt 130; output that a stream
cannot encode is escaped, and every error stays on one line.

``cli.main`` runs in this process with its streams replaced (the ``cell`` fixture: a stand-in
once-cell, the ring's variables unset); the same promises are checked once through a shell, in a
fresh process with real pipes, a real /dev/full and real encodings.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from decode_ring import cli
from decode_ring.cli.output import write

from .support import CONFIGS, run_cli

pytestmark = pytest.mark.usefixtures("cell")


class Unwritable(io.StringIO):
    """A stdout whose writes raise ``error``; ``fileno`` is ``fd``."""

    def __init__(self, error: BaseException, fd: int = -1) -> None:
        super().__init__()
        self.error = error
        self.fd = fd

    def write(self, text: str) -> int:
        raise self.error

    def fileno(self) -> int:
        return self.fd


def test_a_full_disk_is_one_line_and_status_74(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    with (tmp_path / "stdout").open("w") as target:
        full = Unwritable(OSError(28, "No space left on device"), target.fileno())
        monkeypatch.setattr("sys.stdout", full)
        assert cli.main(["decide", "--ssm-layers", "1"]) == 74
        assert os.path.samestat(os.fstat(target.fileno()), os.stat(os.devnull))
    assert capsys.readouterr().err == (
        "decode-ring: error: cannot write the output: [Errno 28] No space left on device\n"
    )


def test_a_closed_pipe_points_stdout_at_nothing_and_is_141(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    with (tmp_path / "stdout").open("w") as target:
        monkeypatch.setattr("sys.stdout", Unwritable(BrokenPipeError(), target.fileno()))
        assert cli.main(["decide", "--ssm-layers", "1"]) == 141
        assert os.path.samestat(os.fstat(target.fileno()), os.stat(os.devnull))
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    ("raised", "status"),
    [(KeyboardInterrupt(), 130), (SystemExit(3), 3), (SystemExit("bye"), 2), (SystemExit(), 2)],
)
def test_interrupts_and_exits(
    monkeypatch: pytest.MonkeyPatch, raised: BaseException, status: int
) -> None:
    # Ctrl-C, or an exit, while the command writes its answer.
    monkeypatch.setattr("sys.stdout", Unwritable(raised))
    assert cli.main(["decide", "--ssm-layers", "1"]) == status


class Bare:
    """A stream with no ``encoding`` attribute at all."""

    def __init__(self) -> None:
        self.text = ""
        self.flushed = False

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        self.flushed = True


# An argument no command takes is echoed in the error: printable characters as they are,
# the others escaped, so that the error stays one line.
ODD = "a\nb\tc\u2028d\xe9 e"


def test_an_error_escapes_only_what_is_not_printable(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["decide", "--ssm-layers", "1", ODD]) == 2
    assert capsys.readouterr() == (
        "",
        "decode-ring: error: unrecognized arguments: a\\nb\\tc\\u2028d\xe9 e\n",
    )


def test_what_a_stream_cannot_encode_is_escaped_and_flushed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    raw = io.BytesIO()
    monkeypatch.setattr("sys.stderr", io.TextIOWrapper(raw, encoding="ascii"))
    assert cli.main(["decide", "--ssm-layers", "1", "caf\xe9 \u2028"]) == 2
    # flushed: the bytes are there
    assert raw.getvalue() == b"decode-ring: error: unrecognized arguments: caf\\xe9 \\u2028\n"
    utf8 = io.StringIO()  # no encoding: UTF-8
    monkeypatch.setattr("sys.stderr", utf8)
    assert cli.main(["decide", "--ssm-layers", "1", "caf\xe9"]) == 2
    assert utf8.getvalue() == "decode-ring: error: unrecognized arguments: caf\xe9\n"


def test_a_stream_without_an_encoding_takes_utf8(monkeypatch: pytest.MonkeyPatch) -> None:
    stream = Bare()
    monkeypatch.setattr("sys.stderr", stream)
    assert cli.main(["decide", "--ssm-layers", "1", "caf\xe9"]) == 2
    assert (stream.text, stream.flushed) == (
        "decode-ring: error: unrecognized arguments: caf\xe9\n",
        True,
    )


def test_a_stream_closed_at_start_is_a_bad_descriptor() -> None:
    # sys.stdout is None where descriptor 1 was closed when Python started; writing to it says
    # what writing to a closed descriptor says (test_cli_streams.py sees it through a shell).
    with pytest.raises(OSError) as raised:
        write(None, "line")
    assert str(raised.value) == "[Errno 9] Bad file descriptor"


# --- in a fresh process, through a shell ----------------------------------------------------------


def run_shell(command: str, **env: str) -> subprocess.CompletedProcess[str]:
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("METRALE_")}
    child_env.update(env)
    return subprocess.run(
        ["bash", "-c", f"set -o pipefail; {command}"],
        env=child_env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_reader_that_closes_early_ends_the_command_quietly() -> None:
    python = sys.executable
    for command in (
        f"{python} -m decode_ring fit --example --json | true",
        f"{python} -m decode_ring plan --config {CONFIGS}/nemotron-nano-9b-v2.json "
        "--free 80GiB --weights 16GiB --max-model-len 8192 --tp 1,2 | true",
    ):
        completed = run_shell(f"sleep 0.2 | true; {command}")
        assert completed.returncode in (0, 141), completed.stderr
        assert completed.stderr == ""
    # A reader gone before the first write: the writer sees EPIPE for certain.
    completed = run_shell(
        f"exec 3>&1; {python} -c 'import os, sys, subprocess; r, w = os.pipe(); os.close(r); "
        f'sys.exit(subprocess.run([sys.executable, "-m", "decode_ring", "fit", "--example"], '
        f"stdout=w).returncode)'"
    )
    assert completed.returncode == 141, completed.stderr
    assert completed.stderr == ""


def test_a_full_disk_in_a_shell_is_one_line_and_status_74() -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    completed = run_shell(f"{sys.executable} -m decode_ring fit --example > /dev/full")
    assert completed.returncode == 74
    assert completed.stderr == (
        "decode-ring: error: cannot write the output: [Errno 28] No space left on device\n"
    )


@pytest.mark.parametrize(
    "encoding", [{"PYTHONIOENCODING": "ascii"}, {"LC_ALL": "C", "PYTHONUTF8": "0"}]
)
def test_values_from_the_environment_print_on_any_stdout(encoding: dict[str, str]) -> None:
    completed = run_cli(
        "decide",
        "--ssm-layers",
        "48",
        env={"METRALE_DISABLE_WATCHDOGS": " TRUE\u3000", **encoding},
    )
    assert completed.returncode == 0, completed.stderr
    assert "METRALE_DISABLE_WATCHDOGS      ' TRUE\\u3000'" in completed.stdout
