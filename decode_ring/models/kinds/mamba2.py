"""Mamba-2 state: a conv state over ``d_inner + 2 * groups * d_state`` channels and a
``(heads, head_dim, d_state)`` SSM state.

vLLM ``mamba2_state_shape`` (mamba_utils.py:186-212): conv ``(K - 1 + num_spec, conv_dim /
tp)``, SSM ``(heads / tp, head_dim, d_state)``; SGLang ``Mamba2StateShape.create``
(sglang/srt/configs/mamba_utils.py:194-243): conv ``(conv_dim / tp, K - 1)``. Both replicate a
group count that ``tp`` does not divide to ``tp`` groups (``extra_groups_for_head_shards``, vLLM
mamba_utils.py:261-270, SGLang :29-38), which the mixers allow only for one group (vLLM
mamba_mixer2.py:316-323, SGLang layers/attention/mamba/mamba.py:249).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...printable import show
from ..errors import TensorParallelSplitError
from ..fields import Fields, divide
from ..state import Sizing, StateTensor, conv_window, tensor
from .traits import Checkpoint, KindTraits


@dataclass(frozen=True, slots=True)
class Mamba2:
    """One Mamba-2 layer's geometry; ``heads_field`` and ``groups_field`` name the fields a
    split refusal names."""

    traits: ClassVar[KindTraits] = KindTraits(
        "mamba2",
        one_conv_one_state=True,
        vllm_checkpoint=Checkpoint.ALWAYS,
        vllm_replayssm_ring=True,
    )
    d_inner: int
    n_groups: int
    heads: int
    head_dim: int
    d_state: int
    kernel: int
    heads_field: str
    groups_field: str

    def tensors(self, cfg: Fields, sizing: Sizing) -> tuple[StateTensor, ...]:
        """The conv and SSM state of one layer, one sequence, one rank."""
        tp = sizing.tp
        heads = divide(cfg, self.heads_field, self.heads, tp)
        groups = self.n_groups
        if groups % tp and groups != 1:
            raise cfg.fail(
                self.groups_field,
                f"tp_size {show(tp)} does not divide {show(groups)} groups, and only 1 group is "
                "replicated",
                TensorParallelSplitError,
            )
        groups += 0 if groups % tp == 0 else tp - groups
        # Divides: d_inner is heads x head_dim and the heads divided; groups is a multiple of
        # tp, divided or replicated.
        channels = (self.d_inner + 2 * groups * self.d_state) // tp
        conv = conv_window(sizing, channels, self.kernel, kind=self.traits.name)
        ssm = (heads, self.head_dim, self.d_state)
        return tensor("conv", conv, sizing.dtypes.conv()), tensor("ssm", ssm, sizing.dtypes.ssm())
