"""The cores' argument checks: every argument named in its refusal, with its type and its range,
the same in both cores; and the usize helpers that say them.

The argument checks' messages are the same in both cores, so those tests run on both (the
``core`` fixture).
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest

from decode_ring import USIZE_MAX
from decode_ring._usize_py import optional_str, short_integer, usize

from .support import whole


class BadIndex:
    def __index__(self) -> int:
        raise KeyError("no")


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
