"""Configs with one field changed, and the command lines that read them.

Every fixture (``tests/configs/``, its ``written/`` configs and the snapshot's ``config.json``),
every leaf field (nested mappings walked into, a list taken whole), and one change of it: set
huge, large, zero, negative, a float, infinite, NaN, a string, null, or removed. ``commands``
are the command lines that read a config: ``state`` in each layout, ``fit`` and ``plan`` (the
ring, and under each server), ``vllm`` and ``sglang`` at a budget.

The in-process fuzzer (``tests/test_cli_hostile_configs.py``) draws from these; the exhaustive
sweep (``tools/sweep-config-fields``) runs every one.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "tests" / "configs"
SNAPSHOT_CONFIG = ROOT / "tests" / "snapshots" / "qwen3.5-18b-reap-a3b-coding" / "config.json"

MISSING = object()
# One change of a field: what it is set to (MISSING: removed). "large" passes every field's
# own bound (2**63 - 1) and makes products past 64 bits; the non-finite floats are what a
# config.json may write (Infinity, NaN).
CHANGES: dict[str, object] = {
    "huge": 2**64,
    "large": 2**62,
    "zero": 0,
    "negative": -1,
    "float": 1.5,
    "infinite": float("inf"),
    "nan": float("nan"),
    "string": "x",
    "null": None,
    "missing": MISSING,
}

Path_ = tuple[str, ...]


def fixtures() -> list[Path]:
    """Every config fixture, in a stable order."""
    return [*sorted(CONFIGS.rglob("*.json")), SNAPSHOT_CONFIG]


def fixture_name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def leaf_fields(config: dict[str, Any], prefix: Path_ = ()) -> Iterator[Path_]:
    """The path of every field that is not a mapping (a list is one field)."""
    for key, value in config.items():
        if isinstance(value, dict) and value:
            yield from leaf_fields(value, (*prefix, key))
        else:
            yield (*prefix, key)


def changed(config: dict[str, Any], field: Path_, change: str) -> dict[str, Any]:
    """``config`` with ``field`` changed as ``CHANGES[change]`` says."""
    result = copy.deepcopy(config)
    where = result
    for key in field[:-1]:
        where = where[key]
    value = CHANGES[change]
    if value is MISSING:
        del where[field[-1]]
    else:
        where[field[-1]] = value
    return result


def load(path: Path) -> dict[str, Any]:
    config: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return config


def commands(config: str) -> dict[str, list[str]]:
    """Every command line that reads the config at ``config``, by name."""
    budget = ["--free", "80GiB", "--weights", "16GiB", "--max-model-len", "8192"]
    return {
        "state-vllm": ["state", "--config", config, "--max-batch-size", "256", "--json"],
        "state-sglang": ["state", "--config", config, "--layout", "sglang", "--tp", "2"],
        "state-metrale": ["state", "--config", config, "--layout", "metrale"],
        "fit": [
            *["fit", "--config", config, "--max-batch-size", "32"],
            *["--reserve-without-ring", "7GiB", "--free", "40GiB"],
        ],
        "plan": ["plan", "--config", config, *budget, "--json"],
        "plan-vllm": ["plan", "--config", config, *budget, "--server", "vllm"],
        "plan-sglang": ["plan", "--config", config, *budget, "--server", "sglang"],
        "vllm": ["vllm", "--config", config, "--max-model-len", "8192", "--json"],
        "vllm-budget": ["vllm", "--config", config, "--kv-cache-memory-bytes", "40G", "-tp", "2"],
        "vllm-gpu": ["vllm", "--gpu", "h100-sxm", "--config", config, "--max-model-len", "8192"],
        "sglang": ["sglang", "--config", config, "--available-memory", "60GiB", "--json"],
        "sglang-gpu": ["sglang", "--gpu", "h100-sxm", "--config", config, "--json"],
        "sglang-speculative": [
            *["sglang", "--config", config, "--available-memory", "60GiB"],
            *["--speculative-algorithm", "EAGLE", "--speculative-num-draft-tokens", "3"],
        ],
    }
