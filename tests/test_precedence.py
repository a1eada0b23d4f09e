"""``decode_rollback_ring_slots_with``: the five rules, in the reference's order."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from types import SimpleNamespace

import numpy as np
import pytest

from .support import blocks_allocated_by

SPECULATIVE = "speculative decode active"
WATCHDOGS = "watchdogs disabled"


@pytest.mark.parametrize(
    ("num_ssm_layers", "speculative", "published", "override", "watchdogs", "slots", "reason"),
    [
        # 1. no SSM layers: 0, whatever else holds
        (0, False, None, None, False, 0, None),
        (0, True, 8, "1", True, 0, None),
        # 2. a published depth wins, also under both skips
        (48, False, 4, None, False, 4, None),
        (48, True, 2, None, True, 2, None),
        (48, True, 0, "1", True, 0, None),
        (48, False, 8, "0", False, 8, None),
        (1, False, 100, None, False, 100, None),
        # 3. the override "1" / "0"
        (48, True, None, "1", True, 8, None),
        (48, False, None, "0", False, 0, None),
        (48, True, None, "0", True, 0, None),
        # ... and nothing else counts as an override
        (48, False, None, " 1", False, 8, None),
        (48, True, None, "true", False, 0, SPECULATIVE),
        (48, False, None, "", True, 0, WATCHDOGS),
        (48, False, None, "01", False, 8, None),
        # 4. the implicit skips; speculative decode is named first
        (48, True, None, None, False, 0, SPECULATIVE),
        (48, False, None, None, True, 0, WATCHDOGS),
        (48, True, None, None, True, 0, SPECULATIVE),
        # 5. the default
        (48, False, None, None, False, 8, None),
        (1, False, None, "2", False, 8, None),
    ],
)
def test_rules_in_order(
    api: SimpleNamespace,
    num_ssm_layers: int,
    speculative: bool,
    published: int | None,
    override: str | None,
    watchdogs: bool,
    slots: int,
    reason: str | None,
) -> None:
    decision = api.decode_rollback_ring_slots_with(
        num_ssm_layers, speculative, published, override, watchdogs
    )
    assert type(decision) is api.DecodeRingDecision
    assert (decision.slots, decision.skip_reason) == (slots, reason)


# Each rule stated on its own, as the reference's doc comment words it, over
# every combination of the other inputs at their edges; the exhaustive check
# against the compiled reference itself is in test_properties.py. Values
# that are no exact "1" or "0" stand beside the overrides.
LAYERS = (1, 2, 48, 2**64 - 1)
PUBLISHED = (0, 1, 4, 8, 9, 2**64 - 1)
OVERRIDES = (None, "1", "0", "", " 1", "01", "2", "auto")
NOT_OVERRIDES = (None, "", " 1", "1 ", "01", "00", "2", "auto", "true")
FLAGS = (False, True)


def outcomes(
    api: SimpleNamespace, cases: Iterable[tuple[int, bool, int | None, str | None, bool]]
) -> set[tuple[int, str | None, str]]:
    """Every distinct (slots, skip_reason, rule) over ``cases``."""
    made = set()
    for case in cases:
        decision, rule = api.decode_rollback_ring_slots_with_rule(*case)
        made.add((decision.slots, decision.skip_reason, rule))
    return made


def test_rule_1_no_ssm_layers_gives_zero_whatever_else_holds(api: SimpleNamespace) -> None:
    cases = itertools.product((0,), FLAGS, (None, *PUBLISHED), OVERRIDES, FLAGS)
    assert outcomes(api, cases) == {(0, None, "no SSM layers")}


@pytest.mark.parametrize("published", PUBLISHED)
def test_rule_2_a_published_depth_wins_also_under_both_skips(
    api: SimpleNamespace, published: int
) -> None:
    cases = itertools.product(LAYERS, FLAGS, (published,), OVERRIDES, FLAGS)
    assert outcomes(api, cases) == {(published, None, "published")}


def test_rule_3_the_override_one_gives_the_full_depth(api: SimpleNamespace) -> None:
    cases = itertools.product(LAYERS, FLAGS, (None,), ("1",), FLAGS)
    assert outcomes(api, cases) == {(8, None, "METRALE_SSM_DECODE_RING=1")}


def test_rule_3_the_override_zero_gives_no_ring(api: SimpleNamespace) -> None:
    cases = itertools.product(LAYERS, FLAGS, (None,), ("0",), FLAGS)
    assert outcomes(api, cases) == {(0, None, "METRALE_SSM_DECODE_RING=0")}


def test_rule_4_speculative_decode_skips_the_ring_named_first(api: SimpleNamespace) -> None:
    cases = itertools.product(LAYERS, (True,), (None,), NOT_OVERRIDES, FLAGS)
    assert outcomes(api, cases) == {(0, SPECULATIVE, "speculative decode")}


def test_rule_4_disabled_watchdogs_skip_the_ring(api: SimpleNamespace) -> None:
    cases = itertools.product(LAYERS, (False,), (None,), NOT_OVERRIDES, (True,))
    assert outcomes(api, cases) == {(0, WATCHDOGS, "watchdogs disabled")}


def test_rule_5_otherwise_the_full_depth(api: SimpleNamespace) -> None:
    cases = itertools.product(LAYERS, (False,), (None,), NOT_OVERRIDES, (False,))
    assert outcomes(api, cases) == {(8, None, "default")}


def test_recurring_outcomes_are_shared_instances(api: SimpleNamespace) -> None:
    decide = api.decode_rollback_ring_slots_with
    assert decide(48, False, None, None, False) is decide(48, False, None, None, False)
    assert decide(0, False, None, None, False) is decide(48, False, None, "0", False)
    assert decide(48, True, None, None, False) is decide(48, True, None, None, True)
    assert decide(48, False, None, None, True) is decide(48, False, None, None, True)
    for published in range(9):
        assert decide(48, False, published, None, False) is decide(48, True, published, "1", True)


def test_the_hot_path_allocates_nothing(api: SimpleNamespace) -> None:
    decide = api.decode_rollback_ring_slots_with
    cases = [
        (48, False, None, None, False),
        (48, True, None, None, False),
        (48, False, None, None, True),
        (48, False, None, "1", False),
        (48, False, None, "0", False),
        (0, False, None, None, False),
        *[(48, False, published, None, False) for published in range(9)],
    ]
    for case in cases:
        decide(*case)
        assert blocks_allocated_by(decide, *case) == 0, case


def test_flags_take_truthiness(api: SimpleNamespace) -> None:
    decide = api.decode_rollback_ring_slots_with
    assert decide(48, 1, None, None, 0).skip_reason == SPECULATIVE
    assert decide(48, None, None, None, None).slots == 8
    assert decide(48, np.bool_(True), None, None, False).skip_reason == SPECULATIVE


def test_integer_like_arguments_are_accepted(api: SimpleNamespace) -> None:
    decision = api.decode_rollback_ring_slots_with(np.int64(48), False, np.uint8(3), None, False)
    assert decision.slots == 3


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ((-1, False, None, None, False), OverflowError),
        ((2**64, False, None, None, False), OverflowError),
        ((48.0, False, None, None, False), TypeError),
        (("48", False, None, None, False), TypeError),
        ((None, False, None, None, False), TypeError),
        ((48, False, -1, None, False), OverflowError),
        ((48, False, 2**64, None, False), OverflowError),
        ((48, False, 4.0, None, False), TypeError),
        ((48, False, "4", None, False), TypeError),
        ((48, False, None, 1, False), TypeError),
        ((48, False, None, b"1", False), TypeError),
        # bad input raises even where an earlier rule would have decided
        ((0, False, -1, None, False), OverflowError),
        ((0, False, None, 0, False), TypeError),
        ((48, False, 4, b"1", False), TypeError),
    ],
)
def test_bad_arguments_raise(
    api: SimpleNamespace, args: tuple[object, ...], error: type[Exception]
) -> None:
    with pytest.raises(error):
        api.decode_rollback_ring_slots_with(*args)
