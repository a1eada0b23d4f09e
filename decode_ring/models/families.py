"""The registry of families: for each ``model_type``, how its fields give the geometry of each
kind of recurrent layer, which layers those are, its attention side, which servers serve it at
which version, and its dtype hooks. A new family is one reader and one ``Family`` entry.

Citations are paths inside the ``vllm-0.33.0`` and ``sglang-0.5.23`` wheels.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar, Final, Protocol

from .attention import gqa
from .dtypes import NEMOTRON_H_HOOK, NO_HOOKS, DtypeHooks
from .fields import Fields, positions, show
from .gated_delta_net import GatedDeltaNet
from .mamba1 import Mamba1
from .mamba2 import Mamba2
from .state import AttentionLayers, Sizing, StateTensor

__all__ = ["FAMILIES", "REGISTRY", "SGLANG", "VLLM", "Family", "Geometry", "Parsed"]

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
    """What a family's fields say: each kind of recurrent layer's geometry with its layers, the
    attention side, and the field that gives the KV heads."""

    groups: tuple[tuple[Geometry, tuple[int, ...]], ...]
    attention: AttentionLayers | None
    kv_heads_field: str = "num_key_value_heads"


Reader = Callable[[Fields, str], Parsed]
"""A family's reader: its fields and the server whose reading to follow (``"vllm"`` or
``"sglang"``)."""


@dataclass(frozen=True, slots=True)
class Family:
    """One family: its reader, the other ``model_type`` values it reads (a multimodal wrapper's
    text config), the servers that serve it (``None``: that server lacks it) and its dtype
    hooks."""

    read: Reader
    aliases: tuple[str, ...] = ()
    vllm: str | None = VLLM
    sglang: str | None = SGLANG
    hooks: DtypeHooks = NO_HOOKS


def _others(count: int, ssm: tuple[int, ...]) -> tuple[int, ...]:
    taken = set(ssm)
    return tuple(i for i in range(count) if i not in taken)


def _one(geometry: Geometry, layers: tuple[int, ...], attention: AttentionLayers | None) -> Parsed:
    return Parsed(((geometry, layers),), attention)


def _read_mamba(cfg: Fields, server: str) -> Parsed:
    """``mamba`` (Mamba-1): all ``num_hidden_layers``; ``intermediate_size`` (which must equal
    ``expand * hidden_size`` when both are given: transformers puts that in its place),
    ``state_size``, ``conv_kernel``. vLLM models/mamba.py:234-247, SGLang configs/mamba.py:27-38."""
    d_inner = cfg.int_("intermediate_size")
    expand, hidden = cfg.opt_int("expand"), cfg.opt_int("hidden_size")
    if expand is not None and hidden is not None and expand * hidden != d_inner:
        raise cfg.fail(
            "intermediate_size",
            f"is {show(d_inner)} but expand*hidden_size is {show(expand * hidden)}, which "
            "transformers puts in its place (MambaConfig.__post_init__)",
        )
    geometry = Mamba1(d_inner, cfg.int_("state_size"), cfg.int_("conv_kernel"), "intermediate_size")
    return _one(geometry, tuple(range(cfg.num_layers())), None)


def _read_mamba2(cfg: Fields, server: str) -> Parsed:
    """``mamba2``: all ``num_hidden_layers``; ``expand * hidden_size`` (must equal ``num_heads *
    head_dim``), ``num_heads``, ``head_dim``, ``n_groups``, ``state_size``, ``conv_kernel``.
    SGLang sizes it by ``intermediate_size``, which must then be present. vLLM
    models/mamba2.py:184-213, SGLang configs/mamba2.py:41-57."""
    heads, head_dim = cfg.int_("num_heads"), cfg.int_("head_dim")
    d_inner = cfg.int_("expand") * cfg.int_("hidden_size")
    if d_inner != heads * head_dim:
        # transformers Mamba2Config.validate_architecture refuses the config.
        raise cfg.fail(
            "num_heads", f"num_heads*head_dim {show(heads * head_dim)} != {show(d_inner)}"
        )
    given = cfg.opt_int("intermediate_size")
    if given is not None and given != d_inner:
        # vLLM's mixer would use it (models/mamba2.py:61-63) while its cache uses expand*hidden.
        raise cfg.fail(
            "intermediate_size", f"is {show(given)} but expand*hidden_size is {show(d_inner)}"
        )
    if server == "sglang" and given is None:
        raise cfg.fail(
            "intermediate_size",
            "missing; SGLang 0.5.23 sizes mamba2 by config.intermediate_size "
            "(configs/mamba2.py:46-48), which transformers' Mamba2Config does not define",
        )
    geometry = Mamba2(
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
    d_inner = cfg.int_("mamba_expand") * cfg.int_("hidden_size")
    geometry = Mamba1(d_inner, cfg.int_("mamba_d_state"), cfg.int_("mamba_d_conv"), "mamba_expand")
    count = cfg.num_layers()
    layers = tuple(i for i in range(count) if i % period != offset)
    return _one(geometry, layers, gqa(cfg, _others(count, layers)))


def _read_nemotron_h(cfg: Fields, server: str) -> Parsed:
    """``nemotron_h``: the ``mamba``/``linear_attention`` entries of ``layers_block_type``
    (others: attention, mlp, moe), else the ``M`` of ``hybrid_override_pattern`` (others:
    ``*-E``); ``mamba_num_heads``, ``mamba_head_dim``, ``n_groups`` (or ``mamba_n_groups``),
    ``ssm_state_size``, ``conv_kernel`` (or ``mamba_d_conv``). SGLang, as its own config class,
    takes the list in checkpoint names only and reads ``n_groups`` only. vLLM
    models/nemotron_h.py:780-811; SGLang configs/nemotron_h.py:425-439."""
    heads, head_dim = cfg.int_("mamba_num_heads"), cfg.int_("mamba_head_dim")
    if server == "sglang" and "n_groups" not in cfg.fields:
        # SGLang's NemotronHConfig keeps mamba_n_groups apart and reads self.n_groups (:430).
        raise cfg.fail("n_groups", "missing; SGLang 0.5.23 reads n_groups, not mamba_n_groups")
    geometry = Mamba2(
        heads * head_dim,
        cfg.either_int("n_groups", "mamba_n_groups"),
        heads,
        head_dim,
        cfg.int_("ssm_state_size"),
        cfg.either_int("conv_kernel", "mamba_d_conv"),
        "mamba_num_heads",
        "n_groups",
    )
    layers, attention = _nemotron_layers(cfg, server)
    return _one(geometry, layers, gqa(cfg, attention))


def _nemotron_layers(cfg: Fields, server: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    # The list wins over the pattern in transformers 5 and SGLang (configs/nemotron_h.py:196-206);
    # vLLM reads the pattern transformers derives from it (models/nemotron_h.py:597).
    if cfg.has("layers_block_type"):
        if server == "sglang":
            # SGLang's NemotronHConfig validates the checkpoint vocabulary only (:167-192), so it
            # refuses a list transformers 5 wrote.
            note = " (SGLang 0.5.23 refuses transformers 5's linear_attention/full_attention)"
            vocabulary = frozenset({"mamba", "attention", "mlp", "moe"})
            kinds = cfg.layer_kinds("layers_block_type", vocabulary, None, note)
            return positions(kinds, frozenset({"mamba"})), positions(
                kinds, frozenset({"attention"})
            )
        vocabulary = _SSM_LAYERS | _ATTENTION_LAYERS | {"mlp", "moe"}
        kinds = cfg.layer_kinds("layers_block_type", vocabulary, None)
        return positions(kinds, _SSM_LAYERS), positions(kinds, _ATTENTION_LAYERS)
    if "hybrid_override_pattern" not in cfg.fields:
        raise cfg.fail("hybrid_override_pattern", "missing (and no layers_block_type)")
    pattern = cfg.entries("hybrid_override_pattern", None, pattern=True)
    for index, char in enumerate(pattern):
        if char not in "M*-E":
            raise cfg.fail(
                "hybrid_override_pattern", f"character {index} is {show(char)}; expected M * - E"
            )
    return positions(pattern, "M"), positions(pattern, "*")


def _read_falcon_h1(cfg: Fields, server: str) -> Parsed:
    """``falcon_h1`` (attention and SSM side by side in every layer): all
    ``num_hidden_layers``; ``mamba_d_ssm`` (``null``: ``mamba_expand * hidden_size``),
    ``mamba_n_heads``, ``mamba_d_head`` (or ``"auto"``), ``mamba_n_groups``, ``mamba_d_state``,
    ``mamba_d_conv``. vLLM models/falcon_h1.py:538-572 and :112-116; SGLang
    configs/falcon_h1.py:211-223."""
    if "mamba_d_ssm" not in cfg.fields:
        # transformers would default it to 1024, whatever the model; refuse to guess.
        raise cfg.fail("mamba_d_ssm", "missing")
    if cfg.fields["mamba_d_ssm"] is None:
        d_inner = cfg.int_("mamba_expand") * cfg.int_("hidden_size")
    else:
        d_inner = cfg.int_("mamba_d_ssm")
    layers = tuple(range(cfg.num_layers()))
    return _one(_mamba2_heads(cfg, d_inner), layers, gqa(cfg, layers))


def _read_granitemoehybrid(cfg: Fields, server: str) -> Parsed:
    """``granitemoehybrid`` (Granite 4.0 H): the ``mamba``/``linear_attention`` entries of
    ``layer_types``, which has ``num_hidden_layers`` entries (others: attention);
    ``mamba_expand * hidden_size``, ``mamba_n_heads``, ``mamba_d_head`` (or ``"auto"``),
    ``mamba_n_groups``, ``mamba_d_state``, ``mamba_d_conv``. vLLM
    models/granitemoehybrid.py:617-646 and :321-350; SGLang configs/granitemoehybrid.py:29-32,
    239-251, 286-310."""
    d_inner = cfg.int_("mamba_expand") * cfg.int_("hidden_size")
    count = cfg.num_layers()
    layers = cfg.layer_list("layer_types", _SSM_LAYERS, _ATTENTION_LAYERS, count)
    return _one(_mamba2_heads(cfg, d_inner), layers, gqa(cfg, _others(count, layers)))


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
    and the shared attention); ``mamba_expand * hidden_size``, ``n_mamba_heads`` (head dim
    ``d_inner / n_mamba_heads``; ``mamba_headdim``, if given, must agree), ``mamba_ngroups``,
    ``mamba_d_state``, ``mamba_d_conv``. vLLM models/zamba2.py:869-897, mixer :530-545, layers
    :751-780."""
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
    geometry = Mamba2(
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
    return _one(
        geometry,
        tuple(range(len(kinds))),
        _zamba2_attention(cfg, positions(kinds, frozenset({"hybrid"}))),
    )


def _zamba2_attention(cfg: Fields, layers: tuple[int, ...]) -> AttentionLayers | None:
    # The shared attention reads a concatenation of two hidden states: transformers'
    # Zamba2Config makes attention_head_dim 2 * hidden_size // num_attention_heads, and vLLM's
    # Zamba2ModelArchConfigConvertor reads it (model_arch_config_convertor.py:502-504).
    if layers and not cfg.has("attention_head_dim"):
        head_dim = 2 * cfg.int_("hidden_size") // cfg.int_("num_attention_heads")
        cfg = Fields({**cfg.fields, "attention_head_dim": head_dim}, cfg.root, cfg.family, cfg.path)
    return gqa(cfg, layers, head_dim_field="attention_head_dim")


def _read_qwen3_next(cfg: Fields, server: str) -> Parsed:
    """``qwen3_next`` (gated delta net): the ``linear_attention`` entries of ``layer_types``
    (``num_hidden_layers`` of them), else ``i`` with ``(i + 1) % full_attention_interval !=
    0``; SGLang reads the interval alone. ``linear_num_key_heads``, ``linear_num_value_heads``,
    ``linear_key_head_dim``, ``linear_value_head_dim``, ``linear_conv_kernel_dim``. vLLM
    models/qwen3_next.py:893-913 and :500-512, :668; SGLang configs/qwen3_next.py:259-313."""
    geometry = GatedDeltaNet(
        cfg.int_("linear_num_key_heads"),
        cfg.int_("linear_num_value_heads"),
        cfg.int_("linear_key_head_dim"),
        cfg.int_("linear_value_head_dim"),
        cfg.int_("linear_conv_kernel_dim"),
    )
    count = cfg.num_layers()
    if server != "sglang" and cfg.has("layer_types"):
        layers = cfg.layer_list("layer_types", _SSM_LAYERS, _ATTENTION_LAYERS, count)
        return _one(geometry, layers, gqa(cfg, _others(count, layers)))
    if not cfg.has("full_attention_interval"):
        why = (
            "SGLang 0.5.23 counts linear layers by it alone (configs/qwen3_next.py:259-268)"
            if server == "sglang"
            else "needed when there is no layer_types"
        )
        raise cfg.fail("full_attention_interval", f"missing; {why}")
    interval = cfg.int_("full_attention_interval")
    layers = tuple(i for i in range(count) if (i + 1) % interval)
    return _one(geometry, layers, gqa(cfg, _others(count, layers)))


_SGLANG_CONFIG: Final = DtypeHooks(sglang_passes_config=True)

REGISTRY: Final[Mapping[str, Family]] = {
    "falcon_h1": Family(_read_falcon_h1, hooks=_SGLANG_CONFIG),
    "granitemoehybrid": Family(_read_granitemoehybrid),
    "jamba": Family(_read_jamba, sglang=None),
    "mamba": Family(_read_mamba),
    "mamba2": Family(_read_mamba2),
    "nemotron_h": Family(
        _read_nemotron_h, hooks=DtypeHooks(sglang_passes_config=True, vllm_ssm=NEMOTRON_H_HOOK)
    ),
    "qwen3_next": Family(_read_qwen3_next, hooks=_SGLANG_CONFIG),
    "zamba2": Family(_read_zamba2, sglang=None),
}
FAMILIES: Final = tuple(sorted(REGISTRY))
