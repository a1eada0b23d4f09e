"""``--plot FILE`` is written atomically: into a new file beside it, then renamed over it. A write
that fails (a full disk, Ctrl-C) leaves the old picture as it was and no partial file.

Issue 28, item 5: on a full disk ``--plot`` exited 74 but had already replaced the previous
picture with a truncated one.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from matplotlib.figure import Figure

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


def test_a_device_is_written_in_place(cli: InProcessCli) -> None:
    assert cli.run([*PLAN, "--plot", os.devnull]).status == 0
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
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


def test_a_picture_named_up_to_237_bytes_is_written(cli: InProcessCli, tmp_path: Path) -> None:
    # Its temporary name beside it, ".NAME.<12 hex digits>.tmp", is 18 bytes longer: 255, the
    # longest name Linux file systems take (NAME_MAX).
    picture = tmp_path / ("p" * 233 + ".png")
    assert cli.run([*PLAN, "--plot", str(picture)]).status == 0
    assert picture.read_bytes().startswith(PNG)
    assert others(tmp_path) == [picture.name]
