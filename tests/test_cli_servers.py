"""What the server commands share with every command: argparse's refusal elsewhere, and the model
read as every command reads it. (Moving to the command line's behaviour files.)"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from decode_ring.cli import main

CONFIGS = Path(__file__).resolve().parent / "configs"
NEMOTRON = str(CONFIGS / "nemotron-nano-9b-v2.json")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def json_of(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    status, out, err = run(capsys, *args, "--json")
    assert (status, err) == (0, "")
    result = json.loads(out)
    assert isinstance(result, dict)
    return result


def test_other_commands_keep_argparse_refusal(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "state", "--config", NEMOTRON, "--gpu-memory-utilization", "1")
    assert status == 2
    assert err == "decode-ring: error: unrecognized arguments: --gpu-memory-utilization 1\n"


@pytest.mark.parametrize("server", ["vllm", "sglang"])
def test_the_server_commands_read_the_model_as_every_command_does(
    server: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    budget = ("--available-memory", "60GiB") if server == "sglang" else ()
    # stdin
    monkeypatch.setattr("sys.stdin", io.StringIO(Path(NEMOTRON).read_text()))
    from_stdin = json_of(capsys, server, "--config", "-", *budget)
    assert from_stdin["source"] is None
    # a models--ORG--NAME cache folder resolves to the snapshot refs/main names
    folder = tmp_path / "models--nvidia--NVIDIA-Nemotron-Nano-9B-v2"
    (folder / "snapshots" / "abc123").mkdir(parents=True)
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text("abc123")
    (folder / "snapshots" / "abc123" / "config.json").write_text(Path(NEMOTRON).read_text())
    from_cache = json_of(capsys, server, "--config", str(folder), *budget)
    assert from_cache["source"] == str(folder / "snapshots" / "abc123" / "config.json")
    from_file = json_of(capsys, server, "--config", NEMOTRON, *budget)
    for result in (from_stdin, from_cache):
        assert {k: v for k, v in result.items() if k != "source"} == {
            k: v for k, v in from_file.items() if k != "source"
        }
    # what cannot be read is one line and status 2
    monkeypatch.setattr("sys.stdin", io.StringIO("{"))
    status, out, err = run(capsys, server, "--config", "-", *budget)
    assert (status, out) == (2, "")
    assert err.startswith("decode-ring: error: stdin: malformed JSON") and err.count("\n") == 1
