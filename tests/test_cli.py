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

from .support import run_cli

MiB, GiB = 2**20, 2**30
CONFIGS = Path(__file__).resolve().parent / "configs"
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
    return run_cli


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


# Issue 10: the command line under hostile use.


def test_a_bare_fractional_size_is_refused_with_a_hint(decode_ring_cli: Run) -> None:
    completed = decode_ring_cli("fit", "--example", "--free", "14.1")
    assert completed.returncode == 2
    assert "bytes must be whole; did you mean 14.1GiB?" in completed.stderr
    assert "Ki/KiB" in completed.stderr and "K/KB" in completed.stderr
    assert completed.stderr.count("\n") == 1


@pytest.mark.parametrize("free", ["14.1G", "14.1g", "14.1 GB", "14.1GB"])
def test_operators_unit_spellings_are_taken_with_kubernetes_meaning(
    decode_ring_cli: Run, free: str
) -> None:
    report = as_json(decode_ring_cli("fit", "--example", "--free", free, "--json"))
    assert report["limit_bytes"] == 14_100_000_000


def test_five_dot_and_dot_five_gib_behave_alike(decode_ring_cli: Run) -> None:
    five = as_json(decode_ring_cli("fit", "--example", "--free", "5.GiB", "--json"))
    half = as_json(decode_ring_cli("fit", "--example", "--free", ".5GiB", "--json"))
    assert (five["limit_bytes"], half["limit_bytes"]) == (5 * GiB, GiB // 2)


def test_an_echoed_value_with_a_newline_stays_on_one_line(decode_ring_cli: Run) -> None:
    completed = decode_ring_cli("decide", "--ssm-layers", "48", "--ssm-decode-ring-slots", "1\n")
    assert completed.returncode == 2
    assert completed.stderr == (
        "decode-ring: error: argument --ssm-decode-ring-slots: "
        "unknown ssm-decode-ring-slots '1\\n' (valid: auto, 0..=8)\n"
    )


@pytest.mark.parametrize(
    "args", [["fit", "--fr", "64GiB", "--example"], ["fit", "--exam"], ["decide", "--ssm", "4"]]
)
def test_abbreviated_flags_are_refused(decode_ring_cli: Run, args: list[str]) -> None:
    completed = decode_ring_cli(*args)
    assert completed.returncode == 2
    assert "unrecognized arguments" in completed.stderr or "required" in completed.stderr


def test_version(decode_ring_cli: Run) -> None:
    completed = decode_ring_cli("--version")
    assert completed.returncode == 0
    assert completed.stdout == f"decode-ring {importlib.metadata.version('decode_ring')}\n"


def test_help_is_plain_text(decode_ring_cli: Run) -> None:
    for args in ([], ["fit"], ["plan"], ["state"], ["decide"]):
        completed = decode_ring_cli(*args, "--help")
        assert completed.returncode == 0
        assert "``" not in completed.stdout
    assert "powers of 1024" in " ".join(decode_ring_cli("fit", "--help").stdout.split())


def test_no_depth_fitting_is_said_as_it_is(decode_ring_cli: Run) -> None:
    completed = decode_ring_cli("fit", "--example", "--free", "5GiB")
    assert completed.returncode == 1
    assert "<- chosen" not in completed.stdout
    assert "      0          0 B     6.87 GiB  no" in completed.stdout
    assert completed.stderr == (
        "decode-ring: refused: the reserve without ring alone, 6.87 GiB, exceeds free memory "
        "5.00 GiB by 1.87 GiB; no ring depth helps, 0 included\n"
    )


def test_a_pinned_depth_that_does_not_fit_names_the_deepest_that_does(
    decode_ring_cli: Run,
) -> None:
    completed = decode_ring_cli("fit", "--example", "--ssm-decode-ring-slots", "4")
    assert completed.returncode == 1
    assert "4    18.94 GiB    25.81 GiB  no   <- pinned, refused" in completed.stdout
    assert completed.stderr.endswith("the deepest depth that fits is 1\n")


def run_shell(command: str, **env: str) -> subprocess.CompletedProcess[str]:
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("METRALE_")}
    child_env.update(env)
    return subprocess.run(
        ["bash", "-c", f"set -o pipefail; {command}"],
        env=child_env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_reader_that_closes_early_ends_the_command_quietly() -> None:
    python = sys.executable
    for command in (
        f"{python} -m decode_ring fit --example --json | true",
        f"{python} -m decode_ring plan --config {CONFIGS}/nemotron-nano-9b-v2.json "
        "--free 80GiB --weights 16GiB --max-model-len 8192 --tp 1,2 | true",
    ):
        completed = run_shell(f"sleep 0.2 | true; {command}")
        assert completed.returncode in (0, 141), completed.stderr
        assert completed.stderr == ""
    # A reader gone before the first write: the writer sees EPIPE for certain.
    completed = run_shell(
        f"exec 3>&1; {python} -c 'import os, sys, subprocess; r, w = os.pipe(); os.close(r); "
        f'sys.exit(subprocess.run([sys.executable, "-m", "decode_ring", "fit", "--example"], '
        f"stdout=w).returncode)'"
    )
    assert completed.returncode == 141, completed.stderr
    assert completed.stderr == ""


def test_a_full_disk_is_one_line_and_status_74() -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    completed = run_shell(f"{sys.executable} -m decode_ring fit --example > /dev/full")
    assert completed.returncode == 74
    assert completed.stderr == (
        "decode-ring: error: cannot write the output: [Errno 28] No space left on device\n"
    )


@pytest.mark.parametrize(
    "encoding", [{"PYTHONIOENCODING": "ascii"}, {"LC_ALL": "C", "PYTHONUTF8": "0"}]
)
def test_values_from_the_environment_print_on_any_stdout(
    decode_ring_cli: Run, encoding: dict[str, str]
) -> None:
    completed = decode_ring_cli(
        "decide",
        "--ssm-layers",
        "48",
        env={"METRALE_DISABLE_WATCHDOGS": " TRUE\u3000", **encoding},
    )
    assert completed.returncode == 0, completed.stderr
    assert "METRALE_DISABLE_WATCHDOGS      ' TRUE\\u3000'" in completed.stdout
