"""``decode-ring vllm`` and ``decode-ring sglang``: the servers' flags, their text and JSON, and
one line on stderr with status 2 for anything they do not take. Expected figures are those
tests/test_servers.py pins from the servers' own code."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from decode_ring.cli import main

CONFIGS = Path(__file__).resolve().parent / "configs"
NEMOTRON = str(CONFIGS / "nemotron-nano-9b-v2.json")
QWEN3_NEXT = str(CONFIGS / "qwen3-next-80b-a3b-instruct.json")
GIB = 2**30


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


def test_vllm_text_shows_each_term_with_its_rule_and_the_multiplier(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = run(capsys, "vllm", "--config", NEMOTRON)
    assert (status, err) == (0, "")
    assert out.startswith("vLLM 0.33.0 reserves for nemotron_h (nemotron_h), per rank")
    assert "sm90: H100 / H200" in out
    assert "attention FLASH_ATTN" in out
    assert "1312 tokens" in out and "vllm/platforms/interface.py:940-1137" in out
    assert "(5,373,952 B)" in out and "(21,495,808 B)" in out
    assert "planned at startup       107.62 GiB        34.22 GiB  3.145x" in out
    assert "held at decode            35.88 GiB        34.22 GiB  1.048x" in out


def test_vllm_json_is_the_reservation(capsys: pytest.CaptureFixture[str]) -> None:
    result = json_of(
        capsys, "vllm", "--config", NEMOTRON, "--kv-cache-memory-bytes", "80G", "-tp", "1"
    )
    assert result["kv_cache_memory_bytes"] == 80 * GIB  # vLLM's G is 2**30
    assert result["num_blocks"] == 3996
    assert result["max_concurrency"] == 33.02479338842975
    assert result["planned_state_bytes"] == 115_561_463_808
    assert result["gpu_arch"] == "sm90"


def test_vllm_spellings(capsys: pytest.CaptureFixture[str]) -> None:
    base = ("vllm", "--config", QWEN3_NEXT, "--no-enable-prefix-caching")
    spec = json_of(capsys, *base, "--speculative-config", '{"num_speculative_tokens": 2}')
    assert spec["num_speculative_tokens"] == 2 and spec["block_size"] == 560
    assert json_of(capsys, *base, "--spec-tokens", "2")["state_bytes"] == spec["state_bytes"]
    # vLLM 0.33.0 has no --num-speculative-tokens (vllm/engine/arg_utils.py:1866-1873).
    assert main([*base, "--num-speculative-tokens", "2"]) == 2
    assert capsys.readouterr().err == (
        "decode-ring: error: '--num-speculative-tokens' is not a vLLM 0.33.0 flag\n"
    )
    # vLLM's --disable-prefix-caching turns it off as --no-enable-prefix-caching does.
    off = json_of(capsys, "vllm", "--config", QWEN3_NEXT, "--disable-prefix-caching")
    assert off["enable_prefix_caching"] is False
    underscored = json_of(capsys, *base, "--max_num_seqs", "8", "--tensor_parallel_size=2")
    assert (underscored["max_num_seqs"], underscored["tensor_parallel_size"]) == (8, 2)
    assert json_of(capsys, *base, "--max-model-len", "25.6k")["max_model_len"] == 25_600
    assert json_of(capsys, *base, "--max-model-len", "32K")["max_model_len"] == 32_768
    method = json_of(
        capsys,
        *base,
        "--speculative-config",
        '{"method": "mtp", "num_speculative_tokens": 1}',
    )
    assert any("'mtp'" in note for note in method["assumptions"])  # type: ignore[attr-defined]


def test_sglang_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("sglang", "--config", NEMOTRON, "--available-memory", "60GiB")
    status, out, err = run(capsys, *args, "--max-running-requests", "256")
    assert (status, err) == (0, "")
    assert out.startswith(
        "SGLang 0.5.23 reserves for nemotron_h (nemotron_h, NemotronHForCausalLM)"
    )
    assert "state slots K          211" in out
    assert "1280 slots               171.26 GiB        34.22 GiB  5.004x" in out
    result = json_of(capsys, *args, "--tp", "1")
    assert (result["slots"], result["max_running_requests"]) == (211, 42)
    assert result["kv_cache_bytes"] == 33_992_245_248


def test_sglang_speculative_flags(capsys: pytest.CaptureFixture[str]) -> None:
    result = json_of(
        capsys,
        "sglang",
        "--config",
        QWEN3_NEXT,
        "--available-memory",
        "60GiB",
        "--speculative-algorithm",
        "EAGLE",
        "--speculative-num-steps",
        "3",
        "--speculative-eagle-topk",
        "1",
        "--speculative-num-draft-tokens",
        "4",
    )
    assert (result["slots"], result["max_running_requests"]) == (216, 43)
    assert result["speculative_scratch_bytes"] == (
        36 * 44 * 4 * 32 * 128 * 128 * 4 + 36 * 44 * 8192 * 6 * 2
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ("vllm", "--attention-backend", "FLASHINFER"),
            "vLLM 0.33.0 flags that change memory in a way decode-ring vllm does not model: "
            "--attention-backend",
        ),
        (("vllm", "--no-enable-chunked-prefill"), "does not model: --enable-chunked-prefill"),
        (("vllm", "--mamba-block-size=64"), "does not model: --mamba-block-size"),
        # vLLM takes a prefix of one flag as that flag (allow_abbrev): --max-num-se is
        # --max-num-seqs, and --max-num is ambiguous.
        (("vllm", "--max-num-sez", "8"), "'--max-num-sez' is not a vLLM 0.33.0 flag"),
        (("vllm", "--max-num", "8"), "ambiguous option: '--max-num' could match"),
        (("vllm", "extra"), "unexpected argument 'extra'"),
        (("sglang", "--attention-backend", "triton"), "does not model: --attention-backend"),
        (("sglang", "--tp-sizes", "2"), "'--tp-sizes' is not a SGLang 0.5.23 flag"),
        (("vllm", "--max-num-seqs", "-1"), "argument --max-num-seqs"),
        (("vllm", "--max-num-seqs", "x"), "not a non-negative integer"),
        (("vllm", "--max-model-len", "1.5G"), "decimals are not allowed"),
        (("vllm", "--max-model-len", "auto"), "auto-fit"),
        (("vllm", "--mamba-cache-dtype", "fp32"), "argument --mamba-cache-dtype: unknown value"),
        (("vllm", "--kv-cache-dtype", "nvfp4_ds_mla"), "argument --kv-cache-dtype"),
        (("vllm", "-tp", "3"), "tp_size 3 does not divide"),
        (("vllm", "--use-replayssm", "--spec-tokens", "1"), "argument --use-replayssm"),
        (("vllm", "--speculative-config", "[1]"), "must be a JSON object"),
        (
            ("vllm", "--speculative-config", '{"draft_tensor_parallel_size": 1}'),
            "does not model: --speculative-config.draft_tensor_parallel_size",
        ),
        (
            ("vllm", "--spec-tokens", "1", "--speculative-config", '{"num_speculative_tokens": 2}'),
            "mutually exclusive",
        ),
        (("vllm", "--gpu-arch", "sm75"), "invalid choice"),
        (("sglang",), "argument --available-memory: needed"),
        (("sglang", "--available-memory", "1.5"), "bytes must be whole"),
        (("sglang", "--mamba-full-memory-ratio", "nan"), "finite number above 0"),
        (("sglang", "--mamba-ssm-dtype", "fp32", "--max-mamba-cache-size", "9"), "mamba-ssm-dtype"),
        (("sglang", "--speculative-num-draft-tokens", "4"), "needs --speculative-algorithm"),
        (
            ("sglang", "--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "2"),
            "topk 1",
        ),
        (("sglang", "--speculative-algorithm", "EAGLE"), "--speculative-num-draft-tokens: needed"),
        (("sglang", "--speculative-algorithm", "NGRAM"), "not modelled"),
        (("sglang", "--mamba-radix-cache-strategy", "lazy", "--max-mamba-cache-size", "9"), "lazy"),
    ],
)
def test_what_a_command_does_not_take_is_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], expected: str
) -> None:
    status, out, err = run(capsys, args[0], "--config", NEMOTRON, *args[1:])
    assert status == 2
    assert out == ""
    assert err.startswith("decode-ring: error: ")
    assert err.count("\n") == 1
    assert expected in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "expected", "words"),
    [
        # Moved from the status-2 table above: a launch the server would not boot is status 1,
        # with the package's reason on stdout and the server's own refusal on stderr.
        (
            ("vllm", "--kv-cache-memory-bytes", "1G"),
            "argument --kv-cache-memory-bytes",
            "ValueError: To serve at least one request",
        ),
        (
            ("sglang", "--available-memory", "100MiB"),
            "holds no state slot",
            "RuntimeError: Not enough GPU memory for hybrid",
        ),
        (
            ("sglang", "--available-memory", "1GiB"),
            "2 state slots at 5 per request serve no",
            "RuntimeError: Hybrid (mamba/linear-attention) state cache is too small",
        ),
        (
            ("sglang", "--max-mamba-cache-size", "0"),
            "argument --max-mamba-cache-size",
            "RuntimeError: Not enough GPU memory for hybrid",
        ),
    ],
)
def test_a_launch_the_server_would_not_boot_is_status_1(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], expected: str, words: str
) -> None:
    status, out, err = run(capsys, args[0], "--config", NEMOTRON, *args[1:])
    assert status == 1
    assert out.startswith("the server would not boot: ") and expected in out
    assert err.startswith(f"decode-ring: {words}") and err.count("\n") == 1


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
        # The launch line's "model" says how the model was named (issue 25).
        assert {k: v for k, v in result.items() if k not in ("source", "launch")} == {
            k: v for k, v in from_file.items() if k not in ("source", "launch")
        }
    # what cannot be read is one line and status 2
    monkeypatch.setattr("sys.stdin", io.StringIO("{"))
    status, out, err = run(capsys, server, "--config", "-", *budget)
    assert (status, out) == (2, "")
    assert err.startswith("decode-ring: error: stdin: malformed JSON") and err.count("\n") == 1
