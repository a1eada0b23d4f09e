"""The families with lightning (linear) attention layers: minicpm_sala."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ...printable import show
from ...releases import SGLANG
from ..attention import gqa
from ..classes import Built
from ..fields import Fields, positions
from ..kinds import LinearAttention
from .base import Parsed, count, one_kind, other_layers

__all__ = ["read_minicpm_sala", "rules_minicpm_sala"]


# SGLang's mixer names and their aliases (configs/minicpm.py:6-15).
_MINICPM_MIXERS: Final[Mapping[str, str]] = {
    "minicpm4": "minicpm4",
    "minicpm": "minicpm4",
    "standard": "minicpm4",
    "attention": "minicpm4",
    "attn": "minicpm4",
    "lightning": "lightning-attn",
    "lightning_attn": "lightning-attn",
    "lightning-attn": "lightning-attn",
}


def read_minicpm_sala(cfg: Fields, server: str) -> Parsed:
    """``minicpm_sala`` (SGLang only; lightning attention and MiniCPM4 attention): the
    ``lightning-attn`` entries (or aliases) of ``mixer_types``, which SGLang repeats to
    ``num_hidden_layers`` entries (it refuses a longer list; none or an empty one is all
    attention). Heads ``lightning_nkv`` (else ``num_key_value_heads``), which
    ``lightning_nh`` (else ``num_attention_heads``) must equal where a layer is lightning, of
    ``lightning_head_dim`` (else ``head_dim``, else ``hidden_size // num_attention_heads``).
    S:sglang/srt/configs/minicpm.py:78-128, :148-192."""
    count = cfg.num_layers()
    kinds: tuple[str, ...] = ("minicpm4",) * count
    if cfg.fields.get("mixer_types"):
        value = cfg.layer_kinds("mixer_types", frozenset(_MINICPM_MIXERS), None)
        if len(value) > count:
            raise cfg.fail(
                "mixer_types", f"has {len(value)} entries, more than num_hidden_layers {count}"
            )
        mixers = [_MINICPM_MIXERS[entry] for entry in value]
        kinds = tuple((mixers * -(-count // len(mixers)))[:count])
    layers = positions(kinds, frozenset({"lightning-attn"}))

    def geometry() -> LinearAttention:
        heads_field = "lightning_nkv" if cfg.given.get("lightning_nkv") else "num_key_value_heads"
        heads = cfg.int_(heads_field)
        queries = cfg.opt_int("lightning_nh") or cfg.int_("num_attention_heads")
        if queries != heads:
            raise cfg.fail(
                "lightning_nh",
                f"{show(queries)} query heads but {show(heads)} KV heads ({heads_field}); "
                f"{SGLANG}'s lightning attention requires them equal (configs/minicpm.py:110-120)",
            )
        head_dim = (
            cfg.opt_int("lightning_head_dim")
            or cfg.opt_int("head_dim")
            or cfg.int_("hidden_size") // cfg.int_("num_attention_heads")
        )
        return LinearAttention(heads, head_dim, heads_field)

    return one_kind(geometry, layers, gqa(cfg, other_layers(count, layers)))


def rules_minicpm_sala(built: Built) -> None:
    """SGLang's MiniCPMHybridConfig.__init__ (S:sglang/srt/configs/minicpm.py:29-123):
    ``head_dim`` ``hidden_size // num_attention_heads`` where none is given; ``mixer_types``
    (none: ``minicpm4``) through its aliases, repeated to ``num_hidden_layers``; the lightning
    heads and head dim default to the attention's; equal query and KV heads where a layer is
    lightning."""
    values = built.values
    if built.reading.cls is None:
        return
    heads, hidden = count(values, "num_attention_heads"), count(values, "hidden_size")
    layers = count(values, "num_hidden_layers")
    if values.get("head_dim") is None and heads and hidden is not None:
        values["head_dim"] = hidden // heads
    mixers = values.get("mixer_types") or ["minicpm4"]
    if (
        isinstance(mixers, list)
        and layers is not None
        and all(isinstance(m, str) and m in _MINICPM_MIXERS for m in mixers)
    ):
        if values.get("mixer_types") and len(mixers) > layers:
            # refused by read_minicpm_sala, as the class refuses it; the class checks the length
            # of a given list only (S:sglang/srt/configs/minicpm.py:93-96)
            return
        named = [_MINICPM_MIXERS[m] for m in mixers]
        values["mixer_types"] = (named * -(-layers // len(named)))[:layers]
    for name, default in (
        ("lightning_nh", "num_attention_heads"),
        ("lightning_nkv", "num_key_value_heads"),
        ("lightning_head_dim", "head_dim"),
    ):
        if values.get(name) is None:
            values[name] = values.get(default)
