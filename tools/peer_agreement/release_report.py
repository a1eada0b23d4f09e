"""``python tools/peer_agreement releases``: run ``release_grid`` and write ``RELEASES.md``, the
per-release agreement table and each disagreement class with its reproducer."""

from __future__ import annotations

import argparse
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .release_grid import BUDGET, MAX_MODEL_LEN, default_releases, run_grid
from .release_tree import releases_root

__all__ = ["add_parser", "command_releases", "render"]


def add_parser(sub: Any) -> None:
    command = sub.add_parser("releases", help="each vLLM release's own code against the package")
    command.add_argument("--repo", required=True, type=Path, help="decode_ring checkout")
    command.add_argument(
        "--releases",
        default=None,
        help="comma list (default: each rule set's "
        "first and last release, and the newest); 'all' for every one",
    )
    command.add_argument("--configs", nargs="+", default=[Path("tests/configs")], type=Path)
    command.add_argument("--tp", default="1,2,4,8")
    command.add_argument("--spec", default="0,2")
    command.add_argument("--jobs", default=2, type=int)
    command.add_argument("--out", type=Path, help="write the report here (default: print)")


def _cache_size() -> str:
    folders = sorted(str(p) for p in releases_root().glob("vllm-*"))
    done = subprocess.run(["du", "-shc", *folders], capture_output=True, text=True, check=False)
    return done.stdout.strip().splitlines()[-1].split()[0] if done.stdout else "?"


def command_releases(arguments: argparse.Namespace) -> int:
    repo = arguments.repo.resolve()
    if arguments.releases == "all":
        import sys

        sys.path.insert(0, str(repo))
        from decode_ring.releases import VLLM_RELEASES

        releases = list(VLLM_RELEASES)
    elif arguments.releases:
        releases = arguments.releases.split(",")
    else:
        releases = default_releases(repo)
    configs = sorted(
        path
        for folder in arguments.configs
        for path in ([folder] if folder.is_file() else folder.glob("*.json"))
    )
    result = run_grid(
        repo,
        releases,
        configs,
        [int(t) for t in arguments.tp.split(",")],
        [int(s) for s in arguments.spec.split(",")],
        arguments.jobs,
    )
    text = render(result, configs, _cache_size())
    if arguments.out:
        arguments.out.write_text(text, encoding="utf-8")
    else:
        print(text)
    return 0


def release_table(rows: Mapping[str, Mapping[str, Any]], not_compared: str) -> list[str]:
    """The per-release table both oracles print: one row a release, counts by outcome;
    ``not_compared`` heads the last column."""
    lines = [
        f"| release | cases | agree | disagree | not modelled | {not_compared} |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for version, row in rows.items():
        lines.append(
            f"| {version} | {row.get('cases', 0)} | {row.get('agree', 0)} | "
            f"{row.get('disagree', 0)} | {row.get('not_modelled', 0)} | "
            f"{row.get('not_compared', 0)} |"
        )
    return lines


def render(result: dict[str, Any], configs: list[Path], cache: str) -> str:
    rows = result["rows"]
    lines = release_table(rows, "not compared (oracle gap)")
    lines += ["", "Oracle gaps (cases the release's code could not be run on), by release:", ""]
    for version, row in rows.items():
        for gap, count in sorted(row["gaps"].items(), key=lambda item: -item[1]):
            lines.append(f"* {version}: {count} x {gap}")
    lines += ["", "Disagreement classes (config, fields), with the first case found:", ""]
    for key, entry in sorted(result["classes"].items(), key=lambda item: -item[1]["count"]):
        example = entry["example"]
        lines.append(
            f"* `{key[0]}` {', '.join(key[1:])}: {entry['count']} cases, releases "
            f"{', '.join(entry['releases'])}. Reproducer: vLLM {example['release']}, tp "
            f"{example['tp']}, spec {example['spec']}, --enable-prefix-caching "
            f"{example['prefix_caching']}, --kv-cache-memory-bytes {BUDGET}, --max-model-len "
            f"{MAX_MODEL_LEN}: "
            + "; ".join(entry["found"])
            + (f" (release: {entry['where']})" if entry["where"] else "")
        )
    lines += [
        "",
        f"Configs: {len(configs)}; run time {result['seconds']} s; release trees: {cache}.",
    ]
    return "\n".join(lines) + "\n"
