"""Worker processes adopt the parent's published depth (``decode_ring.workers``)."""

from __future__ import annotations

import multiprocessing
import sys

import pytest

from .support import RunPython

POOLS = """
import concurrent.futures
import multiprocessing
import decode_ring
from decode_ring import workers

def published_in(pool_kind, method, adopt):
    context = multiprocessing.get_context(method)
    options = {}
    if adopt:
        initializer, initargs = workers.initializer()
        options = dict(initializer=initializer, initargs=initargs)
    if pool_kind == "pool":
        with context.Pool(2, **options) as pool:
            return sorted(set(pool.map(_published, range(4))))
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=context, **options) as executor:
        return sorted(set(executor.map(_published, range(4))))

def _published(_):
    return (decode_ring.published_decode_ring_slots(),
            decode_ring.decode_rollback_ring_slots(48, False).slots)

if __name__ == "__main__":
    decode_ring.set_decode_ring_slots(2)
"""


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
@pytest.mark.parametrize("pool_kind", ["pool", "executor"])
def test_workers_adopt_the_parents_depth(
    run_python: RunPython, method: str, pool_kind: str
) -> None:
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {method} start method on {sys.platform}")
    lines = run_python(
        POOLS
        + f"""
    print(published_in({pool_kind!r}, {method!r}, adopt=False))
    print(published_in({pool_kind!r}, {method!r}, adopt=True))
"""
    )
    # Without the initializer a fresh worker decides afresh: 8, not 2.
    assert lines == [[(None, 8)], [(2, 2)]]


def test_a_fork_child_inherits_the_cell(run_python: RunPython) -> None:
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no fork start method on {sys.platform}")
    lines = run_python(POOLS + "    print(published_in('pool', 'fork', adopt=False))\n")
    assert lines == [[(2, 2)]]


def test_a_parent_that_published_nothing_hands_down_nothing(run_python: RunPython) -> None:
    lines = run_python("""
        import decode_ring
        from decode_ring import workers
        initializer, initargs = workers.initializer()
        print(initargs)
        print(initializer(*initargs))
        print(decode_ring.published_decode_ring_slots())
    """)
    assert lines == [(None,), None, None]


def test_adopting_a_second_depth_is_an_error(run_python: RunPython) -> None:
    lines = run_python("""
        import decode_ring
        from decode_ring.workers import DecodeRingConflict, adopt_decode_ring_slots
        decode_ring.set_decode_ring_slots(4)
        print(adopt_decode_ring_slots(4))
        try:
            adopt_decode_ring_slots(8)
        except DecodeRingConflict as error:
            print(repr(str(error)))
        print(decode_ring.published_decode_ring_slots())
    """)
    assert lines == [4, "this process already published ring depth 4; its parent published 8", 4]


def test_adopting_bad_input_changes_nothing(run_python: RunPython) -> None:
    lines = run_python("""
        import decode_ring
        from decode_ring.workers import adopt_decode_ring_slots
        for bad in (-1, "4", 4.0):
            try:
                adopt_decode_ring_slots(bad)
            except (TypeError, OverflowError) as error:
                print(repr(type(error).__name__))
        print(decode_ring.published_decode_ring_slots())
    """)
    assert lines == ["OverflowError", "TypeError", "TypeError", None]
