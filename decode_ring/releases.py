"""The server releases the package models, each stated once.

Every message, citation label and renderer that names a server's release takes it from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["SGLANG", "VLLM", "Release"]


@dataclass(frozen=True, slots=True)
class Release:
    """A server and the version of it whose code the package mirrors: ``str()`` is how
    messages name it (``vLLM 0.33.0``)."""

    server: str
    version: str

    def __str__(self) -> str:
        return f"{self.server} {self.version}"


VLLM: Final = Release("vLLM", "0.33.0")
SGLANG: Final = Release("SGLang", "0.5.23")
