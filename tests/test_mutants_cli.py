"""``decode-ring`` run in the test process, so that mutation testing reaches it.

The suite's other CLI tests run ``python -m decode_ring`` in a subprocess,
which imports the unmutated package: none of them can kill a mutant of
``cli.py`` (tests/MUTANTS.md). These call ``cli.main`` itself. A command that
would publish a depth publishes into a stand-in for the once-cell instead, as
the preflight tests do. Expected values are the README's, written out.
"""

from __future__ import annotations

import errno
import io
import json
import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from decode_ring import _facade, _selector, cli, preflight
from decode_ring._facade import watchdogs_disabled_from_value
from decode_ring.cli import output as cli_output
from decode_ring.cli import parsing as cli_parsing

from .support import FakeCell

ROOT = Path(__file__).resolve().parent.parent
NEMOTRON = "tests/configs/nemotron-nano-9b-v2.json"

# README, "The main job: decode-ring fit --example".
FIT_EXAMPLE = """\
decode ring fit against pre-load free memory
  ssm layers                      48
  max batch size                  32
  per-sequence state      151.50 MiB  (158,859,264 B)
  one ring slot             4.73 GiB  (5,083,496,448 B)
  reserve without ring      6.87 GiB  (7,380,926,464 B)
  free memory              14.10 GiB  (15,139,759,718 B)
  requested depth                  8
  requested by           default

  depth         ring        total  fits
      8    37.88 GiB    44.75 GiB  no
      4    18.94 GiB    25.81 GiB  no
      2     9.47 GiB    16.34 GiB  no
      1     4.73 GiB    11.61 GiB  yes  <- chosen
      0          0 B     6.87 GiB  yes

chosen depth   1
decision       ssm decode ring: 1 of 8 requested slots against pre-load free memory: \
ring 4.73 GiB (1 x 4.73 GiB) + reserve without ring 6.87 GiB = 11.61 GiB <= free memory 14.10 GiB
warning        ssm decode ring lowered from 8 to 1 slots to fit pre-load free memory \
(14.10 GiB); pass --ssm-decode-ring-slots N to pin a depth (refused rather than shrunk)
"""

# README, "The state of a real model".
STATE_NEMOTRON = """\
ssm state of nemotron_h (nemotron_h) per sequence, tp rank 1 of 1, vllm layout
  config                 'tests/configs/nemotron-nano-9b-v2.json'
  ssm layers                      27  \
0,2,4,6-7,9,11,13,16,18,20,23,25,27,29,32,34,36,38,41,43-44,46,48,50,52,54
  conv state             (3, 12288) bfloat16 (config torch_dtype bfloat16 (vLLM: model dtype))
  ssm state              (128, 80, 128) float32 \
(vLLM NemotronH default float32 (vllm/model_executor/models/config.py:812-848))
  speculative tokens               0
  conv bytes per layer     72.00 KiB  (73,728 B)
  ssm bytes per layer       5.00 MiB  (5,242,880 B)
  per layer                 5.07 MiB  (5,316,608 B)
  per sequence            136.90 MiB  (143,548,416 B)
  max batch size                 256
  batch x per sequence     34.22 GiB  (36,748,394,496 B)
  ring                             -  no decode-rollback ring under vllm: it is the reference \
server's (--layout metrale)
"""

# README, "Capacity at a glance".
PLAN_NEMOTRON = """\
decode ring depth by tensor-parallel size and batch: nemotron_h, vllm layout, per rank
free memory 80.00 GiB, requested depth 8
weights 16.50 GiB (--weights), other 4.00 GiB, max model len 8,192

   tp    state/seq       kv/seq       8    16    32    64   128   256   512  full depth up to batch
    1   136.90 MiB   128.00 MiB       8     8     8     4     1     -     -                      44
    2    68.45 MiB    64.00 MiB       8     8     8     8     4     2     0                     102
    4    34.22 MiB    32.00 MiB       8     8     8     8     8     4     2                     216
    8    17.11 MiB    16.00 MiB       8     8     8     8     8     8     4                     445

reserve per rank = weights / tp + other + batch x (state/seq + kv/seq)
  the weights divided evenly by tp; the ring (depth x batch x state/seq) goes beside it
- : the server refuses to boot (the reserve alone does not fit)
full depth up to batch: the largest batch at depth 8; none: no batch is; -: 8 is not requested
"""

PLAN_ARGS = ["plan", "--config", NEMOTRON, "--free", "1GiB", "--weights", "1GiB"]
# The README's plan: Nemotron-Nano-9B-v2 on 80 GiB per rank, 8,192 tokens per sequence.
PLAN_README = [
    *["plan", "--config", NEMOTRON, "--free", "80GiB", "--weights", "16.5GiB"],
    *["--other", "4GiB", "--max-model-len", "8192"],
]
GiB = 2**30
MiB = 2**20
SLOT = 5_083_496_448  # the README's one ring slot: 32 x 158,859,264 B
PER_SEQ = 158_859_264
RESERVE = 7039 * MiB
FREE = 15_139_759_718  # 14.1 GiB


@pytest.fixture
def cell(ring_environment: pytest.MonkeyPatch) -> FakeCell:
    """The CLI over a stand-in once-cell, with the ring's variables unset."""
    fake = FakeCell()

    def decide(layers: int, speculative: bool) -> Any:
        return _selector.decode_rollback_ring_slots_with(
            layers,
            speculative,
            fake.value,
            os.environ.get("METRALE_SSM_DECODE_RING"),
            watchdogs_disabled_from_value(os.environ.get("METRALE_DISABLE_WATCHDOGS")),
        )

    ring_environment.setattr(preflight, "set_decode_ring_slots", fake.set)
    ring_environment.setattr(preflight, "published_decode_ring_slots", fake.get)
    ring_environment.setattr(preflight, "decode_rollback_ring_slots", decide)
    ring_environment.setattr(_facade, "published_decode_ring_slots", fake.get)
    ring_environment.setenv("COLUMNS", "100")
    ring_environment.chdir(ROOT)
    return fake


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = cli.main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    status, out, _ = run(capsys, *args, "--json")
    assert out.count("\n") == 1
    return status, json.loads(out)


def usage_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    status, out, err = run(capsys, *args)
    assert (status, out) == (2, "")
    assert err.startswith("decode-ring: error: ") and err.endswith("\n")
    assert err.count("\n") == 1
    return err[len("decode-ring: error: ") : -1]


def squeeze(text: str) -> str:
    return " ".join(text.split())


# --- the README's outputs ----------------------------------------------------


def test_fit_example_prints_the_readme(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "fit", "--example") == (0, FIT_EXAMPLE, "")
    assert cell.writes == [1]


def test_state_prints_the_readme(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    args = ("state", "--config", NEMOTRON, "--max-batch-size", "256")
    assert run(capsys, *args) == (0, STATE_NEMOTRON, "")


def test_plan_prints_the_readme(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, *PLAN_README) == (0, PLAN_NEMOTRON, "")


# --- fit ----------------------------------------------------------------------


def test_fit_example_json_inputs(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run_json(capsys, "fit", "--example")
    assert status == 0
    assert out["inputs"] == {
        "ssm_layers": 48,
        "max_batch_size": 32,
        "per_seq_state": PER_SEQ,
        "reserve_without_ring": RESERVE,
        "free": FREE,
        "speculative": False,
        "kv_floor": None,
        "headroom": None,
    }
    assert (out["requested"], out["slots"], out["published"]) == (8, 1, 1)
    assert (out["slot_bytes"], out["limit_bytes"]) == (SLOT, FREE)


def test_flags_given_override_the_example(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = run_json(
        capsys,
        "fit",
        "--example",
        "--ssm-layers",
        "3",
        "--max-batch-size",
        "2",
        "--per-seq-state",
        "1MiB",
        "--reserve-without-ring",
        "1GiB",
        "--free",
        "2GiB",
    )
    assert status == 0
    assert out["inputs"] == {
        "ssm_layers": 3,
        "max_batch_size": 2,
        "per_seq_state": MiB,
        "reserve_without_ring": GiB,
        "free": 2 * GiB,
        "speculative": False,
        "kv_floor": None,
        "headroom": None,
    }
    assert (out["requested"], out["slots"], out["slot_bytes"]) == (8, 8, 2 * MiB)
    assert cell.writes == []


def test_fit_without_example_takes_every_flag(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = run_json(
        capsys,
        "fit",
        "--ssm-layers",
        "48",
        "--max-batch-size",
        "32",
        "--per-seq-state",
        "151.5MiB",
        "--reserve-without-ring",
        "7039MiB",
        "--free",
        "14.1GiB",
    )
    assert status == 0
    assert (out["slots"], out["slot_bytes"], out["beside_bytes"]) == (1, SLOT, RESERVE)


def test_fit_speculative_requests_no_ring(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = run_json(capsys, "fit", "--example", "--speculative")
    assert status == 0
    assert (out["requested"], out["slots"], out["inputs"]["speculative"]) == (0, 0, True)
    assert cell.writes == []


def test_fit_speculative_tokens_turn_speculative_decode_on(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = run_json(capsys, "fit", "--example", "--speculative-tokens", "1")
    assert (status, out["requested"], out["inputs"]["speculative"]) == (0, 0, True)
    status, out = run_json(capsys, "fit", "--example", "--speculative-tokens", "0")
    assert (status, out["requested"], out["inputs"]["speculative"]) == (0, 8, False)


def test_fit_post_load(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run_json(capsys, "fit", "--example", "--kv-floor", "1GiB", "--headroom", "8GiB")
    assert status == 0
    assert out["yardstick"] == "post-load KV headroom"
    assert out["inputs"]["kv_floor"] == GiB and out["inputs"]["headroom"] == 8 * GiB
    assert (out["beside_bytes"], out["limit_bytes"], out["slots"]) == (GiB, 8 * GiB, 1)
    assert (out["inputs"]["reserve_without_ring"], out["inputs"]["free"]) == (None, None)


def test_fit_post_load_needs_no_pre_load_pair(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    # Without --example: --reserve-without-ring and --free are not asked for.
    status, out = run_json(
        capsys,
        "fit",
        "--ssm-layers",
        "48",
        "--max-batch-size",
        "32",
        "--per-seq-state",
        "151.5MiB",
        "--kv-floor",
        "0",
        "--headroom",
        "64GiB",
    )
    assert (status, out["slots"], out["beside_bytes"]) == (0, 8, 0)


def test_fit_a_pinned_depth_that_does_not_fit_is_refused(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, "fit", "--example", "--ssm-decode-ring-slots", "4")
    assert status == 1
    assert err == (
        "decode-ring: refused: ring depth 4 does not fit pre-load free memory: ring 4 x batch 32 "
        "x per-sequence state 151.50 MiB = 18.94 GiB, + reserve without ring 6.87 GiB = "
        "25.81 GiB > free memory 14.10 GiB; the deepest depth that fits is 1\n"
    )
    assert "chosen depth   none: the server refuses to boot" in out
    assert cell.writes == [4]


def test_fit_json_refusal_is_one_object(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run_json(capsys, "fit", "--example", "--ssm-decode-ring-slots", "2")
    assert status == 1
    assert (out["slots"], out["fits"]) == (2, False)
    assert capsys.readouterr() == ("", "")


def test_fit_auto_publishes_nothing_first(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = run_json(capsys, "fit", "--example", "--ssm-decode-ring-slots", "auto")
    assert (status, out["slots"]) == (0, 1)
    assert cell.writes == [1]


def test_fit_with_a_config(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run_json(
        capsys,
        "fit",
        "--config",
        NEMOTRON,
        "--max-batch-size",
        "256",
        "--reserve-without-ring",
        "20GiB",
        "--free",
        "44GiB",
    )
    # README: tp 1, batch 256 keeps depth 0 (one slot is 34.22 GiB).
    assert (status, out["slots"]) == (0, 0)
    assert out["inputs"]["ssm_layers"] == 27
    assert out["inputs"]["per_seq_state"] == 143_548_416
    assert out["slot_bytes"] == 36_748_394_496


def test_fit_with_a_config_follows_the_model_flags(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    common: tuple[str, ...] = ("fit", "--config", NEMOTRON, "--max-batch-size", "1")
    common = (*common, "--reserve-without-ring", "1GiB", "--free", "2GiB")
    # README: 68.45 MiB per sequence at tp 2.
    status, out = run_json(capsys, *common, "--tp", "2")
    assert (status, out["inputs"]["per_seq_state"]) == (0, 143_548_416 // 2)
    # float32 conv state: (3 x 12288) x 4 B more per layer, 27 layers.
    status, out = run_json(capsys, *common, "--conv-dtype", "float32")
    assert out["inputs"]["per_seq_state"] == 143_548_416 + 27 * 3 * 12288 * 2
    # bfloat16 SSM state: half of 128 x 80 x 128 x 4 B per layer.
    status, out = run_json(capsys, *common, "--ssm-dtype", "bfloat16")
    assert out["inputs"]["per_seq_state"] == 143_548_416 - 27 * 128 * 80 * 128 * 2
    # SGLang lays the same bytes out as vLLM; metrale keeps all 4 columns, float32.
    status, out = run_json(capsys, *common, "--layout", "sglang")
    assert out["inputs"]["per_seq_state"] == 143_548_416
    status, out = run_json(capsys, *common, "--layout", "metrale")
    assert out["inputs"]["per_seq_state"] == 27 * (4 * 12288 * 4 + 128 * 80 * 128 * 4)
    # One draft token widens vLLM's conv window from 3 to 4 columns.
    status, out = run_json(capsys, *common, "--speculative-tokens", "1")
    assert out["inputs"]["per_seq_state"] == 143_548_416 + 27 * 12288 * 2
    assert out["inputs"]["speculative"] is True


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--kv-floor", "1GiB"], "--kv-floor and --headroom go together"),
        (["--headroom", "1GiB"], "--kv-floor and --headroom go together"),
        (
            ["--kv-floor", "1GiB", "--headroom", "2GiB", "--free", "1GiB"],
            "--reserve-without-ring and --free fit pre-load; --kv-floor and --headroom "
            "post-load: give one pair",
        ),
        (
            ["--kv-floor", "1GiB", "--headroom", "2GiB", "--reserve-without-ring", "1GiB"],
            "--reserve-without-ring and --free fit pre-load; --kv-floor and --headroom "
            "post-load: give one pair",
        ),
        (
            ["--config", NEMOTRON, "--ssm-layers", "1"],
            "--config gives the SSM layers and the per-sequence state: "
            "drop --ssm-layers and --per-seq-state",
        ),
        (
            ["--config", NEMOTRON, "--per-seq-state", "1MiB"],
            "--config gives the SSM layers and the per-sequence state: "
            "drop --ssm-layers and --per-seq-state",
        ),
    ],
)
def test_fit_flag_combinations_that_are_refused(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert usage_error(capsys, "fit", "--example", *args) == message


def test_fit_names_every_missing_flag(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    assert usage_error(capsys, "fit") == (
        "fit needs --ssm-layers, --max-batch-size, --per-seq-state, --reserve-without-ring, "
        "--free (or --config, or --example)"
    )
    assert usage_error(
        capsys, "fit", "--ssm-layers", "1", "--kv-floor", "1GiB", "--headroom", "1GiB"
    ) == ("fit needs --max-batch-size, --per-seq-state (or --config, or --example)")
    assert usage_error(
        capsys, "fit", "--config", NEMOTRON, "--reserve-without-ring", "1GiB", "--free", "1GiB"
    ) == ("fit needs --max-batch-size")


def test_fit_a_slot_past_usize_is_a_usage_error(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    big = str(2**63)
    assert usage_error(capsys, "fit", "--example", "--max-batch-size", big) == (
        f"max batch size {big} x per-sequence state {PER_SEQ} B exceeds "
        f"the {2**64 - 1} B a usize holds"
    )


# --- decide -------------------------------------------------------------------


def test_decide_text(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "decide", "--ssm-layers", "48")
    assert (status, err) == (0, "")
    assert out == (
        "ring depth                     8\n"
        "rule                           default\n"
        "skip reason                    -\n"
        "ssm layers                     48\n"
        "speculative                    no\n"
        "published                      none\n"
        "METRALE_SSM_DECODE_RING        (unset)\n"
        "METRALE_DISABLE_WATCHDOGS      (unset)\n"
        "METRALE_SSM_RESERVE_RING_FULL  (unset)\n"
        f"core                           {_selector.CORE}\n"
    )


def test_decide_json_speculative(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run_json(capsys, "decide", "--ssm-layers", "48", "--speculative")
    assert status == 0
    assert out == {
        "slots": 0,
        "skip_reason": "speculative decode active",
        "rule": "speculative decode",
        "ssm_layers": 48,
        "speculative": True,
        "published": None,
        "environment": {
            "METRALE_SSM_DECODE_RING": None,
            "METRALE_DISABLE_WATCHDOGS": None,
            "METRALE_SSM_RESERVE_RING_FULL": None,
        },
        "environment_not_utf8": [],
        "core": _selector.CORE,
    }


def test_decide_pins_a_depth_first(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run_json(capsys, "decide", "--ssm-layers", "48", "--ssm-decode-ring-slots", "3")
    assert (status, out["slots"], out["rule"], out["published"]) == (0, 3, "published", 3)
    assert cell.writes == [3]


def test_decide_auto_pins_nothing(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run_json(
        capsys, "decide", "--ssm-layers", "48", "--ssm-decode-ring-slots", "auto"
    )
    assert (status, out["slots"], out["rule"]) == (0, 8, "default")
    assert cell.writes == []


def test_pinning_against_another_published_depth_is_a_usage_error(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    cell.value = 4
    message = usage_error(capsys, "decide", "--ssm-layers", "48", "--ssm-decode-ring-slots", "2")
    assert message == "a ring depth of 4 is already published"
    assert usage_error(capsys, "fit", "--example", "--ssm-decode-ring-slots", "0") == message
    assert cell.writes == [2, 0]


def test_decide_needs_ssm_layers(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    assert usage_error(capsys, "decide") == "decide needs --ssm-layers N (or --config)"


# --- state and plan -----------------------------------------------------------


def test_state_json(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run_json(capsys, "state", "--config", NEMOTRON, "--tp", "2", "--layout", "sglang")
    assert status == 0
    assert out["tp_size"] == 2 and out["layout"] == "sglang"
    assert out["per_sequence_bytes"] == 143_548_416 // 2


def test_state_dtype_and_speculative_flags(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
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


def test_state_needs_a_config(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    assert usage_error(capsys, "state") == "the following arguments are required: --config"


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


def test_plan_json_and_flags(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run_json(
        capsys,
        *PLAN_README,
        "--tp",
        "1,8",
        "--max-batch-size",
        "8,512",
    )
    assert status == 0
    # README's grid: tp 1 gives 8 and refuses 512, tp 8 gives 8 and 4.
    assert [row["depths"] for row in out["rows"]] == [[8, None], [8, 4]]
    assert [row["tp_size"] for row in out["rows"]] == [1, 8]


def test_plan_follows_the_model_flags(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    args = PLAN_README
    _, out = run_json(capsys, *args, "--tp", "1", "--max-batch-size", "8", "--layout", "metrale")
    # metrale keeps all 4 conv columns, float32: 27 x (4 x 12288 x 4 + 128 x 80 x 128 x 4) B.
    assert out["rows"][0]["per_sequence_bytes"] == 27 * (4 * 12288 * 4 + 128 * 80 * 128 * 4)
    assert out["layout"] == "metrale"


def test_plan_speculative_tokens_turn_speculative_decode_on(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    args = PLAN_README
    _, out = run_json(capsys, *args, "--tp", "8", "--max-batch-size", "8")
    assert out["rows"][0]["depths"] == [8]
    _, out = run_json(
        capsys, *args, "--tp", "8", "--max-batch-size", "8", "--speculative-tokens", "1"
    )
    assert out["rows"][0]["depths"] == [0]


def test_plan_plot_without_matplotlib_is_a_usage_error(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn: list[tuple[str, str]] = []

    def no_matplotlib(grid: object, path: str) -> None:
        drawn.append((type(grid).__name__, path))
        raise ImportError("No module named 'matplotlib'")

    monkeypatch.setattr(cli.model, "plot_plan", no_matplotlib)
    assert usage_error(capsys, *PLAN_README, "--plot", "grid.png") == (
        "--plot needs matplotlib: pip install 'decode_ring[plot]'"
    )
    assert drawn == [("Plan", "grid.png")]


# --- argument types -----------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["decide", "--ssm-layers", "x"],
            "argument --ssm-layers: not a non-negative integer: 'x'",
        ),
        (["state", "--config", NEMOTRON, "--tp", "0"], "argument --tp: must be at least 1"),
        (
            ["state", "--config", NEMOTRON, "--tp", "2.0"],
            "argument --tp: not a non-negative integer: '2.0'",
        ),
        (
            [*PLAN_ARGS, "--tp", "1,2,1"],
            "argument --tp: a value repeats in '1,2,1'",
        ),
        (
            [*PLAN_ARGS, "--max-batch-size", "8,0"],
            "argument --max-batch-size: must be at least 1",
        ),
        (
            ["decide", "--ssm-layers", "1", "--ssm-decode-ring-slots", "9"],
            "argument --ssm-decode-ring-slots: ssm-decode-ring-slots 9 exceeds the 8 the ring "
            "is sized for",
        ),
        (
            ["fit", "--example", "--free", "14.1"],
            "argument --free: invalid size '14.1': bytes must be whole; did you mean 14.1GiB? "
            "Write bytes, or a number with a unit: Ki/KiB, Mi/MiB, Gi/GiB, Ti/TiB (powers of "
            "1024) or K/KB, M/MB, G/GB, T/TB (powers of 1000), any case, e.g. 14.1GiB",
        ),
        (
            ["state", "--config", NEMOTRON, "--layout", "x"],
            "argument --layout: invalid choice: 'x' (choose from vllm, sglang, metrale)",
        ),
        (["fit", "--fr", "1"], "unrecognized arguments: --fr 1"),
        (["decide", "--ssm-layers", "1", "a\nb"], "unrecognized arguments: a\\nb"),
        (["--fr"], "unrecognized arguments: --fr"),
    ],
)
def test_usage_errors_are_one_line(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    got = usage_error(capsys, *args)
    # argparse quotes choices differently across Python versions.
    if "choose from" in message:
        assert got.replace("'", "").replace('"', "") == message.replace("'", "")
    else:
        assert got == message


def test_counts_read_leading_zeros_and_plus(
    cell: FakeCell, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = run_json(capsys, "decide", "--ssm-layers", "+007")
    assert (status, out["ssm_layers"]) == (0, 7)
    status, out = run_json(capsys, "decide", "--ssm-layers", "0")
    assert (status, out["ssm_layers"], out["rule"]) == (0, 0, "no SSM layers")


def test_count_list_keeps_the_order(cell: FakeCell) -> None:
    assert cli_parsing.count_list("8,1,4") == (8, 1, 4)
    assert cli_parsing.count_list("3") == (3,)


# --- help and version ---------------------------------------------------------


def help_of(capsys: pytest.CaptureFixture[str], *command: str) -> str:
    status, out, err = run(capsys, *command, "--help")
    assert (status, err) == (0, "")
    return squeeze(out)


def test_version(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "--version") == (0, "decode-ring 0.1.0\n", "")


def test_top_level_help(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    text = help_of(capsys)
    assert text.startswith(
        "usage: decode-ring [-h] [--version] {decide,fit,state,plan,vllm,sglang} ..."
    )
    assert "Each command has a function" not in text  # only the docstring's first paragraph
    assert "Exit status" not in text  # only the docstring's first paragraph
    for fragment in [
        "decode-ring: the depth a server would choose here and now, its fit, and a model's state.",
        "decide the depth the runtime would choose here",
        "fit preflight: request, fit to memory, publish",
        "state a model's SSM state from its config.json",
        "plan depth by tensor-parallel size and batch, memory per rank",
        # Issue 19: the exit statuses and the environment variables.
        "exit status: 0 the chosen depth fits",
        "1 the server would refuse to boot (fit, vllm, sglang: its own refusal on stderr); no "
        "cell of the grid boots (plan)",
        "2 a usage error, or a config that cannot be read or that the servers refuse",
        "74 the output (or the --plot file) cannot be written",
        "130 interrupted",
        "141 the reader closed the pipe early",
        "environment: METRALE_SSM_DECODE_RING 1: the full ring, 0: none (the decision)",
        "METRALE_DISABLE_WATCHDOGS true (any case, trimmed): skip the ring",
        "METRALE_SSM_RESERVE_RING_FULL present, any value: fit reserves the full depth",
        "DECODE_RING_NO_EXTENSIONS set, not empty or 0: the pure-Python core",
        "HF_HOME, HF_HUB_CACHE where --config ORG/NAME is looked up",
        "vllm what vLLM 0.33.0 reserves for the state, from a launch line's flags",
        "sglang what SGLang 0.5.23 reserves for the state, from a launch line's flags",
    ]:
        assert fragment in text


COMMON_HELP = [
    "--ssm-layers N SSM layers in the model",
    "--speculative speculative decode (or dflash) is on",
    "--ssm-decode-ring-slots auto|N the server flag: N (0 to 8) pins a depth",
    "--json one JSON object on stdout",
]
CONFIG_HELP = (
    "--config PATH the model: a config.json, a snapshot directory, a models--ORG--NAME cache "
    "folder, ORG/NAME from the local Hugging Face cache (pip install 'decode_ring[hub]'), or - "
    "for stdin"
)
MODEL_HELP = [
    CONFIG_HELP,
    "--layout {vllm,sglang,metrale} whose layout",
    "--conv-dtype D bfloat16, float16 or float32",
    "--ssm-dtype D bfloat16, float16 or float32",
    "--speculative-tokens N draft tokens per step (vLLM widens the conv window)",
]
SEE_TOP_HELP = "Exit statuses and environment variables: decode-ring --help."
SIZE_EPILOG = (
    "SIZE: bytes, or a number with a unit: Ki/KiB, Mi/MiB, Gi/GiB, Ti/TiB (powers of 1024) or "
    "K/KB, M/MB, G/GB, T/TB (powers of 1000), any case, e.g. 14.1GiB. So 80G is 80 x 10^9 "
    "bytes and 80GiB 80 x 2^30. A bare number is bytes, and a bare number under 1 MiB (but 0) "
    f"is refused: write 80GiB, or 80B to mean bytes. {SEE_TOP_HELP}"
)


def test_decide_help(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    text = help_of(capsys, "decide")
    assert text.startswith(
        "usage: decode-ring decide [-h] [--ssm-layers N] [--speculative] "
        "[--ssm-decode-ring-slots auto|N] [--json] [--config PATH]"
    )
    for fragment in [*COMMON_HELP, CONFIG_HELP]:
        assert fragment in text
    assert text.endswith(SEE_TOP_HELP)


def test_fit_help(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    text = help_of(capsys, "fit")
    assert text.startswith(
        "usage: decode-ring fit [-h] [--ssm-layers N] [--speculative] "
        "[--ssm-decode-ring-slots auto|N] [--json] [--example] [--max-batch-size B] "
        "[--per-seq-state SIZE] [--reserve-without-ring SIZE] [--free SIZE] [--kv-floor SIZE] "
        "[--headroom SIZE] [--config PATH] [--tp N] [--layout {vllm,sglang,metrale}] "
        "[--conv-dtype D] [--ssm-dtype D] [--speculative-tokens N]"
    )
    for fragment in [
        *COMMON_HELP,
        *MODEL_HELP,
        "--example the worked example (flags given override it)",
        "--max-batch-size B --per-seq-state SIZE recurrent state of one sequence, all SSM layers",
        "--reserve-without-ring SIZE pre-load: the rest of the reserve",
        "--free SIZE pre-load: free memory",
        "--kv-floor SIZE post-load: the KV-cache floor (with --headroom)",
        "--headroom SIZE post-load: the predicted KV headroom (with --kv-floor)",
        "--tp N --layout",
    ]:
        assert fragment in text
    assert text.endswith(SIZE_EPILOG)


def test_state_help(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    text = help_of(capsys, "state")
    assert text.startswith(
        "usage: decode-ring state [-h] --config PATH [--tp N] [--layout {vllm,sglang,metrale}] "
        "[--conv-dtype D] [--ssm-dtype D] [--speculative-tokens N] [--max-batch-size B] [--json]"
    )
    for fragment in [
        *MODEL_HELP,
        "--tp N --layout",
        "--max-batch-size B also size the ring",
        "--json one JSON object on stdout",
    ]:
        assert fragment in text
    assert "SIZE" not in text
    assert text.endswith(SEE_TOP_HELP)


def test_plan_help(cell: FakeCell, capsys: pytest.CaptureFixture[str]) -> None:
    text = help_of(capsys, "plan")
    assert text.startswith(
        "usage: decode-ring plan [-h] [--config PATH] [--layout {vllm,sglang,metrale}] "
        "[--conv-dtype D] [--ssm-dtype D] [--speculative-tokens N] [--ssm-layers N] "
        "[--per-seq-state SIZE] [--free SIZE] [--gpu NAME] [--gpu-memory SIZE] [--weights SIZE] "
        "[--other SIZE] "
        "[--max-model-len N] [--tp N,N,...] [--max-batch-size B,B,...] "
        "[--server {metrale,vllm,sglang}] [--plot FILE] [--json]"
    )
    for fragment in [
        *MODEL_HELP,
        "--ssm-layers N SSM layers in the model",
        "--per-seq-state SIZE without --config: one sequence's recurrent state at tp 1 "
        "(divided evenly by tp)",
        "--free SIZE per rank (under --server vllm or sglang, --gpu or --gpu-memory instead: "
        "the server's own budget)",
        "--weights SIZE the whole checkpoint, divided evenly by tp (default: a snapshot's "
        "model.safetensors.index.json total_size)",
        "--other SIZE per rank, what does not depend on the model: activations, workspace "
        "(default 0)",
        "--max-model-len N tokens per sequence that the KV cache holds (needed when the model "
        "has attention)",
        "--tp N,N,... tensor-parallel sizes (default 1,2,4,8)",
        "--max-batch-size B,B,... batch sizes (default 8,16,32,64,128,256,512)",
        "--server {metrale,vllm,sglang} whose budget: metrale (the reference's ring depth, the "
        "default), or vllm or sglang (which batches of --max-model-len tokens each server "
        "holds; no ring)",
        "--plot FILE also draw the grid into exactly FILE, in its extension's format (PNG "
        "without one; needs matplotlib)",
        "--json one JSON object on stdout",
    ]:
        assert fragment in text
    assert text.endswith(SIZE_EPILOG)


# --- main's exits -------------------------------------------------------------


class Unwritable(io.StringIO):
    """A stdout whose writes raise ``error``; ``fileno`` is ``fd``."""

    def __init__(self, error: BaseException, fd: int = -1) -> None:
        super().__init__()
        self.error = error
        self.fd = fd

    def write(self, text: str) -> int:
        raise self.error

    def fileno(self) -> int:
        return self.fd


def test_a_full_disk_is_one_line_and_status_74(
    cell: FakeCell,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    with (tmp_path / "stdout").open("w") as target:
        full = Unwritable(OSError(28, "No space left on device"), target.fileno())
        monkeypatch.setattr("sys.stdout", full)
        assert cli.main(["decide", "--ssm-layers", "1"]) == 74
        assert os.path.samestat(os.fstat(target.fileno()), os.stat(os.devnull))
    assert capsys.readouterr().err == (
        "decode-ring: error: cannot write the output: [Errno 28] No space left on device\n"
    )


def test_a_closed_pipe_points_stdout_at_nothing_and_is_141(
    cell: FakeCell,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    with (tmp_path / "stdout").open("w") as target:
        monkeypatch.setattr("sys.stdout", Unwritable(BrokenPipeError(), target.fileno()))
        assert cli.main(["decide", "--ssm-layers", "1"]) == 141
        assert os.path.samestat(os.fstat(target.fileno()), os.stat(os.devnull))
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    ("raised", "status"),
    [(KeyboardInterrupt(), 130), (SystemExit(3), 3), (SystemExit("bye"), 2), (SystemExit(), 2)],
)
def test_interrupts_and_exits(
    cell: FakeCell,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    raised: BaseException,
    status: int,
) -> None:
    def command(args: object) -> object:
        raise raised

    monkeypatch.setitem(cli.COMMANDS, "decide", replace(cli.COMMANDS["decide"], run=command))
    assert cli.main(["decide", "--ssm-layers", "1"]) == status


def test_an_overflow_is_a_usage_error(
    cell: FakeCell, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def command(args: object) -> object:
        raise OverflowError("too\nbig")

    monkeypatch.setitem(cli.COMMANDS, "decide", replace(cli.COMMANDS["decide"], run=command))
    assert usage_error(capsys, "decide", "--ssm-layers", "1") == "too\\nbig"


def test_write_escapes_what_the_stream_cannot_encode() -> None:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii")
    cli_output.write(stream, "caf\xe9 \u2028")
    assert raw.getvalue() == b"caf\\xe9 \\u2028\n"  # flushed: the bytes are there
    utf8 = io.StringIO()  # no encoding: UTF-8
    cli_output.write(utf8, "caf\xe9")
    assert utf8.getvalue() == "caf\xe9\n"


class Bare:
    """A stream with no ``encoding`` attribute at all."""

    def __init__(self) -> None:
        self.text = ""
        self.flushed = False

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        self.flushed = True


def test_write_to_a_stream_without_an_encoding_uses_utf8() -> None:
    stream = Bare()
    cli_output.write(stream, "caf\xe9")  # type: ignore[arg-type]
    assert (stream.text, stream.flushed) == ("caf\xe9\n", True)


def test_one_line_escapes_only_what_is_not_printable() -> None:
    assert cli_output.one_line("a\nb\tc\u2028d\xe9 e") == "a\\nb\\tc\\u2028d\xe9 e"


def test_flag_names() -> None:
    assert cli_parsing.flag("reserve_without_ring") == "--reserve-without-ring"
    assert re.fullmatch(r"--[a-z-]+", cli_parsing.flag("max_batch_size"))
