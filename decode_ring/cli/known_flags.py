"""Every flag a server's release defines, engine and front end, so that ``decode-ring vllm`` and
``decode-ring sglang`` can tell a server flag they do not model from a typo.

The lists are data, ``flags/<server>-<version>.json``, generated from the released wheels by
``tools/server-flags`` (which runs each server's own argument parser; a test regenerates them
where the wheels are at hand). Nothing here imports vLLM or SGLang.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from ..releases import Release

__all__ = ["known_flags"]


@cache
def known_flags(release: Release) -> frozenset[str]:
    """Every spelling of every flag of ``release``: each flag and its aliases (``--no-`` forms
    of the negatable ones, short forms)."""
    name = f"{release.server.lower()}-{release.version}.json"
    data = json.loads(
        resources.files(__package__).joinpath("flags").joinpath(name).read_text("utf-8")
    )
    return frozenset(
        spelling for flag in data["flags"] for spelling in (flag["flag"], *flag["aliases"])
    )
