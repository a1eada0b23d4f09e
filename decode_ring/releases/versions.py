"""Version strings as operators and ``pip`` write them, and the modelled release each one maps to.

A server's rules change at releases, so a version names a rule set. The mapping uses the
version string alone; nothing imports vLLM or SGLang:

* a release the package has read is itself;
* a pre-release or development build (``0.20.1rc1.dev91+g1a2b3c``) maps to the release it
  precedes (``0.20.1``), a local build (``+cu128``) to its release, and the answer says so;
* a patch the package has not read (``0.33.1``) takes the rules of the newest read release of its
  series (the same ``X.Y`` for vLLM, whose rules change at minors; the same ``X.Y.Z`` for SGLang,
  whose ``.postN`` releases can change them), and the answer says so;
* a version before the first release with hybrid support, or after the newest modelled series,
  is refused (``UnmodelledReleaseError``), listing the modelled releases.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from ..printable import show

__all__ = ["ReleaseVersion", "UnmodelledReleaseError", "parse_version"]


class UnmodelledReleaseError(ValueError):
    """A version string that is malformed or names a release the package does not model.
    ``argument`` is the parameter that carried it (``version``); ``modelled`` the releases the
    package does model, oldest first."""

    def __init__(self, message: str, *, argument: str, modelled: tuple[str, ...] = ()) -> None:
        super().__init__(f"argument {argument}: {message}")
        self.argument = argument
        self.reason = message
        self.modelled = modelled


# PEP 440's public version, the subset servers publish: N.N[.N][{a|b|rc}N][.postN][.devN], an
# optional leading "v", and a local "+label".
_VERSION: Final = re.compile(
    r"v?(?P<major>[0-9]+)\.(?P<minor>[0-9]+)(?:\.(?P<micro>[0-9]+))?"
    r"(?:(?P<pre>a|b|rc)(?P<pre_n>[0-9]+))?"
    r"(?:\.post(?P<post>[0-9]+))?"
    r"(?:\.dev(?P<dev>[0-9]+))?"
    r"(?:\+(?P<local>[a-z0-9]+(?:\.[a-z0-9]+)*))?",
    re.ASCII | re.IGNORECASE,
)
# Longer numbers than any release uses are refused rather than compared.
_MAX_DIGITS: Final = 6


@dataclass(frozen=True, slots=True, order=True)
class ReleaseVersion:
    """A final release's number, ``(major, minor, micro, post)``, ordered as PEP 440 orders
    final releases. ``str()`` is the canonical spelling (``0.5.3.post1``, ``0.20.1``)."""

    major: int
    minor: int
    micro: int
    post: int = 0

    def __str__(self) -> str:
        base = f"{self.major}.{self.minor}.{self.micro}"
        return f"{base}.post{self.post}" if self.post else base

    @property
    def minor_series(self) -> tuple[int, int]:
        return (self.major, self.minor)

    @property
    def micro_series(self) -> tuple[int, int, int]:
        return (self.major, self.minor, self.micro)


@dataclass(frozen=True, slots=True)
class ParsedVersion:
    """A version string read: the final release it is or precedes, and whether it names a
    pre-release or development build of it (``pre``)."""

    release: ReleaseVersion
    pre: bool


def parse_version(text: object, *, argument: str = "version") -> ParsedVersion:
    """``text`` read as a server version. Surrounding ASCII whitespace is ignored, as ``pip``
    ignores it. Raises ``TypeError`` for a non-string and ``UnmodelledReleaseError`` for a
    string that is not a version."""
    if not isinstance(text, str):
        raise TypeError(f"argument {argument}: must be a str, not {type(text).__name__}")
    found = _VERSION.fullmatch(text.strip(" \t\n\r\f\v"))
    if found is None:
        raise UnmodelledReleaseError(
            f"{show(text)} is not a version (e.g. 0.19.1, 0.5.3.post1, 0.20.1rc1.dev91+g1a2b3c)",
            argument=argument,
        )
    numbers = [found["major"], found["minor"], found["micro"] or "0", found["post"] or "0"]
    if any(len(number) > _MAX_DIGITS for number in numbers):
        raise UnmodelledReleaseError(
            f"{show(text)} has a number longer than {_MAX_DIGITS} digits", argument=argument
        )
    major, minor, micro, post = (int(number) for number in numbers)
    pre = found["pre"] is not None or found["dev"] is not None
    return ParsedVersion(ReleaseVersion(major, minor, micro, post), pre)
