"""``--plot FILE`` is written atomically: into a new file beside it, then renamed over it. A write
that fails (a full disk, Ctrl-C) leaves the old picture as it was and no partial file.

Issue 28, item 5: on a full disk ``--plot`` exited 74 but had already replaced the previous
picture with a truncated one.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from pathlib import Path
from typing import Any

import pytest
from matplotlib.figure import Figure

from decode_ring.cli.output import write_atomically

from .cli_in_process import InProcessCli

ROOT = Path(__file__).resolve().parent.parent
NEMOTRON = ROOT / "tests" / "configs" / "nemotron-nano-9b-v2.json"
PLAN = ["plan", "--config", str(NEMOTRON), "--free", "80GiB", "--weights", "16GiB"]
PLAN += ["--max-model-len", "8192"]
OLD = b"the previous picture"
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> InProcessCli:
    return InProcessCli(monkeypatch, tmp_path)


def failing_savefig(monkeypatch: pytest.MonkeyPatch, error: BaseException) -> None:
    """``Figure.savefig`` writes part of a picture, then fails with ``error``."""

    def savefig(self: Figure, target: Any, **kwargs: Any) -> None:
        target.write(PNG + b"half a picture")
        target.flush()
        raise error

    monkeypatch.setattr(Figure, "savefig", savefig)


def others(directory: Path, *names: str) -> list[str]:
    return sorted(entry.name for entry in directory.iterdir() if entry.name not in names)


@pytest.mark.parametrize(
    ("error", "status"),
    [(OSError(errno.ENOSPC, "No space left on device"), 74), (KeyboardInterrupt(), 130)],
)
def test_a_failed_write_leaves_the_old_picture_and_no_partial_one(
    cli: InProcessCli,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    error: BaseException,
    status: int,
) -> None:
    picture = tmp_path / "plan.png"
    picture.write_bytes(OLD)
    failing_savefig(monkeypatch, error)
    outcome = cli.run([*PLAN, "--plot", str(picture)])
    assert outcome.status == status
    assert picture.read_bytes() == OLD
    assert others(tmp_path) == ["plan.png"]
    if status == 74:
        assert outcome.stderr == (
            f"decode-ring: error: cannot write {str(picture)!a}: No space left on device\n"
        )
    else:
        assert outcome.stderr == ""


def test_a_written_picture_replaces_the_old_one_whole(cli: InProcessCli, tmp_path: Path) -> None:
    picture = tmp_path / "plan.png"
    picture.write_bytes(OLD)
    picture.chmod(0o640)
    assert cli.run([*PLAN, "--plot", str(picture)]).status == 0
    assert picture.read_bytes().startswith(PNG)
    assert stat.S_IMODE(picture.stat().st_mode) == 0o640  # the replaced file's permissions
    assert others(tmp_path) == ["plan.png"]


def test_a_new_picture_takes_the_umask(cli: InProcessCli, tmp_path: Path) -> None:
    picture = tmp_path / "new.png"
    previous = os.umask(0o027)
    try:
        assert cli.run([*PLAN, "--plot", str(picture)]).status == 0
    finally:
        os.umask(previous)
    assert stat.S_IMODE(picture.stat().st_mode) == 0o640
    assert others(tmp_path) == ["new.png"]


def test_a_link_keeps_pointing_at_the_new_picture(cli: InProcessCli, tmp_path: Path) -> None:
    (tmp_path / "pictures").mkdir()
    target = tmp_path / "pictures" / "plan.png"
    target.write_bytes(OLD)
    link = tmp_path / "latest.png"
    link.symlink_to(target)
    assert cli.run([*PLAN, "--plot", str(link)]).status == 0
    assert link.is_symlink() and link.resolve() == target
    assert target.read_bytes().startswith(PNG)
    assert others(tmp_path / "pictures") == ["plan.png"]


def test_a_file_that_is_not_a_regular_one_is_written_in_place(
    cli: InProcessCli, tmp_path: Path
) -> None:
    # A pipe stands for a device such as /dev/null: a wrong writer would put a regular file in
    # its place, which on /dev/null (as root) breaks the machine, so the pipe is the test's own.
    pipe = tmp_path / "picture"
    os.mkfifo(pipe)
    read: list[bytes] = []
    reader = threading.Thread(target=lambda: read.append(pipe.read_bytes()), daemon=True)
    reader.start()
    outcome = cli.run([*PLAN, "--plot", str(pipe)])
    reader.join(timeout=60)
    assert outcome.status == 0
    assert read[0].startswith(PNG)
    assert stat.S_ISFIFO(os.stat(pipe).st_mode)
    assert others(tmp_path) == ["picture"]
    # A full device is the write's own error.
    outcome = cli.run([*PLAN, "--plot", "/dev/full"])
    assert outcome.status == 74
    assert (
        outcome.stderr == "decode-ring: error: cannot write '/dev/full': No space left on device\n"
    )
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_a_directory_is_not_a_picture(cli: InProcessCli, tmp_path: Path) -> None:
    outcome = cli.run([*PLAN, "--plot", str(tmp_path)])
    assert outcome.status == 74
    assert outcome.stderr == f"decode-ring: error: cannot write {str(tmp_path)!a}: Is a directory\n"
    assert others(tmp_path) == []
    # The error is the one open() gives a directory: EISDIR, naming the path asked for.
    with pytest.raises(IsADirectoryError) as raised:
        write_atomically(str(tmp_path), lambda stream: None)
    assert (raised.value.errno, raised.value.filename) == (errno.EISDIR, str(tmp_path))


def test_a_new_picture_without_a_umask_is_read_write_for_all(
    cli: InProcessCli, tmp_path: Path
) -> None:
    # As open() makes a file: 0o666, less the umask.
    picture = tmp_path / "new.png"
    previous = os.umask(0)
    try:
        assert cli.run([*PLAN, "--plot", str(picture)]).status == 0
    finally:
        os.umask(previous)
    assert stat.S_IMODE(picture.stat().st_mode) == 0o666


def test_a_taken_temporary_name_is_skipped(
    cli: InProcessCli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The first name drawn is someone else's file: it is left alone, and the next name is used.
    drawn = iter(["a" * 12, "b" * 12])
    monkeypatch.setattr("secrets.token_hex", lambda _: next(drawn))
    taken = tmp_path / f".plan.png.{'a' * 12}.tmp"
    taken.write_bytes(OLD)
    picture = tmp_path / "plan.png"
    assert cli.run([*PLAN, "--plot", str(picture)]).status == 0
    assert picture.read_bytes().startswith(PNG)
    assert taken.read_bytes() == OLD
    assert others(tmp_path) == [taken.name, "plan.png"]


def test_no_free_temporary_name_is_one_line_and_status_74(
    cli: InProcessCli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr("secrets.token_hex", lambda _: "a" * 12)
    taken = tmp_path / f".plan.png.{'a' * 12}.tmp"
    taken.write_bytes(OLD)
    picture = tmp_path / "plan.png"
    outcome = cli.run([*PLAN, "--plot", str(picture)])
    assert outcome.status == 74
    assert outcome.stderr == (
        f"decode-ring: error: cannot write {str(picture)!a}: no free temporary name\n"
    )
    assert others(tmp_path) == [taken.name]


@pytest.mark.parametrize("name", ["p" * 237 + ".png", "p" * 251 + ".png", "é" * 125 + "p.png"])
def test_a_picture_named_up_to_255_bytes_is_written(
    cli: InProcessCli, tmp_path: Path, name: str
) -> None:
    # 255 bytes is the longest name Linux file systems take (NAME_MAX). The temporary name
    # beside the picture, ".NAME.<12 hex digits>.tmp", adds 18 bytes, so from 238 bytes on it
    # is made from the name cut short (here at 237 bytes, inside a two-byte character).
    picture = tmp_path / name
    assert cli.run([*PLAN, "--plot", str(picture)]).status == 0
    assert picture.read_bytes().startswith(PNG)
    assert others(tmp_path) == [picture.name]


def test_a_name_longer_than_255_bytes_is_the_file_systems_refusal(
    cli: InProcessCli, tmp_path: Path
) -> None:
    picture = tmp_path / ("p" * 252 + ".png")
    outcome = cli.run([*PLAN, "--plot", str(picture)])
    assert outcome.status == 74
    assert (
        outcome.stderr == f"decode-ring: error: cannot write {str(picture)!a}: File name too long\n"
    )
    assert others(tmp_path) == []


# --- write_atomically, the function --plot writes with -----------------------------------------


def test_the_new_content_is_written_beside_the_file_and_not_inherited(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Beside it, so that the rename is atomic (one file system); close-on-exec (PEP 446), so
    # that a child started meanwhile holds no descriptor to a file about to be renamed.
    import fcntl

    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    target = tmp_path / "plan.png"
    seen: list[tuple[list[str], int]] = []

    def writer(stream: Any) -> None:
        flags = fcntl.fcntl(stream.fileno(), fcntl.F_GETFD)
        seen.append((others(tmp_path, "elsewhere"), flags & fcntl.FD_CLOEXEC))
        stream.write(PNG)

    write_atomically(str(target), writer)
    [(beside, cloexec)] = seen
    assert len(beside) == 1 and beside[0].startswith(".plan.png.") and beside[0].endswith(".tmp")
    assert cloexec == fcntl.FD_CLOEXEC
    assert others(tmp_path, "elsewhere") == ["plan.png"]
    assert os.listdir(tmp_path / "elsewhere") == []


def test_a_failed_write_whose_cleanup_fails_raises_the_writes_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    full = OSError(errno.ENOSPC, "No space left on device")

    def writer(stream: Any) -> None:
        raise full

    def unlink(path: Any) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", path)

    monkeypatch.setattr(os, "unlink", unlink)
    with pytest.raises(OSError) as raised:
        write_atomically(str(tmp_path / "plan.png"), writer)
    assert raised.value is full


def test_a_hundred_taken_names_are_tried_before_giving_up(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    drawn: list[int] = []

    def token_hex(nbytes: int) -> str:
        drawn.append(nbytes)
        return "a" * 12

    monkeypatch.setattr("secrets.token_hex", token_hex)
    (tmp_path / f".plan.png.{'a' * 12}.tmp").write_bytes(OLD)
    with pytest.raises(FileExistsError, match="no free temporary name") as raised:
        write_atomically(str(tmp_path / "plan.png"), lambda stream: None)
    assert drawn == [6] * 100
    # The error says what a failing open(O_EXCL) says: EEXIST, and the file asked for.
    assert (raised.value.errno, raised.value.filename) == (errno.EEXIST, str(tmp_path / "plan.png"))
