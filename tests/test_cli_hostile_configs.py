"""The command line fuzzed in this process, through ``cli.main``: never a traceback, never an exit
status outside the README's table (``tests/cli_in_process.py``).

Two fuzzers, each with a stated number of examples per command, derandomized (the same
examples on every run, so CI is repeatable; about a minute in all on two cores):

- **configs with one field changed** (``tests/config_mutations.py``): a fixture, one of its
  fields set huge, large, zero, negative, a float, infinite, NaN, a string, null or removed,
  read by each command line that reads a config (``CONFIG_EXAMPLES`` per command);
- **combinations of arguments**: each command with up to eight of its flags and hostile values
  (integers of any length, non-finite floats, zero and negative counts, sizes at the 64-bit
  limit, paths that are endless, full, empty or not there), ``ARGUMENT_EXAMPLES`` per command.

``tools/sweep-config-fields`` runs every field of every fixture with every change instead (the
exhaustive sweep, outside CI: minutes).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from . import config_mutations as mutations
from .cli_in_process import InProcessCli, check_outcome

CONFIG_EXAMPLES = 200
ARGUMENT_EXAMPLES = 400

ROOT = Path(__file__).resolve().parent.parent
NEMOTRON = str(ROOT / "tests" / "configs" / "nemotron-nano-9b-v2.json")
SNAPSHOT = str(ROOT / "tests" / "snapshots" / "qwen3.5-18b-reap-a3b-coding")

FIXTURES = mutations.fixtures()
CONFIGS = {path: mutations.load(path) for path in FIXTURES}
FIELDS = {path: list(mutations.leaf_fields(CONFIGS[path])) for path in FIXTURES}
COMMANDS = sorted(mutations.commands("CONFIG"))


def fuzzing(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> InProcessCli:
    return InProcessCli(monkeypatch, tmp_path)


@st.composite
def changed_configs(draw: st.DrawFn) -> dict[str, object]:
    fixture = draw(st.sampled_from(FIXTURES))
    field = draw(st.sampled_from(FIELDS[fixture]))
    change = draw(st.sampled_from(sorted(mutations.CHANGES)))
    return mutations.changed(CONFIGS[fixture], field, change)


@pytest.mark.parametrize("command", COMMANDS)
@fuzzing(CONFIG_EXAMPLES)
@given(config=changed_configs())
def test_a_config_with_one_field_changed_ends_as_the_table_says(
    cli: InProcessCli, tmp_path: Path, command: str, config: dict[str, object]
) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    argv = mutations.commands(str(path))[command]
    check_outcome(argv, cli.run(argv))


# --- combinations of arguments -------------------------------------------------------------

COUNTS = ["0", "1", "8", "-1", "+8", "1.5", "nan", "inf", "1e9", "0x10", str(2**63), str(2**64)]
COUNTS += ["9" * 30, "9" * 5000, "", " ", "\u0661", "65", "100001"]
SIZES = ["0", "1B", "80GiB", "14.1", "16EiB", str(2**64 - 1), str(2**64), "1e400GiB", "-1GiB"]
SIZES += ["nan GiB", "inf", "9" * 5000 + "GiB", "", "16777216TiB"]
LISTS = ["1,2,4,8", ",".join(str(n) for n in range(1, 65)), ",".join(str(n) for n in range(1, 66))]
LISTS += ["1,,2", "8,8", "0,1", str(2**64), "1," * 2000 + "1"]
RATIOS = ["0.9", "1e308", "1e-320", "nan", "-inf", "1000000", "1000001", "0"]
PATHS = [NEMOTRON, SNAPSHOT, "/dev/zero", "/dev/null", "/dev/full", "-", "", "/", "/nonexistent"]
PATHS += ["nvidia/NVIDIA-Nemotron-Nano-9B-v2", "a" * 5000]
PLOTS = ["plan.png", "plan.txt", "", "/", "/dev/full", "/nonexistent/plan.png"]
CHOICES = ["vllm", "sglang", "metrale", "bf16", "float16", "fp8", "sm80", "sm100", "EAGLE", "auto"]
CHOICES += ["extra_buffer", '{"num_speculative_tokens": 2}', '{"num_speculative_tokens": -1}']

# Each command's flags, and the values each takes (None: a flag without a value).
COMMON = {"--json": None, "--help": None, "--version": None, "--bogus": COUNTS}
MODEL_FLAGS = {
    "--config": PATHS,
    "--tp": COUNTS,
    "--layout": CHOICES,
    "--conv-dtype": CHOICES,
    "--ssm-dtype": CHOICES,
    "--speculative-tokens": COUNTS,
}
FLAGS: dict[str, dict[str, list[str] | None]] = {
    "decide": {
        **COMMON,
        "--ssm-layers": COUNTS,
        "--speculative": None,
        "--ssm-decode-ring-slots": COUNTS,
        "--config": PATHS,
    },
    "fit": {
        **COMMON,
        **MODEL_FLAGS,
        "--ssm-layers": COUNTS,
        "--example": None,
        "--ssm-decode-ring-slots": COUNTS,
        "--max-batch-size": COUNTS,
        "--per-seq-state": SIZES,
        "--reserve-without-ring": SIZES,
        "--free": SIZES,
        "--kv-floor": SIZES,
        "--headroom": SIZES,
    },
    "state": {**COMMON, **MODEL_FLAGS, "--max-batch-size": COUNTS},
    "plan": {
        **COMMON,
        **MODEL_FLAGS,
        "--tp": LISTS,
        "--max-batch-size": LISTS,
        "--free": SIZES,
        "--weights": SIZES,
        "--other": SIZES,
        "--max-model-len": COUNTS,
        "--ssm-layers": COUNTS,
        "--per-seq-state": SIZES,
        "--server": CHOICES,
        "--plot": PLOTS,
    },
    "vllm": {
        **COMMON,
        "--config": PATHS,
        "-tp": COUNTS,
        "--max-num-seqs": COUNTS,
        "--max-model-len": COUNTS,
        "--block-size": COUNTS,
        "--num-speculative-tokens": COUNTS,
        "--speculative-config": CHOICES,
        "--kv-cache-dtype": CHOICES,
        "--kv-cache-memory-bytes": COUNTS,
        "--replayssm-buffer-len": COUNTS,
        "--use-replayssm": None,
        "--gpu-arch": CHOICES,
    },
    "sglang": {
        **COMMON,
        "--config": PATHS,
        "--tp": COUNTS,
        "--available-memory": SIZES,
        "--max-mamba-cache-size": COUNTS,
        "--mamba-full-memory-ratio": RATIOS,
        "--mamba-radix-cache-strategy": CHOICES,
        "--disable-radix-cache": None,
        "--max-running-requests": COUNTS,
        "--speculative-algorithm": CHOICES,
        "--speculative-num-draft-tokens": COUNTS,
        "--context-length": COUNTS,
        "--max-total-tokens": COUNTS,
        "--gpu-arch": CHOICES,
    },
}
# What the fuzzer starts each command from: a run that works, so that a changed flag is tested
# past the parser too.
BASES = {
    "decide": ["--ssm-layers", "48"],
    "fit": ["--example"],
    "state": ["--config", NEMOTRON],
    "plan": ["--config", NEMOTRON, "--free", "80GiB", "--weights", "16GiB"],
    "vllm": ["--config", NEMOTRON],
    "sglang": ["--config", NEMOTRON, "--available-memory", "60GiB"],
}
STDIN = [
    "",
    "{",
    "null",
    "[1]",
    json.dumps(json.loads(Path(NEMOTRON).read_text())),
    '{"model_type": "mamba", "num_hidden_layers": ' + "9" * 5000 + "}",
]


@st.composite
def command_lines(draw: st.DrawFn, command: str) -> list[str]:
    flags = FLAGS[command]
    argv = [command]
    if draw(st.booleans()):
        argv += BASES[command]
    for _ in range(draw(st.integers(0, 8))):
        flag = draw(st.sampled_from(sorted(flags)))
        values = flags[flag]
        argv.append(flag)
        if values is not None:
            argv.append(draw(st.sampled_from(values)))
    if "--plot" in argv and "--tp" in argv:  # a plot of 64 rows is a second a run: rarely
        argv[argv.index("--tp") + 1] = "1,2"
    return argv


@pytest.mark.parametrize("command", sorted(FLAGS))
@fuzzing(ARGUMENT_EXAMPLES)
@given(data=st.data())
def test_any_combination_of_arguments_ends_as_the_table_says(
    cli: InProcessCli, command: str, data: st.DataObject
) -> None:
    argv = data.draw(command_lines(command))
    stdin = data.draw(st.sampled_from(STDIN))
    check_outcome(argv, cli.run(argv, stdin=stdin))
