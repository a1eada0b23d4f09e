"""``fit_decode_ring_slots``: the ladder fit, with the reference's worked example.

The example's figures are the README's, written out (``decode-ring fit
--example``): 48 SSM layers, batch 32. The edges of the saturating arithmetic
are in ``test_boundaries.py``.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from decode_ring.preflight import slot_bytes

MiB = 2**20
GiB = 2**30

PER_SEQUENCE_STATE = 158_859_264  # 151.50 MiB
SLOT_BYTES = 5_083_496_448  # one ring slot, 4.73 GiB
RESERVE_WITHOUT_RING = 7_380_926_464  # 7039 MiB, 6.87 GiB
FREE = 15_139_759_718  # 14.10 GiB
USIZE_MAX = 2**64 - 1


def test_the_worked_example_as_the_readme_prints_it(api: SimpleNamespace) -> None:
    """Depth 1 is chosen; rung by rung, 'fits' reads no, no, no, yes, yes."""
    assert slot_bytes(32, PER_SEQUENCE_STATE) == SLOT_BYTES
    fit = api.fit_decode_ring_slots
    assert fit(8, RESERVE_WITHOUT_RING, SLOT_BYTES, FREE) == 1
    fits = [fit(rung, RESERVE_WITHOUT_RING, SLOT_BYTES, FREE) == rung for rung in (8, 4, 2, 1, 0)]
    assert fits == [False, False, False, True, True]
    # The README's call, in the units it gives them.
    assert fit(8, 7039 * MiB, 32 * PER_SEQUENCE_STATE, int(14.1 * GiB)) == 1


@pytest.mark.parametrize(
    ("start", "free", "slots"),
    [
        (8, FREE, 1),
        (8, 30 * GiB, 4),
        (8, 64 * GiB, 8),
        (2, 64 * GiB, 2),
        (8, RESERVE_WITHOUT_RING - 1, 0),
        (8, RESERVE_WITHOUT_RING, 0),
        (8, RESERVE_WITHOUT_RING + SLOT_BYTES, 1),
        (8, RESERVE_WITHOUT_RING + 2 * SLOT_BYTES - 1, 1),
        (8, RESERVE_WITHOUT_RING + 2 * SLOT_BYTES, 2),
        (8, RESERVE_WITHOUT_RING + 8 * SLOT_BYTES, 8),
        (7, 64 * GiB, 4),
        (3, 64 * GiB, 2),
        (0, 64 * GiB, 0),
        (100, 64 * GiB, 8),
    ],
)
def test_worked_example(api: SimpleNamespace, start: int, free: int, slots: int) -> None:
    fitted = api.fit_decode_ring_slots(start, RESERVE_WITHOUT_RING, SLOT_BYTES, free)
    assert fitted == slots
    assert type(fitted) is int


def test_two_does_not_fit_in_the_worked_example(api: SimpleNamespace) -> None:
    assert FREE < RESERVE_WITHOUT_RING + 2 * SLOT_BYTES
    assert api.fit_decode_ring_slots(2, RESERVE_WITHOUT_RING, SLOT_BYTES, FREE) == 1


def test_nothing_fits_gives_zero_also_with_a_zero_byte_slot(api: SimpleNamespace) -> None:
    fit = api.fit_decode_ring_slots
    assert fit(8, RESERVE_WITHOUT_RING, SLOT_BYTES, RESERVE_WITHOUT_RING - 1) == 0
    assert fit(8, RESERVE_WITHOUT_RING, 0, RESERVE_WITHOUT_RING - 1) == 0
    assert fit(8, RESERVE_WITHOUT_RING, 0, RESERVE_WITHOUT_RING) == 8


def test_arithmetic_saturates_at_usize_max(api: SimpleNamespace) -> None:
    fit = api.fit_decode_ring_slots
    top = USIZE_MAX
    # reserve + slots * bytes would wrap; saturated, it equals USIZE_MAX.
    assert fit(8, top, top, top) == 8
    assert fit(8, top, 1, top - 1) == 0
    assert fit(8, 1, top, top) == 8
    assert fit(8, 1, top, top - 1) == 0
    assert fit(8, top // 2, 2**61, top) == 8
    assert fit(8, top // 2, 2**61, top - 1) == 2
    assert fit(8, 0, top // 8 + 1, top) == 8


def test_integer_like_arguments_are_accepted(api: SimpleNamespace) -> None:
    assert api.fit_decode_ring_slots(np.int64(8), np.uint64(0), True, np.int32(3)) == 2


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ((-1, 0, 0, 0), OverflowError),
        ((8, -1, 0, 0), OverflowError),
        ((8, 0, 2**64, 0), OverflowError),
        ((8, 0, 0, 2**70), OverflowError),
        ((8.0, 0, 0, 0), TypeError),
        ((8, 0.5, 0, 0), TypeError),
        ((8, 0, "1", 0), TypeError),
        ((8, 0, 0, None), TypeError),
        ((8, 0, 0, b"\x00"), TypeError),
        ((8, 0, 0, np.float64(1.0)), TypeError),
    ],
)
def test_bad_arguments_raise(
    api: SimpleNamespace, args: tuple[object, ...], error: type[Exception]
) -> None:
    with pytest.raises(error):
        api.fit_decode_ring_slots(*args)
