"""The registry of families: for each ``model_type``, how its fields give the geometry of each
kind of recurrent layer, which layers those are, its attention side, which servers serve it at
which version, and its dtype hooks. A new family is one reader and one ``Family`` entry.

Citations are paths inside the ``vllm-0.33.0`` and ``sglang-0.5.23`` wheels.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar, Final, Protocol

from .attention import gqa, mla
from .dtypes import NEMOTRON_H_HOOK, NO_HOOKS, QWEN3_5_HOOK, DtypeHooks
from .fields import Fields, positions, show
from .gated_delta_net import GatedDeltaNet
from .kda import Kda
from .linear_attention import LinearAttention
from .mamba1 import Mamba1
from .mamba2 import Mamba2
from .short_conv import CcaConv, ShortConv
from .state import AttentionLayers, Sizing, StateTensor

__all__ = ["FAMILIES", "REGISTRY", "REMOVED", "SGLANG", "VLLM", "Family", "Geometry", "Parsed"]

VLLM: Final = "vLLM 0.33.0"
SGLANG: Final = "SGLang 0.5.23"

# Layer-list vocabularies: checkpoints' own names and transformers 5's normalised ones
# (transformers configuration_utils.py _LEGACY_LAYER_TYPE_REMAP maps mamba -> linear_attention).
_SSM_LAYERS: Final = frozenset({"mamba", "linear_attention"})
_ATTENTION_LAYERS: Final = frozenset({"attention", "full_attention"})


class Geometry(Protocol):
    """One kind of recurrent layer's geometry, which lays out its own state tensors."""

    kind: ClassVar[str]

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


@dataclass(frozen=True, slots=True)
class Family:
    """One family: its reader; the ``model_type`` values it reads (in the config itself, or in
    the ``text_config`` / ``llm_config`` of a wrapper; where ``wrapper``, they name the wrapper,
    whose text config holds the fields, or, where ``flat``, the wrapper itself when it has no
    text config); the servers that serve it (``None``: that server lacks it); and its dtype
    hooks."""

    read: Reader
    model_types: tuple[str, ...]
    vllm: str | None = VLLM
    sglang: str | None = SGLANG
    hooks: DtypeHooks = NO_HOOKS
    wrapper: bool = False
    flat: bool = False


def _others(count: int, ssm: tuple[int, ...]) -> tuple[int, ...]:
    taken = set(ssm)
    return tuple(i for i in range(count) if i not in taken)


def _one(
    geometry: Callable[[], Geometry],
    layers: tuple[int, ...],
    attention: AttentionLayers | None,
) -> Parsed:
    return Parsed(((geometry, layers),), attention)


def _declared_layers(cfg: Fields, field: str, length: int) -> None:
    """Refuse ``num_hidden_layers``, where the config gives it, when it is not ``length``, the
    length of layer description ``field``."""
    if "num_hidden_layers" in cfg.fields and cfg.num_layers() != length:
        raise cfg.fail(field, f"has {length} entries but num_hidden_layers is {cfg.num_layers()}")


def _disagree(
    cfg: Fields, field: str, other: str, index: int, mine: object, theirs: object
) -> None:
    raise cfg.fail(
        field,
        f"layer {index} is {show(mine)} but {other} makes it {show(theirs)}; the two layer "
        "descriptions disagree",
    )


def _read_mamba(cfg: Fields, server: str) -> Parsed:
    """``mamba`` and ``falcon_mamba`` (Mamba-1): all ``num_hidden_layers``;
    ``intermediate_size`` (else ``expand * hidden_size``, transformers' default for it: both
    servers read ``intermediate_size``, and transformers 5 keeps a given one, even falcon-mamba-7b's
    8192 beside ``expand`` 16), ``state_size``, ``conv_kernel``. vLLM models/mamba.py:234-247,
    SGLang configs/mamba.py:27-80."""

    def geometry() -> Mamba1:
        if "intermediate_size" in cfg.fields:
            d_inner, field, terms = cfg.int_("intermediate_size"), "intermediate_size", ""
        else:
            d_inner = cfg.int_("expand") * cfg.int_("hidden_size")
            field, terms = "expand", "expand * hidden_size"
        return Mamba1(d_inner, cfg.int_("state_size"), cfg.int_("conv_kernel"), field, terms)

    return _one(geometry, tuple(range(cfg.num_layers())), None)


def _read_mamba2(cfg: Fields, server: str) -> Parsed:
    """``mamba2``: all ``num_hidden_layers``; ``expand * hidden_size`` (must equal ``num_heads *
    head_dim``), ``num_heads``, ``head_dim``, ``n_groups``, ``state_size``, ``conv_kernel``.
    SGLang sizes it by ``intermediate_size``, which must then be present. vLLM
    models/mamba2.py:184-213, SGLang configs/mamba2.py:41-57."""

    def geometry() -> Mamba2:
        heads, head_dim = cfg.int_("num_heads"), cfg.int_("head_dim")
        d_inner = cfg.int_("expand") * cfg.int_("hidden_size")
        if d_inner != heads * head_dim:
            # transformers Mamba2Config.validate_architecture refuses the config.
            raise cfg.fail(
                "num_heads",
                f"num_heads*head_dim {show(heads * head_dim)} != {show(d_inner)} "
                "(expand * hidden_size)",
            )
        given = cfg.opt_int("intermediate_size")
        if given is not None and given != d_inner:
            # vLLM's mixer would use it (models/mamba2.py:61-63) while its cache uses
            # expand*hidden.
            raise cfg.fail(
                "intermediate_size", f"is {show(given)} but expand*hidden_size is {show(d_inner)}"
            )
        if server == "sglang" and given is None:
            raise cfg.fail(
                "intermediate_size",
                "missing; SGLang 0.5.23 sizes mamba2 by config.intermediate_size "
                "(configs/mamba2.py:46-48), which transformers' Mamba2Config does not define",
            )
        return Mamba2(
            d_inner,
            cfg.int_("n_groups"),
            heads,
            head_dim,
            cfg.int_("state_size"),
            cfg.int_("conv_kernel"),
            "num_heads",
            "n_groups",
        )

    return _one(geometry, tuple(range(cfg.num_layers())), None)


def _read_jamba(cfg: Fields, server: str) -> Parsed:
    """``jamba`` (Mamba-1 layers): ``i`` with ``i % attn_layer_period != attn_layer_offset``;
    ``mamba_expand * hidden_size``, ``mamba_d_state``, ``mamba_d_conv``. vLLM
    models/jamba.py:470-483 and :293-322 (``layers_block_type``, which transformers'
    JambaConfig derives from the period and offset)."""
    period = cfg.int_("attn_layer_period")
    offset = cfg.int_("attn_layer_offset", minimum=0)
    if offset >= period:
        # JambaConfig.validate_architecture refuses it.
        raise cfg.fail(
            "attn_layer_offset", f"{show(offset)} is not below attn_layer_period {show(period)}"
        )

    def geometry() -> Mamba1:
        d_inner = cfg.int_("mamba_expand") * cfg.int_("hidden_size")
        terms = "mamba_expand * hidden_size"
        return Mamba1(
            d_inner, cfg.int_("mamba_d_state"), cfg.int_("mamba_d_conv"), "mamba_expand", terms
        )

    count = cfg.num_layers()
    layers = tuple(i for i in range(count) if i % period != offset)
    return _one(geometry, layers, gqa(cfg, _others(count, layers)))


def _read_nemotron_h(cfg: Fields, server: str) -> Parsed:
    """``nemotron_h``: the ``mamba``/``linear_attention`` entries of ``layers_block_type``
    (others: attention, mlp, moe), else the ``M`` of ``hybrid_override_pattern`` (others:
    ``*-E``); both, when given, must agree, and match ``num_hidden_layers`` where it is given.
    ``mamba_num_heads``, ``mamba_head_dim``, ``n_groups`` (or ``mamba_n_groups``),
    ``ssm_state_size``, ``conv_kernel`` (or ``mamba_d_conv``). SGLang, as its own config class,
    takes the list in checkpoint names only and reads ``n_groups`` only. vLLM
    models/nemotron_h.py:780-811; SGLang configs/nemotron_h.py:425-439."""

    def geometry() -> Mamba2:
        heads, head_dim = cfg.int_("mamba_num_heads"), cfg.int_("mamba_head_dim")
        if server == "sglang" and "n_groups" not in cfg.fields:
            # SGLang's NemotronHConfig keeps mamba_n_groups apart and reads self.n_groups (:430).
            raise cfg.fail("n_groups", "missing; SGLang 0.5.23 reads n_groups, not mamba_n_groups")
        return Mamba2(
            heads * head_dim,
            cfg.either_int("n_groups", "mamba_n_groups"),
            heads,
            head_dim,
            cfg.int_("ssm_state_size"),
            cfg.either_int("conv_kernel", "mamba_d_conv"),
            "mamba_num_heads",
            "n_groups",
        )

    kinds = _nemotron_kinds(cfg, server)
    layers = positions(kinds, "M")
    return _one(geometry, layers, gqa(cfg, positions(kinds, "*")))


_NEMOTRON_PATTERN: Final[Mapping[str, str]] = {
    "mamba": "M",
    "linear_attention": "M",
    "attention": "*",
    "full_attention": "*",
    "mlp": "-",
    "moe": "E",
}


def _nemotron_kinds(cfg: Fields, server: str) -> str:
    """Each layer as its ``hybrid_override_pattern`` character (``M * - E``), from the list or
    the pattern. The list wins in transformers 5 and SGLang (configs/nemotron_h.py:196-206);
    vLLM reads the pattern transformers derives from it (models/nemotron_h.py:597)."""
    listed: str | None = None
    if cfg.has("layers_block_type"):
        if server == "sglang":
            # SGLang's NemotronHConfig validates the checkpoint vocabulary only (:167-192), so it
            # refuses a list transformers 5 wrote.
            note = " (SGLang 0.5.23 refuses transformers 5's linear_attention/full_attention)"
            vocabulary = frozenset({"mamba", "attention", "mlp", "moe"})
        else:
            note, vocabulary = "", frozenset(_NEMOTRON_PATTERN)
        kinds = cfg.layer_kinds("layers_block_type", vocabulary, None, note)
        listed = "".join(_NEMOTRON_PATTERN[kind] for kind in kinds)
        _declared_layers(cfg, "layers_block_type", len(listed))
    if not cfg.has("hybrid_override_pattern"):
        if listed is None:
            raise cfg.fail("hybrid_override_pattern", "missing (and no layers_block_type)")
        return listed
    pattern: str = cfg.entries("hybrid_override_pattern", None, pattern=True)
    for index, char in enumerate(pattern):
        if char not in "M*-E":
            raise cfg.fail(
                "hybrid_override_pattern", f"character {index} is {show(char)}; expected M * - E"
            )
    _declared_layers(cfg, "hybrid_override_pattern", len(pattern))
    if listed is not None and listed != pattern:
        index = next(
            (i for i, pair in enumerate(zip(listed, pattern, strict=False)) if pair[0] != pair[1]),
            min(len(listed), len(pattern)),
        )
        _disagree(
            cfg,
            "layers_block_type",
            "hybrid_override_pattern",
            index,
            cfg.fields["layers_block_type"][index] if index < len(listed) else None,
            pattern[index] if index < len(pattern) else None,
        )
    return pattern


def _read_falcon_h1(cfg: Fields, server: str) -> Parsed:
    """``falcon_h1`` (attention and SSM side by side in every layer): all
    ``num_hidden_layers``; ``mamba_d_ssm`` (``null``: ``mamba_expand * hidden_size``),
    ``mamba_n_heads``, ``mamba_d_head`` (or ``"auto"``), ``mamba_n_groups``, ``mamba_d_state``,
    ``mamba_d_conv``. vLLM models/falcon_h1.py:538-572 and :112-116; SGLang
    configs/falcon_h1.py:211-223."""

    def geometry() -> Mamba2:
        if "mamba_d_ssm" not in cfg.fields:
            # transformers would default it to 1024, whatever the model; refuse to guess.
            raise cfg.fail("mamba_d_ssm", "missing")
        if cfg.fields["mamba_d_ssm"] is None:
            return _mamba2_heads(cfg, cfg.int_("mamba_expand") * cfg.int_("hidden_size"))
        return _mamba2_heads(cfg, cfg.int_("mamba_d_ssm"))

    layers = tuple(range(cfg.num_layers()))
    return _one(geometry, layers, gqa(cfg, layers))


def _read_granitemoehybrid(cfg: Fields, server: str) -> Parsed:
    """``granitemoehybrid`` (Granite 4.0 H): the ``mamba``/``linear_attention`` entries of
    ``layer_types``, which has ``num_hidden_layers`` entries (others: attention);
    ``mamba_expand * hidden_size``, ``mamba_n_heads``, ``mamba_d_head`` (or ``"auto"``),
    ``mamba_n_groups``, ``mamba_d_state``, ``mamba_d_conv``. vLLM
    models/granitemoehybrid.py:617-646 and :321-350; SGLang configs/granitemoehybrid.py:29-32,
    239-251, 286-310."""
    count = cfg.num_layers()
    layers = cfg.layer_list("layer_types", _SSM_LAYERS, _ATTENTION_LAYERS, count)
    return _one(
        lambda: _mamba2_heads(cfg, cfg.int_("mamba_expand") * cfg.int_("hidden_size")),
        layers,
        gqa(cfg, _others(count, layers)),
    )


def _mamba2_heads(cfg: Fields, d_inner: int) -> Mamba2:
    """Falcon-H1 and Granite 4.0 H: ``mamba_n_heads`` heads of ``mamba_d_head`` over ``d_inner``,
    as their transformers configs' ``validate_architecture`` requires."""
    heads = cfg.int_("mamba_n_heads")
    head_dim = cfg.int_or_auto("mamba_d_head", lambda: d_inner // heads)
    if heads * head_dim != d_inner:
        raise cfg.fail(
            "mamba_d_head",
            f"{show(heads)} heads of {show(head_dim)} do not make {show(d_inner)}",
        )
    return Mamba2(
        d_inner,
        cfg.int_("mamba_n_groups"),
        heads,
        head_dim,
        cfg.int_("mamba_d_state"),
        cfg.int_("mamba_d_conv"),
        "mamba_n_heads",
        "mamba_n_groups",
    )


def _read_zamba2(cfg: Fields, server: str) -> Parsed:
    """``zamba2``: every entry of ``layers_block_type`` (a ``hybrid`` layer holds a Mamba block
    and the shared attention), ``num_hidden_layers`` of them where that is given;
    ``mamba_expand * hidden_size``, ``n_mamba_heads`` (head dim ``d_inner / n_mamba_heads``;
    ``mamba_headdim``, if given, must agree), ``mamba_ngroups``, ``mamba_d_state``,
    ``mamba_d_conv``. vLLM models/zamba2.py:869-897, mixer :530-545, layers :751-780."""

    def geometry() -> Mamba2:
        d_inner = cfg.int_("mamba_expand") * cfg.int_("hidden_size")
        heads = cfg.int_("n_mamba_heads")
        if d_inner % heads:
            raise cfg.fail(
                "n_mamba_heads", f"{show(heads)} heads do not divide mamba_expand*hidden_size"
            )
        given = cfg.opt_int("mamba_headdim")
        if given is not None and given != d_inner // heads:
            # transformers' Zamba2Config.__post_init__ overwrites it with d_inner // n_mamba_heads.
            raise cfg.fail(
                "mamba_headdim",
                f"is {show(given)} but d_inner/n_mamba_heads is {show(d_inner // heads)}",
            )
        return Mamba2(
            d_inner,
            cfg.int_("mamba_ngroups"),
            heads,
            d_inner // heads,
            cfg.int_("mamba_d_state"),
            cfg.int_("mamba_d_conv"),
            "n_mamba_heads",
            "mamba_ngroups",
        )

    kinds = cfg.layer_kinds("layers_block_type", _SSM_LAYERS | {"hybrid"}, None)
    _declared_layers(cfg, "layers_block_type", len(kinds))
    hybrid = positions(kinds, frozenset({"hybrid"}))
    return _one(geometry, tuple(range(len(kinds))), _zamba2_attention(cfg, hybrid))


def _zamba2_attention(cfg: Fields, layers: tuple[int, ...]) -> AttentionLayers | None:
    # The shared attention reads a concatenation of two hidden states: transformers'
    # Zamba2Config makes attention_head_dim 2 * hidden_size // num_attention_heads, and vLLM's
    # Zamba2ModelArchConfigConvertor reads it (model_arch_config_convertor.py:502-504).
    if layers and not cfg.has("attention_head_dim"):
        head_dim = 2 * cfg.int_("hidden_size") // cfg.int_("num_attention_heads")
        cfg = Fields({**cfg.fields, "attention_head_dim": head_dim}, cfg.root, cfg.family, cfg.path)
    return gqa(cfg, layers, head_dim_field="attention_head_dim")


def _read_gated_delta_net(cfg: Fields, server: str) -> Parsed:
    """``qwen3_next``, ``qwen3_5``, ``qwen3_5_moe``, ``olmo_hybrid`` (gated delta net): the
    ``linear_attention`` entries of ``layer_types`` (``num_hidden_layers`` of them), else ``i``
    with ``(i + 1) % full_attention_interval != 0``; the two, when both are given, must agree.
    SGLang reads the interval alone. ``linear_num_key_heads``, ``linear_num_value_heads``,
    ``linear_key_head_dim``, ``linear_value_head_dim``, ``linear_conv_kernel_dim``. vLLM
    models/qwen3_next.py:893-913, qwen3_5.py:388-418 and :609-639, olmo_hybrid.py:442-472 (the
    layers of ``config.layer_types``); SGLang configs/qwen3_next.py:259-313, inherited by
    configs/qwen3_5.py:15."""

    def geometry() -> GatedDeltaNet:
        return GatedDeltaNet(
            cfg.int_("linear_num_key_heads"),
            cfg.int_("linear_num_value_heads"),
            cfg.int_("linear_key_head_dim"),
            cfg.int_("linear_value_head_dim"),
            cfg.int_("linear_conv_kernel_dim"),
        )

    count = cfg.num_layers()
    listed = None
    if cfg.has("layer_types"):
        listed = cfg.layer_list("layer_types", _SSM_LAYERS, _ATTENTION_LAYERS, count)
    if cfg.has("full_attention_interval"):
        interval = cfg.int_("full_attention_interval")
        derived = tuple(i for i in range(count) if (i + 1) % interval)
        if listed is not None and listed != derived:
            index = min(set(listed) ^ set(derived))
            _disagree(
                cfg,
                "layer_types",
                "full_attention_interval",
                index,
                cfg.fields["layer_types"][index],
                "linear_attention" if index in derived else "full_attention",
            )
        listed = derived
    elif server == "sglang" or listed is None:
        why = (
            "SGLang 0.5.23 counts linear layers by it alone (configs/qwen3_next.py:259-268)"
            if server == "sglang"
            else "needed when there is no layer_types"
        )
        raise cfg.fail("full_attention_interval", f"missing; {why}")
    return _one(geometry, listed, gqa(cfg, _others(count, listed)))


def _layer_numbers(cfg: Fields, field: str, count: int, *, base: int) -> tuple[int, ...]:
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


def _read_kimi_linear(cfg: Fields, server: str) -> Parsed:
    """``kimi_linear`` (KDA; Kimi-K3 wraps it as its ``text_config``): layer ``i`` is KDA when
    ``i + 1`` is in ``linear_attn_config.kda_layers`` and attention otherwise (MLA where the
    config gives ``kv_lora_rank``); ``full_attn_layers`` must name exactly the others.
    ``linear_attn_config.{num_heads, head_dim, short_conv_kernel_size}``. vLLM
    vllm/models/kimi_k3/nvidia/model.py:1494-1523 and transformers_utils/configs/kimi_linear.py:
    157-161; SGLang configs/kimi_linear.py:157-182."""
    count = cfg.num_layers()
    linear = cfg.nested("linear_attn_config")
    layers = _layer_numbers(linear, "kda_layers", count, base=1)
    full = _layer_numbers(linear, "full_attn_layers", count, base=1)
    others = _others(count, layers)
    if full != others:
        index = min(set(full) ^ set(others))
        _disagree(
            linear,
            "full_attn_layers",
            "kda_layers",
            index,
            "full attention" if index in full else "not listed",
            "KDA" if index in layers else "attention",
        )

    def geometry() -> Kda:
        return Kda(
            linear.int_("num_heads"),
            linear.int_("head_dim"),
            linear.int_("short_conv_kernel_size"),
            "linear_attn_config.num_heads",
        )

    attention = mla(cfg, others) if cfg.has("kv_lora_rank") else gqa(cfg, others)
    return _one(geometry, layers, attention)


_LFM2_LAYERS: Final = frozenset({"conv", "short_conv"})


def _read_short_conv(cfg: Fields, server: str, dim_field: str, *, sglang_none: bool) -> Parsed:
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
        return _one(geometry, (), None)
    kinds = cfg.layer_kinds("layer_types", _LFM2_LAYERS | {"full_attention"}, count)
    layers = positions(kinds, _LFM2_LAYERS)
    attention = _others(count, layers)
    if cfg.has("full_attn_idxs"):
        listed = _layer_numbers(cfg, "full_attn_idxs", count, base=0)
        if listed != attention:
            index = min(set(listed) ^ set(attention))
            shown = "listed" if index in listed else "not listed"
            _disagree(cfg, "full_attn_idxs", "layer_types", index, shown, kinds[index])
    return _one(geometry, layers, gqa(cfg, attention))


def _read_lfm2(cfg: Fields, server: str) -> Parsed:
    """``lfm2``: vLLM sizes its short conv by ``conv_dim``."""
    return _read_short_conv(cfg, server, "conv_dim", sglang_none=False)


def _read_lfm2_moe(cfg: Fields, server: str) -> Parsed:
    """``lfm2_moe``: both servers size the short conv by ``hidden_size``; a ``layer_types``
    missing or ``null`` (transformers' Lfm2MoeConfig leaves it so) is no layer to SGLang
    (``linear_layer_ids``, configs/lfm2_moe.py:34-41) and fails vLLM."""
    return _read_short_conv(cfg, server, "hidden_size", sglang_none=True)


def _read_lfm2_vl(cfg: Fields, server: str) -> Parsed:
    """``lfm2_vl``: both servers size the short conv by ``hidden_size``."""
    return _read_short_conv(cfg, server, "hidden_size", sglang_none=False)


def _read_zaya(cfg: Fields, server: str) -> Parsed:
    """``zaya`` (ZAYA1, SGLang only): the CCA attention layers hold the conv state, and they are
    the ``"a"`` entries of ``zaya_layers`` (the others are expert counts), which, when given and
    not empty, is the layer count whatever ``num_hidden_layers`` says, else the even layers of
    ``num_hidden_layers``. ``num_attention_heads``, ``num_key_value_heads`` (which
    ``num_query_groups``, default 2, must equal), ``head_dim`` (else ``kv_channels``),
    ``hidden_size``, ``cca_time0`` and ``cca_time1`` (default 2). transformers' native schema
    (``layer_types`` of ``hybrid`` layers) is read as SGLang reads it: it does not translate it,
    so 40 hybrid layers are 20 CCA layers. SGLang configs/zaya.py:96-107, :143-162, :232-313."""
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
    head_dim_field = "head_dim" if cfg.has("head_dim") else "kv_channels"
    head_dim = cfg.int_(head_dim_field)

    def geometry() -> CcaConv:
        padding = sum(cfg.opt_int(field) or 2 for field in ("cca_time0", "cca_time1")) - 2
        return CcaConv((heads + kv_heads) * head_dim, padding, cfg.int_("hidden_size"))

    return _one(geometry, layers, gqa(cfg, layers, head_dim_field=head_dim_field))


_JET_LAYERS: Final = frozenset({"jet"})
_JET_ATTENTION: Final = frozenset({"attn", "swa"})


def _read_jet_nemotron(cfg: Fields, server: str) -> Parsed:
    """``jet_nemotron`` (SGLang only; ``jet_vlm`` wraps it as its ``text_config``): the ``jet``
    entries of ``layer_types``, ``num_hidden_layers`` of them (others ``attn``, ``swa``);
    ``efficient_attention_config.jet.{num_heads, head_dim, expand_v, conv_size}``, a gated delta
    net of ``num_heads`` key and value heads, key dim ``head_dim`` and value dim ``int(head_dim *
    expand_v)``. SGLang configs/jet_nemotron.py:41-80, jet_vlm.py:10-52."""
    count = cfg.num_layers()
    kinds = cfg.layer_kinds("layer_types", _JET_LAYERS | _JET_ATTENTION, count)

    def geometry() -> GatedDeltaNet:
        jet = cfg.nested("efficient_attention_config", "jet")
        heads, head_dim = jet.int_("num_heads"), jet.int_("head_dim")
        field = "efficient_attention_config.jet.num_heads"
        v_dim = int(head_dim * jet.number("expand_v"))
        return GatedDeltaNet(heads, heads, head_dim, v_dim, jet.int_("conv_size"), field, field)

    layers = positions(kinds, _JET_LAYERS)
    return _one(geometry, layers, gqa(cfg, positions(kinds, _JET_ATTENTION)))


def _read_bailing_hybrid(cfg: Fields, server: str) -> Parsed:
    """``bailing_hybrid``: KDA layers (BailingMoeV3, Ling 3) where the config gives
    ``short_conv_kernel_size`` (SGLang's ``use_kda``; vLLM: the ``BailingMoeV3ForCausalLM``
    architecture), else lightning linear-attention layers (BailingMoeV2.5, Ling/Ring 2.5); MLA
    attention in the others. Layers by ``layer_group_size`` ``g``: SGLang makes layer ``i``
    linear when ``(i + 1) % g != 0`` (or, for a list, where its entry is 1); vLLM the same for
    lightning, and for KDA not in the tail past the last whole group. Heads
    ``num_attention_heads`` of ``head_dim`` (else ``hidden_size // num_attention_heads``).
    vLLM's KDA layer refuses a config whose ``no_kda_lora`` is not true (:686-687).
    vLLM models/bailing_moe_v3.py:131-157, :1477-1489, bailing_moe_linear.py:68-72, :768-795;
    SGLang configs/bailing_hybrid.py:80-236."""
    count = cfg.num_layers()
    architectures = cfg.fields.get("architectures")
    if server == "vllm" and isinstance(architectures, list) and architectures:
        kda = architectures[0] == "BailingMoeV3ForCausalLM"
    else:
        kda = cfg.has("short_conv_kernel_size")
    if server == "sglang" and isinstance(cfg.fields.get("layer_group_size"), list):
        kinds = cfg.entries("layer_group_size", count)
        layers = tuple(i for i, entry in enumerate(kinds) if entry == 1)
    else:
        group = cfg.int_("layer_group_size")
        layers = tuple(i for i in range(count) if (i + 1) % group)
        if server == "vllm" and kda:
            layers = tuple(i for i in layers if i < count // group * group)
    heads = cfg.int_("num_attention_heads")
    head_dim = cfg.opt_int("head_dim") or cfg.int_("hidden_size") // heads

    def geometry() -> Geometry:
        if kda:
            if server == "vllm" and not cfg.fields.get("no_kda_lora"):
                # Its KDA layer takes getattr(config, "no_kda_lora", False) as Python truth.
                given = cfg.fields.get("no_kda_lora")
                shown = f"is {show(given)}" if "no_kda_lora" in cfg.fields else "missing"
                raise cfg.fail(
                    "no_kda_lora",
                    f"{shown}; {VLLM}'s BailingMoeV3 KDA layer requires no_kda_lora true "
                    "(vllm/model_executor/models/bailing_moe_v3.py:686-687)",
                )
            kernel = cfg.int_("short_conv_kernel_size")
            return Kda(heads, head_dim, kernel, "num_attention_heads")
        return LinearAttention(heads, head_dim, "num_attention_heads")

    others = _others(count, layers)
    attention = mla(cfg, others) if cfg.has("kv_lora_rank") else gqa(cfg, others)
    return _one(geometry, layers, attention)


def _mla_by_default(cfg: Fields, layers: tuple[int, ...], *, rope: int) -> AttentionLayers | None:
    """MLA at ``layers`` as ``mla`` reads it, with the defaults of the servers' config classes,
    ``kv_lora_rank`` 512 and ``qk_rope_head_dim`` ``rope``, where the config gives none."""
    ranks = {"kv_lora_rank": 512, "qk_rope_head_dim": rope}
    return mla(Fields({**ranks, **cfg.fields}, cfg.root, cfg.family, cfg.path, cfg.prefix), layers)


_LINEAR: Final = frozenset({"linear_attention"})
_GLM5_ATTENTION: Final = frozenset(
    {"full_attention", "indexed_attention", "attention", "deepseek_sparse_attention"}
)


def _read_glm5_next(cfg: Fields, server: str) -> Parsed:
    """``glm5_next`` (GLM-5.3-Flash: KDA and MLA; a wrapper whose text config sits in
    ``text_config`` or, for a text-only checkpoint, at its top level). Layer ``i`` is KDA when
    ``layer_types[i]`` is ``linear_attention`` (``num_hidden_layers`` entries; others
    attention), or, with no list, when ``i % 4 != 3``; the others are MLA. vLLM reads
    transformers' Glm5NextTextConfig: the flat ``linear_num_heads``, ``linear_head_dim``,
    ``linear_conv_kernel_dim``, each overridden by ``linear_attn_config``'s ``num_heads``,
    ``head_dim``, ``short_conv_kernel_size`` where that gives it (transformers
    configuration_glm5_next.py:150-177; vLLM vllm/models/glm5next/common/model.py:141-147,
    :1101-1118, kda.py:189-222). SGLang's own Glm5NextTextConfig takes a given
    ``linear_attn_config`` whole (its ``kda_layers`` 0-based layer numbers, ``num_heads``,
    ``head_dim``, ``short_conv_kernel_size``), else builds it from the flat fields and the
    layers above (S:sglang/srt/configs/glm5_next.py:186-232, :256-279). Both servers read the
    geometry with no KDA layer too (their shape functions run for the model)."""
    count = cfg.num_layers()
    linear = cfg.nested("linear_attn_config") if cfg.has("linear_attn_config") else None
    if server == "sglang" and linear is not None:
        layers = _layer_numbers(linear, "kda_layers", count, base=0)
        built = Kda(
            linear.int_("num_heads"),
            linear.int_("head_dim"),
            linear.int_("short_conv_kernel_size"),
            "linear_attn_config.num_heads",
        )
    else:
        if cfg.has("layer_types"):
            kinds = cfg.layer_kinds("layer_types", _GLM5_ATTENTION | {"linear_attention"}, count)
            layers = positions(kinds, _LINEAR)
        else:
            layers = tuple(i for i in range(count) if i % 4 != 3)

        def folded(key: str, flat: str) -> tuple[int, str]:
            if linear is not None and key in linear.fields:
                return linear.int_(key), f"linear_attn_config.{key}"
            return cfg.int_(flat), flat

        heads, heads_field = folded("num_heads", "linear_num_heads")
        built = Kda(
            heads,
            folded("head_dim", "linear_head_dim")[0],
            folded("short_conv_kernel_size", "linear_conv_kernel_dim")[0],
            heads_field,
        )
    # Both servers serve it as MLA (V:vllm/models/glm5next/common/model.py:391-405,
    # S:sglang/srt/configs/model_config.py:1376-1377), with their config classes' ranks,
    # kv_lora_rank 512 and qk_rope_head_dim 0, where none is given (transformers
    # configuration_glm5_next.py:112-114, S:configs/glm5_next.py:118-120).
    return _one(lambda: built, layers, _mla_by_default(cfg, _others(count, layers), rope=0))


def _read_alice_ai(cfg: Fields, server: str) -> Parsed:
    """``alice_ai`` (vLLM only; KDA through Kimi's layer, Qwen3-Next attention): the
    ``linear_attention`` entries of ``layer_types`` (``num_hidden_layers`` of them, others
    ``full_attention``); ``linear_num_key_heads`` heads of ``linear_key_head_dim``, which the
    value ones must equal, kernel ``linear_conv_kernel_dim`` (read with no KDA layer too). vLLM
    refuses the config unless ``kda_allow_negative_eigenvalues`` is false,
    ``router_score_function`` ``sigmoid``, ``router_bias_correction`` true, and
    ``block_attn_res_block_size`` and ``num_experts`` positive. vLLM
    model_executor/models/alice_ai.py:106-137, :321-342, :491-495, :686-701,
    model_executor/models/config.py:29-50."""
    required: tuple[tuple[str, object, str], ...] = (
        ("kda_allow_negative_eigenvalues", False, "false"),
        ("router_score_function", "sigmoid", "'sigmoid'"),
        ("router_bias_correction", True, "true"),
    )
    for field, wanted, shown in required:
        given = cfg.fields.get(field)
        # vLLM compares the flags by identity (``is not False``) and the name by equality.
        if not (given is wanted if isinstance(wanted, bool) else given == wanted):
            where = f"is {show(given)}" if field in cfg.fields else "missing"
            raise cfg.fail(
                field,
                f"{where}; {VLLM} requires {shown} (vllm/model_executor/models/config.py:29-50)",
            )
    cfg.int_("block_attn_res_block_size")
    cfg.int_("num_experts")
    count = cfg.num_layers()
    kinds = cfg.layer_kinds("layer_types", frozenset({"linear_attention", "full_attention"}), count)
    layers = positions(kinds, _LINEAR)
    built = Kda(
        cfg.int_("linear_num_key_heads"),
        cfg.int_("linear_key_head_dim"),
        cfg.int_("linear_conv_kernel_dim"),
        "linear_num_key_heads",
    )

    def geometry() -> Kda:
        # Kimi's layer takes one head count and dim (alice_ai.py:118-127).
        for key_field, value_field in (
            ("linear_num_key_heads", "linear_num_value_heads"),
            ("linear_key_head_dim", "linear_value_head_dim"),
        ):
            if cfg.int_(value_field) != cfg.int_(key_field):
                raise cfg.fail(
                    value_field,
                    f"is {show(cfg.int_(value_field))} but {key_field} is "
                    f"{show(cfg.int_(key_field))}; {VLLM}'s AliceAI KDA requires them equal",
                )
        return built

    return _one(geometry, layers, gqa(cfg, _others(count, layers)))


def _read_gigachat3_5(cfg: Fields, server: str) -> Parsed:
    """``gigachat3_5`` (SGLang only; gated delta net and MLA): the ``linear_attention``
    entries of ``layer_types`` (``num_hidden_layers`` of them, others ``attention`` or
    ``full_attention``), else every layer not in ``full_attention_layers`` (0-based), else every
    layer; ``linear_num_key_heads``, ``linear_num_value_heads``, ``linear_key_head_dim``,
    ``linear_value_head_dim``, ``linear_conv_kernel_dim``, read with no linear layer too, into
    the Qwen3-Next shape; the other layers MLA, ``kv_lora_rank`` (default 512) and
    ``qk_rope_head_dim`` (default 64). S:sglang/srt/configs/gigachat35.py:19-23, :51-53,
    :157-186, :210-231."""
    count = cfg.num_layers()
    if cfg.has("layer_types"):
        vocabulary = frozenset({"linear_attention", "attention", "full_attention"})
        layers = positions(cfg.layer_kinds("layer_types", vocabulary, count), _LINEAR)
    elif cfg.has("full_attention_layers"):
        layers = _others(count, _layer_numbers(cfg, "full_attention_layers", count, base=0))
    else:
        layers = tuple(range(count))
    built = GatedDeltaNet(
        cfg.int_("linear_num_key_heads"),
        cfg.int_("linear_num_value_heads"),
        cfg.int_("linear_key_head_dim"),
        cfg.int_("linear_value_head_dim"),
        cfg.int_("linear_conv_kernel_dim"),
    )
    # SGLang serves GigaChat35ForCausalLM as MLA (S:sglang/srt/configs/model_config.py:
    # 1393-1400), with GigaChat35Config's ranks where none is given (gigachat35.py:51-53).
    attention = _mla_by_default(cfg, _others(count, layers), rope=64)
    return _one(lambda: built, layers, attention)


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


def _read_minicpm_sala(cfg: Fields, server: str) -> Parsed:
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
        heads_field = "lightning_nkv" if cfg.has("lightning_nkv") else "num_key_value_heads"
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

    return _one(geometry, layers, gqa(cfg, _others(count, layers)))


_SGLANG_CONFIG: Final = DtypeHooks(sglang_passes_config=True)

_QWEN3_5: Final = DtypeHooks(sglang_passes_config=True, vllm_ssm=QWEN3_5_HOOK)

REGISTRY: Final[Mapping[str, Family]] = {
    "bailing_hybrid": Family(
        _read_bailing_hybrid,
        ("bailing_hybrid",),
        hooks=DtypeHooks(vllm_kda_reads_ssm_dtype=False),
    ),
    "alice_ai": Family(
        _read_alice_ai,
        ("alice_ai",),
        sglang=None,
        hooks=DtypeHooks(vllm_kda_reads_ssm_dtype=False),
    ),
    "falcon_h1": Family(_read_falcon_h1, ("falcon_h1",), hooks=_SGLANG_CONFIG),
    "falcon_mamba": Family(_read_mamba, ("falcon_mamba",)),
    "gigachat3_5": Family(_read_gigachat3_5, ("gigachat3_5",), vllm=None, hooks=_SGLANG_CONFIG),
    "glm5_next": Family(_read_glm5_next, ("glm5_next",), wrapper=True, flat=True),
    "granitemoehybrid": Family(_read_granitemoehybrid, ("granitemoehybrid",)),
    "jamba": Family(_read_jamba, ("jamba",), sglang=None),
    "jet_nemotron": Family(_read_jet_nemotron, ("jet_nemotron",), vllm=None, hooks=_SGLANG_CONFIG),
    "kimi_linear": Family(_read_kimi_linear, ("kimi_linear",)),
    "lfm2": Family(_read_lfm2, ("lfm2",), hooks=_SGLANG_CONFIG),
    "lfm2_moe": Family(_read_lfm2_moe, ("lfm2_moe",)),
    "lfm2_vl": Family(_read_lfm2_vl, ("lfm2_vl",), wrapper=True),
    "mamba": Family(_read_mamba, ("mamba",)),
    "mamba2": Family(_read_mamba2, ("mamba2",)),
    "minicpm_sala": Family(_read_minicpm_sala, ("minicpm_sala",), vllm=None),
    "minicpmv4_6": Family(
        _read_gated_delta_net, ("minicpmv4_6",), hooks=_SGLANG_CONFIG, wrapper=True
    ),
    "nemotron_h": Family(
        _read_nemotron_h,
        ("nemotron_h",),
        hooks=DtypeHooks(sglang_passes_config=True, vllm_ssm=NEMOTRON_H_HOOK),
    ),
    "olmo_hybrid": Family(_read_gated_delta_net, ("olmo_hybrid",), sglang=None),
    "qwen3_5": Family(_read_gated_delta_net, ("qwen3_5_text",), hooks=_QWEN3_5),
    "qwen3_5_moe": Family(_read_gated_delta_net, ("qwen3_5_moe_text",), hooks=_QWEN3_5),
    "qwen3_next": Family(_read_gated_delta_net, ("qwen3_next",), hooks=_SGLANG_CONFIG),
    "zamba2": Family(_read_zamba2, ("zamba2",), sglang=None),
    "zaya": Family(_read_zaya, ("zaya",), vllm=None, hooks=_SGLANG_CONFIG),
}
# vLLM 0.33.0 lists these as previously supported (vllm/model_executor/models/registry.py:
# 841-895), and SGLang 0.5.23 has no model for them.
REMOVED: Final[Mapping[str, tuple[str, str]]] = {
    "bamba": ("Bamba", "0.23.0"),
    "minimax": ("MiniMax", "0.23.0"),
    "minimax_m1": ("MiniMax-M1", "0.23.0"),
    "minimax_text_01": ("MiniMax-Text-01", "0.23.0"),
    "minimax_vl_01": ("MiniMax-VL-01", "0.23.0"),
    "phi4flash": ("Phi4Flash", "0.10.2"),
    "plamo2": ("Plamo2", "0.26.0"),
}
FAMILIES: Final = tuple(sorted(REGISTRY))
