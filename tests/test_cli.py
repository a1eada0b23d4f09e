"""The ``decode-ring`` command line, through its entry point in a fresh process."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from decode_ring.cli import main

MiB, GiB = 2**20, 2**30
EXAMPLE_SIZES = [
    "--ssm-layers",
    "48",
    "--max-batch-size",
    "32",
    "--per-seq-state",
    "151.5MiB",
    "--reserve-without-ring",
    "7039MiB",
]

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def decode_ring_cli() -> Run:
    """Runs ``python -m decode_ring ARGS`` with a clean ring environment."""

    def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        child_env = {k: v for k, v in os.environ.items() if not k.startswith("METRALE_")}
        child_env.update(env or {})
        return subprocess.run(
            [sys.executable, "-m", "decode_ring", *args],
            env=child_env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    return run


def as_json(completed: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(completed.stdout)


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
    assert as_json(completed)["slots"] == 1


def test_fit_example_gives_depth_one_with_a_warning(decode_ring_cli: Run) -> None:
    completed = decode_ring_cli("fit", "--example")
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""
    out = completed.stdout
    assert "chosen depth   1" in out
    assert "lowered from 8 to 1" in out
    for rung_line in (
        "8    37.88 GiB    44.75 GiB  no",
        "1     4.73 GiB    11.61 GiB  yes  <- chosen",
    ):
        assert rung_line in out


def test_fit_example_json_shape(decode_ring_cli: Run) -> None:
    report = as_json(decode_ring_cli("fit", "--example", "--json"))
    assert (report["requested"], report["slots"], report["fits"]) == (8, 1, True)
    assert "from 8 to 1" in report["warning"]
    assert report["decision"].startswith("ssm decode ring: 1 of 8")
    assert report["refused"] is None
    assert report["published"] == 1
    assert [rung["slots"] for rung in report["rungs"]] == [8, 4, 2, 1, 0]
    assert set(report["rungs"][0]) == {"slots", "ring_bytes", "total_bytes", "fits"}
    assert [rung["fits"] for rung in report["rungs"]] == [False, False, False, True, True]
    assert report["rungs"][3]["ring_bytes"] == 32 * 158_859_264


def test_fit_with_room_keeps_the_full_ring_without_warning(decode_ring_cli: Run) -> None:
    completed = decode_ring_cli("fit", *EXAMPLE_SIZES, "--free", "64GiB", "--json")
    report = as_json(completed)
    assert completed.returncode == 0
    assert (report["slots"], report["warning"], report["published"]) == (8, None, None)


def test_an_explicit_depth_is_not_shrunk_and_is_refused(decode_ring_cli: Run) -> None:
    completed = decode_ring_cli("fit", "--example", "--ssm-decode-ring-slots", "8", "--json")
    assert completed.returncode == 1
    report = as_json(completed)
    assert (report["slots"], report["fits"], report["warning"]) == (8, False, None)
    assert "ring 8 x batch 32 x per-sequence state 151.50 MiB" in report["refused"]
    assert completed.stderr.count("\n") == 1
    assert completed.stderr.startswith("decode-ring: refused: ")


def test_a_reserve_that_alone_exceeds_free_memory_is_refused(decode_ring_cli: Run) -> None:
    completed = decode_ring_cli("fit", "--example", "--reserve-without-ring", "20GiB")
    assert completed.returncode == 1
    assert "chosen depth   none: the server refuses to boot" in completed.stdout
    assert "<- chosen" not in completed.stdout
    assert "warning        -" in completed.stdout
    assert completed.stderr == (
        "decode-ring: refused: the reserve without ring alone, 20.00 GiB, exceeds free memory "
        "14.10 GiB by 5.90 GiB; no ring depth helps, 0 included\n"
    )


def test_reserve_ring_full_requests_eight_under_speculative_decode(decode_ring_cli: Run) -> None:
    env = {"METRALE_SSM_RESERVE_RING_FULL": "0"}
    report = as_json(
        decode_ring_cli(
            "fit", *EXAMPLE_SIZES, "--free", "64GiB", "--speculative", "--json", env=env
        )
    )
    assert (report["requested"], report["slots"]) == (8, 8)
    report = as_json(
        decode_ring_cli("fit", *EXAMPLE_SIZES, "--free", "64GiB", "--speculative", "--json")
    )
    assert (report["requested"], report["slots"]) == (0, 0)


def test_post_load_leaves_what_does_not_fit_to_the_kv_budget(decode_ring_cli: Run) -> None:
    completed = decode_ring_cli("fit", "--example", "--kv-floor", "20GiB", "--headroom", "10GiB")
    assert completed.returncode == 0
    assert "KV budget stage" in completed.stdout
    report = as_json(
        decode_ring_cli("fit", "--example", "--kv-floor", "1GiB", "--headroom", "12GiB", "--json")
    )
    assert (report["slots"], report["yardstick"]) == (2, "post-load KV headroom")


@pytest.mark.parametrize(
    ("env", "args", "slots", "rule"),
    [
        ({}, ["--ssm-layers", "0"], 0, "no SSM layers"),
        (
            {"METRALE_SSM_DECODE_RING": "0"},
            ["--ssm-layers", "48", "--ssm-decode-ring-slots", "4"],
            4,
            "published",
        ),
        (
            {"METRALE_SSM_DECODE_RING": "1"},
            ["--ssm-layers", "48", "--speculative"],
            8,
            "METRALE_SSM_DECODE_RING=1",
        ),
        ({"METRALE_SSM_DECODE_RING": "0"}, ["--ssm-layers", "48"], 0, "METRALE_SSM_DECODE_RING=0"),
        ({}, ["--ssm-layers", "48", "--speculative"], 0, "speculative decode"),
        ({"METRALE_DISABLE_WATCHDOGS": " True "}, ["--ssm-layers", "48"], 0, "watchdogs disabled"),
        ({}, ["--ssm-layers", "48", "--ssm-decode-ring-slots", "auto"], 8, "default"),
    ],
)
def test_decide_names_the_rule(
    decode_ring_cli: Run, env: dict[str, str], args: list[str], slots: int, rule: str
) -> None:
    completed = decode_ring_cli("decide", *args, "--json", env=env)
    assert completed.returncode == 0, completed.stderr
    report = as_json(completed)
    assert (report["slots"], report["rule"]) == (slots, rule)
    assert set(report) >= {"slots", "skip_reason", "rule", "environment"}
    for name, value in env.items():
        assert report["environment"][name] == value


def test_decide_human_output(decode_ring_cli: Run) -> None:
    completed = decode_ring_cli(
        "decide", "--ssm-layers", "48", env={"METRALE_DISABLE_WATCHDOGS": "1"}
    )
    assert completed.returncode == 0
    lines = completed.stdout.splitlines()
    rows = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in lines)
    assert rows["ring depth"] == "0"
    assert rows["skip reason"] == "watchdogs disabled"
    assert rows["METRALE_DISABLE_WATCHDOGS"] == "'1'"
    assert rows["METRALE_SSM_DECODE_RING"] == "(unset)"
    # one column of values, whatever the length of the labels
    assert len({line.index(rows[line.split("  ")[0]]) for line in lines}) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["decide"], "--ssm-layers"),
        (["decide", "--ssm-layers", "-1"], "not a non-negative integer"),
        (
            ["decide", "--ssm-layers", "48", "--ssm-decode-ring-slots", "9"],
            "ssm-decode-ring-slots 9 exceeds the 8 the ring is sized for",
        ),
        (
            ["decide", "--ssm-layers", "48", "--ssm-decode-ring-slots", " 1"],
            "unknown ssm-decode-ring-slots ' 1' (valid: auto, 0..=8)",
        ),
        (["fit", "--ssm-layers", "48"], "fit needs --max-batch-size"),
        (["fit", "--example", "--free", "14x"], "invalid size '14x'"),
        (["fit", "--example", "--kv-floor", "1GiB"], "--kv-floor and --headroom go together"),
        (
            ["fit", "--example", "--max-batch-size", "4294967296", "--per-seq-state", "4GiB"],
            "exceeds",
        ),
        (["launch"], "invalid choice"),
        ([], "command"),
    ],
)
def test_usage_errors_are_one_line_and_exit_two(
    decode_ring_cli: Run, args: list[str], message: str
) -> None:
    completed = decode_ring_cli(*args)
    assert completed.returncode == 2
    assert completed.stdout == ""
    assert completed.stderr.count("\n") == 1, completed.stderr
    assert completed.stderr.startswith("decode-ring: error: ")
    assert message in completed.stderr
    assert "Traceback" not in completed.stderr


def test_json_refusal_is_one_object(decode_ring_cli: Run) -> None:
    completed = decode_ring_cli("fit", "--example", "--free", "1GiB", "--json")
    assert completed.returncode == 1
    assert len(completed.stdout.strip().splitlines()) == 1
    assert as_json(completed)["fits"] is False
