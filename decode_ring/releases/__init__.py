"""The server releases the package models, each stated once, and how a version string maps to
one of them (``resolve_release``).

Every message, citation label and renderer that names a server's release takes it from here;
each release's rules are in ``releases.vllm`` and ``releases.sglang``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Final

from .versions import ParsedVersion, ReleaseVersion, UnmodelledReleaseError, parse_version

__all__ = [
    "SGLANG",
    "SGLANG_RELEASES",
    "VLLM",
    "VLLM_RELEASES",
    "Release",
    "ResolvedRelease",
    "UnmodelledReleaseError",
    "resolve_release",
]


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

# Every release on PyPI whose wheel was read, oldest first: vLLM from 0.10.2, the first V1
# engine release serving Qwen3-Next; SGLang from 0.5.2, the first with a mamba pool (0.5.1.post3
# has none). Each one's rules are in releases.vllm / releases.sglang.
VLLM_RELEASES: Final = (
    "0.10.2", "0.11.0", "0.11.1", "0.11.2", "0.12.0", "0.13.0", "0.14.0", "0.14.1", "0.15.0",
    "0.15.1", "0.16.0", "0.17.0", "0.17.1", "0.18.0", "0.18.1", "0.19.0", "0.19.1", "0.20.0",
    "0.20.1", "0.20.2", "0.21.0", "0.22.0", "0.22.1", "0.23.0", "0.24.0", "0.25.0", "0.25.1",
    "0.26.0", "0.27.0", "0.27.1", "0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0", "0.33.0",
)  # fmt: skip
SGLANG_RELEASES: Final = (
    "0.5.2", "0.5.3", "0.5.3.post1", "0.5.3.post2", "0.5.3.post3", "0.5.4", "0.5.4.post1",
    "0.5.4.post2", "0.5.4.post3", "0.5.5", "0.5.5.post1", "0.5.5.post2", "0.5.5.post3", "0.5.6",
    "0.5.6.post1", "0.5.6.post2", "0.5.7", "0.5.8", "0.5.8.post1", "0.5.9", "0.5.10",
    "0.5.10.post1", "0.5.11", "0.5.12", "0.5.12.post1", "0.5.13", "0.5.13.post1", "0.5.14",
    "0.5.15", "0.5.15.post1", "0.5.16", "0.5.17", "0.5.18", "0.5.19", "0.5.20", "0.5.21",
    "0.5.22", "0.5.23",
)  # fmt: skip
_SERVERS: Final = {"vllm": (VLLM, VLLM_RELEASES), "sglang": (SGLANG, SGLANG_RELEASES)}


@dataclass(frozen=True, slots=True)
class ResolvedRelease:
    """The release whose rules answer for a version string: ``release`` (its ``version`` the
    canonical release number), the string as given, and ``note``, how the one became the other
    (``None`` where the string names the release itself)."""

    release: Release
    given: str
    note: str | None

    @property
    def version(self) -> ReleaseVersion:
        return parse_version(self.release.version).release


def resolve_release(
    server: str, version: object = None, *, argument: str = "version"
) -> ResolvedRelease:
    """The modelled ``server`` (``"vllm"`` or ``"sglang"``) release whose rules answer for
    ``version`` (``None``: the newest). See ``releases.versions`` for the mapping. Raises
    ``TypeError`` for a non-string and ``UnmodelledReleaseError`` (a ``ValueError``) for a
    malformed version or one outside the modelled releases."""
    newest, known = _SERVERS[server]
    if version is None:
        return ResolvedRelease(newest, newest.version, None)
    parsed = parse_version(version, argument=argument)
    wanted = parsed.release
    releases = _read(known)
    # vLLM's rules change at minors (and the patches in releases.vllm); SGLang's at .postN too.
    same_series = [
        release
        for release in releases
        if release <= wanted
        and (
            release.minor_series == wanted.minor_series
            if server == "vllm"
            else release.micro_series == wanted.micro_series
        )
    ]
    if not same_series:
        where = "predates" if wanted < releases[0] else "is newer than"
        raise UnmodelledReleaseError(
            f"{newest.server} {wanted} {where} the releases modelled: {known[0]} to "
            f"{known[-1]} ({', '.join(known)})",
            argument=argument,
            modelled=known,
        )
    chosen = same_series[-1]
    release = newest if str(chosen) == newest.version else Release(newest.server, str(chosen))
    return ResolvedRelease(release, str(version), _note(parsed, chosen, str(version)))


@cache
def _read(known: tuple[str, ...]) -> tuple[ReleaseVersion, ...]:
    """The modelled releases' numbers, read once: every resolution compares against them."""
    return tuple(parse_version(release).release for release in known)


def _note(parsed: ParsedVersion, chosen: ReleaseVersion, given: str) -> str | None:
    """How ``given`` became ``chosen``, for the output's first line."""
    if parsed.pre:
        return f"{given} is a build before {parsed.release}: the rules of {chosen}"
    if parsed.release != chosen:
        return f"{parsed.release} is not a release the package has read: the rules of {chosen}"
    if given.strip() != str(chosen):  # a local label, a leading v, a missing micro
        return f"{given} is {chosen}"
    return None
