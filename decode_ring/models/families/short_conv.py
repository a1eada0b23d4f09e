"""The families whose recurrent state is short convolutions: lfm2, lfm2_moe, lfm2_vl, zaya."""

from __future__ import annotations

from typing import Final

from ...printable import show
from ..attention import gqa
from ..fields import Fields, positions
from ..kinds import CcaConv, ShortConv
from .base import Parsed, disagree, layer_numbers, one_kind, other_layers

__all__ = ["read_lfm2", "read_lfm2_moe", "read_lfm2_vl", "read_zaya"]


_LFM2_LAYERS: Final = frozenset({"conv", "short_conv"})


def read_short_conv(cfg: Fields, server: str, dim_field: str, *, sglang_none: bool) -> Parsed:
    """The short-conv families, ``dim_field`` the field vLLM sizes the channels by: the
    ``conv`` (SGLang also ``short_conv``) entries of ``layer_types``, ``num_hidden_layers`` of
    them, others ``full_attention``; ``full_attn_idxs``, where given, must name the attention
    layers. ``conv_L_cache`` (the kernel), and the channels: vLLM ``conv_dim`` for ``lfm2``,
    ``hidden_size`` otherwise and in SGLang. vLLM models/lfm2.py:556-577, lfm2_moe.py:546-567,
    lfm2_vl.py:654-675 and layers/mamba/short_conv.py:351-357; SGLang configs/lfm2.py:59-98,
    lfm2_moe.py:49-85, lfm2_vl.py:62-103. vLLM reads the channels and the kernel even with no
    conv layer (its model-level shape function runs for every hybrid model); SGLang reads them
    only with one. ``sglang_none``: SGLang takes a missing or ``null`` ``layer_types`` as no
    layer."""
    count = cfg.num_layers()
    field = dim_field if server == "vllm" else "hidden_size"

    def geometry() -> ShortConv:
        return ShortConv(cfg.int_(field), cfg.int_("conv_L_cache"), field)

    if server == "vllm":
        # vLLM sizes the state page of every hybrid model (platforms/interface.py:1056-1060),
        # so it reads these fields even where no layer is a conv layer.
        geometry()
    if server == "sglang" and sglang_none and not cfg.has("layer_types"):
        return one_kind(geometry, (), None)
    kinds = cfg.layer_kinds("layer_types", _LFM2_LAYERS | {"full_attention"}, count)
    layers = positions(kinds, _LFM2_LAYERS)
    attention = other_layers(count, layers)
    if cfg.has("full_attn_idxs"):
        listed = layer_numbers(cfg, "full_attn_idxs", count, base=0)
        if listed != attention:
            index = min(set(listed) ^ set(attention))
            shown = "listed" if index in listed else "not listed"
            disagree(cfg, "full_attn_idxs", "layer_types", index, shown, kinds[index])
    return one_kind(geometry, layers, gqa(cfg, attention))


def read_lfm2(cfg: Fields, server: str) -> Parsed:
    """``lfm2``: vLLM sizes its short conv by ``conv_dim``."""
    return read_short_conv(cfg, server, "conv_dim", sglang_none=False)


def read_lfm2_moe(cfg: Fields, server: str) -> Parsed:
    """``lfm2_moe``: both servers size the short conv by ``hidden_size``; a ``layer_types``
    missing or ``null`` (transformers' Lfm2MoeConfig leaves it so) is no layer to SGLang
    (``linear_layer_ids``, configs/lfm2_moe.py:34-41) and fails vLLM."""
    return read_short_conv(cfg, server, "hidden_size", sglang_none=True)


def read_lfm2_vl(cfg: Fields, server: str) -> Parsed:
    """``lfm2_vl``: both servers size the short conv by ``hidden_size``."""
    return read_short_conv(cfg, server, "hidden_size", sglang_none=False)


_ZAYA_HEAD_DIM: Final = 128


def read_zaya(cfg: Fields, server: str) -> Parsed:
    """``zaya`` (ZAYA1, SGLang only): the CCA attention layers hold the conv state, and they are
    the ``"a"`` entries of ``zaya_layers`` (the others are expert counts), which, when given and
    not empty, is the layer count whatever ``num_hidden_layers`` says, else the even layers of
    ``num_hidden_layers``. ``num_attention_heads``, ``num_key_value_heads`` (which
    ``num_query_groups``, default 2, must equal), ``head_dim`` (default 128; ``kv_channels`` where
    it is null), ``hidden_size``, ``cca_time0`` and ``cca_time1`` (default 2). transformers'
    native schema (``layer_types`` of ``hybrid`` layers) is read as SGLang reads it: it does not
    translate it, so 40 hybrid layers are 20 CCA layers. SGLang configs/zaya.py:96-107,
    :143-169, :232-313."""
    zaya_layers = cfg.fields.get("zaya_layers")
    if zaya_layers:
        value = cfg.entries("zaya_layers", None)
        for index, entry in enumerate(value):
            if entry != "a" and (not isinstance(entry, int) or isinstance(entry, bool)):
                raise cfg.fail(
                    "zaya_layers",
                    f"entry {index} is {show(entry)}; expected 'a' or an expert count",
                )
        layers = tuple(i for i, entry in enumerate(value) if entry == "a")
    else:
        layers = tuple(range(0, cfg.num_layers(), 2))
    heads, kv_heads = cfg.int_("num_attention_heads"), cfg.int_("num_key_value_heads")
    groups = cfg.opt_int("num_query_groups") or 2
    if groups != kv_heads:
        # SGLang's ZayaConfig asserts it (configs/zaya.py:162-164).
        raise cfg.fail(
            "num_query_groups", f"is {show(groups)} but num_key_value_heads is {show(kv_heads)}"
        )
    # ZayaConfig's head_dim defaults to 128; kv_channels stands in for it only where the config
    # gives head_dim as null (configs/zaya.py:54, :163-169).
    if "head_dim" not in cfg.fields:
        fields = {**cfg.fields, "head_dim": _ZAYA_HEAD_DIM}
        cfg = Fields(fields, cfg.root, cfg.family, cfg.path, cfg.prefix)
    head_dim_field = "head_dim" if cfg.has("head_dim") else "kv_channels"
    head_dim = cfg.int_(head_dim_field)

    def geometry() -> CcaConv:
        padding = sum(cfg.opt_int(field) or 2 for field in ("cca_time0", "cca_time1")) - 2
        return CcaConv((heads + kv_heads) * head_dim, padding, cfg.int_("hidden_size"))

    return one_kind(geometry, layers, gqa(cfg, layers, head_dim_field=head_dim_field))
