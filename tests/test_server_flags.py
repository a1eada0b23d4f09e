"""The servers' flag lists, ``decode_ring/cli/flags/<server>-<version>.json`` (issue 24).

Always: each file is well formed, names itself, lists each option string once, and holds the
flags ``decode-ring vllm`` / ``decode-ring sglang`` model. With the wheels at hand (a folder of
them named by ``DECODE_RING_WHEELS``): ``tools/server-flags --check`` regenerates each file from
its wheel unchanged. The data is read from the installed package where it is installed, else from
the source tree beside the tests; the wheel matrix has neither until the package data is declared.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import decode_ring
from decode_ring.cli.server_flags import SGLANG_FLAGS, VLLM_FLAGS

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tools" / "server-flags"
INSTALLED = Path(decode_ring.__file__).resolve().parent / "cli" / "flags"
SOURCE = ROOT / "decode_ring" / "cli" / "flags"
WHEELS = "DECODE_RING_WHEELS"

KEYS = ["server", "version", "generated_by", "wheel", "allow_abbrev", "sources", "flags"]
FLAG_KEYS = [
    "flag",
    "aliases",
    "dest",
    "group",
    "takes_value",
    "negatable",
    "nargs",
    "choices",
    "default",
    "help",
]
NAME = re.compile(r"(?P<server>vllm|sglang)-(?P<version>[0-9][0-9A-Za-z.+]*)\.json")

# The flags decode_ring/servers/commands.py models, as each server spells them, with the group
# the server's parser puts them in. vLLM 0.33.0 has no --num-speculative-tokens: its draft tokens
# are --spec-tokens (SpeculativeConfig.num_speculative_tokens, vllm/engine/arg_utils.py:1871) or
# the key of --speculative-config, which is what the package reads (--num-speculative-tokens is
# the package's own spelling beside --spec-tokens). --served-model-name is ModelConfig's, so
# vLLM's engine group has it.
MODELLED: dict[str, dict[str, str]] = {
    "vllm": {
        "--tensor-parallel-size": "engine",
        "-tp": "engine",
        "--max-num-seqs": "engine",
        "--max-model-len": "engine",
        "--block-size": "engine",
        "--enable-prefix-caching": "engine",
        "--no-enable-prefix-caching": "engine",
        "--spec-tokens": "engine",
        "--speculative-config": "engine",
        "-sc": "engine",
        "--mamba-cache-dtype": "engine",
        "--mamba-ssm-cache-dtype": "engine",
        "--kv-cache-dtype": "engine",
        "--kv-cache-memory-bytes": "engine",
        "--use-replayssm": "engine",
        "--no-use-replayssm": "engine",
        "--replayssm-buffer-len": "engine",
        "--served-model-name": "engine",
        "--port": "frontend",
        "--host": "frontend",
        "--api-key": "frontend",
        "--chat-template": "frontend",
        "--tool-call-parser": "frontend",
        "--enable-auto-tool-choice": "frontend",
    },
    # --tp is no string SGLang registers: argparse takes it as the one flag it abbreviates,
    # --tp-size (allow_abbrev).
    "sglang": {
        "--tp-size": "engine",
        "--tp": "engine",
        "--tensor-parallel-size": "engine",
        "--max-mamba-cache-size": "engine",
        "--mamba-full-memory-ratio": "engine",
        "--mamba-radix-cache-strategy": "engine",
        "--disable-radix-cache": "engine",
        "--max-running-requests": "engine",
        "--speculative-algorithm": "engine",
        "--speculative-num-draft-tokens": "engine",
        "--speculative-num-steps": "engine",
        "--speculative-eagle-topk": "engine",
        "--mamba-ssm-dtype": "engine",
        "--context-length": "engine",
        "--max-total-tokens": "engine",
        "--model-path": "engine",
        "--mem-fraction-static": "engine",
        "--port": "frontend",
    },
}


# The boolean flags decode-ring takes with their --no- form (argparse.BooleanOptionalAction).
NEGATABLE = {"vllm": ("--enable-prefix-caching", "--use-replayssm"), "sglang": ()}


def data_folder() -> Path | None:
    """Where the data files are: the installed package's, else the source tree's (which must
    have them), else none (the tests run from outside the source tree, against a wheel that
    does not carry them)."""
    if INSTALLED.is_dir():
        return INSTALLED
    if (ROOT / "setup.py").is_file():
        return SOURCE
    return None


FOLDER = data_folder()
# One release's full list each; <server>-releases.json (every release, compact) is
# tests/test_known_flags_releases.py's.
FILES = (
    sorted(path for path in FOLDER.glob("*.json") if NAME.fullmatch(path.name))
    if FOLDER is not None
    else []
)
PARAMS = [pytest.param(path, id=path.name) for path in FILES] or [pytest.param(None, id="no-data")]


def load(path: Path | None) -> dict[str, Any]:
    if path is None:
        pytest.skip("the flags data is not installed and the source tree is not beside the tests")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def strings_of(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every option string of the file, with its entry."""
    return {
        string: entry for entry in data["flags"] for string in (entry["flag"], *entry["aliases"])
    }


def entry_accepting(data: dict[str, Any], string: str) -> dict[str, Any] | None:
    """The entry the server's parser gives ``string`` to: the one registering it, or, where the
    parser allows abbreviations, the one whose long flag alone it begins (argparse's rule)."""
    registered = strings_of(data)
    if string in registered:
        return registered[string]
    if data["allow_abbrev"] and string.startswith("--"):
        matches = [known for known in registered if known.startswith(string)]
        if len(matches) == 1:
            return registered[matches[0]]
    return None


def test_the_source_tree_has_a_data_file_for_each_server() -> None:
    if FOLDER is None:
        pytest.skip("the flags data is not installed and the source tree is not beside the tests")
    servers = {match["server"] for path in FILES if (match := NAME.fullmatch(path.name))}
    assert servers == {"vllm", "sglang"}, FILES


@pytest.mark.parametrize("path", PARAMS)
def test_a_data_file_names_itself_and_its_wheel(path: Path | None) -> None:
    data = load(path)
    assert path is not None
    match = NAME.fullmatch(path.name)
    assert match is not None, path.name
    assert list(data) == KEYS
    assert (data["server"], data["version"]) == (match["server"], match["version"])
    assert data["generated_by"] == "tools/server-flags"
    assert data["wheel"].startswith(f"{data['server']}-{data['version']}-")
    assert data["wheel"].endswith(".whl")
    assert isinstance(data["allow_abbrev"], bool)
    sources = data["sources"]
    assert sources == sorted(set(sources)) and sources
    assert all(source.startswith(f"{data['server']}/") for source in sources)
    assert all(source.endswith(".py") for source in sources)


@pytest.mark.parametrize("path", PARAMS)
def test_each_flag_is_listed_once_in_the_data_format(path: Path | None) -> None:
    data = load(path)
    flags = data["flags"]
    assert flags and [entry["flag"] for entry in flags] == sorted(e["flag"] for e in flags)
    strings = [s for entry in flags for s in (entry["flag"], *entry["aliases"])]
    assert len(strings) == len(set(strings)), sorted(s for s in strings if strings.count(s) > 1)
    for entry in flags:
        assert list(entry) == FLAG_KEYS, entry
        assert all(s.startswith("-") and s.strip() == s for s in (entry["flag"], *entry["aliases"]))
        assert entry["aliases"] == sorted(entry["aliases"]), entry
        assert entry["flag"].startswith("--") or not any(
            alias.startswith("--") for alias in entry["aliases"]
        ), entry
        assert isinstance(entry["dest"], str) and entry["dest"], entry
        assert entry["group"] in ("engine", "frontend"), entry
        assert isinstance(entry["takes_value"], bool)
        assert entry["takes_value"] == (entry["nargs"] != 0), entry
        assert entry["nargs"] is None or isinstance(entry["nargs"], int | str), entry
        assert entry["choices"] is None or isinstance(entry["choices"], list), entry
        assert isinstance(entry["help"], str) and len(entry["help"]) <= 160, entry
        if entry["negatable"]:
            assert not entry["takes_value"], entry
            assert "--no-" + entry["flag"][2:] in entry["aliases"], entry


@pytest.mark.parametrize("path", PARAMS)
def test_the_flags_the_package_models_are_the_servers(path: Path | None) -> None:
    data = load(path)
    for string, group in MODELLED[data["server"]].items():
        entry = entry_accepting(data, string)
        assert entry is not None, f"{data['server']} {data['version']} has no {string}"
        assert entry["group"] == group, (string, entry)


@pytest.mark.parametrize("path", PARAMS)
def test_the_negatable_flags_the_package_models_are_negatable(path: Path | None) -> None:
    data = load(path)
    registered = strings_of(data)
    for flag in NEGATABLE[data["server"]]:
        assert registered[flag]["negatable"] and registered[flag]["flag"] == flag, flag


def test_each_server_flag_with_a_value_is_read_by_its_own_grammar() -> None:
    # The launch line's reader applies a row's grammar and nothing else (argparse, which checks
    # choices, reads only the package's own flags): a server row that takes a value has a
    # grammar, and a switch has none; choices belong to the package's flags.
    for table in (VLLM_FLAGS, SGLANG_FLAGS):
        for spec in (spec for spec in table if not spec.package):
            assert (spec.read is None) == (spec.switch is not None), spec.flag
            assert spec.choices is None, spec.flag


def test_a_prefix_of_two_flags_abbreviates_neither() -> None:
    data: dict[str, Any] = {
        "allow_abbrev": True,
        "flags": [
            {"flag": "--max-model-len", "aliases": []},
            {"flag": "--max-num-seqs", "aliases": []},
        ],
    }
    assert entry_accepting(data, "--max-mod") == data["flags"][0]
    assert entry_accepting(data, "--max-") is None
    assert entry_accepting({**data, "allow_abbrev": False}, "--max-mod") is None


@pytest.mark.parametrize("path", PARAMS)
def test_the_script_regenerates_each_file_from_its_wheel(path: Path | None) -> None:
    data = load(path)
    assert path is not None
    folder = os.environ.get(WHEELS)
    if not folder:
        pytest.skip(f"{WHEELS} is not set: no wheels to regenerate the flags data from")
    if not SCRIPT.is_file():
        pytest.skip("tools/server-flags is not beside the tests")  # pragma: no cover
    wheel = Path(folder) / data["wheel"]
    if not wheel.is_file():
        pytest.skip(f"no {data['wheel']} in {WHEELS}={folder}")
    completed = subprocess.run(
        [sys.executable, str(SCRIPT), str(wheel), "--check", "--out", str(path.parent)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stdout[-20_000:] + completed.stderr[-5_000:]
