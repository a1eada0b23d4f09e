"""Writing what a command says: one line however odd the value it quotes, in whatever encoding
the stream takes; and a file, atomically (``write_atomically``)."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable
from typing import BinaryIO, Final, TextIO

__all__ = ["discard_unwritten_output", "one_line", "say", "write", "write_atomically"]


def one_line(text: str) -> str:
    """``text`` with every character that is not printable escaped, so that
    an error is one line whatever value it quotes."""
    return "".join(char if char.isprintable() else ascii(char)[1:-1] for char in text)


def write(stream: TextIO | None, text: str, end: str = "\n") -> None:
    """Writes ``text`` and ``end``, escaping what the stream cannot encode, and flushes. A
    closed stream (``None``: the descriptor was closed when the process started) raises
    ``OSError`` (EBADF), as writing to a closed descriptor does."""
    if stream is None:
        raise OSError(errno.EBADF, os.strerror(errno.EBADF))
    encoding = getattr(stream, "encoding", None) or "utf-8"
    stream.write((text + end).encode(encoding, "backslashreplace").decode(encoding))
    stream.flush()


def say(stream: TextIO | None, text: str) -> None:
    """``write`` on an error path: a stream that cannot take it (closed, full, a pipe closed
    early) is pointed at nothing (``discard_unwritten_output``) and the line is lost, so that
    the exit status stays the one of the error being said."""
    try:
        write(stream, text)
    except (OSError, ValueError):  # ValueError: a stream closed in this process
        discard_unwritten_output(stream)


def discard_unwritten_output(stream: TextIO | None) -> None:
    """Points ``stream``'s descriptor at nothing: the interpreter flushes it again at exit, and
    a second failure would end the command with a traceback and status 120. A stream without
    a descriptor (closed, or in memory) is left as it is."""
    try:
        descriptor = stream.fileno()  # type: ignore[union-attr]
    except (AttributeError, OSError, ValueError):
        return
    nothing = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(nothing, descriptor)
    finally:
        os.close(nothing)


def write_atomically(path: str, write_to: Callable[[BinaryIO], None]) -> None:
    """Writes the file ``path`` through ``write_to(stream)``: into a new file beside it, synced,
    then renamed over ``path``. A write that fails (a full disk, Ctrl-C, any exception) leaves
    the old file as it was and no partial one. A new file is made as ``open`` makes one (the
    umask applies); a file replaced keeps its permissions. A symlink's target is replaced, the
    link kept. A path that is there and is not a regular file (a device such as ``/dev/null``,
    a FIFO) has no content to keep, and is written in place; a directory is refused
    (``IsADirectoryError``). Raises ``OSError``."""
    target = os.path.realpath(path)
    try:
        mode: int | None = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if mode is not None and not stat.S_ISREG(mode):
        with open(path, "wb") as stream:
            write_to(stream)
        return
    directory, name = os.path.split(target)
    temporary, descriptor = _new_file_beside(directory, name)
    try:
        with os.fdopen(descriptor, "wb") as stream:
            write_to(stream)
            stream.flush()
            os.fsync(stream.fileno())
        if mode is not None:
            os.chmod(temporary, stat.S_IMODE(mode))
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


# The longest file name Linux file systems take (NAME_MAX), in bytes.
NAME_MAX: Final = 255
# Random names tried before giving up: a clash is someone else's file, and a hundred in a row
# mean the directory is being filled on purpose.
TEMPORARY_NAMES_TRIED: Final = 100
# What a temporary name adds to the file's: ".", then ".", 12 hex digits and ".tmp".
_TEMPORARY_SUFFIX_BYTES: Final = len(".." + "0" * 12 + ".tmp")


def _new_file_beside(directory: str, name: str) -> tuple[str, int]:
    """A new, empty, hidden file in ``directory`` named after ``name`` (cut to the bytes that
    keep the whole name within ``NAME_MAX``), opened for writing and not inherited by a child
    process; ``TEMPORARY_NAMES_TRIED`` random names are tried."""
    stem = os.fsdecode(os.fsencode(name)[: NAME_MAX - _TEMPORARY_SUFFIX_BYTES])
    # Not inherited without asking: os.open's descriptors are close-on-exec (PEP 446).
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    for _ in range(TEMPORARY_NAMES_TRIED):
        temporary = os.path.join(directory, f".{stem}.{secrets.token_hex(6)}.tmp")
        try:
            return temporary, os.open(temporary, flags, 0o666)
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", os.path.join(directory, name))
