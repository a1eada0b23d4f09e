"""Rank agreement's timeouts: every timeout that validation accepts works, and every one it
refuses is refused on every rank, in the same exchange, with the same error, within the others'
deadline.

Issue 28, item 11: a rank passing ``timeout=2**2000`` or ``timedelta.max`` raised a bare
``OverflowError`` and never joined the exchange, so its peers waited out their whole timeout
and said "the ranks did not all arrive"; ``timeout=1e10``, which validation accepted, made
every rank fail at once ("waited 0.0 s"): gloo's wait ends at once, or never, past about
4e12 ms. The README's bound: a timeout is more than 0 and at most 7 days (604,800 s).

Ranks are forked by the launcher of ``tests/test_distributed.py`` (``tests/rank_launcher.py``),
each a fresh process, joined in a gloo group with a 60 s timeout of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from .test_distributed import Launcher, Ranks

SEVEN_DAYS = 7 * 24 * 3600  # the README's largest timeout, in seconds
INVALID = "is not a positive, finite number of seconds or a timedelta of at most 7 days"
TIMEDELTA_MAX = {"days": 999_999_999, "seconds": 86_399, "microseconds": 999_999}


@pytest.fixture(scope="module")
def launcher(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launcher]:
    process = Launcher(tmp_path_factory.mktemp("launcher"))
    yield process
    process.close()


@pytest.fixture
def ranks(launcher: Launcher, tmp_path: Path) -> Iterator[Ranks]:
    group = Ranks(launcher, tmp_path)
    yield group
    group.kill()


def outcomes_of(ranks: Ranks, plans: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    ranks.launch(plans)
    return [ranks.outcomes(rank)[0] for rank in range(len(plans))]


@pytest.mark.parametrize(
    "timeout",
    [SEVEN_DAYS, float(SEVEN_DAYS), {"days": 7}, 30, 5.5, {"milliseconds": 5500}],
    ids=["7-days-int", "7-days-float", "7-days-timedelta", "30", "5.5", "5500-ms"],
)
def test_every_accepted_timeout_waits_for_a_late_rank(ranks: Ranks, timeout: object) -> None:
    # Rank 1 arrives a second late: rank 0 waits for it, whatever its accepted timeout.
    plans: list[list[dict[str, Any]]] = [
        [{"agree": 8, "timeout": timeout}],
        [{"sleep": 1.0}, {"agree": 4, "timeout": timeout}],
    ]
    outcomes = outcomes_of(ranks, plans)
    assert [outcome.get("agreed") for outcome in outcomes] == [4, 4], outcomes
    assert [outcome["published"] for outcome in outcomes] == [4, 4]


@pytest.mark.parametrize("timeout", [1e-300, {"microseconds": 1}], ids=["1e-300", "1-us"])
def test_a_timeout_under_a_millisecond_waits_a_millisecond(ranks: Ranks, timeout: object) -> None:
    # Rank 0 arrives a second late with the tiny timeout; rank 1 waits for it without one. The
    # exchange then takes about a millisecond: rank 0 agrees, or says that its millisecond ran
    # out, never that a peer failed.
    plans: list[list[dict[str, Any]]] = [
        [{"sleep": 1.0}, {"agree": 8, "timeout": timeout}],
        [{"agree": 4}],
    ]
    late, waiting = outcomes_of(ranks, plans)
    assert waiting["agreed"] == 4
    assert late.get("agreed") == 4 or late["error"].startswith(
        "decode ring agreement all_gather: the ranks did not all arrive within the 0.001 s "
        "timeout (rank 0 of a group of 2, waited "
    ), late


@pytest.mark.parametrize(
    ("timeout", "shown"),
    [
        # Cut short to the record's 48 bytes, saying how long the text was.
        (2**2000, str(2**2000)[:33] + "... (603 chars)"),
        (TIMEDELTA_MAX, "datetime.timedelta(days=999999999,... (70 chars)"),
        (1e10, "10000000000.0"),
        (SEVEN_DAYS + 1, str(SEVEN_DAYS + 1)),
        ({"days": 7, "milliseconds": 1}, None),
        (float("inf"), "inf"),
        (0, "0"),
    ],
    ids=["2**2000", "timedelta.max", "1e10", "7-days-and-1-s", "7-days-and-1-ms", "inf", "0"],
)
def test_a_refused_timeout_is_refused_on_every_rank_in_the_same_exchange(
    ranks: Ranks, timeout: object, shown: str | None
) -> None:
    # Rank 0 passes the timeout; rank 1 a valid 30 s, rank 2 none: all raise the same error,
    # at once, and the offending rank joined the exchange (no one waited for a deadline).
    outcomes = outcomes_of(
        ranks,
        [[{"agree": 8, "timeout": timeout}], [{"agree": 4, "timeout": 30}], [{"agree": 2}]],
    )
    errors = {outcome.get("error") for outcome in outcomes}
    assert len(errors) == 1, outcomes
    (error,) = errors
    assert error is not None and error.startswith(
        "invalid decode ring agreement input on 1 of 3 ranks (rank 0: timeout "
    ), error
    assert INVALID in error
    if shown is not None:
        assert f"rank 0: timeout {shown} {INVALID}" in error
    assert max(outcome["seconds"] for outcome in outcomes) < 10, outcomes
    assert [outcome["published"] for outcome in outcomes] == [None, None, None]


def test_the_deadline_of_an_accepted_timeout_is_whole_milliseconds_rounded_up() -> None:
    from decode_ring.distributed import MAX_TIMEOUT, _deadline

    assert timedelta(days=7) == MAX_TIMEOUT
    assert _deadline(SEVEN_DAYS) == timedelta(days=7)
    assert _deadline(timedelta(days=7)) == timedelta(days=7)
    assert _deadline(timedelta(microseconds=1)) == timedelta(milliseconds=1)
    assert _deadline(1e-300) == timedelta(milliseconds=1)
    assert _deadline(0.0015) == timedelta(milliseconds=2)
    for refused in (2**2000, timedelta.max, 1e10, SEVEN_DAYS + 0.001, -(2**2000), timedelta(0)):
        assert _deadline(refused) is None
