"""Every edge on purpose, on both cores, with the expected value written out.

- The fit's saturating multiplication at each rung ``a`` of the ladder, with
  ``bytes_per_ring_slot`` at ``USIZE_MAX // a`` and one either side, and free
  memory at the product exactly and one below (``USIZE_MAX`` where the
  product saturates): the reference's ``usize::saturating_mul`` reaches
  ``USIZE_MAX`` only when the true product does.
- The saturating addition at ``USIZE_MAX`` exactly, one below and one past.
- ``start_slots`` at each rung and beside it.
- A zero-byte slot on both of the preflight's yardsticks: the request stands,
  with no warning (``fit_ring``'s documented rule), fitting or not.
- Each rule of the precedence beside the inputs that would hand the decision
  to its neighbours.

The expected values come from the reference's definitions worked by hand:
no value here is computed by the code under test.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from decode_ring.preflight import PostLoadKvHeadroom, PreLoadFreeMemory, RingSlot, fit_ring

# usize::MAX on every platform the wheels are built for (64-bit).
MAX = 2**64 - 1
GiB = 2**30
SLOT = 5_083_496_448  # the README's worked example: one ring slot

# (start_slots, reserve_without_ring, bytes_per_ring_slot, free_mem, depth)
SATURATING_MUL = [
    # rung 8: USIZE_MAX // 8 == 2**61 - 1
    (8, 0, 2**61 - 2, 2**64 - 16, 8),  # 8 x bytes == 2**64 - 16, exact
    (8, 0, 2**61 - 2, 2**64 - 17, 4),
    (8, 0, 2**61 - 1, 2**64 - 8, 8),  # 8 x bytes == 2**64 - 8, exact
    (8, 0, 2**61 - 1, 2**64 - 9, 4),
    (8, 0, 2**61, MAX, 8),  # 8 x bytes == 2**64: saturates to USIZE_MAX
    (8, 0, 2**61, MAX - 1, 4),
    # rung 4: USIZE_MAX // 4 == 2**62 - 1
    (4, 0, 2**62 - 2, 2**64 - 8, 4),
    (4, 0, 2**62 - 2, 2**64 - 9, 2),
    (4, 0, 2**62 - 1, 2**64 - 4, 4),
    (4, 0, 2**62 - 1, 2**64 - 5, 2),
    (4, 0, 2**62, MAX, 4),
    (4, 0, 2**62, MAX - 1, 2),
    # rung 2: USIZE_MAX // 2 == 2**63 - 1
    (2, 0, 2**63 - 2, 2**64 - 4, 2),
    (2, 0, 2**63 - 2, 2**64 - 5, 1),
    (2, 0, 2**63 - 1, 2**64 - 2, 2),  # issue 13: a mul saturating one step early gives 1
    (2, 0, 2**63 - 1, 2**64 - 3, 1),
    (2, 0, 2**63, MAX, 2),
    (2, 0, 2**63, MAX - 1, 1),
    # rung 1: USIZE_MAX // 1 == USIZE_MAX (one past is no usize: see the last test)
    (1, 0, 2**64 - 3, 2**64 - 3, 1),
    (1, 0, 2**64 - 3, 2**64 - 4, 0),
    (1, 0, 2**64 - 2, 2**64 - 2, 1),
    (1, 0, 2**64 - 2, 2**64 - 3, 0),
    (1, 0, MAX, MAX, 1),
    (1, 0, MAX, MAX - 1, 0),
    # From the full ladder: the deeper rungs' products pass USIZE_MAX, so
    # they saturate and do not fit below it; the rung at its edge does.
    (8, 0, 2**62 - 1, 2**64 - 4, 4),
    (8, 0, 2**62 - 1, 2**64 - 5, 2),
    (8, 0, 2**63 - 1, 2**64 - 2, 2),
    (8, 0, 2**63 - 1, 2**64 - 3, 1),
    (8, 0, 2**63, MAX - 1, 1),
    (8, 0, 2**64 - 2, 2**64 - 2, 1),
    (8, 0, MAX, MAX - 1, 0),
    # ... and with free memory USIZE_MAX, every saturated total fits.
    (8, 0, 2**62 - 1, MAX, 8),
    (8, 0, MAX, MAX, 8),
    # A zero operand never saturates: depth 0 of any slot, any depth of a
    # zero-byte slot.
    (0, 0, MAX, 0, 0),
    (8, 0, 0, 0, 8),
    (8, 5, MAX, 5, 0),
    (8, 5, 0, 5, 8),
]

SATURATING_ADD = [
    # reserve + ring == USIZE_MAX exactly
    (1, MAX - 5, 5, MAX, 1),
    (1, MAX - 5, 5, MAX - 1, 0),
    # one below
    (1, MAX - 5, 4, MAX - 1, 1),
    (1, MAX - 5, 4, MAX - 2, 0),
    # one past: saturates to USIZE_MAX
    (1, MAX - 5, 6, MAX, 1),
    (1, MAX - 5, 6, MAX - 1, 0),
    # both terms at the top
    (8, MAX, MAX, MAX, 8),
    (8, MAX, MAX, MAX - 1, 0),
    (8, 1, MAX, MAX, 8),
    (8, 1, MAX, MAX - 1, 0),
    (8, MAX, 1, MAX, 8),
    (8, MAX, 0, MAX, 8),
    (8, MAX, 0, MAX - 1, 0),
    # reserve + 8 slots one past USIZE_MAX; 4 slots well below
    (8, 2**63, 2**60, MAX, 8),
    (8, 2**63, 2**60, MAX - 1, 4),
    # adding zero leaves the reserve as it is
    (8, 7, 0, 7, 8),
    (8, 7, 0, 6, 0),
    (8, 0, 0, 0, 8),
]

# The ladder with room for all of it: start_slots at each rung and beside it.
START_SLOTS = [
    (0, 0),
    (1, 1),
    (2, 2),
    (3, 2),
    (4, 4),
    (5, 4),
    (7, 4),
    (8, 8),
    (9, 8),
    (MAX, 8),
]


@pytest.mark.parametrize(
    ("start", "reserve", "slot_bytes", "free", "depth"), SATURATING_MUL + SATURATING_ADD
)
def test_the_fit_saturates_exactly_at_usize_max(
    api: SimpleNamespace, start: int, reserve: int, slot_bytes: int, free: int, depth: int
) -> None:
    assert api.fit_decode_ring_slots(start, reserve, slot_bytes, free) == depth


@pytest.mark.parametrize(("start", "depth"), START_SLOTS)
def test_the_fit_starts_at_the_deepest_rung_not_above_start_slots(
    api: SimpleNamespace, start: int, depth: int
) -> None:
    assert api.fit_decode_ring_slots(start, 0, 1, 8) == depth
    assert api.fit_decode_ring_slots(start, MAX, MAX, MAX) == depth


@pytest.mark.parametrize(
    ("reserve", "free", "depth"),
    [
        # the README's worked example, each rung's total exactly and one below
        (7_380_926_464, 48_048_898_048, 8),
        (7_380_926_464, 48_048_898_047, 4),
        (7_380_926_464, 27_714_912_256, 4),
        (7_380_926_464, 27_714_912_255, 2),
        (7_380_926_464, 17_547_919_360, 2),
        (7_380_926_464, 17_547_919_359, 1),
        (7_380_926_464, 12_464_422_912, 1),
        (7_380_926_464, 12_464_422_911, 0),
        (7_380_926_464, 7_380_926_464, 0),
        (7_380_926_464, 7_380_926_463, 0),
    ],
)
def test_the_fit_compares_with_less_or_equal(
    api: SimpleNamespace, reserve: int, free: int, depth: int
) -> None:
    assert api.fit_decode_ring_slots(8, reserve, SLOT, free) == depth


@pytest.mark.parametrize(
    "args",
    [
        (8, 0, 2**64, MAX),  # rung 1's USIZE_MAX // 1 + 1
        (2**64, 0, 0, 0),
        (8, 2**64, 0, 0),
        (8, 0, 0, 2**64),
        (-1, 0, 0, 0),
        (8, 0, -1, 0),
    ],
)
def test_one_past_a_usize_is_an_overflow_error(
    api: SimpleNamespace, args: tuple[int, int, int, int]
) -> None:
    with pytest.raises(OverflowError):
        api.fit_decode_ring_slots(*args)


def test_usize_max_is_the_64_bit_one(api: SimpleNamespace) -> None:
    assert api.USIZE_MAX == MAX


# The zero-byte slot. fit_ring's documented rule: the request stands, with no
# warning, when a slot is 0 bytes, whatever else fits.

YARDSTICKS: dict[str, tuple[PreLoadFreeMemory | PostLoadKvHeadroom, bool, bool]] = {
    "pre-load, reserve over free memory": (PreLoadFreeMemory(5 * GiB, 4 * GiB), False, True),
    "pre-load, reserve equal to free memory": (PreLoadFreeMemory(4 * GiB, 4 * GiB), True, False),
    "pre-load, nothing at all": (PreLoadFreeMemory(0, 0), True, False),
    "post-load, floor over headroom": (PostLoadKvHeadroom(5 * GiB, 4 * GiB), False, False),
    "post-load, floor equal to headroom": (PostLoadKvHeadroom(4 * GiB, 4 * GiB), True, False),
    "post-load, nothing at all": (PostLoadKvHeadroom(0, 0), True, False),
}


@pytest.mark.parametrize("requested", [8, 4, 1])
@pytest.mark.parametrize("slot", [0, RingSlot(0, 158_859_264), RingSlot(32, 0)])
@pytest.mark.parametrize("case", sorted(YARDSTICKS))
def test_a_zero_byte_slot_keeps_the_request_without_warning(
    case: str, slot: int | RingSlot, requested: int
) -> None:
    yardstick, fits, refused = YARDSTICKS[case]
    fit = fit_ring(requested, slot, yardstick)
    assert (fit.slots, fit.warning) == (requested, None)
    assert (fit.ring_bytes, fit.fits, fit.refused, fit.lowered) == (0, fits, refused, False)


@pytest.mark.parametrize(
    ("yardstick", "slots", "warned"),
    [
        # the worked example's slot beside 2 GiB: 8 slots need 2 GiB + 40,667,971,584 B
        (PostLoadKvHeadroom(2 * GiB, 2 * GiB + 40_667_971_584), 8, False),
        (PostLoadKvHeadroom(2 * GiB, 2 * GiB + 40_667_971_583), 4, True),
        (PreLoadFreeMemory(2 * GiB, 2 * GiB + 40_667_971_584), 8, False),
        (PreLoadFreeMemory(2 * GiB, 2 * GiB + 40_667_971_583), 4, True),
        # 1 slot exactly; one byte less leaves 0, which still fits
        (PostLoadKvHeadroom(2 * GiB, 2 * GiB + SLOT), 1, True),
        (PostLoadKvHeadroom(2 * GiB, 2 * GiB + SLOT - 1), 0, True),
        (PreLoadFreeMemory(2 * GiB, 2 * GiB + SLOT - 1), 0, True),
    ],
)
def test_each_yardstick_fits_at_its_limit_exactly(
    yardstick: PreLoadFreeMemory | PostLoadKvHeadroom, slots: int, warned: bool
) -> None:
    fit = fit_ring(8, SLOT, yardstick)
    assert (fit.slots, fit.fits) == (slots, True)
    if warned:
        assert fit.warning is not None
        assert f"lowered from 8 to {slots} slots" in fit.warning
    else:
        assert fit.warning is None


# The precedence, each rule beside its neighbours. Per row: the arguments of
# decode_rollback_ring_slots_with, then slots, skip_reason and the rule's name
# as the README lists them.

SPECULATIVE = "speculative decode active"
WATCHDOGS = "watchdogs disabled"

PRECEDENCE = [
    # 1. no SSM layers: 0 layers against 1, everything else set
    ((0, True, 4, "1", True), 0, None, "no SSM layers"),
    ((0, False, None, None, False), 0, None, "no SSM layers"),
    ((1, True, 4, "1", True), 4, None, "published"),
    ((1, False, None, None, False), 8, None, "default"),
    ((MAX, False, None, None, False), 8, None, "default"),
    # 2. published: None against 0, the full depth, one past it, USIZE_MAX
    ((48, True, 0, "1", True), 0, None, "published"),
    ((48, True, None, "1", True), 8, None, "METRALE_SSM_DECODE_RING=1"),
    ((48, True, 8, "0", True), 8, None, "published"),
    ((48, True, None, "0", True), 0, None, "METRALE_SSM_DECODE_RING=0"),
    ((48, False, 9, None, False), 9, None, "published"),
    ((48, False, MAX, None, True), MAX, None, "published"),
    ((48, True, 1, None, False), 1, None, "published"),
    ((48, True, None, None, False), 0, SPECULATIVE, "speculative decode"),
    # 3. the override: exactly "1" or "0", and every near miss falls through
    ((48, True, None, "1", False), 8, None, "METRALE_SSM_DECODE_RING=1"),
    ((48, False, None, "1", True), 8, None, "METRALE_SSM_DECODE_RING=1"),
    ((48, False, None, "0", False), 0, None, "METRALE_SSM_DECODE_RING=0"),
    *[
        ((48, True, None, near_miss, False), 0, SPECULATIVE, "speculative decode")
        for near_miss in ("", " 1", "1 ", "01", "10", "+1", "2", "-0", "00", "\u0661", "\uff11")
    ],
    *[
        ((48, False, None, near_miss, True), 0, WATCHDOGS, "watchdogs disabled")
        for near_miss in ("", "0 ", "\t0", "1\n", "true", "false", "1\x00")
    ],
    *[
        ((48, False, None, near_miss, False), 8, None, "default")
        for near_miss in ("", "0.0", "+0", "auto", "none", "one")
    ],
    # 4. the skips, speculative decode named first
    ((48, True, None, None, True), 0, SPECULATIVE, "speculative decode"),
    ((48, True, None, None, False), 0, SPECULATIVE, "speculative decode"),
    ((48, False, None, None, True), 0, WATCHDOGS, "watchdogs disabled"),
    # 5. the default
    ((48, False, None, None, False), 8, None, "default"),
]


@pytest.mark.parametrize(("args", "slots", "reason", "rule"), PRECEDENCE)
def test_each_rule_beside_its_neighbours(
    api: SimpleNamespace,
    args: tuple[int, bool, int | None, str | None, bool],
    slots: int,
    reason: str | None,
    rule: str,
) -> None:
    decision, named = api.decode_rollback_ring_slots_with_rule(*args)
    assert (decision.slots, decision.skip_reason, named) == (slots, reason, rule)
    plain = api.decode_rollback_ring_slots_with(*args)
    assert (plain.slots, plain.skip_reason) == (slots, reason)
