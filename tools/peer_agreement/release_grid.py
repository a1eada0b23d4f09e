"""The per-release grid: each vLLM release's own code (``release_vllm``) against the package at
that release, case by case, and the report ``RELEASES.md``.

A case is a config, a tp (1, 2, 4, 8), a speculative length (0, 2) and prefix caching off or
on (``--enable-prefix-caching`` given either way), with ``--kv-cache-memory-bytes`` 40 GiB and
``--max-model-len`` 4096 on both sides. Compared: the model view of the state (shapes, dtypes,
bytes: ``ssm_state(..., view="model", version=X)``) and the reservation's block size, padded
page, group size and counts, planned blocks per request, ``num_blocks`` and max concurrency
(``vllm_reservation(..., version=X)``). A refusal is an answer: both sides refusing agree.
Cases the package refuses as not modelled are counted apart; cases the oracle cannot run
(``oracle_gap``) are counted as not compared, never as agreement.

Each release runs in its own worker process (its definitions live in one namespace); at most
``--jobs`` at once.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import sys
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .compare import run_repo

__all__ = ["BUDGET", "MAX_MODEL_LEN", "default_releases", "run_grid"]

BUDGET = 40 << 30
MAX_MODEL_LEN = 4096
FIELDS = (
    "block_size",
    "state_page_bytes_padded",
    "group_size",
    "state_groups",
    "attention_groups",
    "planned_blocks_per_request",
    "num_blocks",
    "max_concurrency",
)


def default_releases(repo: Path) -> list[str]:
    """For every rule set of ``--repo``'s ``releases.vllm.CHANGES`` (and the baseline), its
    first release and the last release before the next change, and the newest."""
    sys.path.insert(0, str(repo))
    from decode_ring.releases import VLLM_RELEASES
    from decode_ring.releases.vllm import CHANGES

    starts = sorted({VLLM_RELEASES.index(c.since) for c in CHANGES} | {0})
    chosen: set[int] = set()
    for position, start in enumerate(starts):
        end = starts[position + 1] - 1 if position + 1 < len(starts) else len(VLLM_RELEASES) - 1
        chosen |= {start, end}
    return [VLLM_RELEASES[i] for i in sorted(chosen)]


def _cases(
    configs: Sequence[Path], tps: Sequence[int], specs: Sequence[int]
) -> list[dict[str, Any]]:
    return [
        {"config": str(path), "tp": tp, "spec": spec, "prefix_caching": caching}
        for path in configs
        for tp in tps
        for spec in specs
        for caching in (False, True)
    ]


def _oracle(job: tuple[str, list[dict[str, Any]]]) -> tuple[str, list[dict[str, Any]], float]:
    """One release's answers to every case (run in a worker process)."""
    from .release_vllm import ReleaseVllm

    version, cases = job
    started = time.monotonic()
    try:
        release = ReleaseVllm(version)
    except Exception as error:
        return version, [{"oracle_gap": f"loading: {error!r}"} for _ in cases], 0.0
    loaded = {
        path: json.loads(Path(path).read_text(encoding="utf-8"))
        for path in {c["config"] for c in cases}
    }
    answers = [
        release.case(
            loaded[case["config"]],
            tp=case["tp"],
            spec=case["spec"],
            prefix_caching=case["prefix_caching"],
            budget=BUDGET,
            max_model_len=MAX_MODEL_LEN,
        )
        for case in cases
    ]
    return version, answers, time.monotonic() - started


def _package_jobs(version: str, case: Mapping[str, Any]) -> list[dict[str, Any]]:
    config = str(Path(case["config"]).resolve())
    return [
        {
            "kind": "state",
            "config": config,
            "tp": case["tp"],
            "spec": case["spec"],
            "layout": "vllm",
            "version": version,
            "view": "model",
        },
        {
            "kind": "reservation",
            "server": "vllm",
            "config": config,
            "arguments": {
                "version": version,
                "tensor_parallel_size": case["tp"],
                "num_speculative_tokens": case["spec"],
                "enable_prefix_caching": case["prefix_caching"],
                "kv_cache_memory_bytes": BUDGET,
                "max_model_len": MAX_MODEL_LEN,
            },
        },
    ]


def _not_modelled(answer: Mapping[str, Any]) -> bool:
    refusal = str(answer.get("refusal", ""))
    return refusal.startswith("NotModelledError") or (
        refusal.startswith("ServerArgumentError") and "not modelled" in refusal
    )


def _state_differences(oracle: Mapping[str, Any], state: Mapping[str, Any]) -> list[str]:
    """The model view: one recurrent layer's tensors (every group of the package's state is
    one kind here), shapes, dtypes and bytes."""
    groups = state.get("groups") or []
    if len(groups) != 1:
        return [f"state groups: package {len(groups)}, release 1"]
    tensors = groups[0]["tensors"]
    ours = ([list(t["shape"]) for t in tensors], [t["dtype"] for t in tensors])
    theirs = (oracle["shapes"], oracle["dtypes"])
    out = []
    if ours[0] != theirs[0]:
        out.append(f"state shapes: release {theirs[0]}, package {ours[0]}")
    if ours[1] != theirs[1]:
        out.append(f"state dtypes: release {theirs[1]}, package {ours[1]}")
    total = sum(t["bytes"] for t in tensors)
    if total != oracle["bytes"] and not out:
        out.append(f"state bytes: release {oracle['bytes']}, package {total}")
    return out


def _differences(
    oracle: Mapping[str, Any], state: Mapping[str, Any], plan: Mapping[str, Any]
) -> list[str]:
    if "refusal" in oracle:
        if "refusal" in plan or "refusal" in state:
            return []
        return [f"refusal: release refuses ({oracle['refusal'][:160]}), package answers"]
    if "refusal" in plan or "refusal" in state:
        said = plan.get("refusal") or state.get("refusal")
        return [f"refusal: package refuses ({str(said)[:160]}), release answers"]
    out = _state_differences(oracle["state"], state)
    for name in FIELDS:
        theirs, ours = oracle.get(name), plan.get(name)
        if isinstance(theirs, float) or isinstance(ours, float):
            same = (
                theirs is not None and ours is not None and math.isclose(theirs, ours, rel_tol=1e-9)
            )
        else:
            same = theirs == ours
        if not same:
            out.append(f"{name}: release {theirs}, package {ours}")
    return out


def run_grid(
    repo: Path,
    releases: Sequence[str],
    configs: Sequence[Path],
    tps: Sequence[int],
    specs: Sequence[int],
    jobs: int = 2,
) -> dict[str, Any]:
    """Every case at every release, both sides; the tallies and the disagreement classes."""
    started = time.monotonic()
    cases = _cases(configs, tps, specs)
    with multiprocessing.get_context("spawn").Pool(jobs, maxtasksperchild=1) as pool:
        oracle = {
            v: (a, t) for v, a, t in pool.imap_unordered(_oracle, [(v, cases) for v in releases])
        }
    package_jobs = [job for v in releases for case in cases for job in _package_jobs(v, case)]
    package = iter(run_repo(repo, package_jobs))
    rows: dict[str, dict[str, Any]] = {}
    classes: dict[tuple[str, ...], dict[str, Any]] = {}
    for version in releases:
        tally: dict[str, Any] = defaultdict(int)
        gaps: dict[str, int] = defaultdict(int)
        for case, theirs in zip(cases, oracle[version][0], strict=True):
            state, plan = next(package), next(package)
            tally["cases"] += 1
            if _not_modelled(plan) or _not_modelled(state):
                tally["not_modelled"] += 1
                continue
            if "refusal" not in theirs and "the layer allocates a state page" in str(
                plan.get("refusal", "")
            ):
                # The layer's page over the model view's padding: the release asserts in
                # MambaSpec.page_size_bytes on the layer's own page, which this oracle does not
                # build (release_vllm: the layer view is not run), so it cannot see this refusal.
                theirs = {"oracle_gap": "layer view not run (package: layer page > padding)"}
            if "oracle_gap" in theirs:
                tally["not_compared"] += 1
                gaps[f"{theirs['oracle_gap'][:120]} ({theirs.get('where', '')})"] += 1
                continue
            found = _differences(theirs, state, plan)
            if not found:
                tally["agree"] += 1
                continue
            tally["disagree"] += 1
            family = Path(case["config"]).name
            key = (family, *sorted(f.split(":")[0] for f in found))
            entry = classes.setdefault(
                key, {"releases": [], "count": 0, "example": {**case, "release": version},
                      "found": found, "where": theirs.get("where", "")},
            )  # fmt: skip
            entry["count"] += 1
            if version not in entry["releases"]:
                entry["releases"].append(version)
        rows[version] = {**tally, "gaps": dict(gaps), "seconds": round(oracle[version][1], 1)}
    return {"rows": rows, "classes": classes, "seconds": round(time.monotonic() - started, 1)}
