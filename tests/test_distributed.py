"""``decode_ring.distributed``: one depth for every rank, over gloo on 127.0.0.1.

Each rank is its own process: the published depth is per process, as on a
real tensor-parallel deployment. The ranks are forked from one launcher
process (``tests/rank_launcher.py``, started once for the module) that has
imported torch but run no torch op and published no depth, so every rank is
a fresh process for the once-cell without paying for ``import torch``.
Every group is made with a 60 s timeout, so a fault case that ends within a
few seconds shows that no rank waited for the group's timeout. Each fault
case prints how long the ranks took to raise (through pytest's capture, so
CI logs show it). Skipped, saying so, where torch is absent; CI installs
torch so that these run.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import IO, Any

import pytest

from .support import TORCH_MISSING

pytest.importorskip("torch", reason=TORCH_MISSING)
if not hasattr(os, "fork"):
    pytest.skip("the rank launcher forks: no os.fork here", allow_module_level=True)

GiB = 2**30
GROUP_TIMEOUT_S = 60
# Bounds a whole launch: init, the calls; a hung rank fails the test instead
# of the run. The launcher's own start (its import of torch) has the same bound.
LAUNCH_BOUND_S = 90.0
# Bounds the wait for killed ranks, and for the launcher to exit.
KILL_BOUND_S = 10.0
LAUNCHER = Path(__file__).with_name("rank_launcher.py")


class Launcher:
    """The process that forks every rank (``tests/rank_launcher.py``), and
    the exit status of each rank it has reaped."""

    def __init__(self, directory: Path) -> None:
        env = {key: value for key, value in os.environ.items() if not key.startswith("METRALE_")}
        # No torch op runs in the launcher, so it starts no thread, which
        # keeps forking it safe (it checks); OMP_NUM_THREADS=1 for safety.
        env.update(GLOO_SOCKET_IFNAME="lo", MASTER_ADDR="127.0.0.1", OMP_NUM_THREADS="1")
        self.stderr = directory / "launcher.stderr"
        with self.stderr.open("wb") as stderr:
            self.process = subprocess.Popen(
                [sys.executable, str(LAUNCHER)],
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
            )
        self.buffer = b""
        self.replies: list[dict[str, Any]] = []
        self.exits: dict[int, int] = {}
        self.started = time.monotonic()
        self.ready = False

    def _pipes(self) -> tuple[IO[bytes], IO[bytes]]:
        assert self.process.stdin is not None and self.process.stdout is not None
        return self.process.stdin, self.process.stdout

    def _died(self, doing: str) -> str:
        return (
            f"the rank launcher exited (code {self.process.poll()}) while {doing}; "
            f"its stderr:\n{self.stderr.read_text(errors='replace')}"
        )

    def _read_until(self, done: Callable[[], bool], deadline: float, doing: str) -> None:
        fd = self._pipes()[1].fileno()
        while not done():
            left = deadline - time.monotonic()
            if left <= 0:
                pytest.fail(f"timed out {doing}")
            readable, _, _ = select.select([fd], [], [], left)
            if not readable:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                pytest.fail(self._died(doing))
            self.buffer += chunk
            *lines, self.buffer = self.buffer.split(b"\n")
            for line in lines:
                message = json.loads(line)
                if "exited" in message:
                    self.exits[message["exited"]] = message["returncode"]
                else:
                    self.replies.append(message)

    def _ask(self, request: dict[str, Any], deadline: float, doing: str) -> dict[str, Any]:
        if not self.ready:
            self._read_until(
                lambda: bool(self.replies),
                self.started + LAUNCH_BOUND_S,
                "waiting for the rank launcher to import torch",
            )
            ready = self.replies.pop(0)
            assert ready.get("threads") == 1, ready
            self.ready = True
        stdin = self._pipes()[0]
        try:
            stdin.write(json.dumps(request).encode() + b"\n")
            stdin.flush()
        except BrokenPipeError:
            pytest.fail(self._died(doing))
        self._read_until(lambda: bool(self.replies), deadline, doing)
        return self.replies.pop(0)

    def launch(self, directory: Path, plans: list[list[dict[str, Any]]]) -> list[int]:
        """Forks one rank per plan; their pids."""
        reply = self._ask(
            {"launch": {"dir": str(directory), "plans": plans}},
            time.monotonic() + LAUNCH_BOUND_S,
            "launching the ranks",
        )
        assert "pids" in reply, reply
        pids: list[int] = reply["pids"]
        return pids

    def returncode(self, pid: int, deadline: float) -> int:
        self._read_until(lambda: pid in self.exits, deadline, f"waiting for rank process {pid}")
        return self.exits[pid]

    def alive(self, pid: int) -> bool:
        reply = self._ask({"poll": pid}, time.monotonic() + KILL_BOUND_S, "polling a rank")
        alive: bool = reply["alive"]
        return alive

    def kill(self, pids: list[int]) -> None:
        """Kills those of ``pids`` still alive and waits until they exit."""
        left = [pid for pid in pids if pid not in self.exits]
        if left:
            deadline = time.monotonic() + KILL_BOUND_S
            reply = self._ask({"kill": left}, deadline, "killing ranks")
            assert reply == {"killed": left}, reply
            self._read_until(
                lambda: all(pid in self.exits for pid in left), deadline, f"reaping {left}"
            )

    def close(self) -> None:
        """Ends the launcher; it kills any rank still alive."""
        stdin, stdout = self._pipes()
        stdin.close()
        try:
            self.process.wait(timeout=KILL_BOUND_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        stdout.close()


@pytest.fixture(scope="module")
def launcher(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launcher]:
    process = Launcher(tmp_path_factory.mktemp("launcher"))
    yield process
    process.close()


class Ranks:
    """Rank processes of one group; every one still alive is killed at the end."""

    def __init__(self, launcher: Launcher, tmp_path: Path) -> None:
        self.launcher = launcher
        self.tmp_path = tmp_path
        self.pids: list[int] = []
        self.started = 0.0

    def launch(self, plans: list[list[dict[str, Any]]]) -> None:
        self.started = time.monotonic()
        self.pids = self.launcher.launch(self.tmp_path, plans)

    def outcomes(self, rank: int) -> list[dict[str, Any]]:
        """The outcomes rank ``rank`` printed; it must have exited with 0."""
        returncode = self.returncode(rank)
        err = (self.tmp_path / f"rank{rank}.stderr").read_text(errors="replace")
        assert returncode == 0, err
        out = (self.tmp_path / f"rank{rank}.stdout").read_text()
        outcomes: list[dict[str, Any]] = json.loads(out.strip().splitlines()[-1])
        return outcomes

    def returncode(self, rank: int) -> int:
        deadline = max(self.started + LAUNCH_BOUND_S, time.monotonic() + 1.0)
        return self.launcher.returncode(self.pids[rank], deadline)

    def alive(self, rank: int) -> bool:
        return self.launcher.alive(self.pids[rank])

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def kill(self) -> None:
        self.launcher.kill(self.pids)


@pytest.fixture
def ranks(launcher: Launcher, tmp_path: Path) -> Iterator[Ranks]:
    group = Ranks(launcher, tmp_path)
    yield group
    group.kill()


def say(capsys: pytest.CaptureFixture[str], line: str) -> None:
    """Prints ``line`` past pytest's capture, so that CI logs show it."""
    with capsys.disabled():
        print(f"\n[decode_ring.distributed] {line}")


def run_ranks(
    launcher: Launcher, tmp_path: Path, free: list[int], pinned: list[int | None]
) -> list[dict[str, Any]]:
    group = Ranks(launcher, tmp_path)
    plans = [
        [*([] if pin is None else [{"pin": pin}]), {"fit": f}]
        for f, pin in zip(free, pinned, strict=True)
    ]
    try:
        group.launch(plans)
        return [group.outcomes(rank)[0] for rank in range(len(plans))]
    finally:
        group.kill()


def test_ranks_that_fit_different_depths_all_end_with_the_smallest(
    launcher: Launcher, tmp_path: Path
) -> None:
    outcomes = run_ranks(
        launcher, tmp_path, [64 * GiB, 30 * GiB, int(14.1 * GiB)], [None, None, None]
    )
    assert [outcome["fitted"] for outcome in outcomes] == [8, 4, 1]
    assert [outcome["agreed"] for outcome in outcomes] == [1, 1, 1]
    assert [outcome["published"] for outcome in outcomes] == [1, 1, 1]


def test_a_depth_pinned_alike_on_every_rank_stands(launcher: Launcher, tmp_path: Path) -> None:
    outcomes = run_ranks(launcher, tmp_path, [64 * GiB, int(14.1 * GiB)], [8, 8])
    assert [(o["fitted"], o["agreed"], o["published"]) for o in outcomes] == [(8, 8, 8)] * 2


@pytest.mark.parametrize("pinned", [[8, 4], [8, None]])
def test_differing_pinned_depths_raise_on_every_rank(
    launcher: Launcher, tmp_path: Path, pinned: list[int | None]
) -> None:
    outcomes = run_ranks(launcher, tmp_path, [64 * GiB, 64 * GiB], pinned)
    rank_1 = "none" if pinned[1] is None else pinned[1]
    for outcome in outcomes:
        assert outcome.get("error") == (
            f"ranks published different ring depths (rank 0: 8, rank 1: {rank_1}); pin the "
            "same --ssm-decode-ring-slots on every rank, or none"
        ), outcome


def test_an_uninitialised_process_group_is_a_clear_error() -> None:
    from decode_ring.distributed import agree_decode_ring_slots

    with pytest.raises(RuntimeError) as raised:
        agree_decode_ring_slots(8)
    assert str(raised.value) == (
        "torch.distributed is not initialised: call "
        "torch.distributed.init_process_group() on every rank first"
    )


def test_without_torch_distributed_the_error_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from decode_ring.distributed import agree_decode_ring_slots

    # None in sys.modules makes the import raise ImportError, as a missing module does.
    monkeypatch.setitem(sys.modules, "torch.distributed", None)
    with pytest.raises(ImportError) as raised:
        agree_decode_ring_slots(8)
    assert str(raised.value) == (
        "agree_decode_ring_slots needs torch: pip install 'decode_ring[torch]'"
    )
    assert isinstance(raised.value.__cause__, ImportError)


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
            # Both offenders, in rank order; the long value is cut short to the record's
            # 48 bytes, saying how long it was.
            "(rank 0: slots '8' is not an integer; "
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
def invalid_calls(
    launcher: Launcher, tmp_path_factory: pytest.TempPathFactory
) -> list[list[dict[str, Any]]]:
    """Per rank, the outcome of each call in ``INVALID_CALLS``, then of a
    plain all_reduce over the same group."""
    plans: list[list[dict[str, Any]]] = [[] for _ in range(3)]
    for _, steps, _ in INVALID_CALLS:
        for plan, rank_steps in zip(plans, steps, strict=True):
            plan += rank_steps
    for plan in plans:
        plan.append({"all_reduce": 1})
    group = Ranks(launcher, tmp_path_factory.mktemp("invalid"))
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
    assert ranks.alive(2), "rank 2 was meant to stay alive"
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


@pytest.fixture
def one_rank(tmp_path: Path) -> Iterator[None]:
    """A group of one rank, this process, for calls that publish nothing (an invalid input);
    taken down after the test."""
    import torch.distributed as dist

    dist.init_process_group(
        "gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1
    )
    try:
        yield
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (10**5000, "slots <int of 16610 bits> does not fit"),  # too long for str()
        (BrokenRepr(), "slots <BrokenRepr> is not an integer"),
        (8.0, "slots 8.0 is not an integer"),
        # ascii() of 46 letters is 48 characters: the whole record, not cut.
        ("x" * 46, f"slots '{'x' * 46}' is not an integer"),
        # One more is cut to 34 characters and the 14 of "... (49 chars)".
        ("x" * 47, f"slots '{'x' * 33}... (49 chars) is not an integer"),
    ],
    ids=["int-beyond-str", "broken-repr", "float", "text-of-48", "text-of-49"],
)
@pytest.mark.usefixtures("one_rank")
def test_an_offending_value_travels_in_the_record_as_short_text(value: object, says: str) -> None:
    # The value is said in the record every rank gathers (int64 words, which the exchange
    # carries), short whatever its size or its repr.
    from decode_ring.distributed import DecodeRingAgreementError, agree_decode_ring_slots

    with pytest.raises(DecodeRingAgreementError) as raised:
        agree_decode_ring_slots(value)  # type: ignore[arg-type]
    assert f"(rank 0: {says}" in str(raised.value)


@pytest.mark.parametrize(
    "timeout",
    [
        *(0, -1.0, float("nan"), float("inf"), True, "3", 1e300),
        # Just past 7 days, as an int, a float and a timedelta; a timedelta of 0 or less.
        *(604_801, 604_800.001, timedelta(days=7, microseconds=1)),
        *(timedelta(0), timedelta(seconds=-1)),
    ],
)
@pytest.mark.usefixtures("one_rank")
def test_a_timeout_that_no_wait_can_take_is_invalid(timeout: object) -> None:
    from decode_ring.distributed import DecodeRingAgreementError, agree_decode_ring_slots

    with pytest.raises(DecodeRingAgreementError) as raised:
        agree_decode_ring_slots(8, timeout=timeout)  # type: ignore[arg-type]
    assert "(rank 0: timeout " in str(raised.value)
    assert "is not a positive, finite number of seconds or a timedelta" in str(raised.value)


def test_a_timedelta_and_a_timeout_under_a_millisecond_are_waits(ranks: Ranks) -> None:
    # A tiny timeout still waits (it is rounded up to whole milliseconds): one rank agrees.
    ranks.launch([[{"agree": 8, "timeout": {"seconds": 1.5}}, {"agree": 8, "timeout": 0.0001}]])
    outcomes = ranks.outcomes(0)
    assert [(outcome.get("agreed"), outcome["published"]) for outcome in outcomes] == [(8, 8)] * 2


@pytest.mark.parametrize(
    ("slots", "error", "says"),
    [
        (-1, OverflowError, "slots must be in 0..=18446744073709551615, got -1"),
        ("8", TypeError, "slots must be an integer, not str"),
    ],
)
@pytest.mark.usefixtures("one_rank")
def test_the_offending_rank_chains_the_error_of_its_own_check(
    slots: object, error: type[Exception], says: str
) -> None:
    from decode_ring.distributed import DecodeRingAgreementError, agree_decode_ring_slots

    with pytest.raises(DecodeRingAgreementError) as raised:
        agree_decode_ring_slots(slots)  # type: ignore[arg-type]
    assert type(raised.value.__cause__) is error
    assert str(raised.value.__cause__) == says


@pytest.mark.usefixtures("one_rank")
def test_a_process_outside_the_group_is_refused_before_any_exchange(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # torch.distributed.get_rank(group) is -1 in a process that is not a member of group.
    import torch.distributed as dist

    from decode_ring.distributed import agree_decode_ring_slots

    elsewhere = object()
    get_rank = dist.get_rank
    monkeypatch.setattr(
        dist, "get_rank", lambda group=None: -1 if group is elsewhere else get_rank(group)
    )
    with pytest.raises(ValueError) as raised:
        agree_decode_ring_slots(8, group=elsewhere)
    assert str(raised.value) == "this process is not a member of the group it asks to agree over"


def test_the_largest_int64_is_a_depth_and_a_pinned_depth(ranks: Ranks) -> None:
    # 2**63 - 1 travels in the record: agreed, then standing as the depth this rank published.
    ranks.launch([[{"agree": 2**63 - 1}, {"agree": 8}]])
    outcomes = ranks.outcomes(0)
    assert [(o.get("agreed"), o["published"]) for o in outcomes] == [(2**63 - 1, 2**63 - 1)] * 2


# A backend stand-in, in this process's group of one rank: what the ranks see when the backend
# fails at once, when its wait gives up without raising, or when a record comes from a rank
# that words it differently (another version of decode_ring).
NOT_SAFE = "The group is not safe to reuse: destroy it or exit the process"


@pytest.mark.parametrize(
    ("backend_says", "named"),
    [
        (
            "Connection closed by peer [127.0.0.1]:29500\nat pair.cc:589",
            "Connection closed by peer [127.0.0.1]:29500",
        ),
        ("  ", "RuntimeError"),
        ("x" * 200, "x" * 200),
        ("x" * 201, "x" * 197 + "..."),
    ],
    ids=["first-line", "empty", "200-chars", "201-chars"],
)
@pytest.mark.parametrize("timeout", [None, 30])
@pytest.mark.usefixtures("one_rank")
def test_a_backend_that_fails_at_once_is_named_in_one_line(
    monkeypatch: pytest.MonkeyPatch, backend_says: str, named: str, timeout: int | None
) -> None:
    import torch.distributed as dist

    from decode_ring.distributed import DecodeRingAgreementError, agree_decode_ring_slots

    failure = RuntimeError(backend_says)

    def all_gather(*args: object, **kwargs: object) -> None:
        raise failure

    monkeypatch.setattr(dist, "all_gather", all_gather)
    with pytest.raises(DecodeRingAgreementError) as raised:
        agree_decode_ring_slots(8, timeout=timeout)
    assert str(raised.value) == (
        "decode ring agreement all_gather failed on rank 0 of a group of 1 after 0.0 s; "
        f"usually a peer exited or lost its connection (backend: {named}). {NOT_SAFE}"
    )
    assert raised.value.__cause__ is failure


class WaitGivesUp:
    """A pending all_gather whose wait returns False instead of raising."""

    def __init__(self) -> None:
        self.waits: list[object] = []

    def wait(self, timeout: object = None) -> bool:
        self.waits.append(timeout)
        return False

    def is_completed(self) -> bool:
        return False


@pytest.mark.parametrize(
    ("timeout", "seconds"),
    [
        # Rounded up to whole milliseconds.
        (timedelta(microseconds=100), "0.001"),
        (0.0001, "0.001"),
        (2.5, "2.5"),
        (1, "1"),
        (timedelta(seconds=2), "2"),
        # 7 days is the longest timeout, in each form.
        (604_800, "604800"),
        (604_800.0, "604800"),
        (timedelta(days=7), "604800"),
    ],
)
@pytest.mark.usefixtures("one_rank")
def test_a_wait_that_returns_false_is_the_timeout(
    monkeypatch: pytest.MonkeyPatch, timeout: float | timedelta, seconds: str
) -> None:
    import torch.distributed as dist

    from decode_ring.distributed import DecodeRingAgreementError, agree_decode_ring_slots

    work = WaitGivesUp()
    monkeypatch.setattr(dist, "all_gather", lambda *args, **kwargs: work)
    with pytest.raises(DecodeRingAgreementError) as raised:
        agree_decode_ring_slots(8, timeout=timeout)
    assert str(raised.value) == (
        "decode ring agreement all_gather: the ranks did not all arrive within the "
        f"{seconds} s timeout (rank 0 of a group of 1, waited 0.0 s); usually a rank failed "
        f"before this call or never reached it. {NOT_SAFE}"
    )
    assert work.waits == [timedelta(seconds=float(seconds))]
    cause = raised.value.__cause__
    assert type(cause) is RuntimeError
    assert str(cause) == "the wait returned before the exchange completed"


def text_words(text: bytes) -> list[int]:
    """``text`` as the record carries it: ASCII, 8 bytes a little-endian int64 word, 6 words."""
    padded = text.ljust(48, b"\0")
    return [int.from_bytes(padded[i : i + 8], "little", signed=True) for i in range(0, 48, 8)]


@pytest.mark.parametrize(
    ("record", "says"),
    [
        # A kind this version does not know, from a rank running another one.
        ([9, -1, -1, 3, *text_words(b"abc")], "rank 0: input abc is invalid (kind 9)"),
        # An empty text is said as nothing, whatever the words hold.
        ([1, -1, -1, 0, *text_words(b"zz")], "rank 0: slots  is not an integer"),
        # A byte past ASCII is replaced, never an error of its own.
        ([2, -1, -1, 2, *text_words(b"\xff7")], "rank 0: slots \ufffd7 is negative"),
    ],
    ids=["unknown-kind", "empty-text", "not-ascii"],
)
@pytest.mark.usefixtures("one_rank")
def test_a_gathered_record_is_worded_from_its_words_alone(
    monkeypatch: pytest.MonkeyPatch, record: list[int], says: str
) -> None:
    import torch
    import torch.distributed as dist

    from decode_ring.distributed import DecodeRingAgreementError, agree_decode_ring_slots

    def all_gather(everyone: list[Any], mine: Any, **kwargs: object) -> None:
        everyone[0].copy_(torch.tensor(record, dtype=torch.int64))

    monkeypatch.setattr(dist, "all_gather", all_gather)
    with pytest.raises(DecodeRingAgreementError) as raised:
        agree_decode_ring_slots(8)
    assert str(raised.value) == (
        f"invalid decode ring agreement input on 1 of 1 ranks ({says}); every rank raises "
        "this error and none published a depth"
    )


class WaitRaisesLate:
    """A pending all_gather whose wait raises only after its deadline, by which time the
    exchange has completed."""

    def wait(self, timeout: timedelta | None = None) -> bool:
        assert timeout is not None
        time.sleep(timeout.total_seconds() + 0.01)
        raise RuntimeError("Timed out waiting for the all_gather")

    def is_completed(self) -> bool:
        return True


@pytest.mark.usefixtures("one_rank")
def test_a_wait_that_fails_past_the_deadline_is_the_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import torch.distributed as dist

    from decode_ring.distributed import DecodeRingAgreementError, agree_decode_ring_slots

    monkeypatch.setattr(dist, "all_gather", lambda *args, **kwargs: WaitRaisesLate())
    with pytest.raises(DecodeRingAgreementError) as raised:
        # A depth of 5 like any other: only word 0 of a record says its kind.
        agree_decode_ring_slots(5, timeout=0.0001)
    assert str(raised.value) == (
        "decode ring agreement all_gather: the ranks did not all arrive within the "
        "0.001 s timeout (rank 0 of a group of 1, waited 0.0 s); usually a rank failed "
        f"before this call or never reached it. {NOT_SAFE}"
    )
    assert str(raised.value.__cause__) == "Timed out waiting for the all_gather"


# A world of 3 whose ranks 0 and 1 form a tensor-parallel pair, as when a deployment agrees over
# its tensor-parallel group only. Run as 3 fresh interpreters: the launcher forks ranks of the
# default group only. Each rank prints one JSON list of outcomes.
SUBGROUP_RANK = """
import datetime, json, os, sys
import torch.distributed as dist
import decode_ring
from decode_ring.distributed import agree_decode_ring_slots

rank, store = int(sys.argv[1]), sys.argv[2]
dist.init_process_group(
    "gloo", init_method=f"file://{store}", rank=rank, world_size=3,
    timeout=datetime.timedelta(seconds=60),
)
pair = dist.new_group([0, 1])
outcomes = []
calls = [({}, [8, 4, 8][rank]), ({"timeout": 30}, 8)] if rank < 2 else [({}, 8)]
for kwargs, slots in calls:
    try:
        outcomes.append({"agreed": agree_decode_ring_slots(slots, group=pair, **kwargs)})
    except Exception as error:
        outcomes.append({"error": f"{type(error).__name__}: {error}"})
    outcomes[-1]["published"] = decode_ring.published_decode_ring_slots()
print(json.dumps(outcomes), flush=True)
os._exit(0)
"""


def test_a_subgroup_agrees_over_its_own_members_only(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("METRALE_")}
    env.update(GLOO_SOCKET_IFNAME="lo", MASTER_ADDR="127.0.0.1", OMP_NUM_THREADS="1")
    store = str(tmp_path / "store")
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", SUBGROUP_RANK, str(rank), store],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for rank in range(3)
    ]
    outputs = []
    try:
        for process in processes:
            out, err = process.communicate(timeout=LAUNCH_BOUND_S)
            assert process.returncode == 0, err
            outputs.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for process in processes:
            process.kill()
            process.wait()
    # The pair agrees on its smaller depth, then that depth stands as published on both.
    assert outputs[:2] == [[{"agreed": 4, "published": 4}] * 2] * 2
    # Rank 2 is outside the pair: refused before any exchange, publishing nothing.
    assert outputs[2] == [
        {
            "error": "ValueError: this process is not a member of the group it asks to agree over",
            "published": None,
        }
    ]
