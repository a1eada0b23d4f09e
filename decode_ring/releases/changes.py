"""What every server's rules module shares: a rule change (``RuleChange``), the rules of a
release folded from a baseline and its changes, the changes between two releases, and the
architectures each release serves, read from the data a tool generated."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from functools import cache
from importlib import resources
from typing import Any, TypeVar

from .versions import ReleaseVersion, parse_version

__all__ = ["RuleChange", "changes_between", "check_changes", "fold", "served_span"]

Rules = TypeVar("Rules")


@dataclass(frozen=True, slots=True)
class RuleChange:
    """One rule's new value from ``since`` onward: ``rule`` a field of the server's rules,
    ``what`` the change in words, ``where`` the release's own code."""

    since: str
    rule: str
    value: object
    what: str
    where: str


def check_changes(
    rules: type, changes: Sequence[RuleChange], *, not_rules: tuple[str, ...] = ()
) -> None:
    """Each change names a rule of ``rules`` (not one of ``not_rules``), and the changes are
    in release order: a mistake here is the package's, caught at import."""
    names = {field.name for field in fields(rules)} - set(not_rules)
    order = [parse_version(change.since).release for change in changes]
    assert all(change.rule in names for change in changes), "unknown rule in CHANGES"
    assert order == sorted(order), "CHANGES out of release order"


def fold(baseline: Rules, changes: Sequence[RuleChange], version: ReleaseVersion) -> Rules:
    """``baseline`` with every change up to ``version``."""
    rules = baseline
    for change in changes:
        if parse_version(change.since).release <= version:
            changed: dict[str, Any] = {change.rule: change.value}
            rules = replace(rules, **changed)  # type: ignore[type-var]
    return rules


def changes_between(
    changes: Sequence[RuleChange], old: ReleaseVersion, new: ReleaseVersion
) -> tuple[RuleChange, ...]:
    """The changes after ``old`` up to ``new`` (or, where ``new`` is older, those after ``new``
    up to ``old``), oldest first."""
    low, high = min(old, new), max(old, new)
    return tuple(change for change in changes if low < parse_version(change.since).release <= high)


@cache
def _spans(data: str) -> dict[str, tuple[ReleaseVersion, ReleaseVersion]]:
    table = json.loads(resources.files(__package__).joinpath(data).read_text("utf-8"))
    return {
        name: (parse_version(first).release, parse_version(last).release)
        for name, (first, last) in table["architectures"].items()
    }


def served_span(data: str, architecture: str) -> tuple[str, str] | None:
    """The first and last release that serves ``architecture``, from the package data file
    ``data`` (``None``: none does)."""
    span = _spans(data).get(architecture)
    return (str(span[0]), str(span[1])) if span is not None else None
