"""What mutation testing found unchecked in the cores' argument checks, the
usize helpers, the facade's explained decision and the preflight's
publishing steps.

The argument checks' messages are the same in both cores, so those tests run
on both. The twin's once-cell is a module global: a test here sets it only
through ``monkeypatch``, which puts it back before the check that nothing was
published in this process.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

from decode_ring import CORE, USIZE_MAX, _core_py, _facade, _selector, preflight
from decode_ring._facade import (
    NOT_VALID_UNICODE,
    ExplainedDecision,
    explain_decode_rollback_ring_slots,
    parse_decode_ring_slots,
    watchdogs_disabled_from_value,
)
from decode_ring._usize_py import optional_str, short_integer, usize
from decode_ring.preflight import (
    DecodeRingConflict,
    Preflight,
    PreLoadFreeMemory,
    RingFit,
    RingSlot,
    pin_decode_ring_slots,
)

from .support import FakeCell

MiB = 2**20
PER_SEQ = 158_859_264
RESERVE = 7039 * MiB
FREE = 15_139_759_718


def whole(text: str) -> str:
    return f"^{re.escape(text)}$"


class BadIndex:
    def __index__(self) -> int:
        raise KeyError("no")


# --- the usize helpers and the cores' argument checks --------------------------


def test_usize_messages() -> None:
    with pytest.raises(TypeError, match=whole("n must be an integer, not float")):
        usize(1.0, "n")
    with pytest.raises(
        TypeError, match=whole("n must be an integer: BadIndex.__index__ raised KeyError")
    ):
        usize(BadIndex(), "n")
    with pytest.raises(OverflowError, match=whole(f"n must be in 0..={USIZE_MAX}, got -5")):
        usize(-5, "n")
    with pytest.raises(TypeError, match=whole("n must be str or None, not bytes")):
        optional_str(b"x", "n")


def test_short_integer_up_to_128_bits_and_past() -> None:
    assert short_integer(2**128 - 1) == str(2**128 - 1)
    assert short_integer(-(2**128 - 1)) == str(-(2**128 - 1))
    assert short_integer(2**128) == "an integer of 129 bits"
    assert short_integer(-(2**128)) == "a negative integer of 129 bits"
    assert short_integer(0) == "0"


CHECKS: list[tuple[Callable[[ModuleType, object], object], str]] = [
    (lambda core, bad: core.fit_decode_ring_slots(bad, 0, 0, 0), "start_slots"),
    (lambda core, bad: core.fit_decode_ring_slots(0, bad, 0, 0), "reserve_without_ring"),
    (lambda core, bad: core.fit_decode_ring_slots(0, 0, bad, 0), "bytes_per_ring_slot"),
    (lambda core, bad: core.fit_decode_ring_slots(0, 0, 0, bad), "free_mem"),
    (
        lambda core, bad: core.decode_rollback_ring_slots_with(bad, False, None, None, False),
        "num_ssm_layers",
    ),
    (
        lambda core, bad: core.decode_rollback_ring_slots_with(1, False, bad, None, False),
        "published",
    ),
    (lambda core, bad: core.DecodeRingDecision(bad), "slots"),
]


@pytest.mark.parametrize(("call", "name"), CHECKS)
def test_each_argument_is_named(
    core: ModuleType, call: Callable[[ModuleType, object], object], name: str
) -> None:
    with pytest.raises(TypeError, match=whole(f"{name} must be an integer, not str")):
        call(core, "1")
    with pytest.raises(
        TypeError, match=whole(f"{name} must be an integer: BadIndex.__index__ raised KeyError")
    ):
        call(core, BadIndex())
    message = f"{name} must be in 0..={USIZE_MAX}, got a negative integer of 201 bits"
    with pytest.raises(OverflowError, match=whole(message)):
        call(core, -(2**200))


def test_str_arguments_are_named(core: ModuleType) -> None:
    with pytest.raises(TypeError, match=whole("ring_override must be str or None, not int")):
        core.decode_rollback_ring_slots_with(1, False, None, 1, False)
    with pytest.raises(TypeError, match=whole("skip_reason must be str or None, not int")):
        core.DecodeRingDecision(0, 1)


def test_environment_variable_names_are_checked(core: ModuleType) -> None:
    with pytest.raises(TypeError, match=whole("variable names must be str, not int")):
        core.EnvironmentReader(["A", 1])
    for bad in ["", "A=B", "A\0B"]:
        with pytest.raises(ValueError, match=whole(f"invalid environment variable name {bad!r}")):
            core.EnvironmentReader([bad])


def test_the_twin_refuses_a_second_init() -> None:
    # The twin's own guard; the compiled core's __cinit__ runs once by construction.
    decision = _core_py.DecodeRingDecision(1)
    with pytest.raises(AttributeError, match=whole("DecodeRingDecision is immutable")):
        decision.__init__(2)
    assert decision == _core_py.DecodeRingDecision(1)


# --- the twin's once-cell -----------------------------------------------------


@pytest.fixture
def twin_cell(ring_environment: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """The twin's once-cell, emptied now and put back after the test."""
    ring_environment.setattr(_core_py, "_cell", None)
    return ring_environment


def test_the_twin_cell_first_write_wins(twin_cell: pytest.MonkeyPatch) -> None:
    with pytest.raises(TypeError, match=whole("slots must be an integer, not str")):
        _core_py.set_decode_ring_slots("3")  # type: ignore[arg-type]
    assert _core_py.published_decode_ring_slots() is None
    assert _core_py.set_decode_ring_slots(3) == 3
    assert _core_py.set_decode_ring_slots(5) == 3
    assert _core_py.published_decode_ring_slots() == 3


def test_the_twin_environment_decision_reads_the_cell(twin_cell: pytest.MonkeyPatch) -> None:
    decide = _facade.make_decode_rollback_ring_slots(_core_py)
    assert decide(48, False) == _core_py.DecodeRingDecision(8)
    _core_py.set_decode_ring_slots(2)
    assert decide(48, True) == _core_py.DecodeRingDecision(2)


# Ints where a bool goes: the result must hold a bool all the same.
ZERO: Any = 0
ONE: Any = 1


# --- the facade ---------------------------------------------------------------


def test_facade_type_errors() -> None:
    with pytest.raises(TypeError, match=whole("ssm-decode-ring-slots must be str, not int")):
        parse_decode_ring_slots(3)  # type: ignore[arg-type]
    message = "watchdogs value must be str or None, not bytes"
    with pytest.raises(TypeError, match=whole(message)):
        watchdogs_disabled_from_value(b"1")  # type: ignore[arg-type]


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


# --- preflight's publishing steps ---------------------------------------------


@pytest.fixture
def cell(ring_environment: pytest.MonkeyPatch) -> FakeCell:
    fake = FakeCell()

    def decide(layers: int, speculative: bool) -> Any:
        return _selector.decode_rollback_ring_slots_with(
            layers, speculative, fake.value, None, False
        )

    ring_environment.setattr(preflight, "set_decode_ring_slots", fake.set)
    ring_environment.setattr(preflight, "published_decode_ring_slots", fake.get)
    ring_environment.setattr(preflight, "decode_rollback_ring_slots", decide)
    return fake


def test_pin_publishes_or_refuses(cell: FakeCell) -> None:
    assert pin_decode_ring_slots(4) == 4
    assert pin_decode_ring_slots(4) == 4
    with pytest.raises(DecodeRingConflict, match=whole("a ring depth of 4 is already published")):
        pin_decode_ring_slots(2)
    assert cell.writes == [4, 4, 2]


def test_preflight_fits_and_publishes(cell: FakeCell) -> None:
    slot = RingSlot(32, PER_SEQ)
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
            PER_SEQ,
        ),
        1,
    )
    assert cell.writes == [1]


def test_preflight_pins_first(cell: FakeCell) -> None:
    slot = RingSlot(32, PER_SEQ)
    yardstick = PreLoadFreeMemory(RESERVE, FREE)
    found = preflight.preflight(48, ONE, slot, yardstick, pinned=2)
    assert found.use_speculative is True
    assert found == Preflight(
        48, True, RingFit(2, 2, 5_083_496_448, yardstick, None, 32, PER_SEQ), 2
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


def test_the_twin_reads_str_environments_too(ring_environment: pytest.MonkeyPatch) -> None:
    # Where the platform has no bytes environment (Windows), os.environ is read.
    ring_environment.setattr(os, "supports_bytes_environ", False)
    ring_environment.setenv("METRALE_SSM_DECODE_RING", "1")
    ring_environment.setenv("METRALE_DISABLE_WATCHDOGS", "caf\xe9")
    reader = _core_py.EnvironmentReader(
        ["METRALE_SSM_DECODE_RING", "METRALE_DISABLE_WATCHDOGS", "METRALE_SSM_RESERVE_RING_FULL"]
    )
    assert reader.read() == ("1", "caf\xe9", None)
    assert reader.present() == (True, True, False)
    ring_environment.setitem(os.environ, "METRALE_DISABLE_WATCHDOGS", "\udcff")
    assert reader.read() == ("1", None, None)
