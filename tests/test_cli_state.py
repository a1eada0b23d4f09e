"""``decode-ring state``: a model's recurrent state per sequence from its config, in each
server's layout, and the ring it would take.

Every command line runs through ``cli.main`` in this process (the ``cell`` fixture: the ring's
variables unset, run from the repository's root). Nemotron-Nano-9B-v2 under vLLM at tp 1: 27
Mamba layers, each a bfloat16 conv state of (4 - 1) x (128 x 80 + 2 x 8 x 128) channels and a
float32 SSM state of 128 heads x 80 x 128. The README's whole text of ``state`` is a golden file
(tests/golden/state-nemotron-nano-9b-v2.txt).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from decode_ring.models import ssm_state

from .support import CONFIGS, SMALL_KIMI, SMALL_MAMBA2, WRITTEN, GiB, run, run_json, usage_error

NEMOTRON = "tests/configs/nemotron-nano-9b-v2.json"
NEMOTRON_CONV = 3 * (128 * 80 + 2 * 8 * 128) * 2
NEMOTRON_SSM = 128 * 80 * 128 * 4
NEMOTRON_PER_SEQUENCE = 27 * (NEMOTRON_CONV + NEMOTRON_SSM)
pytestmark = pytest.mark.usefixtures("cell")


def test_state_of_nemotron_nano_9b_v2_matches_the_published_allocation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, report = run_json(capsys, "state", "--config", NEMOTRON, "--max-batch-size", "256")
    assert status == 0
    assert (report["family"], report["ssm_layers"]) == ("nemotron_h", 27)
    assert report["ssm_shape"] == [128, 80, 128]
    assert report["ssm_dtype"] == "float32"
    assert report["per_sequence_bytes"] == NEMOTRON_PER_SEQUENCE
    # vllm-project/vllm#23230: 33.75 GiB of SSM state at 256 sequences.
    assert report["ssm_bytes"] * report["ssm_layers"] * 256 == 33.75 * GiB
    # The ring is the reference server's: under vLLM's layout there is none (issue 25).
    assert (report["slot_bytes"], report["full_ring_bytes"]) == (None, None)
    _, ring = run_json(
        capsys, "state", "--config", NEMOTRON, "--max-batch-size", "256", "--layout", "metrale"
    )
    # metrale keeps the conv state in float32 too: 27 x (4 x 12288 + 128 x 80 x 128) x 4 B.
    metrale_per_sequence = 27 * (4 * 12288 + 128 * 80 * 128) * 4
    assert ring["per_sequence_bytes"] == metrale_per_sequence
    assert ring["slot_bytes"] == 256 * metrale_per_sequence
    assert ring["full_ring_bytes"] == 8 * 256 * metrale_per_sequence


def test_the_text_names_the_dtype_rules_and_compresses_the_layers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, _ = run(capsys, "state", "--config", NEMOTRON, "--max-batch-size", "32")
    assert status == 0
    assert "0,2,4,6-7,9,11,13,16,18,20,23,25,27,29,32,34,36,38,41,43-44,46,48,50,52,54" in out
    assert "(128, 80, 128) float32 (" in out
    assert f"({NEMOTRON_PER_SEQUENCE:,} B)" in out
    assert "full ring (8 slots)" not in out
    assert "no decode-rollback ring under vllm" in out
    status, ring, _ = run(
        capsys, "state", "--config", NEMOTRON, "--max-batch-size", "32", "--layout", "metrale"
    )
    assert status == 0
    assert "full ring (8 slots)" in ring


def test_a_snapshot_directory_and_the_other_layouts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "config.json").write_text((CONFIGS / "metrale-gdn-48.json").read_text())
    _, report = run_json(capsys, "state", "--config", str(tmp_path), "--layout", "metrale")
    assert report["per_sequence_bytes"] == 158_859_264
    _, sglang = run_json(capsys, "state", "--config", NEMOTRON, "--layout", "sglang")
    assert sglang["per_sequence_bytes"] == NEMOTRON_PER_SEQUENCE


@pytest.mark.parametrize(
    ("name", "layout", "layers", "per_sequence"),
    [
        ("alice-ai-written.json", "vllm", 6, 6_512_640),
        ("gigachat3_5-written.json", "sglang", 9, 9_658_368),
        ("gigachat3_5-layer-types-written.json", "sglang", 9, 9_658_368),
    ],
)
def test_state_runs_on_every_written_config(
    capsys: pytest.CaptureFixture[str], name: str, layout: str, layers: int, per_sequence: int
) -> None:
    path = str(WRITTEN / name)
    status, report = run_json(capsys, "state", "--config", path, "--layout", layout)
    assert status == 0
    assert (report["ssm_layers"], report["per_sequence_bytes"]) == (layers, per_sequence)
    other = "sglang" if layout == "vllm" else "vllm"
    usage_error(capsys, "state", "--config", path, "--layout", other)  # one line, status 2


def test_state_json(capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run_json(capsys, "state", "--config", NEMOTRON, "--tp", "2", "--layout", "sglang")
    assert status == 0
    assert out["tp_size"] == 2 and out["layout"] == "sglang"
    assert out["per_sequence_bytes"] == 143_548_416 // 2
    # No batch, no slot.
    assert (out["slot_bytes"], out["full_ring_bytes"]) == (None, None)


def test_state_json_under_the_reference_layout_without_a_batch_has_no_slot(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The ring is the reference server's, 8 slots deep; with no batch there is no slot to size.
    status, out = run_json(capsys, "state", "--config", NEMOTRON, "--layout", "metrale")
    assert status == 0
    assert (out["max_batch_size"], out["slot_bytes"]) == (None, None)
    assert (out["full_ring_slots"], out["full_ring_bytes"]) == (8, None)


def test_state_dtype_and_speculative_flags(capsys: pytest.CaptureFixture[str]) -> None:
    _, out = run_json(
        capsys,
        "state",
        "--config",
        NEMOTRON,
        "--conv-dtype",
        "fp32",
        "--ssm-dtype",
        "half",
        "--speculative-tokens",
        "2",
    )
    state = out
    assert (state["conv_dtype"], state["ssm_dtype"], state["speculative_tokens"]) == (
        "float32",
        "float16",
        2,
    )
    assert state["conv_shape"] == [5, 12288]


def test_state_of_a_model_without_recurrent_layers_lists_none(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # A plain transformer (the models package's "transformer"): no SSM layer, no state.
    config = tmp_path / "config.json"
    config.write_text(
        '{"model_type": "llama", "num_hidden_layers": 2, "num_attention_heads": 4, '
        '"hidden_size": 64}'
    )
    status, out, _ = run(capsys, "state", "--config", str(config))
    assert status == 0
    assert out.splitlines()[2:] == [
        "  ssm layers                       0  none",
        "  speculative tokens               0",
        "  per layer                      0 B  (0 B)",
        "  per sequence                   0 B  (0 B)",
    ]


def test_state_needs_a_config(capsys: pytest.CaptureFixture[str]) -> None:
    assert usage_error(capsys, "state") == "the following arguments are required: --config"


def test_a_dtype_flag_is_named_as_typed(capsys: pytest.CaptureFixture[str]) -> None:
    for flag in ("--ssm-dtype", "--conv-dtype"):
        message = usage_error(capsys, "state", "--config", NEMOTRON, flag, "float64")
        assert message.startswith(f"argument {flag}: unknown dtype 'float64'")


# A model that mixes kinds of recurrent layer: no family does, so no config can give one to the
# command; the text is rendered from a state made of two small models' groups.
def test_the_text_of_a_model_that_mixes_kinds() -> None:
    import dataclasses

    from decode_ring.cli.render import render
    from decode_ring.reports import StateReport

    mamba = ssm_state(SMALL_MAMBA2)
    kda = ssm_state(SMALL_KIMI)
    mixed = dataclasses.replace(
        mamba, groups=(mamba.groups[0], kda.groups[0]), per_layer_bytes=None
    )
    lines = render(StateReport(mixed)).lines
    # The label column is as wide as its longest label, "kda recurrent bytes per layer" (29).
    assert "  mamba2 layers                           2  0-1" in lines
    assert "  kda layers                              2  0,2" in lines
    assert any(
        line.startswith("  kda recurrent state           (2, 4, 4) float32 (") for line in lines
    )
    assert "  kda recurrent bytes per layer       128 B  (128 B)" in lines
    assert "  mamba2 ssm bytes per layer       4.00 KiB  (4,096 B)" in lines
    assert "  per layer                               -" in lines


def test_a_ring_slot_past_a_usize_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    # The slot overflows where the report sizes it, after the flags were read: still one line.
    most = str(2**64 - 1)
    assert usage_error(capsys, "state", "--config", NEMOTRON, "--max-batch-size", most) == (
        f"max batch size {most} x per-sequence state {NEMOTRON_PER_SEQUENCE} B exceeds the "
        f"{most} B a usize holds"
    )


def test_state_reads_the_model_under_the_release_its_layout_names(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # --vllm-version answers under the vllm layout, --sglang-version under the sglang one.
    _, out = run_json(capsys, "state", "--config", NEMOTRON, "--vllm-version", "0.10.2")
    assert (out["layout"], out["server_version"]) == ("vllm", "0.10.2")
    _, out = run_json(
        capsys, "state", "--config", NEMOTRON, "--layout", "sglang", "--sglang-version", "0.5.9"
    )
    assert (out["layout"], out["server_version"]) == ("sglang", "0.5.9")


@pytest.mark.parametrize(
    ("layout", "versions", "idle"),
    [
        ("vllm", ["--sglang-version", "0.5.9"], "--sglang-version"),
        ("sglang", ["--vllm-version", "0.10.2"], "--vllm-version"),
    ],
)
def test_the_other_servers_version_is_refused_as_doing_nothing(
    capsys: pytest.CaptureFixture[str], layout: str, versions: list[str], idle: str
) -> None:
    assert usage_error(capsys, "state", "--config", NEMOTRON, "--layout", layout, *versions) == (
        f"{idle} does nothing here: the state is laid out as {layout} lays it out; drop it"
    )
    assert usage_error(
        capsys,
        "state",
        "--config",
        NEMOTRON,
        "--layout",
        "metrale",
        "--vllm-version",
        "0.10.2",
        "--sglang-version",
        "0.5.9",
    ) == (
        "--vllm-version and --sglang-version do nothing here: the state is laid out as "
        "metrale lays it out; drop them"
    )


@pytest.mark.parametrize(
    ("layout", "version", "reason"),
    [
        ("vllm", "0.1.0", "vLLM 0.1.0 predates the releases modelled: 0.10.2 to "),
        ("sglang", "0.1.0", "SGLang 0.1.0 predates the releases modelled: 0.5.2 to "),
    ],
)
def test_a_release_before_the_modelled_ones_is_refused_saying_which_are(
    capsys: pytest.CaptureFixture[str], layout: str, version: str, reason: str
) -> None:
    # vLLM's first modelled release is 0.10.2 and SGLang's 0.5.2 (tests/MUTANTS.md, the
    # releases package); the refusal says so after the argument it names.
    message = usage_error(
        capsys, "state", "--config", NEMOTRON, "--layout", layout, f"--{layout}-version", version
    )
    argument, said = message.split(": ", 1)
    assert said.startswith(reason)
    assert argument == f"argument --{layout}-version"
