"""``python -m tests.golden --check|--update [NAME...]``: see the package's docstring."""

from __future__ import annotations

import argparse
import sys

from . import GOLDEN, as_golden, diff, load_cases, run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.golden", description=__doc__)
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", action="store_true", help="show what differs; exit 1 if any")
    action.add_argument("--update", action="store_true", help="rewrite what differs, and show it")
    parser.add_argument("names", nargs="*", metavar="NAME", help="only these cases")
    args = parser.parse_args(argv)
    cases = load_cases()
    unknown = set(args.names) - {case.name for case in cases}
    if unknown:
        parser.error(f"no case named {', '.join(sorted(unknown))}")
    differing = 0
    for case in cases:
        if args.names and case.name not in args.names:
            continue
        status, stdout, stderr = run(case)
        if (status, stderr) != (case.status, case.stderr):
            print(
                f"{case.name}: exit status {status} and stderr {stderr!r}; cases.json says "
                f"{case.status} and {case.stderr!r}",
                file=sys.stderr,
            )
            differing += 1
        actual = as_golden(case, stdout)
        expected = case.path.read_text(encoding="utf-8") if case.path.exists() else ""
        if actual == expected:
            continue
        differing += 1
        sys.stdout.write(diff(case, expected, actual) or f"--- {case.path.name}: new\n")
        if args.update:
            case.path.write_text(actual, encoding="utf-8")
    if args.update and not args.names:
        named = {case.path.name for case in cases}
        for orphan in sorted(GOLDEN.glob("*.txt")) + sorted(GOLDEN.glob("*.json")):
            if orphan.name not in named and orphan.name != "cases.json":
                print(f"deleting {orphan.name}: no case names it")
                orphan.unlink()
    if differing:
        print(f"{differing} case(s) differ{' (updated)' if args.update else ''}", file=sys.stderr)
    return 1 if differing and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
