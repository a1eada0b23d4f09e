"""Both cores raise the same exception, type and message, for the same call, whatever combination
of bad arguments; and the pure ``DecodeRingDecision`` is immutable and final, as the compiled one.

Issue 28, item 9: with several bad arguments at once the compiled core raised a
``RuntimeError`` (from a flag whose ``__bool__`` raises) where the pure one raised
``OverflowError`` or ``TypeError``: the compiled core converts its flags (``bint``) as the
call starts, before the body checks the rest. Item 10: the pure ``DecodeRingDecision`` could be
changed through ``object.__setattr__``, which changed a shared decision (every later default
decision returned 0 slots), and could be subclassed.

Each call goes to both cores with the same arguments (the right number of them: an arity
error's wording is Cython's or CPython's); the outcome, a value or an exception's type and
message, must be the same. Calls that would publish a depth are made only with arguments that
refuse to.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import pickle
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st


class BoolRaises:
    """A flag whose truth cannot be told."""

    def __bool__(self) -> bool:
        raise RuntimeError("hostile bool")


class IndexRaises:
    def __index__(self) -> int:
        raise ZeroDivisionError("hostile index")


class IndexReturnsFloat:
    def __index__(self) -> float:
        return 1.5


class StrSubclass(str):
    pass


HOSTILE = [
    0,
    1,
    8,
    9,
    -1,
    2**64 - 1,
    2**64,
    10**5000,
    -(10**5000),
    1.5,
    float("nan"),
    "x",
    "1",
    "0",
    "",
    StrSubclass("1"),
    b"1",
    None,
    True,
    False,
    np.int64(3),
    np.uint64(2**64 - 1),
    np.float64(1.0),
    np.array([1, 2]),
    BoolRaises(),
    IndexRaises(),
    IndexReturnsFloat(),
    object(),
    [1],
]
hostile = st.sampled_from(HOSTILE)
ENOUGH = settings(
    max_examples=400,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


def outcome(function: Callable[..., Any], *args: object) -> tuple[str, str]:
    """What the call did: ``("returned", repr)`` or the exception's type and message."""
    try:
        value = function(*args)
    except Exception as error:
        return type(error).__name__, str(error)
    return "returned", repr(value)


def agree(both: tuple[ModuleType, ModuleType], name: str, *args: object) -> None:
    compiled, pure = (getattr(core, name) for core in both)
    assert outcome(compiled, *args) == outcome(pure, *args), (name, args)


@ENOUGH
@given(args=st.tuples(hostile, hostile, hostile, hostile))
def test_the_fit_agrees(both_cores: tuple[ModuleType, ModuleType], args: tuple[Any, ...]) -> None:
    agree(both_cores, "fit_decode_ring_slots", *args)


@ENOUGH
@given(args=st.tuples(hostile, hostile, hostile, hostile, hostile))
@example(args=(-1, BoolRaises(), None, None, False))
@example(args=(0, False, -1, "1", BoolRaises()))
@example(args=(1.5, np.array([1, 2]), 2**64, 5, BoolRaises()))
def test_the_decision_agrees(
    both_cores: tuple[ModuleType, ModuleType], args: tuple[Any, ...]
) -> None:
    agree(both_cores, "decode_rollback_ring_slots_with", *args)
    agree(both_cores, "decode_rollback_ring_slots_with_rule", *args)


def test_every_combination_of_bad_flags_and_values_agrees(
    both_cores: tuple[ModuleType, ModuleType],
) -> None:
    # Exhaustive over the kinds that decide the order: a bad count, a bad flag, a bad string.
    counts = [-1, 1.5, IndexRaises(), 8]
    flags = [BoolRaises(), np.array([1, 2]), True]
    strings = [5, b"1", "1", None]
    for args in itertools.product(counts, flags, [*counts, None], strings, flags):
        agree(both_cores, "decode_rollback_ring_slots_with", *args)
        agree(both_cores, "decode_rollback_ring_slots_with_rule", *args)


@ENOUGH
@given(args=st.tuples(hostile, hostile))
def test_the_decision_value_agrees(
    both_cores: tuple[ModuleType, ModuleType], args: tuple[Any, ...]
) -> None:
    agree(both_cores, "DecodeRingDecision", *args)


@ENOUGH
@given(slots=hostile)
def test_publishing_a_bad_depth_agrees(
    both_cores: tuple[ModuleType, ModuleType], slots: object
) -> None:
    valid = outcome(both_cores[1].DecodeRingDecision, slots)[0] == "returned"
    if not valid:  # a valid depth would publish it in this process
        agree(both_cores, "set_decode_ring_slots", slots)


@ENOUGH
@given(args=st.tuples(hostile, hostile, st.sampled_from([lambda value: False, None, 3])))
@example(args=(0, "W", None))
@example(args=("R", 0, None))
@example(args=(None, "W", None))
@example(args=(StrSubclass("R"), "W", None))
@example(args=("R=", "W", None))
def test_the_environment_decision_agrees_on_its_variables(
    both_cores: tuple[ModuleType, ModuleType], args: tuple[Any, ...]
) -> None:
    agree(both_cores, "EnvironmentDecision", *args)


@ENOUGH
@given(names=st.one_of(hostile, st.tuples(hostile, hostile), st.lists(hostile, max_size=3)))
def test_the_environment_reader_agrees_on_its_names(
    both_cores: tuple[ModuleType, ModuleType], names: object
) -> None:
    agree(both_cores, "EnvironmentReader", names)


@ENOUGH
@given(args=st.tuples(hostile, hostile))
@example(args=(-1, BoolRaises()))
@example(args=(1.5, np.array([1, 2])))
def test_the_environment_decision_agrees_on_its_call(
    both_cores: tuple[ModuleType, ModuleType],
    ring_environment: pytest.MonkeyPatch,
    args: tuple[Any, ...],
) -> None:
    deciders = [
        core.EnvironmentDecision("METRALE_SSM_DECODE_RING", "METRALE_DISABLE_WATCHDOGS", bool)
        for core in both_cores
    ]
    compiled, pure = (decider.decode_rollback_ring_slots for decider in deciders)
    assert outcome(compiled, *args) == outcome(pure, *args), args


# --- the decision value: immutable and final ------------------------------------------------


def test_a_decision_cannot_be_changed_even_through_object(core: ModuleType) -> None:
    decision = core.DecodeRingDecision(4, "x")
    for name, value in (("slots", 0), ("skip_reason", None), ("other", 1)):
        with pytest.raises(AttributeError):
            object.__setattr__(decision, name, value)
        with pytest.raises(AttributeError):
            object.__delattr__(decision, name)
    with pytest.raises(AttributeError):
        type(decision).slots.__set__(decision, 0)
    with pytest.raises((AttributeError, TypeError)):
        vars(decision)
    assert (decision.slots, decision.skip_reason) == (4, "x")
    # The compiled one's __init__ is object's, which takes any arguments and does nothing; the
    # pure one's refuses a second call.
    with contextlib.suppress(TypeError, AttributeError):
        decision.__init__(0)
    assert (decision.slots, decision.skip_reason) == (4, "x")


def test_a_shared_decision_stays_what_it_is(core: ModuleType) -> None:
    # The full ring is one object every default decision returns (the hot path allocates
    # nothing): changing it would change every later decision.
    full = core.decode_rollback_ring_slots_with(48, False, None, None, False)
    with pytest.raises(AttributeError):
        object.__setattr__(full, "slots", 0)
    again = core.decode_rollback_ring_slots_with(48, False, None, None, False)
    assert (full.slots, again.slots) == (8, 8)


def test_a_decision_cannot_be_subclassed(core: ModuleType) -> None:
    with pytest.raises(TypeError, match="is not an acceptable base type"):
        type("Changed", (core.DecodeRingDecision,), {})


def test_a_decision_still_pickles_copies_and_compares(core: ModuleType) -> None:
    decision = core.DecodeRingDecision(2, "watchdogs disabled")
    assert pickle.loads(pickle.dumps(decision)) == decision
    assert copy.copy(decision) == decision and copy.deepcopy(decision) == decision
    assert decision.__reduce__() == (core.DecodeRingDecision, (2, "watchdogs disabled"))
    assert decision.__match_args__ == ("slots", "skip_reason")
