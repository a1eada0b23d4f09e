"""The server preflight that consumes the depth: request, fit, publish.

A server's preflight takes the depth that its flags and environment ask for
(``requested_slots``), fits it to memory down the ladder against a yardstick
(``fit_ring``), and publishes the fitted depth so that the allocation follows
it (``autofit``). ``preflight`` runs all of it as ``decode-ring fit`` does.
The rules are the reference server's; this module is pure Python over
whichever core is in use.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import ClassVar, Final, Protocol

from ._facade import RESERVE_RING_FULL_VARIABLE, decode_rollback_ring_slots
from ._selector import (
    DECODE_RING_FIT_LADDER,
    DECODE_ROLLBACK_RING_SLOTS,
    EnvironmentReader,
    fit_decode_ring_slots,
    published_decode_ring_slots,
    set_decode_ring_slots,
)
from ._usize_py import USIZE_MAX, saturating_add, saturating_mul
from ._usize_py import usize as checked_usize
from .units import format_size

_reserve_ring_full: Final = EnvironmentReader((RESERVE_RING_FULL_VARIABLE,))


class DecodeRingConflict(RuntimeError):
    """Two depths for one process: the one published and another one asked
    for (a pinned flag, a parent's depth, a fit)."""


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


@dataclass(frozen=True)
class RingSlot:
    """One unit of ring depth: a snapshot of ``per_seq_state`` bytes for each
    of ``max_batch_size`` sequences. Raises ``OverflowError`` when its
    ``bytes`` exceed ``USIZE_MAX``."""

    max_batch_size: int
    per_seq_state: int
    bytes: int = field(init=False)

    def __post_init__(self) -> None:
        batch = checked_usize(self.max_batch_size, "max_batch_size")
        state = checked_usize(self.per_seq_state, "per_seq_state_bytes")
        product = batch * state
        if product > USIZE_MAX:
            raise OverflowError(
                f"max batch size {batch} x per-sequence state {state} B exceeds "
                f"the {USIZE_MAX} B a usize holds"
            )
        object.__setattr__(self, "bytes", product)


def slot_bytes(max_batch_size: int, per_seq_state_bytes: int) -> int:
    """Bytes of one unit of ring depth: one snapshot for every sequence of the
    batch. Raises ``OverflowError`` past ``USIZE_MAX``."""
    return RingSlot(max_batch_size, per_seq_state_bytes).bytes


class Yardstick(Protocol):
    """What the ring is fitted against: the ring goes ``beside`` the other
    bytes, and the sum must stay within ``limit``. The names say what the
    yardstick and its two terms are; ``refuses_boot`` says whether a total
    over the limit stops the server (else a later stage decides)."""

    @property
    def name(self) -> str: ...
    @property
    def beside_term(self) -> str: ...
    @property
    def limit_term(self) -> str: ...
    @property
    def refuses_boot(self) -> bool: ...
    @property
    def beside(self) -> int: ...
    @property
    def limit(self) -> int: ...


_YARDSTICK_PROPERTIES: Final = (
    "name",
    "beside_term",
    "limit_term",
    "refuses_boot",
    "beside",
    "limit",
)


def checked_yardstick(yardstick: object) -> Yardstick:
    """``yardstick`` when it has every property of one, its byte counts usizes; ``TypeError``
    otherwise (``OverflowError`` for a count out of range), before anything reads it."""
    if not all(hasattr(yardstick, name) for name in _YARDSTICK_PROPERTIES):
        raise TypeError(
            "yardstick must be a yardstick (PreLoadFreeMemory, PostLoadKvHeadroom, or an object "
            f"with their properties), not {type(yardstick).__name__}"
        )
    checked_usize(getattr(yardstick, "beside"), "yardstick.beside")  # noqa: B009
    checked_usize(getattr(yardstick, "limit"), "yardstick.limit")  # noqa: B009
    return yardstick  # type: ignore[return-value]


@dataclass(frozen=True)
class PreLoadFreeMemory:
    """Before the weights load: the ring beside the rest of the reserve,
    against free memory. A reserve that does not fit is refused."""

    reserve_without_ring: int
    free_mem: int
    name: ClassVar[str] = "pre-load free memory"
    beside_term: ClassVar[str] = "reserve without ring"
    limit_term: ClassVar[str] = "free memory"
    refuses_boot: ClassVar[bool] = True

    def __post_init__(self) -> None:
        checked_usize(self.reserve_without_ring, "reserve_without_ring")
        checked_usize(self.free_mem, "free_mem")

    @property
    def beside(self) -> int:
        return self.reserve_without_ring

    @property
    def limit(self) -> int:
        return self.free_mem


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

    @property
    def beside(self) -> int:
        return self.kv_floor

    @property
    def limit(self) -> int:
        return self.headroom


@dataclass(frozen=True)
class Rung:
    """One depth of the ladder: its ring, the total beside it, and whether
    that fits."""

    slots: int
    ring_bytes: int
    total_bytes: int
    fits: bool


@dataclass(frozen=True)
class RingFit:
    """The outcome of fitting the ring, with every term behind it: the
    depth, the request, one slot's bytes (and the batch and per-sequence
    state behind them, when known), the yardstick, and a warning when the
    depth was lowered."""

    slots: int
    requested: int
    slot_bytes: int
    yardstick: Yardstick
    warning: str | None = None
    max_batch_size: int | None = None
    per_seq_state: int | None = None

    @property
    def beside(self) -> int:
        return self.yardstick.beside

    @property
    def limit(self) -> int:
        return self.yardstick.limit

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
    def beside_alone_fits(self) -> bool:
        """Whether the other bytes fit without any ring (depth 0)."""
        return self.beside <= self.limit

    @property
    def refused(self) -> bool:
        """Whether the server refuses to boot: over the limit of a yardstick
        that refuses."""
        return not self.fits and self.yardstick.refuses_boot

    @property
    def deepest_fitting(self) -> int | None:
        """The deepest rung of the ladder that fits, or None when none does."""
        for rung in self.rungs():
            if rung.fits:
                return rung.slots
        return None

    def _ring_terms(self) -> str:
        if self.max_batch_size is None or self.per_seq_state is None:
            return f"ring {self.slots} x {format_size(self.slot_bytes)}"
        return (
            f"ring {self.slots} x batch {self.max_batch_size} x per-sequence state "
            f"{format_size(self.per_seq_state)}"
        )

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

    @property
    def refusal(self) -> str | None:
        """Why the server refuses to boot, in one line; None when it boots."""
        if not self.refused:
            return None
        yardstick = self.yardstick
        if not self.beside_alone_fits:
            return (
                f"refused: the {yardstick.beside_term} alone, {format_size(self.beside)}, "
                f"exceeds {yardstick.limit_term} {format_size(self.limit)} by "
                f"{format_size(self.beside - self.limit)}; no ring depth helps, 0 included"
            )
        return (
            f"refused: ring depth {self.slots} does not fit {yardstick.name}: "
            f"{self._ring_terms()} = {format_size(self.ring_bytes)}, "
            f"+ {yardstick.beside_term} {format_size(self.beside)} = "
            f"{format_size(self.total)} > {yardstick.limit_term} {format_size(self.limit)}; "
            f"the deepest depth that fits is {self.deepest_fitting}"
        )

    def rungs(self) -> list[Rung]:
        """Every depth of the ladder, with its bytes against this fit's limit."""
        rungs = []
        for slots in DECODE_RING_FIT_LADDER:
            at = replace(self, slots=slots)
            rungs.append(Rung(slots, at.ring_bytes, at.total, at.fits))
        return rungs


def fit_ring(
    requested: int,
    slot_bytes: int | RingSlot,
    yardstick: Yardstick,
    explicit: bool = False,
) -> RingFit:
    """Fits ``requested`` to ``yardstick``, touching no global state.

    ``slot_bytes`` is one ring slot: its bytes, or a ``RingSlot``, whose batch
    and per-sequence state the fit then quotes. ``requested`` stands, with no
    warning, when it is 0, when a slot is 0 bytes, when ``explicit`` (an
    operator pinned it), or when it fits. Otherwise the ladder picks the
    deepest rung that fits. Pre-load, when not even depth 0 fits, the ring is
    not the cause: ``requested`` stands with no warning and the fit is
    refused. Post-load, the depth drops to the fitted one (0 when nothing
    fits) and the warning says the KV budget stage decides.
    """
    requested = checked_usize(requested, "requested")
    yardstick = checked_yardstick(yardstick)
    if isinstance(slot_bytes, RingSlot):
        slot = slot_bytes
        kept = RingFit(
            requested,
            requested,
            slot.bytes,
            yardstick,
            None,
            slot.max_batch_size,
            slot.per_seq_state,
        )
    else:
        slot_size = checked_usize(slot_bytes, "slot_bytes")
        kept = RingFit(requested, requested, slot_size, yardstick)
    if requested == 0 or kept.slot_bytes == 0 or explicit or kept.fits:
        return kept
    fitted = replace(
        kept,
        slots=fit_decode_ring_slots(requested, yardstick.beside, kept.slot_bytes, yardstick.limit),
    )
    pin_hint = "pass --ssm-decode-ring-slots N to pin a depth (refused rather than shrunk)"
    limit = f"{yardstick.name} ({format_size(yardstick.limit)})"
    if fitted.fits:
        return replace(
            fitted,
            warning=(
                f"ssm decode ring lowered from {requested} to {fitted.slots} slots to "
                f"fit {limit}; {pin_hint}"
            ),
        )
    if not yardstick.refuses_boot:
        return replace(
            fitted,
            warning=(
                f"ssm decode ring lowered from {requested} to {fitted.slots} slots: "
                f"not even {fitted.slots} fits {limit}; the KV budget stage will decide; "
                f"{pin_hint}"
            ),
        )
    return kept


def autofit(
    requested: int,
    slot_bytes: int | RingSlot,
    yardstick: Yardstick,
) -> RingFit:
    """``fit_ring`` as a server's preflight runs it: a depth already published
    is explicit, and a fitted depth that differs from ``requested`` is
    published so that the allocation follows it. Raises
    ``DecodeRingConflict`` if another depth was published meanwhile."""
    checked_yardstick(yardstick)
    explicit = published_decode_ring_slots() is not None
    fit = fit_ring(requested, slot_bytes, yardstick, explicit)
    if fit.slots != requested:
        in_force = set_decode_ring_slots(fit.slots)
        if in_force != fit.slots:
            raise DecodeRingConflict(
                f"ring depth {in_force} was published while preflight fitted "
                f"{fit.slots}; the reserve and the allocation would differ"
            )
    return fit


def pin_decode_ring_slots(slots: int) -> int:
    """Publishes ``--ssm-decode-ring-slots N`` as the server flag does, before
    preflight. Raises ``DecodeRingConflict`` when another depth is already
    published."""
    in_force = set_decode_ring_slots(slots)
    if in_force != slots:
        raise DecodeRingConflict(f"a ring depth of {in_force} is already published")
    return in_force


@dataclass(frozen=True)
class Preflight:
    """What a server's preflight found: its inputs, the fit, and the depth
    published afterwards (``decode-ring fit`` shows it)."""

    num_ssm_layers: int
    use_speculative: bool
    fit: RingFit
    published: int | None


def preflight(
    num_ssm_layers: int,
    use_speculative: bool,
    slot: RingSlot,
    yardstick: Yardstick,
    pinned: int | None = None,
) -> Preflight:
    """Runs the server's preflight: publishes a ``pinned`` depth first (as the
    server flag is), requests a depth, fits and publishes it (``autofit``)."""
    if pinned is not None:
        pin_decode_ring_slots(pinned)
    requested = requested_slots(num_ssm_layers, use_speculative)
    fit = autofit(requested, slot, yardstick)
    return Preflight(num_ssm_layers, bool(use_speculative), fit, published_decode_ring_slots())
