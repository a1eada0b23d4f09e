"""The command line's promise under hostile input, fuzzed on both cores.

Random argument lists drawn from the commands' flags and from hostile values,
with random values for the ``METRALE_*`` variables. Every run must end with
status 0, 1 or 2, at most one line on stderr, and no traceback. Runs go to a
fork server (``cli_fork_server.py``), so each starts with nothing published.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from .support import compiled_core_may_be_missing

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = Path(__file__).resolve().parent / "configs"

FLAGS = {
    "decide": ["--ssm-layers", "--speculative", "--ssm-decode-ring-slots", "--json", "--config"],
    "fit": [
        "--ssm-layers",
        "--speculative",
        "--ssm-decode-ring-slots",
        "--json",
        "--example",
        "--max-batch-size",
        "--per-seq-state",
        "--reserve-without-ring",
        "--free",
        "--kv-floor",
        "--headroom",
        "--config",
        "--tp",
        "--layout",
        "--conv-dtype",
        "--ssm-dtype",
        "--speculative-tokens",
    ],
    "state": [
        "--config",
        "--tp",
        "--layout",
        "--conv-dtype",
        "--ssm-dtype",
        "--speculative-tokens",
        "--max-batch-size",
        "--json",
    ],
    "plan": [
        "--config",
        "--free",
        "--weights",
        "--other",
        "--max-model-len",
        "--ssm-layers",
        "--per-seq-state",
        "--server",
        "--plot",
        "--tp",
        "--max-batch-size",
        "--layout",
        "--conv-dtype",
        "--ssm-dtype",
        "--speculative-tokens",
        "--json",
    ],
    "vllm": [
        "--config",
        "--tensor-parallel-size",
        "-tp",
        "--max-num-seqs",
        "--max_num_seqs",
        "--max-model-len",
        "--block-size",
        "--enable-prefix-caching",
        "--no-enable-prefix-caching",
        "--num-speculative-tokens",
        "--spec-tokens",
        "--speculative-config",
        "--mamba-cache-dtype",
        "--mamba-ssm-cache-dtype",
        "--kv-cache-dtype",
        "--kv-cache-memory-bytes",
        "--use-replayssm",
        "--replayssm-buffer-len",
        "--gpu-arch",
        "--gpu-memory-utilization",
        "--json",
    ],
    "sglang": [
        "--config",
        "--tp-size",
        "--tp",
        "--available-memory",
        "--max-mamba-cache-size",
        "--mamba-full-memory-ratio",
        "--mamba-radix-cache-strategy",
        "--disable-radix-cache",
        "--max-running-requests",
        "--speculative-algorithm",
        "--speculative-num-draft-tokens",
        "--speculative-eagle-topk",
        "--mamba-ssm-dtype",
        "--context-length",
        "--max-total-tokens",
        "--gpu-arch",
        "--mem-fraction-static",
        "--json",
    ],
}
# Abbreviations, unknown flags and the global ones.
STRAY_FLAGS = ["--fr", "--exam", "--ssm", "--jso", "--version", "--help", "-h", "--nope", "-"]
HOSTILE_VALUES = [
    "",
    " ",
    "\t",
    "\n",
    "1\n",
    "\r\n8",
    "auto",
    "AUTO",
    "0",
    "8",
    "9",
    "-1",
    "+08",
    "0008",
    "\u0661",
    "\uff11",
    "14.1",
    "14.1GiB",
    "14.1G",
    "5.GiB",
    ".5GiB",
    "1e9",
    "nan",
    "inf",
    "18446744073709551615",
    "18446744073709551616",
    "9" * 5000,
    "-" + "9" * 5000,
    "GiB",
    "1 2",
    "14.1  G",
    "0x10",
    "\x1b[31m",
    "\u3000",
    "\u00e9",
    "1KiB1",
    "16777216TiB",
    "64GiB",
    "1B",
    "0B",
    "4294967296",
    "1,2,4,8",
    "1,,2",
    "0,1",
    "8,8",
    "vllm",
    "sglang",
    "metrale",
    "bf16",
    "float64",
    "float32",
    "fp8",
    "sm80",
    "extra_buffer",
    "EAGLE",
    "25.6k",
    "1.5G",
    "80G",
    "9" * 30 + "k",
    '{"num_speculative_tokens": 2}',
    '{"method": 1}',
    "[1]",
    str(CONFIGS / "qwen3-next-80b-a3b-instruct.json"),
    str(CONFIGS / "nemotron-nano-9b-v2.json"),
    str(CONFIGS / "jamba-mini-1.5.json"),
    str(CONFIGS / "metrale-gdn-48.json"),
    str(CONFIGS),
    "/nonexistent/config.json",
    "/dev/null",
    "/dev/full",
    "/",
    "-",
    "a" * 5000,
    "nvidia/NVIDIA-Nemotron-Nano-9B-v2",
    "models--nvidia--NVIDIA-Nemotron-Nano-9B-v2",
    "../..",
    "80",
    "80B",
    "80G",
    "1048575",
    "plan.png",
    "plan.txt",
    "plan",
    "vllm",
    "sglang",
    str(ROOT / "tests" / "snapshots" / "qwen3.5-18b-reap-a3b-coding"),
]
ENVIRONMENT_VALUES = ["", "0", "1", "2", "true", " TRUE\u3000", "True", "\u00e9", "1\n", "yes"]

hostile_value = st.one_of(
    st.sampled_from(HOSTILE_VALUES),
    st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=12),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
)
environment_value = st.one_of(
    st.sampled_from(ENVIRONMENT_VALUES),
    st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00="), max_size=8),
)


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    command = draw(st.sampled_from([*FLAGS, "launch", ""]))
    flags = FLAGS.get(command, FLAGS["fit"]) + STRAY_FLAGS
    argv = [command] if command else []
    for _ in range(draw(st.integers(0, 7))):
        argv.append(draw(st.sampled_from(flags)))
        if draw(st.booleans()):
            argv.append(draw(hostile_value))
    return argv


environments = st.dictionaries(
    st.sampled_from(
        ["METRALE_SSM_DECODE_RING", "METRALE_DISABLE_WATCHDOGS", "METRALE_SSM_RESERVE_RING_FULL"]
    ),
    environment_value,
)


class ForkServer:
    """One ``cli_fork_server.py`` process for the session, on one core."""

    def __init__(self, no_extensions: bool) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("METRALE_")}
        env["PYTHONPATH"] = str(ROOT)
        env["PYTHONIOENCODING"] = "ascii"  # output must be encodable anywhere
        if no_extensions:
            env["DECODE_RING_NO_EXTENSIONS"] = "1"
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).parent / "cli_fork_server.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            env=env,
        )

    def run(self, argv: list[str], environment: dict[str, str]) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps({"argv": argv, "environment": environment}) + "\n")
        self.process.stdin.flush()
        reply: dict[str, Any] = json.loads(self.process.stdout.readline())
        return reply

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


@pytest.fixture(scope="module", params=["cython", "python"])
def fork_server(request: pytest.FixtureRequest) -> Iterator[ForkServer]:
    if request.param == "cython" and compiled_core_may_be_missing():
        pytest.skip("compiled core not built here")
    server = ForkServer(no_extensions=request.param == "python")
    yield server
    server.close()


def check_run(reply: dict[str, Any], argv: list[str]) -> None:
    status, stdout, stderr = reply["status"], reply["stdout"], reply["stderr"]
    assert "Traceback" not in stderr, stderr
    plot = "--plot" in argv
    # 74: a --plot file that cannot be written (a directory, /dev/full).
    assert status in ((0, 1, 2, 74) if plot else (0, 1, 2)), (argv, reply)
    if plot and stderr.startswith("decode-ring: wrote "):  # then at most the refusal
        stderr = stderr.split("\n", 1)[1]
    assert stderr.count("\n") <= 1 and "\n" not in stderr.rstrip("\n"), (argv, stderr)
    printed_by_argparse = {"--version", "--help", "-h"} & set(argv)
    if status == 2:
        assert stderr.startswith("decode-ring: error: "), (argv, stderr)
        if "--json" in argv:  # the error as a JSON object too
            error = json.loads(stdout)
            assert set(error) == {"error", "status"} and error["status"] == 2, (argv, stdout)
        else:
            assert stdout == ""
    if status == 1:
        assert stderr.startswith("decode-ring: refused: "), (argv, stderr)
    if status in (0, 1) and "--json" in argv and not printed_by_argparse:
        json.loads(stdout)
    stdout.encode("ascii")  # the child wrote through an ASCII stdout


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(argv=command_lines(), environment=environments)
@example(argv=["fit", "--example", "--free", "14.1"], environment={})
@example(argv=["fit", "--example", "--ssm-decode-ring-slots", "1\n"], environment={})
@example(
    argv=["decide", "--ssm-layers", "48"], environment={"METRALE_DISABLE_WATCHDOGS": " TRUE\u3000"}
)
@example(argv=["fit", "--example", "--max-batch-size", "9" * 5000], environment={})
@example(argv=["fit", "--fr", "64GiB", "--example"], environment={})
@example(argv=["--version"], environment={})
@example(
    argv=[
        "plan",
        "--config",
        str(CONFIGS / "nemotron-nano-9b-v2.json"),
        "--free",
        "40GiB",
        "--reserve-without-ring",
        "10GiB",
        "--tp",
        "1,3",
    ],
    environment={},
)
@example(argv=["state", "--config", "/dev/null"], environment={})
@example(argv=["state", "--config", "-", "--json"], environment={})
@example(
    argv=[
        *["plan", "--config", str(CONFIGS / "nemotron-nano-9b-v2.json"), "--free", "20GiB"],
        *["--weights", "16GiB", "--max-model-len", "8192", "--server", "sglang", "--tp", "1,3"],
    ],
    environment={},
)
@example(
    argv=["plan", "--ssm-layers", "4", "--per-seq-state", "1MiB", "--free", "1GiB", "--json"],
    environment={},
)
@example(
    argv=[
        *["plan", "--config", str(CONFIGS / "nemotron-nano-9b-v2.json"), "--free", "40GiB"],
        *["--weights", "16GiB", "--max-model-len", "8192", "--plot", "/"],
    ],
    environment={},
)
@example(
    argv=[
        *["plan", "--config", str(CONFIGS / "nemotron-nano-9b-v2.json"), "--free", "1GiB"],
        *["--weights", "16GiB", "--max-model-len", "8192", "--plot", "plan.png"],
    ],
    environment={},
)
def test_any_command_line_ends_cleanly(
    fork_server: ForkServer, argv: list[str], environment: dict[str, str]
) -> None:
    check_run(fork_server.run(argv, environment), argv)
