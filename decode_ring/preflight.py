"""The server preflight that consumes the depth: request, fit, publish.

A server's preflight takes the depth that its flags and environment ask for
(``requested_slots``), fits it to memory down the ladder against one of two
yardsticks (``fit_ring``), and publishes the fitted depth so that the
allocation follows it (``autofit``). The rules are the reference server's;
this module is pure Python over whichever core is in use.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar, Final, Protocol

from . import (
    DECODE_RING_FIT_LADDER,
    DECODE_ROLLBACK_RING_SLOTS,
    _selected_core,
    decode_rollback_ring_slots,
    fit_decode_ring_slots,
    published_decode_ring_slots,
    set_decode_ring_slots,
)
from ._checks import USIZE_MAX, saturating_add, saturating_mul
from ._checks import usize as checked_usize
from .units import format_size

RESERVE_RING_FULL_VARIABLE: Final = "METRALE_SSM_RESERVE_RING_FULL"
_reserve_ring_full = _selected_core.EnvironmentReader((RESERVE_RING_FULL_VARIABLE,))


def reserve_ring_full() -> bool:
    """Whether ``METRALE_SSM_RESERVE_RING_FULL`` is present, whatever its value."""
    return bool(_reserve_ring_full.present()[0])


def requested_slots(num_ssm_layers: int, use_speculative: bool) -> int:
    """The depth preflight reserves for: the full depth (0 without SSM layers)
    when ``METRALE_SSM_RESERVE_RING_FULL`` is present with any value, ``0``
    and empty included; otherwise ``decode_rollback_ring_slots(...).slots``."""
    layers = checked_usize(num_ssm_layers, "num_ssm_layers")
    if reserve_ring_full():
        return DECODE_ROLLBACK_RING_SLOTS if layers > 0 else 0
    return decode_rollback_ring_slots(layers, use_speculative).slots


def slot_bytes(max_batch_size: int, per_seq_state_bytes: int) -> int:
    """Bytes of one unit of ring depth: one snapshot for every sequence of the
    batch. Raises ``OverflowError`` past ``USIZE_MAX``."""
    batch = checked_usize(max_batch_size, "max_batch_size")
    state = checked_usize(per_seq_state_bytes, "per_seq_state_bytes")
    product = batch * state
    if product > USIZE_MAX:
        raise OverflowError(
            f"max batch size {batch} x per-sequence state {state} B exceeds "
            f"the {USIZE_MAX} B a usize holds"
        )
    return product


class Yardstick(Protocol):
    """What the ring is fitted against: ``bounds`` gives the pair
    ``(beside, limit)`` that ``fit_decode_ring_slots`` takes; the names say
    what the yardstick and its two terms are; ``refuses_boot`` whether a
    total over the limit stops the server (else a later stage decides)."""

    @property
    def name(self) -> str: ...
    @property
    def beside_term(self) -> str: ...
    @property
    def limit_term(self) -> str: ...
    @property
    def refuses_boot(self) -> bool: ...

    def bounds(self, reserve_without_ring: int, free_mem: int) -> tuple[int, int]: ...


@dataclass(frozen=True)
class PreLoadFreeMemory:
    """Before the weights load: the ring beside the rest of the reserve,
    against free memory. A reserve that does not fit is refused."""

    name: ClassVar[str] = "pre-load free memory"
    beside_term: ClassVar[str] = "reserve without ring"
    limit_term: ClassVar[str] = "free memory"
    refuses_boot: ClassVar[bool] = True

    def bounds(self, reserve_without_ring: int, free_mem: int) -> tuple[int, int]:
        return reserve_without_ring, free_mem


@dataclass(frozen=True)
class PostLoadKvHeadroom:
    """After the weights load: the ring beside a KV-cache floor, against the
    predicted headroom. What does not fit is left to the KV budget stage."""

    kv_floor: int
    headroom: int
    name: ClassVar[str] = "post-load KV headroom"
    beside_term: ClassVar[str] = "KV floor"
    limit_term: ClassVar[str] = "KV headroom"
    refuses_boot: ClassVar[bool] = False

    def __post_init__(self) -> None:
        checked_usize(self.kv_floor, "kv_floor")
        checked_usize(self.headroom, "headroom")

    def bounds(self, reserve_without_ring: int, free_mem: int) -> tuple[int, int]:
        return self.kv_floor, self.headroom


PRE_LOAD: Final = PreLoadFreeMemory()


@dataclass(frozen=True)
class RingFit:
    """The outcome of fitting the ring, with every byte term behind it."""

    slots: int
    requested: int
    slot_bytes: int
    yardstick: Yardstick
    beside: int
    limit: int
    warning: str | None

    @property
    def ring_bytes(self) -> int:
        return saturating_mul(self.slots, self.slot_bytes)

    @property
    def total(self) -> int:
        return saturating_add(self.beside, self.ring_bytes)

    @property
    def fits(self) -> bool:
        return self.total <= self.limit

    @property
    def lowered(self) -> bool:
        return self.slots < self.requested

    @property
    def refused(self) -> bool:
        """Whether the server refuses to boot: over the limit of a yardstick
        that refuses."""
        return not self.fits and self.yardstick.refuses_boot

    @property
    def decision(self) -> str:
        """One line naming the yardstick and every term."""
        relation = "<=" if self.fits else ">"
        return (
            f"ssm decode ring: {self.slots} of {self.requested} requested slots "
            f"against {self.yardstick.name}: ring {format_size(self.ring_bytes)} "
            f"({self.slots} x {format_size(self.slot_bytes)}) + "
            f"{self.yardstick.beside_term} {format_size(self.beside)} = "
            f"{format_size(self.total)} {relation} "
            f"{self.yardstick.limit_term} {format_size(self.limit)}"
        )

    def rungs(self) -> list[Rung]:
        """Every depth of the ladder, with its bytes against this fit's limit."""
        return [Rung.of(replace(self, slots=slots)) for slots in DECODE_RING_FIT_LADDER]


@dataclass(frozen=True)
class Rung:
    """One depth of the ladder: its ring, the total beside it, and whether
    that fits."""

    slots: int
    ring_bytes: int
    total_bytes: int
    fits: bool

    @classmethod
    def of(cls, fit: RingFit) -> Rung:
        return cls(fit.slots, fit.ring_bytes, fit.total, fit.fits)


def fit_ring(
    requested: int,
    slot_bytes: int,
    reserve_without_ring: int,
    free_mem: int,
    yardstick: Yardstick = PRE_LOAD,
    explicit: bool = False,
) -> RingFit:
    """Fits ``requested`` to ``yardstick``, touching no global state.

    ``requested`` stands, with no warning, when it is 0, when a slot is 0
    bytes, when ``explicit`` (an operator pinned it), or when it fits.
    Otherwise the ladder picks the deepest rung that fits. Pre-load, when not
    even that fits, the ring is not the cause: ``requested`` stands with no
    warning and the caller refuses. Post-load, the depth drops to the fitted
    one (0 when nothing fits) and the warning says the KV budget stage decides.
    """
    requested = checked_usize(requested, "requested")
    slot_bytes = checked_usize(slot_bytes, "slot_bytes")
    reserve_without_ring = checked_usize(reserve_without_ring, "reserve_without_ring")
    free_mem = checked_usize(free_mem, "free_mem")
    beside, limit = yardstick.bounds(reserve_without_ring, free_mem)

    def outcome(slots: int, warning: str | None = None) -> RingFit:
        return RingFit(slots, requested, slot_bytes, yardstick, beside, limit, warning)

    kept = outcome(requested)
    if requested == 0 or slot_bytes == 0 or explicit or kept.fits:
        return kept
    fitted = outcome(fit_decode_ring_slots(requested, beside, slot_bytes, limit))
    pin_hint = "pass --ssm-decode-ring-slots N to pin a depth (refused rather than shrunk)"
    if fitted.fits:
        return outcome(
            fitted.slots,
            f"ssm decode ring lowered from {requested} to {fitted.slots} slots to "
            f"fit {yardstick.name} ({format_size(limit)}); {pin_hint}",
        )
    if not yardstick.refuses_boot:
        return outcome(
            fitted.slots,
            f"ssm decode ring lowered from {requested} to {fitted.slots} slots: "
            f"not even {fitted.slots} fits {yardstick.name} "
            f"({format_size(limit)}); the KV budget stage will decide; {pin_hint}",
        )
    return kept


def autofit(
    requested: int,
    slot_bytes: int,
    reserve_without_ring: int,
    free_mem: int,
    yardstick: Yardstick = PRE_LOAD,
) -> RingFit:
    """``fit_ring`` as a server's preflight runs it: a depth already published
    is explicit, and a fitted depth that differs from ``requested`` is
    published so that the allocation follows it."""
    explicit = published_decode_ring_slots() is not None
    fit = fit_ring(requested, slot_bytes, reserve_without_ring, free_mem, yardstick, explicit)
    if fit.slots != requested:
        in_force = set_decode_ring_slots(fit.slots)
        if in_force != fit.slots:
            raise RuntimeError(
                f"ring depth {in_force} was published while preflight fitted "
                f"{fit.slots}; the reserve and the allocation would differ"
            )
    return fit
