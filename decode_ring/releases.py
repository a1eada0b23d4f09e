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
    # The transformers the server reads configs through: the version its wheel pins, or, for a
    # range, the newest release in it (``transformers_requirement``, from its METADATA).
    transformers: str = ""
    transformers_requirement: str = ""

    def __str__(self) -> str:
        return f"{self.server} {self.version}"


# V:vllm-0.33.0.dist-info/METADATA: Requires-Dist: transformers<5.21.0,>=5.16.1 (5.20.2 is the
# newest release in range); S:sglang-0.5.23.dist-info/METADATA: transformers==5.19.0.
VLLM: Final = Release("vLLM", "0.33.0", "5.20.2", ">=5.16.1,<5.21.0")
SGLANG: Final = Release("SGLang", "0.5.23", "5.19.0", "==5.19.0")
