"""One ring depth for every rank of a ``torch.distributed`` process group.

Tensor-parallel ranks each run their own preflight against their own free
memory. If one rank keeps a boundary that another has lost, a rollback
succeeds on one and declines on the other, and the ranks diverge. Each rank
fits its depth without publishing it (``preflight.fit_ring``), then::

    slots = agree_decode_ring_slots(fit.slots)

torch is an optional extra (``decode_ring[torch]``): this module imports it
when called, and ``import decode_ring`` never does.
"""

from __future__ import annotations

from typing import Any

from ._selector import published_decode_ring_slots, set_decode_ring_slots
from ._usize_py import usize

_NOTHING_PUBLISHED = -1
_INT64_MAX = 2**63 - 1


class DecodeRingAgreementError(RuntimeError):
    """The ranks cannot agree without shrinking a depth an operator pinned."""


def agree_decode_ring_slots(slots: int, group: Any = None) -> int:
    """All-reduces ``slots`` with MIN over ``group`` (the default group when
    None), publishes the agreed depth on this rank and returns it: every rank
    returns the same number.

    A depth already published on a rank was pinned by an operator and is
    never silently shrunk: where every rank published the same depth, that
    depth stands; where the published depths differ (or some ranks published
    one and others none), every rank raises ``DecodeRingAgreementError``
    naming each rank's value. Every rank must call this, as with any
    collective. Raises ``RuntimeError`` when the process group is not
    initialised, and ``OverflowError`` for a depth beyond int64 before any
    rank communicates.
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
    depth = usize(slots, "slots")
    published = published_decode_ring_slots()
    for name, value in (("slots", depth), ("published depth", published)):
        if value is not None and value > _INT64_MAX:
            raise OverflowError(f"{name} {value} does not fit the int64 the ranks exchange")

    device = _collective_device(dist.get_backend(group), torch)
    agreed = torch.tensor([depth], dtype=torch.int64, device=device)
    dist.all_reduce(agreed, op=dist.ReduceOp.MIN, group=group)
    mine = torch.tensor(
        [_NOTHING_PUBLISHED if published is None else published],
        dtype=torch.int64,
        device=device,
    )
    everyone = [torch.empty_like(mine) for _ in range(dist.get_world_size(group))]
    dist.all_gather(everyone, mine, group=group)
    pinned = [int(value.item()) for value in everyone]

    if len(set(pinned)) > 1:
        by_rank = ", ".join(
            f"rank {rank}: {'none' if value == _NOTHING_PUBLISHED else value}"
            for rank, value in enumerate(pinned)
        )
        raise DecodeRingAgreementError(
            f"ranks published different ring depths ({by_rank}); pin the same "
            "--ssm-decode-ring-slots on every rank, or none"
        )
    result = int(agreed.item()) if pinned[0] == _NOTHING_PUBLISHED else pinned[0]
    set_decode_ring_slots(result)
    return result


def _collective_device(backend: str, torch: Any) -> Any:
    # NCCL reduces CUDA tensors only; gloo and MPI take CPU tensors.
    if backend == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")
