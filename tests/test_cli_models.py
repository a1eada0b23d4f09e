"""``decode-ring state`` on every fixture. (Moving beside the fixtures' expected states.)"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .support import run_cli
from .test_models import EXPECTED

CONFIGS = Path(__file__).resolve().parent / "configs"


def as_json(completed: subprocess.CompletedProcess[str]) -> Any:
    assert completed.returncode in (0, 1), completed.stderr
    return json.loads(completed.stdout)


@pytest.mark.parametrize("layout", ["vllm", "sglang", "metrale"])
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_state_runs_on_every_fixture(name: str, layout: str) -> None:
    layers, by_layout = EXPECTED[name]
    completed = run_cli("state", "--config", str(CONFIGS / name), "--layout", layout, "--json")
    expected = by_layout[layout]
    if expected is None:
        # A layout whose server lacks the family, or a family vLLM removed: one line, exit 2.
        assert completed.returncode == 2, completed.stdout
        assert completed.stderr.count("\n") == 1 and "Traceback" not in completed.stderr
        return
    report = as_json(completed)
    assert (report["ssm_layers"], report["per_sequence_bytes"]) == (layers, expected[4])
    assert sum(group["bytes"] for group in report["groups"]) == expected[4]
    text = run_cli("state", "--config", str(CONFIGS / name), "--layout", layout)
    assert text.returncode == 0 and f"({expected[4]:,} B)" in text.stdout
