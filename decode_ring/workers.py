"""Worker processes adopt the depth their parent published.

The published depth lives in one process. A ``fork`` child inherits it with
the rest of the parent's memory; a ``spawn`` or ``forkserver`` child starts
with nothing published and would decide afresh. Hand such workers the
parent's depth before they decide::

    initializer, initargs = decode_ring.workers.initializer()
    pool = multiprocessing.get_context("spawn").Pool(
        initializer=initializer, initargs=initargs)
    executor = concurrent.futures.ProcessPoolExecutor(
        mp_context=multiprocessing.get_context("forkserver"),
        initializer=initializer, initargs=initargs)

A worker that already published another depth raises ``DecodeRingConflict``
in its initializer. ``ProcessPoolExecutor`` then fails its tasks with
``BrokenProcessPool``; ``multiprocessing.Pool`` starts new workers for ever
and never returns, so prefer the executor where a conflict can happen.
"""

from __future__ import annotations

from collections.abc import Callable

from ._selector import published_decode_ring_slots, set_decode_ring_slots
from .preflight import DecodeRingConflict

__all__ = ["DecodeRingConflict", "adopt_decode_ring_slots", "initializer"]


def adopt_decode_ring_slots(slots: int | None) -> int | None:
    """Publishes ``slots``, a depth handed down by a parent, in this process
    and returns the depth in force. ``None`` (the parent published nothing)
    adopts nothing. Raises ``DecodeRingConflict`` when this process already
    published another depth, rather than keeping two answers."""
    if slots is None:
        return published_decode_ring_slots()
    in_force = set_decode_ring_slots(slots)
    if in_force != slots:
        raise DecodeRingConflict(
            f"this process already published ring depth {in_force}; its parent published {slots}"
        )
    return in_force


def initializer() -> tuple[Callable[[int | None], int | None], tuple[int | None]]:
    """``(initializer, initargs)`` for a pool or executor: its workers adopt
    the depth this process has published now, before they run a task."""
    return adopt_decode_ring_slots, (published_decode_ring_slots(),)
