"""Pure-Python twin of the compiled core ``_core.pyx``.

Same API, same results, same exception types for the same input. It is used
under ``DECODE_RING_NO_EXTENSIONS=1``, on PyPy, and wherever the compiled core
was not built. Integer arguments are Rust's ``usize``: anything with
``__index__`` in ``0..=USIZE_MAX``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Final, final

from ._usize_py import USIZE_MAX, optional_str, saturating_add, saturating_mul, usize

__all__ = [
    "DECISION_RULES",
    "DECODE_RING_FIT_LADDER",
    "DECODE_ROLLBACK_RING_SLOTS",
    "USIZE_MAX",
    "DecodeRingDecision",
    "EnvironmentDecision",
    "EnvironmentReader",
    "decode_rollback_ring_slots_with",
    "decode_rollback_ring_slots_with_rule",
    "fit_decode_ring_slots",
    "published_decode_ring_slots",
    "set_decode_ring_slots",
]

DECODE_ROLLBACK_RING_SLOTS: Final = 8
DECODE_RING_FIT_LADDER: Final = (8, 4, 2, 1, 0)

# The rules of the decision, in the reference's order of precedence, as
# ``decode_rollback_ring_slots_with_rule`` names the one that decided.
DECISION_RULES: Final = (
    "no SSM layers",
    "published",
    "METRALE_SSM_DECODE_RING=1",
    "METRALE_SSM_DECODE_RING=0",
    "speculative decode",
    "watchdogs disabled",
    "default",
)

_SKIP_SPECULATIVE: Final = "speculative decode active"
_SKIP_WATCHDOGS: Final = "watchdogs disabled"


@final
class DecodeRingDecision:
    """Outcome of the ring-depth decision: an immutable value.

    ``skip_reason`` is set only for the implicit skips (speculative decode,
    watchdogs disabled), so the allocating call site can log the saving.

    Immutable as the compiled one is, ``object.__setattr__`` included: the
    values live in two slots whose descriptors are taken out of the class
    (``_SLOTS``, ``_SKIP_REASON``), so nothing outside this module can set
    them, and the shared decisions below stay what they are. Final, too: a
    subclass is refused.
    """

    __slots__ = ("_skip_reason_value", "_slots_value")
    __match_args__ = ("slots", "skip_reason")

    if TYPE_CHECKING:
        slots: int
        skip_reason: str | None
    else:

        @property
        def slots(self):
            return _SLOTS.__get__(self, DecodeRingDecision)

        @property
        def skip_reason(self):
            return _SKIP_REASON.__get__(self, DecodeRingDecision)

    def __init__(self, slots: int, skip_reason: str | None = None) -> None:
        try:
            _SLOTS.__get__(self, DecodeRingDecision)
        except AttributeError:  # not set yet: this is the construction
            pass
        else:
            raise AttributeError("DecodeRingDecision is immutable")
        _SLOTS.__set__(self, usize(slots, "slots"))
        _SKIP_REASON.__set__(self, optional_str(skip_reason, "skip_reason"))

    def __init_subclass__(cls, **kwargs: object) -> None:
        raise TypeError(f"type '{__name__}.DecodeRingDecision' is not an acceptable base type")

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("DecodeRingDecision is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("DecodeRingDecision is immutable")

    def __eq__(self, other: object) -> bool:
        if type(other) is not DecodeRingDecision:
            return NotImplemented
        return self.slots == other.slots and self.skip_reason == other.skip_reason

    def __hash__(self) -> int:
        return hash((self.slots, self.skip_reason))

    def __repr__(self) -> str:
        return f"DecodeRingDecision(slots={self.slots!r}, skip_reason={self.skip_reason!r})"

    def __reduce__(self) -> tuple[type[DecodeRingDecision], tuple[int, str | None]]:
        return DecodeRingDecision, (self.slots, self.skip_reason)


# The slots' descriptors, out of the class: only this module holds them.
_SLOTS: Final[Any] = DecodeRingDecision.__dict__["_slots_value"]
_SKIP_REASON: Final[Any] = DecodeRingDecision.__dict__["_skip_reason_value"]
del DecodeRingDecision._slots_value, DecodeRingDecision._skip_reason_value  # type: ignore[attr-defined]


# The recurring outcomes are shared, so the hot path allocates nothing.
_NO_RING: Final = DecodeRingDecision(0)
_FULL_RING: Final = DecodeRingDecision(DECODE_ROLLBACK_RING_SLOTS)
_SKIPPED_FOR_SPECULATIVE: Final = DecodeRingDecision(0, _SKIP_SPECULATIVE)
_SKIPPED_FOR_WATCHDOGS: Final = DecodeRingDecision(0, _SKIP_WATCHDOGS)
_PUBLISHED_DECISIONS: Final = tuple(
    DecodeRingDecision(slots) for slots in range(DECODE_ROLLBACK_RING_SLOTS + 1)
)

# The once-cell. Reads need no lock: a published value never changes.
_cell: int | None = None
_cell_lock: Final = threading.Lock()


def set_decode_ring_slots(slots: int) -> int:
    """Publish the ring depth and return the depth in force; the first write wins."""
    global _cell
    slots = usize(slots, "slots")
    with _cell_lock:
        if _cell is None:
            _cell = slots
        return _cell


def published_decode_ring_slots() -> int | None:
    """The published depth, or None. Reads the cell without setting it."""
    return _cell


def decode_rollback_ring_slots_with(
    num_ssm_layers: int,
    use_speculative: bool,
    published: int | None,
    ring_override: str | None,
    watchdogs_disabled: bool,
) -> DecodeRingDecision:
    """Env-free core of the depth decision. Precedence, highest first:

    1. no SSM layers: 0;
    2. ``published``: that depth, also under speculative decode or with
       watchdogs disabled;
    3. ``ring_override`` ``"1"`` or ``"0"``: the full depth or 0;
    4. speculative decode or watchdogs disabled: 0, with a ``skip_reason``;
    5. otherwise the full depth.
    """
    return _decide(num_ssm_layers, use_speculative, published, ring_override, watchdogs_disabled)[0]


def decode_rollback_ring_slots_with_rule(
    num_ssm_layers: int,
    use_speculative: bool,
    published: int | None,
    ring_override: str | None,
    watchdogs_disabled: bool,
) -> tuple[DecodeRingDecision, str]:
    """``decode_rollback_ring_slots_with`` and the rule of ``DECISION_RULES``
    that decided."""
    return _decide(num_ssm_layers, use_speculative, published, ring_override, watchdogs_disabled)


# The rules, each with the outcome it gives: shared, so deciding allocates nothing.
_BY_NO_SSM_LAYERS: Final = (_NO_RING, DECISION_RULES[0])
_BY_OVERRIDE_FULL: Final = (_FULL_RING, DECISION_RULES[2])
_BY_OVERRIDE_NONE: Final = (_NO_RING, DECISION_RULES[3])
_BY_SPECULATIVE: Final = (_SKIPPED_FOR_SPECULATIVE, DECISION_RULES[4])
_BY_WATCHDOGS: Final = (_SKIPPED_FOR_WATCHDOGS, DECISION_RULES[5])
_BY_DEFAULT: Final = (_FULL_RING, DECISION_RULES[6])
_BY_PUBLISHED: Final = tuple((decision, DECISION_RULES[1]) for decision in _PUBLISHED_DECISIONS)


def _decide(
    num_ssm_layers: int,
    use_speculative: bool,
    published: int | None,
    ring_override: str | None,
    watchdogs_disabled: bool,
) -> tuple[DecodeRingDecision, str]:
    # The one copy of the order in this core. Every argument is checked
    # before any rule applies, in the compiled core's order: its flags
    # (``bint``) convert as the call starts, then the body checks the rest,
    # so that a call with several bad arguments raises the same error.
    use_speculative = bool(use_speculative)
    watchdogs_disabled = bool(watchdogs_disabled)
    num_ssm_layers = usize(num_ssm_layers, "num_ssm_layers")
    if published is not None:
        published = usize(published, "published")
    optional_str(ring_override, "ring_override")

    if num_ssm_layers == 0:
        return _BY_NO_SSM_LAYERS
    if published is not None:
        if published <= DECODE_ROLLBACK_RING_SLOTS:
            return _BY_PUBLISHED[published]
        return DecodeRingDecision(published), DECISION_RULES[1]
    if ring_override == "1":
        return _BY_OVERRIDE_FULL
    if ring_override == "0":
        return _BY_OVERRIDE_NONE
    if use_speculative:
        return _BY_SPECULATIVE
    if watchdogs_disabled:
        return _BY_WATCHDOGS
    return _BY_DEFAULT


def fit_decode_ring_slots(
    start_slots: int,
    reserve_without_ring: int,
    bytes_per_ring_slot: int,
    free_mem: int,
) -> int:
    """Largest ladder depth, at most ``start_slots``, with
    ``reserve_without_ring + depth * bytes_per_ring_slot <= free_mem``
    (saturating at ``USIZE_MAX``); 0 also when no depth fits."""
    start_slots = usize(start_slots, "start_slots")
    reserve_without_ring = usize(reserve_without_ring, "reserve_without_ring")
    bytes_per_ring_slot = usize(bytes_per_ring_slot, "bytes_per_ring_slot")
    free_mem = usize(free_mem, "free_mem")
    for slots in DECODE_RING_FIT_LADDER:
        if (
            slots <= start_slots
            and saturating_add(reserve_without_ring, saturating_mul(slots, bytes_per_ring_slot))
            <= free_mem
        ):
            return slots
    return 0


@final
class EnvironmentReader:
    """Reads environment variables as Rust's ``std::env::var`` does: ``None``
    when unset or not valid Unicode.

    Reads ``os.environ`` (as raw bytes where the platform has them, decoded
    as UTF-8 whatever the locale, as Rust does), so it sees changes made
    through it; unlike the compiled core it does not see ``os.putenv`` or
    ``os.unsetenv``.
    """

    __slots__ = ("_byte_names", "names")

    def __init__(self, names: Iterable[str]) -> None:
        names = tuple(names)
        for name in names:
            if not isinstance(name, str):
                raise TypeError(f"variable names must be str, not {type(name).__name__}")
            if not name or "=" in name or "\0" in name:
                raise ValueError(f"invalid environment variable name {name!r}")
        self.names: Final = names
        self._byte_names: Final = tuple(name.encode("utf-8") for name in names)

    def __repr__(self) -> str:
        return f"EnvironmentReader({self.names!r})"

    def read(self) -> tuple[str | None, ...]:
        """Each variable's value, or None where it is unset or not valid Unicode."""
        if os.supports_bytes_environ:
            return tuple(_valid_unicode_or_none(os.environb.get(name)) for name in self._byte_names)
        return tuple(_valid_unicode_or_none(os.environ.get(name)) for name in self.names)

    def present(self) -> tuple[bool, ...]:
        """Whether each variable is set at all, whatever its value."""
        if os.supports_bytes_environ:
            return tuple(name in os.environb for name in self._byte_names)
        return tuple(name in os.environ for name in self.names)


@final
class EnvironmentDecision:
    """The depth decision over the live environment.

    Reads the ring override and the watchdogs variables with an
    ``EnvironmentReader`` at every call and interprets the watchdogs value
    with ``interpret_watchdogs`` (this twin's reader hands back a new reading
    each time, so it interprets at every call).
    """

    __slots__ = ("_interpret_watchdogs", "_reader")

    def __init__(
        self,
        ring_override_variable: str,
        watchdogs_variable: str,
        interpret_watchdogs: Callable[[str | None], bool],
    ) -> None:
        # The compiled core's ``str`` arguments, refused in Cython's words (None passes on to
        # the reader, as there).
        for name, value in (
            ("ring_override_variable", ring_override_variable),
            ("watchdogs_variable", watchdogs_variable),
        ):
            if value is not None and type(value) is not str:
                raise TypeError(
                    f"Argument '{name}' has incorrect type (expected str, got "
                    f"{_type_name_in_c(type(value))})"
                )
        self._reader = EnvironmentReader((ring_override_variable, watchdogs_variable))
        self._interpret_watchdogs = interpret_watchdogs

    def __repr__(self) -> str:
        return f"EnvironmentDecision({self._reader.names!r})"

    def decode_rollback_ring_slots(
        self, num_ssm_layers: int, use_speculative: bool
    ) -> DecodeRingDecision:
        """The per-sequence ring depth, from the published depth and the
        environment, read afresh at every call."""
        # The compiled core's order: the flag as the call starts, then the count.
        use_speculative = bool(use_speculative)
        num_ssm_layers = usize(num_ssm_layers, "num_ssm_layers")
        ring_override, watchdogs = self._reader.read()
        return decode_rollback_ring_slots_with(
            num_ssm_layers,
            use_speculative,
            _cell,
            ring_override,
            bool(self._interpret_watchdogs(watchdogs)),
        )


def _type_name_in_c(kind: type) -> str:
    """A type's name as C code prints it (``tp_name``), as Cython's argument checks do: a
    class defined in Python by its name, a built-in one by its module and name
    (``numpy.int64``) unless it is one of Python's own (``int``)."""
    heap = getattr(kind, "__flags__", 0) & (1 << 9)  # Py_TPFLAGS_HEAPTYPE
    if heap or kind.__module__ == "builtins":
        return kind.__name__
    return f"{kind.__module__}.{kind.__qualname__}"


def _valid_unicode_or_none(value: bytes | str | None) -> str | None:
    # Raw bytes must be UTF-8; a str from Windows' os.environ carries what is
    # not valid Unicode as lone surrogates.
    if value is None:
        return None
    try:
        if isinstance(value, bytes):
            return value.decode("utf-8")
        value.encode("utf-8")
    except UnicodeError:
        return None
    return value
