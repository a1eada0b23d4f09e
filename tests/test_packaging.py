"""Which core the package uses, what it exports, and its console script."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import decode_ring
from decode_ring.cli import main

from .support import RunPython, compiled_core_may_be_missing, load_core


def test_the_package_uses_the_compiled_core_unless_told_otherwise() -> None:
    expected = "python" if compiled_core_may_be_missing() else "cython"
    assert expected == decode_ring.CORE


@pytest.mark.parametrize(
    ("switch", "core"),
    [("1", "python"), ("yes", "python"), ("0", None), ("", None), (None, None)],
)
def test_the_no_extensions_switch_selects_the_twin(
    run_python: RunPython, switch: str | None, core: str | None
) -> None:
    # switch None: the variable unset, which is neither "" nor "0" to a careless reader.
    if core is None:
        # Without the switch the compiled core is required on CPython (a
        # missing one is a failed install, not a reason to expect the twin),
        # unless this run may lack it: a pure install tested under the switch.
        if sys.implementation.name != "cpython":
            core = "python"
        elif compiled_core_may_be_missing():
            built = importlib.util.find_spec("decode_ring._core") is not None
            core = "cython" if built else "python"
        else:
            core = "cython"
    lines = run_python(
        f"""
        import os
        if {switch is None}:
            del os.environ["DECODE_RING_NO_EXTENSIONS"]
        import decode_ring
        print(repr(decode_ring.CORE))
        print(repr(decode_ring.fit_decode_ring_slots.__module__))
        """,
        env={"DECODE_RING_NO_EXTENSIONS": "" if switch is None else switch},
    )
    module = {"python": "decode_ring._core_py", "cython": "decode_ring._core"}[core]
    assert lines == [core, module]


def test_the_core_functions_are_exported_without_a_wrapper() -> None:
    core = load_core(decode_ring.CORE)
    for name in (
        "set_decode_ring_slots",
        "published_decode_ring_slots",
        "decode_rollback_ring_slots_with",
        "fit_decode_ring_slots",
        "DecodeRingDecision",
    ):
        assert getattr(decode_ring, name) is getattr(core, name), name


def test_the_public_api() -> None:
    assert sorted(decode_ring.__all__) == sorted(
        [
            "CORE",
            "DECISION_RULES",
            "DECODE_RING_FIT_LADDER",
            "DECODE_ROLLBACK_RING_SLOTS",
            "USIZE_MAX",
            "DecodeRingDecision",
            "ExplainedDecision",
            "__version__",
            "decode_rollback_ring_slots",
            "decode_rollback_ring_slots_with",
            "decode_rollback_ring_slots_with_rule",
            "explain_decode_rollback_ring_slots",
            "fit_decode_ring_slots",
            "parse_decode_ring_slots",
            "published_decode_ring_slots",
            "set_decode_ring_slots",
            "watchdogs_disabled_from_value",
        ]
    )
    for name in decode_ring.__all__:
        assert hasattr(decode_ring, name), name


def test_the_version_is_the_distribution_version() -> None:
    assert decode_ring.__version__ == importlib.metadata.version("decode_ring")


CORE_NAMES = {
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
}


def test_the_cores_have_the_same_public_names() -> None:
    compiled = load_core("cython")
    assert {name for name in dir(compiled) if not name.startswith("_")} == CORE_NAMES
    assert set(load_core("python").__all__) == CORE_NAMES


def test_importing_the_package_never_imports_torch() -> None:
    completed = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, decode_ring, decode_ring.distributed, decode_ring.workers, "
            "decode_ring.cli; print('torch' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.stdout.strip() == "False", completed.stderr


def test_only_the_selector_names_a_core() -> None:
    """Every module takes the selected core's names from ``_selector``; the
    cores themselves and their stub are the only other files that name one."""
    package = Path(decode_ring.__file__).parent
    naming = re.compile(r"\b_core(_py)?\b")
    allowed = {"_selector.py", "_core.pyx", "_core_py.py", "_core.pyi"}
    offenders = [
        path.name
        for path in sorted(package.iterdir())
        if path.suffix in (".py", ".pyx", ".pxd")
        and path.name not in allowed
        and naming.search(path.read_text())
    ]
    assert offenders == []


def test_the_console_script_is_the_entry_point() -> None:
    (entry,) = importlib.metadata.entry_points(group="console_scripts", name="decode-ring")
    assert entry.load() is main


def test_the_installed_console_script_runs() -> None:
    script = shutil.which("decode-ring", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("decode-ring is not installed beside this interpreter")
    completed = subprocess.run(
        [script, "fit", "--example", "--json"], capture_output=True, text=True, timeout=60
    )
    assert completed.returncode == 0
    assert json.loads(completed.stdout)["slots"] == 1
