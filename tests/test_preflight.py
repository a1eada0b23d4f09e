"""``decode_ring.preflight``: request, fit to a yardstick, publish."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from decode_ring import preflight
from decode_ring.preflight import (
    DecodeRingConflict,
    PostLoadKvHeadroom,
    Preflight,
    PreLoadFreeMemory,
    RingFit,
    RingSlot,
    Rung,
    autofit,
    fit_ring,
    pin_decode_ring_slots,
    requested_slots,
    slot_bytes,
)

from .support import FakeCell, RunPython, whole

# Ints where a bool goes: the result must hold a bool all the same.
ZERO: Any = 0
ONE: Any = 1

MiB, GiB = 2**20, 2**30
PER_SEQUENCE_STATE = 158_859_264
SLOT = 32 * PER_SEQUENCE_STATE
RESERVE = 7039 * MiB
FREE = int(14.1 * GiB)
USIZE_MAX = 2**64 - 1


@pytest.mark.parametrize("value", ["1", "0", "", "no"])
def test_reserve_ring_full_requests_the_full_ring_whatever_its_value(
    ring_environment: pytest.MonkeyPatch, value: str
) -> None:
    ring_environment.setenv("METRALE_SSM_RESERVE_RING_FULL", value)
    ring_environment.setenv("METRALE_SSM_DECODE_RING", "0")
    ring_environment.setenv("METRALE_DISABLE_WATCHDOGS", "1")
    assert requested_slots(48, True) == 8
    assert requested_slots(0, True) == 0


def test_without_reserve_ring_full_the_decision_requests(
    ring_environment: pytest.MonkeyPatch,
) -> None:
    assert requested_slots(48, False) == 8
    assert requested_slots(48, True) == 0
    assert requested_slots(0, False) == 0
    ring_environment.setenv("METRALE_SSM_DECODE_RING", "0")
    assert requested_slots(48, False) == 0


@pytest.mark.parametrize(
    ("args", "error"), [((-1, False), OverflowError), ((1.0, False), TypeError)]
)
def test_requested_slots_rejects_bad_layers(
    ring_environment: pytest.MonkeyPatch, args: tuple[object, bool], error: type[Exception]
) -> None:
    ring_environment.setenv("METRALE_SSM_RESERVE_RING_FULL", "1")
    with pytest.raises(error):
        requested_slots(*args)  # type: ignore[arg-type]


def test_slot_bytes_is_batch_times_state() -> None:
    assert slot_bytes(32, PER_SEQUENCE_STATE) == SLOT == 5_083_496_448
    assert slot_bytes(0, PER_SEQUENCE_STATE) == 0
    assert slot_bytes(1, USIZE_MAX) == USIZE_MAX


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ((2, USIZE_MAX), OverflowError),
        ((2**32, 2**32), OverflowError),
        ((-1, 1), OverflowError),
        ((1.5, 1), TypeError),
        ((1, "1"), TypeError),
    ],
)
def test_slot_bytes_rejects(args: tuple[object, object], error: type[Exception]) -> None:
    with pytest.raises(error):
        slot_bytes(*args)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("free", "slots", "lowered"),
    [(FREE, 1, True), (30 * GiB, 4, True), (64 * GiB, 8, False)],
)
def test_the_worked_example(free: int, slots: int, lowered: bool) -> None:
    fit = fit_ring(8, SLOT, PreLoadFreeMemory(RESERVE, free))
    assert (fit.slots, fit.requested, fit.fits, fit.lowered) == (slots, 8, True, lowered)
    assert (fit.warning is not None) is lowered
    assert fit.ring_bytes == slots * SLOT
    assert (fit.beside, fit.limit) == (RESERVE, free)
    assert fit.total == RESERVE + slots * SLOT


def test_the_warning_says_from_what_to_what_against_what_and_how_to_pin() -> None:
    warning = fit_ring(8, SLOT, PreLoadFreeMemory(RESERVE, FREE)).warning
    assert warning is not None
    assert "from 8 to 1" in warning
    assert "pre-load free memory" in warning
    assert "--ssm-decode-ring-slots N" in warning
    assert "refused rather than shrunk" in warning


def test_the_decision_line_names_the_yardstick_and_every_term() -> None:
    decision = fit_ring(8, SLOT, PreLoadFreeMemory(RESERVE, FREE)).decision
    assert "\n" not in decision
    for term in (
        "pre-load free memory",
        "ring 4.73 GiB",
        "1 x 4.73 GiB",
        "reserve without ring 6.87 GiB",
        "11.61 GiB",
        "<=",
        "free memory 14.10 GiB",
    ):
        assert term in decision, term


@pytest.mark.parametrize(
    ("requested", "slot", "explicit"),
    [(0, SLOT, False), (8, 0, False), (8, SLOT, True), (2, SLOT, True)],
)
def test_requested_stands_without_warning(requested: int, slot: int, explicit: bool) -> None:
    fit = fit_ring(requested, slot, PreLoadFreeMemory(RESERVE, FREE), explicit=explicit)
    assert (fit.slots, fit.warning) == (requested, None)


def test_an_explicit_depth_that_does_not_fit_is_kept_unfitted() -> None:
    fit = fit_ring(8, SLOT, PreLoadFreeMemory(RESERVE, FREE), explicit=True)
    assert (fit.slots, fit.fits, fit.warning) == (8, False, None)


def test_pre_load_a_reserve_that_alone_exceeds_free_memory_keeps_the_request() -> None:
    fit = fit_ring(8, SLOT, PreLoadFreeMemory(20 * GiB, FREE))
    assert (fit.slots, fit.fits, fit.warning) == (8, False, None)
    fit = fit_ring(4, SLOT, PreLoadFreeMemory(FREE + 1, FREE))
    assert (fit.slots, fit.fits, fit.warning) == (4, False, None)


def test_post_load_lowers_to_what_fits_the_headroom() -> None:
    yardstick = PostLoadKvHeadroom(kv_floor=2 * GiB, headroom=12 * GiB)
    fit = fit_ring(8, SLOT, yardstick)
    assert (fit.slots, fit.fits) == (2, True)
    assert (fit.beside, fit.limit) == (2 * GiB, 12 * GiB)
    assert fit.warning is not None and "post-load KV headroom" in fit.warning
    assert "KV floor" in fit.decision and "KV headroom" in fit.decision


def test_post_load_with_nothing_fitting_takes_zero_and_leaves_it_to_the_kv_budget() -> None:
    fit = fit_ring(8, SLOT, PostLoadKvHeadroom(kv_floor=5 * GiB, headroom=4 * GiB))
    assert (fit.slots, fit.fits) == (0, False)
    assert fit.warning is not None and "KV budget stage will decide" in fit.warning


def test_the_arithmetic_saturates() -> None:
    fit = fit_ring(8, USIZE_MAX, PreLoadFreeMemory(USIZE_MAX, USIZE_MAX))
    assert (fit.slots, fit.total, fit.fits) == (8, USIZE_MAX, True)
    fit = fit_ring(8, USIZE_MAX, PreLoadFreeMemory(1, USIZE_MAX - 1))
    assert (fit.slots, fit.fits, fit.ring_bytes) == (0, True, 0)
    assert fit.rungs()[-2].total_bytes == USIZE_MAX


def test_the_rungs_cover_the_ladder() -> None:
    rungs = fit_ring(8, SLOT, PreLoadFreeMemory(RESERVE, FREE)).rungs()
    assert [(rung.slots, rung.fits) for rung in rungs] == [
        (8, False),
        (4, False),
        (2, False),
        (1, True),
        (0, True),
    ]
    assert [rung.total_bytes for rung in rungs] == [RESERVE + n * SLOT for n in (8, 4, 2, 1, 0)]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ((-1, SLOT, (RESERVE, FREE)), OverflowError),
        ((8, 1.0, (RESERVE, FREE)), TypeError),
        ((8, SLOT, (RESERVE, "14GiB")), TypeError),
    ],
)
def test_fit_ring_rejects(
    args: tuple[object, object, tuple[object, object]], error: type[Exception]
) -> None:
    requested, slot, (reserve, free) = args
    with pytest.raises(error):
        fit_ring(requested, slot, PreLoadFreeMemory(reserve, free))  # type: ignore[arg-type]


def test_post_load_yardstick_rejects_bad_sizes() -> None:
    with pytest.raises(OverflowError):
        PostLoadKvHeadroom(kv_floor=-1, headroom=0)


def test_autofit_publishes_a_fitted_depth(cell: FakeCell) -> None:
    assert autofit(8, SLOT, PreLoadFreeMemory(RESERVE, FREE)).slots == 1
    assert cell.writes == [1]


def test_autofit_publishes_nothing_when_the_request_stands(cell: FakeCell) -> None:
    assert autofit(8, SLOT, PreLoadFreeMemory(RESERVE, 64 * GiB)).slots == 8
    assert autofit(8, SLOT, PreLoadFreeMemory(20 * GiB, FREE)).slots == 8
    assert cell.writes == []


def test_autofit_treats_a_published_depth_as_explicit(cell: FakeCell) -> None:
    cell.value = 8
    fit = autofit(8, SLOT, PreLoadFreeMemory(RESERVE, FREE))
    assert (fit.slots, fit.fits, fit.warning) == (8, False, None)
    assert cell.writes == []


def test_autofit_refuses_to_disagree_with_a_racing_publisher(
    cell: FakeCell, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(preflight, "set_decode_ring_slots", lambda slots: 4)
    with pytest.raises(RuntimeError, match="published"):
        autofit(8, SLOT, PreLoadFreeMemory(RESERVE, FREE))


def test_autofit_publishes_through_the_real_cell(run_python: RunPython) -> None:
    lines = run_python(f"""
        import decode_ring
        from decode_ring.preflight import PreLoadFreeMemory, autofit
        fit = autofit(8, {SLOT}, PreLoadFreeMemory({RESERVE}, {FREE}))
        print(fit.slots)
        print(decode_ring.published_decode_ring_slots())
        print(decode_ring.decode_rollback_ring_slots(48, False).slots)
        second = autofit(8, {SLOT}, PreLoadFreeMemory({RESERVE}, {FREE}))
        print((second.slots, second.fits))
    """)
    assert lines == [1, 1, 1, (8, False)]


def test_only_the_pre_load_yardstick_refuses() -> None:
    assert fit_ring(8, SLOT, PreLoadFreeMemory(20 * GiB, FREE)).refused
    assert not fit_ring(8, SLOT, PreLoadFreeMemory(RESERVE, FREE)).refused
    post_load = fit_ring(8, SLOT, PostLoadKvHeadroom(kv_floor=5 * GiB, headroom=GiB))
    assert not post_load.fits
    assert not post_load.refused


# --- publishing: pin, preflight (over the stand-in once-cell) -----------------------------------


def test_pin_publishes_or_refuses(cell: FakeCell) -> None:
    assert pin_decode_ring_slots(4) == 4
    assert pin_decode_ring_slots(4) == 4
    with pytest.raises(DecodeRingConflict, match=whole("a ring depth of 4 is already published")):
        pin_decode_ring_slots(2)
    assert cell.writes == [4, 4, 2]


def test_preflight_fits_and_publishes(cell: FakeCell) -> None:
    slot = RingSlot(32, PER_SEQUENCE_STATE)
    yardstick = PreLoadFreeMemory(RESERVE, FREE)
    found = preflight.preflight(48, ZERO, slot, yardstick)
    assert found.use_speculative is False
    assert found == Preflight(
        48,
        False,
        RingFit(
            1,
            8,
            5_083_496_448,
            yardstick,
            "ssm decode ring lowered from 8 to 1 slots to fit pre-load free memory (14.10 GiB); "
            "pass --ssm-decode-ring-slots N to pin a depth (refused rather than shrunk)",
            32,
            PER_SEQUENCE_STATE,
        ),
        1,
    )
    assert cell.writes == [1]


def test_preflight_pins_first(cell: FakeCell) -> None:
    slot = RingSlot(32, PER_SEQUENCE_STATE)
    yardstick = PreLoadFreeMemory(RESERVE, FREE)
    found = preflight.preflight(48, ONE, slot, yardstick, pinned=2)
    assert found.use_speculative is True
    assert found == Preflight(
        48, True, RingFit(2, 2, 5_083_496_448, yardstick, None, 32, PER_SEQUENCE_STATE), 2
    )
    assert (found.fit.fits, cell.writes) == (False, [2])


def test_preflight_without_ssm_layers_publishes_nothing(cell: FakeCell) -> None:
    found = preflight.preflight(0, False, RingSlot(1, 1), PreLoadFreeMemory(0, 0))
    assert (found.fit.slots, found.fit.requested, found.published) == (0, 0, None)
    assert cell.writes == []


def test_ring_terms_need_both_the_batch_and_the_state() -> None:
    yardstick = PreLoadFreeMemory(0, 1)
    for batch, state in [(32, None), (None, 7)]:
        fit = RingFit(1, 1, 2 * MiB, yardstick, None, batch, state)
        assert fit.refusal == (
            "refused: ring depth 1 does not fit pre-load free memory: ring 1 x 2.00 MiB = "
            "2.00 MiB, + reserve without ring 0 B = 2.00 MiB > free memory 1 B; "
            "the deepest depth that fits is 0"
        )


# --- whole messages and the fit's terms -----------------------------------------------------------


PIN_HINT = "pass --ssm-decode-ring-slots N to pin a depth (refused rather than shrunk)"


def test_requested_slots_names_a_bad_layer_count(ring_environment: pytest.MonkeyPatch) -> None:
    with pytest.raises(TypeError, match=whole("num_ssm_layers must be an integer, not str")):
        requested_slots("1", False)  # type: ignore[arg-type]


def test_reserve_ring_full_reserves_eight_for_one_layer(
    ring_environment: pytest.MonkeyPatch,
) -> None:
    ring_environment.setenv("METRALE_SSM_RESERVE_RING_FULL", "0")
    assert requested_slots(1, True) == 8
    assert requested_slots(0, True) == 0


@dataclass(frozen=True)
class HandMadeYardstick:
    """A yardstick of the caller's own: an object with every property of one."""

    beside: int
    limit: int
    name: str = "hand-made"
    beside_term: str = "beside"
    limit_term: str = "limit"
    refuses_boot: bool = True


@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda bad: RingSlot(bad, 1), "max_batch_size"),
        (lambda bad: RingSlot(1, bad), "per_seq_state_bytes"),
        (lambda bad: slot_bytes(bad, 1), "max_batch_size"),
        (lambda bad: slot_bytes(1, bad), "per_seq_state_bytes"),
        (lambda bad: PreLoadFreeMemory(bad, 1), "reserve_without_ring"),
        (lambda bad: PreLoadFreeMemory(1, bad), "free_mem"),
        (lambda bad: PostLoadKvHeadroom(bad, 1), "kv_floor"),
        (lambda bad: PostLoadKvHeadroom(1, bad), "headroom"),
        (lambda bad: fit_ring(bad, 1, PreLoadFreeMemory(1, 1)), "requested"),
        (lambda bad: fit_ring(1, bad, PreLoadFreeMemory(1, 1)), "slot_bytes"),
        (lambda bad: fit_ring(1, 1, HandMadeYardstick(bad, 1)), "yardstick.beside"),
        (lambda bad: fit_ring(1, 1, HandMadeYardstick(1, bad)), "yardstick.limit"),
        (lambda bad: autofit(1, 1, HandMadeYardstick(bad, 1)), "yardstick.beside"),
        (lambda bad: autofit(1, 1, HandMadeYardstick(1, bad)), "yardstick.limit"),
    ],
)
def test_bad_arguments_are_named(make: object, name: str) -> None:
    assert callable(make)
    with pytest.raises(TypeError, match=whole(f"{name} must be an integer, not str")):
        make("1")
    with pytest.raises(OverflowError, match=whole(f"{name} must be in 0..={USIZE_MAX}, got -1")):
        make(-1)


def test_a_slot_past_usize_names_its_terms() -> None:
    big = 2**63
    message = (
        f"max batch size {big} x per-sequence state 2 B exceeds the {USIZE_MAX} B a usize holds"
    )
    with pytest.raises(OverflowError, match=whole(message)):
        RingSlot(big, 2)


def test_a_ring_slot_fit_keeps_the_batch_and_the_state() -> None:
    fit = fit_ring(
        8, RingSlot(32, PER_SEQUENCE_STATE), PreLoadFreeMemory(RESERVE, FREE), explicit=True
    )
    assert (fit.max_batch_size, fit.per_seq_state, fit.slot_bytes) == (
        32,
        PER_SEQUENCE_STATE,
        5_083_496_448,
    )
    assert fit.refusal == (
        "refused: ring depth 8 does not fit pre-load free memory: ring 8 x batch 32 x "
        "per-sequence state 151.50 MiB = 37.88 GiB, + reserve without ring 6.87 GiB = "
        "44.75 GiB > free memory 14.10 GiB; the deepest depth that fits is 1"
    )
    plain = fit_ring(8, 5_083_496_448, PreLoadFreeMemory(RESERVE, FREE), explicit=True)
    assert (plain.max_batch_size, plain.per_seq_state) == (None, None)
    assert "ring 8 x 4.73 GiB = 37.88 GiB" in str(plain.refusal)


def test_rungs_carry_their_ring_bytes() -> None:
    fit = fit_ring(8, 10, PreLoadFreeMemory(5, 30))
    assert fit.rungs() == [
        Rung(8, 80, 85, False),
        Rung(4, 40, 45, False),
        Rung(2, 20, 25, True),
        Rung(1, 10, 15, True),
        Rung(0, 0, 5, True),
    ]


def test_a_request_of_one_that_does_not_fit_drops_to_zero() -> None:
    fit = fit_ring(1, 10, PreLoadFreeMemory(5, 10))
    assert (fit.slots, fit.requested, fit.fits) == (0, 1, True)
    assert fit.warning == (
        f"ssm decode ring lowered from 1 to 0 slots to fit pre-load free memory (10 B); {PIN_HINT}"
    )


def test_post_load_warning_when_nothing_fits() -> None:
    fit = fit_ring(8, 10, PostLoadKvHeadroom(5, 4))
    assert (fit.slots, fit.fits, fit.refused) == (0, False, False)
    assert fit.warning == (
        "ssm decode ring lowered from 8 to 0 slots: not even 0 fits post-load KV headroom "
        f"(4 B); the KV budget stage will decide; {PIN_HINT}"
    )
