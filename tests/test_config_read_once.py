"""A command reads its ``--config`` once and hands the value on: the models, the servers and the
plan take the loaded config as it is (``fit --config`` reads it as ``state`` does, and is left
out here: its preflight may publish a depth). So a pipe or a FIFO (``--config <(cat config.json)``),
which can be read only once, is as good as a file."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from decode_ring import cli
from decode_ring.models import LoadedConfig, load_config, ssm_state
from decode_ring.servers import sglang_reservation, vllm_reservation
from decode_ring.snapshots import resolve_model

CONFIGS = Path(__file__).resolve().parent / "configs"
NEMOTRON = CONFIGS / "nemotron-nano-9b-v2.json"

COMMANDS = [
    ["state", "--config"],
    ["plan", "--free", "80GiB", "--weights", "16GiB", "--max-model-len", "8192", "--config"],
    [
        "plan",
        "--server",
        "vllm",
        "--free",
        "80GiB",
        "--weights",
        "16GiB",
        "--max-model-len",
        "8192",
        "--config",
    ],
    [
        "plan",
        "--server",
        "sglang",
        "--free",
        "80GiB",
        "--weights",
        "16GiB",
        "--max-model-len",
        "8192",
        "--config",
    ],
    ["vllm", "--kv-cache-memory-bytes", "20G", "--config"],
    ["sglang", "--available-memory", "60GiB", "--config"],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda argv: " ".join(argv[:3]))
def test_each_command_reads_its_config_once(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    reads: list[Path] = []
    opened = Path.open

    def counted(path: Path, *args: Any, **kwargs: Any) -> Any:
        reads.append(path)
        return opened(path, *args, **kwargs)

    monkeypatch.setattr(Path, "open", counted)
    assert cli.main([*argv, str(NEMOTRON)]) == 0
    # The package's own data (the server flag tables, read once a process) is not the config.
    package = Path(cli.__file__).resolve().parent.parent
    assert [path for path in reads if not path.resolve().is_relative_to(package)] == [NEMOTRON]
    assert capsys.readouterr().out


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda argv: " ".join(argv[:3]))
def test_a_fifo_is_a_config(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    data = NEMOTRON.read_bytes()

    def feed() -> None:
        with open(fifo, "wb") as pipe:
            pipe.write(data)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    assert cli.main([*argv, str(fifo)]) == 0
    writer.join(timeout=10)
    assert not writer.is_alive()
    assert "nemotron_h" in capsys.readouterr().out


def test_the_resolved_model_is_the_config_read() -> None:
    reference = resolve_model(str(NEMOTRON))
    assert isinstance(reference.config, LoadedConfig)
    assert reference.config.path == str(NEMOTRON)
    assert reference.config.mapping["model_type"] == "nemotron_h"
    # Every reader takes it as it is.
    assert load_config(reference.config) is reference.config


def test_readers_take_a_loaded_config_without_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = load_config(NEMOTRON)
    opened = Path.open

    # Only the config must not be read again: the package's own data tables
    # load lazily, on first use, whichever test comes first.
    def unread(path: Path, *args: Any, **kwargs: Any) -> Any:
        if path.resolve() == NEMOTRON.resolve():
            raise AssertionError(f"read {path} again")
        return opened(path, *args, **kwargs)

    monkeypatch.setattr(Path, "open", unread)
    assert ssm_state(loaded).source == str(NEMOTRON)
    assert vllm_reservation(loaded).source == str(NEMOTRON)
    assert sglang_reservation(loaded, available_memory=60 * 2**30).source == str(NEMOTRON)
