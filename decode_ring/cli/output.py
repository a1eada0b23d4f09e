"""Writing what a command says: one line however odd the value it quotes, in whatever encoding
the stream takes."""

from __future__ import annotations

import os
import sys
from typing import TextIO

__all__ = ["discard_unwritten_output", "one_line", "write"]


def one_line(text: str) -> str:
    """``text`` with every character that is not printable escaped, so that
    an error is one line whatever value it quotes."""
    return "".join(char if char.isprintable() else ascii(char)[1:-1] for char in text)


def write(stream: TextIO, text: str) -> None:
    """Writes ``text`` and a newline, escaping what the stream cannot encode."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    stream.write(text.encode(encoding, "backslashreplace").decode(encoding) + "\n")
    stream.flush()


def discard_unwritten_output() -> None:
    """Points stdout at nothing: the interpreter flushes it again at exit, and
    a second failure would end the command with a traceback and status 120."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
