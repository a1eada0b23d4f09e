"""The kinds of recurrent layer: each module lays out one kind's state tensors with the servers'
tensor-parallel rules, and declares what the servers do with that kind whatever the family
(``KindTraits``). ``KINDS`` maps each kind's name, as ``LayerStates.kind`` spells it, to its
traits: the servers look a group's behaviour up there instead of branching on its name.

A new kind is a module here with its geometry and its traits, added to ``KINDS``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from .gated_delta_net import GatedDeltaNet
from .kda import Kda
from .linear_attention import LinearAttention
from .mamba1 import Mamba1
from .mamba2 import Mamba2
from .short_conv import CcaConv, ShortConv
from .traits import Checkpoint, KindTraits

__all__ = [
    "KINDS",
    "CcaConv",
    "Checkpoint",
    "GatedDeltaNet",
    "Kda",
    "KindTraits",
    "LinearAttention",
    "Mamba1",
    "Mamba2",
    "ShortConv",
]

KINDS: Final[Mapping[str, KindTraits]] = {
    geometry.traits.name: geometry.traits
    for geometry in (Mamba1, Mamba2, GatedDeltaNet, Kda, ShortConv, LinearAttention)
}
