"""Mamba-1 state: a conv state over ``d_inner`` channels and a ``(d_inner, d_state)`` SSM state.

vLLM ``MambaStateShapeCalculator.mamba1_state_shape`` (mamba_utils.py:171-184): conv
``(K - 1, d_inner / tp)``, never widened for speculative decoding, SSM ``(d_inner / tp,
d_state)``; ``divide()`` asserts the split. SGLang ``Mamba2StateShape.create_full_rank``
(sglang/srt/configs/mamba_utils.py:245-290): conv ``(d_inner / tp, K - 1)`` and SSM
``(d_inner / tp, 1, d_state)``, asserting the split too (:271).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..fields import Fields, divide
from ..state import Sizing, StateTensor, conv_window, tensor
from .traits import KindTraits


@dataclass(frozen=True, slots=True)
class Mamba1:
    """One Mamba-1 layer's geometry; ``inner_field`` and ``inner_terms`` name the fields that
    make ``d_inner`` (for the refusal of a split)."""

    traits: ClassVar[KindTraits] = KindTraits("mamba1", one_conv_one_state=True)
    d_inner: int
    d_state: int
    kernel: int
    inner_field: str
    inner_terms: str = ""

    def tensors(self, cfg: Fields, sizing: Sizing) -> tuple[StateTensor, ...]:
        """The conv and SSM state of one layer, one sequence, one rank."""
        channels = divide(cfg, self.inner_field, self.d_inner, sizing.tp, self.inner_terms)
        conv = conv_window(sizing, channels, self.kernel, kind=None)
        ssm = (channels, 1, self.d_state) if sizing.layout == "sglang" else (channels, self.d_state)
        return tensor("conv", conv, sizing.dtypes.conv()), tensor("ssm", ssm, sizing.dtypes.ssm())
