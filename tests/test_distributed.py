"""``decode_ring.distributed``: one depth for every rank, over gloo on 127.0.0.1.

Each rank is its own process: the published depth is per process, as on a
real tensor-parallel deployment. Every group is made with a 60 s timeout, so
a fault case that ends within a few seconds shows that no rank waited for
the group's timeout. Each fault case prints how long the ranks took to raise
(through pytest's capture, so CI logs show it). Skipped, saying so, where
torch is absent; CI installs torch so that these run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch", reason="torch not installed: pip install 'decode_ring[torch]'")

GiB = 2**30
GROUP_TIMEOUT_S = 60
# Bounds a whole launch: torch imports, init, the calls; a hung rank fails
# the test instead of the run.
LAUNCH_BOUND_S = 90.0

# One rank: joins the group, then runs its plan, a list of steps:
#   {"pin": n}                   publish n, as an operator's pinned depth would
#   {"fit": free}                fit the ring to `free` bytes, agree on the fit
#   {"agree": value, "timeout": t}
#                                agree on `value`; t is seconds, {"seconds": s}
#                                for a timedelta, or absent
#   {"exit_after": s, "code": c} sleep s seconds, then exit at once with code c
#   {"all_reduce": 1}            a plain collective: is the group still usable?
# It prints one JSON list with an outcome per agree, fit or all_reduce step.
# After an exchange fault it exits at once, as the README tells a server to:
# tearing down a group with a collective in flight blocks until its timeout.
RANK = textwrap.dedent("""
    import datetime, json, os, sys, time
    import torch
    import torch.distributed as dist
    import decode_ring
    from decode_ring.distributed import DecodeRingAgreementError, agree_decode_ring_slots

    rank, world, store, plan = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank,
                            world_size=world, timeout=datetime.timedelta(seconds=60))

    def agree(slots, timeout):
        start = time.monotonic()
        try:
            outcome = {"agreed": agree_decode_ring_slots(slots, timeout=timeout)}
        except DecodeRingAgreementError as error:
            cause = error.__cause__
            outcome = {"error": str(error),
                       "cause": None if cause is None else type(cause).__name__}
        outcome["seconds"] = time.monotonic() - start
        outcome["published"] = decode_ring.published_decode_ring_slots()
        return outcome

    outcomes, faulted = [], False
    for step in json.loads(plan):
        if "pin" in step:
            decode_ring.set_decode_ring_slots(step["pin"])
        elif "fit" in step:
            from decode_ring.preflight import (
                PreLoadFreeMemory, fit_ring, requested_slots, slot_bytes)
            explicit = decode_ring.published_decode_ring_slots() is not None
            fit = fit_ring(requested_slots(48, False), slot_bytes(32, 158_859_264),
                           PreLoadFreeMemory(7039 * 2**20, int(step["fit"])),
                           explicit=explicit)
            outcomes.append({"fitted": fit.slots, **agree(fit.slots, None)})
        elif "agree" in step:
            timeout = step.get("timeout")
            if isinstance(timeout, dict):
                timeout = datetime.timedelta(seconds=timeout["seconds"])
            outcomes.append(agree(step["agree"], timeout))
            faulted = "all_gather" in outcomes[-1].get("error", "")
        elif "exit_after" in step:
            time.sleep(step["exit_after"])
            os._exit(step["code"])
        elif "all_reduce" in step:
            total = torch.ones(1)
            dist.all_reduce(total)
            outcomes.append({"all_reduce": int(total.item())})
        if faulted:
            break
    print(json.dumps(outcomes), flush=True)
    if faulted:
        os._exit(0)
    dist.destroy_process_group()
""")


class Ranks:
    """Rank processes of one group; every one still alive is killed at the end."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.processes: list[subprocess.Popen[str]] = []
        self.started = 0.0

    def launch(self, plans: list[list[dict[str, Any]]]) -> None:
        script = self.tmp_path / "rank.py"
        script.write_text(RANK)
        env = {key: value for key, value in os.environ.items() if not key.startswith("METRALE_")}
        env.update(GLOO_SOCKET_IFNAME="lo", MASTER_ADDR="127.0.0.1")
        self.started = time.monotonic()
        self.processes = [
            subprocess.Popen(
                [
                    sys.executable,
                    str(script),
                    str(rank),
                    str(len(plans)),
                    str(self.tmp_path / "store"),
                    json.dumps(plan),
                ],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for rank, plan in enumerate(plans)
        ]

    def outcomes(self, rank: int) -> list[dict[str, Any]]:
        """The outcomes rank ``rank`` printed; it must have exited with 0."""
        process = self.processes[rank]
        left = LAUNCH_BOUND_S - (time.monotonic() - self.started)
        out, err = process.communicate(timeout=max(left, 1.0))
        assert process.returncode == 0, err
        outcomes: list[dict[str, Any]] = json.loads(out.strip().splitlines()[-1])
        return outcomes

    def returncode(self, rank: int) -> int:
        left = LAUNCH_BOUND_S - (time.monotonic() - self.started)
        return self.processes[rank].wait(timeout=max(left, 1.0))

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def kill(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()
            process.communicate()


@pytest.fixture
def ranks(tmp_path: Path) -> Iterator[Ranks]:
    group = Ranks(tmp_path)
    yield group
    group.kill()


def say(capsys: pytest.CaptureFixture[str], line: str) -> None:
    """Prints ``line`` past pytest's capture, so that CI logs show it."""
    with capsys.disabled():
        print(f"\n[decode_ring.distributed] {line}")


def run_ranks(tmp_path: Path, free: list[int], pinned: list[int | None]) -> list[dict[str, Any]]:
    group = Ranks(tmp_path)
    plans = [
        [*([] if pin is None else [{"pin": pin}]), {"fit": f}]
        for f, pin in zip(free, pinned, strict=True)
    ]
    try:
        group.launch(plans)
        return [group.outcomes(rank)[0] for rank in range(len(plans))]
    finally:
        group.kill()


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


# Invalid inputs. One group of 3 ranks runs every case in turn, each rank
# staying alive throughout, as a server that logs an error would: after each
# invalid input the exchange has completed, so the same group runs the next.
TOO_LONG = 10**60
# (name, each rank's steps, what the error must say)
INVALID_CALLS: list[tuple[str, list[list[dict[str, Any]]], list[str]]] = [
    (
        "slots -1 on rank 1",
        [[{"agree": 8}], [{"agree": -1}], [{"agree": 8}]],
        ["rank 1: slots -1 is negative"],
    ),
    (
        "slots 2**63 on rank 2",
        [[{"agree": 8}], [{"agree": 4}], [{"agree": 2**63}]],
        [f"rank 2: slots {2**63} does not fit the int64 the ranks exchange"],
    ),
    (
        "slots '8' on rank 0 and 10**60 on rank 2",
        [[{"agree": "8"}], [{"agree": 8}], [{"agree": TOO_LONG}]],
        [
            "rank 0: slots '8' is not an integer",
            # Cut short to the record's 48 bytes, saying how long it was.
            f"rank 2: slots {str(TOO_LONG)[:34]}... (61 chars) does not fit the int64",
        ],
    ),
    (
        "timeout -1 on rank 0",
        [[{"agree": 8, "timeout": -1}], [{"agree": 8, "timeout": 30}], [{"agree": 8}]],
        ["rank 0: timeout -1 is not a positive, finite number of seconds or a timedelta"],
    ),
    (
        "published depth 2**63 on rank 1",
        [[{"agree": 8}], [{"pin": 2**63}, {"agree": 8}], [{"agree": 8}]],
        [f"rank 1: published depth {2**63} does not fit the int64 the ranks exchange"],
    ),
]
# The offending rank raises the same error, chained from its local check
# where it has one.
CAUSES = {0: {1: "OverflowError"}, 2: {0: "TypeError", 2: "OverflowError"}}


@pytest.fixture(scope="module")
def invalid_calls(tmp_path_factory: pytest.TempPathFactory) -> list[list[dict[str, Any]]]:
    """Per rank, the outcome of each call in ``INVALID_CALLS``, then of a
    plain all_reduce over the same group."""
    plans: list[list[dict[str, Any]]] = [[] for _ in range(3)]
    for _, steps, _ in INVALID_CALLS:
        for plan, rank_steps in zip(plans, steps, strict=True):
            plan += rank_steps
    for plan in plans:
        plan.append({"all_reduce": 1})
    group = Ranks(tmp_path_factory.mktemp("invalid"))
    try:
        group.launch(plans)
        return [group.outcomes(rank) for rank in range(3)]
    finally:
        group.kill()


@pytest.mark.parametrize("call", range(len(INVALID_CALLS)), ids=[c[0] for c in INVALID_CALLS])
def test_an_invalid_input_makes_every_rank_raise_the_same_error_at_once(
    invalid_calls: list[list[dict[str, Any]]], call: int, capsys: pytest.CaptureFixture[str]
) -> None:
    name, _, wanted = INVALID_CALLS[call]
    outcomes = [rank_outcomes[call] for rank_outcomes in invalid_calls]
    errors = {outcome.get("error") for outcome in outcomes}
    assert len(errors) == 1, outcomes
    (error,) = errors
    assert error is not None, outcomes
    assert error.startswith("invalid decode ring agreement input on "), error
    for fragment in wanted:
        assert fragment in error
    assert error.endswith("); every rank raises this error and none published a depth"), error
    seconds = [outcome["seconds"] for outcome in outcomes]
    say(
        capsys,
        f"invalid input ({name}): ranks raised after "
        + ", ".join(f"{s:.3f}" for s in seconds)
        + f" s (group timeout {GROUP_TIMEOUT_S} s)",
    )
    assert max(seconds) < 10, seconds
    causes = CAUSES.get(call, {})
    assert [outcome["cause"] for outcome in outcomes] == [causes.get(r) for r in range(3)]
    # Nothing is published; only the depth rank 1 pinned beforehand stays.
    pinned = [2**63 if call == len(INVALID_CALLS) - 1 and r == 1 else None for r in range(3)]
    assert [outcome["published"] for outcome in outcomes] == pinned


def test_the_group_stays_usable_after_invalid_inputs(
    invalid_calls: list[list[dict[str, Any]]],
) -> None:
    assert [rank_outcomes[-1] for rank_outcomes in invalid_calls] == [{"all_reduce": 3}] * 3


def test_a_rank_that_never_calls_makes_the_others_raise_at_the_deadline(
    ranks: Ranks, capsys: pytest.CaptureFixture[str]
) -> None:
    ranks.launch(
        [
            [{"agree": 8, "timeout": 2.0}],
            [{"agree": 4, "timeout": {"seconds": 2}}],
            [{"exit_after": 30, "code": 0}],
        ]
    )
    outcomes = [ranks.outcomes(rank)[0] for rank in (0, 1)]
    assert ranks.processes[2].poll() is None, "rank 2 was meant to stay alive"
    for rank, outcome in enumerate(outcomes):
        error = outcome.get("error", "")
        assert error.startswith(
            "decode ring agreement all_gather: the ranks did not all arrive within the 2 s "
            f"timeout (rank {rank} of a group of 3, waited "
        ), outcome
        assert "usually a rank failed before this call or never reached it" in error
        assert "not safe to reuse" in error
        assert outcome["cause"] == "RuntimeError"
        assert outcome["published"] is None
    seconds = [outcome["seconds"] for outcome in outcomes]
    say(
        capsys,
        "rank that never calls, timeout 2 s: ranks 0, 1 raised after "
        + ", ".join(f"{s:.3f}" for s in seconds)
        + f" s (group timeout {GROUP_TIMEOUT_S} s)",
    )
    assert all(1.9 < s < 6 for s in seconds), seconds


def test_a_rank_that_exits_mid_way_makes_the_others_raise_naming_the_exchange(
    ranks: Ranks, capsys: pytest.CaptureFixture[str]
) -> None:
    # Rank 2 exits a second after the group forms, while ranks 0 and 1 wait
    # in the exchange: rank 0 with no deadline, rank 1 with a far one.
    ranks.launch(
        [
            [{"agree": 8}],
            [{"agree": 4, "timeout": 30}],
            [{"exit_after": 1, "code": 1}],
        ]
    )
    outcomes = [ranks.outcomes(rank)[0] for rank in (0, 1)]
    assert ranks.returncode(2) == 1
    for rank, outcome in enumerate(outcomes):
        error = outcome.get("error", "")
        assert error.startswith(
            f"decode ring agreement all_gather failed on rank {rank} of a group of 3 after "
        ), outcome
        assert "usually a peer exited or lost its connection (backend: " in error
        assert "not safe to reuse" in error
        assert outcome["cause"] == "RuntimeError"
    seconds = [outcome["seconds"] for outcome in outcomes]
    say(
        capsys,
        "rank that exits 1 s into the exchange: ranks 0, 1 raised after "
        + ", ".join(f"{s:.3f}" for s in seconds)
        + f" s (group timeout {GROUP_TIMEOUT_S} s)",
    )
    assert max(seconds) < 10, seconds


class BrokenRepr:
    def __repr__(self) -> str:
        raise ValueError("no repr")


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (10**5000, "slots <int of 16610 bits> does not fit"),  # too long for str()
        (BrokenRepr(), "slots <BrokenRepr> is not an integer"),
        (8.0, "slots 8.0 is not an integer"),
    ],
    ids=["int-beyond-str", "broken-repr", "float"],
)
def test_an_offending_value_travels_in_the_record_as_short_text(value: object, says: str) -> None:
    from decode_ring.distributed import _invalid_inputs, _own_record

    record, _ = _own_record(value, None, None)
    assert len(record) == 10
    assert all(-(2**63) <= word < 2**63 for word in record)
    assert f"(rank 0: {says}" in (_invalid_inputs([record]) or "")


@pytest.mark.parametrize("timeout", [0, -1.0, float("nan"), float("inf"), True, "3", 1e300])
def test_a_timeout_that_no_wait_can_take_is_invalid(timeout: object) -> None:
    from datetime import timedelta

    from decode_ring.distributed import _deadline

    assert _deadline(timeout) is None
    assert _deadline(timedelta(seconds=1.5)) == timedelta(milliseconds=1500)
    assert _deadline(0.0001) == timedelta(milliseconds=1)
