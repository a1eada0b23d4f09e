"""``decode_rollback_ring_slots`` reads the live environment at every call."""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

from decode_ring import _core_py

from .support import RunPython, blocks_allocated_by, whole

RING = "METRALE_SSM_DECODE_RING"
WATCHDOGS = "METRALE_DISABLE_WATCHDOGS"


@pytest.fixture
def compiled_core(both_cores: tuple[ModuleType, ModuleType]) -> ModuleType:
    return both_cores[0]


def outcome(
    api: SimpleNamespace, layers: int = 48, speculative: bool = False
) -> tuple[int, str | None]:
    decision = api.decode_rollback_ring_slots(layers, speculative)
    return decision.slots, decision.skip_reason


def test_unset_environment_gives_the_full_ring(
    api: SimpleNamespace, ring_environment: pytest.MonkeyPatch
) -> None:
    assert outcome(api) == (8, None)
    assert outcome(api, layers=0) == (0, None)
    assert outcome(api, speculative=True) == (0, "speculative decode active")


def test_every_call_reads_the_environment_afresh(
    api: SimpleNamespace, ring_environment: pytest.MonkeyPatch
) -> None:
    ring_environment.setenv(RING, "0")
    assert outcome(api) == (0, None)
    ring_environment.setenv(RING, "1")
    assert outcome(api, speculative=True) == (8, None)
    ring_environment.delenv(RING)
    ring_environment.setenv(WATCHDOGS, " TRUE ")
    assert outcome(api) == (0, "watchdogs disabled")
    ring_environment.setenv(WATCHDOGS, "false")
    assert outcome(api) == (8, None)
    ring_environment.setenv(WATCHDOGS, "1")
    ring_environment.setenv(RING, "1")
    assert outcome(api) == (8, None)
    ring_environment.setenv(RING, "2")
    assert outcome(api) == (0, "watchdogs disabled")
    ring_environment.delenv(WATCHDOGS)
    ring_environment.delenv(RING)
    assert outcome(api) == (8, None)


def test_a_value_of_the_same_length_is_not_mistaken_for_the_last(
    api: SimpleNamespace, ring_environment: pytest.MonkeyPatch
) -> None:
    for value, expected in [("1", (8, None)), ("0", (0, None)), ("1", (8, None))]:
        ring_environment.setenv(RING, value)
        assert outcome(api, speculative=True) == expected


def test_the_reader_reports_values_and_presence(
    api: SimpleNamespace, ring_environment: pytest.MonkeyPatch
) -> None:
    reader = api.EnvironmentReader((RING, WATCHDOGS))
    assert reader.names == (RING, WATCHDOGS)
    assert reader.read() == (None, None)
    assert reader.present() == (False, False)
    ring_environment.setenv(RING, "")
    ring_environment.setenv(WATCHDOGS, "caf\u00e9")
    assert reader.read() == ("", "caf\u00e9")
    assert reader.present() == (True, True)


@pytest.mark.skipif(not os.supports_bytes_environ, reason="no bytes environment here")
def test_a_value_that_is_not_utf8_reads_as_unset(
    api: SimpleNamespace, ring_environment: pytest.MonkeyPatch
) -> None:
    reader = api.EnvironmentReader((RING, WATCHDOGS))
    ring_environment.setitem(os.environb, RING.encode(), b"1\xff")
    ring_environment.setitem(os.environb, WATCHDOGS.encode(), b"\xc3\x28")
    assert reader.read() == (None, None)
    assert reader.present() == (True, True)
    ring_environment.setitem(os.environb, RING.encode(), b"1")
    assert reader.read() == ("1", None)


@pytest.mark.parametrize(
    ("names", "error"),
    [((1,), TypeError), (("",), ValueError), (("A=B",), ValueError), (("A\0",), ValueError)],
)
def test_the_reader_rejects_bad_names(
    api: SimpleNamespace, names: tuple[object, ...], error: type[Exception]
) -> None:
    with pytest.raises(error):
        api.EnvironmentReader(names)


def test_the_compiled_core_sees_putenv_and_unsetenv(
    compiled_core: ModuleType, ring_environment: pytest.MonkeyPatch
) -> None:
    from decode_ring._facade import make_decode_rollback_ring_slots

    decide = make_decode_rollback_ring_slots(compiled_core)
    try:
        os.putenv(RING, "0")
        assert decide(48, False).slots == 0
        os.putenv(WATCHDOGS, "true")
        os.putenv(RING, "2")
        assert decide(48, False).skip_reason == "watchdogs disabled"
        os.unsetenv(WATCHDOGS)
        assert decide(48, False).slots == 8
        os.putenv(RING, "0")
        assert decide(48, True).skip_reason is None
    finally:
        os.unsetenv(RING)
        os.unsetenv(WATCHDOGS)
    assert decide(48, False).slots == 8


def test_the_package_entry_point_reads_the_environment(
    ring_environment: pytest.MonkeyPatch,
) -> None:
    import decode_ring

    ring_environment.setenv(RING, "0")
    assert decode_ring.decode_rollback_ring_slots(48, False) == decode_ring.DecodeRingDecision(0)


@pytest.mark.parametrize(
    ("args", "error"),
    [((-1, False), OverflowError), ((1.5, False), TypeError), (("48", False), TypeError)],
)
def test_bad_arguments_raise(
    api: SimpleNamespace,
    ring_environment: pytest.MonkeyPatch,
    args: tuple[object, bool],
    error: type[Exception],
) -> None:
    with pytest.raises(error):
        api.decode_rollback_ring_slots(*args)


@pytest.mark.parametrize(
    "environment",
    [{}, {RING: "1", WATCHDOGS: "true"}, {RING: "2", WATCHDOGS: " TRUE "}, {RING: "0"}],
)
def test_reading_the_environment_allocates_nothing(
    api: SimpleNamespace, ring_environment: pytest.MonkeyPatch, environment: dict[str, str]
) -> None:
    for name, value in environment.items():
        ring_environment.setenv(name, value)
    decide = api.decode_rollback_ring_slots
    assert decide(48, False) is decide(48, False)
    assert blocks_allocated_by(decide, 48, False) == 0


@pytest.mark.parametrize("published", [0, 8])
def test_a_published_depth_is_a_shared_decision_too(
    run_python: RunPython, core: ModuleType, published: int
) -> None:
    lines = run_python(
        f"""
        import {core.__name__} as core
        from decode_ring._facade import make_decode_rollback_ring_slots
        from tests.support import blocks_allocated_by
        decide = make_decode_rollback_ring_slots(core)
        core.set_decode_ring_slots({published})
        print(decide(48, True) is decide(48, False))
        print(blocks_allocated_by(decide, 48, True))
        """,
        env={"PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
    )
    assert lines == [True, 0]


def test_a_name_is_matched_whole_not_as_a_prefix(
    api: SimpleNamespace, ring_environment: pytest.MonkeyPatch
) -> None:
    ring_environment.setenv(RING + "_X", "1")
    ring_environment.setenv(RING[:-1], "1")
    ring_environment.setenv("M", "1")
    reader = api.EnvironmentReader((RING, WATCHDOGS))
    assert reader.read() == (None, None)
    assert reader.present() == (False, False)
    ring_environment.setenv(RING, "")
    assert reader.read() == ("", None)
    assert reader.present() == (True, False)


def test_the_reader_finds_its_variables_in_a_large_environment(
    api: SimpleNamespace, ring_environment: pytest.MonkeyPatch
) -> None:
    for index in range(4000):
        ring_environment.setenv(f"DECODE_RING_TEST_PAD_{index:04d}", "x")
    reader = api.EnvironmentReader((RING, WATCHDOGS))
    assert reader.read() == (None, None)
    ring_environment.setenv(WATCHDOGS, " TRUE ")  # after every pad, at the end
    assert reader.read() == (None, " TRUE ")
    assert outcome(api) == (0, "watchdogs disabled")
    ring_environment.setenv(RING, "1")
    assert reader.read() == ("1", " TRUE ")
    assert outcome(api) == (8, None)


def test_an_unchanged_value_is_interpreted_once(
    compiled_core: ModuleType, ring_environment: pytest.MonkeyPatch
) -> None:
    from decode_ring import _facade

    interpreted: list[str | None] = []
    interpret = _facade.watchdogs_disabled_from_value

    def counting(value: str | None) -> bool:
        interpreted.append(value)
        return interpret(value)

    ring_environment.setattr(_facade, "watchdogs_disabled_from_value", counting)
    decide = _facade.make_decode_rollback_ring_slots(compiled_core)
    ring_environment.setenv(WATCHDOGS, " TRUE ")
    assert [decide(48, False).slots for _ in range(100)] == [0] * 100
    assert interpreted == [" TRUE "]
    ring_environment.setenv(WATCHDOGS, " FALSE ")
    assert decide(48, False).slots == 8
    ring_environment.setenv(WATCHDOGS, " TRUE ")
    assert decide(48, False).slots == 0
    assert interpreted == [" TRUE ", " FALSE ", " TRUE "]


def test_environment_variable_names_are_checked(core: ModuleType) -> None:
    with pytest.raises(TypeError, match=whole("variable names must be str, not int")):
        core.EnvironmentReader(["A", 1])
    for bad in ["", "A=B", "A\0B"]:
        with pytest.raises(ValueError, match=whole(f"invalid environment variable name {bad!r}")):
            core.EnvironmentReader([bad])


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
