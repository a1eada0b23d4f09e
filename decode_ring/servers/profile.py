"""Estimates of what vLLM profiles at boot rather than computes: the peak activation of its
profile run, its CUDA-graph memory and the non-torch memory it counts as consumed. Each is a
formula on the model's shapes and the launch, with its constants here, in one place (a release
that profiles differently changes them here); each is printed as an estimate with its formula,
and each can be replaced by the operator's own figure.

Held to published startup logs in tests/test_estimates_against_logs.py (the logs and a table of
each estimate against each logged term: tests/logs/README.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = [
    "GRAPH_BYTES_PER_LAYER",
    "GRAPH_POOL_BYTES",
    "NON_TORCH_ONE_RANK",
    "NON_TORCH_PER_PEER",
    "SAMPLER_BYTES_PER_LOGIT",
    "cuda_graph_estimate",
    "non_torch_estimate",
    "peak_activation_estimate",
]

# What vLLM 0.33.0 profiles; its worker's arithmetic is the same from 0.27.0 (memory_profiling
# and determine_available_memory differ only in the allocator's split limit, XPU and a ROCm
# fallback; tests/logs/README.md). ``transient_peak_headroom`` is the torch peak of profile_run
# less what it leaves allocated (vllm/utils/mem_utils.py:312-321), the CUDA-graph estimate is
# taken from the KV budget beside it (vllm/v1/worker/gpu_worker.py:707-757), and the log prints
# their sum as "peak activation" (gpu_worker.py:748-750, 1051-1054). 0.33.0 runs Model Runner
# V2 unless a feature it lacks is asked for (use_v2_model_runner, vllm/config/vllm.py:730-767);
# V1 (vllm/v1/worker/gpu_model_runner.py) is the fallback. Both profile the same way: one dummy
# forward over max_num_batched_tokens, then the sampler on the sampled rows.
#
# The sampler warms on min(max_num_seqs, max_num_batched_tokens) rows of the whole vocabulary
# (V2: _dummy_sampler_run, vllm/v1/worker/gpu/model_runner.py:993-1020, twice, the second with
# every sampling parameter; V1: gpu_model_runner.py:5866-5926): the logits in the model dtype,
# their float32 copy (gpu/sample/sampler.py:241-242) and the float32 top-k/top-p result, 10 B an
# element, and the log-probabilities' scratch. 12 B: calibrated on the 0.28.0 ROCm log (headroom
# 2.4 - 1.55 GiB = 0.85 GiB; estimate 0.91) and held to the printed peaks of the 0.27.1 and
# 0.31.0 logs (tests/logs/README.md).
SAMPLER_BYTES_PER_LOGIT: Final = 12
# The forward pass's widest transient: three intermediates of the widest MLP per rank.
FORWARD_INTERMEDIATES: Final = 3
# profile_cudagraph_memory captures graphs into a throwaway pool and counts what they take: V1
# (gpu_model_runner.py:6268-6380) the first two of each mode, the second's cost extrapolated to
# the rest; V2 (gpu/cudagraph_utils.py:922-1010) every PIECEWISE graph and two FULL ones,
# extrapolated. The estimate grows with the graphs, and a graph's cost with the decoder layers
# it replays. Per graph and layer 0.30 MiB beside a 0.1 GiB pool: calibrated on the two logs
# that print V1's estimate (0.28.0 ROCm 1.55 GiB, 0.27.1 GB10 1.94 GiB, both 86 graphs of a
# 64-layer model). No published log of V2's estimate was found; where V2 measures PIECEWISE
# graphs whole, which share one pool, its estimate is likely below this one.
GRAPH_BYTES_PER_LAYER: Final = 314_573  # 0.30 MiB
GRAPH_POOL_BYTES: Final = 107_374_182  # 0.1 GiB
# Non-torch memory counted as consumed (consumed less the weights, gpu_worker.py:1051): the CUDA
# context's growth and cuBLAS workspaces on one rank; each tensor-parallel peer adds NCCL's and
# the custom all-reduce's buffers. Calibrated on the logs of 0.27.0 onwards (tests/logs/README.md):
# one rank is the median of the five one-rank logs (0.15, 0.26, 0.47, 0.56 and 0.56 GiB; the
# median, as the ends are a WSL2 laptop and an A100 no one constant is within 25% of both), and a
# peer the least-squares fit of the tp 2 (0.74 GiB) and tp 4 (1.70 GiB) logs beside it (0.396).
NON_TORCH_ONE_RANK: Final = 504_658_657  # 0.47 GiB
NON_TORCH_PER_PEER: Final = 429_496_730  # 0.40 GiB


def _positive(text: Mapping[str, Any], name: str) -> int:
    value = text.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def peak_activation_estimate(
    text: Mapping[str, Any],
    *,
    tp: int,
    max_num_seqs: int,
    max_num_batched_tokens: int,
    element: int,
) -> tuple[int, str]:
    """The peak activation ``profile_run`` leaves (``transient_peak_headroom``,
    vllm/utils/mem_utils.py:318-320) for a text config's shapes: the sampler's logits over the
    vocabulary, and ``max_num_batched_tokens`` tokens through the widest MLP per rank (dense,
    shared expert, or the routed experts' ``top-k x moe_intermediate_size``), ``element`` B a
    value. Returns the bytes and the formula."""
    rows = min(max_num_seqs, max_num_batched_tokens)
    vocab = _positive(text, "vocab_size")
    width = (
        max(
            _positive(text, "intermediate_size"),
            _positive(text, "shared_expert_intermediate_size"),
            _positive(text, "moe_intermediate_size") * _positive(text, "num_experts_per_tok"),
        )
        // tp
    )
    sampler = rows * vocab * SAMPLER_BYTES_PER_LOGIT
    forward = max_num_batched_tokens * width * FORWARD_INTERMEDIATES * element
    rule = (
        f"estimate: sampler {rows} rows x vocab {vocab} x {SAMPLER_BYTES_PER_LOGIT} B + forward "
        f"{max_num_batched_tokens} tokens x MLP width {width}/rank x {FORWARD_INTERMEDIATES} x "
        f"{element} B"
    )
    return sampler + forward, rule


def cuda_graph_estimate(*, graphs: int, layers: int) -> tuple[int, str]:
    """vLLM's CUDA-graph memory estimate for ``graphs`` captured graphs (every mode's, as
    ``CudagraphDispatcher.get_capture_descs`` lists them) of a model of ``layers`` decoder
    layers: graphs x layers x 0.30 MiB and a 0.1 GiB pool."""
    estimate = graphs * layers * GRAPH_BYTES_PER_LAYER + GRAPH_POOL_BYTES
    rule = f"estimate: {graphs} graphs x {layers} layers x 0.30 MiB + 0.1 GiB"
    return estimate, rule


def non_torch_estimate(tp: int) -> tuple[int, str]:
    """Non-torch memory (``MemorySnapshot.non_torch_memory``, vllm/utils/mem_utils.py:140-170,
    within ``total_consumed``, mem_utils.py:312-314): ``NON_TORCH_ONE_RANK`` on one rank and
    ``NON_TORCH_PER_PEER`` for each tensor-parallel peer."""
    peers = max(tp, 1) - 1
    estimate = NON_TORCH_ONE_RANK + peers * NON_TORCH_PER_PEER
    one_rank = f"{NON_TORCH_ONE_RANK / 2**30:.2f} GiB"
    if peers == 0:
        return estimate, f"estimate: {one_rank} (one rank: CUDA context, cuBLAS)"
    per_peer = f"{NON_TORCH_PER_PEER / 2**30:.2f} GiB"
    rule = f"estimate: {one_rank} + {per_peer} x {peers} (tp {tp}: NCCL, custom all-reduce)"
    return estimate, rule
