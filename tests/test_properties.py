"""Property tests: the two cores agree, each is right, and both agree with the reference.

The agreement tests also check each result against what the reference says it
must be (the fit's definition, the documented exception types), so that two
cores wrong the same way fail. The reference oracle is
``shared/spec/decode_ring.rs`` itself, compiled with ``rustc``
(``tests/rust_oracle``). Its tests skip, saying why, where there is no
``rustc`` or no spec (set ``DECODE_RING_SPEC`` to its path); CI allows no
such skip (``tests/SKIPS.allow``).

Every edge is also an explicit ``@example``: under ``CI=true`` hypothesis
replays the same derandomised examples, which need not reach them.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from decode_ring._facade import (
    RUST_WHITESPACE,
    parse_decode_ring_slots,
    watchdogs_disabled_from_value,
)

USIZE_MAX = 2**64 - 1
ORACLE_SOURCES = Path(__file__).parent / "rust_oracle"

# Values near every edge the arithmetic has: 0, the ladder, powers of two,
# USIZE_MAX.
usizes = st.one_of(
    st.integers(0, 16),
    st.integers(USIZE_MAX - 16, USIZE_MAX),
    st.builds(
        lambda k, d: max(0, min(USIZE_MAX, 2**k + d)), st.integers(0, 64), st.integers(-2, 2)
    ),
    st.integers(0, USIZE_MAX),
)
not_usizes = st.one_of(
    st.integers(max_value=-1),
    st.integers(min_value=USIZE_MAX + 1),
    st.floats(allow_nan=True),
    st.text(max_size=3),
    st.binary(max_size=3),
    st.none(),
)
overrides = st.one_of(st.none(), st.sampled_from(["0", "1", "", " 1", "2"]), st.text(max_size=4))
slot_strings = st.one_of(
    st.text(),
    st.text(alphabet="+-0123456789 _", max_size=30),
    st.from_regex(r"\A\+?0*[0-9]{1,22}\Z"),
    st.sampled_from(["auto", "AUTO", "+", "-0", "18446744073709551615", "18446744073709551616"]),
)
watchdog_strings = st.one_of(
    st.none(),
    st.text(),
    st.builds(
        lambda left, word, right: left + word + right,
        # Rust's whitespace, and what Python alone would strip or is no space
        st.text(alphabet=RUST_WHITESPACE + "\x1c\x1d\x1e\x1f\u200b\ufeff", max_size=3),
        st.sampled_from(["1", "true", "TRUE", "True", "tRUE", "0", "yes", "\u0131"]),
        st.text(alphabet="\t\n \x1f\x85\xa0\u2029\u205f", max_size=3),
    ),
)


# The documented exception types (README, "Bad input raises"): an integer
# argument is a usize, so OverflowError when negative or above USIZE_MAX and
# TypeError for anything that is not an integer; a string argument takes str
# (or None where the reference takes an Option), else TypeError. Nothing else
# may escape a core.
DOCUMENTED_ERRORS = (TypeError, OverflowError)


def usize_error(value: object) -> type[Exception] | None:
    if isinstance(value, int):
        return None if 0 <= value <= USIZE_MAX else OverflowError
    return TypeError


def optional_usize_error(value: object) -> type[Exception] | None:
    return None if value is None else usize_error(value)


def optional_str_error(value: object) -> type[Exception] | None:
    return None if value is None or isinstance(value, str) else TypeError


Outcome = tuple[str, Any]


def outcome(function: Callable[..., object], *args: object) -> Outcome:
    """The result, or the type of a documented error; any other exception
    fails the test."""
    try:
        return ("ok", function(*args))
    except DOCUMENTED_ERRORS as error:
        return ("raised", type(error))


def check_raised(value: Outcome, errors: list[type[Exception] | None]) -> None:
    """``value`` raised exactly when an argument is bad, with the documented
    type of one of the bad arguments."""
    expected = {error for error in errors if error is not None}
    if expected:
        assert value[0] == "raised", (value, expected)
        assert value[1] in expected, (value, expected)
    else:
        assert value[0] == "ok", value


def decision(value: Outcome) -> Outcome:
    """A decision outcome as plain values, comparable across the cores."""
    if value[0] == "ok":
        return ("ok", (value[1].slots, value[1].skip_reason))
    return value


# The reference's fit, from its definition in plain integers: the largest
# depth of DECODE_RING_FIT_LADDER, at most start_slots, whose total fits;
# else 0. The reference saturates the total at USIZE_MAX, and free memory is
# at most USIZE_MAX, so a saturated total fits exactly when the true total
# does, or when free memory is USIZE_MAX itself.
LADDER = (8, 4, 2, 1, 0)


def the_fit(start: int, reserve: int, slot_bytes: int, free: int) -> int:
    def fits(slots: int) -> bool:
        return free == USIZE_MAX or reserve + slots * slot_bytes <= free

    return next((slots for slots in LADDER if slots <= start and fits(slots)), 0)


# Each saturating operation at its edge: for each rung a, bytes at
# USIZE_MAX // a and one past, against the product exactly or USIZE_MAX - 1;
# the sum at USIZE_MAX exactly and one past; a zero operand.
FIT_EDGES = [
    (8, 0, 2**61 - 1, 2**64 - 8),
    (8, 0, 2**61, USIZE_MAX - 1),
    (4, 0, 2**62 - 1, 2**64 - 4),
    (4, 0, 2**62, USIZE_MAX - 1),
    (2, 0, 2**63 - 1, 2**64 - 2),
    (2, 0, 2**63, USIZE_MAX - 1),
    (8, 0, 2**63 - 1, 2**64 - 2),
    (1, 0, USIZE_MAX, USIZE_MAX - 1),
    (1, 0, USIZE_MAX, USIZE_MAX),
    (1, USIZE_MAX - 5, 5, USIZE_MAX - 1),
    (1, USIZE_MAX - 5, 6, USIZE_MAX - 1),
    (8, USIZE_MAX, USIZE_MAX, USIZE_MAX),
    (8, 5, 0, 5),
    (0, 0, USIZE_MAX, 0),
]
BAD_FIT_ARGUMENTS: list[list[object]] = [
    [8, 0, 2**64, USIZE_MAX],
    [-1, 0, 0, 0],
    [8, 0.0, 0, 0],
    [8, 0, 0, None],
    [8, 0, "1", 2**64],
    [8, b"", -1, 0],
]
DECISION_EDGES: list[tuple[object, ...]] = [
    (0, True, 4, "1", True),
    (1, True, 0, "1", True),
    (1, True, None, "0", True),
    (48, False, 9, None, False),
    (USIZE_MAX, False, USIZE_MAX, "0", True),
    (48, True, None, " 1", False),
    (48, False, None, "", True),
    (48, False, None, None, False),
]
BAD_DECISION_ARGUMENTS: list[tuple[object, ...]] = [
    (0, False, -1, None, False),
    (0, False, None, 0, False),
    (2**64, False, None, None, False),
    (48.0, False, None, None, False),
    (48, True, 4, b"1", True),
    (48, False, 2**64, "1", False),
]

PARSE_EDGES = ["8", "9", "+8", "08", "-0", "", "auto", " 1", "\u0663", str(USIZE_MAX), str(2**64)]
WATCHDOG_EDGES = [None, "1", "true", "TRUE", " true\u3000", "\x1ctrue", "\u0131", "\ufeff1", "0"]

F = TypeVar("F", bound=Callable[..., None])


def with_examples(*examples: object) -> Callable[[F], F]:
    """``@example`` for each of ``examples``, in order."""

    def decorate(test: F) -> F:
        for value in reversed(examples):
            test = example(value)(test)
        return test

    return decorate


four_usizes = st.tuples(usizes, usizes, usizes, usizes)


def _at_a_rung_edge(
    start: int, rung: int, step: int, reserve: int, slack: int
) -> tuple[int, int, int, int]:
    slot_bytes = min(USIZE_MAX, max(0, USIZE_MAX // rung + step))
    total = min(USIZE_MAX, reserve + rung * slot_bytes)
    return (start, reserve, slot_bytes, max(0, min(USIZE_MAX, total + slack)))


# Fits whose free memory lies beside a rung's total where the product of a
# slot's bytes nears USIZE_MAX: independent draws seldom line up so.
rung_edges = st.builds(
    _at_a_rung_edge,
    st.sampled_from([0, 1, 2, 4, 7, 8, 9]),
    st.sampled_from([1, 2, 4, 8]),
    st.integers(-2, 2),
    st.sampled_from([0, 1, 2, 2**32]),
    st.integers(-2, 2),
)
fits = st.one_of(four_usizes, rung_edges)


@with_examples(*FIT_EDGES)
@given(fits)
def test_the_cores_agree_on_the_fit_and_it_is_the_reference_fit(
    both_cores: tuple[ModuleType, ModuleType], args: tuple[int, int, int, int]
) -> None:
    compiled, twin = both_cores
    expected = the_fit(*args)
    assert (compiled.fit_decode_ring_slots(*args), twin.fit_decode_ring_slots(*args)) == (
        expected,
        expected,
    )


@with_examples(*BAD_FIT_ARGUMENTS, *map(list, FIT_EDGES))
@given(st.lists(st.one_of(usizes, not_usizes), min_size=4, max_size=4))
def test_the_cores_reject_the_same_fit_input_with_a_documented_error(
    both_cores: tuple[ModuleType, ModuleType], args: list[object]
) -> None:
    compiled, twin = both_cores
    made = outcome(compiled.fit_decode_ring_slots, *args)
    assert made == outcome(twin.fit_decode_ring_slots, *args)
    check_raised(made, [usize_error(arg) for arg in args])
    if made[0] == "ok":
        numbers = [arg for arg in args if isinstance(arg, int)]
        assert len(numbers) == 4
        assert made[1] == the_fit(*numbers)


@with_examples(*DECISION_EDGES, *BAD_DECISION_ARGUMENTS)
@given(
    st.tuples(
        st.one_of(usizes, not_usizes),
        st.booleans(),
        st.one_of(st.none(), usizes, not_usizes),
        st.one_of(overrides, st.binary(max_size=2), st.integers(0, 2)),
        st.booleans(),
    )
)
def test_the_cores_agree_on_the_decision(
    both_cores: tuple[ModuleType, ModuleType], args: tuple[object, ...]
) -> None:
    compiled, twin = both_cores
    made = outcome(compiled.decode_rollback_ring_slots_with, *args)
    assert decision(made) == decision(outcome(twin.decode_rollback_ring_slots_with, *args))
    layers, _, published, override, _ = args
    check_raised(
        made,
        [usize_error(layers), optional_usize_error(published), optional_str_error(override)],
    )


@example(8, None)
@example(0, "watchdogs disabled")
@example(USIZE_MAX, "")
@example(2**64, None)
@example(-1, "x")
@example(1.0, None)
@example(8, 3)
@example(8, b"x")
@given(st.one_of(usizes, not_usizes), st.one_of(st.none(), st.text(max_size=5), st.integers()))
def test_the_cores_build_the_same_decisions(
    both_cores: tuple[ModuleType, ModuleType], slots: object, reason: object
) -> None:
    compiled, twin = both_cores
    made_compiled = outcome(compiled.DecodeRingDecision, slots, reason)
    made_twin = outcome(twin.DecodeRingDecision, slots, reason)
    assert decision(made_compiled) == decision(made_twin)
    check_raised(made_compiled, [usize_error(slots), optional_str_error(reason)])
    if made_compiled[0] == "ok":
        assert decision(made_compiled) == ("ok", (slots, reason))
        assert repr(made_compiled[1]) == repr(made_twin[1])
        assert hash(made_compiled[1]) == hash(made_twin[1])


# The reference oracle.


def spec_path() -> Path | None:
    candidates = [os.environ.get("DECODE_RING_SPEC")] + [
        str(parent / "shared" / "spec" / "decode_ring.rs")
        for parent in Path(__file__).resolve().parents
    ]
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


class Oracle:
    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process

    def ask(self, *fields: str) -> str:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(" ".join(fields) + "\n")
        self.process.stdin.flush()
        return self.process.stdout.readline().strip()


def compile_rust(rustc: str, *args: str) -> None:
    """Runs ``rustc``; a failure fails the tests with the compiler's words (a
    rustc older than 1.70 has no ``std::sync::OnceLock``, which the reference
    uses)."""
    completed = subprocess.run([rustc, *args], capture_output=True, text=True)
    if completed.returncode != 0:
        version = subprocess.run([rustc, "--version"], capture_output=True, text=True)
        pytest.fail(
            f"{rustc} ({version.stdout.strip()}) could not build the reference oracle "
            f"(1.70 or newer needed):\n{completed.stderr}"
        )


@pytest.fixture(scope="session")
def oracle(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Oracle]:
    rustc = shutil.which("rustc")
    spec = spec_path()
    if rustc is None:
        pytest.skip("no rustc here to build the reference oracle")
    if spec is None:
        pytest.skip("reference spec not found: set DECODE_RING_SPEC")
    build = tmp_path_factory.mktemp("rust_oracle")
    shutil.copy(ORACLE_SOURCES / "main.rs", build / "main.rs")
    shutil.copy(spec, build / "decode_ring.rs")
    kernels = build / "libmetrale_kernels.rlib"
    common = [rustc, "--edition", "2021", "-O"]
    compile_rust(
        *common,
        "--crate-type",
        "rlib",
        "--crate-name",
        "metrale_kernels",
        "-o",
        str(kernels),
        str(ORACLE_SOURCES / "metrale_kernels.rs"),
    )
    compile_rust(
        *common,
        "--extern",
        f"metrale_kernels={kernels}",
        "-L",
        str(build),
        "-o",
        str(build / "oracle"),
        str(build / "main.rs"),
    )
    process = subprocess.Popen(
        [str(build / "oracle")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    yield Oracle(process)
    process.kill()
    process.wait()


def hexed(text: str | None) -> str:
    return "none" if text is None else text.encode("utf-8").hex()


def parsed(text: str) -> str:
    try:
        slots = parse_decode_ring_slots(text)
    except ValueError as error:
        return f"err {hexed(str(error))}"
    return f"ok {'none' if slots is None else slots}"


@settings(max_examples=500)
@with_examples(*PARSE_EDGES)
@given(slot_strings)
def test_parse_matches_the_reference(oracle: Oracle, text: str) -> None:
    assert parsed(text) == oracle.ask("parse", hexed(text))


@settings(max_examples=500)
@with_examples(*WATCHDOG_EDGES)
@given(watchdog_strings)
def test_watchdogs_truthiness_matches_the_reference(oracle: Oracle, value: str | None) -> None:
    expected = oracle.ask("watchdogs", hexed(value))
    assert str(watchdogs_disabled_from_value(value)).lower() == expected


@settings(max_examples=300)
@with_examples(*FIT_EDGES)
@given(fits)
def test_the_fit_matches_the_reference(
    core: ModuleType, oracle: Oracle, args: tuple[int, int, int, int]
) -> None:
    expected = oracle.ask("fit", *map(str, args))
    assert str(core.fit_decode_ring_slots(*args)) == expected


def ask_decision(
    oracle: Oracle,
    layers: int,
    speculative: bool,
    published: int | None,
    override: str | None,
    watchdogs: bool,
) -> str:
    return oracle.ask(
        "with",
        str(layers),
        str(int(speculative)),
        "none" if published is None else str(published),
        hexed(override),
        str(int(watchdogs)),
    )


@settings(max_examples=300)
@with_examples(*DECISION_EDGES)
@given(st.tuples(usizes, st.booleans(), st.one_of(st.none(), usizes), overrides, st.booleans()))
def test_the_decision_matches_the_reference(
    core: ModuleType,
    oracle: Oracle,
    args: tuple[int, bool, int | None, str | None, bool],
) -> None:
    expected = ask_decision(oracle, *args)
    made = core.decode_rollback_ring_slots_with(*args)
    assert f"{made.slots} {hexed(made.skip_reason)}" == expected


def test_every_combination_of_the_rules_matches_the_reference(
    core: ModuleType, oracle: Oracle
) -> None:
    """Each rule against each other, and each input at its edges: the
    reference alone says what is right."""
    for case in itertools.product(
        (0, 1, 48, USIZE_MAX),
        (False, True),
        (None, 0, 1, 4, 8, 9, USIZE_MAX),
        (None, "1", "0", "", "2", "01", " 1", "auto"),
        (False, True),
    ):
        made = core.decode_rollback_ring_slots_with(*case)
        assert f"{made.slots} {hexed(made.skip_reason)}" == ask_decision(oracle, *case), case
