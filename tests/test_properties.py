"""Property tests: the two cores agree, and both agree with the reference.

The reference oracle is ``shared/spec/decode_ring.rs`` itself, compiled with
``rustc`` (``tests/rust_oracle``). Its tests skip, saying why, where there is
no ``rustc`` or no spec (set ``DECODE_RING_SPEC`` to its path).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
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


Outcome = tuple[str, Any]


def outcome(function: Callable[..., object], *args: object) -> Outcome:
    try:
        return ("ok", function(*args))
    except Exception as error:
        return ("raised", type(error))


def decision(value: Outcome) -> Outcome:
    """A decision outcome as plain values, comparable across the cores."""
    if value[0] == "ok":
        return ("ok", (value[1].slots, value[1].skip_reason))
    return value


four_usizes = st.tuples(usizes, usizes, usizes, usizes)


@given(four_usizes)
def test_the_cores_agree_on_the_fit(
    both_cores: tuple[ModuleType, ModuleType], args: tuple[int, int, int, int]
) -> None:
    compiled, twin = both_cores
    assert compiled.fit_decode_ring_slots(*args) == twin.fit_decode_ring_slots(*args)


@given(st.lists(st.one_of(usizes, not_usizes), min_size=4, max_size=4))
def test_the_cores_reject_the_same_fit_input(
    both_cores: tuple[ModuleType, ModuleType], args: list[object]
) -> None:
    compiled, twin = both_cores
    assert outcome(compiled.fit_decode_ring_slots, *args) == outcome(
        twin.fit_decode_ring_slots, *args
    )


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
    assert decision(outcome(compiled.decode_rollback_ring_slots_with, *args)) == decision(
        outcome(twin.decode_rollback_ring_slots_with, *args)
    )


@given(st.one_of(usizes, not_usizes), st.one_of(st.none(), st.text(max_size=5), st.integers()))
def test_the_cores_build_the_same_decisions(
    both_cores: tuple[ModuleType, ModuleType], slots: object, reason: object
) -> None:
    compiled, twin = both_cores
    made_compiled = outcome(compiled.DecodeRingDecision, slots, reason)
    made_twin = outcome(twin.DecodeRingDecision, slots, reason)
    assert decision(made_compiled) == decision(made_twin)
    if made_compiled[0] == "ok":
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
    subprocess.run(
        [
            *common,
            "--crate-type",
            "rlib",
            "--crate-name",
            "metrale_kernels",
            "-o",
            str(kernels),
            str(ORACLE_SOURCES / "metrale_kernels.rs"),
        ],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [
            *common,
            "--extern",
            f"metrale_kernels={kernels}",
            "-L",
            str(build),
            "-o",
            str(build / "oracle"),
            str(build / "main.rs"),
        ],
        check=True,
        capture_output=True,
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
@given(slot_strings)
def test_parse_matches_the_reference(oracle: Oracle, text: str) -> None:
    assert parsed(text) == oracle.ask("parse", hexed(text))


@settings(max_examples=500)
@given(watchdog_strings)
def test_watchdogs_truthiness_matches_the_reference(oracle: Oracle, value: str | None) -> None:
    expected = oracle.ask("watchdogs", hexed(value))
    assert str(watchdogs_disabled_from_value(value)).lower() == expected


@settings(max_examples=300)
@given(four_usizes)
def test_the_fit_matches_the_reference(
    core: ModuleType, oracle: Oracle, args: tuple[int, int, int, int]
) -> None:
    expected = oracle.ask("fit", *map(str, args))
    assert str(core.fit_decode_ring_slots(*args)) == expected


@settings(max_examples=300)
@given(usizes, st.booleans(), st.one_of(st.none(), usizes), overrides, st.booleans())
def test_the_decision_matches_the_reference(
    core: ModuleType,
    oracle: Oracle,
    layers: int,
    speculative: bool,
    published: int | None,
    override: str | None,
    watchdogs: bool,
) -> None:
    expected = oracle.ask(
        "with",
        str(layers),
        str(int(speculative)),
        "none" if published is None else str(published),
        hexed(override),
        str(int(watchdogs)),
    )
    made = core.decode_rollback_ring_slots_with(layers, speculative, published, override, watchdogs)
    assert f"{made.slots} {hexed(made.skip_reason)}" == expected
