"""``plan --server vllm|sglang`` with a GPU and a launch line (issue 25): each ``--tp`` of the
list runs as that launch's tensor-parallel size, its budget the server's own, and reads exactly
what ``decode-ring vllm`` / ``sglang`` answer at that size; ``--free`` stays an explicit budget."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from decode_ring.cli import main
from decode_ring.servers import sglang_reservation, vllm_reservation

CONFIGS = Path(__file__).resolve().parent / "configs"
QWEN3_NEXT = str(CONFIGS / "qwen3-next-80b-a3b-instruct.json")
GIB = 2**30


def plan_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    status = main(["plan", "--json", *argv])
    captured = capsys.readouterr()
    assert status in (0, 1), captured.err
    result: dict[str, Any] = json.loads(captured.out)
    return result


def test_each_tp_is_the_launch_at_that_size(capsys: pytest.CaptureFixture[str]) -> None:
    result = plan_json(
        capsys,
        "--server", "vllm", "--gpu", "h200", "--weights", "160GiB", "--config", QWEN3_NEXT,
        "--max-model-len", "32768", "--tp", "2,4",
        "--", "--kv-cache-dtype", "fp8", "--max-num-seqs", "256",
    )  # fmt: skip
    assert result["gpu"] == "h200" and result["free_bytes"] is None
    for row in result["rows"]:
        tp = row["tp_size"]
        held = vllm_reservation(
            QWEN3_NEXT,
            tensor_parallel_size=tp,
            gpu="h200",
            weights_bytes=160 * GIB // tp,
            max_model_len=32768,
            kv_cache_dtype="fp8",
            max_num_seqs=256,
        )
        assert row["budget_bytes"] == held.kv_cache_memory_bytes
        assert row["largest_batch"] == int(held.max_concurrency or 0)
        assert row["vllm"]["num_blocks"] == held.num_blocks


def test_a_launch_without_max_num_seqs_takes_the_gpus_own_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # vLLM's get_batch_defaults gives `vllm serve` on a GPU of 70 GiB or more max_num_seqs 1024
    # (vllm/engine/arg_utils.py:2939-3000); the profiled CUDA graphs grow with it, so a plan
    # that ran the launch with any other max_num_seqs would read another budget.
    result = plan_json(
        capsys,
        "--server", "vllm", "--gpu", "h200", "--weights", "160GiB", "--config", QWEN3_NEXT,
        "--max-model-len", "32768", "--tp", "2",
    )  # fmt: skip
    (row,) = result["rows"]
    held = vllm_reservation(
        QWEN3_NEXT, tensor_parallel_size=2, gpu="h200", weights_bytes=80 * GIB, max_model_len=32768
    )
    one = vllm_reservation(
        QWEN3_NEXT,
        tensor_parallel_size=2,
        gpu="h200",
        weights_bytes=80 * GIB,
        max_model_len=32768,
        max_num_seqs=1,
    )
    assert held.max_num_seqs == 1024
    assert one.kv_cache_memory_bytes != held.kv_cache_memory_bytes
    assert row["budget_bytes"] == held.kv_cache_memory_bytes
    assert row["largest_batch"] == int(held.max_concurrency or 0)


def test_sglang_rows_are_sglangs_own_budget(capsys: pytest.CaptureFixture[str]) -> None:
    result = plan_json(
        capsys,
        "--server", "sglang", "--gpu", "NVIDIA H100 80GB HBM3", "--weights", "150GiB",
        "--config", QWEN3_NEXT, "--max-model-len", "32768", "--tp", "4,8",
    )  # fmt: skip
    for row in result["rows"]:
        tp = row["tp_size"]
        pool = sglang_reservation(
            QWEN3_NEXT,
            tp_size=tp,
            gpu="h100-sxm",
            weights_bytes=-(-150 * GIB // tp),
            context_length=32768,
        )
        assert row["budget_bytes"] == pool.available_memory
        assert row["largest_batch"] == min(
            pool.max_running_requests, (pool.kv_tokens or 0) // 32768
        )


def test_a_tp_the_server_would_not_boot_is_a_row_that_fits_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = plan_json(
        capsys,
        "--server", "vllm", "--gpu", "h200", "--weights", "160GiB", "--config", QWEN3_NEXT,
        "--max-model-len", "32768", "--tp", "1,2",
    )  # fmt: skip
    one = result["rows"][0]
    assert one["largest_batch"] == 0 and not any(one["fits"])
    assert one["refusal"].startswith("ValueError: No available memory for the cache blocks.")


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["--server", "vllm", "--gpu", "h200", "--free", "80GiB"],
            "--free and --gpu (or --gpu-memory) are two budgets; give one",
        ),
        (
            ["--gpu", "h200", "--free", "80GiB"],
            "--gpu: a launch line and its GPU are the servers' (--server vllm or sglang); drop it",
        ),
        (["--server", "vllm"], "plan --server vllm needs --free SIZE, or --gpu NAME"),
        (
            ["--server", "vllm", "--gpu", "h200", "--other", "1GiB"],
            "--other is the explicit budget's (--free); under --gpu the server's own terms "
            "(activation, graphs, non-torch) replace it: drop it",
        ),
        (
            ["--server", "vllm", "--gpu", "h200", "--", "--enable-lora"],
            "vLLM 0.33.0 flags that change memory in a way the plan does not model: --enable-lora",
        ),
        # --free is the budget; the launch line's own would be replaced without a word.
        (
            ["--server", "vllm", "--free", "80GiB", "--", "--kv-cache-memory-bytes", "10G",
             "--gpu-memory-utilization", "0.5"],
            "--free and the launch line's --kv-cache-memory-bytes and --gpu-memory-utilization "
            "are two budgets; give one",
        ),
        (
            ["--server", "sglang", "--free", "80GiB", "--", "--mem-fraction-static", "0.8"],
            "--free and the launch line's --mem-fraction-static are two budgets; give one",
        ),
        # Under the GPU, weights not in the snapshot are the plan's --weights to give.
        (
            ["--server", "vllm", "--gpu", "h200"],
            "argument --weights: the snapshot holds no safetensors to size the weights from; "
            "give their size",
        ),
    ],
)  # fmt: skip
def test_budgets_and_lines_that_do_not_go_together(
    capsys: pytest.CaptureFixture[str], argv: list[str], line: str
) -> None:
    status = main(["plan", "--config", QWEN3_NEXT, "--max-model-len", "4096", *argv])
    assert status == 2
    assert capsys.readouterr().err == f"decode-ring: error: {line}\n"


@pytest.mark.parametrize(
    ("server", "flag", "value", "reason"),
    [
        # vLLM's max_num_seqs is a positive count; SGLang's mem_fraction_static below 1.
        ("vllm", "--max-num-seqs", "0", "must be from 1 to 2**63 - 1, got 0"),
        ("sglang", "--mem-fraction-static", "1.5", "must be below 1, got 1.5"),
    ],
)
def test_a_launch_lines_value_the_server_refuses_is_named_with_its_reason(
    capsys: pytest.CaptureFixture[str], server: str, flag: str, value: str, reason: str
) -> None:
    argv = ["plan", "--server", server, "--gpu", "h200", "--weights", "160GiB"]
    status = main([*argv, "--config", QWEN3_NEXT, "--max-model-len", "4096", "--", flag, value])
    err = capsys.readouterr().err
    assert status == 2
    argument, said = err.removeprefix("decode-ring: error: ").split(": ", 1)
    assert said == f"{reason}\n"
    assert argument == f"argument {flag}"  # as the launch line spells it


def vllm_rows(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, Any]]:
    budget = ["--server", "vllm", "--gpu", "h200", "--weights", "160GiB", "--max-model-len", "4096"]
    rows: list[dict[str, Any]] = plan_json(capsys, *budget, "--tp", "2", *argv)["rows"]
    return rows


@pytest.mark.parametrize(
    ("server", "line", "largest"),
    [
        # vLLM at tp 1 on 80 GiB of KV cache, 4,096-token sequences: 356 in bfloat16, 494 with
        # an fp8 KV cache (the attention page halves; decode-ring vllm --kv-cache-memory-bytes
        # 80G --kv-cache-dtype fp8 --max-model-len 4096 says max_concurrency 494.23).
        ("vllm", (), 356),
        ("vllm", ("--kv-cache-dtype", "fp8"), 494),
        # SGLang: the running-request cap of the launch line, when it is the smaller.
        ("sglang", ("--max-running-requests", "7"), 7),
    ],
)
def test_under_free_memory_the_launch_lines_flags_apply(
    capsys: pytest.CaptureFixture[str], server: str, line: tuple[str, ...], largest: int
) -> None:
    budget = ["--free", "80GiB", "--weights", "0", "--other", "0", "--tp", "1"]
    argv = ["--server", server, "--config", QWEN3_NEXT, "--max-model-len", "4096", *budget]
    rows = plan_json(capsys, *argv, "--", *line)["rows"]
    assert [row["largest_batch"] for row in rows] == [largest]
    # A value the server refuses is named as the line spells it, as under the GPU.
    count = {"vllm": "--max-num-seqs", "sglang": "--max-running-requests"}[server]
    assert main(["plan", *argv, "--", count, "0"]) == 2
    assert capsys.readouterr().err == (
        f"decode-ring: error: argument {count}: must be from 1 to 2**63 - 1, got 0\n"
    )


def test_the_plans_draft_tokens_count_where_the_launch_line_gives_none(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Nemotron-Nano-9B-v2 on an H200 with 16 GiB of weights, 8,192-token sequences: 192 at
    # once without draft tokens, 128 with 2 (decode-ring vllm --gpu h200 --weights-memory
    # 16GiB serve ... --spec-tokens 2 says max_concurrency 128.67).
    nemotron = str(CONFIGS / "nemotron-nano-9b-v2.json")
    argv = ["--server", "vllm", "--gpu", "h200", "--weights", "16GiB", "--config", nemotron,
            "--max-model-len", "8192", "--tp", "1"]  # fmt: skip

    def largest(*more: str) -> list[int]:
        return [row["largest_batch"] for row in plan_json(capsys, *argv, *more)["rows"]]

    assert largest() == [192]
    assert largest("--speculative-tokens", "2") == [128]
    assert largest("--", "--spec-tokens", "2") == [128]
    assert main(["plan", *argv, "--speculative-tokens", "2", "--", "--spec-tokens", "2"]) == 2
    assert capsys.readouterr().err == (
        "decode-ring: error: --speculative-tokens and the launch line's draft tokens are given "
        "both; give one\n"
    )


def test_the_launch_line_may_be_the_whole_command(capsys: pytest.CaptureFixture[str]) -> None:
    # After "--", the launch's flags or the whole command as it would be typed: `vllm serve
    # MODEL`, `python -m vllm.entrypoints.openai.api_server --model MODEL`; both read alike.
    flags = vllm_rows(capsys, "--config", QWEN3_NEXT, "--", "--max-num-seqs", "64")
    served = vllm_rows(capsys, "--", "vllm", "serve", QWEN3_NEXT, "--max-num-seqs", "64")
    assert served == flags
    entrypoint = "vllm.entrypoints.openai.api_server"
    python = ["python", "-m", entrypoint, "--model", QWEN3_NEXT, "--max-num-seqs", "64"]
    assert vllm_rows(capsys, "--", *python) == flags
    # A model alone, without `vllm serve`, is neither the launch's flags nor its command.
    status = main(["plan", "--server", "vllm", "--gpu", "h200", "--max-model-len", "4096", "--"])
    assert status == 2
    capsys.readouterr()
    status = main(
        ["plan", "--server", "vllm", "--gpu", "h200", "--max-model-len", "4096", "--", QWEN3_NEXT]
    )
    assert status == 2
    assert capsys.readouterr().err.startswith(
        "decode-ring: error: after --, give the vLLM command: python -m "
        "vllm.entrypoints.openai.api_server or python -m vllm.entrypoints.cli.main serve or "
        "vllm serve; got "
    )
    # The flags alone name no model: a positional after them is refused as vLLM's api_server
    # refuses it, not read as `vllm serve`'s model.
    line = ["--", "--max-num-seqs", "64", QWEN3_NEXT]
    status = main(["plan", "--server", "vllm", "--gpu", "h200", "--max-model-len", "4096", *line])
    assert status == 2
    assert "unexpected argument" in capsys.readouterr().err


def write_safetensors(path: Path, tensors: dict[str, tuple[str, list[int]]]) -> None:
    """A safetensors file of its header only: 8 bytes of length, then the JSON header."""
    header = {
        name: {"dtype": dtype, "shape": shape, "data_offsets": [0, 0]}
        for name, (dtype, shape) in tensors.items()
    }
    raw = json.dumps(header).encode()
    path.write_bytes(len(raw).to_bytes(8, "little") + raw)


def test_under_the_gpu_the_server_sizes_the_weights_from_the_snapshot(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # No --weights and no --free: the reserve is the server's own, the weights those its
    # safetensors hold (here 2 x 151,936 x 2048 bf16 of embeddings and head: 1.16 GiB).
    (tmp_path / "config.json").write_text(Path(QWEN3_NEXT).read_text())
    vocab = ("BF16", [151_936, 2048])
    write_safetensors(
        tmp_path / "model.safetensors",
        {"model.embed_tokens.weight": vocab, "lm_head.weight": vocab},
    )
    result = plan_json(
        capsys, "--server", "vllm", "--gpu", "h200", "--config", str(tmp_path),
        "--max-model-len", "4096", "--tp", "1",
    )  # fmt: skip
    reserve = {key: result[key] for key in ("weights_bytes", "other_bytes", "max_model_len")}
    assert reserve == {"weights_bytes": 0, "other_bytes": 0, "max_model_len": 4096}
    assert result["weights_source"] == "the server's own (the snapshot's safetensors)"
    held = vllm_reservation(
        str(tmp_path / "config.json"), tensor_parallel_size=1, gpu="h200", max_model_len=4096
    )
    (row,) = result["rows"]
    assert row["budget_bytes"] == held.kv_cache_memory_bytes


@pytest.mark.parametrize(
    ("server", "lines"),
    [
        (
            "vllm",
            [
                ["--tensor-parallel-size", "4"],
                ["-tp", "4"],
                ["uv", "run", "vllm", "serve", QWEN3_NEXT],
                ["/opt/venv/bin/vllm", "serve", QWEN3_NEXT, "-tp", "8"],
                ["-m", "vllm.entrypoints.openai.api_server", "--model", QWEN3_NEXT],
            ],
        ),
        (
            "sglang",
            [
                ["sglang", "serve", "--model-path", QWEN3_NEXT],
                ["python3", "-m", "sglang.launch_server", "--model-path", QWEN3_NEXT],
                ["/usr/bin/python3", "-m", "sglang.launch_server", "--model-path", QWEN3_NEXT],
                ["--tp-size", "4"],
                ["--tensor-parallel-size", "4"],
            ],
        ),
    ],
)
def test_each_form_of_the_launch_line_plans_alike_at_the_plans_tp(
    capsys: pytest.CaptureFixture[str], server: str, lines: list[list[str]]
) -> None:
    # The plan's --tp list replaces the launch's own tensor-parallel size, and the model may be
    # named by --config or in the whole command after "--" (sglang serve, python -m, uv run, a
    # path to the program).
    budget = ["--server", server, "--gpu", "h200", "--weights", "160GiB", "--tp", "2"]
    budget += ["--max-model-len", "4096"]
    alone = plan_json(capsys, *budget, "--config", QWEN3_NEXT)
    assert [row["tp_size"] for row in alone["rows"]] == [2]
    for line in lines:
        model = [] if QWEN3_NEXT in line else ["--config", QWEN3_NEXT]
        assert plan_json(capsys, *budget, *model, "--", *line) == alone, line


@pytest.mark.parametrize(
    ("line", "refusal"),
    [
        (
            ["vllm", "serve", QWEN3_NEXT],
            "the model is given twice: --config and the launch line's; give one",
        ),
        (
            ["--enable-lora", "--max-loras", "2"],
            "vLLM 0.33.0 flags that change memory in a way the plan does not model: "
            "--enable-lora, --max-loras",
        ),
    ],
)
def test_a_launch_line_the_plan_cannot_read_is_refused(
    capsys: pytest.CaptureFixture[str], line: list[str], refusal: str
) -> None:
    argv = ["plan", "--server", "vllm", "--gpu", "h200", "--weights", "160GiB"]
    status = main([*argv, "--config", QWEN3_NEXT, "--max-model-len", "4096", "--", *line])
    assert (status, capsys.readouterr().err) == (2, f"decode-ring: error: {refusal}\n")


def test_the_gpus_memory_alone_is_the_servers_budget(capsys: pytest.CaptureFixture[str]) -> None:
    # --gpu-memory: any GPU by its total memory, as decode-ring vllm --gpu-memory takes it.
    result = plan_json(
        capsys, "--server", "vllm", "--gpu-memory", "96GiB", "--weights", "160GiB",
        "--config", QWEN3_NEXT, "--max-model-len", "4096", "--tp", "2",
    )  # fmt: skip
    held = vllm_reservation(
        QWEN3_NEXT,
        tensor_parallel_size=2,
        gpu_memory_bytes=96 * GIB,
        weights_bytes=80 * GIB,
        max_model_len=4096,
    )
    (row,) = result["rows"]
    assert row["budget_bytes"] == held.kv_cache_memory_bytes


@pytest.mark.parametrize("program", ["python", "python3", "sglang"])
def test_a_launch_line_naming_another_program_is_refused_as_no_sglang_command(
    capsys: pytest.CaptureFixture[str], program: str
) -> None:
    argv = ["plan", "--server", "sglang", "--gpu", "h200", "--weights", "160GiB"]
    status = main([*argv, "--config", QWEN3_NEXT, "--max-model-len", "4096", "--", program, "x.py"])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("decode-ring: error: after --, give the SGLang command: ")
    assert err.endswith(f"; got '{program} x.py'\n")
