"""Linear (lightning) attention state: an ``(H, d, d)`` recurrent state and no conv state.

vLLM ``linear_attention_state_shape`` (mamba_utils.py:154-162) as the layer asks it
(layers/mamba/linear/base.py:63-66): ``(H / tp, d, d)`` in the model dtype
(``linear_attention_state_dtype``). SGLang feeds ``Mamba2StateShape.create`` with
``intermediate_size = 0``, ``n_groups = 0`` and ``conv_kernel = 1`` (configs/bailing_hybrid.py:
226-236, configs/minicpm.py:148-169): a conv state ``(0, 0)`` of no elements, listed here with
its 0 bytes, and a temporal state ``(H / tp, d, d)`` in float32.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..fields import Fields, divide
from ..state import Sizing, StateTensor, tensor
from .traits import KindTraits


@dataclass(frozen=True, slots=True)
class LinearAttention:
    """One linear-attention layer's geometry; ``heads_field`` names the head count."""

    traits: ClassVar[KindTraits] = KindTraits("linear_attention", one_conv_one_state=False)
    heads: int
    head_dim: int
    heads_field: str

    def tensors(self, cfg: Fields, sizing: Sizing) -> tuple[StateTensor, ...]:
        """The recurrent state of one layer, one sequence, one rank (and SGLang's empty conv)."""
        heads = divide(cfg, self.heads_field, self.heads, sizing.tp)
        state = tensor("recurrent", (heads, self.head_dim, self.head_dim), sizing.dtypes.linear())
        if sizing.layout != "sglang":
            return (state,)
        return tensor("conv", (0, 0), sizing.dtypes.conv()), state
