"""The API's promise under hostile input: every public function under arbitrary Python objects,
fuzzed on both cores.

A call returns, or raises one of the exception types the README documents for
bad input (``TypeError``, ``OverflowError``, ``ValueError``; and
``DecodeRingConflict`` where a call would publish a second depth), and never
changes the published depth: functions that do not publish run here, where
the autouse fixture fails any test that publishes; those that publish run in
a fresh process that published a depth first.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from decode_ring import preflight, units

from .support import RunPython

DOCUMENTED = (TypeError, OverflowError, ValueError)


class IndexRaises:
    def __index__(self) -> int:
        raise ZeroDivisionError("hostile")


class IndexReturnsFloat:
    def __index__(self) -> float:
        return 1.5


class IndexReturnsHuge:
    def __index__(self) -> int:
        return 10**5000


hostile_objects = st.one_of(
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, 1, 8, 9, 2**64 - 1, 2**64, -1, 10**5000, -(10**5000), 10**4299]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=10),
    st.binary(max_size=5),
    st.none(),
    st.booleans(),
    st.sampled_from(
        [
            np.int64(3),
            np.uint64(2**64 - 1),
            np.int8(-1),
            np.float64(1.0),
            np.bool_(True),
            IndexRaises(),
            IndexReturnsFloat(),
            IndexReturnsHuge(),
            object(),
            [1],
            (8,),
            {"slots": 8},
            "8",
            " 8",
            "auto",
        ]
    ),
)


def call(function: Callable[..., Any], *args: object) -> None:
    with contextlib.suppress(*DOCUMENTED):
        function(*args)


FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@FUZZ
@given(args=st.tuples(*[hostile_objects] * 5))
def test_the_cores_raise_only_documented_types(api: SimpleNamespace, args: tuple[Any, ...]) -> None:
    call(api.fit_decode_ring_slots, *args[:4])
    call(api.decode_rollback_ring_slots_with, *args)
    call(api.decode_rollback_ring_slots_with_rule, *args)
    call(api.DecodeRingDecision, *args[:2])
    call(api.decode_rollback_ring_slots, *args[:2])
    call(api.parse_decode_ring_slots, args[0])
    call(api.watchdogs_disabled_from_value, args[0])
    call(api.EnvironmentReader, args[:2])
    assert api.published_decode_ring_slots() is None


@FUZZ
@given(args=st.tuples(*[hostile_objects] * 4))
def test_the_preflight_raises_only_documented_types(
    ring_environment: pytest.MonkeyPatch, args: tuple[Any, ...]
) -> None:
    call(preflight.requested_slots, *args[:2])
    call(preflight.slot_bytes, *args[:2])
    call(preflight.RingSlot, *args[:2])
    call(preflight.PreLoadFreeMemory, *args[:2])
    call(preflight.PostLoadKvHeadroom, *args[:2])
    call(units.parse_size, args[0])
    try:
        yardstick = preflight.PreLoadFreeMemory(*args[2:])
    except DOCUMENTED:
        yardstick = preflight.PreLoadFreeMemory(1, 2)
    call(preflight.fit_ring, args[0], args[1], yardstick, args[3])


def test_functions_that_publish_change_nothing_once_a_depth_is_published(
    run_python: RunPython,
) -> None:
    lines = run_python("""
        import numpy as np
        from hypothesis import given, settings, strategies as st
        import decode_ring
        from decode_ring import preflight, workers

        documented = (TypeError, OverflowError, ValueError, workers.DecodeRingConflict)
        print(decode_ring.set_decode_ring_slots(3))
        hostile = st.one_of(
            st.integers(), st.sampled_from([10**5000, -1, 2**64, 8, 3]), st.floats(),
            st.text(max_size=5), st.none(), st.booleans(),
            st.sampled_from([np.int64(8), np.float64(3.0), object()]),
        )

        @settings(max_examples=150, deadline=None, database=None)
        @given(st.tuples(hostile, hostile, hostile))
        def fuzz(args):
            calls = [
                (decode_ring.set_decode_ring_slots, args[:1]),
                (preflight.pin_decode_ring_slots, args[:1]),
                (workers.adopt_decode_ring_slots, args[:1]),
                (preflight.autofit, (args[0], args[1], preflight.PreLoadFreeMemory(1, 2))),
            ]
            for function, arguments in calls:
                try:
                    function(*arguments)
                except documented:
                    pass
                assert decode_ring.published_decode_ring_slots() == 3, (function, arguments)

        fuzz()
        print(decode_ring.published_decode_ring_slots())
    """)
    assert lines == [3, 3]
