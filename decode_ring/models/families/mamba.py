"""The families whose recurrent layers are Mamba-1 or Mamba-2: mamba, falcon_mamba, mamba2, jamba,
nemotron_h, falcon_h1, granitemoehybrid, zamba2.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ...printable import show
from ...releases import SGLANG
from ..attention import gqa
from ..fields import Fields, positions
from ..kinds import Mamba1, Mamba2
from ..state import AttentionLayers
from .base import (
    ATTENTION_LAYERS,
    SSM_LAYERS,
    Parsed,
    declared_layers,
    disagree,
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
]


def read_mamba(cfg: Fields, server: str) -> Parsed:
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
    # Zamba2Config makes attention_head_dim 2 * hidden_size // num_attention_heads, and vLLM's
    # Zamba2ModelArchConfigConvertor reads it (model_arch_config_convertor.py:502-504).
    if layers and not cfg.has("attention_head_dim"):
        head_dim = 2 * cfg.int_("hidden_size") // cfg.int_("num_attention_heads")
        cfg = Fields({**cfg.fields, "attention_head_dim": head_dim}, cfg.root, cfg.family, cfg.path)
    return gqa(cfg, layers, head_dim_field="attention_head_dim")
