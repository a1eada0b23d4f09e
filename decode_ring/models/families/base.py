"""What every family's reader shares: the layer-list vocabularies, what a reader returns
(``Parsed``), and the helpers that turn layer lists into indices and refuse disagreeing ones."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Protocol

from ...printable import show
from ..attention import mla
from ..fields import Fields
from ..kinds import KindTraits
from ..state import AttentionLayers, Sizing, StateTensor

__all__ = [
    "ATTENTION_LAYERS",
    "LINEAR",
    "SSM_LAYERS",
    "Geometry",
    "Parsed",
    "Reader",
    "count",
    "declared_layers",
    "disagree",
    "heads_default",
    "layer_numbers",
    "mla_by_default",
    "one_kind",
    "other_layers",
]

# Layer-list vocabularies: checkpoints' own names and transformers 5's normalised ones
# (transformers configuration_utils.py _LEGACY_LAYER_TYPE_REMAP maps mamba -> linear_attention).
SSM_LAYERS: Final = frozenset({"mamba", "linear_attention"})
ATTENTION_LAYERS: Final = frozenset({"attention", "full_attention"})
LINEAR: Final = frozenset({"linear_attention"})


class Geometry(Protocol):
    """One kind of recurrent layer's geometry, which lays out its own state tensors."""

    traits: ClassVar[KindTraits]

    def tensors(self, cfg: Fields, sizing: Sizing) -> tuple[StateTensor, ...]: ...


@dataclass(frozen=True, slots=True)
class Parsed:
    """What a family's fields say: each kind of recurrent layer's layers with how to read its
    geometry (read only where there are such layers: with none, the servers build no mixer and
    read no mixer field), and the attention side."""

    groups: tuple[tuple[Callable[[], Geometry], tuple[int, ...]], ...]
    attention: AttentionLayers | None


Reader = Callable[[Fields, str], Parsed]
"""A family's reader: its fields and the server whose reading to follow (``"vllm"`` or
``"sglang"``)."""


def count(values: Mapping[str, Any], name: str) -> int | None:
    """``values[name]`` where it is a non-negative ``int`` (a class's rules derive from it only
    then; the reader refuses anything else, naming the field)."""
    value = values.get(name)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def heads_default(values: dict[str, Any]) -> None:
    """``num_key_value_heads`` ``null`` is ``num_attention_heads``, as most config classes'
    ``__post_init__`` make it ("for backward compatibility")."""
    if values.get("num_key_value_heads") is None:
        values["num_key_value_heads"] = values.get("num_attention_heads")


def other_layers(count: int, ssm: tuple[int, ...]) -> tuple[int, ...]:
    taken = set(ssm)
    return tuple(i for i in range(count) if i not in taken)


def one_kind(
    geometry: Callable[[], Geometry],
    layers: tuple[int, ...],
    attention: AttentionLayers | None,
) -> Parsed:
    return Parsed(((geometry, layers),), attention)


def declared_layers(cfg: Fields, field: str, length: int) -> None:
    """Refuse ``num_hidden_layers``, where the config gives it, when it is not ``length``, the
    length of layer description ``field``."""
    if "num_hidden_layers" in cfg.fields and cfg.num_layers() != length:
        raise cfg.fail(field, f"has {length} entries but num_hidden_layers is {cfg.num_layers()}")


def disagree(cfg: Fields, field: str, other: str, index: int, mine: object, theirs: object) -> None:
    raise cfg.fail(
        field,
        f"layer {index} is {show(mine)} but {other} makes it {show(theirs)}; the two layer "
        "descriptions disagree",
    )


def layer_numbers(cfg: Fields, field: str, count: int, *, base: int) -> tuple[int, ...]:
    """List ``field`` of layer numbers counted from ``base``, each naming one of ``count``
    layers, as sorted 0-based indices."""
    value = cfg.entries(field, None)
    for entry in value:
        if not isinstance(entry, int) or isinstance(entry, bool) or not 0 <= entry - base < count:
            raise cfg.fail(
                field,
                f"entry {show(entry)} is not a layer number from {base} to {count - 1 + base}",
            )
    return tuple(sorted({entry - base for entry in value}))


def mla_by_default(cfg: Fields, layers: tuple[int, ...], *, rope: int) -> AttentionLayers | None:
    """MLA at ``layers`` as ``mla`` reads it, with the defaults of the servers' config classes,
    ``kv_lora_rank`` 512 and ``qk_rope_head_dim`` ``rope``, where the config gives none."""
    ranks = {"kv_lora_rank": 512, "qk_rope_head_dim": rope}
    return mla(Fields({**ranks, **cfg.fields}, cfg.root, cfg.family, cfg.path, cfg.prefix), layers)
