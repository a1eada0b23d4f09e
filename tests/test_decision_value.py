"""Constants and the ``DecodeRingDecision`` value."""

from __future__ import annotations

import ctypes
import itertools
import pickle
from types import SimpleNamespace

import pytest

from decode_ring import _core_py

from .support import whole


def test_constants_match_the_reference(api: SimpleNamespace) -> None:
    assert api.DECODE_ROLLBACK_RING_SLOTS == 8
    assert api.DECODE_RING_FIT_LADDER == (8, 4, 2, 1, 0)
    assert type(api.DECODE_RING_FIT_LADDER) is tuple


def test_usize_max_is_the_platforms_size_t_maximum(api: SimpleNamespace) -> None:
    size_t_max = 2 ** (8 * ctypes.sizeof(ctypes.c_size_t)) - 1
    assert size_t_max == api.USIZE_MAX
    assert type(api.USIZE_MAX) is int


def test_the_rules_are_named_as_the_readme_lists_them(api: SimpleNamespace) -> None:
    assert api.DECISION_RULES == (
        "no SSM layers",
        "published",
        "METRALE_SSM_DECODE_RING=1",
        "METRALE_SSM_DECODE_RING=0",
        "speculative decode",
        "watchdogs disabled",
        "default",
    )


def test_the_ladder_descends_strictly_from_the_full_depth_to_zero(
    api: SimpleNamespace,
) -> None:
    ladder = api.DECODE_RING_FIT_LADDER
    assert ladder[0] == api.DECODE_ROLLBACK_RING_SLOTS
    assert ladder[-1] == 0
    assert all(deeper > shallower for deeper, shallower in itertools.pairwise(ladder))


def test_decision_fields_and_defaults(api: SimpleNamespace) -> None:
    decision = api.DecodeRingDecision(4)
    assert decision.slots == 4
    assert decision.skip_reason is None
    skipped = api.DecodeRingDecision(0, "watchdogs disabled")
    assert (skipped.slots, skipped.skip_reason) == (0, "watchdogs disabled")
    assert api.DecodeRingDecision(slots=2, skip_reason=None).slots == 2


def test_decision_is_equal_and_hashed_by_value(api: SimpleNamespace) -> None:
    make = api.DecodeRingDecision
    assert make(8) == make(8)
    assert make(0, "x") == make(0, "x")
    assert make(0) != make(0, "x")
    assert make(1) != make(2)
    assert hash(make(0, "x")) == hash(make(0, "x"))
    assert len({make(8), make(8), make(0), make(0, "x")}) == 3
    assert make(8) != (8, None)
    assert make(8) != 8


def test_decision_repr_is_readable_and_round_trips(api: SimpleNamespace) -> None:
    decision = api.DecodeRingDecision(0, "speculative decode active")
    assert repr(decision) == (
        "DecodeRingDecision(slots=0, skip_reason='speculative decode active')"
    )
    namespace = {"DecodeRingDecision": api.DecodeRingDecision}
    assert eval(repr(decision), namespace) == decision


def test_decision_is_immutable(api: SimpleNamespace) -> None:
    decision = api.DecodeRingDecision(4)
    with pytest.raises(AttributeError):
        decision.slots = 5
    with pytest.raises(AttributeError):
        decision.skip_reason = "x"
    with pytest.raises(AttributeError):
        decision.other = 1
    with pytest.raises(AttributeError):
        del decision.slots
    assert (decision.slots, decision.skip_reason) == (4, None)


def test_decision_pickles_and_matches(api: SimpleNamespace) -> None:
    decision = api.DecodeRingDecision(0, "watchdogs disabled")
    assert pickle.loads(pickle.dumps(decision)) == decision
    match decision:
        case api.DecodeRingDecision(0, reason):
            assert reason == "watchdogs disabled"
        case _:
            pytest.fail("positional match failed")


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ((-1,), OverflowError),
        ((2**64,), OverflowError),
        ((1.0,), TypeError),
        (("8",), TypeError),
        ((None,), TypeError),
        ((8, b"reason"), TypeError),
        ((8, 3), TypeError),
    ],
)
def test_decision_rejects_bad_fields(
    api: SimpleNamespace, args: tuple[object, ...], error: type[Exception]
) -> None:
    with pytest.raises(error):
        api.DecodeRingDecision(*args)


# --- the twin's own guards (the compiled core's __cinit__ runs once by construction) ----------


def test_the_twin_refuses_a_second_init() -> None:
    decision = _core_py.DecodeRingDecision(1)
    with pytest.raises(AttributeError, match=whole("DecodeRingDecision is immutable")):
        decision.__init__(2)
    assert decision == _core_py.DecodeRingDecision(1)


def test_the_twin_refuses_deleting_a_field_by_name() -> None:
    decision = _core_py.DecodeRingDecision(1)
    with pytest.raises(AttributeError, match=whole("DecodeRingDecision is immutable")):
        del decision.slots
    with pytest.raises(AttributeError, match=whole("DecodeRingDecision is immutable")):
        decision.slots = 2
