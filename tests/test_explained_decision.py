"""``explain_decode_rollback_ring_slots``: the decision with the rule that made it, the
published depth and the environment it read, as ``decode-ring decide`` shows them.

The environment is read live, as the decision reads it; the published depth is the process's,
stood in for here (a test may not publish).
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from decode_ring import CORE, _facade, _selector
from decode_ring._facade import (
    NOT_VALID_UNICODE,
    ExplainedDecision,
    explain_decode_rollback_ring_slots,
)

# Ints where a bool goes: the result must hold a bool all the same.
ZERO: Any = 0
ONE: Any = 1


def explained(
    decision: Any, rule: str, layers: int, speculative: bool, published: int | None, **env: Any
) -> ExplainedDecision:
    environment = {
        "METRALE_SSM_DECODE_RING": env.get("ring"),
        "METRALE_DISABLE_WATCHDOGS": env.get("watchdogs"),
        "METRALE_SSM_RESERVE_RING_FULL": env.get("full"),
    }
    return ExplainedDecision(decision, rule, layers, speculative, published, environment, CORE)


def test_explain_with_nothing_set(ring_environment: pytest.MonkeyPatch) -> None:
    assert explain_decode_rollback_ring_slots(48, ZERO).use_speculative is False
    assert explain_decode_rollback_ring_slots(0, ONE).use_speculative is True
    assert explain_decode_rollback_ring_slots(48, ZERO) == explained(
        _selector.DecodeRingDecision(8), "default", 48, False, None
    )
    assert explain_decode_rollback_ring_slots(0, ONE) == explained(
        _selector.DecodeRingDecision(0), "no SSM layers", 0, True, None
    )


def test_explain_reads_each_variable(ring_environment: pytest.MonkeyPatch) -> None:
    ring_environment.setenv("METRALE_DISABLE_WATCHDOGS", " TRUE ")
    ring_environment.setenv("METRALE_SSM_RESERVE_RING_FULL", "")
    assert explain_decode_rollback_ring_slots(48, False) == explained(
        _selector.DecodeRingDecision(0, "watchdogs disabled"),
        "watchdogs disabled",
        48,
        False,
        None,
        watchdogs=" TRUE ",
        full="",
    )
    ring_environment.setenv("METRALE_SSM_DECODE_RING", "1")
    assert explain_decode_rollback_ring_slots(48, True) == explained(
        _selector.DecodeRingDecision(8),
        "METRALE_SSM_DECODE_RING=1",
        48,
        True,
        None,
        ring="1",
        watchdogs=" TRUE ",
        full="",
    )


def test_explain_shows_a_value_that_is_not_unicode(ring_environment: pytest.MonkeyPatch) -> None:
    if os.name != "posix":
        pytest.skip("only POSIX environments hold bytes")
    ring_environment.setenv("METRALE_SSM_DECODE_RING", "0\udcff")
    assert explain_decode_rollback_ring_slots(48, False).environment == {
        "METRALE_SSM_DECODE_RING": NOT_VALID_UNICODE,
        "METRALE_DISABLE_WATCHDOGS": None,
        "METRALE_SSM_RESERVE_RING_FULL": None,
    }
    assert explain_decode_rollback_ring_slots(48, False).rule == "default"


def test_explain_names_the_published_depth(ring_environment: pytest.MonkeyPatch) -> None:
    ring_environment.setattr(_facade, "published_decode_ring_slots", lambda: 3)
    ring_environment.setenv("METRALE_SSM_DECODE_RING", "0")
    assert explain_decode_rollback_ring_slots(48, True) == explained(
        _selector.DecodeRingDecision(3), "published", 48, True, 3, ring="0"
    )
