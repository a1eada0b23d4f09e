"""``python tools/peer_agreement sglang-releases``: each SGLang release's own pool, ratio and
running-cap code (``release_sglang``) against ``sglang_reservation(..., version=R)``, case by
case, and the per-release table.

A case is a config, a tp (1, 2, 4, 8), a speculative length (0, 2: EAGLE/NEXTN, topk 1) and the
radix cache on or off (``--disable-radix-cache``), with ``available_memory`` 40 GiB (the
``rest`` the pool function receives) and every other flag at its default. Compared: ``ratio``,
``slots`` (K), ``pool_bytes``, ``kv_tokens`` and ``max_running_requests`` (and the strategy
resolution where the release's code decides it: from 0.5.15, and 0.5.2 - 0.5.3.post1, whose
``initialize`` turns the radix cache off); a refusal is an answer (both refusing agree; a launch
flag the release's ``ServerArgs`` does not declare is the release's refusal). The release's
functions are fed R's own per-request state bytes and state-layer count (``own_states``:
``release_state.py`` run on R's tree under the transformers R pins), compared with the
package's ``ssm_state(config, layout="sglang", version=R, tp_size=tp)`` as fields
``state_bytes`` / ``state_layers`` of each case and, per (config, tp), in a table of their own;
R's own KV bytes per token where ``release_cell.py`` runs R's cell code (every release; from
0.5.14 without speculation), compared as ``kv_bytes_per_token`` and per (config, tp); and
the package's KV bytes per token elsewhere, context length, page size and strategy resolution
(``release_sglang.FED``). Cases the package refuses as not modelled are counted apart; its
refusal of an architecture the release does not serve is compared with R's models (no
``EntryClass`` names it: both refuse), and a refusal before the pool where R's own state code
raises on the config is both refusing; other refusals before the pool and cases the release's
code cannot be run on are "not compared", with the reason, never agreement.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .compare import run_repo
from .release_report import release_table
from .release_sglang import FED, ReleaseSglang
from .release_tree import releases_root

__all__ = ["BUDGET", "add_parser", "command_sglang_releases", "default_releases", "run_grid"]

BUDGET = 40 << 30
PROBE_BUDGET = 1 << 42
FIELDS = ("state_bytes", "state_layers", "ratio", "slots", "pool_bytes", "kv_tokens",
          "max_running_requests")  # fmt: skip
STATE_SCRIPT = Path(__file__).with_name("release_state.py")


def transformers_pin(version: str) -> str | None:
    """The transformers R's wheel pins (``Requires-Dist: transformers==X`` of its METADATA,
    extracted next to its tree as ``sglang-R.dist-info``); ``None`` where not extracted."""
    root = releases_root() / f"sglang-{version}"
    for metadata in root.glob("sglang-*.dist-info/METADATA"):
        for line in metadata.read_text(encoding="utf-8").splitlines():
            match = re.match(r"Requires-Dist: transformers\s*==\s*([^;\s]+)", line)
            if match:
                return match.group(1)
    return None


def transformers_python(version: str) -> tuple[str, str]:
    """The interpreter that runs R's config classes: one with the transformers R pins
    (``$PEER_AGREEMENT_TRANSFORMERS/transformers-X/bin/python``, default ``/tmp/tf``), else
    this one (its transformers is then not R's pin, which the report says); with the pin."""
    pin = transformers_pin(version)
    folder = Path(os.environ.get("PEER_AGREEMENT_TRANSFORMERS", "/tmp/tf"))
    python = folder / f"transformers-{pin}" / "bin" / "python"
    if pin is not None and python.exists():
        return str(python), pin
    return sys.executable, str(pin)


def own_states(
    version: str, configs: Sequence[Path], tps: Sequence[int]
) -> tuple[dict[tuple[str, int], dict[str, Any]], dict[str, Any]]:
    """R's own per-request state bytes and state layers for every config and tp
    (``release_state.py`` run on R's tree under R's transformers), and what ran."""
    python, pin = transformers_python(version)
    jobs = [(str(Path(c).resolve()), tp) for c in configs for tp in tps]
    payload = "".join(json.dumps({"config": c, "tp": tp}) + "\n" for c, tp in jobs)
    done = subprocess.run(
        [python, str(STATE_SCRIPT), str(releases_root() / f"sglang-{version}")],
        input=payload,
        capture_output=True,
        text=True,
        check=False,
    )
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or len(lines) != len(jobs) + 1:
        raise RuntimeError(f"release_state.py on {version}: {done.stderr.strip()[-400:]}")
    header = {**lines[0], "pin": pin}
    return dict(zip(jobs, lines[1:], strict=True)), header


def default_releases(repo: Path) -> list[str]:
    """For every rule set of ``--repo``'s ``releases.sglang.CHANGES`` (and the baseline), its
    first release and the last release before the next change."""
    sys.path.insert(0, str(repo))
    from decode_ring.releases import SGLANG_RELEASES
    from decode_ring.releases.sglang import CHANGES, MODELLED

    releases = list(SGLANG_RELEASES[SGLANG_RELEASES.index(MODELLED) :])
    starts = sorted({releases.index(c.since) for c in CHANGES if c.since in releases} | {0})
    chosen: set[int] = set()
    for position, start in enumerate(starts):
        end = starts[position + 1] - 1 if position + 1 < len(starts) else len(releases) - 1
        chosen |= {start, end}
    return [releases[i] for i in sorted(chosen)]


# Launch variants beyond the defaults (``--launches``): flags whose rules the default launch
# does not reach (the running cap held to the estimate or the tokens, the pool size given, the
# strategy asked for by name).
LAUNCHES: dict[str, dict[str, Any]] = {
    "default": {},
    "mrr64": {"max_running_requests": 64},
    "mrr5000": {"max_running_requests": 5000},
    "mmcs200": {"max_mamba_cache_size": 200},
    "extra_buffer": {"mamba_radix_cache_strategy": "extra_buffer"},
    "no_buffer": {"mamba_radix_cache_strategy": "no_buffer", "disable_overlap_schedule": True},
}


def _cases(
    configs: Sequence[Path],
    tps: Sequence[int],
    specs: Sequence[int],
    launches: Sequence[str] = ("default",),
) -> list[dict]:
    return [
        {"config": str(path), "tp": tp, "spec": spec, "disable_radix_cache": radix_off,
         "launch": launch}
        for launch in launches
        for path in configs
        for tp in tps
        for spec in specs
        for radix_off in (False, True)
    ]  # fmt: skip


def _package_jobs(version: str, case: Mapping[str, Any]) -> list[dict[str, Any]]:
    config = str(Path(case["config"]).resolve())
    return [
        {
            "kind": "state",
            "config": config,
            "tp": case["tp"],
            "spec": 0,
            "layout": "sglang",
            "version": version,
        },
        {
            "kind": "reservation",
            "server": "sglang",
            "config": config,
            "arguments": {
                "version": version,
                "tp_size": case["tp"],
                "available_memory": BUDGET,
                "speculative_num_draft_tokens": case["spec"],
                "disable_radix_cache": case["disable_radix_cache"],
                **LAUNCHES[case["launch"]],
            },
        },
        {
            # The same launch with room to spare: where the package refuses the 40 GiB budget,
            # its strategy resolution, cell size, context and page size for the launch.
            "kind": "reservation",
            "server": "sglang",
            "config": config,
            "arguments": {
                "version": version,
                "tp_size": case["tp"],
                "available_memory": PROBE_BUDGET,
                "speculative_num_draft_tokens": case["spec"],
                "disable_radix_cache": case["disable_radix_cache"],
                **LAUNCHES[case["launch"]],
            },
        },
    ]


def _not_modelled(answer: Mapping[str, Any]) -> bool:
    refusal = str(answer.get("refusal", ""))
    return refusal.startswith(("UnmodelledReleaseError", "NotModelledError")) or (
        refusal.startswith("ServerArgumentError") and "modelled" in refusal
    )


def _own_refusal(own: Mapping[str, Any]) -> str | None:
    """R's refusal of the model from its own state code: its class or property raising, no
    class for the model type, or its own predicate picking no mamba config (no pool)."""
    if "refusal" in own:
        return f"{own['refusal']} (R's state, {own.get('at')})"
    if "no_class" in own:
        return f"NoConfigClass: {own['no_class']}"
    if "not_hybrid" in own:
        return f"NotHybrid: R's {own['not_hybrid']} (no mamba pool)"
    return None


def _release_answer(
    release: ReleaseSglang,
    case: Mapping[str, Any],
    state: Mapping[str, Any],
    plan: Mapping,
    probe: Mapping,
    own: Mapping[str, Any],
) -> dict[str, Any]:
    """Release ``R``'s answer, fed R's own state bytes and layer count (``own``) and the
    package's strategy resolution (from the probe where the package refuses the 40 GiB
    launch)."""
    flags = LAUNCHES[case["launch"]]
    if "oracle_gap" in own:
        return {"oracle_gap": f"R's state: {own['oracle_gap'][:120]}"}
    refused = _own_refusal(own)
    if refused is not None:
        return {"refusal": refused}
    if "refusal" in state:
        return {"oracle_gap": f"package state refused: {state['refusal'][:100]}"}
    for flag in flags:
        # A flag R's ServerArgs does not declare: R's argument parser refuses the launch.
        missing = release.missing_flag(flag)
        if missing is not None:
            return {"refusal": missing}
    if "refusal" in plan and "refusal" not in probe:
        plan = probe
    resolved: tuple[bool, str, bool] | None = None
    if "refusal" in plan:
        # The package refuses after the state: run the release's pool on the package's state
        # with the radix cache as asked (no strategy, cell or context to feed).
        strategy, radix_off, overlap, cell, context, page = (
            "no_buffer", bool(case["disable_radix_cache"]), True, None, 4096, 1,
        )  # fmt: skip
    else:
        strategy = plan["mamba_radix_cache_strategy"]
        radix_off = bool(plan["disable_radix_cache"]) or strategy == "none"
        overlap, cell = bool(plan["overlap_schedule"]), plan["kv_bytes_per_token"]
        own_cell = _own_cell(own, case)
        if "cell_gap" in own_cell:
            return {"oracle_gap": f"R's cell: {own_cell['cell_gap'][:120]}"}
        cell = own_cell.get("cell", cell)
        context, page = plan["context_length"], plan["page_size"]
        if release.resolution_fn is not None:
            # From 0.5.15 the release's own strategy resolution, fed to its pool code.
            try:
                resolved = release.resolve(
                    plan["architecture"],
                    _config(case["config"]),
                    bool(case["disable_radix_cache"]),
                    flags.get("mamba_radix_cache_strategy", "auto"),
                    bool(flags.get("disable_overlap_schedule", False)),
                )
            except Exception as error:
                return {"oracle_gap": f"resolution: {type(error).__name__}: {error}"[:140]}
            radix_off, strategy, overlap = resolved
        if strategy == "none":
            strategy = "no_buffer"
    try:
        answer = release.case(
            per_req=own["per_req"],
            state_layers=own["layers"],
            cell=cell,
            context_len=context,
            page_size=page,
            budget=BUDGET,
            spec=case["spec"],
            disable_radix_cache=radix_off,
            strategy=strategy,
            overlap=overlap,
            max_running_requests=flags.get("max_running_requests"),
            max_mamba_cache_size=flags.get("max_mamba_cache_size"),
            architecture=plan.get("architecture") or _architecture(case["config"]),
            model_type=_config(case["config"]).get("model_type"),
        )
        if resolved is not None and "refusal" not in answer:
            answer["strategy"] = _strategy_text(*resolved)
        if "refusal" not in answer:
            answer.update(state_bytes=own["per_req"], state_layers=own["layers"])
            if "cell" in _own_cell(own, case):
                answer["kv_bytes_per_token"] = own["cell"]
        return answer
    except Exception as error:  # the release's code could not be run on this case
        return {"oracle_gap": f"{type(error).__name__}: {' '.join(str(error).split())[:120]}"}


# The package's refusals of the model itself (never of a flag: "SGLang R has no --flag").
UNSERVED = re.compile(r"^ModelConfigError: .*SGLang \S+ (does not serve '|has no [^-])")


def _unserved(plan: Mapping[str, Any], own: Mapping[str, Any]) -> str | None:
    """For the package's refusal of an architecture the release does not serve: ``""`` where
    R's models name no ``EntryClass`` for it either (both refuse), else R's file that does;
    ``None`` for any other refusal (or R's models not read), which is not compared."""
    if not UNSERVED.search(str(plan.get("refusal", ""))) or "entry" not in own:
        return None
    return own["entry"] or ""


def _own_cell(own: Mapping[str, Any], case: Mapping[str, Any]) -> dict[str, Any]:
    """R's own KV bytes per token for the case (``release_cell.py``): ``{"cell": n}``, or
    ``{"cell_gap": why}`` (R's cell code not run on it: the case is not compared), or ``{}``
    (fed the package's: R's cell code is not run for this release, or R adds EAGLE draft
    layers under speculation, which is not run, and the case speculates)."""
    if own.get("cell_spec") and case["spec"]:
        return {}
    if "cell_gap" in own:
        return {"cell_gap": own["cell_gap"]}
    if "cell" in own:
        return {"cell": own["cell"]}
    return {}


@functools.cache
def _config(path: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    return data


def _architecture(path: str) -> str | None:
    architectures = _config(path).get("architectures") or [None]
    return str(architectures[0]) if architectures[0] is not None else None


def _strategy_text(radix_off: bool, strategy: str, overlap: bool) -> str:
    """What the pool code reads of the resolution: the radix cache off, or the extra buffer
    (lazy or not; ``auto`` and ``no_buffer`` are the same to it) and the overlap scheduler."""
    if radix_off:
        return "radix cache off"
    kind = strategy if strategy in ("extra_buffer", "extra_buffer_lazy") else "no extra buffer"
    return f"{kind}, overlap {'on' if overlap else 'off'}"


def _short(refusal: object) -> str:
    """A refusal without the config's path, cut to 110 characters."""
    text = re.sub(r"'[^']*/tests/configs/([^']+)'", r"\1", str(refusal))
    return text[:110]


def _differences(theirs: Mapping[str, Any], plan: Mapping[str, Any]) -> list[str]:
    if "refusal" in theirs:
        if "refusal" in plan:
            return []
        return [f"refusal: release refuses ({theirs['refusal'][:160]}), package answers"]
    if "refusal" in plan:
        return [
            f"refusal: package refuses ({str(plan['refusal'])[:160]}), release answers "
            f"K={theirs.get('slots')}"
        ]
    out = []
    if "strategy" in theirs:
        ours = _strategy_text(
            plan["mamba_radix_cache_strategy"] == "none" or bool(plan["disable_radix_cache"]),
            plan["mamba_radix_cache_strategy"],
            bool(plan["overlap_schedule"]),
        )
        if theirs["strategy"] != ours:
            out.append(f"strategy: release {theirs['strategy']}, package {ours}")
    if "kv_bytes_per_token" in theirs and theirs["kv_bytes_per_token"] != plan.get(
        "kv_bytes_per_token"
    ):
        out.append(
            f"kv_bytes_per_token: release {theirs['kv_bytes_per_token']}, package "
            f"{plan.get('kv_bytes_per_token')}"
        )
    for name in FIELDS:
        if theirs.get(name) != plan.get(name):
            out.append(f"{name}: release {theirs.get(name)}, package {plan.get(name)}")
    return out


def run_grid(
    repo: Path,
    releases: Sequence[str],
    configs: Sequence[Path],
    tps: Sequence[int],
    specs: Sequence[int],
    launches: Sequence[str] = ("default",),
    code_of: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Every case at every release, both sides; ``code_of`` runs another release's code
    against the package at a release (``{"0.5.17": "0.5.16"}``: the check that the oracle sees
    a rule change)."""
    started = time.monotonic()
    code_of = code_of or {}
    cases = _cases(configs, tps, specs, launches)
    jobs = [job for v in releases for case in cases for job in _package_jobs(v, case)]
    package = iter(run_repo(repo, jobs))
    rows: dict[str, dict[str, Any]] = {}
    classes: dict[tuple[str, ...], dict[str, Any]] = {}
    where: dict[str, dict[str, str]] = {}
    headers: dict[str, dict[str, Any]] = {}
    state_rows: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    state_classes: dict[tuple[str, ...], dict[str, Any]] = {}
    cell_rows: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    cell_classes: dict[tuple[str, ...], dict[str, Any]] = {}
    for version in releases:
        tally: dict[str, Any] = defaultdict(int)
        seen_states: set[tuple[str, int]] = set()
        gaps: dict[str, int] = defaultdict(int)
        unmodelled: dict[str, int] = defaultdict(int)
        try:
            release: ReleaseSglang | None = ReleaseSglang(code_of.get(version, version))
            owns, header = own_states(code_of.get(version, version), configs, tps)
            headers[version] = header
        except Exception as error:
            release, load_error = None, f"loading: {error!r}"
        clock = time.monotonic()
        for case in cases:
            state, plan, probe = next(package), next(package), next(package)
            tally["cases"] += 1
            key = (str(Path(case["config"]).resolve()), case["tp"])
            if release is not None and key not in seen_states:
                seen_states.add(key)
                _tally_state(state_rows[version], state_classes, version, case, state, plan,
                             probe, owns[key])  # fmt: skip
                _tally_cell(cell_rows[version], cell_classes, version, case, plan, probe,
                            owns[key])  # fmt: skip
            if _not_modelled(plan):
                tally["not_modelled"] += 1
                unmodelled[re.sub(r"\d+(\.\d+)*(\.post\d+)?", "N", _short(plan["refusal"]))] += 1
                continue
            if release is None:
                tally["not_compared"] += 1
                gaps[load_error] += 1
                continue
            if "refusal" in plan and "refusal" in state:
                served = _unserved(plan, owns[key])
                if served is None and _own_refusal(owns[key]) is not None:
                    # Both refuse: R's own state code raises on the config (its class or the
                    # model file's head-split assert), as the state comparison counts it.
                    tally["agree"] += 1
                    tally["both_refuse"] += 1
                elif served is None:
                    tally["not_compared"] += 1
                    gaps[f"package refuses before the pool: {_short(plan['refusal'])}"] += 1
                elif served == "":
                    # Both refuse: R's models name no EntryClass for the architecture.
                    tally["agree"] += 1
                    tally["unserved"] += 1
                else:
                    tally["disagree"] += 1
                    found = [f"refusal: package refuses ({_short(plan['refusal'])}), R serves "
                             f"the architecture ({served})"]  # fmt: skip
                    entry = classes.setdefault(
                        (Path(case["config"]).name, case["launch"], "served"),
                        {"releases": [], "count": 0, "example": {**case, "release": version},
                         "found": found},
                    )  # fmt: skip
                    entry["count"] += 1
                    if version not in entry["releases"]:
                        entry["releases"].append(version)
                continue
            theirs = _release_answer(release, case, state, plan, probe, owns[key])
            if "oracle_gap" in theirs:
                tally["not_compared"] += 1
                gaps[theirs["oracle_gap"]] += 1
                continue
            if "refusal" in plan and "refusal" not in theirs and "partial" in theirs:
                tally["not_compared"] += 1
                gaps[
                    f"package refuses after the state ({_short(plan['refusal'])}); the "
                    f"release's pool function answers K={theirs.get('slots')}"
                ] += 1
                continue
            ours = {**plan, "state_bytes": state.get("per_sequence_bytes")}
            found = _differences(theirs, ours)
            if not found:
                tally["agree"] += 1
                continue
            tally["disagree"] += 1
            key = (
                Path(case["config"]).name,
                case["launch"],
                *sorted(f.split(":")[0] for f in found),
            )
            entry = classes.setdefault(
                key,
                {"releases": [], "count": 0, "example": {**case, "release": version},
                 "found": found},
            )  # fmt: skip
            entry["count"] += 1
            if version not in entry["releases"]:
                entry["releases"].append(version)
        if release is not None:  # after the cases: what they located (the flags) too
            where[version] = {
                **release.where,
                **{f"default {k}": f"{v[0]!r} ({v[1]})" for k, v in release.defaults.items()},
            }
        rows[version] = {
            **tally,
            "gaps": dict(gaps),
            "unmodelled": dict(unmodelled),
            "seconds": round(time.monotonic() - clock, 1),
        }
    return {
        "rows": rows,
        "classes": classes,
        "where": where,
        "states": {v: dict(r) for v, r in state_rows.items()},
        "state_classes": state_classes,
        "cells": {v: dict(r) for v, r in cell_rows.items()},
        "cell_classes": cell_classes,
        "headers": headers,
        "seconds": round(time.monotonic() - started, 1),
    }


def _tally_state(
    row: dict[str, int],
    classes: dict[tuple[str, ...], dict[str, Any]],
    version: str,
    case: Mapping[str, Any],
    state: Mapping[str, Any],
    plan: Mapping[str, Any],
    probe: Mapping[str, Any],
    own: Mapping[str, Any],
) -> None:
    """One (config, tp) of the state comparison: R's own bytes and layer count against the
    package's ``ssm_state(config, layout="sglang", version=R, tp_size=tp)``. Both refusing (or
    R building no pool where the package has no state) agree; the package's "not modelled"
    is counted apart."""
    row["pairs"] += 1
    if "oracle_gap" in own:
        row["not_compared"] += 1
        return
    ours = state.get("refusal")
    if ours is not None and str(ours).startswith(("UnmodelledReleaseError", "NotModelledError")):
        row["not_modelled"] += 1
        return
    theirs = _own_refusal(own)
    ours_bytes = state.get("per_sequence_bytes") if ours is None else None
    ours_layers = (
        sum(len(g["layer_indices"]) for g in state.get("groups", [])) if ours is None else None
    )
    # The package's launch refused before the pool (an architecture R does not serve): no
    # pool on its side either, whatever its state contract answers.
    unserved = "refusal" in plan and "refusal" in probe
    if theirs is not None and (ours is not None or unserved or not ours_bytes):
        row["agree"] += 1
        row["both_refuse"] += 1
        return
    if (
        theirs is None
        and ours is None
        and (own["per_req"], own["layers"])
        == (
            ours_bytes,
            ours_layers,
        )
    ):
        row["agree"] += 1
        return
    row["disagree"] += 1
    if theirs is not None:
        found = f"R refuses ({theirs[:200]}); package {ours_bytes} B, {ours_layers} layers"
    elif ours is not None:
        found = f"package refuses ({_short(ours)}); R {own['per_req']} B, {own['layers']} layers"
    else:
        found = (
            f"bytes R {own['per_req']} package {ours_bytes}; "
            f"layers R {own['layers']} package {ours_layers}"
        )
    key = (Path(case["config"]).name, found.split(" (")[0].split(";")[0])
    entry = classes.setdefault(key, {"releases": [], "cases": [], "found": found, "own": own})
    if version not in entry["releases"]:
        entry["releases"].append(version)
    entry["cases"].append(f"{version} tp {case['tp']}: {found}")


def _tally_cell(
    row: dict[str, int],
    classes: dict[tuple[str, ...], dict[str, Any]],
    version: str,
    case: Mapping[str, Any],
    plan: Mapping[str, Any],
    probe: Mapping[str, Any],
    own: Mapping[str, Any],
) -> None:
    """One (config, tp) of the cell comparison: R's own KV bytes per token (``release_cell.py``,
    without speculation) against the package's ``kv_bytes_per_token`` of the same launch (the
    probe's where the package refuses the 40 GiB budget). Only where both have one: R sizing
    a pool (its state answered) and the package a launch."""
    ours = plan if "kv_bytes_per_token" in plan else probe
    if "per_req" not in own:
        return  # R builds no pool for the model (or its state was not run): no cell read
    row["pairs"] += 1
    if "cell_fed" in own:
        row["fed"] += 1
        return
    if "cell_gap" in own:
        row["not_compared"] += 1
        key = (version, own["cell_gap"][:160])
        classes.setdefault(("gap", *key), {"count": 0})["count"] += 1
        return
    if "kv_bytes_per_token" not in ours:
        row["package_refuses"] += 1
        return
    if own["cell"] == ours["kv_bytes_per_token"]:
        row["agree"] += 1
        return
    row["disagree"] += 1
    key = ("differ", Path(case["config"]).name)
    entry = classes.setdefault(key, {"count": 0, "releases": [], "cases": []})
    entry["count"] += 1
    if version not in entry["releases"]:
        entry["releases"].append(version)
    entry["cases"].append(
        f"{version} tp {case['tp']}: R {own['cell']} ({own.get('cell_layers')} layers, "
        f"{own.get('cell_dtype')}), package {ours['kv_bytes_per_token']}"
    )


def reproducer(example: Mapping[str, Any]) -> str:
    config = Path(example["config"])
    flags = "".join(f", {k}={v!r}" for k, v in LAUNCHES[example["launch"]].items())
    return (
        f"sglang_reservation('tests/configs/{config.name}', version='{example['release']}', "
        f"available_memory=40 << 30, tp_size={example['tp']}, "
        f"speculative_num_draft_tokens={example['spec']}, "
        f"disable_radix_cache={example['disable_radix_cache']}{flags})"
    )


def render(result: Mapping[str, Any], configs: Sequence[Path]) -> str:
    rows = result["rows"]
    lines = release_table(rows, "not compared")
    lines += [
        "",
        "Of the agreeing cases, both refusing an architecture R's models name no EntryClass for "
        "(the package's 'does not serve' / 'has no ... model'):",
        "",
    ]
    lines += [
        f"* {version}: {row.get('unserved', 0)} (and {row.get('both_refuse', 0)} where R's own "
        "state code raises on the config)"
        for version, row in rows.items()
    ]
    lines += ["", "Not modelled by the package, by release and reason:", ""]
    for version, row in rows.items():
        for reason, count in sorted(row["unmodelled"].items(), key=lambda item: -item[1]):
            lines.append(f"* {version}: {count} x {reason}")
    lines += ["", "Not compared, by release and reason:", ""]
    for version, row in rows.items():
        for gap, count in sorted(row["gaps"].items(), key=lambda item: -item[1]):
            lines.append(f"* {version}: {count} x {gap}")
    lines += ["", "Disagreement classes (config, fields), with the first case found:", ""]
    if not result["classes"]:
        lines.append("* none")
    for key, entry in sorted(result["classes"].items(), key=lambda item: -item[1]["count"]):
        lines.append(
            f"* `{key[0]}` ({key[1]}) {', '.join(key[2:])}: {entry['count']} cases, releases "
            f"{', '.join(entry['releases'])}. Reproducer: `{reproducer(entry['example'])}`: "
            + "; ".join(entry["found"])
        )
    lines += [
        "",
        "State bytes and layers, R's own (release_state.py) against the package's "
        "ssm_state, per (config, tp):",
        "",
    ]
    lines += [
        "| release | transformers (R's pin; run) | pairs | agree | of which both refuse | "
        "disagree | not modelled | not compared |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for version, row in result["states"].items():
        header = result["headers"].get(version, {})
        lines.append(
            f"| {version} | {header.get('pin')}; {header.get('ready')} | {row.get('pairs', 0)} | "
            f"{row.get('agree', 0)} | {row.get('both_refuse', 0)} | {row.get('disagree', 0)} | "
            f"{row.get('not_modelled', 0)} | {row.get('not_compared', 0)} |"
        )
    lines += ["", "State disagreements (config, kind), by release:", ""]
    if not result["state_classes"]:
        lines.append("* none")
    for key, entry in result["state_classes"].items():
        lines.append(
            f"* `{key[0]}` {key[1]}: releases {', '.join(entry['releases'])}; first: "
            f"{entry['cases'][0]}; R: {json.dumps(entry['own'])[:300]}"
        )
    lines += [
        "",
        "KV bytes per token (the cell), R's own (release_cell.py, without speculation) against "
        "the package's kv_bytes_per_token, per (config, tp) where R sizes a pool:",
        "",
        "| release | R's cell code | pairs | agree | disagree | fed (not run) | not compared "
        "| package refuses |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for version, row in result["cells"].items():
        header = result["headers"].get(version, {})
        lines.append(
            f"| {version} | {header.get('cell')} | {row.get('pairs', 0)} | {row.get('agree', 0)} "
            f"| {row.get('disagree', 0)} | {row.get('fed', 0)} | {row.get('not_compared', 0)} | "
            f"{row.get('package_refuses', 0)} |"
        )
    lines += ["", "Cell disagreements and gaps:", ""]
    if not result["cell_classes"]:
        lines.append("* none")
    for key, entry in result["cell_classes"].items():
        if key[0] == "gap":
            lines.append(f"* gap, {key[1]}: {entry['count']} x {key[2]}")
        else:
            lines.append(
                f"* `{key[1]}`: {entry['count']} pairs, releases {', '.join(entry['releases'])}; "
                + "; ".join(entry["cases"][:4])
            )
    lines += ["", "What R's state run used (chooser, SSM dtype default, config registry):", ""]
    for version, header in result["headers"].items():
        lines.append(
            f"* {version}: {header.get('chooser')}; --mamba-ssm-dtype default "
            f"{header.get('ssm_dtype')}; _CONFIG_REGISTRY {header.get('registry')}"
        )
    lines += ["", "What each release's run located in its own tree (and the defaults read):", ""]
    for version, found in result["where"].items():
        lines.append(f"* {version}: " + "; ".join(f"{k}: {v}" for k, v in found.items()))
    lines += ["", "Fed by the package or mirrored (not the release's code):", ""]
    lines += [f"* {item}" for item in FED]
    lines += ["", f"Configs: {len(configs)}; run time {result['seconds']} s."]
    return "\n".join(lines) + "\n"


def add_parser(sub: Any) -> None:
    command = sub.add_parser(
        "sglang-releases", help="each SGLang release's own pool code against the package"
    )
    command.add_argument("--repo", required=True, type=Path, help="decode_ring checkout")
    command.add_argument(
        "--releases",
        default=None,
        help="comma list (default: each rule set's first and last release); 'all' for every "
        "modelled one",
    )
    command.add_argument("--configs", nargs="+", default=[Path("tests/configs")], type=Path)
    command.add_argument("--tp", default="1,2,4,8")
    command.add_argument("--spec", default="0,2")
    command.add_argument(
        "--launches",
        default="default",
        help=f"comma list of launch variants ({', '.join(LAUNCHES)}), or 'all'",
    )
    command.add_argument(
        "--code-of",
        default="",
        help="R=S,...: run release S's code against the package at R (the swap check)",
    )
    command.add_argument("--out", type=Path, help="write the report here (default: print)")


def command_sglang_releases(arguments: argparse.Namespace) -> int:
    repo = arguments.repo.resolve()
    if arguments.releases == "all":
        sys.path.insert(0, str(repo))
        from decode_ring.releases import SGLANG_RELEASES
        from decode_ring.releases.sglang import MODELLED

        releases = list(SGLANG_RELEASES[SGLANG_RELEASES.index(MODELLED) :])
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
        list(LAUNCHES) if arguments.launches == "all" else arguments.launches.split(","),
        dict(pair.split("=", 1) for pair in arguments.code_of.split(",") if pair),
    )
    text = render(result, configs)
    if arguments.out:
        arguments.out.write_text(text, encoding="utf-8")
    else:
        print(text)
    return 0
