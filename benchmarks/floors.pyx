# cython: language_level=3
# cython: freethreading_compatible = True
"""Floors: compiled no-ops with the argument signatures of the public
functions, so that a benchmark can say how far a call is above the bare cost
of crossing into compiled code. Built by ``harness.build_floors`` for the run;
never shipped.

Two kinds, one of each per signature, and one scan of the environment:

``noop*``
    the cheapest crossing: Cython converts the arguments itself (``size_t``,
    ``bint``, ``str``). The targets are set against these.
``own_noop*``
    the core's own conversions: integers through ``decode_ring._usize.as_usize``
    (the very function the compiled core uses), strings checked as the core
    checks them. The table gives the ratio to these in a second column.
``getenv2``
    ``noop2`` plus one C ``getenv`` of a variable that is not set: the C
    library's own scan of the whole environment, the floor of the
    decision's single pass over it in a large environment.
"""

from libc.stdlib cimport getenv

from decode_ring._usize cimport as_usize


# The cheapest crossing: Cython's own conversions.

def noop0():
    return None


def noop1(size_t slots):
    return None


def noop1_str(str value):
    return None


def noop2(size_t num_ssm_layers, bint use_speculative):
    return None


def getenv2(size_t num_ssm_layers, bint use_speculative):
    """``noop2`` and one C ``getenv`` of the ring's variable, where it is
    unset: one whole scan of the environment, as the C library makes it."""
    if getenv(b"METRALE_SSM_DECODE_RING") != NULL:
        return num_ssm_layers
    return None


def noop4(
    size_t start_slots,
    size_t reserve_without_ring,
    size_t bytes_per_ring_slot,
    size_t free_mem,
):
    return None


def noop5(
    size_t num_ssm_layers,
    bint use_speculative,
    published,
    str ring_override,
    bint watchdogs_disabled,
):
    cdef size_t _published_slots
    if published is not None:
        _published_slots = published
    return None


def noop_decision(size_t slots, str skip_reason=None):
    return None


# The core's own conversions.

def own_noop1(slots):
    as_usize(slots, "slots")
    return None


def own_noop1_str(value):
    if value is not None and not isinstance(value, str):
        raise TypeError("value must be str or None")
    return None


def own_noop2(num_ssm_layers, bint use_speculative):
    as_usize(num_ssm_layers, "num_ssm_layers")
    return None


def own_noop4(start_slots, reserve_without_ring, bytes_per_ring_slot, free_mem):
    as_usize(start_slots, "start_slots")
    as_usize(reserve_without_ring, "reserve_without_ring")
    as_usize(bytes_per_ring_slot, "bytes_per_ring_slot")
    as_usize(free_mem, "free_mem")
    return None


def own_noop5(
    num_ssm_layers,
    bint use_speculative,
    published,
    ring_override,
    bint watchdogs_disabled,
):
    as_usize(num_ssm_layers, "num_ssm_layers")
    if published is not None:
        as_usize(published, "published")
    if ring_override is not None and not isinstance(ring_override, str):
        raise TypeError("ring_override must be str or None")
    return None


def own_noop_decision(slots, skip_reason=None):
    as_usize(slots, "slots")
    if skip_reason is not None and not isinstance(skip_reason, str):
        raise TypeError("skip_reason must be str or None")
    return None
