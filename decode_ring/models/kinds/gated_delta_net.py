"""Gated-delta-net state: a conv state over the query, key and value channels
(``2 * Hk * dk + Hv * dv``) and a ``(Hv, dv, dk)`` recurrent state.

vLLM ``gated_delta_net_state_shape`` (mamba_utils.py:272-294): conv ``(K - 1 + num_spec,
conv_dim / tp)`` and recurrent ``(Hv / tp, dv, dk)``; the layer shards the key heads too
(gdn/qwen_gdn_linear_attn.py:647-652, :957). SGLang feeds ``Mamba2StateShape.create`` with
``n_groups = Hk`` and ``state_size = dk`` (configs/qwen3_next.py:288-313): conv ``(conv_dim /
tp, K - 1)``, the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..fields import Fields, divide
from ..state import Sizing, StateTensor, conv_window, tensor
from .traits import Checkpoint, KindTraits


@dataclass(frozen=True, slots=True)
class GatedDeltaNet:
    """One gated-delta-net layer's geometry; ``*_field`` name the head-count fields."""

    traits: ClassVar[KindTraits] = KindTraits(
        "gated_delta_net", one_conv_one_state=True, vllm_checkpoint=Checkpoint.FLASHINFER_GDN
    )
    k_heads: int
    v_heads: int
    k_dim: int
    v_dim: int
    kernel: int
    k_heads_field: str = "linear_num_key_heads"
    v_heads_field: str = "linear_num_value_heads"

    def tensors(self, cfg: Fields, sizing: Sizing) -> tuple[StateTensor, ...]:
        """The conv and recurrent state of one layer, one sequence, one rank."""
        tp = sizing.tp
        divide(cfg, self.k_heads_field, self.k_heads, tp)
        heads = divide(cfg, self.v_heads_field, self.v_heads, tp)
        # Divides: both head counts divided just above.
        channels = (2 * self.k_heads * self.k_dim + self.v_heads * self.v_dim) // tp
        conv = conv_window(sizing, channels, self.kernel, kind=self.traits.name)
        recurrent = (heads, self.v_dim, self.k_dim)
        return (
            tensor("conv", conv, sizing.dtypes.conv()),
            tensor("recurrent", recurrent, sizing.dtypes.gated_delta_net()),
        )
