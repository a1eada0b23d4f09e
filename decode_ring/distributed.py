"""One ring depth for every rank of a ``torch.distributed`` process group.

Tensor-parallel ranks each run their own preflight against their own free
memory. If one rank keeps a boundary that another has lost, a rollback
succeeds on one and declines on the other, and the ranks diverge. Each rank
fits its depth without publishing it (``preflight.fit_ring``), then::

    slots = agree_decode_ring_slots(fit.slots, timeout=60.0)

The agreement is one ``all_gather`` of a small fixed-size record per rank.
Every rank checks its own input and then always takes part in the exchange,
sending either its depths or what was wrong with them; each rank then works
out the verdict from the gathered records alone. So every rank returns the
same depth, or every rank raises the same ``DecodeRingAgreementError``, and
with a ``timeout`` no rank waits longer than that for the others.

The record is ``_RECORD_WORDS`` int64 words:

====== ==========================================================
word   meaning
====== ==========================================================
0      kind: ``_VALID`` or one of the invalid-input kinds below
1      the fitted depth (``slots``); -1 when the input is invalid
2      the published depth; -1 when none is published or invalid
3      length in bytes of the offending value's text (0 if valid)
4..9   that text: ASCII, at most ``_TEXT_BYTES`` bytes, 8 per word
====== ==========================================================

The text travels because an offending value need not fit an int64 (a depth
beyond int64, a non-integer); it is ``ascii()`` of the value, cut short.

torch is an optional extra (``decode_ring[torch]``): this module imports it
when called, and ``import decode_ring`` never does.
"""

from __future__ import annotations

import math
import operator
import struct
import time
from datetime import timedelta
from typing import Any, Final

from ._selector import published_decode_ring_slots, set_decode_ring_slots
from ._usize_py import usize

_NOTHING_PUBLISHED: Final = -1
_INT64_MAX: Final = 2**63 - 1
# The longest timeout a rank may take: every wait up to it works on every backend (gloo's wait
# ends at once, or never, past about 4e12 ms), and no preflight waits longer.
MAX_TIMEOUT: Final = timedelta(days=7)
_MILLISECOND: Final = timedelta(milliseconds=1)

# Record kinds. Each invalid kind names the input and what is wrong with it,
# so that every rank words the same error from the records alone.
_VALID: Final = 0
_PROBLEMS: Final[dict[int, tuple[str, str]]] = {
    1: ("slots", "is not an integer"),
    2: ("slots", "is negative"),
    3: ("slots", "does not fit the int64 the ranks exchange"),
    4: ("published depth", "does not fit the int64 the ranks exchange"),
    5: ("timeout", "is not a positive, finite number of seconds or a timedelta of at most 7 days"),
}
_SLOTS_NOT_INTEGER, _SLOTS_NEGATIVE, _SLOTS_BEYOND_INT64 = 1, 2, 3
_PUBLISHED_BEYOND_INT64, _BAD_TIMEOUT = 4, 5

_TEXT_WORDS: Final = 6
_TEXT_BYTES: Final = 8 * _TEXT_WORDS
_RECORD_WORDS: Final = 4 + _TEXT_WORDS
_TEXT_FORMAT: Final = f"<{_TEXT_WORDS}q"
_EXCHANGE: Final = "decode ring agreement all_gather"


class DecodeRingAgreementError(RuntimeError):
    """The ranks cannot agree on one depth: an input on some rank was invalid,
    the pinned depths differ, or the exchange failed or ran out of time.

    The first two are raised alike on every rank of the group, with the same
    message. The last two are raised on each rank that saw the failure."""


def agree_decode_ring_slots(
    slots: int, group: Any = None, timeout: float | timedelta | None = None
) -> int:
    """Agrees one ring depth over ``group`` (the default group when None),
    publishes it on this rank and returns it: the smallest ``slots`` of all
    ranks, unless a depth was pinned.

    A depth already published on a rank was pinned by an operator and is
    never silently shrunk: where every rank published the same depth, that
    depth stands; where the published depths differ (or some ranks published
    one and others none), every rank raises ``DecodeRingAgreementError``
    naming each rank's value.

    Every rank must call this, as with any collective, and each call is one
    ``all_gather``. Guarantees, once every rank has called it:

    - the same answer everywhere: every rank returns and publishes the same
      depth, or every rank raises;
    - the same error everywhere: an invalid input on any rank (``slots`` not
      an integer, negative or beyond int64, a published depth beyond int64,
      an invalid ``timeout``) makes every rank raise the same
      ``DecodeRingAgreementError`` naming each offending rank, its value and
      the reason; nothing is published. The offending rank raises it too,
      chained from its local ``TypeError`` or ``OverflowError`` where there
      is one. The exchange completed, so the group stays usable;
    - a bounded wait: with ``timeout`` (seconds, or a ``timedelta``) this
      rank waits at most that long for the others, then raises
      ``DecodeRingAgreementError`` saying that the ranks did not all arrive.
      Without it, the wait is bounded only by the group's own timeout. A
      timeout is more than 0 and at most ``MAX_TIMEOUT`` (7 days); every
      other is invalid, as above, and the rank that took it waits without a
      deadline.

    When the backend fails during the exchange (a peer exited or lost its
    connection) it raises ``DecodeRingAgreementError`` naming the exchange
    and this rank, chained from the backend's error. After a timeout or a
    failed exchange the group is not safe to reuse: a collective may still be
    in flight, and tearing the group down may block until the group's own
    timeout, so destroy the group or exit the process.

    Raises, before communicating, ``ImportError`` without torch,
    ``RuntimeError`` when the process group is not initialised, and
    ``ValueError`` when this process is not a member of ``group``.
    """
    try:
        import torch
        import torch.distributed as dist
    except ImportError as error:
        raise ImportError(
            "agree_decode_ring_slots needs torch: pip install 'decode_ring[torch]'"
        ) from error
    if not dist.is_available() or not dist.is_initialized():
        raise RuntimeError(
            "torch.distributed is not initialised: call "
            "torch.distributed.init_process_group() on every rank first"
        )
    rank = dist.get_rank(group)
    if rank < 0:
        raise ValueError("this process is not a member of the group it asks to agree over")
    world = dist.get_world_size(group)

    record, local_error = _own_record(slots, published_decode_ring_slots(), timeout)
    # A rank whose timeout is invalid still takes part, with no deadline: the
    # others learn why from its record instead of timing out.
    deadline = _deadline(timeout) if record[0] != _BAD_TIMEOUT else None

    records = _exchange(record, group, deadline, rank, world, dist, torch)
    return _verdict(records, local_error)


def _exchange(
    record: list[int],
    group: Any,
    deadline: timedelta | None,
    rank: int,
    world: int,
    dist: Any,
    torch: Any,
) -> list[list[int]]:
    """Every rank's record, from one ``all_gather`` that waits at most ``deadline``; raises
    ``DecodeRingAgreementError`` when the ranks do not all arrive in time or the backend
    fails."""
    device = _collective_device(dist.get_backend(group), torch)
    mine = torch.tensor(record, dtype=torch.int64, device=device)
    everyone = [torch.empty_like(mine) for _ in range(world)]
    work: Any = None
    started = time.monotonic()
    try:
        if deadline is None:
            dist.all_gather(everyone, mine, group=group)
        else:
            work = dist.all_gather(everyone, mine, group=group, async_op=True)
            # gloo raises on expiry; a backend that returns False instead is
            # treated the same way.
            if work.wait(timeout=deadline) is False:
                raise RuntimeError("the wait returned before the exchange completed")
    except RuntimeError as error:
        # Past the deadline the wait ended it, though the exchange may have completed since.
        late = deadline is not None and time.monotonic() - started >= deadline.total_seconds()
        if deadline is not None and work is not None and (late or not work.is_completed()):
            raise DecodeRingAgreementError(
                f"{_EXCHANGE}: the ranks did not all arrive within the "
                f"{deadline.total_seconds():g} s timeout (rank {rank} of a group of "
                f"{world}, waited {time.monotonic() - started:.1f} s); usually a rank "
                "failed before this call or never reached it. The group is not safe "
                "to reuse: destroy it or exit the process"
            ) from error
        raise DecodeRingAgreementError(
            f"{_EXCHANGE} failed on rank {rank} of a group of {world} after "
            f"{time.monotonic() - started:.1f} s; usually a peer exited or lost its "
            f"connection (backend: {_first_line(error)}). The group is not safe to "
            "reuse: destroy it or exit the process"
        ) from error
    records: list[list[int]] = torch.stack(everyone).cpu().tolist()
    return records


def _verdict(records: list[list[int]], local_error: BaseException | None) -> int:
    """The depth every rank's records agree on, published here: the pinned depth where every
    rank pinned the same, else the smallest fitted depth. Raises the same
    ``DecodeRingAgreementError`` on every rank for an invalid input or differing pins."""
    invalid = _invalid_inputs(records)
    if invalid is not None:
        raise DecodeRingAgreementError(invalid) from local_error
    pinned = [record[2] for record in records]
    if len(set(pinned)) > 1:
        by_rank = ", ".join(
            f"rank {rank}: {'none' if value == _NOTHING_PUBLISHED else value}"
            for rank, value in enumerate(pinned)
        )
        raise DecodeRingAgreementError(
            f"ranks published different ring depths ({by_rank}); pin the same "
            "--ssm-decode-ring-slots on every rank, or none"
        )
    fitted = min(record[1] for record in records)
    result = fitted if pinned[0] == _NOTHING_PUBLISHED else pinned[0]
    set_decode_ring_slots(result)
    return int(result)


def _own_record(
    slots: object, published: int | None, timeout: object
) -> tuple[list[int], Exception | None]:
    """This rank's record, and the local exception behind an invalid input
    (None when there is none). The first invalid input, in the order slots,
    published depth, timeout, is the one reported."""
    try:
        depth = usize(slots, "slots")
    except TypeError as error:
        return _invalid(_SLOTS_NOT_INTEGER, slots), error
    except OverflowError as error:
        negative = operator.index(slots) < 0  # type: ignore[arg-type]
        return _invalid(_SLOTS_NEGATIVE if negative else _SLOTS_BEYOND_INT64, slots), error
    if depth > _INT64_MAX:
        return _invalid(_SLOTS_BEYOND_INT64, depth), None
    if published is not None and published > _INT64_MAX:
        return _invalid(_PUBLISHED_BEYOND_INT64, published), None
    if timeout is not None and _deadline(timeout) is None:
        return _invalid(_BAD_TIMEOUT, timeout), None
    return [
        _VALID,
        depth,
        _NOTHING_PUBLISHED if published is None else published,
        0,
        *[0] * _TEXT_WORDS,
    ], None


def _invalid(kind: int, value: object) -> list[int]:
    text = _value_text(value).encode("ascii")
    words = struct.unpack(_TEXT_FORMAT, text.ljust(_TEXT_BYTES, b"\0"))
    return [kind, -1, -1, len(text), *words]


def _value_text(value: object) -> str:
    """``ascii(value)``, cut short to fit the record, saying how long it was."""
    try:
        text = ascii(value)
    except Exception:  # a broken __repr__, or an int too long to print
        text = (
            f"<int of {value.bit_length()} bits>"
            if isinstance(value, int)
            else f"<{type(value).__name__}>"
        )
    if len(text) <= _TEXT_BYTES:
        return text
    suffix = f"... ({len(text)} chars)"
    return text[: _TEXT_BYTES - len(suffix)] + suffix


def _invalid_inputs(records: list[list[int]]) -> str | None:
    """The message every rank raises when some rank's input was invalid,
    worded from the gathered records alone; None when every input was
    valid."""
    offenders = []
    for rank, record in enumerate(records):
        kind, length = record[0], record[3]
        if kind == _VALID:
            continue
        name, reason = _PROBLEMS.get(kind, ("input", f"is invalid (kind {kind})"))
        raw = struct.pack(_TEXT_FORMAT, *record[4 : 4 + _TEXT_WORDS])[: max(0, length)]
        offenders.append(f"rank {rank}: {name} {raw.decode('ascii', 'replace')} {reason}")
    if not offenders:
        return None
    return (
        f"invalid decode ring agreement input on {len(offenders)} of {len(records)} "
        f"ranks ({'; '.join(offenders)}); every rank raises this error and none "
        "published a depth"
    )


def _deadline(timeout: object) -> timedelta | None:
    """``timeout`` as a whole number of milliseconds (rounded up, so that a tiny timeout still
    waits), or None when it is not a number of seconds (an ``int`` of any size or a ``float``)
    or a ``timedelta`` above 0 and at most ``MAX_TIMEOUT``. Never raises: a rank with a refused
    timeout must still join the exchange."""
    if isinstance(timeout, timedelta):
        wait = timeout
    elif isinstance(timeout, int) and not isinstance(timeout, bool):
        if not 0 < timeout <= MAX_TIMEOUT.total_seconds():  # exact, whatever its size
            return None
        wait = timedelta(seconds=timeout)
    elif isinstance(timeout, float):
        if not (math.isfinite(timeout) and 0 < timeout <= MAX_TIMEOUT.total_seconds()):
            return None
        wait = timedelta(milliseconds=math.ceil(timeout * 1000))
    else:
        return None
    if not timedelta(0) < wait <= MAX_TIMEOUT:
        return None
    return _MILLISECOND * -(-wait // _MILLISECOND)


def _first_line(error: BaseException) -> str:
    line = (str(error).strip().splitlines() or [type(error).__name__])[0]
    return line if len(line) <= 200 else line[:197] + "..."


def _collective_device(backend: str, torch: Any) -> Any:
    # NCCL gathers CUDA tensors only; gloo and MPI take CPU tensors.
    if backend == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")
