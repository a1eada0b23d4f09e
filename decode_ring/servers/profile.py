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
    "NON_TORCH_MANY_RANKS",
    "NON_TORCH_ONE_RANK",
    "SAMPLER_BYTES_PER_LOGIT",
    "cuda_graph_estimate",
    "non_torch_estimate",
    "peak_activation_estimate",
]

# The sampler warms on min(max_num_seqs, max_num_batched_tokens) rows of the whole vocabulary
# in float32 (_dummy_sampler_run, vllm/v1/worker/gpu_model_runner.py:5866-5926; top-k/top-p
# by a Triton kernel, no sort, vllm/v1/sample/ops/topk_topp_sampler.py:501-521): the logits,
# the probabilities, the exponential noise and a copy, 16 B an element.
SAMPLER_BYTES_PER_LOGIT: Final = 16
# The forward pass's widest transient: three intermediates of the widest MLP per rank.
FORWARD_INTERMEDIATES: Final = 3
# A captured CUDA graph costs about this much per decoder layer, beside a fixed pool.
GRAPH_BYTES_PER_LAYER: Final = 367_001  # 0.35 MiB
GRAPH_POOL_BYTES: Final = 107_374_182  # 0.1 GiB
# Non-torch memory counted as consumed: the CUDA context's growth and cuBLAS workspaces; past
# one rank, NCCL's and the custom all-reduce's buffers.
NON_TORCH_ONE_RANK: Final = 536_870_912  # 0.5 GiB
NON_TORCH_MANY_RANKS: Final = 1_073_741_824  # 1 GiB


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
    vllm/utils/mem_utils.py:318-326) for a text config's shapes: the sampler's logits over the
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


def cuda_graph_estimate(*, sizes: int, modes: int, layers: int) -> tuple[int, str]:
    """The CUDA-graph memory of ``sizes`` capture sizes in ``modes`` modes for a model of
    ``layers`` decoder layers: graphs x layers x 0.35 MiB and a 0.1 GiB pool."""
    graphs = sizes * modes
    estimate = graphs * layers * GRAPH_BYTES_PER_LAYER + GRAPH_POOL_BYTES
    rule = (
        f"estimate: {graphs} graphs ({sizes} sizes x {modes} modes) x {layers} layers x "
        "0.35 MiB + 0.1 GiB"
    )
    return estimate, rule


def non_torch_estimate(tp: int) -> tuple[int, str]:
    """Non-torch memory (``MemorySnapshot.non_torch_memory``, vllm/utils/mem_utils.py:140-170):
    0.5 GiB on one rank, 1 GiB with tensor-parallel peers."""
    if tp == 1:
        return NON_TORCH_ONE_RANK, "estimate: 0.5 GiB (one rank: CUDA context, cuBLAS)"
    return NON_TORCH_MANY_RANKS, "estimate: 1 GiB (NCCL and custom all-reduce buffers)"
