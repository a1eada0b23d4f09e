"""Short-convolution state (LFM2): a conv state only, over ``dim`` channels.

vLLM ``short_conv_state_shape`` (mamba_utils.py:249-259) as the ``ShortConv`` layer asks it
(layers/mamba/short_conv.py:351-357, with ``num_spec``; the model-level
``get_mamba_state_shape_from_config`` omits it, and the layer decides): ``(K - 1 + num_spec,
dim / tp)``. SGLang feeds ``Mamba2StateShape.create`` with ``n_groups = 1``, ``num_heads = tp``
and ``state_size = 0`` (configs/lfm2.py:59-98): conv ``(dim / tp, K - 1)`` and a temporal state
``(1, dim, 0)`` of no elements, which it allocates and which is listed here with its 0 bytes.

ZAYA1's CCA layers (SGLang only, configs/zaya.py:259-313) hold two conv tensors and no other:
``conv`` (the conv_qk left padding, ``((num_attention_heads + num_key_value_heads) * head_dim
/ tp, (cca_time0 - 1) + (cca_time1 - 1))``) and ``prev_hs`` (the previous hidden state,
``(hidden_size, 1)``, not split: it feeds replicated projections), in the conv dtype, beside a
temporal state ``(1, 1, 0)`` of no elements (models/zaya.py:828-830 names them ``conv_state``
and ``prev_hs_state``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..errors import TensorParallelSplitError
from ..fields import Fields, divide
from ..state import Sizing, StateTensor, conv_window, tensor
from .traits import KindTraits


@dataclass(frozen=True, slots=True)
class ShortConv:
    """One short-conv layer's geometry; ``dim_field`` names the channel count."""

    traits: ClassVar[KindTraits] = KindTraits("short_conv", one_conv_one_state=False)
    dim: int
    kernel: int
    dim_field: str

    def tensors(self, cfg: Fields, sizing: Sizing) -> tuple[StateTensor, ...]:
        """The conv state of one layer, one sequence, one rank (and SGLang's empty one)."""
        channels = divide(cfg, self.dim_field, self.dim, sizing.tp)
        conv = tensor(
            "conv",
            conv_window(sizing, channels, self.kernel, kind=self.traits.name),
            sizing.dtypes.conv(),
        )
        if sizing.layout != "sglang":
            return (conv,)
        return conv, tensor("ssm", (1, self.dim, 0), sizing.dtypes.ssm())


@dataclass(frozen=True, slots=True)
class CcaConv:
    """One ZAYA1 CCA layer's geometry: ``channels`` conv_qk channels (split over the ranks) with
    a ``padding``-column window, and the ``hidden`` channels of the previous hidden state (one
    column, on every rank whole); ``groups``, the query groups (KV heads), each kept on one rank:
    SGLang asserts ``num_query_groups % tp_size == 0`` (sglang/srt/models/zaya.py:921-925, and
    ``num_k_heads`` in the CCA, :467-475), replicating none."""

    # A CCA layer is a short conv to every server: its state is conv windows only.
    traits: ClassVar[KindTraits] = ShortConv.traits
    channels: int
    padding: int
    hidden: int
    groups: int = 1

    def tensors(self, cfg: Fields, sizing: Sizing) -> tuple[StateTensor, ...]:
        """The two conv tensors of one layer, one sequence, one rank (and SGLang's empty one)."""
        terms = "(num_attention_heads + num_key_value_heads) * head_dim"
        channels = divide(cfg, "num_attention_heads", self.channels, sizing.tp, terms)
        if self.groups % sizing.tp:
            raise cfg.fail(
                "num_key_value_heads",
                f"tp_size {sizing.tp} does not divide the {self.groups} query groups; SGLang's "
                "ZAYA1 attention keeps each on one rank and replicates none "
                "(sglang/srt/models/zaya.py:921-925)",
                TensorParallelSplitError,
            )
        rule = sizing.dtypes.conv()
        conv = tensor("conv", conv_window(sizing, channels, self.padding + 1, kind=None), rule)
        previous = tensor("prev_hs", conv_window(sizing, self.hidden, 2, kind=None), rule)
        if sizing.layout != "sglang":
            return conv, previous
        return conv, previous, tensor("ssm", (1, 1, 0), sizing.dtypes.ssm())
