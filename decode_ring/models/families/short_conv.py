"""The families whose recurrent state is short convolutions: lfm2, lfm2_moe, lfm2_vl, zaya."""

from __future__ import annotations

from typing import Final

from ...printable import show
from ...releases import SGLANG, VLLM
from ..attention import gqa
from ..classes import Built
from ..errors import NotModelledError
from ..fields import Fields, positions
from ..kinds import CcaConv, ShortConv
from .base import Parsed, count, one_kind, other_layers

__all__ = [
    "read_inkling",
    "read_lfm2",
    "read_lfm2_moe",
    "read_lfm2_vl",
    "read_zaya",
    "rules_lfm2",
    "rules_zaya",
]


_LFM2_LAYERS: Final = frozenset({"conv", "short_conv"})


def read_short_conv(cfg: Fields, server: str, dim_field: str, *, sglang_none: bool) -> Parsed:
    """The short-conv families, ``dim_field`` the field vLLM sizes the channels by: the
    ``conv`` (SGLang also ``short_conv``) entries of ``layer_types``, ``num_hidden_layers`` of
    them, others ``full_attention`` (transformers' class derives the list from
    ``full_attn_idxs`` where the file gives none, ``rules_lfm2``). ``conv_L_cache`` (the
    kernel), and the channels: vLLM ``conv_dim`` for ``lfm2``, ``hidden_size`` otherwise and in
    SGLang. vLLM models/lfm2.py:556-577, lfm2_moe.py:546-567, lfm2_vl.py:654-675 and
    layers/mamba/short_conv.py:351-357; SGLang configs/lfm2.py:59-98, lfm2_moe.py:49-85,
    lfm2_vl.py:62-103. vLLM reads the channels and the kernel even with no conv layer (its
    model-level shape function runs for every hybrid model); SGLang reads them only with one.
    ``sglang_none``: SGLang takes a missing or ``null`` ``layer_types`` as no layer."""
    count_ = cfg.num_layers()
    field = dim_field if server == "vllm" else "hidden_size"

    def geometry() -> ShortConv:
        return ShortConv(cfg.int_(field), cfg.int_("conv_L_cache"), field)

    if server == "vllm":
        # vLLM sizes the state page of every hybrid model (platforms/interface.py:1056-1060),
        # so it reads these fields even where no layer is a conv layer.
        if field not in cfg.fields:
            raise cfg.fail(
                field,
                f"missing; {VLLM} sizes the short conv by {field} for every {cfg.family} model "
                f"(vllm/model_executor/models/lfm2.py:575), which transformers' class does not "
                f"define; {SGLANG} sizes it by hidden_size (use layout sglang)",
            )
        geometry()
    if server == "sglang" and sglang_none and not cfg.has("layer_types"):
        return one_kind(geometry, (), None)
    kinds = cfg.layer_kinds("layer_types", _LFM2_LAYERS | {"full_attention"}, count_)
    layers = positions(kinds, _LFM2_LAYERS)
    return one_kind(geometry, layers, gqa(cfg, other_layers(count_, layers)))


def rules_lfm2(built: Built) -> None:
    """transformers' Lfm2Config.__post_init__ (configuration_lfm2.py:81-88), which SGLang's
    subclass keeps (configs/lfm2.py:33): no ``layer_types`` is made from ``full_attn_idxs``
    (default: every layer), those ``full_attention`` and the others ``conv``; a given list wins
    over the indices."""
    values = built.values
    cls = built.reading.cls
    if (
        cls is None
        or "full_attn_idxs" not in cls.fields
        or cls.fields["full_attn_idxs"].kind in ("undeclared",)
    ):
        return
    layers = count(values, "num_hidden_layers")
    if values.get("layer_types") is None and layers is not None:
        full = values.get("full_attn_idxs")
        full = list(range(layers)) if full is None else full
        if not isinstance(full, list):
            raise built.fail("full_attn_idxs", f"must be a list of layer numbers, got {show(full)}")
        values["full_attn_idxs"] = full
        values["layer_types"] = ["full_attention" if i in full else "conv" for i in range(layers)]


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


def read_zaya(cfg: Fields, server: str) -> Parsed:
    """``zaya`` (ZAYA1, SGLang only): the CCA attention layers hold the conv state, and they are
    the ``"a"`` entries of ``zaya_layers`` (the others are expert counts), which, when given and
    not empty, is the layer count whatever ``num_hidden_layers`` says, else the even layers of
    ``num_hidden_layers``. ``num_attention_heads``, ``num_key_value_heads``, ``head_dim``,
    ``hidden_size``, ``cca_time0`` and ``cca_time1`` as SGLang's class holds them
    (``rules_zaya``). SGLang's attention asserts that ``tp_size`` divides the query groups
    (the KV heads, ``CcaConv``): it does not replicate them (models/zaya.py:921-925).
    transformers' native schema (``layer_types`` of ``hybrid`` layers) is read as SGLang reads
    it: it does not translate it, so 40 hybrid layers are 20 CCA layers. SGLang
    configs/zaya.py:96-172, :232-313."""
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
    head_dim = cfg.int_("head_dim")

    def geometry() -> CcaConv:
        # (cca_time0 - 1) + (cca_time1 - 1), S:sglang/srt/configs/zaya.py:282: a null window is
        # a TypeError there (the class's default 2 stands only for a missing one).
        padding = cfg.int_("cca_time0") + cfg.int_("cca_time1") - 2
        return CcaConv((heads + kv_heads) * head_dim, padding, cfg.int_("hidden_size"), kv_heads)

    return one_kind(geometry, layers, gqa(cfg, layers))


def rules_zaya(built: Built) -> None:
    """SGLang's ZayaConfig.__init__ (configs/zaya.py:41-172): ``zaya_layers`` sets the layer
    count; the first non-zero of ``cca_num_q_heads`` and ``num_query_groups_list`` the heads and
    query groups; ``head_dim`` (default 128) is ``kv_channels`` only where the file gives
    ``head_dim`` null; it asserts a head size and ``num_query_groups == num_key_value_heads``."""
    values, given = built.values, built.given
    if built.reading.cls is None or built.reading.server != "sglang":
        return
    if given.get("zaya_layers") and isinstance(given["zaya_layers"], list):
        values["num_hidden_layers"] = len(given["zaya_layers"])
    for listed, name in (
        ("cca_num_q_heads", "num_attention_heads"),
        ("num_query_groups_list", "num_query_groups"),
    ):
        if isinstance(given.get(listed), list):
            values[name] = next((v for v in given[listed] if v), values.get(name))
    if values.get("head_dim") is None and values.get("kv_channels") is not None:
        values["head_dim"] = values["kv_channels"]
    if values.get("head_dim") is None:
        raise built.fail("head_dim", "missing, and no kv_channels; ZayaConfig asserts a head size")
    if values.get("kv_channels") is None:
        values["kv_channels"] = values["head_dim"]
    groups, kv_heads = values.get("num_query_groups"), values.get("num_key_value_heads")
    if groups != kv_heads:
        raise built.fail(
            "num_query_groups", f"is {show(groups)} but num_key_value_heads is {show(kv_heads)}"
        )


def read_inkling(cfg: Fields, server: str) -> Parsed:
    """``inkling_mm_model`` (Inkling): every layer attention (full, or sliding) beside short-conv
    streams, which vLLM keeps as sliding-window KV specs of their own
    (vllm/models/inkling/nvidia/sconv_swa_attn.py:185-190) beside the attention's
    (.../attention.py:183-190): several KV-cache specs per model, which the package does not
    model yet; refused as not modelled."""
    raise cfg.fail(
        "model_type",
        "Inkling holds several KV-cache specs per model (full and sliding-window attention and "
        "its short-conv streams, vllm/models/inkling/nvidia/sconv_swa_attn.py:185-190), which "
        "this package does not model yet",
        NotModelledError,
    )
