"""One launch under two releases of a server: which rules differ between them, and what the
releases where they changed did to the numbers.

The comparison is computed from the server's rules (``releases.vllm.CHANGES``,
``releases.sglang.CHANGES``): the launch is answered at
the first release and again at each release between the two where a rule changed, and each
step's differences are set beside that release's changes. A step the release refuses says so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Final

from ..releases import UnmodelledReleaseError, resolve_release
from ..releases import sglang as sglang_rules
from ..releases import vllm as vllm_rules
from ..releases.versions import ReleaseVersion, parse_version
from ..releases.vllm import RuleChange

__all__ = ["CompareStep", "ReleaseComparison", "compare_releases"]

# Each server's rule changes between two of its releases, oldest first.
_RULE_CHANGES: Final[
    Mapping[str, Callable[[ReleaseVersion, ReleaseVersion], tuple[RuleChange, ...]]]
] = {"vllm": vllm_rules.rule_changes, "sglang": sglang_rules.rule_changes}
# The fields that say how a figure was found, not the figure: left out of the differences.
_PROSE: Final = ("log_lines", "assumptions", "source", "server_version", "server_version_note")


@dataclass(frozen=True, slots=True)
class CompareStep:
    """The rules that changed at ``release`` (``undone``: going back past it, so they are
    taken back) and what that did: each figure that changed, ``field: (before, after)``, or
    the release's refusal of the launch (``refusal``)."""

    release: str
    undone: bool
    changes: tuple[RuleChange, ...]
    differences: Mapping[str, tuple[object, object]]
    refusal: str | None

    def as_dict(self) -> dict[str, object]:
        return {
            "release": self.release,
            "undone": self.undone,
            "changes": [
                {"rule": c.rule, "value": _plain(c.value), "what": c.what, "where": c.where}
                for c in self.changes
            ],
            "differences": {k: [_plain(a), _plain(b)] for k, (a, b) in self.differences.items()},
            "refusal": self.refusal,
        }


@dataclass(frozen=True, slots=True)
class ReleaseComparison:
    """The launch answered at ``release`` and compared with ``other``: the steps from the one to
    the other, and every figure that differs between the two ends."""

    server: str
    release: str
    other: str
    other_note: str | None
    steps: tuple[CompareStep, ...]
    differences: Mapping[str, tuple[object, object]]
    other_refusal: str | None

    def as_dict(self) -> dict[str, object]:
        return {
            "release": self.release,
            "other": self.other,
            "other_note": self.other_note,
            "steps": [step.as_dict() for step in self.steps],
            "differences": {k: [_plain(a), _plain(b)] for k, (a, b) in self.differences.items()},
            "other_refusal": self.other_refusal,
        }


def compare_releases(
    reserve: Callable[..., Any],
    config: object,
    *,
    version: object,
    other: object,
    options: Mapping[str, Any],
    server: str = "vllm",
) -> ReleaseComparison:
    """The launch (``reserve(config, version=..., **options)``, a reservation of ``server``,
    ``"vllm"`` or ``"sglang"``, whose rules module gives the changes) at ``version`` compared
    with ``other``. Raises ``UnmodelledReleaseError`` for a version not modelled (the
    reservation's own refusal of a release it does not model, for ``other`` naming
    ``compare``); a release that refuses the launch is a step's ``refusal``."""
    first = resolve_release(server, version)
    second = resolve_release(server, other, argument="compare")
    start, end = first.version, second.version
    low, high = min(start, end), max(start, end)
    changes = _RULE_CHANGES[server](low, high)
    points = sorted({low, high, *(parse_version(change.since).release for change in changes)})
    answers = {point: _answer(reserve, config, point, options, point == end) for point in points}
    pairs = list(pairwise(points))
    upward = end >= start
    steps = []
    for before, after in pairs if upward else reversed(pairs):
        old, new = (before, after) if upward else (after, before)
        steps.append(
            CompareStep(
                str(after),
                not upward,
                tuple(c for c in changes if parse_version(c.since).release == after),
                _differences(answers[old], answers[new]),
                _refusal(answers[new]),
            )
        )
    return ReleaseComparison(
        first.release.server,
        str(start),
        str(end),
        second.note,
        tuple(steps),
        _differences(answers[start], answers[end]),
        _refusal(answers[end]),
    )


def _refusal(answer: dict[str, object] | str) -> str | None:
    return answer if isinstance(answer, str) else None


def _answer(
    reserve: Callable[..., Any],
    config: object,
    point: ReleaseVersion,
    options: Mapping[str, Any],
    compared: bool,
) -> dict[str, object] | str:
    """The launch's figures at release ``point``, or the release's refusal of the launch; a
    release not modelled at all is refused (``compared``: the release ``--compare`` named)."""
    try:
        answer: dict[str, object] = reserve(config, version=str(point), **options).as_dict()
    except UnmodelledReleaseError as error:
        if not compared:
            raise
        raise UnmodelledReleaseError(
            error.reason, argument="compare", modelled=error.modelled
        ) from None
    except ValueError as error:
        return str(error)
    return answer


def _differences(
    old: dict[str, object] | str, new: dict[str, object] | str
) -> dict[str, tuple[object, object]]:
    if isinstance(old, str) or isinstance(new, str):
        return {}
    return {
        key: (old[key], value)
        for key, value in new.items()
        if key not in _PROSE and not key.endswith("_rule") and old.get(key) != value
    }


def _plain(value: object) -> object:
    if isinstance(value, frozenset):
        return sorted(value)
    return value
