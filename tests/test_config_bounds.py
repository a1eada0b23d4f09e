"""A config is read once, with a cap, and whatever it holds is refused in one line naming it.

Issue 28: ``--config /dev/zero`` (or ``/dev/urandom``, or ``yes | decode-ring state --config
-``) was read whole, gigabytes in seconds, deaf to Ctrl-C; a JSON integer of more than 4,300
digits was a traceback and exit 1; a JSON null or array was "JSON is NoneType" or "list"; a
directory whose ``config.json`` cannot be read said it had none; a cache folder's ``refs/main``
could name a snapshot outside the folder. Expected values are written out here.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from decode_ring.models import ModelConfigError, ssm_state
from decode_ring.snapshots import resolve_model, snapshot_weights

from .cli_in_process import InProcessCli

ROOT = Path(__file__).resolve().parent.parent
NEMOTRON = ROOT / "tests" / "configs" / "nemotron-nano-9b-v2.json"
MiB = 2**20
CAP = 16 * MiB  # the README's cap on a config (and a safetensors index): 16 MiB
ERROR = "decode-ring: error: "


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> InProcessCli:
    return InProcessCli(monkeypatch, tmp_path)


def limit_memory() -> None:
    """At most 2 GiB of address space: an input read whole runs out of it."""
    resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))


def decode_ring(*args: str, stdin: int | None = None, timeout: float = 60) -> tuple[int, str, str]:
    """``python -m decode_ring ARGS`` in a process of at most 2 GiB (``limit_memory``)."""

    env = {k: v for k, v in os.environ.items() if not k.startswith("METRALE_")}
    done = subprocess.run(
        [sys.executable, "-m", "decode_ring", *args],
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        preexec_fn=limit_memory,
    )
    return done.returncode, done.stdout, done.stderr


# --- the cap ------------------------------------------------------------------------------


@pytest.mark.parametrize("endless", ["/dev/zero", "/dev/urandom"])
def test_an_endless_config_stops_at_the_cap(endless: str) -> None:
    started = time.monotonic()
    status, out, err = decode_ring("state", "--config", endless)
    assert (status, out) == (2, "")
    assert err == f"{ERROR}cannot read '{endless}': larger than 16 MiB\n"
    assert time.monotonic() - started < 20


def test_an_endless_stdin_stops_at_the_cap() -> None:
    yes = subprocess.Popen(["yes"], stdout=subprocess.PIPE)
    assert yes.stdout is not None
    try:
        piped = yes.stdout.fileno()
        status, out, err = decode_ring("state", "--config", "-", "--json", stdin=piped)
    finally:
        yes.kill()
        yes.wait()
    assert status == 2
    message = "cannot read the config from stdin: larger than 16 MiB"
    assert err == f"{ERROR}{message}\n"
    assert json.loads(out) == {"error": message, "status": 2}


def padded(config: Path, size: int) -> bytes:
    """The config's JSON, padded with spaces to ``size`` bytes."""
    text = config.read_bytes()
    return text + b" " * (size - len(text))


def test_a_config_of_the_cap_is_read_and_one_byte_more_is_not(
    cli: InProcessCli, tmp_path: Path
) -> None:
    at_cap = tmp_path / "at-cap.json"
    at_cap.write_bytes(padded(NEMOTRON, CAP))
    assert cli.run(["state", "--config", str(at_cap)]).status == 0
    over = tmp_path / "over.json"
    over.write_bytes(padded(NEMOTRON, CAP + 1))
    outcome = cli.run(["state", "--config", str(over)])
    assert (outcome.status, outcome.stdout) == (2, "")
    assert outcome.stderr == f"{ERROR}cannot read {str(over)!a}: larger than 16 MiB\n"


def test_stdin_of_the_cap_is_read_and_one_byte_more_is_not(cli: InProcessCli) -> None:
    at_cap = padded(NEMOTRON, CAP).decode()
    assert cli.run(["state", "--config", "-"], stdin=at_cap).status == 0
    outcome = cli.run(["state", "--config", "-"], stdin=at_cap + " ")
    assert outcome.status == 2
    assert outcome.stderr == f"{ERROR}cannot read the config from stdin: larger than 16 MiB\n"


def test_the_api_reads_a_path_with_the_same_cap() -> None:
    code = (
        "from decode_ring.models import ModelConfigError, ssm_state\n"
        "try:\n"
        "    ssm_state('/dev/zero')\n"
        "except ModelConfigError as error:\n"
        "    print(repr((str(error), error.path)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=limit_memory,
    )
    assert done.stdout == "(\"cannot read '/dev/zero': larger than 16 MiB\", '/dev/zero')\n"


def test_a_safetensors_index_has_the_same_cap(tmp_path: Path) -> None:
    index = tmp_path / "model.safetensors.index.json"
    body = b'{"metadata": {"total_size": 1}}'
    index.write_bytes(body + b" " * (CAP - len(body)))
    assert snapshot_weights(tmp_path) == 1
    index.write_bytes(body + b" " * (CAP + 1 - len(body)))
    with pytest.raises(ModelConfigError) as caught:
        snapshot_weights(tmp_path)
    assert str(caught.value) == f"cannot read {str(index)!a}: larger than 16 MiB"


# --- integers of any length ----------------------------------------------------------------


def long_integer_config(tmp_path: Path, digits: int, field: str = "num_hidden_layers") -> Path:
    given = {"num_hidden_layers": 56, "mamba_num_heads": 128}[field]
    text = NEMOTRON.read_text().replace(f'"{field}": {given}', f'"{field}": {"9" * digits}')
    assert "9" * digits in text
    path = tmp_path / "long.json"
    path.write_text(text)
    return path


def test_an_integer_of_5000_digits_is_one_line_and_status_2(
    cli: InProcessCli, tmp_path: Path
) -> None:
    path = long_integer_config(tmp_path, 5000)
    message = f"{str(path)!a}: a JSON integer of 5,000 digits; a config's have at most 4,300"
    outcome = cli.run(["state", "--config", str(path), "--json"])
    assert outcome.status == 2
    assert outcome.stderr == f"{ERROR}{message}\n"
    assert json.loads(outcome.stdout) == {"error": message, "status": 2}
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(path)
    assert str(caught.value) == message and caught.value.path == str(path)


def test_an_integer_of_4300_digits_is_read_and_refused_by_its_field(
    cli: InProcessCli, tmp_path: Path
) -> None:
    # Issue 27: NemotronHConfig makes num_hidden_layers the length of its layer list and
    # ignores a given one (transformers configuration_nemotron_h.py, __post_init__), so the
    # long integer goes where the class reads it: the Mamba heads.
    path = long_integer_config(tmp_path, 4300, "mamba_num_heads")
    outcome = cli.run(["state", "--config", str(path)])
    assert outcome.status == 2
    assert outcome.stderr == (
        f"{ERROR}{str(path)!a}: nemotron_h config: field 'mamba_num_heads': "
        "must be at most 2**63 - 1, got <14285-bit integer>\n"
    )


def test_the_digit_limit_holds_whatever_the_interpreter_allows(tmp_path: Path) -> None:
    path = long_integer_config(tmp_path, 5000)
    env = {**os.environ, "PYTHONINTMAXSTRDIGITS": "0"}  # no limit of Python's own
    done = subprocess.run(
        [sys.executable, "-m", "decode_ring", "state", "--config", str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 2
    assert "a JSON integer of 5,000 digits" in done.stderr


def test_stdin_with_a_long_integer_is_one_line(cli: InProcessCli) -> None:
    outcome = cli.run(["state", "--config", "-"], stdin='{"x": ' + "1" * 5000 + "}")
    assert outcome.status == 2
    assert outcome.stderr == (
        f"{ERROR}stdin: a JSON integer of 5,000 digits; a config's have at most 4,300\n"
    )


# --- what a config that is not an object is called -----------------------------------------


@pytest.mark.parametrize(
    ("text", "called"),
    [
        ("null", "null"),
        ("[1]", "an array"),
        ('"x"', "a string"),
        ("1", "a number"),
        ("1.5", "a number"),
        ("true", "true"),
        ("false", "false"),
    ],
)
def test_a_config_that_is_not_an_object_is_called_by_its_json_name(
    cli: InProcessCli, tmp_path: Path, text: str, called: str
) -> None:
    path = tmp_path / "config.json"
    path.write_text(text)
    outcome = cli.run(["state", "--config", str(path)])
    assert outcome.stderr == f"{ERROR}{str(path)!a}: JSON is {called}, not an object\n"
    outcome = cli.run(["state", "--config", "-"], stdin=text)
    assert outcome.stderr == f"{ERROR}stdin: JSON is {called}, not an object\n"


# --- a directory whose config.json cannot be read -----------------------------------------


@pytest.fixture
def unreadable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A snapshot directory whose ``config.json`` is there but cannot be looked at (the tests
    run as root, which no permission stops: ``os.lstat`` says EACCES, as it does to a user)."""
    snapshot = tmp_path / "snapshot"
    snapshot.mkdir()
    (snapshot / "config.json").write_text(NEMOTRON.read_text())
    denied = {str(snapshot / "config.json")}
    real_lstat, real_stat = os.lstat, os.stat

    def refuse(path: Any) -> None:
        if os.fspath(path) in denied:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))

    def lstat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        refuse(path)
        return real_lstat(path, *args, **kwargs)

    def stat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        refuse(path)
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "lstat", lstat)
    monkeypatch.setattr(os, "stat", stat)
    return snapshot


def test_an_unreadable_config_in_a_directory_is_not_a_missing_one(
    cli: InProcessCli, unreadable: Path
) -> None:
    config = unreadable / "config.json"
    outcome = cli.run(["state", "--config", str(unreadable)])
    assert outcome.stderr == f"{ERROR}cannot read {str(config)!a}: Permission denied\n"
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(unreadable)
    assert str(caught.value) == f"cannot read {str(config)!a}: Permission denied"


# --- a cache folder's refs/main ------------------------------------------------------------


def cache_folder(tmp_path: Path, revision: str) -> Path:
    folder = tmp_path / "models--org--name"
    (folder / "snapshots" / "abc").mkdir(parents=True)
    (folder / "snapshots" / "abc" / "config.json").write_text(NEMOTRON.read_text())
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text(revision)
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "config.json").write_text(NEMOTRON.read_text())
    return folder


def test_refs_main_names_a_snapshot_of_its_folder(tmp_path: Path) -> None:
    folder = cache_folder(tmp_path, "abc\n")
    assert resolve_model(str(folder)).snapshot == folder / "snapshots" / "abc"


@pytest.mark.parametrize(
    "revision", ["../../outside", "{outside}", "..", ".", "abc/../../../outside", "a\0b"]
)
def test_refs_main_cannot_point_outside_the_folder(
    cli: InProcessCli, tmp_path: Path, revision: str
) -> None:
    folder = cache_folder(tmp_path, revision.format(outside=tmp_path / "outside"))
    refs = folder / "refs" / "main"
    shown = refs.read_text().strip()
    message = (
        f"{str(refs)!a}: names {shown!a}, which is not a snapshot in {str(folder / 'snapshots')!a}"
    )
    with pytest.raises(ModelConfigError) as caught:
        resolve_model(str(folder))
    assert str(caught.value) == message
    outcome = cli.run(["state", "--config", str(folder)])
    assert outcome.stderr == f"{ERROR}{message}\n"
