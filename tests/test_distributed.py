"""``decode_ring.distributed``: one depth for every rank, over gloo on 127.0.0.1.

Each rank is its own process: the published depth is per process, as on a
real tensor-parallel deployment. Skipped, saying so, where torch is absent;
CI installs torch so that these run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch", reason="torch not installed: pip install 'decode_ring[torch]'")

GiB = 2**30
RANK = textwrap.dedent("""
    import datetime, json, sys
    import torch.distributed as dist
    import decode_ring
    from decode_ring.distributed import DecodeRingAgreementError, agree_decode_ring_slots
    from decode_ring.preflight import PreLoadFreeMemory, fit_ring, requested_slots, slot_bytes

    rank, world, store, free, pinned = sys.argv[1:6]
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=int(rank),
                            world_size=int(world), timeout=datetime.timedelta(seconds=60))
    if pinned != "none":
        decode_ring.set_decode_ring_slots(int(pinned))
    explicit = decode_ring.published_decode_ring_slots() is not None
    fit = fit_ring(requested_slots(48, False), slot_bytes(32, 158_859_264),
                   PreLoadFreeMemory(7039 * 2**20, int(free)), explicit=explicit)
    try:
        agreed = agree_decode_ring_slots(fit.slots)
        outcome = {"fitted": fit.slots, "agreed": agreed,
                   "published": decode_ring.published_decode_ring_slots()}
    except DecodeRingAgreementError as error:
        outcome = {"fitted": fit.slots, "error": str(error)}
    dist.destroy_process_group()
    print(json.dumps(outcome))
""")


def run_ranks(tmp_path: Path, free: list[int], pinned: list[int | None]) -> list[dict[str, Any]]:
    script = tmp_path / "rank.py"
    script.write_text(RANK)
    env = {key: value for key, value in os.environ.items() if not key.startswith("METRALE_")}
    env.update(GLOO_SOCKET_IFNAME="lo", MASTER_ADDR="127.0.0.1")
    store = tmp_path / "store"
    ranks = [
        subprocess.Popen(
            [
                sys.executable,
                str(script),
                str(rank),
                str(len(free)),
                str(store),
                str(free_bytes),
                "none" if pin is None else str(pin),
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for rank, (free_bytes, pin) in enumerate(zip(free, pinned, strict=True))
    ]
    outcomes = []
    for process in ranks:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        outcomes.append(json.loads(out.strip().splitlines()[-1]))
    return outcomes


def test_ranks_that_fit_different_depths_all_end_with_the_smallest(tmp_path: Path) -> None:
    outcomes = run_ranks(tmp_path, [64 * GiB, 30 * GiB, int(14.1 * GiB)], [None, None, None])
    assert [outcome["fitted"] for outcome in outcomes] == [8, 4, 1]
    assert [outcome["agreed"] for outcome in outcomes] == [1, 1, 1]
    assert [outcome["published"] for outcome in outcomes] == [1, 1, 1]


def test_a_depth_pinned_alike_on_every_rank_stands(tmp_path: Path) -> None:
    outcomes = run_ranks(tmp_path, [64 * GiB, int(14.1 * GiB)], [8, 8])
    assert [(o["fitted"], o["agreed"], o["published"]) for o in outcomes] == [(8, 8, 8)] * 2


@pytest.mark.parametrize("pinned", [[8, 4], [8, None]])
def test_differing_pinned_depths_raise_on_every_rank(
    tmp_path: Path, pinned: list[int | None]
) -> None:
    outcomes = run_ranks(tmp_path, [64 * GiB, 64 * GiB], pinned)
    for outcome in outcomes:
        assert "error" in outcome, outcome
        assert "rank 0: 8" in outcome["error"]
        assert f"rank 1: {'none' if pinned[1] is None else pinned[1]}" in outcome["error"]


def test_an_uninitialised_process_group_is_a_clear_error() -> None:
    from decode_ring.distributed import agree_decode_ring_slots

    with pytest.raises(RuntimeError, match="init_process_group"):
        agree_decode_ring_slots(8)
