"""What a hostile user gives the command line and the API is refused in one line, exit 2, or a
typed exception naming the field or argument, never a traceback.

Issue 28, item 3: a config with 2,048 heads on a 1,536 hidden size was a ZeroDivisionError in
vLLM's block alignment; ``max_position_embeddings`` 0 a ZeroDivisionError in SGLang's running
request estimate (on 16 fixtures and the snapshot); ``--mamba-full-memory-ratio 1e308`` a
ValueError. Item 12: results carried byte counts beyond 64 bits; ``fit_ring`` with a wrong
yardstick raised AttributeError; ``--plot ''`` exited 74 where ``--config ''`` is a usage error;
``plan --json`` said 0 for the largest batch at full depth when there is none; a layer count
past 2**64 had a second limit. Expected values are written out, or are the README's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from decode_ring.models import ModelConfigError, ssm_state
from decode_ring.plan import Reserve, plan
from decode_ring.preflight import RingSlot, autofit, fit_ring
from decode_ring.servers import ServerArgumentError, metrale, sglang_reservation, vllm_reservation

from .cli_in_process import InProcessCli, check_outcome

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "tests" / "configs"
NEMOTRON = CONFIGS / "nemotron-nano-9b-v2.json"
ERROR = "decode-ring: error: "
USIZE_MAX = 2**64 - 1
GiB = 2**30


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> InProcessCli:
    return InProcessCli(monkeypatch, tmp_path)


def written(tmp_path: Path, config: dict[str, Any], name: str = "config.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(config))
    return path


def nemotron(**changes: Any) -> dict[str, Any]:
    config: dict[str, Any] = json.loads(NEMOTRON.read_text())
    config.update(changes)
    return {key: value for key, value in config.items() if value is not None}


def usage_error(cli: InProcessCli, *argv: str) -> str:
    outcome = cli.run(argv)
    check_outcome(argv, outcome)
    assert (outcome.status, outcome.stdout) == (2, "")
    return outcome.stderr.removeprefix(ERROR).removesuffix("\n")


# --- a head size of 0 ------------------------------------------------------------------------


def test_more_heads_than_the_hidden_size_has_is_a_refused_field(
    cli: InProcessCli, tmp_path: Path
) -> None:
    # Issue 27: JambaConfig declares no head_dim (vLLM takes hidden_size // heads); Nemotron-H's
    # class defaults one (128), so its config without head_dim has a head size.
    jamba: dict[str, Any] = json.loads((CONFIGS / "jamba-mini-1.5.json").read_text())
    path = written(tmp_path, jamba | {"num_attention_heads": 8192})
    message = (
        f"{str(path)!a}: jamba config: field 'hidden_size': 4096 // num_attention_heads "
        "8192 is a head size of 0; give head_dim"
    )
    assert usage_error(cli, "vllm", "--config", str(path)) == message
    assert usage_error(cli, "state", "--config", str(path)) == message
    for call in (vllm_reservation, ssm_state):
        with pytest.raises(ModelConfigError) as caught:
            call(path)
        assert (str(caught.value), caught.value.field) == (message, "hidden_size")


# --- a context length of 0 under SGLang ------------------------------------------------------

# Every fixture whose context-length field, set to 0, was a ZeroDivisionError (issue 28, and the
# sweep of tools/sweep-config-fields on main before the fix).
ZERO_CONTEXT = [
    ("falcon-h1-7b-instruct.json", "max_position_embeddings"),
    ("granite-4.0-h-tiny.json", "max_position_embeddings"),
    ("jet-nemotron-2b.json", "max_position_embeddings"),
    ("kimi-k3.json", "text_config.max_position_embeddings"),
    ("kimi-linear-48b-a3b-instruct.json", "model_max_length"),
    ("minicpm-sala.json", "max_position_embeddings"),
    ("nemotron-nano-9b-v2.json", "max_position_embeddings"),
    ("qwen3-next-80b-a3b-instruct.json", "max_position_embeddings"),
    ("qwen3.5-27b.json", "text_config.max_position_embeddings"),
    ("qwen3.5-35b-a3b.json", "text_config.max_position_embeddings"),
    ("written/gigachat3_5-layer-types-written.json", "max_position_embeddings"),
    ("written/gigachat3_5-written.json", "max_position_embeddings"),
    ("written/glm5-next-linear-attn-config-written.json", "text_config.max_position_embeddings"),
    ("written/glm5-next-transformers-5.23.0.json", "text_config.max_position_embeddings"),
    ("zaya1-8b-legacy.json", "max_position_embeddings"),
    ("zaya1-8b.json", "max_position_embeddings"),
    ("../snapshots/qwen3.5-18b-reap-a3b-coding/config.json", "max_position_embeddings"),
]


def with_field(fixture: str, field: str, value: object) -> dict[str, Any]:
    config: dict[str, Any] = json.loads((CONFIGS / fixture).read_text())
    *outer, last = field.split(".")
    where = config
    for key in outer:
        where = where[key]
    where[last] = value
    return config


@pytest.mark.parametrize(("fixture", "field"), ZERO_CONTEXT)
def test_a_context_length_of_0_is_a_refused_field(
    cli: InProcessCli, tmp_path: Path, fixture: str, field: str
) -> None:
    path = written(tmp_path, with_field(fixture, field, 0))
    name = field.rsplit(".", 1)[-1]
    message = f"field {name!a}: 0 is not a count of tokens from 1 to 2**63 - 1"
    assert usage_error(cli, "sglang", "--config", str(path), "--available-memory", "60GiB") == (
        message
    )
    with pytest.raises(ModelConfigError) as caught:
        sglang_reservation(path, available_memory=60 * GiB)
    assert (str(caught.value), caught.value.field) == (message, name)


@pytest.mark.parametrize(
    ("scaling", "says"),
    [
        ({"factor": float("nan")}, "nan is not a finite factor above 0"),
        ({"factor": float("inf")}, "inf is not a finite factor above 0"),
        ({"factor": -2.0}, "-2.0 is not a finite factor above 0"),
        ({"factor": 0}, "0 is not a finite factor above 0"),
        ({"factor": 1e-9}, "131072 x 1e-09 is 0 tokens, not a count of tokens from 1 to 2**63 - 1"),
        (
            {"factor": 2**62},
            "131072 x 4611686018427387904 is 604462909807314587353088 tokens, not a count of "
            "tokens from 1 to 2**63 - 1",
        ),
    ],
)
def test_a_rope_factor_that_makes_no_context_length_is_a_refused_field(
    cli: InProcessCli, tmp_path: Path, scaling: dict[str, Any], says: str
) -> None:
    path = written(tmp_path, nemotron(rope_scaling=scaling))
    message = f"field 'rope_scaling.factor': {says}"
    assert usage_error(cli, "sglang", "--config", str(path), "--available-memory", "60GiB") == (
        message
    )
    with pytest.raises(ModelConfigError) as caught:
        sglang_reservation(path, available_memory=60 * GiB)
    assert (str(caught.value), caught.value.field) == (message, "rope_scaling.factor")


# --- a ratio whose arithmetic overflows ------------------------------------------------------


@pytest.mark.parametrize("ratio", ["1e308", "1000001"])
def test_a_memory_ratio_beyond_a_million_is_a_usage_error(cli: InProcessCli, ratio: str) -> None:
    argv = ["sglang", "--config", str(NEMOTRON), "--available-memory", "60GiB"]
    message = usage_error(cli, *argv, "--mamba-full-memory-ratio", ratio)
    assert message == (
        "argument --mamba-full-memory-ratio: must be a finite number above 0 and at most "
        f"1,000,000, got {float(ratio)!a}"
    )


@pytest.mark.parametrize(
    ("ratio", "shown"),
    [
        (1e308, "1e+308"),
        (1_000_001, "1000001.0"),
        (2**1100, "inf"),
        (float("inf"), "inf"),
        (float("nan"), "nan"),
        (0, "0.0"),
        (-1.0, "-1.0"),
    ],
)
def test_a_memory_ratio_beyond_a_million_is_a_server_argument_error(
    ratio: float, shown: str
) -> None:
    with pytest.raises(ServerArgumentError) as caught:
        sglang_reservation(NEMOTRON, available_memory=60 * GiB, mamba_full_memory_ratio=ratio)
    assert str(caught.value) == (
        "argument mamba_full_memory_ratio: must be a finite number above 0 and at most "
        f"1,000,000, got {shown}"
    )


def test_a_memory_ratio_of_a_million_is_read(cli: InProcessCli) -> None:
    argv = ["sglang", "--config", str(NEMOTRON), "--available-memory", "60GiB"]
    assert cli.run([*argv, "--mamba-full-memory-ratio", "1000000"]).status == 0


# --- results beyond 64 bits ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: vllm_reservation(NEMOTRON, block_size=2**62), "attention_page_bytes"),
        (
            lambda: vllm_reservation(NEMOTRON, max_num_seqs=2**62, max_model_len=2**40),
            "state_bytes",
        ),
        (lambda: sglang_reservation(NEMOTRON, max_mamba_cache_size=2**62), "pool_bytes"),
        (lambda: ssm_state(nemotron(mamba_num_heads=2**56)), "per_sequence_bytes"),
        (lambda: metrale(NEMOTRON, max_batch_size=2**62), None),
    ],
)
def test_a_byte_count_beyond_64_bits_is_an_overflow_error(call: Any, field: str | None) -> None:
    with pytest.raises(OverflowError) as caught:
        call()
    if field is not None:
        assert f"{field} would be " in str(caught.value)
        assert str(caught.value).endswith(", beyond the 18446744073709551615 a 64-bit count holds")


@pytest.mark.parametrize(
    "argv",
    [
        ["vllm", "--block-size", str(2**62)],
        ["vllm", "--max-num-seqs", str(2**62), "--max-model-len", str(2**40)],
        ["sglang", "--max-mamba-cache-size", str(2**62)],
    ],
)
def test_a_byte_count_beyond_64_bits_is_a_usage_error(cli: InProcessCli, argv: list[str]) -> None:
    message = usage_error(cli, *argv, "--config", str(NEMOTRON))
    assert message.endswith(", beyond the 18446744073709551615 a 64-bit count holds")


def all_counts(result: Any) -> list[int]:
    return [value for value in result.as_dict().values() if isinstance(value, int)]


def test_every_block_size_gives_counts_within_64_bits_or_an_overflow_error() -> None:
    outcomes = set()
    for bits in range(4, 63):
        try:
            held = vllm_reservation(NEMOTRON, block_size=2**bits)
        except OverflowError:
            outcomes.add("refused")
            continue
        assert max(all_counts(held)) <= USIZE_MAX
        outcomes.add("read")
    assert outcomes == {"read", "refused"}


# --- a yardstick that is none ----------------------------------------------------------------


@pytest.mark.parametrize("yardstick", [object(), None, 5, "free"])
def test_a_wrong_yardstick_is_a_type_error(yardstick: object) -> None:
    message = (
        "yardstick must be a yardstick (PreLoadFreeMemory, PostLoadKvHeadroom, or an object "
        f"with their properties), not {type(yardstick).__name__}"
    )
    for fit in (fit_ring, autofit):
        with pytest.raises(TypeError) as caught:
            fit(8, RingSlot(32, 1), yardstick)  # type: ignore[arg-type]
        assert str(caught.value) == message


def test_a_yardstick_is_read_by_its_properties() -> None:
    class Yardstick:
        name = "a budget"
        beside_term = "beside"
        limit_term = "limit"
        refuses_boot = True
        beside = 0
        limit = 10

    assert fit_ring(8, 1, Yardstick()).slots == 8
    assert fit_ring(8, 2, Yardstick()).slots == 4


# --- the plan's smaller promises -------------------------------------------------------------


def test_plan_under_sglang_names_max_model_len(cli: InProcessCli) -> None:
    # Issue 28 (fixed earlier): the refusal named SGLang's context_length.
    argv = ["plan", "--config", str(NEMOTRON), "--free", "80GiB", "--weights", "16GiB"]
    assert usage_error(cli, *argv, "--max-model-len", "200000", "--server", "sglang") == (
        "argument --max-model-len: 200000 is longer than the model's 131072 (config "
        "max_position_embeddings); SGLang refuses it (configs/model_config.py:1295-1316)"
    )


def test_an_empty_plot_path_is_a_usage_error(cli: InProcessCli, tmp_path: Path) -> None:
    argv = ["plan", "--config", str(NEMOTRON), "--free", "80GiB", "--weights", "16GiB"]
    assert usage_error(cli, *argv, "--max-model-len", "8192", "--plot", "") == (
        "argument --plot: empty path; give the file to draw into"
    )
    assert list(tmp_path.iterdir()) == []


def test_no_batch_at_full_depth_is_null_in_json_and_none_in_text(cli: InProcessCli) -> None:
    # 20 GiB free, 16 GiB of weights: the reserve of one sequence and the full ring (8 x 136.90
    # MiB + 136.90 MiB + 128 MiB of KV cache at tp 1) leave batch 3, so at tp 1 a batch exists;
    # with 17 GiB of weights and 16.5 GiB free, none does.
    argv = ["plan", "--config", str(NEMOTRON), "--free", "16.5GiB", "--weights", "17GiB"]
    argv += ["--max-model-len", "8192", "--tp", "1"]
    outcome = cli.run([*argv, "--json"])
    row = json.loads(outcome.stdout)["rows"][0]
    assert (row["largest_full_depth_batch"], row["full_depth"]) == (None, "none")
    text = cli.run(argv).stdout.splitlines()
    assert text[5].split()[-1] == "none"
    grid = plan(NEMOTRON, int(16.5 * GiB), Reserve(17 * GiB, "--weights", 0, 8192), (1,))
    assert grid.rows[0].largest_full_depth_batch is None


# --- one limit on a layer count --------------------------------------------------------------


@pytest.mark.parametrize("layers", ["100001", "18446744073709551616", "9" * 30])
def test_a_layer_count_has_one_limit_said_one_way(cli: InProcessCli, layers: str) -> None:
    assert usage_error(cli, "decide", "--ssm-layers", layers) == (
        f"argument --ssm-layers: {layers} layers is implausible (at most 100,000)"
    )


# --- bad input changes no state --------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["fit", "--ssm-decode-ring-slots", "4", "--config", "/dev/zero", "--max-batch-size", "8"],
        ["fit", "--ssm-decode-ring-slots", "4", "--example", "--max-batch-size", str(2**64)],
        ["fit", "--ssm-decode-ring-slots", "4", "--example", "--per-seq-state", "16EiB"],
        ["decide", "--ssm-decode-ring-slots", "4", "--config", "/dev/zero"],
        ["decide", "--ssm-decode-ring-slots", "4", "--ssm-layers", "9" * 30],
    ],
)
def test_refused_input_publishes_no_depth(cli: InProcessCli, argv: list[str]) -> None:
    outcome = cli.run(argv)
    check_outcome(argv, outcome)
    assert outcome.status == 2
    assert cli.cell.writes == []  # the pinned 4 was never published
