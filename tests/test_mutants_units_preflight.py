"""What mutation testing found unchecked in ``units``, ``preflight`` and the
twin core: whole error messages, the edges of sizes and the fit's terms.

Expected values are written out: the README's worked example (32 sequences of
158,859,264 B, 7,039 MiB of reserve, 14.1 GiB free) and plain arithmetic.
"""

from __future__ import annotations

import re

import pytest

from decode_ring import USIZE_MAX, _core_py
from decode_ring.preflight import (
    PostLoadKvHeadroom,
    PreLoadFreeMemory,
    RingSlot,
    Rung,
    fit_ring,
    requested_slots,
    slot_bytes,
)
from decode_ring.printable import show
from decode_ring.units import ACCEPTED_FORMS, parse_size

MiB = 2**20
PER_SEQ = 158_859_264
RESERVE = 7039 * MiB
FREE = 15_139_759_718
PIN_HINT = "pass --ssm-decode-ring-slots N to pin a depth (refused rather than shrunk)"


def whole(text: str) -> str:
    return f"^{re.escape(text)}$"


# --- units --------------------------------------------------------------------


def test_a_size_that_is_not_a_str_names_its_type() -> None:
    with pytest.raises(TypeError, match=whole("a size must be str, not int")):
        parse_size(5)  # type: ignore[arg-type]


def test_only_spaces_and_tabs_around_a_size_are_stripped() -> None:
    assert parse_size(" \t5 \t") == 5
    for text in ["\n5", "5\n", "5\r", "\x0b5", "X5", "5X", "XX5XX"]:
        with pytest.raises(
            ValueError, match=whole(f"invalid size {text!a}: write {ACCEPTED_FORMS}")
        ):
            parse_size(text)


def test_a_bare_fraction_suggests_the_same_number_in_gib() -> None:
    message = (
        f"invalid size '14.1': bytes must be whole; did you mean 14.1GiB? Write {ACCEPTED_FORMS}"
    )
    with pytest.raises(ValueError, match=whole(message)):
        parse_size("14.1")
    with pytest.raises(ValueError, match=re.escape("did you mean .5GiB?")):
        parse_size(".5 B")


def test_usize_max_bytes_is_a_size_and_one_more_is_not() -> None:
    assert parse_size(str(USIZE_MAX)) == USIZE_MAX
    too_many = str(USIZE_MAX + 1)
    message = f"size '{too_many}' exceeds the {USIZE_MAX} bytes a usize holds"
    with pytest.raises(ValueError, match=whole(message)):
        parse_size(too_many)


def test_show_keeps_its_limit_of_characters_whole() -> None:
    assert show("a" * 40, limit=40) == "'" + "a" * 40 + "'"
    assert show("a" * 41, limit=40) == "'" + "a" * 40 + "'... (41 characters)"
    assert show("b" * 5, limit=4) == "'bbbb'... (5 characters)"
    assert show("\n") == "'\\n'"
    assert show("a" * 65) == "'" + "a" * 64 + "'... (65 characters)"
    assert show(2**200) == "<201-bit integer>"
    assert show(2**128 - 1) == str(2**128 - 1)
    assert show([1]) == "<list>"
    assert show(1.5) == "1.5"


# --- preflight ----------------------------------------------------------------


def test_requested_slots_names_a_bad_layer_count(ring_environment: pytest.MonkeyPatch) -> None:
    with pytest.raises(TypeError, match=whole("num_ssm_layers must be an integer, not str")):
        requested_slots("1", False)  # type: ignore[arg-type]


def test_reserve_ring_full_reserves_eight_for_one_layer(
    ring_environment: pytest.MonkeyPatch,
) -> None:
    ring_environment.setenv("METRALE_SSM_RESERVE_RING_FULL", "0")
    assert requested_slots(1, True) == 8
    assert requested_slots(0, True) == 0


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
    fit = fit_ring(8, RingSlot(32, PER_SEQ), PreLoadFreeMemory(RESERVE, FREE), explicit=True)
    assert (fit.max_batch_size, fit.per_seq_state, fit.slot_bytes) == (32, PER_SEQ, 5_083_496_448)
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


# --- the twin core ------------------------------------------------------------


def test_the_twin_refuses_deleting_a_field_by_name() -> None:
    decision = _core_py.DecodeRingDecision(1)
    with pytest.raises(AttributeError, match=whole("DecodeRingDecision is immutable")):
        del decision.slots
    with pytest.raises(AttributeError, match=whole("DecodeRingDecision is immutable")):
        decision.slots = 2
