"""Command line: ``python tools/peer_agreement COMMAND ...``.

``states``
    For every ``*.json`` config in ``--configs`` (default ``tests/configs``), at each ``--tp``
    (1,2,4,8) and ``--spec`` (0,2), for layouts vllm and sglang: the peer's own state (from the
    wheels, ``states.py``) against ``decode_ring.models.ssm_state`` of the checkout ``--repo``.
    Prints per-family agreement, every disagreement, and "N of M agree" twice: on the state
    functions alone, and counting vLLM's attention-head TP check as a refusal.
``reservations``
    The same configs at each tp and spec, prefix caching on and off and several budgets: the
    servers' reservation code (``reservations.py``) against ``decode_ring.servers``.
``peers``
    The peers' answers alone, as JSON (no checkout needed).
``budget``
    The budget's computed parts (issue 25): SGLang's default mem_fraction_static, vLLM's batch
    defaults and requested memory, from the wheels' own functions, for every GPU of the
    checkout's table (``budget.py``).

Wheels: ``--wheels`` (files or a folder; default ``$PEER_AGREEMENT_WHEELS``). Get them with
``pip download --no-deps -d WHEELS vllm==0.33.0 sglang==0.5.23``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as ``python tools/peer_agreement``
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "peer_agreement"

from peer_agreement.class_probe import ACTIVE, Snapshots
from peer_agreement.compare import Tally, run_repo, state_differences
from peer_agreement.peer_state import PeerState
from peer_agreement.release_report import add_parser as add_releases_parser
from peer_agreement.release_report import command_releases
from peer_agreement.release_sglang_grid import add_parser as add_sglang_releases_parser
from peer_agreement.release_sglang_grid import command_sglang_releases
from peer_agreement.states import SglangStates, VllmStates, family_of
from peer_agreement.transformers_configs import generate, generate_pinned
from peer_agreement.wheels import DOWNLOAD_HINT, find_wheels, open_wheels

LAYOUTS = ("vllm", "sglang")


def _ints(text: str) -> list[int]:
    return [int(item) for item in text.split(",") if item.strip()]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="peer_agreement", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("states", "reservations", "grid", "peers", "budget"):
        command = sub.add_parser(name)
        command.add_argument(
            "--wheels",
            nargs="+",
            default=[os.environ["PEER_AGREEMENT_WHEELS"]]
            if "PEER_AGREEMENT_WHEELS" in os.environ
            else None,
            help=f"wheel files or a folder ({DOWNLOAD_HINT})",
        )
        command.add_argument("--configs", nargs="+", default=[Path("tests/configs")], type=Path)
        command.add_argument("--tp", default="1,2,4,8", type=_ints)
        command.add_argument("--spec", default="0,2,7" if name == "grid" else "0,2", type=_ints)
        command.add_argument("--json", type=Path, help="write every case here as JSON")
        if name != "peers":
            command.add_argument("--repo", required=True, type=Path, help="decode_ring checkout")
        if name in ("states", "reservations", "grid"):
            command.add_argument(
                "--transformers-configs",
                action="store_true",
                help="also every FAMILIES model_type of --repo from transformers' own "
                "AutoConfig.for_model(model_type).to_dict()",
            )
        command.add_argument(
            "--transformers",
            nargs="+",
            default=os.environ.get("PEER_AGREEMENT_TRANSFORMERS", "").split(os.pathsep)
            if os.environ.get("PEER_AGREEMENT_TRANSFORMERS")
            else None,
            help="interpreters with the transformers each server pins installed: the servers "
            "then read every config through their own config classes (config_classes.py)",
        )
    add_releases_parser(sub)
    add_sglang_releases_parser(sub)
    return parser


def use_classes(arguments: argparse.Namespace, wheels: Any) -> None:
    """With ``--transformers``, read configs through the servers' own config classes."""
    if arguments.transformers:
        files = dict(zip(("vllm", "sglang"), find_wheels(arguments.wheels), strict=True))
        roots = {"vllm": wheels.vllm, "sglang": wheels.sglang}
        snapshots = Snapshots(arguments.transformers, roots, files)
        ACTIVE[:] = [snapshots]
        pins = ", ".join(
            f"{server} transformers {version} (wheel: {snapshots.requirements[server]})"
            for server, version in snapshots.versions().items()
        )
        print(f"config classes: {pins}")


def peer_states(
    wheels: Any, configs: Sequence[Path], tps: Sequence[int], specs: Sequence[int]
) -> dict[tuple[str, str, int, int], PeerState]:
    """Every (config file, layout, tp, spec) -> the peer's state."""
    loaded = {path: json.loads(path.read_text(encoding="utf-8")) for path in configs}
    out: dict[tuple[str, str, int, int], PeerState] = {}
    with VllmStates(wheels) as vllm:
        for path, mapping in loaded.items():
            for tp in tps:
                for spec in specs:
                    out[(str(path), "vllm", tp, spec)] = vllm.state(mapping, tp=tp, spec=spec)
    with SglangStates(wheels) as sglang:
        for path, mapping in loaded.items():
            for tp in tps:
                for spec in specs:
                    out[(str(path), "sglang", tp, spec)] = sglang.state(mapping, tp=tp, spec=spec)
    return out


def config_files(arguments: argparse.Namespace) -> list[Path]:
    """The ``--configs`` fixtures (every ``--configs`` folder), and with
    ``--transformers-configs`` transformers' own ``to_dict()`` of each family of ``--repo``
    (generated into a temporary folder): under each ``--transformers`` interpreter where those
    are given (the versions the servers pin), else under the installed transformers."""
    configs = sorted(
        path
        for folder in arguments.configs
        for path in ([folder] if folder.is_file() else folder.glob("*.json"))
    )
    if not arguments.transformers_configs:
        return configs
    out = Path(tempfile.mkdtemp(prefix="hf-configs-"))
    if not arguments.transformers:
        generated, skipped = generate(arguments.repo, out)
        configs += generated
        print(f"transformers configs: {len(generated)}; no config class for: {skipped}")
        return configs
    for python in arguments.transformers:
        generated, skipped = generate_pinned(python, arguments.repo, out)
        configs += generated
        print(f"transformers configs ({python}): {len(generated)}; no config class for: {skipped}")
    return configs


def command_states(arguments: argparse.Namespace) -> int:
    wheels = open_wheels(arguments.wheels)
    use_classes(arguments, wheels)
    configs = config_files(arguments)
    peers = peer_states(wheels, configs, arguments.tp, arguments.spec)
    keys = list(peers)
    jobs = [
        {
            "kind": "state",
            "config": str(Path(path).resolve()),
            "tp": tp,
            "spec": spec,
            "layout": layout,
        }
        for path, layout, tp, spec in keys
    ]
    ours = run_repo(arguments.repo, jobs)
    functions, with_attention = Tally(), Tally()
    notes: dict[str, set[str]] = defaultdict(set)
    unmodelled: list[str] = []
    not_modelled: list[str] = []
    for key, answer in zip(keys, ours, strict=True):
        path, layout, tp, spec = key
        peer = peers[key]
        case = f"{Path(path).name} tp={tp} spec={spec} layout={layout}"
        family = f"{peer.family} [{layout}]"
        if str(answer.get("refusal", "")).startswith("NotModelledError"):
            not_modelled.append(f"{case}: {answer['refusal'][:160]}")
            continue
        gap = [note for note in peer.notes if note.startswith(("not modelled", "oracle gap"))]
        if gap:
            unmodelled.append(f"{case}: {gap[0]}")
            continue
        functions.add(family, case, state_differences(peer, answer, attention=False))
        with_attention.add(family, case, state_differences(peer, answer, attention=True))
        for note in peer.notes:
            notes[family].add(note)
    print(f"peers: {wheels.names[0]}, {wheels.names[1]}; decode_ring: {arguments.repo}")
    print("\n".join(functions.lines("state functions (shapes, dtypes, bytes, layers, refusals):")))
    print(
        "\n".join(with_attention.lines("with vLLM's attention-head TP check counted as a refusal:"))
    )
    if functions.disagreements:
        print("disagreements (state functions):")
        for line in functions.disagreements:
            print(f"  {line}")
    extra = sorted(set(with_attention.disagreements) - set(functions.disagreements))
    if extra:
        print("disagreements added by the attention-head check:")
        for line in extra:
            print(f"  {line}")
    if notes:
        print("peer notes (the layer that allocates decides):")
        for family in sorted(notes):
            for note in sorted(notes[family]):
                print(f"  {family}: {note}")
    if unmodelled:
        print(f"not compared ({len(unmodelled)}: the oracle could not run the peer's code here):")
        for line in unmodelled[:20]:
            print(f"  {line}")
    report_not_modelled(not_modelled)
    if arguments.json:
        arguments.json.write_text(
            json.dumps(
                [
                    {"case": list(key), "peer": peers[key].as_dict(), "decode_ring": answer}
                    for key, answer in zip(keys, ours, strict=True)
                ],
                indent=1,
            ),
            encoding="utf-8",
        )
    print(
        f"SUMMARY states: {functions.agreed} of {functions.compared} agree; with the "
        f"attention-head TP checks: {with_attention.agreed} of {with_attention.compared}; "
        f"not modelled by decode_ring: {len(not_modelled)}"
    )
    return 0


def report_not_modelled(cases: list[str]) -> None:
    """The cases decode_ring refuses as not modelled (``NotModelledError``), counted apart."""
    if cases:
        print(f"not modelled by decode_ring ({len(cases)}, counted apart):")
        for line in cases[:10]:
            print(f"  {line}")


GIB = 1 << 30
# Budgets per rank: vLLM's --kv-cache-memory-bytes, SGLang's post-weights "rest".
VLLM_BUDGETS = (None, 20 * GIB, 60 * GIB)
SGLANG_BUDGETS = (20 * GIB, 60 * GIB)
# (--context-length, --max-total-tokens): the config's own context; a short context, so the
# estimate from the KV pool's tokens reaches its ceiling (and exceeds the 2048 of configs
# without a length field); and a cap on the KV pool's tokens.
SGLANG_LIMITS = ((None, None), (4096, None), (None, 100_000))


def reservation_cases(
    configs: Sequence[Path], tps: Sequence[int], specs: Sequence[int]
) -> list[dict[str, Any]]:
    """Every (server, config, flags) case: tp x spec x prefix caching (vLLM
    --enable-prefix-caching, SGLang radix cache on/off) x budget (x SGLang's context)."""
    cases: list[dict[str, Any]] = []
    for path, tp, spec, prefix in itertools.product(configs, tps, specs, (True, False)):
        config = str(path.resolve())
        for budget in VLLM_BUDGETS:
            arguments = {
                "tensor_parallel_size": tp,
                "num_speculative_tokens": spec,
                "enable_prefix_caching": prefix,
                "kv_cache_memory_bytes": budget,
            }
            cases.append({"server": "vllm", "config": config, "arguments": arguments})
        for available, (context, tokens) in itertools.product(SGLANG_BUDGETS, SGLANG_LIMITS):
            arguments = {
                "tp_size": tp,
                "speculative_num_draft_tokens": spec,
                "disable_radix_cache": not prefix,
                "available_memory": available,
                "context_length": context,
                "max_total_tokens": tokens,
            }
            cases.append({"server": "sglang", "config": config, "arguments": arguments})
    return cases


# The grid (issue 27): every cache-dtype flag over its modelled values, one at a time, and
# SGLang's radix-cache strategies; one budget each.
GRID_BUDGET = 40 * GIB
VLLM_DTYPE_FLAGS = ("mamba_cache_dtype", "mamba_ssm_cache_dtype")
MAMBA_DTYPES = ("float32", "float16", "bfloat16")
SGLANG_STRATEGIES = ("no_buffer", "extra_buffer", "extra_buffer_lazy")
SGLANG_FLAGS: tuple[dict[str, Any], ...] = (
    *({"mamba_ssm_dtype": dtype} for dtype in ("float32", "bfloat16", "float16")),
    *({"mamba_radix_cache_strategy": strategy} for strategy in SGLANG_STRATEGIES),
    # --disable-overlap-schedule, alone and beside each strategy named.
    *(
        {"disable_overlap_schedule": True, "mamba_radix_cache_strategy": strategy}
        for strategy in ("auto", *SGLANG_STRATEGIES)
    ),
)


def grid_cases(
    configs: Sequence[Path], tps: Sequence[int], specs: Sequence[int]
) -> list[dict[str, Any]]:
    """Issue 27's grid: every config at each tp and speculative count, with each server's
    defaults and then each cache-dtype flag (and SGLang's strategy) set alone."""
    cases: list[dict[str, Any]] = []
    for path, tp, spec in itertools.product(configs, tps, specs):
        config = str(path.resolve())
        base = {"tensor_parallel_size": tp, "num_speculative_tokens": spec}
        flags: list[dict[str, Any]] = [{}]
        flags += [{flag: dtype} for flag in VLLM_DTYPE_FLAGS for dtype in MAMBA_DTYPES]
        for extra in flags:
            arguments = {**base, "kv_cache_memory_bytes": GRID_BUDGET, **extra}
            cases.append({"server": "vllm", "config": config, "arguments": arguments})
        base = {"tp_size": tp, "speculative_num_draft_tokens": spec}
        for extra in [{}, *SGLANG_FLAGS]:
            arguments = {**base, "available_memory": GRID_BUDGET, **extra}
            cases.append({"server": "sglang", "config": config, "arguments": arguments})
    return cases


def run_reservations(arguments: argparse.Namespace) -> int:
    """The ``reservations`` command (and ``grid``): the peers' reservation code against
    ``decode_ring.servers`` of ``--repo``."""
    from peer_agreement.compare import reservation_differences
    from peer_agreement.reservations import (
        SGLANG_FIELDS,
        VLLM_FIELDS,
        SglangReservations,
        VllmReservations,
    )

    wheels = open_wheels(arguments.wheels)
    use_classes(arguments, wheels)
    configs = config_files(arguments)
    make = grid_cases if arguments.command == "grid" else reservation_cases
    cases = make(configs, arguments.tp, arguments.spec)
    loaded = {str(p.resolve()): json.loads(p.read_text(encoding="utf-8")) for p in configs}
    peers: list[dict[str, Any]] = []
    with VllmReservations(wheels) as vllm:
        for case in cases:
            if case["server"] == "vllm":
                peers.append(vllm.reservation(loaded[case["config"]], **case["arguments"]))
            else:
                peers.append({})
    # One SglangStates per --mamba-ssm-dtype (SGLang's environment): their cases together.
    order = sorted(
        (index for index, case in enumerate(cases) if case["server"] == "sglang"),
        key=lambda index: str(cases[index]["arguments"].get("mamba_ssm_dtype")),
    )
    with SglangReservations(wheels) as sglang:
        for index in order:
            case = cases[index]
            peers[index] = sglang.reservation(loaded[case["config"]], **case["arguments"])
    ours = run_repo(arguments.repo, [{"kind": "reservation", **case} for case in cases])
    tally = Tally()
    gaps: list[str] = []
    not_modelled: list[str] = []
    for case, peer, answer in zip(cases, peers, ours, strict=True):
        if str(answer.get("refusal", "")).startswith("NotModelledError"):
            not_modelled.append(f"{Path(case['config']).name} {case['arguments']}")
            continue
        if "oracle_gap" in peer:
            gaps.append(f"{Path(case['config']).name} {case['arguments']}: {peer['oracle_gap']}")
            continue
        fields = VLLM_FIELDS if case["server"] == "vllm" else SGLANG_FIELDS
        family = f"{family_of(loaded[case['config']])} [{case['server']}]"
        flags = " ".join(f"{key}={value}" for key, value in case["arguments"].items())
        tally.add(
            family,
            f"{Path(case['config']).name} {flags}",
            reservation_differences(peer, answer, fields),
        )
    print(f"peers: {wheels.names[0]}, {wheels.names[1]}; decode_ring: {arguments.repo}")
    print("\n".join(tally.lines("reservations (issue 18's fields):")))
    if tally.disagreements:
        print("disagreements:")
        for line in tally.disagreements:
            print(f"  {line}")
    if arguments.json:
        arguments.json.write_text(
            json.dumps(
                [
                    {"case": case, "peer": peer, "decode_ring": answer}
                    for case, peer, answer in zip(cases, peers, ours, strict=True)
                ],
                indent=1,
                default=str,
            ),
            encoding="utf-8",
        )
    if gaps:
        print(f"not compared ({len(gaps)}: the oracle could not run the peer's code here):")
        for line in gaps[:20]:
            print(f"  {line}")
    report_not_modelled(not_modelled)
    print(
        f"SUMMARY {arguments.command}: {tally.agreed} of {tally.compared} agree; not modelled by "
        f"decode_ring: {len(not_modelled)}; not compared: {len(gaps)}"
    )
    return 0


def command_peers(arguments: argparse.Namespace) -> int:
    wheels = open_wheels(arguments.wheels)
    use_classes(arguments, wheels)
    configs = sorted(
        path
        for folder in arguments.configs
        for path in ([folder] if folder.is_file() else folder.glob("*.json"))
    )
    peers = peer_states(wheels, configs, arguments.tp, arguments.spec)
    rows = [{"case": list(key), **state.as_dict()} for key, state in peers.items()]
    text = json.dumps(rows, indent=1)
    if arguments.json:
        arguments.json.write_text(text, encoding="utf-8")
    else:
        print(text)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    arguments = _parser().parse_args(argv)
    if arguments.command == "releases":
        return command_releases(arguments)
    if arguments.command == "sglang-releases":
        return command_sglang_releases(arguments)
    if not arguments.wheels:
        print(f"peer_agreement: give --wheels ({DOWNLOAD_HINT})", file=sys.stderr)
        return 2
    if arguments.command == "states":
        return command_states(arguments)
    if arguments.command == "peers":
        return command_peers(arguments)
    if arguments.command == "budget":
        from peer_agreement.budget import compare

        for line in compare(open_wheels(arguments.wheels), arguments.repo.resolve()):
            print(line)
        return 0
    return run_reservations(arguments)


if __name__ == "__main__":
    sys.exit(main())
