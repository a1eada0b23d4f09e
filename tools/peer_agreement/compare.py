"""Compare the peers' answers (``PeerState``, reservation dicts) with a decode_ring checkout's.

``run_repo`` asks the checkout in a subprocess (``repo_side.py``); ``state_differences`` and
``reservation_differences`` say, precisely, where two answers differ (an empty list: agree);
``Tally`` counts per family and prints "N of M agree".
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .peer_state import PeerState

__all__ = ["Tally", "reservation_differences", "run_repo", "state_differences"]

REPO_SIDE = Path(__file__).with_name("repo_side.py")


def run_repo(repo: Path, jobs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The checkout at ``repo``'s answers to ``jobs``, in order (one subprocess for all). The
    pure-Python core is used, so an unbuilt checkout works."""
    payload = "".join(json.dumps(job) + "\n" for job in jobs)
    environment = {**os.environ, "DECODE_RING_NO_EXTENSIONS": "1"}
    done = subprocess.run(
        [sys.executable, str(REPO_SIDE), str(repo)],
        input=payload,
        capture_output=True,
        text=True,
        cwd=repo,
        env=environment,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"decode_ring at {repo} failed: {done.stderr.strip()[-2000:]}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def _tensor_text(item: Mapping[str, Any]) -> str:
    return f"{item['name']} {tuple(item['shape'])} {item['dtype']} {item['bytes']} B"


def _peer_groups(peer: PeerState) -> list[dict[str, Any]]:
    return [
        {
            "kind": group.kind,
            "layer_indices": list(group.layer_indices),
            "tensors": [
                {"name": t.name, "shape": list(t.shape), "dtype": t.dtype, "bytes": t.bytes}
                for t in group.tensors
            ],
        }
        for group in peer.groups
    ]


def _short(text: object, limit: int = 160) -> str:
    words = " ".join(str(text).split())
    return words if len(words) <= limit else words[: limit - 3] + "..."


def state_differences(peer: PeerState, ours: Mapping[str, Any], *, attention: bool) -> list[str]:
    """What differs between the peer's state and the checkout's. ``attention``: count vLLM's
    attention-head TP check as a refusal too."""
    peer_refusal = peer.refusal or (peer.attention_refusal if attention else None)
    our_refusal = ours.get("refusal")
    if peer_refusal or our_refusal:
        if peer_refusal and our_refusal:
            return []
        if peer_refusal:
            return [f"peer refuses ({_short(peer_refusal)}); decode_ring answers {_summary(ours)}"]
        return [f"decode_ring refuses ({_short(our_refusal)}); peer answers {_summary_peer(peer)}"]
    differences: list[str] = []
    peer_groups = _peer_groups(peer)
    our_groups = sorted(ours["groups"], key=lambda g: g["layer_indices"][:1])
    peer_layers = sum(len(g["layer_indices"]) for g in peer_groups)
    our_layers = sum(len(g["layer_indices"]) for g in our_groups)
    if peer_layers != our_layers:
        differences.append(f"recurrent layers: peer {peer_layers}, decode_ring {our_layers}")
    if len(peer_groups) != len(our_groups):
        differences.append(
            f"kinds of layer: peer {[g['kind'] for g in peer_groups]}, "
            f"decode_ring {[g['kind'] for g in our_groups]}"
        )
    for index, (theirs, mine) in enumerate(zip(peer_groups, our_groups, strict=False)):
        where = f"group {index} ({theirs['kind']})"
        if theirs["kind"] != mine["kind"]:
            differences.append(f"{where}: kind peer {theirs['kind']}, decode_ring {mine['kind']}")
        if theirs["layer_indices"] != mine["layer_indices"]:
            differences.append(
                f"{where}: layer indices peer {_indices(theirs['layer_indices'])}, "
                f"decode_ring {_indices(mine['layer_indices'])}"
            )
        compared_names = ours.get("api") == "groups"
        peer_tensors = [_tensor_key(t, compared_names) for t in theirs["tensors"]]
        our_tensors = [_tensor_key(t, compared_names) for t in mine["tensors"]]
        if peer_tensors != our_tensors:
            differences.append(
                f"{where}: tensors peer [{'; '.join(map(_tensor_text, theirs['tensors']))}], "
                f"decode_ring [{'; '.join(map(_tensor_text, mine['tensors']))}]"
            )
    if peer.per_sequence_bytes != ours.get("per_sequence_bytes"):
        differences.append(
            f"per-sequence bytes: peer {peer.per_sequence_bytes}, "
            f"decode_ring {ours.get('per_sequence_bytes')}"
        )
    return differences


def _tensor_key(item: Mapping[str, Any], with_name: bool) -> tuple[Any, ...]:
    key = (tuple(item["shape"]), item["dtype"], item["bytes"])
    return (item["name"], *key) if with_name else key


def _indices(indices: list[int]) -> str:
    text = ",".join(map(str, indices))
    return f"[{text}]" if len(text) <= 80 else f"[{len(indices)} layers: {text[:76]}...]"


def _summary(ours: Mapping[str, Any]) -> str:
    groups = ours.get("groups", [])
    layers = sum(len(g["layer_indices"]) for g in groups)
    return f"{layers} layers, {ours.get('per_sequence_bytes')} B/seq"


def _summary_peer(peer: PeerState) -> str:
    return f"{peer.recurrent_layers} layers, {peer.per_sequence_bytes} B/seq"


def reservation_differences(
    peer: Mapping[str, Any], ours: Mapping[str, Any], fields: Iterable[str]
) -> list[str]:
    """Fields of ``fields`` that differ between two reservation answers (both refusing:
    agree; one refusing: one difference)."""
    if "missing" in ours:
        return [str(ours["missing"])]
    peer_refusal, our_refusal = peer.get("refusal"), ours.get("refusal")
    if peer_refusal or our_refusal:
        if peer_refusal and our_refusal:
            return []
        return [f"refusal: peer {peer_refusal!s}, decode_ring {our_refusal!s}"]
    return [
        f"{name}: peer {peer.get(name)!r}, decode_ring {ours.get(name, '<absent>')!r}"
        for name in fields
        if not _same(peer.get(name), ours.get(name, "<absent>"))
    ]


def _same(left: object, right: object) -> bool:
    """Equal, or the same float to 12 significant digits (a ratio computed in another order)."""
    if isinstance(left, float) or isinstance(right, float):
        return (
            isinstance(left, int | float)
            and isinstance(right, int | float)
            and math.isclose(left, right, rel_tol=1e-12)
        )
    return left == right


@dataclass
class Tally:
    """Agreement counts per family, and the disagreements in full."""

    agree: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    total: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    disagreements: list[str] = field(default_factory=list)

    def add(self, family: str, case: str, differences: list[str]) -> None:
        self.total[family] += 1
        if differences:
            self.disagreements.append(f"{family} {case}: " + " | ".join(differences))
        else:
            self.agree[family] += 1

    @property
    def agreed(self) -> int:
        return sum(self.agree.values())

    @property
    def compared(self) -> int:
        return sum(self.total.values())

    def lines(self, title: str) -> list[str]:
        """The per-family table and the total."""
        out = [title]
        for family in sorted(self.total):
            out.append(f"  {family:<40} {self.agree[family]:>4} of {self.total[family]:<4} agree")
        out.append(f"  total: {self.agreed} of {self.compared} agree")
        return out
