"""The published depth, a process-wide once-cell: each test in a fresh process, or, for the
pure-Python twin, on a fresh import of it in this one."""

from __future__ import annotations

import importlib.util
from types import ModuleType
from unittest import mock

import pytest

from decode_ring import workers
from decode_ring._facade import make_decode_rollback_ring_slots

from .support import CORE_MODULES, RunPython, load_core, whole


@pytest.fixture(params=sorted(CORE_MODULES))
def core_module(request: pytest.FixtureRequest) -> str:
    load_core(request.param)  # skips where the compiled core may be missing
    return CORE_MODULES[request.param]


def test_first_write_wins(run_python: RunPython, core_module: str) -> None:
    lines = run_python(f"""
        import {core_module} as core
        print(core.published_decode_ring_slots())
        print(core.set_decode_ring_slots(4))
        print(core.set_decode_ring_slots(8))
        print(core.set_decode_ring_slots(0))
        print(core.published_decode_ring_slots())
    """)
    assert lines == [None, 4, 4, 4, 4]


def test_a_rejected_write_changes_nothing(run_python: RunPython, core_module: str) -> None:
    lines = run_python(f"""
        import {core_module} as core
        def rejected(value):
            try:
                core.set_decode_ring_slots(value)
            except (TypeError, OverflowError) as error:
                return type(error).__name__
        print([rejected(v) for v in (-1, 2**64, 4.0, "4", None)])
        print(core.published_decode_ring_slots())
        print(core.set_decode_ring_slots(2))
        print(repr(rejected(-1)))
        print(core.published_decode_ring_slots())
    """)
    assert lines == [
        ["OverflowError", "OverflowError", "TypeError", "TypeError", "TypeError"],
        None,
        2,
        "OverflowError",
        2,
    ]


def test_any_usize_can_be_published(run_python: RunPython, core_module: str) -> None:
    lines = run_python(f"""
        import {core_module} as core
        print(core.set_decode_ring_slots(2**64 - 1))
        print(core.published_decode_ring_slots())
    """)
    assert lines == [2**64 - 1, 2**64 - 1]


@pytest.mark.parametrize(
    "environment",
    [
        {"METRALE_SSM_DECODE_RING": "0", "METRALE_DISABLE_WATCHDOGS": "1"},
        {"METRALE_SSM_DECODE_RING": "1"},
        {"METRALE_DISABLE_WATCHDOGS": "true"},
        {},
    ],
)
def test_a_published_depth_outranks_the_environment_and_both_skips(
    run_python: RunPython, core_module: str, environment: dict[str, str]
) -> None:
    lines = run_python(
        f"""
        import {core_module} as core
        from decode_ring._facade import make_decode_rollback_ring_slots
        decide = make_decode_rollback_ring_slots(core)
        core.set_decode_ring_slots(4)
        for speculative in (False, True):
            decision = decide(48, speculative)
            print((decision.slots, decision.skip_reason))
        print(decide(0, True).slots)
        """,
        env=environment,
    )
    assert lines == [(4, None), (4, None), 0]


def test_a_published_zero_has_no_skip_reason(run_python: RunPython, core_module: str) -> None:
    lines = run_python(
        f"""
        import {core_module} as core
        from decode_ring._facade import make_decode_rollback_ring_slots
        core.set_decode_ring_slots(0)
        decision = make_decode_rollback_ring_slots(core)(48, True)
        print((decision.slots, decision.skip_reason))
        """,
        env={"METRALE_DISABLE_WATCHDOGS": "1"},
    )
    assert lines == [(0, None)]


def test_racing_threads_agree_on_one_winner(run_python: RunPython, core_module: str) -> None:
    lines = run_python(f"""
        import sys, threading
        import {core_module} as core
        sys.setswitchinterval(1e-6)
        threads = 64
        barrier = threading.Barrier(threads)
        returned = [None] * threads
        def publish(index):
            barrier.wait()
            returned[index] = core.set_decode_ring_slots(index % 9)
        workers = [threading.Thread(target=publish, args=(i,)) for i in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        print(sorted(set(returned)))
        print(core.published_decode_ring_slots())
    """)
    winners, published = lines
    assert len(winners) == 1
    assert winners == [published]
    assert published in range(9)


def test_the_package_publishes_through_the_core_in_use(run_python: RunPython) -> None:
    lines = run_python(
        """
        import decode_ring
        from decode_ring import _core_py
        decode_ring.set_decode_ring_slots(2)
        print(repr(decode_ring.CORE))
        print(_core_py.published_decode_ring_slots())
        print(decode_ring.decode_rollback_ring_slots(48, False).slots)
        """,
        env={"DECODE_RING_NO_EXTENSIONS": "1"},
    )
    assert lines == ["python", 2, 2]


# --- the twin's cell, in this process -------------------------------------------------------------


@pytest.fixture
def fresh_twin(ring_environment: pytest.MonkeyPatch) -> ModuleType:
    """The pure-Python core imported afresh, as a new process imports it: a module of its own,
    with its own empty once-cell, which the test may set. The package's twin, and the process's
    published depth, stay as they were."""
    spec = importlib.util.find_spec("decode_ring._core_py")
    assert spec is not None and spec.loader is not None
    twin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(twin)
    return twin


def test_the_twin_cell_first_write_wins(fresh_twin: ModuleType) -> None:
    with pytest.raises(TypeError, match=whole("slots must be an integer, not str")):
        fresh_twin.set_decode_ring_slots("3")
    assert fresh_twin.published_decode_ring_slots() is None
    assert fresh_twin.set_decode_ring_slots(3) == 3
    assert fresh_twin.set_decode_ring_slots(5) == 3
    assert fresh_twin.published_decode_ring_slots() == 3


def test_the_twin_environment_decision_reads_the_cell(fresh_twin: ModuleType) -> None:
    decide = make_decode_rollback_ring_slots(fresh_twin)
    assert decide(48, False) == fresh_twin.DecodeRingDecision(8)
    fresh_twin.set_decode_ring_slots(2)
    assert decide(48, True) == fresh_twin.DecodeRingDecision(2)


def test_a_worker_adopts_its_parents_depth_into_its_cell(fresh_twin: ModuleType) -> None:
    with mock.patch.multiple(
        workers,
        set_decode_ring_slots=fresh_twin.set_decode_ring_slots,
        published_decode_ring_slots=fresh_twin.published_decode_ring_slots,
    ):
        assert workers.initializer() == (workers.adopt_decode_ring_slots, (None,))
        # The parent published nothing: nothing is adopted.
        assert workers.adopt_decode_ring_slots(None) is None
        assert fresh_twin.published_decode_ring_slots() is None
        assert workers.adopt_decode_ring_slots(3) == 3
        assert fresh_twin.published_decode_ring_slots() == 3
        assert workers.adopt_decode_ring_slots(3) == 3
        assert workers.adopt_decode_ring_slots(None) == 3
        assert workers.initializer() == (workers.adopt_decode_ring_slots, (3,))
        message = "this process already published ring depth 3; its parent published 5"
        with pytest.raises(workers.DecodeRingConflict, match=whole(message)):
            workers.adopt_decode_ring_slots(5)
        assert fresh_twin.published_decode_ring_slots() == 3
