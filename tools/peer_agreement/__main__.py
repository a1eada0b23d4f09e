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

Wheels: ``--wheels`` (files or a folder; default ``$PEER_AGREEMENT_WHEELS``). Get them with
``pip download --no-deps -d WHEELS vllm==0.33.0 sglang==0.5.23``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as ``python tools/peer_agreement``
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "peer_agreement"

from peer_agreement.compare import Tally, run_repo, state_differences
from peer_agreement.peer_state import PeerState
from peer_agreement.states import SglangStates, VllmStates
from peer_agreement.wheels import DOWNLOAD_HINT, open_wheels

LAYOUTS = ("vllm", "sglang")


def _ints(text: str) -> list[int]:
    return [int(item) for item in text.split(",") if item.strip()]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="peer_agreement", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("states", "reservations", "peers"):
        command = sub.add_parser(name)
        command.add_argument(
            "--wheels",
            nargs="+",
            default=[os.environ["PEER_AGREEMENT_WHEELS"]]
            if "PEER_AGREEMENT_WHEELS" in os.environ
            else None,
            help=f"wheel files or a folder ({DOWNLOAD_HINT})",
        )
        command.add_argument("--configs", default="tests/configs", type=Path)
        command.add_argument("--tp", default="1,2,4,8", type=_ints)
        command.add_argument("--spec", default="0,2", type=_ints)
        command.add_argument("--json", type=Path, help="write every case here as JSON")
        if name != "peers":
            command.add_argument("--repo", required=True, type=Path, help="decode_ring checkout")
    return parser


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


def command_states(arguments: argparse.Namespace) -> int:
    wheels = open_wheels(arguments.wheels)
    configs = sorted(arguments.configs.glob("*.json"))
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
    for key, answer in zip(keys, ours, strict=True):
        path, layout, tp, spec = key
        peer = peers[key]
        case = f"{Path(path).name} tp={tp} spec={spec} layout={layout}"
        family = f"{peer.family} [{layout}]"
        if peer.notes and "not modelled" in " ".join(peer.notes):
            unmodelled.append(case)
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
        print(f"not compared (architecture not modelled by the oracle): {len(unmodelled)}")
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
    print(f"SUMMARY states: {functions.agreed} of {functions.compared} agree")
    return 0


def command_peers(arguments: argparse.Namespace) -> int:
    wheels = open_wheels(arguments.wheels)
    configs = sorted(arguments.configs.glob("*.json"))
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
    if not arguments.wheels:
        print(f"peer_agreement: give --wheels ({DOWNLOAD_HINT})", file=sys.stderr)
        return 2
    if arguments.command == "states":
        return command_states(arguments)
    if arguments.command == "peers":
        return command_peers(arguments)
    from peer_agreement.reservations import command_reservations

    return command_reservations(arguments)


if __name__ == "__main__":
    sys.exit(main())
