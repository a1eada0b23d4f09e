# cython: language_level=3
"""Rust's ``usize`` at the Python boundary, for the compiled core.

Cython's own ``size_t`` argument conversion truncates floats (it falls back to
``__int__``); the reference's ``usize`` takes integers only. ``as_usize``
accepts what ``operator.index`` accepts, in ``0..=SIZE_MAX``, and raises as
the pure-Python twin (``_usize_py.py``) does: ``TypeError`` for a non-integer,
``OverflowError`` out of range, quoting at most a short form of the value.
Shipped with the package so that benchmark floors can cimport the very same
conversion.
"""

from cpython.long cimport PyLong_CheckExact
from cpython.number cimport PyIndex_Check, PyNumber_Index
from cpython.exc cimport PyErr_Occurred, PyErr_Clear
from libc.stdint cimport SIZE_MAX

cdef extern from *:
    """
    /* An exact int of at most two digits, read in place as Cython's own
       size_t conversion reads it, where Cython reads int internals at all
       (CPython, not the limited API). Anything else takes the slow path. */
    #if CYTHON_USE_PYLONG_INTERNALS && 2 * PyLong_SHIFT <= 8 * SIZEOF_SIZE_T
      #if PY_VERSION_HEX >= 0x030C0000
        #define DECODE_RING_LONG_TAG(v) (((PyLongObject *)(v))->long_value.lv_tag)
        #define DECODE_RING_SIGNED_DIGITS(v) \
            ((1 - (Py_ssize_t)(DECODE_RING_LONG_TAG(v) & 3)) * \
             (Py_ssize_t)(DECODE_RING_LONG_TAG(v) >> 3))
        #define DECODE_RING_DIGITS(v) (((PyLongObject *)(v))->long_value.ob_digit)
      #else
        #define DECODE_RING_SIGNED_DIGITS(v) Py_SIZE(v)
        #define DECODE_RING_DIGITS(v) (((PyLongObject *)(v))->ob_digit)
      #endif
    static inline int decode_ring_small_usize(PyObject *value, size_t *result) {
        const digit *digits = DECODE_RING_DIGITS(value);
        switch (DECODE_RING_SIGNED_DIGITS(value)) {
        case 0: *result = 0; return 1;
        case 1: *result = (size_t)digits[0]; return 1;
        case 2: *result = ((size_t)digits[1] << PyLong_SHIFT) | (size_t)digits[0]; return 1;
        default: return 0;
        }
    }
    #else
    static inline int decode_ring_small_usize(PyObject *value, size_t *result) {
        (void)value; (void)result; return 0;
    }
    #endif
    """
    bint decode_ring_small_usize(object, size_t *) noexcept
    # Declared without Cython's error check: as_usize checks and re-raises
    # with the argument's name.
    size_t unchecked_PyLong_AsSize_t "PyLong_AsSize_t"(object) noexcept


cdef inline size_t as_usize(object value, str name) except? <size_t>-1:
    cdef size_t result
    if PyLong_CheckExact(value) and decode_ring_small_usize(value, &result):
        return result
    return as_usize_slow(value, name)


cdef inline size_t as_usize_slow(object value, str name) except? <size_t>-1:
    cdef size_t result
    if not PyLong_CheckExact(value):
        if not PyIndex_Check(value):
            raise TypeError(f"{name} must be an integer, not {type(value).__name__}")
        try:
            value = PyNumber_Index(value)
        except Exception as error:
            raise TypeError(
                f"{name} must be an integer: {type(value).__name__}.__index__ "
                f"raised {type(error).__name__}"
            ) from error
    result = unchecked_PyLong_AsSize_t(value)
    if result == SIZE_MAX and PyErr_Occurred() != NULL:
        PyErr_Clear()
        raise OverflowError(f"{name} must be in 0..={SIZE_MAX}, got {short_integer(value)}")
    return result


cdef inline str short_integer(object value):
    # str() of an int past 4,300 digits raises ValueError; past 128 bits a
    # message names the size instead of quoting every digit.
    cdef object bits = value.bit_length()
    if bits <= 128:
        return str(value)
    return f"{'a negative' if value < 0 else 'an'} integer of {bits} bits"
