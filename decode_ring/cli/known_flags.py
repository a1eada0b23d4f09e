"""Every flag a server's release defines, engine and front end, so that ``decode-ring vllm`` and
``decode-ring sglang`` can tell a server flag they do not model from a typo, and say from which
release a flag exists.

The lists are data, generated from the releases' own code by ``tools/server-flags`` (which runs
each server's own argument parser): ``flags/<server>-releases.json`` holds, for every spelling of
every flag (a flag and its aliases) of the server's modelled releases, the ranges of those
releases that have it, and the releases in order. A release the file does not list is not
covered: its flags are refused as unknown, not guessed from a neighbour. The full lists of one
release (``flags/<server>-<version>.json``, with each flag's group, type and default) are read
elsewhere. Nothing here imports vLLM or SGLang.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from ..releases import Release

__all__ = ["UnknownRelease", "covered_releases", "flag_releases", "known_flags", "older_flags"]


class UnknownRelease(ValueError):
    """A release whose flags the data does not list (a server it does not know, or a version
    outside the modelled releases)."""


@cache
def _file(server: str) -> dict[str, Any]:
    """The server's compact file, read."""
    name = f"{server.lower()}-releases.json"
    entry = resources.files(__package__).joinpath("flags").joinpath(name)
    if not server.isalnum() or not entry.is_file():
        raise UnknownRelease(f"no flag lists for the server {server!r} (no flags/{name})")
    data: dict[str, Any] = json.loads(entry.read_text("utf-8"))
    return data


@cache
def _data(server: str) -> tuple[tuple[str, ...], dict[str, tuple[tuple[str, str], ...]]]:
    """The server's releases in order and each spelling's ranges of them."""
    data = _file(server)
    releases = tuple(data["releases"])
    ranges = {
        spelling: tuple((first, last) for first, last in spans)
        for spelling, spans in data["flags"].items()
    }
    return releases, ranges


def covered_releases(server: str) -> tuple[str, ...]:
    """The versions of ``server`` (``"vLLM"``, ``"SGLang"``) whose flags are listed, oldest
    first."""
    return _data(server)[0]


@cache
def known_flags(release: Release) -> frozenset[str]:
    """Every spelling of every flag of ``release``: each flag and its aliases (``--no-`` forms
    of the negatable ones, short forms). ``UnknownRelease`` (a ``ValueError``) for a release
    the data does not list."""
    releases, ranges = _data(release.server)
    if release.version not in releases:
        raise UnknownRelease(
            f"no flag list for {release}: the listed {release.server} releases are "
            f"{releases[0]} to {releases[-1]} ({len(releases)} of them)"
        )
    order = {version: index for index, version in enumerate(releases)}
    here = order[release.version]
    return frozenset(
        spelling
        for spelling, spans in ranges.items()
        if any(order[first] <= here <= order[last] for first, last in spans)
    )


def flag_releases(server: str, spelling: str) -> tuple[tuple[str, str], ...]:
    """The ranges ``(first, last)`` of ``server``'s listed releases that define ``spelling``
    (e.g. vLLM's ``--use-replayssm``: ``(("0.27.0", "0.33.0"),)``), oldest first; empty where
    none does. ``UnknownRelease`` for a server without lists."""
    return _data(server)[1].get(spelling, ())


@cache
def older_flags(release: Release) -> dict[str, dict[str, Any]]:
    """Each spelling ``release`` has that the server's newest listed release dropped, with how
    ``release`` parses it: the flag it names (``flag``), ``dest``, ``takes_value``,
    ``negatable``, ``nargs``, and a switch's ``default`` (``None`` for a flag with a value).
    ``UnknownRelease`` for a release the data does not list."""
    known_flags(release)  # refuses a release not listed
    releases = _data(release.server)[0]
    order = {version: index for index, version in enumerate(releases)}
    here = order[release.version]
    older: dict[str, list[list[Any]]] = _file(release.server).get("older", {})
    return {
        spelling: shape
        for spelling, spans in older.items()
        for first, last, shape in spans
        if order[first] <= here <= order[last]
    }
