# cython: language_level=3, auto_pickle=False, autotestdict=False
# cython: freethreading_compatible = True
"""Compiled core: the ladder fit, the precedence core, the once-cell and the
environment reader.

The pure-Python twin ``_core_py.py`` has the same API, the same results and
raises the same exception types for the same input; ``tests/`` runs one suite
against both. Integer arguments are Rust's ``usize``, converted by
``_usize.as_usize``: ``OverflowError`` for a negative or too large value,
``TypeError`` for anything without ``__index__``.

Free-threaded CPython (3.13t, 3.14t): the module declares itself compatible
(``freethreading_compatible``), so importing it leaves the GIL off, and holds
to that without any global lock:

- the once-cell publishes with one atomic compare-and-swap of a pointer to
  the value (C11-style compiler atomics; ``Interlocked*`` on MSVC): the first
  write wins across threads, every caller returns the value in force, and a
  reader loads the pointer with acquire order, so it sees no value or the
  whole value, never part of one;
- ``EnvironmentReader`` and ``EnvironmentDecision`` scan into memory of the
  call's own and keep what they last read as one immutable snapshot, swapped
  whole under a critical section on the object (a no-op with the GIL). Each
  call returns what is right for the values its own scan saw; two threads
  never mix their scans or see a half-made snapshot.

Reading the environment while another thread writes it: CPython takes no lock
around it. ``os.putenv``, ``os.unsetenv`` and ``os.environ[...] = ...`` call
the C library's ``setenv`` and ``unsetenv`` directly (``Modules/posixmodule.c``,
3.13: no critical section, no lock of the interpreter's). With the GIL that is
still safe from Python, since the scan here and those calls each hold the GIL
throughout; without it they run at once, and the C library decides:

- changing the value of a variable that is set is safe: glibc (and musl)
  allocate the new ``NAME=value`` string, never free the old one, and replace
  one pointer in the array; the scan loads each pointer once, so it sees the
  old value or the new one;
- adding a variable may move the array: glibc before 2.41 ``realloc``s it,
  freeing the old one under a scan that is in it (as under any C ``getenv``
  of another thread); glibc 2.41 and later keep old arrays, and the scan
  reads ``environ`` with acquire order, as glibc's ``getenv`` does;
- removing a variable moves the later entries down by one, so a scan that
  runs into it may miss a variable that was set all along, for that call.

Set and unset variables before starting threads; change values freely. On
Windows the reader copies each value with ``_wdupenv_s``, under the C
runtime's environment lock, which ``os.putenv`` (``_wputenv``) takes too.
"""

cimport cython
from libc.stdint cimport SIZE_MAX, uint64_t
from libc.string cimport memcpy, strcmp, strncmp
from cpython.mem cimport PyMem_Malloc, PyMem_Free
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromString

from decode_ring._usize cimport as_usize

cdef extern from *:
    """
    #include <stdint.h>
    #include <stdlib.h>
    #include <string.h>

    /* Atomics without the GIL: GCC and Clang builtins (C11's memory model),
       MSVC's Interlocked* and ReadPointerAcquire. */
    #if defined(_MSC_VER) && !defined(__clang__)
    #ifndef WIN32_LEAN_AND_MEAN
    #define WIN32_LEAN_AND_MEAN
    #endif
    #include <windows.h>
    #define DECODE_RING_LOAD_ACQUIRE(pointer) \\
        ((void *)ReadPointerAcquire((PVOID volatile *)(pointer)))
    #define DECODE_RING_LOAD_RELAXED(pointer) \\
        ((void *)ReadPointerNoFence((PVOID volatile *)(pointer)))
    /* Whether *pointer was NULL and is now desired (a full barrier). */
    #define DECODE_RING_PUBLISH_ONCE(pointer, desired) \\
        (InterlockedCompareExchangePointer((PVOID volatile *)(pointer), (desired), NULL) == NULL)
    #else
    #define DECODE_RING_LOAD_ACQUIRE(pointer) __atomic_load_n((pointer), __ATOMIC_ACQUIRE)
    #define DECODE_RING_LOAD_RELAXED(pointer) __atomic_load_n((pointer), __ATOMIC_RELAXED)
    static inline int decode_ring_publish_once(size_t **pointer, size_t *desired) {
        size_t *expected = NULL;
        return __atomic_compare_exchange_n(pointer, &expected, desired, 0,
                                           __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    }
    #define DECODE_RING_PUBLISH_ONCE(pointer, desired) \\
        decode_ring_publish_once((pointer), (desired))
    #endif

    /* The once-cell: NULL until the first write publishes a pointer to its
       value, which is written before it is published and never changes. One
       compare-and-swap decides the winner, so no reader sees a value half
       written and no two writers both win. The winner's box lives as long as
       the process; a loser frees its own. */
    static size_t *decode_ring_cell = NULL;

    static inline const size_t *decode_ring_cell_get(void) {
        return (const size_t *)DECODE_RING_LOAD_ACQUIRE(&decode_ring_cell);
    }

    /* The value in force after publishing slots, or NULL when out of memory
       (a MemoryError is then set). */
    static const size_t *decode_ring_cell_set(size_t slots) {
        const size_t *in_force = decode_ring_cell_get();
        if (in_force != NULL) return in_force;
        size_t *box = (size_t *)PyMem_RawMalloc(sizeof(size_t));
        if (box == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        *box = slots;
        if (DECODE_RING_PUBLISH_ONCE(&decode_ring_cell, box)) return box;
        PyMem_RawFree(box);
        return decode_ring_cell_get();
    }

    /* std::env::var reads the live process environment. Python's os.environ,
       os.putenv and os.unsetenv all update it: on Windows through _wputenv,
       which keeps the CRT's wide copy current, so read that one there, a
       variable at a time, copied under the CRT's environment lock. Elsewhere
       the reader scans environ itself, once for all of its variables; on
       macOS a shared library reaches environ through _NSGetEnviron. */
    #ifdef _WIN32
    #include <wchar.h>
    static PyObject *decode_ring_getenv_wide(PyObject *name) {
        wchar_t *wide_name = PyUnicode_AsWideCharString(name, NULL);
        if (wide_name == NULL) return NULL;
        wchar_t *value = NULL;
        size_t length = 0;
        errno_t failed = _wdupenv_s(&value, &length, wide_name);
        PyMem_Free(wide_name);
        if (failed) {
            free(value);
            return PyErr_NoMemory();
        }
        if (value == NULL) Py_RETURN_NONE;
        PyObject *result = PyUnicode_FromWideChar(value, -1);
        free(value);
        return result;
    }
    static char **decode_ring_environ(void) { return NULL; }
    #define DECODE_RING_WIDE_ENVIRONMENT 1
    #else
    #ifdef __APPLE__
    #include <crt_externs.h>
    static char **decode_ring_environ(void) {
        return (char **)DECODE_RING_LOAD_ACQUIRE(_NSGetEnviron());
    }
    #else
    extern char **environ;
    static char **decode_ring_environ(void) {
        return (char **)DECODE_RING_LOAD_ACQUIRE(&environ);
    }
    #endif
    static PyObject *decode_ring_getenv_wide(PyObject *name) {
        (void)name; Py_RETURN_NONE;
    }
    #define DECODE_RING_WIDE_ENVIRONMENT 0
    #endif

    /* The names an environment scan looks for: each name's bytes and length,
       and the first prefix_length (at most 8) bytes that all of them start
       with, as the word prefix with the mask that keeps those bytes. */
    typedef struct {
        Py_ssize_t count;
        const char **names;
        const size_t *lengths;
        size_t prefix_length;
        uint64_t prefix;
        uint64_t mask;
    } decode_ring_names;

    /* Whether text starts with the names' prefix. Eight bytes are compared
       at once where they lie in the page of text's first byte, so the read
       cannot fault even past the end of a short entry; bytes past its end
       are masked off or differ from the prefix at its NUL. Near the end of a
       page, a byte at a time. */
    static inline int decode_ring_starts_with(const char *text,
                                              const decode_ring_names *names) {
        if (((uintptr_t)text & 4095) <= 4096 - 8) {
            uint64_t word;
            memcpy(&word, text, 8);
            return (word & names->mask) == names->prefix;
        }
        const char *expected = (const char *)&names->prefix;
        for (size_t index = 0; index < names->prefix_length; index++) {
            if (text[index] != expected[index]) return 0;
        }
        return 1;
    }

    /* An entry that starts with the prefix: records it where it is the first
       of a name not found yet; returns how many names are still missing. */
    static Py_ssize_t decode_ring_take(const char *text, const decode_ring_names *names,
                                       const char **found, Py_ssize_t missing) {
        size_t skip = names->prefix_length;
        for (Py_ssize_t index = 0; index < names->count; index++) {
            size_t length = names->lengths[index];
            /* text starts with the prefix, so it is at least skip bytes long. */
            if (found[index] == NULL
                && strncmp(text + skip, names->names[index] + skip, length - skip) == 0
                && text[length] == '=') {
                found[index] = text + length + 1;
                return missing - 1;
            }
        }
        return missing;
    }

    /* One pass over environ: where each name is first set, its value into
       found, NULL where it is unset (the first entry wins, as in getenv).
       Each entry's pointer is loaded once, as another thread may replace it
       (setenv of a variable that is set). An entry is passed over on its
       first byte, as cheaply as getenv passes one over on its first two;
       eight entries a turn of the loop. */
    static void decode_ring_scan(char **entry, const decode_ring_names *names,
                                 const char **found) {
        Py_ssize_t missing = names->count;
        for (Py_ssize_t index = 0; index < names->count; index++) found[index] = NULL;
        if (entry == NULL || missing == 0) return;
        const unsigned char first = (unsigned char)names->prefix;
        const unsigned char first_mask = names->prefix_length ? 0xFF : 0;
        #define DECODE_RING_STEP(offset) { \
            const char *text = (const char *)DECODE_RING_LOAD_RELAXED(entry + (offset)); \
            if (text == NULL) return; \
            if (((unsigned char)text[0] & first_mask) == first \
                && decode_ring_starts_with(text, names)) { \
                missing = decode_ring_take(text, names, found, missing); \
                if (missing == 0) return; \
            } \
        }
        for (;; entry += 8) {
            DECODE_RING_STEP(0) DECODE_RING_STEP(1) DECODE_RING_STEP(2) DECODE_RING_STEP(3)
            DECODE_RING_STEP(4) DECODE_RING_STEP(5) DECODE_RING_STEP(6) DECODE_RING_STEP(7)
        }
        #undef DECODE_RING_STEP
    }
    """
    ctypedef struct decode_ring_names:
        Py_ssize_t count
        const char **names
        const size_t *lengths
        size_t prefix_length
        uint64_t prefix
        uint64_t mask
    char **decode_ring_environ() noexcept
    void decode_ring_scan(
        char **entry, const decode_ring_names *names, const char **found
    ) noexcept nogil
    const size_t *decode_ring_cell_get() noexcept nogil
    const size_t *decode_ring_cell_set(size_t slots) except NULL
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


def set_decode_ring_slots(slots):
    """Publish the ring depth and return the depth in force; the first write
    wins, across threads too (one compare-and-swap, see the module)."""
    cdef size_t checked_slots = as_usize(slots, "slots")
    return decode_ring_cell_set(checked_slots)[0]


def published_decode_ring_slots():
    """The published depth, or None. Reads the cell without setting it."""
    cdef const size_t *in_force = decode_ring_cell_get()
    if in_force == NULL:
        return None
    return in_force[0]


cdef inline DecodeRingDecision apply_rules(
    size_t ssm_layers,
    bint use_speculative,
    const size_t *published,
    object ring_override,
    bint watchdogs_disabled,
    Rule *rule,
):
    # The one copy of the order in this core, over checked arguments;
    # published is NULL where no depth is published.
    if ssm_layers == 0:
        rule[0] = RULE_NO_SSM_LAYERS
        return NO_RING
    if published != NULL:
        rule[0] = RULE_PUBLISHED
        return published_decision(published[0])
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


cdef inline DecodeRingDecision decide(
    object num_ssm_layers,
    bint use_speculative,
    object published,
    object ring_override,
    bint watchdogs_disabled,
    Rule *rule,
):
    # Every argument is checked before any rule applies, so bad input raises
    # whichever rule would have decided.
    cdef size_t ssm_layers = as_usize(num_ssm_layers, "num_ssm_layers")
    cdef size_t published_slots = 0
    if published is not None:
        published_slots = as_usize(published, "published")
    checked_optional_str(ring_override, "ring_override")
    return apply_rules(
        ssm_layers,
        use_speculative,
        NULL if published is None else &published_slots,
        ring_override,
        watchdogs_disabled,
        rule,
    )


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


# Variables an EnvironmentReader finds in one scan without allocating; a
# reader of more allocates room for them at every call.
cdef enum:
    FOUND_ON_STACK = 8


@cython.final
@cython.internal
cdef class Reading:
    """What an ``EnvironmentReader`` read, as one immutable snapshot: each
    variable's raw bytes (None where unset) and its value."""

    cdef tuple raw
    cdef tuple values

    cdef bint matches(self, const char **found, Py_ssize_t count) noexcept:
        """Whether a scan that found ``found`` read these very bytes."""
        cdef Py_ssize_t index
        cdef object raw
        for index in range(count):
            raw = self.raw[index]
            if found[index] == NULL:
                if raw is not None:
                    return False
            elif raw is None or strcmp(found[index], PyBytes_AS_STRING(raw)) != 0:
                return False
        return True


cdef Reading new_reading(const char **found, Py_ssize_t count):
    cdef Reading reading = Reading.__new__(Reading)
    reading.raw = tuple([
        None if found[index] == NULL else PyBytes_FromString(found[index])
        for index in range(count)
    ])
    reading.values = tuple([
        None if raw is None else utf8_or_none(raw) for raw in reading.raw
    ])
    return reading


@cython.final
cdef class EnvironmentReader:
    """Reads variables of the live process environment as Rust's
    ``std::env::var`` does: ``None`` when unset or not valid Unicode.

    Sees changes made through ``os.environ``, ``os.putenv`` and
    ``os.unsetenv`` at the next ``read()``. One ``read()`` scans the
    environment once for all of its variables, so its cost grows with the
    number of variables in the environment, not with the number it reads;
    an entry that does not start with the first (up to 8) bytes all the
    names share is passed over on one comparison. The values last read are
    kept: while they are unchanged (a ``strcmp`` each), ``read()`` decodes
    nothing and returns the very same tuple, so a caller can keep what it
    derived from that tuple.

    Safe to share between threads, also without the GIL: each call scans
    into memory of its own and returns the values that scan found; what was
    last read is one immutable snapshot, replaced whole (see the module for
    what another thread's writes to the environment do).
    """

    cdef readonly tuple names
    cdef list encoded_names
    cdef Reading last
    cdef Py_ssize_t count
    cdef const char **name_pointers
    cdef size_t *name_lengths
    cdef decode_ring_names scanned

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
        self.last = None
        self.name_pointers = <const char **>PyMem_Malloc((self.count + 1) * sizeof(char *))
        self.name_lengths = <size_t *>PyMem_Malloc((self.count + 1) * sizeof(size_t))
        if not self.name_pointers or not self.name_lengths:
            raise MemoryError()
        cdef Py_ssize_t index
        for index in range(self.count):
            # encoded_names keeps the bytes these pointers point into alive.
            self.name_pointers[index] = PyBytes_AS_STRING(self.encoded_names[index])
            self.name_lengths[index] = len(self.encoded_names[index])
        self.set_scanned()

    cdef void set_scanned(self) noexcept:
        cdef size_t length = 0
        cdef Py_ssize_t name
        cdef size_t index
        cdef unsigned char prefix_bytes[8]
        cdef unsigned char mask_bytes[8]
        if self.count > 0:
            length = min(self.name_lengths[0], <size_t>8)
            for name in range(1, self.count):
                while length and strncmp(
                    self.name_pointers[name], self.name_pointers[0], length
                ) != 0:
                    length -= 1
        for index in range(8):
            prefix_bytes[index] = (
                <unsigned char>self.name_pointers[0][index] if index < length else 0
            )
            mask_bytes[index] = 0xFF if index < length else 0
        self.scanned.count = self.count
        self.scanned.names = self.name_pointers
        self.scanned.lengths = self.name_lengths
        self.scanned.prefix_length = length
        memcpy(&self.scanned.prefix, prefix_bytes, 8)
        memcpy(&self.scanned.mask, mask_bytes, 8)

    def __dealloc__(self):
        PyMem_Free(self.name_pointers)
        PyMem_Free(self.name_lengths)

    def __repr__(self):
        return f"EnvironmentReader({self.names!r})"

    cdef void scan(self, const char **found) noexcept:
        decode_ring_scan(decode_ring_environ(), &self.scanned, found)

    def read(self):
        """Each variable's value, or None where it is unset or not valid Unicode."""
        return self.current()

    cdef tuple current(self):
        if DECODE_RING_WIDE_ENVIRONMENT:
            return tuple([
                valid_unicode_or_none(decode_ring_getenv_wide(name))
                for name in self.names
            ])
        return self.scan_for(False)

    cdef tuple scan_for(self, bint presence):
        # One scan into memory of this call's own: the values it read, or
        # whether each variable is set.
        cdef const char *found_here[FOUND_ON_STACK]
        cdef const char **found = found_here
        if self.count > FOUND_ON_STACK:
            found = <const char **>PyMem_Malloc(self.count * sizeof(char *))
            if found == NULL:
                raise MemoryError()
        try:
            self.scan(found)
            if presence:
                return tuple([found[index] != NULL for index in range(self.count)])
            return self.reading_of(found).values
        finally:
            if found != found_here:
                PyMem_Free(found)

    cdef Reading reading_of(self, const char **found):
        # The snapshot is swapped whole: a thread holds its own reference to
        # the one it compares with, and never sees one half made.
        cdef Reading last
        with cython.critical_section(self):
            last = self.last
        if last is not None and last.matches(found, self.count):
            return last
        cdef Reading reading = new_reading(found, self.count)
        with cython.critical_section(self):
            self.last = reading
        return reading

    def present(self):
        """Whether each variable is set at all, whatever its value."""
        if DECODE_RING_WIDE_ENVIRONMENT:
            return tuple([
                decode_ring_getenv_wide(name) is not None for name in self.names
            ])
        return self.scan_for(True)


@cython.final
@cython.internal
cdef class Interpretation:
    """A reading of an ``EnvironmentDecision`` and what its watchdogs value
    means, as one immutable pair."""

    cdef Reading reading
    cdef bint watchdogs_disabled


@cython.final
cdef class EnvironmentDecision:
    """The depth decision over the live environment, in one compiled call.

    Reads the ring override and the watchdogs variables at every call, one
    scan of the environment as an ``EnvironmentReader`` makes it, and
    interprets the watchdogs value with ``interpret_watchdogs`` only when the
    reading changed: an unchanged value, however it is spelled, costs no more
    than any other.

    Safe to share between threads, also without the GIL: a call decides on
    what its own scan read and that reading's own meaning; the last reading
    and its meaning are kept as one immutable pair, replaced whole.
    """

    cdef EnvironmentReader reader
    cdef object interpret_watchdogs
    cdef Interpretation interpreted

    def __cinit__(self, str ring_override_variable, str watchdogs_variable, interpret_watchdogs):
        self.reader = EnvironmentReader((ring_override_variable, watchdogs_variable))
        self.interpret_watchdogs = interpret_watchdogs
        self.interpreted = None

    def __repr__(self):
        return f"EnvironmentDecision({self.reader.names!r})"

    def decode_rollback_ring_slots(self, num_ssm_layers, bint use_speculative):
        """The per-sequence ring depth, from the published depth and the
        environment, read afresh at every call."""
        cdef size_t ssm_layers = as_usize(num_ssm_layers, "num_ssm_layers")
        cdef Rule rule
        cdef tuple values
        if DECODE_RING_WIDE_ENVIRONMENT:
            values = self.reader.current()
            return apply_rules(
                ssm_layers,
                use_speculative,
                decode_ring_cell_get(),
                values[0],
                bool(self.interpret_watchdogs(values[1])),
                &rule,
            )
        cdef const char *found[2]
        cdef Interpretation interpreted
        self.reader.scan(found)
        with cython.critical_section(self):
            interpreted = self.interpreted
        if interpreted is None or not interpreted.reading.matches(found, 2):
            interpreted = Interpretation.__new__(Interpretation)
            interpreted.reading = new_reading(found, 2)
            interpreted.watchdogs_disabled = bool(
                self.interpret_watchdogs(interpreted.reading.values[1])
            )
            with cython.critical_section(self):
                self.interpreted = interpreted
        return apply_rules(
            ssm_layers,
            use_speculative,
            decode_ring_cell_get(),
            interpreted.reading.values[0],
            interpreted.watchdogs_disabled,
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
