"""Short-convolution state (LFM2): a conv state only, over ``dim`` channels.

vLLM ``short_conv_state_shape`` (mamba_utils.py:249-259) as the ``ShortConv`` layer asks it
(layers/mamba/short_conv.py:351-357, with ``num_spec``; the model-level
``get_mamba_state_shape_from_config`` omits it, and the layer decides): ``(K - 1 + num_spec,
dim / tp)``. SGLang feeds ``Mamba2StateShape.create`` with ``n_groups = 1``, ``num_heads = tp``
and ``state_size = 0`` (configs/lfm2.py:59-98): conv ``(dim / tp, K - 1)`` and a temporal state
``(1, dim, 0)`` of no elements, which it allocates and which is listed here with its 0 bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .fields import Fields, divide
from .state import Sizing, StateTensor, conv_window, tensor


@dataclass(frozen=True, slots=True)
class ShortConv:
    """One short-conv layer's geometry; ``dim_field`` names the channel count."""

    kind: ClassVar[str] = "short_conv"
    dim: int
    kernel: int
    dim_field: str

    def tensors(self, cfg: Fields, sizing: Sizing) -> tuple[StateTensor, ...]:
        """The conv state of one layer, one sequence, one rank (and SGLang's empty one)."""
        channels = divide(cfg, self.dim_field, self.dim, sizing.tp)
        conv = tensor(
            "conv", conv_window(sizing, channels, self.kernel, widened=True), sizing.dtypes.conv()
        )
        if sizing.layout != "sglang":
            return (conv,)
        return conv, tensor("ssm", (1, self.dim, 0), sizing.dtypes.ssm())
