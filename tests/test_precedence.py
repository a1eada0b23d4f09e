"""``decode_rollback_ring_slots_with``: the five rules, in the reference's order."""

from __future__ import annotations

import itertools
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


def reference_model(
    num_ssm_layers: int,
    speculative: bool,
    published: int | None,
    override: str | None,
    watchdogs: bool,
) -> tuple[int, str | None]:
    """The reference's match, transcribed as a table lookup would read it."""
    if num_ssm_layers == 0:
        return 0, None
    if published is not None:
        return published, None
    if override == "1":
        return 8, None
    if override == "0":
        return 0, None
    if speculative or watchdogs:
        return 0, SPECULATIVE if speculative else WATCHDOGS
    return 8, None


def test_every_combination_matches_the_reference_model(api: SimpleNamespace) -> None:
    for case in itertools.product(
        (0, 1, 48),
        (False, True),
        (None, 0, 1, 4, 8, 9, 2**64 - 1),
        (None, "1", "0", "", "2", "auto"),
        (False, True),
    ):
        decision = api.decode_rollback_ring_slots_with(*case)
        assert (decision.slots, decision.skip_reason) == reference_model(*case), case


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
