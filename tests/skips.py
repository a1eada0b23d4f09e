"""Fails a test run on any skip that the allow-list does not name.

pytest counts a skipped test as a pass, so a test that can no longer run (no
``rustc``, no reference spec, no torch) would leave CI green. CI runs each
suite with ``--junitxml`` (``-o junit_family=xunit1``, for the file of each
test) and then this module over the report::

    python -m tests.skips --run readme build/ci/readme.xml

It prints every skip with its reason and fails (exit 1) on any skipped or
xfailed test that no entry of ``tests/SKIPS.allow`` allows in that run, and
on a report that holds no test at all. ``tools/wheel-matrix`` checks its
runs the same way.
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import sys
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

ALLOW_LIST = Path(__file__).with_name("SKIPS.allow")


@dataclass(frozen=True)
class Skip:
    """A test that did not run: its id (``tests/test_x.py::test_y[param]``, or
    the module's path where the whole module skipped), the reason pytest
    reported, and whether it was a skip or an xfail."""

    test: str
    reason: str
    kind: str


@dataclass(frozen=True)
class Entry:
    """One line of the allow-list: in which runs which tests may skip for
    which reason (globs), and why that is expected."""

    runs: tuple[str, ...]
    test: str
    reason: str
    why: str
    line: int

    def allows(self, run: str, skip: Skip) -> bool:
        return (
            any(fnmatch.fnmatchcase(run, pattern) for pattern in self.runs)
            and fnmatch.fnmatchcase(skip.test, self.test)
            and fnmatch.fnmatchcase(skip.reason, self.reason)
        )


class AllowListError(Exception):
    pass


def read_allow_list(path: Path = ALLOW_LIST) -> list[Entry]:
    """The entries of ``path``: ``runs | test | reason | why`` a line; ``#``
    starts a comment line. Every field is required."""
    entries = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [field.strip() for field in line.split(" | ")]
        if len(fields) != 4 or not all(fields):
            raise AllowListError(
                f"{path}:{number}: want 'runs | test | reason | why', all four given: {line!r}"
            )
        runs, test, reason, why = fields
        entries.append(
            Entry(tuple(run.strip() for run in runs.split(",")), test, reason, why, number)
        )
    return entries


def _test_id(case: ElementTree.Element) -> str:
    path = case.get("file", "")
    classname = case.get("classname", "")
    name = case.get("name", "")
    if not classname:  # the whole module skipped at collection
        return path or name
    module = path.removesuffix(".py").replace("/", ".").replace("\\", ".")
    inner = classname.removeprefix(module).lstrip(".")
    return "::".join(part for part in (path or classname, *inner.split("."), name) if part)


def _reason(skipped: ElementTree.Element) -> str:
    message = skipped.get("message", "")
    if message == "collection skipped" and skipped.text:
        # A module that skipped at collection: text is (path, line, "Skipped: reason").
        try:
            _, _, text = ast.literal_eval(skipped.text)
        except (ValueError, SyntaxError, TypeError):
            return skipped.text.strip()
        return str(text).removeprefix("Skipped: ")
    return message


def read_report(path: Path) -> tuple[int, list[Skip]]:
    """How many tests a JUnit XML report holds, and those that skipped."""
    cases = list(ElementTree.parse(path).getroot().iter("testcase"))
    skips = []
    for case in cases:
        skipped = case.find("skipped")
        if skipped is not None:
            kind = "xfail" if skipped.get("type") == "pytest.xfail" else "skip"
            skips.append(Skip(_test_id(case), _reason(skipped), kind))
    return len(cases), skips


def check(
    run: str, skips: Iterable[Skip], entries: Sequence[Entry]
) -> tuple[list[tuple[Skip, Entry]], list[Skip]]:
    """The skips that an entry allows in ``run`` (with the entry), and the rest."""
    allowed, unexpected = [], []
    for skip in skips:
        entry = next((entry for entry in entries if entry.allows(run, skip)), None)
        if entry is None:
            unexpected.append(skip)
        else:
            allowed.append((skip, entry))
    return allowed, unexpected


def _grouped(skips: Iterable[Skip]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for skip in skips:
        groups.setdefault(f"{skip.kind}: {skip.reason}", []).append(skip.test)
    return groups


def summary(run: str, report: Path, allow_list: Path = ALLOW_LIST) -> tuple[bool, list[str]]:
    """Whether ``report`` passes the check for ``run``, and the lines that say so."""
    total, skips = read_report(report)
    if total == 0:
        return False, [f"skips in {run}: {report} holds no test at all"]
    allowed, unexpected = check(run, skips, read_allow_list(allow_list))
    lines = [
        f"skips in {run}: {len(skips)} of {total} tests did not run"
        f" ({len(allowed)} allowed by {allow_list.name}, {len(unexpected)} unexpected)"
    ]
    why = {f"{skip.kind}: {skip.reason}": entry for skip, entry in allowed}
    for group, tests in _grouped(skip for skip, _ in allowed).items():
        entry = why[group]
        lines.append(f"  allowed  {len(tests)} x {group}")
        lines.append(f"           ({allow_list.name}:{entry.line}: {entry.why})")
    if unexpected:
        lines.append(
            f"UNEXPECTED SKIPS in {run}: {allow_list} allows none of these; "
            "make the test run here, or add an entry with the reason it cannot"
        )
        for group, tests in _grouped(unexpected).items():
            lines.append(f"  {len(tests)} x {group}")
            lines.extend(f"      {test}" for test in tests)
    return not unexpected, lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", required=True, help="the run's name, as the allow-list says it")
    parser.add_argument("--allow", type=Path, default=ALLOW_LIST, help="the allow-list")
    parser.add_argument("report", type=Path, help="pytest's --junitxml report")
    args = parser.parse_args(argv)
    try:
        passed, lines = summary(args.run, args.report, args.allow)
    except (OSError, ElementTree.ParseError, AllowListError) as error:
        print(f"skips in {args.run}: {error}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
