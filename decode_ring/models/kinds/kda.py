"""Kimi-delta-attention (KDA) state: a conv state over the query, key and value channels
(``H * d + 2 * Hk * dk``) and an ``(H, d, d)`` recurrent state, float32 by default.

vLLM ``kda_state_shape`` (mamba_utils.py:296-319): conv ``(K - 1 + num_spec, conv_dim / tp)``
and recurrent ``(H / tp, d, d)``, as the KDA layer asks (vllm/models/kimi_k3/nvidia/kda.py:
582-591, layers/mamba/gdn/kimi_gdn_linear_attn.py:166-190, which asserts ``H % tp == 0``).
SGLang ``KimiLinearStateShape.create`` (sglang/srt/configs/mamba_utils.py:298-367): conv
``(K - 1, H * d / tp + 2 * Hk * dk / tp)``, window first and never widened, recurrent ``(H / tp,
d, d)``. The recurrent state's dtype is the ``kda`` rule of ``dtypes``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..fields import Fields, divide
from ..state import Sizing, StateTensor, conv_window, tensor
from .traits import Checkpoint, KindTraits


@dataclass(frozen=True, slots=True)
class Kda:
    """One KDA layer's geometry (key heads and dim equal the value ones in every peer's call);
    ``heads_field`` names the head count in a split refusal."""

    traits: ClassVar[KindTraits] = KindTraits(
        "kda",
        one_conv_one_state=True,
        sglang_window_first=True,
        # KimiLinearStateShape.disable_conv_window_dedup (sglang/srt/configs/mamba_utils.py:305).
        sglang_conv_dedup=False,
        vllm_checkpoint=Checkpoint.FLASHKDA,
    )
    heads: int
    head_dim: int
    kernel: int
    heads_field: str

    def tensors(self, cfg: Fields, sizing: Sizing) -> tuple[StateTensor, ...]:
        """The conv and recurrent state of one layer, one sequence, one rank: one conv state of
        the q, k and v channels, or, where the release splits it (vLLM before 0.23.0,
        ``Sizing.split``), one each, in that order."""
        heads = divide(cfg, self.heads_field, self.heads, sizing.tp)
        # Divides: the heads divided, and each of the three blocks is heads x head_dim.
        recurrent = tensor("recurrent", (heads, self.head_dim, self.head_dim), sizing.dtypes.kda())
        name = self.traits.name
        if name in sizing.split:
            block = conv_window(sizing, heads * self.head_dim, self.kernel, kind=name)
            convs = tuple(
                tensor(f"conv_{part}", block, sizing.dtypes.conv()) for part in ("q", "k", "v")
            )
            return (*convs, recurrent)
        conv = conv_window(
            sizing, 3 * heads * self.head_dim, self.kernel, kind=name, window_first=True
        )
        return tensor("conv", conv, sizing.dtypes.conv()), recurrent
