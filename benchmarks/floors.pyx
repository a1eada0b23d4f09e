# cython: language_level=3
"""Floors: compiled no-ops with the argument signatures and conversions of the
public functions, so a benchmark can say how far a call is above the bare
cost of crossing into compiled code. Built by ``harness.build_floors`` for the run;
never shipped.
"""

from decode_ring._usize cimport as_usize


def noop_0():
    return None


def noop_1_str(value):
    if value is not None and not isinstance(value, str):
        raise TypeError("value must be str or None")
    return None


def noop_2(num_ssm_layers, bint use_speculative):
    as_usize(num_ssm_layers, "num_ssm_layers")
    return None


def noop_4(start_slots, reserve_without_ring, bytes_per_ring_slot, free_mem):
    as_usize(start_slots, "start_slots")
    as_usize(reserve_without_ring, "reserve_without_ring")
    as_usize(bytes_per_ring_slot, "bytes_per_ring_slot")
    as_usize(free_mem, "free_mem")
    return None


def noop_5(
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


def noop_1_usize(slots):
    as_usize(slots, "slots")
    return None


def noop_decision(slots, skip_reason=None):
    as_usize(slots, "slots")
    if skip_reason is not None and not isinstance(skip_reason, str):
        raise TypeError("skip_reason must be str or None")
    return None
