"""Every example in the README runs, and says what it really prints.

- ``pycon`` blocks run as doctests, each in a fresh interpreter (they publish
  a depth) with none of the ring's variables set;
- ``python`` blocks run as scripts, each in a fresh interpreter;
- ``text`` blocks that start with ``$ decode-ring ...`` are that command's
  whole output, run from the repository's root;
- the README opens with exactly the two commands of the brief.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from .support import TORCH_MISSING

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks(language: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(README) if lang == language]


def clean_environment() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("METRALE_")}
    env["PYTHONPATH"] = str(ROOT)
    return env


def run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=ROOT, env=clean_environment(), capture_output=True, text=True, timeout=120
    )


def test_the_readme_opens_with_the_two_commands() -> None:
    opening = README.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    assert opening == [
        "pip install . && decode-ring fit --example",
        "pip install -e '.[test]' && pytest",
    ]


def test_the_readme_has_examples_of_every_kind() -> None:
    assert len(blocks("pycon")) >= 1
    assert len(blocks("python")) >= 4
    assert len([block for block in blocks("text") if block.startswith("$ decode-ring")]) >= 3


@pytest.mark.parametrize("number", range(len(blocks("pycon"))))
def test_interactive_examples_print_what_they_say(number: int, tmp_path: Path) -> None:
    session = tmp_path / "session.txt"
    session.write_text(blocks("pycon")[number])
    completed = run([sys.executable, "-m", "doctest", str(session)])
    assert completed.returncode == 0, completed.stdout + completed.stderr


@pytest.mark.parametrize("number", range(len(blocks("python"))))
def test_python_examples_run(number: int, tmp_path: Path) -> None:
    example = blocks("python")[number]
    if "import torch" in example:
        pytest.importorskip("torch", reason=TORCH_MISSING)
    script = tmp_path / "example.py"
    script.write_text(example)
    completed = run([sys.executable, str(script)])
    assert completed.returncode == 0, completed.stderr


COMMANDS = [block for block in blocks("text") if block.startswith("$ decode-ring ")]


@pytest.mark.parametrize("number", range(len(COMMANDS)))
def test_command_examples_print_what_they_show(number: int) -> None:
    command, _, expected = COMMANDS[number].partition("\n")
    args = shlex.split(command.removeprefix("$ decode-ring "))
    completed = run([sys.executable, "-m", "decode_ring", *args])
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == expected
