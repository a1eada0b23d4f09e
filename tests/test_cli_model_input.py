"""How every command reads ``--config``: a file, a snapshot directory, a Hugging Face cache folder,
ORG/NAME from the local cache, or stdin; and every way that fails, as one line with status 2.

Every command line runs through ``cli.main`` in this process (the ``cell`` fixture: a stand-in
once-cell, the ring's variables unset, run from the repository's root); what needs a fresh
interpreter (the Hugging Face cache through huggingface_hub, what importing the package imports)
runs in one.
"""

from __future__ import annotations

import errno
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from decode_ring import snapshots
from decode_ring.models import ModelConfigError

from .support import CONFIGS, ROOT, FakeCell, run, run_cli, run_json, usage_error

NEMOTRON = "tests/configs/nemotron-nano-9b-v2.json"


# --- files ----------------------------------------------------------------------------------------


def test_a_config_error_is_a_usage_error(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = tmp_path / "none"
    missing.mkdir()
    assert usage_error(capsys, "state", "--config", str(missing)) == (
        f"{str(missing)!a}: directory has no config.json"
    )


def test_a_config_path_too_long_is_a_usage_error_not_an_output_error(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Issue 19: it was "cannot write the output", exit 74.
    long = tmp_path / ("x" * 300)
    assert usage_error(capsys, "state", "--config", str(long)) == (
        f"cannot read {str(long)!a}: {os.strerror(errno.ENAMETOOLONG)}"
    )


def test_an_input_path_that_cannot_be_read_says_so(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    long = "a" * 5000
    assert usage_error(capsys, "state", "--config", long) == (
        f"cannot read {long!a}: File name too long"
    )
    folder = tmp_path / "config.json"
    folder.mkdir()
    assert usage_error(capsys, "state", "--config", str(tmp_path)) == (
        f"cannot read {str(folder)!a}: Is a directory"
    )
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    assert usage_error(capsys, "state", "--config", str(loop)) == (
        f"cannot read {str(loop)!a}: Too many levels of symbolic links (a symlink loop)"
    )
    looped = tmp_path / "looped"
    looped.mkdir()
    (looped / "config.json").symlink_to(looped / "config.json")
    assert usage_error(capsys, "state", "--config", str(looped)) == (
        f"cannot read {str(looped / 'config.json')!a}: Too many levels of symbolic links "
        "(a symlink loop)"
    )
    assert usage_error(capsys, "state", "--config", str(tmp_path / "none.json")) == (
        f"cannot read {str(tmp_path / 'none.json')!a}: No such file or directory"
    )


def test_the_api_raises_model_config_error_not_os_error(tmp_path: Path) -> None:
    with pytest.raises(ModelConfigError, match="File name too long"):
        snapshots.resolve_model("a" * 5000)
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(ModelConfigError, match="symlink loop"):
        snapshots.resolve_model(str(loop))


def test_a_read_error_is_whole_and_never_says_at_at(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    control = tmp_path / "control.json"
    control.write_text('{"a": "x\ny"}')
    assert usage_error(capsys, "state", "--config", str(control)) == (
        f"{str(control)!a}: malformed JSON: Invalid control character at line 1 column 9"
    )
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe{")
    assert usage_error(capsys, "state", "--config", str(binary)) == (
        f"cannot read {str(binary)!a}: not UTF-8 text ('utf-8' codec can't decode byte 0xff in "
        "position 0: invalid start byte)"
    )


def test_an_empty_path_is_an_error_not_the_current_directory(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    assert usage_error(capsys, "state", "--config", "") == (
        "empty path; give a config.json, a snapshot directory, a models--ORG--NAME cache folder, "
        "ORG/NAME from the Hugging Face cache, or - for stdin"
    )


def test_an_os_error_while_computing_is_a_read_error(
    cell: FakeCell,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    # A disk error after the config was read, where plan looks for the snapshot's index: one
    # line naming the file, or --config where the error names none, or the model's files where
    # the model came from the launch line.
    (tmp_path / "config.json").write_text((ROOT / NEMOTRON).read_text())
    index = tmp_path / "model.safetensors.index.json"
    lexists = os.path.lexists
    named: list[bool] = [True]

    def failing(path: Any) -> bool:
        if os.fspath(path) == os.fspath(index):
            if named[0]:
                raise OSError(errno.EIO, "Input/output error", os.fspath(index))
            raise OSError(errno.EIO, "Input/output error")
        return lexists(path)

    monkeypatch.setattr(os.path, "lexists", failing)
    args = ("plan", "--config", str(tmp_path), "--free", "80GiB", "--max-model-len", "8")
    assert usage_error(capsys, *args) == f"cannot read {str(index)!a}: Input/output error"
    named[0] = False
    assert usage_error(capsys, *args) == f"cannot read {str(tmp_path)!a}: Input/output error"
    line = ("plan", "--server", "vllm", "--free", "80GiB", "--", "vllm", "serve", str(tmp_path))
    assert usage_error(capsys, *line) == "cannot read the model's files: Input/output error"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["fit", "--config", NEMOTRON, "--ssm-layers", "4"], "drop --ssm-layers"),
        (["fit", "--config", NEMOTRON, "--per-seq-state", "1MiB"], "drop --ssm-layers"),
        (["state", "--config", "/nonexistent/config.json"], "/nonexistent/config.json"),
        (["state", "--config", str(CONFIGS / "..")], "config.json"),
        (["state", "--config", NEMOTRON, "--tp", "3"], "tp_size 3 does not divide"),
        (["state", "--config", NEMOTRON, "--tp", "0"], "at least 1"),
        (["state", "--config", NEMOTRON, "--conv-dtype", "float64"], "float64"),
        (["state", "--config", NEMOTRON, "--layout", "tgi"], "invalid choice"),
        (["plan", "--config", NEMOTRON, "--free", "1GiB"], "plan needs --weights SIZE"),
        (
            ["plan", "--config", NEMOTRON, "--free", "1GiB", "--weights", "0", "--tp", "1,1"],
            "repeats",
        ),
    ],
)
def test_bad_model_input_is_one_line_and_exit_two(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    refusal = usage_error(capsys, *args)
    assert message in refusal
    assert "Traceback" not in refusal


def test_an_unknown_model_type_lists_the_families(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model_type": "rwkv7", "num_hidden_layers": 4, "ssm_x": 1}))
    message = usage_error(capsys, "state", "--config", str(config))
    for family in ("mamba2", "nemotron_h", "qwen3_next", "zamba2"):
        assert family in message


# --- stdin, snapshots and the Hugging Face cache --------------------------------------------------


def test_config_dash_reads_stdin(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO((ROOT / NEMOTRON).read_text()))
    status, out = run_json(capsys, "state", "--config", "-")
    assert (status, out["ssm_layers"], out["source"]) == (0, 27, None)
    monkeypatch.setattr("sys.stdin", io.StringIO("{"))
    assert usage_error(capsys, "state", "--config", "-") == (
        "stdin: malformed JSON: Expecting property name enclosed in double quotes at line 1 "
        "column 2"
    )


def cache_folder(cache: Path, repo: str, revision: str = "abc123") -> Path:
    """A Hugging Face cache entry for ``repo`` holding Nemotron's config and an index."""
    folder = cache / f"models--{repo.replace('/', '--')}"
    snapshot = folder / "snapshots" / revision
    snapshot.mkdir(parents=True)
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text(revision)
    (snapshot / "config.json").write_text((ROOT / NEMOTRON).read_text())
    index = {"metadata": {"total_size": 17_780_000_000}}
    (snapshot / "model.safetensors.index.json").write_text(json.dumps(index))
    return folder


def test_a_cache_folder_resolves_to_its_snapshot(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = cache_folder(tmp_path, "nvidia/NVIDIA-Nemotron-Nano-9B-v2")
    status, out = run_json(capsys, "state", "--config", str(folder))
    assert (status, out["ssm_layers"]) == (0, 27)
    assert out["source"] == str(folder / "snapshots" / "abc123" / "config.json")
    args = ["plan", "--config", str(folder), "--free", "80GiB", "--max-model-len", "8"]
    _, out = run_json(capsys, *args)
    assert out["weights_bytes"] == 17_780_000_000
    (folder / "refs" / "main").unlink()
    (folder / "snapshots" / "def456").mkdir()
    assert usage_error(capsys, "state", "--config", str(folder)) == (
        f"{str(folder)!a}: a cache folder with no refs/main and 2 snapshots; give one of them: "
        "'abc123', 'def456'"
    )


def test_a_cache_folder_takes_the_snapshot_refs_main_names(tmp_path: Path) -> None:
    # The Hugging Face cache layout: refs/main holds the revision that snapshots/ holds.
    folder = cache_folder(tmp_path, "nvidia/NVIDIA-Nemotron-Nano-9B-v2", "def456")
    (folder / "snapshots" / "abc123").mkdir()
    found = snapshots.resolve_model(str(folder))
    assert found.snapshot == folder / "snapshots" / "def456"
    assert found.config.path == str(folder / "snapshots" / "def456" / "config.json")
    # Without refs/main, the only snapshot there is.
    (folder / "refs" / "main").unlink()
    (folder / "snapshots" / "abc123").rmdir()
    assert snapshots.cache_snapshot(folder) == folder / "snapshots" / "def456"


@pytest.mark.parametrize(
    ("count", "listed"),
    [(0, "none"), (5, "'r0', 'r1', 'r2', 'r3'")],  # at most the first four, sorted
)
def test_a_cache_folder_without_refs_main_names_a_few_snapshots(
    tmp_path: Path, count: int, listed: str
) -> None:
    folder = tmp_path / "models--org--name"
    (folder / "snapshots").mkdir(parents=True)
    for revision in range(count):
        (folder / "snapshots" / f"r{revision}").mkdir()
    with pytest.raises(ModelConfigError) as raised:
        snapshots.cache_snapshot(folder)
    assert str(raised.value) == (
        f"{str(folder)!a}: a cache folder with no refs/main and {count} snapshots; give one of "
        f"them: {listed}"
    )


def test_a_cache_folder_whose_refs_main_or_snapshots_cannot_be_read(tmp_path: Path) -> None:
    folder = tmp_path / "models--org--name"
    (folder / "refs" / "main").mkdir(parents=True)  # a directory, not the revision's file
    with pytest.raises(ModelConfigError) as raised:
        snapshots.cache_snapshot(folder)
    main = folder / "refs" / "main"
    assert str(raised.value) == f"cannot read {str(main)!a}: Is a directory"
    main.rmdir()
    main.write_bytes(b"\xff\xfe")
    with pytest.raises(ModelConfigError) as raised:
        snapshots.cache_snapshot(folder)
    assert str(raised.value) == (
        f"cannot read {str(main)!a}: 'utf-8' codec can't decode byte 0xff in position 0: "
        "invalid start byte"
    )
    main.unlink()  # no refs/main and no snapshots/ folder either
    with pytest.raises(ModelConfigError) as raised:
        snapshots.cache_snapshot(folder)
    assert str(raised.value) == (
        f"cannot read {str(folder / 'snapshots')!a}: No such file or directory"
    )


def test_what_config_named_is_kept_as_written(tmp_path: Path) -> None:
    folder = cache_folder(tmp_path, "org/name")
    for text in (NEMOTRON, str(folder), str(folder / "snapshots" / "abc123")):
        assert snapshots.resolve_model(text).shown == text
    from_stdin = snapshots.resolve_model("-", io.StringIO((ROOT / NEMOTRON).read_text()))
    assert (from_stdin.shown, from_stdin.snapshot, from_stdin.config.path) == (
        "(stdin)",
        None,
        None,
    )


def test_stdin_is_the_stream_given_else_the_processs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("{"))
    given = snapshots.resolve_model("-", io.StringIO((ROOT / NEMOTRON).read_text()))
    assert given.config.mapping["model_type"] == "nemotron_h"

    class Closed(io.StringIO):
        def read(self, size: int | None = -1) -> str:
            raise OSError(errno.EIO, "Input/output error")

    with pytest.raises(ModelConfigError) as raised:
        snapshots.resolve_model("-", Closed())
    assert str(raised.value) == "cannot read the config from stdin: Input/output error"


def test_stdin_is_read_as_utf_8_whatever_its_text_layer_says() -> None:
    # The bytes under a text stream are read, as a file's are: UTF-8 whatever the stream's own
    # encoding, so a Latin-1 layer neither garbles "\u00e9" nor lets a lone 0xE9 through.
    latin = io.TextIOWrapper(io.BytesIO(b'{"name": "\xc3\xa9"}'), encoding="latin-1")
    assert snapshots.resolve_model("-", latin).config.mapping == {"name": "\u00e9"}
    latin = io.TextIOWrapper(io.BytesIO(b'{"name": "\xe9"}'), encoding="latin-1")
    with pytest.raises(ModelConfigError) as raised:
        snapshots.resolve_model("-", latin)
    assert str(raised.value) == (
        "cannot read the config from stdin: not UTF-8 text ('utf-8' codec can't decode byte "
        "0xe9 in position 10: invalid continuation byte)"
    )


def test_a_closed_stdin_stream_is_one_refusal() -> None:
    closed = io.StringIO("{}")
    closed.close()
    with pytest.raises(ModelConfigError) as raised:
        snapshots.resolve_model("-", closed)
    assert str(raised.value) == ("cannot read the config from stdin: I/O operation on closed file")


def test_org_name_is_read_from_the_hugging_face_cache_in_process(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    constants = pytest.importorskip("huggingface_hub.constants", reason="pip install '.[hub]'")
    cache = tmp_path / "hub-cache"
    folder = cache_folder(cache, "nvidia/NVIDIA-Nemotron-Nano-9B-v2")
    # huggingface_hub reads HF_HUB_CACHE when imported; its constant is what it looks up.
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.chdir(tmp_path)  # so that ORG/NAME is not a path here
    found = snapshots.resolve_model("nvidia/NVIDIA-Nemotron-Nano-9B-v2")
    assert found.snapshot == folder / "snapshots" / "abc123"
    assert found.shown == "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
    assert found.config.mapping["model_type"] == "nemotron_h"
    with pytest.raises(ModelConfigError) as raised:
        snapshots.resolve_model("nobody/nothing")
    assert str(raised.value) == (
        f"cannot read 'nobody/nothing': not a path, and its config.json is not in the Hugging "
        f"Face cache at {str(cache)!a} (download it first: hf download nobody/nothing "
        "config.json model.safetensors.index.json)"
    )
    with pytest.raises(ModelConfigError) as raised:
        snapshots.resolve_model("a/b..c")  # huggingface_hub refuses ".." in a repository id
    assert str(raised.value).startswith("'a/b..c': not a model id: ")


@pytest.mark.parametrize("server", ["vllm", "sglang"])
def test_the_server_commands_read_the_model_as_every_command_does(
    server: str,
    cell: FakeCell,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    budget = ("--available-memory", "60GiB") if server == "sglang" else ()

    def answer(*args: str) -> dict[str, Any]:
        status, result = run_json(capsys, server, *args, *budget)
        assert status == 0, result
        assert isinstance(result, dict)
        return result

    # stdin
    monkeypatch.setattr("sys.stdin", io.StringIO((ROOT / NEMOTRON).read_text()))
    from_stdin = answer("--config", "-")
    assert from_stdin["source"] is None
    # a models--ORG--NAME cache folder resolves to the snapshot refs/main names
    folder = tmp_path / "models--nvidia--NVIDIA-Nemotron-Nano-9B-v2"
    (folder / "snapshots" / "abc123").mkdir(parents=True)
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text("abc123")
    (folder / "snapshots" / "abc123" / "config.json").write_text((ROOT / NEMOTRON).read_text())
    from_cache = answer("--config", str(folder))
    assert from_cache["source"] == str(folder / "snapshots" / "abc123" / "config.json")
    from_file = answer("--config", NEMOTRON)
    for result in (from_stdin, from_cache):
        # The launch line's "model" says how the model was named (issue 25).
        assert {k: v for k, v in result.items() if k not in ("source", "launch")} == {
            k: v for k, v in from_file.items() if k not in ("source", "launch")
        }
    # what cannot be read is one line and status 2
    monkeypatch.setattr("sys.stdin", io.StringIO("{"))
    status, out, err = run(capsys, server, "--config", "-", *budget)
    assert (status, out) == (2, "")
    assert err.startswith("decode-ring: error: stdin: malformed JSON") and err.count("\n") == 1


def hub_run(tmp: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``decode-ring ARGS`` in a fresh interpreter, run from ``tmp``, with no
    Hugging Face variables but ``env``."""
    child = {k: v for k, v in os.environ.items() if not k.startswith(("METRALE_", "HF_"))}
    child.update(env, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    return subprocess.run(
        [sys.executable, "-m", "decode_ring", *args],
        cwd=tmp,
        env=child,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_org_name_reads_the_hugging_face_cache(tmp_path: Path) -> None:
    pytest.importorskip("huggingface_hub", reason="pip install '.[hub]'")
    cache_folder(tmp_path / "hub-cache", "nvidia/NVIDIA-Nemotron-Nano-9B-v2")
    repo = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
    completed = hub_run(tmp_path, "state", "--config", repo, "--json", HF_HUB_CACHE="hub-cache")
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["ssm_layers"] == 27
    # HF_HOME: the cache is its hub/ folder.
    cache_folder(tmp_path / "home" / "hub", repo)
    completed = hub_run(tmp_path, "state", "--config", repo, "--json", HF_HOME="home")
    assert completed.returncode == 0, completed.stderr
    completed = hub_run(tmp_path, "state", "--config", "nobody/nothing", HF_HOME="home")
    assert completed.returncode == 2
    assert completed.stderr.startswith(
        "decode-ring: error: cannot read 'nobody/nothing': not a path, and its config.json is "
        "not in the Hugging Face cache at "
    )


def test_org_name_without_huggingface_hub_says_what_to_install(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # import raises ImportError
    assert usage_error(capsys, "state", "--config", "nvidia/NVIDIA-Nemotron-Nano-9B-v2") == (
        "cannot read 'nvidia/NVIDIA-Nemotron-Nano-9B-v2': no such file or directory; to read "
        "ORG/NAME from the Hugging Face cache: pip install 'decode_ring[hub]'"
    )


def test_import_decode_ring_never_imports_huggingface_hub() -> None:
    completed = run_cli("--version")  # a fresh interpreter, for the imports below
    assert completed.returncode in (0, 1)
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, decode_ring, decode_ring.cli, decode_ring.snapshots; "
            "print('huggingface_hub' in sys.modules, 'matplotlib' in sys.modules)",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert probe.stdout == "False False\n", probe.stderr


def test_hf_names_that_are_paths_stay_paths(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: Any
) -> None:
    # An ORG/NAME that exists as a relative path is that path, not a cache lookup.
    (tmp_path / "org").mkdir()
    (tmp_path / "org" / "name").mkdir()
    (tmp_path / "org" / "name" / "config.json").write_text((ROOT / NEMOTRON).read_text())
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    status, out = run_json(capsys, "state", "--config", "org/name")
    assert (status, out["ssm_layers"]) == (0, 27)
