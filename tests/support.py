"""Helpers shared by the tests and the benchmarks."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

from decode_ring import _extensions_disabled

CORE_MODULES = {"cython": "decode_ring._core", "python": "decode_ring._core_py"}


def compiled_core_may_be_missing() -> bool:
    return _extensions_disabled() or sys.implementation.name != "cpython"


def load_core(name: str) -> ModuleType:
    try:
        return importlib.import_module(CORE_MODULES[name])
    except ImportError as error:
        if name == "cython" and compiled_core_may_be_missing():
            pytest.skip(f"compiled core not built here: {error}")
        raise


RunPython = Callable[..., Any]
