"""The build policy: the compiled core or a failed install, never a silent fallback.

Builds wheels from a copy of the source tree, without build isolation (the
test extra brings setuptools and Cython). Skipped where the tests run without
the source tree beside them, as in the wheel matrix.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parent.parent
needs_source = pytest.mark.skipif(
    not (SOURCE / "setup.py").is_file(), reason="the source tree is not beside the tests"
)


def build_wheel(tree: Path, out: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--verbose",  # shows what the build printed
            "--no-deps",
            "--no-build-isolation",
            "--wheel-dir",
            str(out),
            str(tree),
        ],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def assert_pure_wheel(wheels: Path) -> None:
    """One pure wheel there, carrying the pure-Python core and nothing compiled."""
    (wheel,) = wheels.glob("*.whl")
    assert wheel.name.endswith("-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as contents:
        names = contents.namelist()
    assert "decode_ring/_core_py.py" in names
    assert not [name for name in names if name.endswith((".so", ".pyd", ".c"))]


@pytest.fixture
def source_copy(tmp_path: Path) -> Path:
    tree = tmp_path / "source"
    shutil.copytree(
        SOURCE,
        tree,
        ignore=shutil.ignore_patterns(
            ".git", "build", "*.so", "*.c", "__pycache__", "*.egg-info", ".*cache*"
        ),
    )
    return tree


@needs_source
def test_a_broken_core_fails_the_install(source_copy: Path, tmp_path: Path) -> None:
    core = source_copy / "decode_ring" / "_core.pyx"
    core.write_text(core.read_text() + "\ncdef this is not cython\n")
    completed = build_wheel(source_copy, tmp_path / "wheels", DECODE_RING_NO_EXTENSIONS="")
    assert completed.returncode != 0
    assert "Error compiling Cython file" in completed.stdout + completed.stderr
    assert not list((tmp_path / "wheels").glob("*.whl"))


@needs_source
def test_no_extensions_at_build_time_gives_a_pure_wheel(source_copy: Path, tmp_path: Path) -> None:
    core = source_copy / "decode_ring" / "_core.pyx"
    core.write_text(core.read_text() + "\ncdef this is not cython\n")
    completed = build_wheel(source_copy, tmp_path / "wheels", DECODE_RING_NO_EXTENSIONS="1")
    assert completed.returncode == 0, completed.stderr
    assert_pure_wheel(tmp_path / "wheels")


@needs_source
def test_with_no_working_compiler_the_pure_core_is_installed(
    source_copy: Path, tmp_path: Path
) -> None:
    completed = build_wheel(
        source_copy, tmp_path / "wheels", DECODE_RING_NO_EXTENSIONS="", CC=str(tmp_path / "no-cc")
    )
    assert completed.returncode == 0, completed.stderr
    assert "no working C compiler" in completed.stdout + completed.stderr
    assert_pure_wheel(tmp_path / "wheels")


@needs_source
def test_free_threaded_wheels_are_tested_with_the_test_extra_they_can_install() -> None:
    # The cibuildwheel override for the free-threaded builds names the test
    # requirements itself, since configuration cannot compute them: they must
    # be what tools/wheel-matrix and .ci/run's free-threaded step install.
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from 3.11")
    with (SOURCE / "pyproject.toml").open("rb") as handle:
        cibuildwheel = tomllib.load(handle)["tool"]["cibuildwheel"]
    free_threaded = [build for build in cibuildwheel["build"] if re.match(r"cp3\d+t-", build)]
    # cibuildwheel 4 (the wheels extra's pin) builds 3.14t and refuses 3.13t
    # and the cpython-freethreading enable group: 3.13t is proven from source.
    assert free_threaded == ["cp314t-*"]
    assert "cpython-freethreading" not in cibuildwheel.get("enable", [])
    (override,) = [
        override
        for override in cibuildwheel["overrides"]
        if set(override["select"].split()) & set(free_threaded)
    ]
    assert override["select"].split() == free_threaded
    printed = subprocess.run(
        [
            sys.executable,
            str(SOURCE / "tools" / "wheel-matrix"),
            "--free-threaded-test-requirements",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.split()
    assert override["test-extras"] == []
    assert override["test-requires"] == printed
    assert not any(name.startswith("transformers") for name in printed)
    assert "hypothesis>=6.100,<6.156" in printed


@needs_source
def test_every_subpackage_is_packaged() -> None:
    # setuptools installs only the packages pyproject lists: a subpackage
    # left out works in the source tree and is missing from every wheel.
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from 3.11")
    with (SOURCE / "pyproject.toml").open("rb") as handle:
        listed = tomllib.load(handle)["tool"]["setuptools"]["packages"]
    found = sorted(
        ".".join(init.parent.relative_to(SOURCE).parts)
        for init in (SOURCE / "decode_ring").rglob("__init__.py")
    )
    assert sorted(listed) == found
