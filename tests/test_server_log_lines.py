"""The answer in the servers' own words (issue 25): the lines vLLM 0.33.0 and SGLang 0.5.23 log
at boot, verbatim in their format with the predicted numbers; the JSON fields named after them;
the full-context sequences; and, where the server would not boot, its own refusal with exit
status 1.

Formats are the wheels' (cited at each). Figures are held to published logs of older releases
(tests/logs/, README.md there) where 0.33.0's rules give the same arithmetic: the block, the
page padding and the concurrency, with prefix caching off as those releases had it; where 0.33.0
differs (its token line is ``int(concurrency x max_model_len)``, kv_cache_utils.py:1113-1132;
prefix caching on by default for a hybrid model) the test says so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from decode_ring.cli import main
from decode_ring.servers import ServerArgumentError, sglang_reservation, vllm_reservation

CONFIGS = Path(__file__).resolve().parent / "configs"
LOGS = Path(__file__).resolve().parent / "logs"
QWEN3_NEXT = str(CONFIGS / "qwen3-next-80b-a3b-instruct.json")
NEMOTRON = str(CONFIGS / "nemotron-nano-9b-v2.json")
GIB = 2**30


def logged(name: str, text: str) -> bool:
    """Whether the published log ``name`` holds ``text``."""
    return text in (LOGS / name).read_text(encoding="utf-8")


def test_the_h200_log_block_padding_and_concurrency() -> None:
    # vLLM 0.10.2 on 2 x H200 (tests/logs/qwen3-next-80b-a3b-bf16-2xh200-vllm-0.10.2.log): block
    # 544, padding 1.49%, 44.59 GiB, 14.77x at 262,144 tokens, prefix caching off. 0.33.0 on
    # an SM90 GPU aligns the block to FlashInfer's 64-token GDN checkpoints; on a GPU whose GDN
    # prefill is Triton (sm80 here) its rule gives 0.10.2's block: 16 x ceil(548,864 B of GDN
    # state / (16 x 1,024 B a token)) = 544, padded by (544 x 1024 - 548,864) / 548,864 =
    # 1.49%. 44.59 GiB // (12 x 544 x 1,024 B) = 7,162 blocks; a request takes ceil(262,144 /
    # 544) = 482 attention blocks + 3 GDN groups x 1 = 485: 7,162 / 485 = 14.77x.
    name = "qwen3-next-80b-a3b-bf16-2xh200-vllm-0.10.2.log"
    held = vllm_reservation(
        QWEN3_NEXT,
        tensor_parallel_size=2,
        gpu_arch="sm80",
        max_model_len=262_144,
        kv_cache_memory_bytes=int(44.59 * GIB),
        enable_prefix_caching=False,
    )
    lines = held.log_lines
    block = (
        "Setting attention block size to 544 tokens to ensure that attention page size is >= "
        "mamba page size."
    )
    padding = (
        "Padding mamba page size by 1.49% to ensure that mamba page size and attention page "
        "size are exactly equal."
    )
    assert lines[0] == block and logged(name, block)
    assert lines[1] == padding and logged(name, padding)
    assert held.num_blocks == 7162 and held.blocks_per_request_at_max_model_len == 485
    assert logged(name, "Maximum concurrency for 262,144 tokens per request: 14.77x")
    # 0.33.0 prints capacity and concurrency on one line, the tokens int(14.767... x 262,144);
    # 0.10.2 printed num_blocks // 4 groups x 544 = 973,760.
    assert lines[-1] == (
        "GPU KV cache size: 3,871,083 tokens, Maximum concurrency for 262,144 tokens per "
        "request: 14.77x"
    )
    assert logged(name, "GPU KV cache size: 973,760 tokens") and 7162 // 4 * 544 == 973_760
    assert held.kv_cache_tokens == 3_871_083
    assert held.mamba_page_padding_percent == pytest.approx(100 * (544 * 1024 - 548_864) / 548_864)


L40S_LINE = [
    # The published launch (tests/logs/qwen3-next-80b-a3b-wna16-fp8kv-2xl40s-vllm-0.13.0.log),
    # without --swap-space 8, which vLLM 0.33.0 no longer defines.
    "--model",
    QWEN3_NEXT,
    "--host",
    "0.0.0.0",
    "--port",
    "8001",
    "--enable-auto-tool-choice",
    "--tool-call-parser",
    "hermes",
    "--max-model-len",
    "32768",
    "--served-model-name",
    "qwen3-next-instruct",
    "--generation-config",
    "vllm",
    "--tensor-parallel-size",
    "2",
    "--disable-custom-all-reduce",
    "--gpu-memory-utilization",
    "0.92",
    "--kv-cache-dtype",
    "fp8",
    "--enable-prefix-caching",
    "--max-num-batched-tokens",
    "8192",
    "--max-num-seqs",
    "8",
]
# 2,866 blocks of 12 layers x 1,072 tokens x 512 B: the logged 17.58 GiB.
L40S_BUDGET = 2866 * 12 * 1072 * 512


def answer(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    status = main([argv[0], "--json", *argv[1:]])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    result: dict[str, Any] = json.loads(captured.out)
    return result


def test_the_l40s_fp8_launch_is_accepted_and_answered(capsys: pytest.CaptureFixture[str]) -> None:
    name = "qwen3-next-80b-a3b-wna16-fp8kv-2xl40s-vllm-0.13.0.log"
    result = answer(
        capsys,
        "vllm",
        "--gpu",
        "NVIDIA L40S",
        "--allow-unmodelled",
        "--",
        "vllm",
        "serve",
        *L40S_LINE,
        "--kv-cache-memory-bytes",
        str(L40S_BUDGET),
    )
    # fp8 off SM90: FlashAttention 2 refuses it, FlashInfer takes it, as the log says ("Using
    # FLASHINFER attention backend out of potential backends: ('FLASHINFER', 'TRITON_ATTN')").
    assert result["attention_backend"] == "FLASHINFER"
    assert logged(name, "Using FLASHINFER attention backend")
    assert result["block_size"] == 1072 and result["mamba_page_padding_percent"] is None
    assert result["log_lines"][0] == (
        "Setting attention block size to 1072 tokens to ensure that attention page size is >= "
        "mamba page size."
    )
    assert logged(name, "Setting attention block size to 1072 tokens")
    assert result["num_blocks"] == 2866
    # 0.13.0 disabled prefix caching for this model ("without support for prefix caching:
    # disabling"); 0.33.0 keeps it on: each GDN group plans 2 blocks (align mode, Triton GDN
    # prefill on SM89, no checkpoint block): 31 + 3 x 2 = 37 a request, 2,866 / 37 = 77.46x.
    assert logged(name, "Hybrid or mamba-based model detected without support for prefix")
    assert result["blocks_per_request_at_max_model_len"] == 37
    assert result["log_lines"][-1] == (
        "GPU KV cache size: 2,538,191 tokens, Maximum concurrency for 32,768 tokens per "
        "request: 77.46x"
    )
    assert result["full_context_sequences"] == 77
    assert result["launch"]["ignored_unmodelled"] == ["--disable-custom-all-reduce"]
    off = vllm_reservation(
        QWEN3_NEXT,
        tensor_parallel_size=2,
        gpu="l40s",
        kv_cache_dtype="fp8",
        max_model_len=32_768,
        kv_cache_memory_bytes=L40S_BUDGET,
        enable_prefix_caching=False,
    )
    # With prefix caching off, as 0.13.0 ran it: 31 + 3 = 34 blocks, 2,866 / 34 = 84.29x.
    assert logged(name, "Maximum concurrency for 32,768 tokens per request: 84.29x")
    assert f"{off.max_concurrency:.2f}" == "84.29"


def test_the_l40s_launch_from_its_budget_terms(capsys: pytest.CaptureFixture[str]) -> None:
    # The same launch sized from the GPU: the logged weights (22.5313 GiB a rank) and
    # estimates for the rest; 0.92 x the L40S's 46,068 MiB.
    result = answer(
        capsys,
        "vllm",
        "--gpu",
        "l40s",
        "--weights-memory",
        "22.5313GiB",
        "--allow-unmodelled",
        "serve",
        *L40S_LINE[1:],
    )
    lines = result["log_lines"]
    assert lines[0] == "Model loading took 22.53 GiB memory and ? seconds"
    assert lines[2].startswith("Available KV cache memory: ")
    assert lines[-1].startswith("Free memory on device (44.99/44.99 GiB) on startup. Desired GPU ")
    assert "Desired GPU memory utilization is (0.92, 41.39 GiB)." in lines[-1]


def test_vllm_with_the_budget_given_logs_that_it_skipped_profiling() -> None:
    held = vllm_reservation(NEMOTRON, kv_cache_memory_bytes=80 * GIB)
    assert held.log_lines[2].startswith(
        "Initial free memory ? GiB, reserved 80.0 GiB memory for KV Cache as specified by "
        "kv_cache_memory_bytes config and skipped memory profiling."
    )
    assert held.full_context_sequences == int(held.max_concurrency or 0)


def test_sglang_logs_its_pools_and_the_full_context_count() -> None:
    # The example: Qwen3-Next, tp 4, 41,607,495,680 B, context 32,768: SGLang caps
    # running requests at 203, and the KV pool holds 1,782,586 tokens: 54 sequences of 32,768.
    held = sglang_reservation(
        QWEN3_NEXT, tp_size=4, available_memory=41_607_495_680, context_length=32_768
    )
    assert (held.max_running_requests, held.kv_tokens) == (203, 1_782_586)
    assert held.full_context_sequences == 1_782_586 // 32_768 == 54
    assert held.log_lines == (
        f"Mamba Cache is allocated. max_mamba_cache_size: {held.slots}, conv_state size: 0.42GB, "
        "ssm_state size: 17.93GB ",
        "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 1782586, K size: 10.20 GB, "
        "V size: 10.20 GB",
        "max_total_num_tokens=1782586, chunked_prefill_size=?, max_prefill_tokens=16384, "
        "max_running_requests=203, context_len=32768, available_gpu_mem=? GB",
    )
    # K size: 1,782,586 tokens x 12 layers x 1 KV head x 256 x 2 B = 10.20 GiB.
    assert f"{1_782_586 * 12 * 256 * 2 / GIB:.2f}" == "10.20"


def test_sglang_logs_the_speculative_pools_scratch_too() -> None:
    # With draft tokens SGLang allocates the speculative state (memory_pool.py:864-991) and its
    # line names the scratch after the state: intermediate_ssm_state_cache (layers, requests
    # + 1, draft tokens, *ssm) and the deduplicated conv windows (layers, requests + 1, conv
    # dim, D + K - 2). Qwen3-Next at tp 1, 60 GiB, EAGLE with 4 draft tokens: 43 requests,
    # 36 GDN layers, an SSM of 32 x 128 x 128 float32, a conv of 8,192 channels, K = 4, bfloat16.
    held = sglang_reservation(QWEN3_NEXT, available_memory=60 * GIB, speculative_num_draft_tokens=4)
    assert held.max_running_requests == 43
    ssm = 36 * 44 * 4 * 32 * 128 * 128 * 4
    conv = 36 * 44 * 8192 * (4 + 4 - 2) * 2
    assert held.log_lines[0].endswith(
        f"ssm_state size: 15.26GB intermediate_ssm_state_cache size: {ssm / GIB:.2f}GB "
        f"intermediate_conv_window_cache size: {conv / GIB:.2f}GB "
    )
    assert (f"{ssm / GIB:.2f}", f"{conv / GIB:.2f}") == ("12.38", "0.15")


def test_sglang_logs_the_weights_with_a_gpu() -> None:
    held = sglang_reservation(
        QWEN3_NEXT,
        tp_size=2,
        gpu="rtx-4090",
        weights_bytes=int(8.85 * GIB),
        mem_fraction_static=0.8,
    )
    # model_runner.py:1372-1379: avail mem after the weights, mem usage the weights, in 2**30 B.
    assert held.log_lines[0] == (
        "Load weight end. elapsed=? s, type=Qwen3NextForCausalLM, avail mem=15.14 GB, "
        "mem usage=8.85 GB."
    )


def test_text_shows_the_lines_beside_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(
        [
            "sglang",
            "--config",
            QWEN3_NEXT,
            "--tp",
            "4",
            "--available-memory",
            "41607495680",
            "--context-length",
            "32768",
        ]
    )
    out = capsys.readouterr().out
    assert status == 0
    assert "  max running requests   203 " in out
    assert "  full-context sequences 54 " in out
    assert "  SGLang 0.5.23 would log (? where the package cannot predict):\n" in out
    assert "    max_total_num_tokens=1782586, chunked_prefill_size=?" in out


def test_a_launch_that_would_not_boot_is_status_1_with_the_servers_words(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status = main(["vllm", "--gpu", "l40s", "--weights-memory", "44GiB", "serve", QWEN3_NEXT])
    captured = capsys.readouterr()
    assert status == 1
    assert captured.out.startswith("the server would not boot: argument --gpu: ")
    assert captured.err == (
        "decode-ring: ValueError: No available memory for the cache blocks. Try increasing "
        "`gpu_memory_utilization` when initializing the engine (this flag also controls CPU "
        "memory reservation on the CPU backend, despite its name). See "
        "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.\n"
    )
    status = main(
        ["vllm", "--json", "--gpu", "l40s", "--weights-memory", "44GiB", "serve", QWEN3_NEXT]
    )
    result = json.loads(capsys.readouterr().out)
    assert status == 1 and result["status"] == 1
    assert result["log_lines"][0].startswith("ValueError: No available memory")
    with pytest.raises(ServerArgumentError) as raised:
        sglang_reservation(NEMOTRON, available_memory=100 * 2**20)
    assert raised.value.server_refusal is not None
    assert raised.value.server_refusal.startswith(
        "RuntimeError: Not enough GPU memory for hybrid (mamba/linear-attention) state cache."
    )


def test_the_readme_table_says_status_1_for_a_server_that_would_not_boot() -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    header = "| status | `decide`, `state` | `vllm`, `sglang` | `fit` | `plan` |"
    assert header in readme
    row = next(line for line in readme.splitlines() if line.startswith("| 1 | never |"))
    assert row.startswith(
        "| 1 | never | the server would not boot (a budget that holds no block or slot): why on "
        "stdout, the server's own refusal on stderr |"
    )


# --- each log under its own release (issue 26) --------------------------------------------------


def test_the_h200_log_under_vllm_0_10_2_line_for_line() -> None:
    # The same published log, now with 0.10.2's own rules rather than 0.33.0's set up by hand:
    # every line it prints about the cache is the package's, word for word.
    name = "qwen3-next-80b-a3b-bf16-2xh200-vllm-0.10.2.log"
    held = vllm_reservation(
        QWEN3_NEXT,
        version="0.10.2",
        tensor_parallel_size=2,
        max_model_len=262_144,
        kv_cache_memory_bytes=int(44.59 * GIB),
    )
    lines = [line for line in held.log_lines if not line.startswith("Initial free memory")]
    assert lines == [
        "Setting attention block size to 544 tokens to ensure that attention page size is >= "
        "mamba page size.",
        "Padding mamba page size by 1.49% to ensure that mamba page size and attention page size "
        "are exactly equal.",
        "GPU KV cache size: 973,760 tokens",
        "Maximum concurrency for 262,144 tokens per request: 14.77x",
    ]
    assert all(logged(name, line) for line in lines)
    assert not held.enable_prefix_caching


def test_the_l40s_log_under_vllm_0_13_0_line_for_line(capsys: pytest.CaptureFixture[str]) -> None:
    # The published launch with --vllm-version 0.13.0: prefix caching asked for and turned off
    # (Qwen3-Next is no SupportsMambaPrefixCaching model in 0.11.1-0.14.1), the block 1072, and
    # 0.13.0's two capacity lines: 2,866 // 4 groups x 1,072 = 767,552 tokens, 2,866 / 34.
    name = "qwen3-next-80b-a3b-wna16-fp8kv-2xl40s-vllm-0.13.0.log"
    result = answer(
        capsys,
        "vllm",
        "--gpu",
        "NVIDIA L40S",
        "--allow-unmodelled",
        "--vllm-version",
        "0.13.0",
        "--",
        "vllm",
        "serve",
        *L40S_LINE,
        "--kv-cache-memory-bytes",
        str(L40S_BUDGET),
    )
    assert result["server_version"] == "0.13.0"
    assert not result["enable_prefix_caching"]
    assert result["prefix_caching_rule"] == "vLLM 0.13.0 turns it off for a hybrid generative model"
    lines = [line for line in result["log_lines"] if not line.startswith("Initial free memory")]
    assert lines == [
        "Setting attention block size to 1072 tokens to ensure that attention page size is >= "
        "mamba page size.",
        "GPU KV cache size: 767,552 tokens",
        "Maximum concurrency for 32,768 tokens per request: 84.29x",
    ]
    assert all(logged(name, line) for line in lines)
