"""Lists the targets the last timed run missed by more than the spread.

    python -m benchmarks.misses [PATH]

Reads the JSON that ``pytest benchmarks --benchmark-enable`` wrote
(``.benchmarks/decode_ring-latest.json`` by default), prints its MISS rows
and exits 1 if there is any, 0 if none, 2 if there is no such file. For
people: CI never runs it, and keeps no timing gate.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .harness import LATEST


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.misses", description=__doc__)
    parser.add_argument("path", nargs="?", type=Path, default=LATEST)
    arguments = parser.parse_args(argv)
    path: Path = arguments.path
    if not path.is_file():
        print(
            f"{path}: no such file; run pytest benchmarks --benchmark-enable --benchmark-only",
            file=sys.stderr,
        )
        return 2
    report = json.loads(path.read_text())
    misses = [row for row in report["rows"] if row["verdict"] == "MISS"]
    print(f"{path}: {report['generated']}, {report['python'].split()[0]}, {report['platform']}")
    for row in misses:
        measured = (
            f"py/cy {row['py_cy']:.2f} (IQR {row['py_cy_iqr']:.2f})"
            if row["target"].startswith("py/cy")
            else f"{row['ratio']:.2f}x floor (IQR {row['ratio_iqr']:.2f})"
        )
        print(
            f"MISS {row['call']} [{row['case']}] {row['implementation']}: "
            f"{measured}, target {row['target']}, {row['median_ns']:.1f} ns/call"
        )
    print(f"{len(misses)} missed of {sum(1 for row in report['rows'] if row['target'])} targets")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
