"""The families whose recurrent layers are Mamba-1 or Mamba-2: mamba, falcon_mamba, mamba2, jamba,
nemotron_h, falcon_h1, granitemoehybrid, zamba2.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

from ...printable import show
from ...releases import SGLANG
from ..attention import gqa
from ..classes import Built
from ..fields import Fields, positions
from ..kinds import Mamba1, Mamba2
from ..state import AttentionLayers
from .base import (
    ATTENTION_LAYERS,
    SSM_LAYERS,
    Parsed,
    count,
    declared_layers,
    disagree,
    heads_default,
    one_kind,
    other_layers,
)

__all__ = [
    "read_falcon_h1",
    "read_granitemoehybrid",
    "read_jamba",
    "read_mamba",
    "read_mamba2",
    "read_nemotron_h",
    "read_zamba2",
    "rules_falcon_h1",
    "rules_granitemoehybrid",
    "rules_jamba",
    "rules_mamba",
    "rules_nemotron_h",
    "rules_zamba2",
]


def read_mamba(cfg: Fields, server: str) -> Parsed:
    """``mamba`` and ``falcon_mamba`` (Mamba-1): all ``num_hidden_layers``;
    ``intermediate_size`` (else ``expand * hidden_size``, transformers' default for it: both
    servers read ``intermediate_size``, and transformers 5 keeps a given one, even falcon-mamba-7b's
    8192 beside ``expand`` 16), ``state_size``, ``conv_kernel``. vLLM models/mamba.py:234-247,
    SGLang configs/mamba.py:27-80."""

    def geometry() -> Mamba1:
        if "intermediate_size" in cfg.given:
            d_inner, field, terms = cfg.int_("intermediate_size"), "intermediate_size", ""
        else:
            # The class's int(expand * hidden_size) (rules_mamba): a split names its terms.
            d_inner = cfg.int_("expand") * cfg.int_("hidden_size")
            field, terms = "expand", "expand * hidden_size"
        return Mamba1(d_inner, cfg.int_("state_size"), cfg.int_("conv_kernel"), field, terms)

    return one_kind(geometry, tuple(range(cfg.num_layers())), None)


def read_mamba2(cfg: Fields, server: str) -> Parsed:
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
                f"missing; {SGLANG} sizes mamba2 by config.intermediate_size "
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

    return one_kind(geometry, tuple(range(cfg.num_layers())), None)


def read_jamba(cfg: Fields, server: str) -> Parsed:
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
    return one_kind(geometry, layers, gqa(cfg, other_layers(count, layers)))


def read_nemotron_h(cfg: Fields, server: str) -> Parsed:
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
            raise cfg.fail("n_groups", f"missing; {SGLANG} reads n_groups, not mamba_n_groups")
        if server == "sglang" and "mamba_n_groups" not in cfg.given:
            # SGLang's class defaults mamba_n_groups to 8 (:277), which it never reads.
            groups = cfg.int_("n_groups")
        else:
            groups = cfg.either_int("n_groups", "mamba_n_groups")
        return Mamba2(
            heads * head_dim,
            groups,
            heads,
            head_dim,
            cfg.int_("ssm_state_size"),
            cfg.either_int("conv_kernel", "mamba_d_conv"),
            "mamba_num_heads",
            "n_groups",
        )

    kinds = _nemotron_kinds(cfg, server)
    layers = positions(kinds, "M")
    return one_kind(geometry, layers, gqa(cfg, positions(kinds, "*")))


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
            note = f" ({SGLANG} refuses transformers 5's linear_attention/full_attention)"
            vocabulary = frozenset({"mamba", "attention", "mlp", "moe"})
        else:
            note, vocabulary = "", frozenset(_NEMOTRON_PATTERN)
        kinds = cfg.layer_kinds("layers_block_type", vocabulary, None, note)
        listed = "".join(_NEMOTRON_PATTERN[kind] for kind in kinds)
        declared_layers(cfg, "layers_block_type", len(listed))
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
    declared_layers(cfg, "hybrid_override_pattern", len(pattern))
    if listed is not None and listed != pattern:
        index = next(
            (i for i, pair in enumerate(zip(listed, pattern, strict=False)) if pair[0] != pair[1]),
            min(len(listed), len(pattern)),
        )
        disagree(
            cfg,
            "layers_block_type",
            "hybrid_override_pattern",
            index,
            cfg.fields["layers_block_type"][index] if index < len(listed) else None,
            pattern[index] if index < len(pattern) else None,
        )
    return pattern


def read_falcon_h1(cfg: Fields, server: str) -> Parsed:
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
    return one_kind(geometry, layers, gqa(cfg, layers))


def read_granitemoehybrid(cfg: Fields, server: str) -> Parsed:
    """``granitemoehybrid`` (Granite 4.0 H): the ``mamba``/``linear_attention`` entries of
    ``layer_types``, which has ``num_hidden_layers`` entries (others: attention);
    ``mamba_expand * hidden_size``, ``mamba_n_heads``, ``mamba_d_head`` (or ``"auto"``),
    ``mamba_n_groups``, ``mamba_d_state``, ``mamba_d_conv``. vLLM
    models/granitemoehybrid.py:617-646 and :321-350; SGLang configs/granitemoehybrid.py:29-32,
    239-251, 286-310."""
    count = cfg.num_layers()
    layers = cfg.layer_list("layer_types", SSM_LAYERS, ATTENTION_LAYERS, count)
    return one_kind(
        lambda: _mamba2_heads(cfg, cfg.int_("mamba_expand") * cfg.int_("hidden_size")),
        layers,
        gqa(cfg, other_layers(count, layers)),
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


def read_zamba2(cfg: Fields, server: str) -> Parsed:
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

    kinds = cfg.layer_kinds("layers_block_type", SSM_LAYERS | {"hybrid"}, None)
    declared_layers(cfg, "layers_block_type", len(kinds))
    hybrid = positions(kinds, frozenset({"hybrid"}))
    return one_kind(geometry, tuple(range(len(kinds))), _zamba2_attention(cfg, hybrid))


def _zamba2_attention(cfg: Fields, layers: tuple[int, ...]) -> AttentionLayers | None:
    # The shared attention reads a concatenation of two hidden states: transformers'
    # Zamba2Config makes attention_head_dim 2 * hidden_size // num_attention_heads unless the
    # file gives it (rules_zamba2), and vLLM's Zamba2ModelArchConfigConvertor reads it
    # (model_arch_config_convertor.py:502-504). vLLM's Zamba2Attention divides it by 2
    # (models/zamba2.py:151-153): a file's null or 0 fails there.
    if layers and "attention_head_dim" in cfg.fields:
        cfg.int_("attention_head_dim")
    return gqa(cfg, layers, head_dim_field="attention_head_dim")


# Each layer as the pattern character of hybrid_override_pattern, in transformers 5's names
# (NemotronHConfig._pattern_to_list, configuration_nemotron_h.py:266-270) and SGLang's
# (configs/nemotron_h.py:35-39, :497-510).
_PATTERN_NAMES: Final[Mapping[str, Mapping[str, str]]] = {
    "transformers": {"M": "linear_attention", "E": "moe", "*": "full_attention", "-": "mlp"},
    "sglang": {"M": "mamba", "E": "moe", "*": "attention", "-": "mlp"},
}
# The layers a class builds when the file gives neither a list nor a pattern: transformers'
# (configuration_nemotron_h.py:160-166) and SGLang's, whose pattern parameter defaults to
# Nemotron-H 8B's (configs/nemotron_h.py:253), and a null pattern to four layers (:39, :206).
_DEFAULT_PATTERN: Final[Mapping[str, str]] = {
    "transformers": "ME*-",
    "sglang": "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-",
    "sglang null": "ME*E",
}


def rules_nemotron_h(built: Built) -> None:
    """NemotronH's classes. transformers' (NemotronHConfig.__post_init__,
    configuration_nemotron_h.py:143-186): ``mamba_n_groups``, ``mamba_d_conv`` and
    ``mamba_expand`` replace ``n_groups``, ``conv_kernel`` and ``expand``; the list
    (``layers_block_type``, or ``layer_types``, its alias) wins over
    ``hybrid_override_pattern``, which is popped and read only without a list; neither gives
    four layers; ``num_hidden_layers`` and the pattern are properties of the list (:228-251).
    SGLang's (configs/nemotron_h.py:245-420): ``conv_kernel`` is ``mamba_d_conv`` unless the
    file gives it, ``n_groups`` only the file's; the list wins over the pattern, whose default
    is 52 layers; checkpoint names only. Both make ``num_key_value_heads`` ``null`` the heads."""
    values, given = built.values, built.given
    if built.reading.cls is None:
        return
    server = "sglang" if built.reading.server == "sglang" else "transformers"
    if server == "sglang":
        values["conv_kernel"] = given.get("conv_kernel", values.pop("mamba_d_conv", None))
    else:
        for legacy, name in (("mamba_n_groups", "n_groups"), ("mamba_d_conv", "conv_kernel")):
            if legacy in given:
                values[name] = values.pop(legacy)
    pattern = values.pop("hybrid_override_pattern", None)
    if values.get("layers_block_type") is None and not _listed_from_pattern(built, server, pattern):
        return
    listed = values["layers_block_type"]
    if isinstance(listed, list):
        _named_layers(built, server, listed)
    heads_default(values)


def _listed_from_pattern(built: Built, server: str, pattern: object) -> bool:
    """The layer list NemotronH's class makes of ``hybrid_override_pattern`` (``pattern``, popped)
    where the file gives no list, the class's default pattern where the file gives none. False
    where the pattern is no string of ``M * - E``: it is kept for ``read_nemotron_h`` to refuse."""
    values, given = built.values, built.given
    if "hybrid_override_pattern" not in given:
        pattern = _DEFAULT_PATTERN[server]
    elif pattern is None and server == "sglang":
        # nemotron_h_puzzle only: for nemotron_h SGLang builds transformers' class first.
        pattern = _DEFAULT_PATTERN["sglang null"]
    elif pattern is None:
        # transformers turns the given pattern into layers character by character
        # (configuration_nemotron_h.py:160-163, :268-271): None fails (TypeError). SGLang
        # builds this class first, through AutoConfig (hf_transformers/config.py:228-233).
        raise built.fail(
            "hybrid_override_pattern",
            "is null and there is no layers_block_type; the class makes each layer of a "
            "character of the pattern (configuration_nemotron_h.py:160-163, :268-271)",
        )
    if not isinstance(pattern, str) or any(c not in "M*-E" for c in pattern):
        # The class fails on it (KeyError); read_nemotron_h refuses it, naming the entry.
        values["hybrid_override_pattern"] = pattern
        return False
    values["layers_block_type"] = [_PATTERN_NAMES[server][c] for c in pattern]
    return True


def _named_layers(built: Built, server: str, listed: list[Any]) -> None:
    """What NemotronH's class makes of its layer list: SGLang's refuses a kind it does not
    name; the layer count and the pattern are the list's."""
    values = built.values
    names = _PATTERN_NAMES[server].values()
    # A kind is shown as the class would print it; any other value bounded (``show``).
    unknown = sorted(
        {
            kind if isinstance(kind, str) and len(kind) <= 64 else show(kind)
            for kind in listed
            if kind not in names
        }
    )
    if unknown and server == "sglang":
        # NemotronHConfig._validate_layers_block_type (configs/nemotron_h.py:167-192).
        raise built.fail(
            "layers_block_type",
            f"holds {', '.join(unknown)}; SGLang's class takes mamba, attention, mlp and moe "
            "only (transformers 5's names are refused)",
        )
    values["num_hidden_layers"] = len(listed)
    back = {name: char for char, name in _PATTERN_NAMES[server].items()}
    if all(isinstance(kind, str) and kind in back for kind in listed):
        values["hybrid_override_pattern"] = "".join(back[kind] for kind in listed)


def rules_mamba(built: Built) -> None:
    """transformers' MambaConfig / FalconMambaConfig.__post_init__ (configuration_mamba.py:94,
    configuration_falcon_mamba.py:102), which SGLang's subclasses keep: ``intermediate_size``
    ``int(expand * hidden_size)``, a file's own value kept over it."""
    values = built.values
    expand, hidden = values.get("expand"), count(values, "hidden_size")
    if built.reading.cls is None or "intermediate_size" in built.given or hidden is None:
        return
    if isinstance(expand, int | float) and not isinstance(expand, bool):
        inner = expand * hidden
        if isinstance(inner, int) or math.isfinite(inner):  # int() of inf or nan fails there too
            values["intermediate_size"] = int(inner)


def rules_jamba(built: Built) -> None:
    """transformers' JambaConfig.__post_init__ (configuration_jamba.py:91): no KV heads are the
    heads."""
    if built.reading.cls is not None:
        heads_default(built.values)


def _d_head(built: Built, inner: int | None) -> None:
    """``mamba_d_head`` ``"auto"``: ``inner // mamba_n_heads``."""
    heads = count(built.values, "mamba_n_heads")
    if built.values.get("mamba_d_head") == "auto" and inner is not None and heads:
        built.values["mamba_d_head"] = inner // heads


def rules_falcon_h1(built: Built) -> None:
    """Falcon-H1's classes, transformers' (FalconH1Config.__post_init__,
    configuration_falcon_h1.py:104-120) and SGLang's alike (configs/falcon_h1.py:140-225): no KV
    heads are the heads; ``mamba_d_head`` ``"auto"`` is the Mamba channels (``mamba_d_ssm``,
    or, ``null``, ``mamba_expand * hidden_size``) over ``mamba_n_heads``."""
    values = built.values
    if built.reading.cls is None:
        return
    heads_default(values)
    inner = count(values, "mamba_d_ssm")
    expand, hidden = count(values, "mamba_expand"), count(values, "hidden_size")
    if values.get("mamba_d_ssm") is None and expand is not None and hidden is not None:
        inner = expand * hidden
    _d_head(built, inner)


def rules_granitemoehybrid(built: Built) -> None:
    """Granite 4.0 H's classes. transformers' (GraniteMoeHybridConfig.__post_init__,
    configuration_granitemoehybrid.py:97-109): no ``layer_types`` is every layer Mamba.
    SGLang's (configs/granitemoehybrid.py:136-276): no ``layer_types`` is attention at every
    sixth layer; it names the layers ``mamba`` and ``attention`` again after transformers 5
    renamed them (:29-32, :195, :276), and its Mamba radix cache keys on that name
    (sglang/srt/arg_groups/overrides.py:462-466)."""
    values = built.values
    layers = count(values, "num_hidden_layers")
    kinds = values.get("layer_types")
    expand, hidden = count(values, "mamba_expand"), count(values, "hidden_size")
    inner = expand * hidden if expand is not None and hidden is not None else None
    if built.reading.server == "sglang":
        if values.get("mamba_d_head") == "auto":
            raise built.fail(
                "mamba_d_head",
                f"is 'auto'; SGLang's class multiplies it by mamba_n_heads and refuses what is "
                f"not mamba_expand * hidden_size {show(inner)} (configs/granitemoehybrid.py:"
                "248-252)",
            )
        if kinds is None and layers is not None:
            kinds = ["attention" if (i + 1) % 6 == 0 else "mamba" for i in range(layers)]
        if isinstance(kinds, list):
            names = {"linear_attention": "mamba", "full_attention": "attention"}
            values["layer_types"] = [
                names.get(kind, kind) if isinstance(kind, str) else kind for kind in kinds
            ]
        return
    if kinds is None and layers is not None:
        values["layer_types"] = ["linear_attention"] * layers
    heads_default(values)
    _d_head(built, inner)


# Zamba2-2.7B's layers, which transformers' Zamba2Config builds where the file gives none
# (configuration_zamba2.py:128-137).
_ZAMBA2_DEFAULT: Final = (
    ("linear_attention",)
    + (("linear_attention",) * 5 + ("hybrid",)) * 7
    + ("linear_attention",) * 4
    + ("hybrid",)
    + ("linear_attention",) * 3
    + ("hybrid",)
    + ("linear_attention",) * 2
)


def rules_zamba2(built: Built) -> None:
    """transformers' Zamba2Config.__post_init__ (configuration_zamba2.py:112-140):
    ``attention_head_dim`` ``2 * hidden_size // num_attention_heads`` and ``mamba_headdim``
    ``mamba_expand * hidden_size // n_mamba_heads``, a file's own value (``head_dim`` is
    ``attention_head_dim``) kept over either; no
    ``layers_block_type`` is Zamba2-2.7B's 54 layers."""
    values, given = built.values, built.given
    if built.reading.cls is None:
        return
    hidden, heads = count(values, "hidden_size"), count(values, "num_attention_heads")
    expand, mamba_heads = count(values, "mamba_expand"), count(values, "n_mamba_heads")
    # A file's head_dim is attention_head_dim (Zamba2Config.attribute_map, :71).
    if (
        "attention_head_dim" not in given
        and "head_dim" not in given
        and hidden is not None
        and heads
    ):
        values["attention_head_dim"] = 2 * hidden // heads
    if "mamba_headdim" not in given and hidden is not None and expand is not None and mamba_heads:
        values["mamba_headdim"] = expand * hidden // mamba_heads
    if values.get("layers_block_type") is None:
        values["layers_block_type"] = list(_ZAMBA2_DEFAULT)
    heads_default(values)
