# cython: language_level=3, auto_pickle=False, autotestdict=False
"""Compiled core: the ladder fit, the precedence core, the once-cell and the
environment reader.

The pure-Python twin ``_core_py.py`` has the same API, the same results and
raises the same exception types for the same input; ``tests/`` runs one suite
against both. Integer arguments are Rust's ``usize``, converted by
``_usize.as_usize``: ``OverflowError`` for a negative or too large value,
``TypeError`` for anything without ``__index__``.

The module does not declare itself free-threading compatible: the once-cell
relies on the GIL to make its check-and-set atomic.
"""

cimport cython
from libc.stdint cimport SIZE_MAX
from libc.string cimport memset, strcmp, strncmp
from cpython.mem cimport PyMem_Malloc, PyMem_Free
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromString

from decode_ring._usize cimport as_usize

cdef extern from *:
    """
    /* std::env::var reads the live process environment. Python's os.environ,
       os.putenv and os.unsetenv all update it: on Windows through _wputenv,
       which keeps the CRT's wide copy current, so read that one there, a
       variable at a time. Elsewhere the reader scans environ itself, once for
       all of its variables; on macOS a shared library reaches environ
       through _NSGetEnviron. */
    #include <stdlib.h>
    #ifdef _WIN32
    #include <wchar.h>
    static PyObject *decode_ring_getenv_wide(PyObject *name) {
        wchar_t *wide_name = PyUnicode_AsWideCharString(name, NULL);
        if (wide_name == NULL) return NULL;
        const wchar_t *value = _wgetenv(wide_name);
        PyMem_Free(wide_name);
        if (value == NULL) Py_RETURN_NONE;
        return PyUnicode_FromWideChar(value, -1);
    }
    static char **decode_ring_environ(void) { return NULL; }
    #define DECODE_RING_WIDE_ENVIRONMENT 1
    #else
    #ifdef __APPLE__
    #include <crt_externs.h>
    static char **decode_ring_environ(void) { return *_NSGetEnviron(); }
    #else
    extern char **environ;
    static char **decode_ring_environ(void) { return environ; }
    #endif
    static PyObject *decode_ring_getenv_wide(PyObject *name) {
        (void)name; Py_RETURN_NONE;
    }
    #define DECODE_RING_WIDE_ENVIRONMENT 0
    #endif
    """
    char **decode_ring_environ() noexcept
    object decode_ring_getenv_wide(str name)
    const bint DECODE_RING_WIDE_ENVIRONMENT


cdef size_t[5] FIT_LADDER = [8, 4, 2, 1, 0]
cdef size_t FULL_DEPTH = FIT_LADDER[0]

DECODE_ROLLBACK_RING_SLOTS = FULL_DEPTH
DECODE_RING_FIT_LADDER = tuple(FIT_LADDER)
USIZE_MAX = SIZE_MAX
# The rules of the decision, in the reference's order of precedence, as
# decode_rollback_ring_slots_with_rule names the one that decided.
cdef enum Rule:
    RULE_NO_SSM_LAYERS
    RULE_PUBLISHED
    RULE_OVERRIDE_FULL
    RULE_OVERRIDE_NONE
    RULE_SPECULATIVE
    RULE_WATCHDOGS
    RULE_DEFAULT

cdef tuple RULE_NAMES = (
    "no SSM layers",
    "published",
    "METRALE_SSM_DECODE_RING=1",
    "METRALE_SSM_DECODE_RING=0",
    "speculative decode",
    "watchdogs disabled",
    "default",
)
DECISION_RULES = RULE_NAMES
cdef str SKIP_SPECULATIVE = "speculative decode active"
cdef str SKIP_WATCHDOGS = "watchdogs disabled"


cdef inline size_t saturating_add(size_t a, size_t b) noexcept nogil:
    cdef size_t total = a + b
    return SIZE_MAX if total < a else total


cdef inline size_t saturating_mul(size_t a, size_t b) noexcept nogil:
    if a != 0 and b > SIZE_MAX // a:
        return SIZE_MAX
    return a * b


cdef inline object checked_optional_str(object value, str name):
    if value is not None and not isinstance(value, str):
        raise TypeError(
            f"{name} must be str or None, not {type(value).__name__}"
        )
    return value


@cython.final
cdef class DecodeRingDecision:
    """Outcome of the ring-depth decision: an immutable value.

    ``skip_reason`` is set only for the implicit skips (speculative decode,
    watchdogs disabled), so the allocating call site can log the saving.
    """

    cdef readonly size_t slots
    cdef readonly object skip_reason

    __match_args__ = ("slots", "skip_reason")

    def __cinit__(self, slots, skip_reason=None):
        self.slots = as_usize(slots, "slots")
        self.skip_reason = checked_optional_str(skip_reason, "skip_reason")

    def __eq__(self, other):
        if type(other) is not DecodeRingDecision:
            return NotImplemented
        cdef DecodeRingDecision that = <DecodeRingDecision>other
        return self.slots == that.slots and self.skip_reason == that.skip_reason

    def __hash__(self):
        return hash((self.slots, self.skip_reason))

    def __repr__(self):
        return (
            f"DecodeRingDecision(slots={self.slots!r}, "
            f"skip_reason={self.skip_reason!r})"
        )

    def __reduce__(self):
        return DecodeRingDecision, (self.slots, self.skip_reason)


# The recurring outcomes are shared, so the hot path allocates nothing.
cdef DecodeRingDecision NO_RING = DecodeRingDecision(0)
cdef DecodeRingDecision FULL_RING = DecodeRingDecision(FULL_DEPTH)
cdef DecodeRingDecision SKIPPED_FOR_SPECULATIVE = DecodeRingDecision(0, SKIP_SPECULATIVE)
cdef DecodeRingDecision SKIPPED_FOR_WATCHDOGS = DecodeRingDecision(0, SKIP_WATCHDOGS)
cdef tuple PUBLISHED_DECISIONS = tuple(
    [DecodeRingDecision(slots) for slots in range(FULL_DEPTH + 1)]
)


cdef inline DecodeRingDecision published_decision(size_t slots):
    if slots <= FULL_DEPTH:
        return <DecodeRingDecision>PUBLISHED_DECISIONS[slots]
    return DecodeRingDecision(slots)


# The once-cell. Every access runs with the GIL held and calls nothing that
# could release it between the check and the set, so the first write wins.
cdef bint cell_is_set = False
cdef size_t cell_slots = 0


def set_decode_ring_slots(slots):
    """Publish the ring depth and return the depth in force; the first write wins."""
    global cell_is_set, cell_slots
    cdef size_t checked_slots = as_usize(slots, "slots")
    if not cell_is_set:
        cell_slots = checked_slots
        cell_is_set = True
    return cell_slots


def published_decode_ring_slots():
    """The published depth, or None. Reads the cell without setting it."""
    if cell_is_set:
        return cell_slots
    return None


cdef inline DecodeRingDecision decide(
    object num_ssm_layers,
    bint use_speculative,
    object published,
    object ring_override,
    bint watchdogs_disabled,
    Rule *rule,
):
    # The one copy of the order in this core. Every argument is checked
    # before any rule applies, so bad input raises whichever rule would have
    # decided.
    cdef size_t ssm_layers = as_usize(num_ssm_layers, "num_ssm_layers")
    cdef size_t published_slots = 0
    if published is not None:
        published_slots = as_usize(published, "published")
    checked_optional_str(ring_override, "ring_override")

    if ssm_layers == 0:
        rule[0] = RULE_NO_SSM_LAYERS
        return NO_RING
    if published is not None:
        rule[0] = RULE_PUBLISHED
        return published_decision(published_slots)
    if ring_override is not None:
        if ring_override == "1":
            rule[0] = RULE_OVERRIDE_FULL
            return FULL_RING
        if ring_override == "0":
            rule[0] = RULE_OVERRIDE_NONE
            return NO_RING
    if use_speculative:
        rule[0] = RULE_SPECULATIVE
        return SKIPPED_FOR_SPECULATIVE
    if watchdogs_disabled:
        rule[0] = RULE_WATCHDOGS
        return SKIPPED_FOR_WATCHDOGS
    rule[0] = RULE_DEFAULT
    return FULL_RING


def decode_rollback_ring_slots_with(
    num_ssm_layers,
    bint use_speculative,
    published,
    ring_override,
    bint watchdogs_disabled,
):
    """Env-free core of the depth decision. Precedence, highest first:

    1. no SSM layers: 0;
    2. ``published``: that depth, also under speculative decode or with
       watchdogs disabled;
    3. ``ring_override`` ``"1"`` or ``"0"``: the full depth or 0;
    4. speculative decode or watchdogs disabled: 0, with a ``skip_reason``;
    5. otherwise the full depth.
    """
    cdef Rule rule
    return decide(
        num_ssm_layers, use_speculative, published, ring_override, watchdogs_disabled, &rule
    )


def decode_rollback_ring_slots_with_rule(
    num_ssm_layers,
    bint use_speculative,
    published,
    ring_override,
    bint watchdogs_disabled,
):
    """``decode_rollback_ring_slots_with`` and the rule of ``DECISION_RULES``
    that decided."""
    cdef Rule rule
    decision = decide(
        num_ssm_layers, use_speculative, published, ring_override, watchdogs_disabled, &rule
    )
    return decision, RULE_NAMES[rule]


def fit_decode_ring_slots(
    start_slots,
    reserve_without_ring,
    bytes_per_ring_slot,
    free_mem,
):
    """Largest ladder depth, at most ``start_slots``, with
    ``reserve_without_ring + depth * bytes_per_ring_slot <= free_mem``
    (saturating at ``USIZE_MAX``); 0 also when no depth fits."""
    cdef size_t start = as_usize(start_slots, "start_slots")
    cdef size_t reserve = as_usize(reserve_without_ring, "reserve_without_ring")
    cdef size_t slot_bytes = as_usize(bytes_per_ring_slot, "bytes_per_ring_slot")
    cdef size_t available = as_usize(free_mem, "free_mem")
    cdef size_t slots
    for slots in FIT_LADDER:
        if slots <= start and saturating_add(
            reserve, saturating_mul(slots, slot_bytes)
        ) <= available:
            return slots
    return 0


@cython.final
cdef class EnvironmentReader:
    """Reads variables of the live process environment as Rust's
    ``std::env::var`` does: ``None`` when unset or not valid Unicode.

    Sees changes made through ``os.environ``, ``os.putenv`` and
    ``os.unsetenv`` at the next ``read()``. One ``read()`` scans the
    environment once for all of its variables, so its cost grows with the
    number of variables in the environment, not with the number it reads.
    The values last read are kept: while they are unchanged (a ``strcmp``
    each), ``read()`` decodes nothing and returns the very same tuple, so a
    caller can keep what it derived from that tuple.
    """

    cdef readonly tuple names
    cdef list encoded_names
    cdef list last_raw
    cdef tuple last_values
    cdef Py_ssize_t count
    cdef const char **name_pointers
    cdef size_t *name_lengths
    cdef const char **found
    # Whether a name starts with the byte: most entries of the environment
    # are passed over on their first byte.
    cdef unsigned char starts_a_name[256]

    def __cinit__(self, names):
        names = tuple(names)
        for name in names:
            if not isinstance(name, str):
                raise TypeError(
                    f"variable names must be str, not {type(name).__name__}"
                )
            if not name or "=" in name or "\0" in name:
                raise ValueError(f"invalid environment variable name {name!r}")
        self.names = names
        self.count = len(names)
        self.encoded_names = [name.encode("utf-8") for name in names]
        self.last_raw = [None] * self.count
        self.last_values = (None,) * self.count
        self.name_pointers = <const char **>PyMem_Malloc((self.count + 1) * sizeof(char *))
        self.name_lengths = <size_t *>PyMem_Malloc((self.count + 1) * sizeof(size_t))
        self.found = <const char **>PyMem_Malloc((self.count + 1) * sizeof(char *))
        if not self.name_pointers or not self.name_lengths or not self.found:
            raise MemoryError()
        cdef Py_ssize_t index
        memset(self.starts_a_name, 0, sizeof(self.starts_a_name))
        for index in range(self.count):
            # encoded_names keeps the bytes these pointers point into alive.
            self.name_pointers[index] = PyBytes_AS_STRING(self.encoded_names[index])
            self.name_lengths[index] = len(self.encoded_names[index])
            self.starts_a_name[<unsigned char>self.name_pointers[index][0]] = 1

    def __dealloc__(self):
        PyMem_Free(self.name_pointers)
        PyMem_Free(self.name_lengths)
        PyMem_Free(self.found)

    def __repr__(self):
        return f"EnvironmentReader({self.names!r})"

    cdef void scan(self) noexcept:
        # One pass over environ; the first entry of each name wins, as getenv.
        cdef Py_ssize_t index
        cdef Py_ssize_t missing = self.count
        cdef char **entry = decode_ring_environ()
        cdef const char *text
        cdef size_t length
        cdef const unsigned char *starts_a_name = self.starts_a_name
        for index in range(self.count):
            self.found[index] = NULL
        if entry == NULL:
            return
        while missing and entry[0] != NULL:
            text = entry[0]
            entry += 1
            if not starts_a_name[<unsigned char>text[0]]:
                continue
            for index in range(self.count):
                length = self.name_lengths[index]
                if (
                    self.found[index] == NULL
                    and text[0] == self.name_pointers[index][0]
                    and strncmp(text, self.name_pointers[index], length) == 0
                    and text[length] == b"="
                ):
                    self.found[index] = text + length + 1
                    missing -= 1
                    break

    def read(self):
        """Each variable's value, or None where it is unset or not valid Unicode."""
        return self.current()

    cdef tuple current(self):
        if DECODE_RING_WIDE_ENVIRONMENT:
            return tuple([
                valid_unicode_or_none(decode_ring_getenv_wide(name))
                for name in self.names
            ])
        cdef Py_ssize_t index
        cdef const char *raw
        cdef bint changed = False
        self.scan()
        for index in range(self.count):
            raw = self.found[index]
            last = self.last_raw[index]
            if raw == NULL:
                if last is not None:
                    self.last_raw[index] = None
                    changed = True
            elif last is None or strcmp(raw, PyBytes_AS_STRING(last)) != 0:
                self.last_raw[index] = PyBytes_FromString(raw)
                changed = True
        if changed:
            self.last_values = tuple([
                None if raw_bytes is None else utf8_or_none(raw_bytes)
                for raw_bytes in self.last_raw
            ])
        return self.last_values

    def present(self):
        """Whether each variable is set at all, whatever its value."""
        if DECODE_RING_WIDE_ENVIRONMENT:
            return tuple([
                decode_ring_getenv_wide(name) is not None for name in self.names
            ])
        self.scan()
        return tuple([self.found[index] != NULL for index in range(self.count)])


@cython.final
cdef class EnvironmentDecision:
    """The depth decision over the live environment, in one compiled call.

    Reads the ring override and the watchdogs variables with an
    ``EnvironmentReader`` at every call, and interprets the watchdogs value
    with ``interpret_watchdogs`` only when the reading changed: an unchanged
    value, however it is spelled, costs no more than any other.
    """

    cdef EnvironmentReader reader
    cdef object interpret_watchdogs
    cdef tuple interpreted_reading
    cdef bint watchdogs_disabled

    def __cinit__(self, str ring_override_variable, str watchdogs_variable, interpret_watchdogs):
        self.reader = EnvironmentReader((ring_override_variable, watchdogs_variable))
        self.interpret_watchdogs = interpret_watchdogs
        self.interpreted_reading = None
        self.watchdogs_disabled = False

    def __repr__(self):
        return f"EnvironmentDecision({self.reader.names!r})"

    def decode_rollback_ring_slots(self, num_ssm_layers, bint use_speculative):
        """The per-sequence ring depth, from the published depth and the
        environment, read afresh at every call."""
        cdef tuple reading = self.reader.current()
        cdef Rule rule
        if reading is not self.interpreted_reading:
            # Set the meaning before the reading it belongs to: another thread
            # that sees this reading then also sees its meaning.
            self.watchdogs_disabled = bool(self.interpret_watchdogs(reading[1]))
            self.interpreted_reading = reading
        return decide(
            num_ssm_layers,
            use_speculative,
            cell_slots if cell_is_set else None,
            reading[0],
            self.watchdogs_disabled,
            &rule,
        )


cdef object utf8_or_none(bytes raw):
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


cdef object valid_unicode_or_none(object value):
    # Windows hands back UTF-16, where a lone surrogate is not valid Unicode.
    if value is None:
        return None
    try:
        (<str>value).encode("utf-8")
    except UnicodeEncodeError:
        return None
    return value
