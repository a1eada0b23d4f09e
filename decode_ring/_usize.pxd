# cython: language_level=3
"""Rust's ``usize`` at the Python boundary, for the compiled core.

Cython's own ``size_t`` argument conversion truncates floats (it falls back to
``__int__``); the reference's ``usize`` takes integers only. ``as_usize``
accepts what ``operator.index`` accepts, in ``0..=SIZE_MAX``, and raises as
the pure-Python twin does: ``TypeError`` for a non-integer, ``OverflowError``
out of range. Shipped with the package so that benchmark floors can cimport
the very same conversion.
"""

from cpython.long cimport PyLong_CheckExact
from cpython.number cimport PyIndex_Check, PyNumber_Index
from cpython.exc cimport PyErr_Occurred, PyErr_Clear
from libc.stdint cimport SIZE_MAX

cdef extern from "Python.h":
    # Declared without Cython's error check: as_usize checks and re-raises
    # with the argument's name.
    size_t unchecked_PyLong_AsSize_t "PyLong_AsSize_t"(object) noexcept


cdef inline size_t as_usize(object value, str name) except? <size_t>-1:
    cdef size_t result
    if not PyLong_CheckExact(value):
        if not PyIndex_Check(value):
            raise TypeError(f"{name} must be an integer, not {type(value).__name__}")
        value = PyNumber_Index(value)
    result = unchecked_PyLong_AsSize_t(value)
    if result == SIZE_MAX and PyErr_Occurred() != NULL:
        PyErr_Clear()
        raise OverflowError(f"{name} must be in 0..={SIZE_MAX}, got {value}")
    return result
