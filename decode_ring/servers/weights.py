"""The weights one tensor-parallel rank loads, from the checkpoint's own tensors, as vLLM and SGLang
shard them; and the quantizations the package models.

The rule (both servers build the same parallel layers; vLLM's cited):

* split by the tensor-parallel size: every linear layer's weight and its per-group scales and
  zeros (``ColumnParallelLinear`` splits the output dimension, ``RowParallelLinear`` the input,
  vllm/model_executor/layers/linear.py:436-497, :1653-1709), the experts' (each expert's
  intermediate split, ``intermediate_size_per_partition``, fused_moe/config.py:1353), the conv
  and head parameters of the recurrent layers;
* the vocabulary (``embed_tokens``, ``lm_head``): padded to a multiple of 64 and split
  (``VocabParallelEmbedding``, vocab_parallel_embedding.py:36, :95, :290-306);
* the KV projections (``k_proj``, ``v_proj``): each rank holds the share of KV heads
  ``AttentionLayers`` gives it, so they replicate past the KV heads (linear.py:1066-1071);
* replicated on every rank: norms, the MoE router (``mlp.gate``, ``shared_expert_gate``,
  ``ReplicatedLinear``, linear.py:329) and single-element scales;
* multi-token-prediction layers (``mtp.``) are left out: the target model skips them, the MTP
  drafter loads them.

Floating-point tensors that are not scales load in the model dtype (``--dtype``); quantized
tensors and their scales keep the checkpoint's dtypes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ..checkpoints import Checkpoint, Tensor
from ..models import DTYPE_BYTES, AttentionLayers
from .common import fail

__all__ = ["MODELLED_QUANTIZATIONS", "WeightsPerRank", "quantization_method", "weights_per_rank"]

# quantization_config.quant_method values (and --quantization names) whose checkpoints the rule
# sizes from their shards: fp8, ModelOpt (FP8 and NVFP4), AWQ, GPTQ and compressed-tensors
# (int4 WNA16, fp8, nvfp4), with the Marlin kernels' names vLLM accepts for them.
MODELLED_QUANTIZATIONS: Final = (
    "fp8",
    "modelopt",
    "modelopt_fp4",
    "awq",
    "awq_marlin",
    "gptq",
    "gptq_marlin",
    "compressed-tensors",
)
_VOCAB_PADDING: Final = 64  # DEFAULT_VOCAB_PADDING_SIZE, vocab_parallel_embedding.py:36
_VOCAB: Final = re.compile(r"(^|\.)(embed_tokens|lm_head|word_embeddings|wte)\.")
_KV: Final = re.compile(r"\.(k_proj|v_proj)\.")
_REPLICATED: Final = re.compile(
    r"(norm[^.]*|layernorm[^.]*)\.(weight|bias)$"
    r"|\.gate\.(weight|bias)$|shared_expert_gate\.weight$|e_score_correction_bias$"
)
_SCALE: Final = re.compile(r"(scale|scales|scale_inv|scale_2|zeros|zero_point|g_idx)$")
_FLOATS: Final = {"F32": 4, "F16": 2, "BF16": 2, "F64": 8}
_MTP: Final = re.compile(r"(^|\.)mtp\.")


@dataclass(frozen=True, slots=True)
class WeightsPerRank:
    """The weights on one rank and the rule behind them (``None`` bytes: no checkpoint)."""

    weights_bytes: int | None
    weights_rule: str


def quantization_method(root: Mapping[str, Any], given: str | None) -> str | None:
    """The checkpoint's quantization (its ``quantization_config.quant_method``) or the flag's;
    refuses one the package does not model, and a flag that contradicts the checkpoint (vLLM
    checks them, vllm/config/model.py ``_verify_quantization``)."""
    config = root.get("quantization_config")
    method = config.get("quant_method") if isinstance(config, Mapping) else None
    if method is not None and not isinstance(method, str):
        raise fail("quantization", f"the config's quant_method {method!a} is not a name")
    for name in (method, given):
        if name is not None and name not in MODELLED_QUANTIZATIONS:
            raise fail(
                "quantization",
                f"{name!a} is not modelled; modelled: {', '.join(MODELLED_QUANTIZATIONS)}",
            )
    if method is not None and given is not None and given.split("_")[0] != method.split("_")[0]:
        raise fail(
            "quantization",
            f"{given!a} contradicts the checkpoint's quantization_config ({method!a})",
        )
    return given or method


def weights_per_rank(
    attention: AttentionLayers | None,
    checkpoint: Checkpoint | None,
    tp: int,
    model_dtype: str,
    *,
    online_fp8: bool = False,
    mtp: bool = False,
) -> WeightsPerRank:
    """One rank's weights under the module's rule. Without the shards' headers, the index's
    total divided by ``tp``. ``online_fp8``: an unquantized checkpoint served with
    ``--quantization fp8`` (its linear weights at 1 B); ``mtp``: the MTP layers load too."""
    if checkpoint is None:
        return WeightsPerRank(None, "no safetensors in the snapshot: give the weights")
    if checkpoint.tensors is None:
        return WeightsPerRank(
            -(-checkpoint.total_bytes // tp),
            f"metadata.total_size {checkpoint.total_bytes:,} B / tp {tp} (the shards' headers "
            "are not in the snapshot: every tensor taken as split)",
        )
    per_rank = 0.0
    for tensor in checkpoint.tensors:
        if _MTP.search(tensor.name) and not mtp:
            continue
        per_rank += _loaded(tensor, model_dtype, online_fp8) * _share(attention, tensor, tp)
    return WeightsPerRank(
        round(per_rank),
        f"{len(checkpoint.tensors)} tensors of {checkpoint.source!a}: linear, expert and vocab "
        f"tensors split by tp {tp}, KV projections by the KV heads a rank holds, norms and "
        "routers whole" + ("; MTP layers loaded" if mtp else "; MTP layers left out"),
    )


def _loaded(tensor: Tensor, model_dtype: str, online_fp8: bool) -> float:
    """The bytes ``tensor`` takes once loaded: floats that are not scales in the model dtype
    (1 B for a linear weight under online fp8); quantized tensors as stored."""
    if tensor.dtype not in _FLOATS or _SCALE.search(tensor.name):
        return tensor.bytes
    elements = tensor.bytes / _FLOATS[tensor.dtype]
    linear = len(tensor.shape) == 2 and not _VOCAB.search(tensor.name)
    if online_fp8 and linear and not _REPLICATED.search(tensor.name):
        return elements
    return elements * DTYPE_BYTES[model_dtype]


def _share(attention: AttentionLayers | None, tensor: Tensor, tp: int) -> float:
    """The share of ``tensor`` one rank loads."""
    if _REPLICATED.search(tensor.name) or max(tensor.shape, default=1) == 1 or tp == 1:
        return 1.0
    if _VOCAB.search(tensor.name):
        vocab = tensor.shape[0]
        padded = -(-vocab // _VOCAB_PADDING) * _VOCAB_PADDING
        return -(-padded // tp) / vocab
    if _KV.search(tensor.name) and attention is not None and not attention.mla:
        return attention.page_bytes_per_token(tp, 1) / attention.page_bytes_per_token(1, 1)
    return 1 / tp
