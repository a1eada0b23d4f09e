"""vLLM 0.33.0's KV budget from a GPU (issue 25): ``ceil(total x utilization)`` less the weights
per rank, the peak activation, non-torch memory and CUDA graphs; ``--kv-cache-memory-bytes``
skipping all of it; the defaults that hang on the GPU; and the weights one rank loads, from
synthetic safetensors headers.

Expected figures are written out from the wheel's code (cited at each) with the GPU table's
totals; the estimates' own constants are pinned where they enter a figure, and held to the
published logs in ``test_estimates_against_logs.py``.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

import pytest

from decode_ring.checkpoints import Checkpoint, Tensor, read_checkpoint
from decode_ring.cli import main
from decode_ring.models import ModelConfigError
from decode_ring.servers import ServerArgumentError, vllm_reservation
from decode_ring.servers.profile import peak_activation_estimate

CONFIGS = Path(__file__).resolve().parent / "configs"
QWEN3_NEXT = CONFIGS / "qwen3-next-80b-a3b-instruct.json"
NEMOTRON = CONFIGS / "nemotron-nano-9b-v2.json"
GIB = 2**30
# The GPU table's H200: vLLM's runtime total, 139.81 GiB, as a published log prints it.
H200_RUNTIME = 150_119_844_413
EXPLICIT: dict[str, Any] = {
    "weights_bytes": 70 * GIB,
    "activation_bytes": 5 * GIB,
    "non_torch_bytes": GIB,
}


def test_the_budget_is_requested_less_the_four_terms() -> None:
    # request_memory (vllm/v1/worker/utils.py:716-723): ceil(total x 0.92), vLLM's default
    # utilization (vllm/config/cache.py:215); available = requested - non-KV - CUDA graphs
    # (gpu_worker.py:739-743).
    held = vllm_reservation(
        QWEN3_NEXT, tensor_parallel_size=2, gpu="h200", cuda_graph_bytes=2 * GIB, **EXPLICIT
    )
    requested = math.ceil(H200_RUNTIME * 0.92)
    assert requested == 138_110_256_860
    assert held.requested_memory_bytes == requested
    assert held.gpu_memory_utilization == 0.92
    assert held.available_kv_cache_memory == requested - 78 * GIB
    assert held.kv_cache_memory_bytes == held.available_kv_cache_memory
    # Qwen3-Next at tp 2 on SM90: 12 attention + 3 GDN groups of 12 pages of 576 x 512 B.
    assert held.bytes_per_block == 12 * 576 * 1024
    assert held.num_blocks == (requested - 78 * GIB) // (12 * 576 * 1024)
    assert held.gpu_name == "NVIDIA H200" and held.gpu_memory_bytes == H200_RUNTIME


def test_utilization_scales_the_request_and_outside_zero_one_is_refused() -> None:
    half = vllm_reservation(
        QWEN3_NEXT,
        gpu="h200",
        gpu_memory_utilization=0.5,
        cuda_graph_bytes=0,
        **{**EXPLICIT, "weights_bytes": 40 * GIB},
    )
    assert half.requested_memory_bytes == math.ceil(H200_RUNTIME * 0.5)
    for bad in (0.0, 1.5):
        with pytest.raises(ServerArgumentError) as raised:
            vllm_reservation(QWEN3_NEXT, gpu="h200", gpu_memory_utilization=bad, **EXPLICIT)
        assert raised.value.field == "gpu_memory_utilization"
    with pytest.raises(ServerArgumentError, match="Input should be less than or equal to 1"):
        vllm_reservation(QWEN3_NEXT, gpu_memory_utilization=1.01)


def test_kv_cache_memory_bytes_skips_profiling() -> None:
    # gpu_worker.py:655-681: the budget is the flag; utilization is ignored, nothing profiled.
    held = vllm_reservation(QWEN3_NEXT, gpu="h200", kv_cache_memory_bytes=40 * GIB)
    assert held.kv_cache_memory_bytes == 40 * GIB
    assert (held.requested_memory_bytes, held.peak_activation_bytes) == (None, None)
    assert (held.cuda_graph_bytes, held.non_torch_bytes) == (None, None)
    assert held.kv_cache_memory_rule == "--kv-cache-memory-bytes"


def test_no_gpu_no_budget() -> None:
    held = vllm_reservation(QWEN3_NEXT)
    assert (held.kv_cache_memory_bytes, held.num_blocks, held.gpu_name) == (None, None, None)
    assert held.gpu_arch == "sm90"


@pytest.mark.parametrize(
    ("gpu", "seqs", "tokens", "arch"),
    [
        # get_batch_defaults (vllm/engine/arg_utils.py:2939-3000), vllm serve's column:
        ("b200", 1024, 16384, "sm100"),  # >= 160 GiB
        ("h200", 1024, 8192, "sm90"),  # >= 70 GiB
        ("h100-sxm", 1024, 8192, "sm90"),
        ("a100-80gb", 256, 2048, "sm80"),  # not an A100
        ("gb10", 256, 2048, "sm121"),  # nor a GB10
        ("l40s", 256, 2048, "sm89"),
        ("rtx-5090", 256, 2048, "sm120"),
    ],
)
def test_batch_defaults_follow_the_gpus_memory(gpu: str, seqs: int, tokens: int, arch: str) -> None:
    held = vllm_reservation(QWEN3_NEXT, gpu=gpu, kv_cache_memory_bytes=20 * GIB)
    assert (held.max_num_seqs, held.max_num_batched_tokens, held.gpu_arch) == (seqs, tokens, arch)


@pytest.mark.parametrize(
    ("memory", "seqs", "tokens"),
    [
        # get_batch_defaults (vllm/engine/arg_utils.py:2973-2990): device_memory >= 160 GiB,
        # then >= 70 GiB, each bound itself in the upper tier.
        (160 * GIB, 1024, 16384),
        (160 * GIB - 1, 1024, 8192),
        (70 * GIB, 1024, 8192),
        (70 * GIB - 1, 256, 2048),
    ],
)
def test_a_gpu_of_exactly_a_tiers_memory_is_in_that_tier(
    memory: int, seqs: int, tokens: int
) -> None:
    held = vllm_reservation(QWEN3_NEXT, gpu_memory_bytes=memory, kv_cache_memory_bytes=20 * GIB)
    assert (held.max_num_seqs, held.max_num_batched_tokens) == (seqs, tokens)


def test_gpu_arch_overrides_the_tables_and_gpu_memory_names_any_gpu() -> None:
    assert vllm_reservation(QWEN3_NEXT, gpu="h200", gpu_arch="sm89", **EXPLICIT).gpu_arch == "sm89"
    other = vllm_reservation(
        QWEN3_NEXT,
        gpu_memory_bytes=48 * GIB,
        cuda_graph_bytes=0,
        **{**EXPLICIT, "weights_bytes": 20 * GIB},
    )
    assert other.gpu_memory_bytes == 48 * GIB and other.gpu_arch == "sm90"
    assert other.requested_memory_bytes == math.ceil(48 * GIB * 0.92)
    with pytest.raises(ServerArgumentError, match="unknown GPU 'v100'") as raised:
        vllm_reservation(QWEN3_NEXT, gpu="v100")
    assert raised.value.field == "gpu"


def test_the_estimates_and_their_overrides() -> None:
    # Qwen3-Next, tp 2, H200: max_num_seqs 1024, max_num_batched_tokens 8192 (the defaults
    # above); the sampler's rows min(1024, 8192) x vocab 151,936 x 12 B; the forward pass
    # 8192 tokens x the widest MLP (max(5120, 512, 512 x 10) / 2 = 2560) x 3 x 2 B.
    held = vllm_reservation(QWEN3_NEXT, tensor_parallel_size=2, gpu="h200", weights_bytes=70 * GIB)
    assert held.peak_activation_bytes == 1024 * 151_936 * 12 + 8192 * 2560 * 3 * 2
    assert held.peak_activation_rule.startswith("estimate: sampler 1024 rows")
    # Capture sizes: 1, 2, 4, 8..248 by 8, 256..512 by 16 (min(1024 x 2, 512)): 51 PIECEWISE,
    # and under FULL_AND_PIECEWISE a FULL decode graph for each size up to 1024 seqs, 51 more
    # (vllm/v1/cudagraph_dispatcher.py:203-227); 48 layers x 0.30 MiB each, and a 0.1 GiB pool.
    assert held.cuda_graph_sizes == 51
    assert held.cuda_graph_bytes == 102 * 48 * 314_573 + 107_374_182
    assert held.non_torch_bytes == 504_658_657 + 429_496_730  # 0.47 GiB and 0.40 GiB for the peer
    given = vllm_reservation(
        QWEN3_NEXT,
        tensor_parallel_size=2,
        gpu="h200",
        weights_bytes=70 * GIB,
        activation_bytes=3 * GIB,
        cuda_graph_bytes=GIB,
        non_torch_bytes=2 * GIB,
    )
    assert (given.peak_activation_rule, given.cuda_graph_rule) == (
        "--activation-memory",
        "--cuda-graph-memory",
    )
    assert given.available_kv_cache_memory == math.ceil(H200_RUNTIME * 0.92) - 76 * GIB


def test_enforce_eager_and_mode_none_capture_no_graphs() -> None:
    # gpu_worker.py:708-716: no profile_cudagraph_memory without graphs.
    for flags in ({"enforce_eager": True}, {"cudagraph_mode": "NONE"}):
        held = vllm_reservation(QWEN3_NEXT, gpu="h200", **EXPLICIT, **flags)
        assert (held.cuda_graph_bytes, held.cuda_graph_sizes) == (0, 0)
        assert held.cuda_graph_rule.startswith("no CUDA graphs")
    sizes = vllm_reservation(
        QWEN3_NEXT, gpu="h200", cudagraph_capture_sizes=(1, 2, 4, 8), **EXPLICIT
    )
    assert sizes.cuda_graph_sizes == 4
    piecewise = vllm_reservation(
        QWEN3_NEXT,
        gpu="h200",
        cudagraph_mode="PIECEWISE",
        max_cudagraph_capture_size=64,
        **EXPLICIT,
    )
    # 1, 2, 4, 8..64 by 8, and max_num_batched_tokens only where it fits (8192 does not).
    assert piecewise.cuda_graph_sizes == 11
    assert piecewise.cuda_graph_bytes == 11 * 48 * 314_573 + 107_374_182


def test_full_decode_graphs_span_one_plus_s_to_max_num_seqs_times_one_plus_s() -> None:
    # CudagraphDispatcher (vllm/v1/cudagraph_dispatcher.py:186-227) keys a FULL decode graph for
    # each capture size from 1 + s to (1 + s) x max_num_seqs, both ends included.
    # 8 sequences, no speculation: sizes 1, 2, 4, 8, 16 (min(8 x 1 x 2, 512)); FULL for 1, 2, 4
    # and 8 (8 = 1 x 8 itself): 5 + 4 = 9 graphs.
    plain = vllm_reservation(QWEN3_NEXT, gpu="h200", max_num_seqs=8, **EXPLICIT)
    assert plain.cuda_graph_sizes == 5
    assert plain.cuda_graph_rule == "estimate: 9 graphs x 48 layers x 0.30 MiB + 0.1 GiB"
    assert plain.cuda_graph_bytes == 9 * 48 * 314_573 + 107_374_182
    # 2 speculative tokens: sizes 1, 2, 4, 8..48 by 8 (min(8 x 3 x 2, 512)), 9 of them; FULL for
    # 3 to 24: 4, 8, 16, 24, so 9 + 4 = 13 graphs.
    speculating = vllm_reservation(
        QWEN3_NEXT, gpu="h200", max_num_seqs=8, num_speculative_tokens=2, **EXPLICIT
    )
    assert speculating.cuda_graph_sizes == 9
    assert speculating.cuda_graph_rule == "estimate: 13 graphs x 48 layers x 0.30 MiB + 0.1 GiB"
    assert speculating.cuda_graph_bytes == 13 * 48 * 314_573 + 107_374_182


def test_max_num_batched_tokens_moves_the_activation() -> None:
    small = vllm_reservation(
        QWEN3_NEXT, gpu="h200", max_num_batched_tokens=2048, max_num_seqs=8, **EXPLICIT
    )
    assert small.max_num_batched_tokens == 2048
    # Flags given, no estimate of the activation asked for: only EXPLICIT's 5 GiB enters.
    estimate = vllm_reservation(
        QWEN3_NEXT,
        gpu="h200",
        max_num_batched_tokens=2048,
        max_num_seqs=8,
        weights_bytes=70 * GIB,
    )
    assert estimate.peak_activation_bytes == 8 * 151_936 * 12 + 2048 * 5120 * 3 * 2


def test_a_budget_that_holds_no_block_is_vllms_refusal() -> None:
    with pytest.raises(ServerArgumentError) as raised:
        vllm_reservation(QWEN3_NEXT, gpu="l40s", weights_bytes=44 * GIB)
    assert raised.value.field == "gpu"
    assert raised.value.server_refusal is not None
    assert raised.value.server_refusal.startswith(
        "ValueError: No available memory for the cache blocks."
    )


# --- weights per rank from safetensors headers --------------------------------------------------


def write_safetensors(path: Path, tensors: dict[str, tuple[str, list[int]]]) -> None:
    """A safetensors file of headers only (the data is never read)."""
    header = {
        name: {"dtype": dtype, "shape": shape, "data_offsets": [0, 0]}
        for name, (dtype, shape) in tensors.items()
    }
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw)


def snapshot(tmp_path: Path, config: dict[str, Any], shards: dict[str, dict[str, Any]]) -> Path:
    (tmp_path / "config.json").write_text(json.dumps(config))
    weight_map = {}
    for shard, tensors in shards.items():
        write_safetensors(tmp_path / shard, tensors)
        weight_map.update(dict.fromkeys(tensors, shard))
    index = {"metadata": {"total_size": 123}, "weight_map": weight_map}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
    return tmp_path


QWEN3_NEXT_CONFIG = json.loads(QWEN3_NEXT.read_text())
H = 2048
TENSORS = {
    "model-1.safetensors": {
        # vocab 151,936 rows of 2048 (bf16): padded to 151,936 (a multiple of 64), split
        "model.embed_tokens.weight": ("BF16", [151_936, H]),
        "model.layers.3.self_attn.q_proj.weight": ("BF16", [16 * 256 * 2, H]),
        # 2 KV heads of 256: one head a rank at tp 2, both heads replicated... one at tp 4
        "model.layers.3.self_attn.k_proj.weight": ("BF16", [2 * 256, H]),
        "model.layers.3.self_attn.v_proj.weight": ("BF16", [2 * 256, H]),
        "model.layers.3.input_layernorm.weight": ("BF16", [H]),
        "model.layers.3.mlp.gate.weight": ("BF16", [512, H]),  # the router: whole
    },
    "model-2.safetensors": {
        "model.layers.3.mlp.experts.0.down_proj.weight": ("BF16", [H, 512]),
        "model.norm.weight": ("BF16", [H]),
        "lm_head.weight": ("BF16", [151_936, H]),
        "mtp.fc.weight": ("BF16", [H, 2 * H]),  # the MTP layer: left out of the target
    },
}


def expected_per_rank(tp: int) -> int:
    """The module rule, by hand: each tensor's bf16 bytes and its share."""
    vocab_rows = -(-151_936 // tp)  # already a multiple of 64
    kv_share = max(1, 2 // tp) / 2  # the KV heads a rank holds, of 2
    return (
        2 * vocab_rows * H * 2  # embed_tokens and lm_head
        + 16 * 256 * 2 * H * 2 // tp  # q_proj
        + round(2 * 2 * 256 * H * 2 * kv_share)  # k_proj and v_proj
        + H * 2 * 2  # two norms, whole
        + 512 * H * 2  # the router, whole
        + H * 512 * 2 // tp  # an expert's down_proj
    )


@pytest.mark.parametrize("tp", [1, 2, 4])
def test_weights_per_rank_follow_the_sharding_rule(tmp_path: Path, tp: int) -> None:
    folder = snapshot(tmp_path, QWEN3_NEXT_CONFIG, TENSORS)
    held = vllm_reservation(
        folder / "config.json", tensor_parallel_size=tp, kv_cache_memory_bytes=GIB * 40
    )
    assert held.weights_bytes == expected_per_rank(tp)
    assert "MTP layers left out" in held.weights_rule
    with_mtp = vllm_reservation(
        folder / "config.json",
        tensor_parallel_size=tp,
        kv_cache_memory_bytes=GIB * 40,
        speculative_method="mtp",
        num_speculative_tokens=1,
    )
    assert with_mtp.weights_bytes == expected_per_rank(tp) + H * 2 * H * 2 // tp


def test_weights_from_a_single_file_and_from_an_index_without_shards(tmp_path: Path) -> None:
    single = tmp_path / "single"
    single.mkdir()
    (single / "config.json").write_text(json.dumps(QWEN3_NEXT_CONFIG))
    write_safetensors(single / "model.safetensors", {"model.norm.weight": ("F32", [H])})
    held = vllm_reservation(single / "config.json", kv_cache_memory_bytes=GIB, max_model_len=4096)
    assert held.weights_bytes == H * 2  # a float32 norm loads in the model dtype, bfloat16
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "config.json").write_text(json.dumps(QWEN3_NEXT_CONFIG))
    index = {"metadata": {"total_size": 10_000_001}, "weight_map": {"a": "missing.safetensors"}}
    (bare / "model.safetensors.index.json").write_text(json.dumps(index))
    halved = vllm_reservation(
        bare / "config.json", tensor_parallel_size=2, kv_cache_memory_bytes=GIB, max_model_len=4096
    )
    assert halved.weights_bytes == 5_000_001
    assert "shards' headers are not in the snapshot" in halved.weights_rule


def test_quantized_shards_keep_their_dtypes(tmp_path: Path) -> None:
    config = {**QWEN3_NEXT_CONFIG, "quantization_config": {"quant_method": "fp8"}}
    tensors = {
        "q.safetensors": {
            "model.layers.3.mlp.experts.0.down_proj.weight": ("F8_E4M3", [H, 512]),
            "model.layers.3.mlp.experts.0.down_proj.weight_scale_inv": ("F32", [16, 4]),
        }
    }
    folder = snapshot(tmp_path, config, tensors)
    held = vllm_reservation(
        folder / "config.json",
        tensor_parallel_size=2,
        kv_cache_memory_bytes=GIB,
        max_model_len=4096,
    )
    assert held.weights_bytes == (H * 512 + 16 * 4 * 4) // 2
    assert held.quantization == "fp8"


def test_online_fp8_stores_linear_weights_at_one_byte(tmp_path: Path) -> None:
    tensors = {
        "m.safetensors": {
            "model.layers.3.mlp.experts.0.down_proj.weight": ("BF16", [H, 512]),
            "model.norm.weight": ("BF16", [H]),
        }
    }
    folder = snapshot(tmp_path, QWEN3_NEXT_CONFIG, tensors)
    held = vllm_reservation(
        folder / "config.json", quantization="fp8", kv_cache_memory_bytes=GIB, max_model_len=4096
    )
    assert held.weights_bytes == H * 512 + H * 2


def test_quantizations_not_modelled_are_refused() -> None:
    config = {**QWEN3_NEXT_CONFIG, "quantization_config": {"quant_method": "bitsandbytes"}}
    with pytest.raises(ServerArgumentError, match="'bitsandbytes' is not modelled") as raised:
        vllm_reservation(config)
    assert raised.value.field == "quantization"
    with pytest.raises(ServerArgumentError, match="contradicts"):
        vllm_reservation(
            {**QWEN3_NEXT_CONFIG, "quantization_config": {"quant_method": "fp8"}},
            quantization="awq",
        )


def test_cpu_offload_moves_weights_to_the_host(tmp_path: Path) -> None:
    folder = snapshot(tmp_path, QWEN3_NEXT_CONFIG, TENSORS)
    whole = vllm_reservation(
        folder / "config.json", kv_cache_memory_bytes=GIB, max_model_len=4096
    ).weights_bytes
    assert whole is not None
    held = vllm_reservation(
        folder / "config.json", cpu_offload_gb=0.5, kv_cache_memory_bytes=GIB, max_model_len=4096
    )
    assert held.weights_bytes == whole - GIB // 2
    assert "offloaded (--cpu-offload-gb 0.5)" in held.weights_rule


def test_dtype_sets_the_model_dtype() -> None:
    half = vllm_reservation(QWEN3_NEXT, dtype="half")
    assert half.conv_dtype == "float16"
    # bfloat16 is its own name, not half's (ModelConfig.dtype, vllm/config/model.py:100): a
    # float16 checkpoint served in bfloat16 keeps bfloat16 state.
    float16 = {**json.loads(NEMOTRON.read_text()), "torch_dtype": "float16"}
    brain = vllm_reservation(float16, dtype="bfloat16", kv_cache_memory_bytes=20 * GIB)
    assert (brain.conv_dtype, brain.conv_dtype_rule) == (
        "bfloat16",
        "config dtype bfloat16 (vLLM: model dtype)",
    )
    # vLLM runs float32 (ModelConfig.dtype's choices: float, float32): refused as not modelled,
    # not as a value vLLM does not know.
    for spelling in ("float", "float32"):
        with pytest.raises(ServerArgumentError) as raised:
            vllm_reservation(QWEN3_NEXT, dtype=spelling)
        assert raised.value.field == "dtype"
        assert str(raised.value) == (
            f"argument dtype: {spelling} is not modelled: float32 activations widen the auto KV "
            "and state cache dtypes and change the attention backends vLLM can pick; use auto, "
            "bfloat16, float16, half"
        )
    with pytest.raises(ServerArgumentError, match="unknown value 'fp32'; use auto, bfloat16"):
        vllm_reservation(QWEN3_NEXT, dtype="fp32")


def test_hf_overrides_change_the_config_read() -> None:
    # Fewer layers: the overrides are applied before anything is sized.
    fewer = vllm_reservation(QWEN3_NEXT, hf_overrides={"num_hidden_layers": 8, "layer_types": None})
    assert fewer.state_layers == 6 and fewer.attention_layers == 2


def test_the_launch_line_feeds_the_budget(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(
        [
            "vllm",
            "--json",
            "--gpu",
            "NVIDIA H200",
            "--weights-memory",
            "70GiB",
            "--activation-memory",
            "5GiB",
            "--non-torch-memory",
            "1GiB",
            "serve",
            str(QWEN3_NEXT),
            "--gpu-memory-utilization",
            "0.9",
            "--enforce-eager",
            "--max-num-batched-tokens",
            "4k",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert status == 0
    assert out["requested_memory_bytes"] == math.ceil(H200_RUNTIME * 0.9)
    assert out["cuda_graph_bytes"] == 0 and out["max_num_batched_tokens"] == 4000
    assert out["available_kv_cache_memory"] == math.ceil(H200_RUNTIME * 0.9) - 76 * GIB


def test_hf_overrides_merge_into_a_wrappers_text_config(tmp_path: Path) -> None:
    # A mapping is merged into the config's mapping, key by key, as --hf-overrides updates a
    # nested config: Qwen3.5's text_config keeps its other keys, and 8 layers at
    # full_attention_interval 4 are 6 GDN layers and 2 attention layers (3 and 7).
    qwen3_5 = CONFIGS / "qwen3.5-27b.json"
    fewer = vllm_reservation(
        qwen3_5,
        hf_overrides={"text_config": {"num_hidden_layers": 8, "layer_types": None}},
        kv_cache_memory_bytes=GIB,
        max_model_len=4096,
    )
    assert (fewer.state_layers, fewer.attention_layers) == (6, 2)
    # The overridden config is still the snapshot's: its shards are read beside it.
    folder = snapshot(
        tmp_path, QWEN3_NEXT_CONFIG, {"m.safetensors": TENSORS["model-2.safetensors"]}
    )
    held = vllm_reservation(
        folder / "config.json",
        hf_overrides={"num_hidden_layers": 8, "layer_types": None},
        kv_cache_memory_bytes=GIB,
        max_model_len=4096,
    )
    # down_proj (H x 512), the norm (H) and lm_head (151,936 x H), bf16, tp 1; MTP left out.
    assert held.weights_bytes == (H * 512 + H + 151_936 * H) * 2


def test_the_estimates_name_their_formulas() -> None:
    one = vllm_reservation(QWEN3_NEXT, gpu="h200", weights_bytes=70 * GIB)
    assert one.non_torch_bytes == 504_658_657  # 0.47 GiB
    assert one.non_torch_rule == "estimate: 0.47 GiB (one rank: CUDA context, cuBLAS)"
    two = vllm_reservation(QWEN3_NEXT, tensor_parallel_size=2, gpu="h200", weights_bytes=70 * GIB)
    assert two.non_torch_rule == "estimate: 0.47 GiB + 0.40 GiB x 1 (tp 2: NCCL, custom all-reduce)"
    # 51 PIECEWISE sizes and a FULL decode graph for each of them up to 1024 sequences.
    assert two.cuda_graph_rule == "estimate: 102 graphs x 48 layers x 0.30 MiB + 0.1 GiB"
    # FULL_AND_PIECEWISE named is the default: two modes; PIECEWISE alone captures one.
    named = vllm_reservation(
        QWEN3_NEXT, gpu="h200", weights_bytes=70 * GIB, cudagraph_mode="FULL_AND_PIECEWISE"
    )
    assert named.cuda_graph_bytes == 102 * 48 * 314_573 + 107_374_182
    given = vllm_reservation(QWEN3_NEXT, gpu="h200", weights_bytes=70 * GIB, non_torch_bytes=GIB)
    assert (given.non_torch_bytes, given.non_torch_rule) == (GIB, "--non-torch-memory")


def test_an_attention_free_model_profiles_in_bfloat16() -> None:
    # Falcon-Mamba has no attention layer to take a dtype from: its activations are counted at
    # 2 B. 1024 rows x vocab 65,024 x 12 B + 8192 tokens x 8192 x 3 x 2 B.
    held = vllm_reservation(CONFIGS / "falcon-mamba-7b.json", gpu="h200", weights_bytes=20 * GIB)
    assert held.peak_activation_bytes == 1024 * 65_024 * 12 + 8192 * 8192 * 3 * 2
    assert held.peak_activation_rule == (
        "estimate: sampler 1024 rows x vocab 65024 x 12 B + forward 8192 tokens x MLP width "
        "8192/rank x 3 x 2 B"
    )


@pytest.mark.parametrize(
    ("text", "width"),
    [
        ({"intermediate_size": 301}, 150),  # floored per rank: 301 // 2
        ({"intermediate_size": 100, "shared_expert_intermediate_size": 301}, 150),
        ({"intermediate_size": 100, "moe_intermediate_size": 75, "num_experts_per_tok": 4}, 150),
        ({"intermediate_size": 100, "moe_intermediate_size": 75}, 50),  # no top-k: no experts
        ({"intermediate_size": 100, "num_experts_per_tok": 4}, 50),
        ({"intermediate_size": 1, "shared_expert_intermediate_size": 0}, 0),
        ({"intermediate_size": True, "vocab_size": -5}, 0),
        ({}, 0),
    ],
)
def test_the_peak_activation_takes_the_widest_mlp(text: dict[str, Any], width: int) -> None:
    # The formula of the estimate: rows x vocab x 12 B + tokens x the widest MLP per rank x 3 x
    # element; a field that is missing, not an integer or not positive counts 0. Vocab 3 (1 if
    # only intermediate_size 1 is given, to see a 1 counted), tp 2, 5 rows, 7 tokens, 2 B.
    vocab = text.get("vocab_size", 3)
    text = {**text, "vocab_size": vocab} if "vocab_size" not in text else text
    rows_vocab = 5 * (vocab if isinstance(vocab, int) and vocab > 0 else 0)
    estimate, rule = peak_activation_estimate(
        text, tp=2, max_num_seqs=5, max_num_batched_tokens=7, element=2
    )
    assert estimate == rows_vocab * 12 + 7 * width * 3 * 2
    assert f"MLP width {width}/rank" in rule


def test_a_width_of_one_and_a_vocab_of_one_count() -> None:
    estimate, _ = peak_activation_estimate(
        {"vocab_size": 1, "intermediate_size": 2},
        tp=1,
        max_num_seqs=1,
        max_num_batched_tokens=1,
        element=2,
    )
    assert estimate == 1 * 1 * 12 + 1 * 2 * 3 * 2
    assert peak_activation_estimate(
        {}, tp=1, max_num_seqs=1, max_num_batched_tokens=1, element=2
    ) == (
        0,
        "estimate: sampler 1 rows x vocab 0 x 12 B + forward 1 tokens x MLP width 0/rank x 3 x 2 B",
    )


def test_one_request_that_does_not_fit_is_vllms_refusal_word_for_word() -> None:
    # check_enough_kv_cache_memory (vllm/v1/core/kv_cache_planning.py:50-87): Nemotron at its
    # 131,072 tokens needs 121 blocks of 21,495,808 B (2.42 GiB); 1 GiB less the null block
    # leaves 1,052,246,016 B (0.98 GiB).
    with pytest.raises(ServerArgumentError) as raised:
        vllm_reservation(NEMOTRON, kv_cache_memory_bytes=GIB)
    assert raised.value.server_refusal == (
        "ValueError: To serve at least one request with the model's max seq len (131072), "
        "(2.42 GiB KV cache is needed, which is larger than the available KV cache memory "
        "(0.98 GiB). Try increasing `gpu_memory_utilization` (which also controls CPU memory "
        "on the CPU backend) or decreasing `max_model_len` when initializing the engine. See "
        "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
    )


def test_weights_scalars_stay_whole_and_the_vocabulary_pads_to_64(tmp_path: Path) -> None:
    # A single-element scale is whole on every rank; a vocabulary of 1,000 rows pads to 1,024
    # and a rank of tp 2 holds 512 rows; an expert's projection splits by 2.
    tensors = {
        "w.safetensors": {
            "model.layers.3.mlp.experts.0.down_proj.weight_scale": ("F32", [1]),
            "model.layers.3.mlp.experts.0.up_proj.input_scale": ("F32", []),
            "model.embed_tokens.weight": ("BF16", [1000, 6]),
            "model.layers.3.mlp.experts.0.down_proj.weight": ("BF16", [6, 9]),
        }
    }
    folder = snapshot(tmp_path, QWEN3_NEXT_CONFIG, tensors)
    held = vllm_reservation(
        folder / "config.json",
        tensor_parallel_size=2,
        kv_cache_memory_bytes=GIB,
        max_model_len=4096,
    )
    assert held.weights_bytes == 4 + 4 + 512 * 6 * 2 + 6 * 9 * 2 // 2


def test_online_fp8_keeps_the_vocabulary_and_biases_in_the_model_dtype(tmp_path: Path) -> None:
    tensors = {
        "m.safetensors": {
            "model.embed_tokens.weight": ("BF16", [128, H]),
            "model.layers.3.self_attn.q_proj.bias": ("BF16", [H]),
        }
    }
    folder = snapshot(tmp_path, QWEN3_NEXT_CONFIG, tensors)
    held = vllm_reservation(
        folder / "config.json", quantization="fp8", kv_cache_memory_bytes=GIB, max_model_len=4096
    )
    assert held.weights_bytes == 128 * H * 2 + H * 2


def test_the_weights_rule_says_whether_the_mtp_layers_load(tmp_path: Path) -> None:
    # The MTP layer first in its shard: it is skipped, and the tensors after it still count.
    tensors = {
        "m.safetensors": {
            "mtp.fc.weight": ("BF16", [H, 2 * H]),
            "model.norm.weight": ("BF16", [H]),
        }
    }
    folder = snapshot(tmp_path, QWEN3_NEXT_CONFIG, tensors)
    left_out = vllm_reservation(
        folder / "config.json", kv_cache_memory_bytes=GIB, max_model_len=4096
    )
    assert left_out.weights_bytes == H * 2
    assert left_out.weights_rule.startswith("2 tensors of '")
    assert left_out.weights_rule.endswith(
        "': linear, expert and vocab tensors split by tp 1, KV projections by the KV heads a "
        "rank holds, norms and routers whole, an omni model's talker and token2wav left out; MTP "
        "layers left out"
    )
    loaded = vllm_reservation(
        folder / "config.json",
        kv_cache_memory_bytes=GIB,
        max_model_len=4096,
        speculative_method="mtp",
        num_speculative_tokens=1,
    )
    assert loaded.weights_bytes == H * 2 + H * 2 * H * 2
    assert loaded.weights_rule.endswith(
        "norms and routers whole, an omni model's talker and token2wav left out; MTP layers loaded"
    )


@pytest.mark.parametrize(
    ("method", "given"),
    [("awq", "awq_marlin"), ("gptq", "gptq_marlin"), ("modelopt_fp4", "modelopt"), ("fp8", "fp8")],
)
def test_a_marlin_kernel_name_agrees_with_its_checkpoint(method: str, given: str) -> None:
    # _verify_quantization (vllm/config/model.py) lets a Marlin kernel serve its method's
    # checkpoint; the package compares the names' first parts.
    config = {**QWEN3_NEXT_CONFIG, "quantization_config": {"quant_method": method}}
    held = vllm_reservation(
        config, quantization=given, weights_bytes=GIB, kv_cache_memory_bytes=GIB, max_model_len=4096
    )
    assert held.quantization == given


def test_quantization_refusals_name_the_flag_and_what_is_modelled() -> None:
    with pytest.raises(ServerArgumentError) as not_a_name:
        vllm_reservation({**QWEN3_NEXT_CONFIG, "quantization_config": {"quant_method": 5}})
    assert not_a_name.value.field == "quantization"
    assert str(not_a_name.value) == (
        "argument quantization: the config's quant_method 5 is not a name"
    )
    with pytest.raises(ServerArgumentError) as not_modelled:
        vllm_reservation(QWEN3_NEXT, quantization="bitsandbytes")
    assert str(not_modelled.value) == (
        "argument quantization: 'bitsandbytes' is not modelled; modelled: fp8, modelopt, "
        "modelopt_fp4, awq, awq_marlin, gptq, gptq_marlin, compressed-tensors"
    )
    with pytest.raises(ServerArgumentError) as contradicts:
        vllm_reservation(
            {**QWEN3_NEXT_CONFIG, "quantization_config": {"quant_method": "fp8"}},
            quantization="awq",
        )
    assert contradicts.value.field == "quantization"
    assert str(contradicts.value) == (
        "argument quantization: 'awq' contradicts the checkpoint's quantization_config ('fp8')"
    )


def test_an_override_mapping_where_the_config_has_none() -> None:
    # --hf-overrides sets a mapping the config lacks whole (Qwen3-Next has no
    # quantization_config), and a value over a mapping replaces it (rope_scaling).
    held = vllm_reservation(
        QWEN3_NEXT,
        hf_overrides={"quantization_config": {"quant_method": "fp8"}, "rope_scaling": None},
        weights_bytes=GIB,
        kv_cache_memory_bytes=32 * GIB,
        max_model_len=4096,
    )
    assert held.quantization == "fp8"


def test_a_gpu_memory_and_a_choice_of_the_wrong_type_are_named() -> None:
    with pytest.raises(ServerArgumentError) as zero:
        vllm_reservation(NEMOTRON, gpu_memory_bytes=0)
    assert zero.value.field == "gpu_memory_bytes"
    assert str(zero.value) == "argument gpu_memory_bytes: must be from 1 to 2**63 - 1, got 0"
    with pytest.raises(TypeError, match=r"^argument gpu_memory_bytes: must be an int, not str$"):
        vllm_reservation(NEMOTRON, gpu_memory_bytes="80GiB")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^argument kv_cache_dtype: must be a str, not int$"):
        vllm_reservation(NEMOTRON, kv_cache_dtype=5)  # type: ignore[arg-type]


def test_a_gpu_named_with_its_memory_keeps_the_tables_name_and_arch() -> None:
    both = vllm_reservation(NEMOTRON, gpu="h200", gpu_memory_bytes=100 * GIB, weights_bytes=GIB)
    assert (both.gpu_name, both.gpu_arch, both.gpu_memory_bytes) == (
        "NVIDIA H200",
        "sm90",
        100 * GIB,
    )
    assert both.gpu_memory_rule == "--gpu-memory 107,374,182,400 B"
    # The arch is the named GPU's, not the default sm90: an L40S is sm89.
    l40s = vllm_reservation(
        NEMOTRON, gpu="l40s", gpu_memory_bytes=48 * GIB, weights_bytes=GIB, max_model_len=4096
    )
    assert (l40s.gpu_name, l40s.gpu_arch) == ("NVIDIA L40S", "sm89")
    table = vllm_reservation(NEMOTRON, gpu="h200", weights_bytes=GIB)
    assert table.gpu_memory_rule is not None
    assert table.gpu_memory_rule.startswith("h200: memory.total 143771 MiB (nvidia-smi ")
    assert table.gpu_memory_rule.endswith("'Free memory on device (139.21/139.81 GiB)'")
    # A row without a published runtime total says so: NVML's total stands for it.
    nvml_only = vllm_reservation(NEMOTRON, gpu="l40s", weights_bytes=GIB, max_model_len=4096)
    assert nvml_only.gpu_memory_rule is not None
    assert nvml_only.gpu_memory_rule.startswith("l40s: memory.total 46068 MiB (nvidia-smi ")
    assert nvml_only.gpu_memory_rule.endswith("); no published runtime total: NVML's memory.total")
    # One byte is a GPU memory (then the weights are asked for), 0 is not.
    with pytest.raises(ServerArgumentError) as one_byte:
        vllm_reservation(NEMOTRON, gpu_memory_bytes=1)
    assert one_byte.value.field == "weights_bytes"
    with pytest.raises(TypeError, match=r"^argument gpu: must be a str, not int$"):
        vllm_reservation(NEMOTRON, gpu=5)


def cuda_graph_note(current: str, equivalent: str, suggested: str) -> str:
    # determine_available_memory's note (vllm/v1/worker/gpu_worker.py:777-798).
    return (
        "CUDA graph memory profiling is enabled (default since v0.21.0). The current "
        f"--gpu-memory-utilization={current} is equivalent to --gpu-memory-utilization="
        f"{equivalent} without CUDA graph memory profiling. To maintain the same effective KV "
        f"cache size as before, increase --gpu-memory-utilization to {suggested}. To disable, "
        "set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0."
    )


def test_the_budgets_log_lines_and_the_cuda_graph_note() -> None:
    # 2 GiB of graphs on the H200's 150,119,844,413 B: a delta of 0.014305, so 0.92 is 0.9057
    # without them and 0.9343 keeps the KV cache; 0.99 + 0.0143 is capped at 1.
    held = vllm_reservation(
        QWEN3_NEXT, tensor_parallel_size=2, gpu="h200", cuda_graph_bytes=2 * GIB, **EXPLICIT
    )
    at = held.log_lines.index("Available KV cache memory: 50.63 GiB")
    assert held.log_lines[at + 1] == cuda_graph_note("0.9200", "0.9057", "0.9343")
    full = vllm_reservation(
        QWEN3_NEXT,
        tensor_parallel_size=2,
        gpu="h200",
        cuda_graph_bytes=2 * GIB,
        gpu_memory_utilization=0.99,
        **EXPLICIT,
    )
    assert cuda_graph_note("0.9900", "0.9757", "1.0000") in full.log_lines
    # One byte of graphs is noted; none is not.
    for graphs, noted in ((1, True), (0, False)):
        held = vllm_reservation(
            QWEN3_NEXT, tensor_parallel_size=2, gpu="h200", cuda_graph_bytes=graphs, **EXPLICIT
        )
        notes = [line for line in held.log_lines if line.startswith("CUDA graph memory")]
        assert notes == ([cuda_graph_note("0.9200", "0.9200", "0.9200")] if noted else [])
    eager = vllm_reservation(
        QWEN3_NEXT, tensor_parallel_size=2, gpu="h200", enforce_eager=True, **EXPLICIT
    )
    assert not any(line.startswith("CUDA graph memory") for line in eager.log_lines)
    # With --kv-cache-memory-bytes the line names the GPU's free memory, 139.81 GiB.
    given = vllm_reservation(
        QWEN3_NEXT, tensor_parallel_size=2, gpu="h200", kv_cache_memory_bytes=40 * GIB
    )
    assert any(
        line.startswith("Initial free memory 139.81 GiB, reserved 40.0 GiB memory for KV Cache")
        for line in given.log_lines
    )


def test_the_cuda_graph_note_rounds_to_four_places_once() -> None:
    # gpu_worker.py:777-798 prints round(util -/+ delta, 4) with 4 places. 537 MiB of graphs on
    # the H200: delta = 563,085,312 / 150,119,844,413 = 0.00375091, so 0.92 - delta =
    # 0.91624909 is 0.9162 (rounded to 5 places first it would print 0.9163) and 0.92 + delta =
    # 0.92375091 is 0.9238 (0.92375 would print 0.9237).
    held = vllm_reservation(
        QWEN3_NEXT,
        tensor_parallel_size=2,
        gpu="h200",
        cuda_graph_bytes=537 * 2**20,
        **EXPLICIT,
    )
    assert cuda_graph_note("0.9200", "0.9162", "0.9238") in held.log_lines


def test_the_memory_summary_after_capture() -> None:
    # gpu_worker.py:1010-1063: consumed = weights 70 + non-torch 1 = 71 GiB; the peak
    # activation with the graphs, 5 + 2 = 7 GiB; non-KV = 71 + 7 + 2 = 80 GiB
    # (85,899,345,920 B) and the 150 MiB redundancy buffer (157,286,400 B): to the request
    # 138,110,256,860 - 85,899,345,920 - 157,286,400 = 52,053,624,540 B, to the whole GPU
    # 150,119,844,413 - 85,899,345,920 - 157,286,400 = 64,063,212,093 B.
    held = vllm_reservation(
        QWEN3_NEXT, tensor_parallel_size=2, gpu="h200", cuda_graph_bytes=2 * GIB, **EXPLICIT
    )
    assert held.log_lines[-1] == (
        "Free memory on device (139.81/139.81 GiB) on startup. Desired GPU memory utilization "
        "is (0.92, 128.63 GiB). Actual usage is 71.0 GiB for consumed memory (weights + "
        "non-torch), 7.0 GiB for peak activation, and 2.0 GiB for CUDAGraph memory. Replace "
        "gpu_memory_utilization config with `--kv-cache-memory=52053624540` (48.48 GiB) to fit "
        "into requested memory, or `--kv-cache-memory=64063212093` (59.66 GiB) to fully "
        "utilize gpu memory. Current kv cache memory in use is 50.63 GiB."
    )


def test_the_assumptions_name_what_is_not_measured() -> None:
    profiled = vllm_reservation(QWEN3_NEXT, tensor_parallel_size=2, gpu="h200", **EXPLICIT)
    assert profiled.assumptions == (
        "CUDA; a draft model's own KV layers are not counted",
        "the GPU holds nothing else at startup; the profiled terms are estimates",
    )
    # --kv-cache-memory-bytes skips the profile: nothing of the GPU is assumed.
    given = vllm_reservation(QWEN3_NEXT, gpu="h200", kv_cache_memory_bytes=40 * GIB)
    assert given.assumptions == ("CUDA; a draft model's own KV layers are not counted",)


def test_a_profiled_budget_short_of_one_request_names_the_gpu() -> None:
    # ceil(150,119,844,413 x 0.92) - (122 + 5 + 1) GiB = 671,303,388 B: 31 blocks of
    # 21,495,808 B, 30 past the null block; Nemotron's 131,072 tokens need 121.
    with pytest.raises(ServerArgumentError) as raised:
        vllm_reservation(
            NEMOTRON,
            gpu="h200",
            weights_bytes=122 * GIB,
            activation_bytes=5 * GIB,
            non_torch_bytes=GIB,
            cuda_graph_bytes=0,
        )
    assert raised.value.field == "gpu"
    assert str(raised.value) == (
        "argument gpu: 671303388 B holds 30 usable blocks of 21495808 B; one request at "
        "max_model_len 131072 needs 121: vLLM refuses to start"
    )


@pytest.mark.parametrize(
    ("launch", "sizes"),
    [
        # The default list (1, 2, 4, 8..248 by 8, 256.. by 16) up to min(max_num_seqs x 2, 512):
        ({"max_num_seqs": 1}, 2),  # 1, 2
        ({"max_num_seqs": 2}, 3),  # 1, 2, 4
        # max_num_batched_tokens joins the list where it fits: 51 + 300.
        ({"max_num_seqs": 256, "max_num_batched_tokens": 300}, 52),
        # ... up to --max-cudagraph-capture-size itself: 3 + 31 + 256, 272, 288 + 300.
        (
            {"max_num_seqs": 256, "max_num_batched_tokens": 300, "max_cudagraph_capture_size": 300},
            38,
        ),
        # SM10x captures up to 1024: 3 + 31 + 256..1024 by 16 (49).
        ({"gpu_arch": "sm100", "max_num_seqs": 1024}, 83),
    ],
)
def test_the_cuda_graph_capture_sizes(launch: dict[str, Any], sizes: int) -> None:
    held = vllm_reservation(
        QWEN3_NEXT, kv_cache_memory_bytes=40 * GIB, max_model_len=4096, **launch
    )
    assert held.cuda_graph_sizes == sizes


def test_the_profiled_budget_and_its_refusals_at_their_edges() -> None:
    held = vllm_reservation(
        QWEN3_NEXT, tensor_parallel_size=2, gpu="h200", cuda_graph_bytes=2 * GIB, **EXPLICIT
    )
    assert held.kv_cache_memory_rule == (
        "requested 138,110,256,860 B - weights - peak activation - non-torch - CUDA graphs "
        "(gpu_worker.py:739-743)"
    )
    with pytest.raises(ServerArgumentError) as no_weights:
        vllm_reservation(NEMOTRON, gpu="h200")
    assert no_weights.value.field == "weights_bytes"
    assert str(no_weights.value) == (
        "argument weights_bytes: the snapshot holds no safetensors to size the weights from; "
        "give their size"
    )
    terms: dict[str, Any] = {
        "activation_bytes": 5 * GIB,
        "non_torch_bytes": GIB,
        "cuda_graph_bytes": 0,
    }
    # The weights leave exactly 0 B of the 138,110,256,860 requested, then exactly 1 B.
    with pytest.raises(ServerArgumentError) as nothing_left:
        vllm_reservation(NEMOTRON, gpu="h200", weights_bytes=138_110_256_860 - 6 * GIB, **terms)
    assert str(nothing_left.value) == (
        "argument gpu: 138,110,256,860 B requested (0.92 of 150,119,844,413 B) leaves 0 B for "
        "the KV cache after the weights and the profiled terms; vLLM refuses to start"
    )
    with pytest.raises(ServerArgumentError) as one_byte:
        vllm_reservation(NEMOTRON, gpu="h200", weights_bytes=138_110_256_860 - 6 * GIB - 1, **terms)
    assert one_byte.value.field == "gpu"
    assert str(one_byte.value) == (
        "argument gpu: 1 B holds 0 usable blocks of 21495808 B; vLLM refuses to start"
    )
    # One block is the null block: 0 usable; one byte more is still 0 blocks, but past it.
    with pytest.raises(ServerArgumentError) as null_only:
        vllm_reservation(NEMOTRON, kv_cache_memory_bytes=21_495_808)
    assert str(null_only.value) == (
        "argument kv_cache_memory_bytes: 21495808 B holds 0 usable blocks of 21495808 B; vLLM "
        "refuses to start"
    )
    with pytest.raises(ServerArgumentError) as past_null:
        vllm_reservation(NEMOTRON, kv_cache_memory_bytes=21_495_809)
    assert str(past_null.value) == (
        "argument kv_cache_memory_bytes: 21495809 B holds 0 usable blocks of 21495808 B; one "
        "request at max_model_len 131072 needs 121: vLLM refuses to start"
    )
    given = vllm_reservation(NEMOTRON, weights_bytes=GIB, kv_cache_memory_bytes=40 * GIB)
    assert (given.weights_bytes, given.weights_rule) == (GIB, "--weights-memory")


def test_an_fp8_checkpoints_unquantized_weights_stay_in_the_model_dtype(tmp_path: Path) -> None:
    # --quantization fp8 on a checkpoint that is fp8 already is not online quantization: its
    # bfloat16 tensors load at 2 B.
    config = {**QWEN3_NEXT_CONFIG, "quantization_config": {"quant_method": "fp8"}}
    tensors = {"q.safetensors": {"model.layers.3.mlp.experts.0.up_proj.weight": ("BF16", [H, 512])}}
    folder = snapshot(tmp_path, config, tensors)
    held = vllm_reservation(
        folder / "config.json", quantization="fp8", kv_cache_memory_bytes=GIB, max_model_len=4096
    )
    assert held.weights_bytes == H * 512 * 2


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({"max_num_batched_tokens": 0}, ServerArgumentError, "must be from 1 to 2**63 - 1, got 0"),
        ({"enforce_eager": "yes"}, TypeError, "must be a bool, not str"),
        ({"cudagraph_mode": "SOMETIMES"}, ServerArgumentError, ""),
        ({"cudagraph_capture_sizes": (8, 0)}, ServerArgumentError, "must be from 1 to"),
        ({"max_cudagraph_capture_size": 0}, ServerArgumentError, "must be from 1 to"),
        ({"dtype": "float64"}, ServerArgumentError, ""),
        ({"cpu_offload_gb": "1"}, TypeError, "must be a number"),
        ({"cpu_offload_gb": True}, TypeError, "must be a number"),
        ({"cpu_offload_gb": -0.5}, ServerArgumentError, "must be 0 or more, got -0.5"),
        ({"cpu_offload_gb": math.nan}, ServerArgumentError, "must be 0 or more, got nan"),
        ({"weights_bytes": -1}, ServerArgumentError, "must be from 0 to"),
        ({"activation_bytes": -1}, ServerArgumentError, "must be from 0 to"),
        ({"cuda_graph_bytes": -1}, ServerArgumentError, "must be from 0 to"),
        ({"non_torch_bytes": -1}, ServerArgumentError, "must be from 0 to"),
        ({"kv_cache_memory_bytes": -1}, ServerArgumentError, "must be from 0 to"),
        (
            {"gpu_memory_utilization": 1.0000001},
            ServerArgumentError,
            "1 validation error for CacheConfig: Input should be less than or equal to 1",
        ),
    ],
)
def test_the_budgets_arguments_are_refused_by_name(
    arguments: dict[str, Any], error: type[Exception], message: str
) -> None:
    (name,) = arguments
    with pytest.raises(error) as raised:
        vllm_reservation(NEMOTRON, gpu="h200", **arguments)
    assert str(raised.value).startswith(f"argument {name}: {message}")
    if isinstance(raised.value, ServerArgumentError):
        assert raised.value.field == name


def test_the_whole_gpu_and_the_smallest_sizes_are_taken() -> None:
    # gt=0, le=1: all of the GPU is a utilization vLLM takes; 1 is a batch and a capture size.
    held = vllm_reservation(
        NEMOTRON,
        gpu="h200",
        weights_bytes=GIB,
        gpu_memory_utilization=1,
        max_num_batched_tokens=1,
        cudagraph_capture_sizes=(1,),
        max_cudagraph_capture_size=1,
        max_model_len=4096,
    )
    assert held.requested_memory_bytes == H200_RUNTIME
    assert held.max_num_batched_tokens == 1 and held.cuda_graph_sizes == 1


# --- the checkpoint reader (decode_ring.checkpoints) ---------------------------------------------


def raw_safetensors(path: Path, header: bytes, length: int | None = None) -> Path:
    """A file of 8 bytes of little-endian header length (``length``, else the header's), then
    ``header``."""
    path.write_bytes(struct.pack("<Q", len(header) if length is None else length) + header)
    return path


def refusal(folder: Path) -> str:
    with pytest.raises(ModelConfigError) as raised:
        read_checkpoint(folder)
    return str(raised.value)


def test_a_single_file_is_read_tensor_by_tensor(tmp_path: Path) -> None:
    assert read_checkpoint(tmp_path) is None  # neither an index nor model.safetensors
    header = {
        # safetensors' own metadata comes first in the files it writes: it is no tensor.
        "__metadata__": {"format": "pt"},
        "b.weight": {"dtype": "BF16", "shape": [2, 3], "data_offsets": [0, 12]},
        "a.weight": {"dtype": "F4", "shape": [3], "data_offsets": [12, 14]},  # 1.5 B: 2
        "c.bias": {"dtype": "I64", "shape": [], "data_offsets": [14, 22]},  # a scalar: 8 B
    }
    path = raw_safetensors(tmp_path / "model.safetensors", json.dumps(header).encode())
    assert read_checkpoint(tmp_path) == Checkpoint(
        str(path),
        (
            Tensor("b.weight", "BF16", (2, 3), 12),
            Tensor("a.weight", "F4", (3,), 2),
            Tensor("c.bias", "I64", (), 8),
        ),
        22,
        ("b.weight", "a.weight", "c.bias"),
    )


def test_only_the_header_is_read_not_the_data_after_it(tmp_path: Path) -> None:
    # A real file: the header, then the tensors' bytes (data_offsets count from the header's
    # end), which are not JSON and are never read.
    header = json.dumps({"w": {"dtype": "F16", "shape": [2], "data_offsets": [0, 4]}}).encode()
    path = tmp_path / "model.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + b"\x00\x3c\x00\x40")
    assert read_checkpoint(tmp_path) == Checkpoint(
        str(path), (Tensor("w", "F16", (2,), 4),), 4, ("w",)
    )


def test_a_file_that_is_not_safetensors_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "model.safetensors"
    path.write_bytes(b"\x01\x02\x03")
    assert refusal(tmp_path) == f"'{path}': too short for a safetensors file"
    # safetensors refuses a header over MAX_HEADER_SIZE, 100,000,000 B (HeaderTooLarge,
    # safetensors/src/tensor.rs: `if n > MAX_HEADER_SIZE`); a length read as unsigned.
    raw_safetensors(path, b"{}", length=100_000_001)
    assert refusal(tmp_path) == f"'{path}': header of 100000001 B is not one"
    raw_safetensors(path, b"{}", length=2**63)
    assert refusal(tmp_path) == f"'{path}': header of 9223372036854775808 B is not one"
    raw_safetensors(path, b"\xff\xfe")
    assert refusal(tmp_path) == f"'{path}': its header is not JSON"
    raw_safetensors(path, b"{")
    assert refusal(tmp_path) == f"'{path}': its header is not JSON"
    raw_safetensors(path, b"[]")
    assert refusal(tmp_path) == f"'{path}': its header is not a JSON object"
    path.unlink()
    path.mkdir()
    assert refusal(tmp_path) == f"cannot read '{path}': Is a directory"
    path.rmdir()
    path.symlink_to(tmp_path / "absent")  # a dangling link is there, and unreadable
    assert refusal(tmp_path) == f"cannot read '{path}': No such file or directory"


def test_a_header_of_the_largest_length_is_read(tmp_path: Path) -> None:
    # MAX_HEADER_SIZE itself is taken (the check is `>`): JSON padded with spaces to 100 MB.
    size = 100_000_000
    raw_safetensors(tmp_path / "model.safetensors", b"{}" + b" " * (size - 2))
    found = read_checkpoint(tmp_path)
    assert found is not None and found.tensors == () and found.total_bytes == 0


@pytest.mark.parametrize(
    ("entry", "dtype"),
    [
        ([1, 2], "None"),  # not an object
        ({"shape": [1]}, "None"),
        ({"dtype": 5, "shape": [1]}, "5"),
        ({"dtype": "Q4", "shape": [1]}, "'Q4'"),  # no dtype of the format
        ({"dtype": "F16"}, "'F16'"),
        ({"dtype": "F16", "shape": 4}, "'F16'"),
    ],
)
def test_a_tensor_entry_that_is_not_one_is_refused(tmp_path: Path, entry: Any, dtype: str) -> None:
    header = {"ok": {"dtype": "U8", "shape": [1]}, "x.weight": entry}
    path = raw_safetensors(tmp_path / "model.safetensors", json.dumps(header).encode())
    assert refusal(tmp_path) == (
        f"'{path}': tensor 'x.weight': not a safetensors entry (dtype {dtype})"
    )


def test_an_index_reads_each_shard_once_and_keeps_its_total(tmp_path: Path) -> None:
    write_safetensors(tmp_path / "b.safetensors", {"z": ("F32", [2])})
    write_safetensors(tmp_path / "a.safetensors", {"y": ("U8", [3]), "x": ("F16", [5])})
    index = tmp_path / "model.safetensors.index.json"
    # The index's total wins over the headers' sum (7 + 8 = 21 B here); names sorted.
    weight_map = {"z": "b.safetensors", "y": "a.safetensors", "x": "a.safetensors"}
    index.write_text(json.dumps({"metadata": {"total_size": 1000}, "weight_map": weight_map}))
    write_safetensors(tmp_path / "model.safetensors", {"w": ("F32", [1])})  # the index wins
    assert read_checkpoint(tmp_path) == Checkpoint(
        str(index),
        (Tensor("y", "U8", (3,), 3), Tensor("x", "F16", (5,), 10), Tensor("z", "F32", (2,), 8)),
        1000,
        ("x", "y", "z"),
    )
    (tmp_path / "b.safetensors").unlink()
    assert read_checkpoint(tmp_path) == Checkpoint(str(index), None, 1000, ("x", "y", "z"))
    raw_safetensors(tmp_path / "b.safetensors", json.dumps({"z": {"dtype": "F32"}}).encode())
    assert refusal(tmp_path) == (
        f"'{tmp_path / 'b.safetensors'}': tensor 'z': not a safetensors entry (dtype 'F32')"
    )
    # An index of no tensors and a total of 0 bytes is an index.
    index.write_text(json.dumps({"metadata": {"total_size": 0}, "weight_map": {}}))
    assert read_checkpoint(tmp_path) == Checkpoint(str(index), (), 0, ())


def test_an_index_is_utf8_whatever_the_locale(tmp_path: Path) -> None:
    # JSON exchanged between systems is UTF-8 (RFC 8259, section 8.1), as huggingface_hub writes
    # the index; an ASCII locale (LC_CTYPE C, outside Python's UTF-8 mode) changes nothing.
    import locale

    index = tmp_path / "model.safetensors.index.json"
    document = {"metadata": {"total_size": 2}, "weight_map": {"größe.weight": "absent.safetensors"}}
    index.write_bytes(json.dumps(document, ensure_ascii=False).encode("utf-8"))
    before = locale.setlocale(locale.LC_CTYPE)
    try:
        locale.setlocale(locale.LC_CTYPE, "C")
        found = read_checkpoint(tmp_path)
    finally:
        locale.setlocale(locale.LC_CTYPE, before)
    assert found == Checkpoint(str(index), None, 2, ("größe.weight",))


@pytest.mark.parametrize(
    "text",
    [
        "[]",
        '{"weight_map": {}}',
        '{"metadata": {"total_size": 1}}',
        '{"weight_map": {}, "metadata": []}',
        '{"weight_map": [], "metadata": {"total_size": 1}}',
        '{"weight_map": {}, "metadata": {"total_size": "1"}}',
        '{"weight_map": {}, "metadata": {"total_size": -1}}',
    ],
)
def test_an_index_without_a_weight_map_and_total_is_refused(tmp_path: Path, text: str) -> None:
    index = tmp_path / "model.safetensors.index.json"
    index.write_text(text)
    assert refusal(tmp_path) == f"'{index}': needs a weight_map and metadata.total_size (bytes)"


def test_an_index_that_is_not_json_is_refused_naming_it(tmp_path: Path) -> None:
    index = tmp_path / "model.safetensors.index.json"
    index.write_text("{")
    assert refusal(tmp_path) == (
        f"cannot read '{index}': Expecting property name enclosed in double quotes: line 1 "
        "column 2 (char 1)"
    )
