"""Per-sequence SSM state of a hybrid model, from its Hugging Face ``config.json``.

``ssm_state(config, tp_size=..., layout=...)`` returns an :class:`SsmState`: which layers keep a
recurrent state, the shape of one layer's conv state and SSM state for one sequence on one
tensor-parallel rank (in the layout's own dimension order), the dtype of each and the rule that
chose it, and the bytes: per layer and per sequence. It reads only the config (a mapping, a file,
a snapshot directory, or anything with ``to_dict()``); it never imports ``transformers``.

The peers' code is the authority. Citations are paths inside the ``vllm-0.33.0`` and
``sglang-0.5.23`` wheels (``vllm/...``, ``sglang/srt/...``) and transformers 5.19-5.23, which both
pin and which is where they read configs through.

Layouts
=======
``vllm``
    ``MambaStateShapeCalculator`` (``vllm/model_executor/layers/mamba/mamba_utils.py``), fed as each
    model's ``get_mamba_state_shape_from_config`` feeds it. Conv state is ``(window, channels)``
    (the default "SD" layout, ``get_conv_state_layout``, mamba_utils.py:28-45); Mamba-2 and
    gated-delta-net windows are ``K - 1 + speculative_tokens`` (``num_spec``), Mamba-1's ``K - 1``.
    Dtypes: ``--mamba-cache-dtype auto`` is the model dtype, ``--mamba-ssm-cache-dtype auto``
    follows the conv state, except NemotronH, whose SSM state is the config's
    ``mamba_ssm_cache_dtype`` or float32.
``sglang``
    ``Mamba2StateShape.create`` / ``create_full_rank`` (``sglang/srt/configs/mamba_utils.py``) as
    the configs' ``mamba2_cache_params`` call them. Conv state is ``(channels, K - 1)``, never
    widened for speculative decoding (SGLang keeps draft-token states in separate scratch
    buffers, ``mem_cache/memory_pool.py:881-945``, not counted here); Mamba-1's SSM state is
    ``(d_inner, 1, d_state)``. Dtypes: conv bfloat16, SSM float32, or the config's
    ``mamba_ssm_dtype`` where the family's ``mamba2_cache_params`` passes the config
    (``falcon_h1``, ``nemotron_h``, ``qwen3_next``). SGLang 0.5.23 has no ``jamba`` or ``zamba2``:
    that layout refuses them.
``metrale``
    The reference server's own: the conv window keeps all ``K`` columns, ``(K, channels)``, with no
    speculative widening (speculative decode skips the decode-rollback ring this state sizes);
    SSM state as vLLM; both float32; vLLM's group and divisibility rules.

Byte counts agree between ``vllm`` and ``sglang`` for equal dtypes and no speculative tokens.

Every layout refuses what the servers' mixers refuse: a ``tp_size`` that does not divide the
Mamba-2 heads (``vllm/model_executor/layers/mamba/mamba_mixer2.py:316``), a group count it does
not divide unless it is 1 (:320, replicated to ``tp_size`` groups as
``extra_groups_for_head_shards`` does), Mamba-1's ``d_inner`` (``divide()`` in
``mamba1_state_shape``), or the gated delta net's key or value heads. A config with no SSM layer
refuses nothing.

Families (``model_type`` -> what is read)
=========================================
A field must be present and an ``int`` (``bool`` and ``float``, even ``4.0``, are refused) unless
noted. Layer lists are read in both vocabularies: checkpoints' ``mamba``/``attention`` (and
``M``/``*``/``-``/``E`` patterns) and transformers 5's ``linear_attention``/``full_attention``.

``mamba`` (Mamba-1)
    Layers: all ``num_hidden_layers``. State: ``intermediate_size`` (must equal
    ``expand * hidden_size`` when both are given: transformers puts that in its place),
    ``state_size``, ``conv_kernel``.
``mamba2``
    Layers: all ``num_hidden_layers``. State: ``expand * hidden_size`` (must equal
    ``num_heads * head_dim``), ``num_heads``, ``head_dim``, ``n_groups``, ``state_size``,
    ``conv_kernel``. ``sglang`` sizes it by ``intermediate_size``, which must then be present.
``jamba`` (Mamba-1 layers)
    Layers: ``i < num_hidden_layers`` with ``i % attn_layer_period != attn_layer_offset``.
    State: ``mamba_expand * hidden_size``, ``mamba_d_state``, ``mamba_d_conv``.
``nemotron_h``
    Layers: the ``mamba``/``linear_attention`` entries of ``layers_block_type`` (other entries:
    attention, mlp, moe), else the ``M`` of ``hybrid_override_pattern`` (others: ``*-E``).
    State: ``mamba_num_heads``, ``mamba_head_dim``, ``n_groups`` (or ``mamba_n_groups``),
    ``ssm_state_size``, ``conv_kernel`` (or ``mamba_d_conv``). ``sglang``, as SGLang's own
    config class, takes the list in checkpoint names only and reads ``n_groups`` only.
``falcon_h1`` (attention and SSM side by side in every layer)
    Layers: all ``num_hidden_layers``. State: ``mamba_d_ssm`` (``null``:
    ``mamba_expand * hidden_size``), ``mamba_n_heads``, ``mamba_d_head`` (or ``"auto"``),
    ``mamba_n_groups``, ``mamba_d_state``, ``mamba_d_conv``.
``granitemoehybrid`` (Granite 4.0 H)
    Layers: the ``mamba``/``linear_attention`` entries of ``layer_types``, which has
    ``num_hidden_layers`` entries (others: attention). State: ``mamba_expand * hidden_size``,
    ``mamba_n_heads``, ``mamba_d_head`` (or ``"auto"``), ``mamba_n_groups``, ``mamba_d_state``,
    ``mamba_d_conv``.
``zamba2``
    Layers: every entry of ``layers_block_type`` (a ``hybrid`` layer holds a Mamba block too).
    State: ``mamba_expand * hidden_size``, ``n_mamba_heads`` (head dim ``d_inner / n_mamba_heads``;
    ``mamba_headdim``, if given, must agree), ``mamba_ngroups``, ``mamba_d_state``,
    ``mamba_d_conv``.
``qwen3_next`` (gated delta net)
    Layers: the ``linear_attention`` entries of ``layer_types`` (``num_hidden_layers`` of them),
    else ``i`` with ``(i + 1) % full_attention_interval != 0``; ``sglang`` reads the interval
    alone. State: ``linear_num_key_heads``, ``linear_num_value_heads``, ``linear_key_head_dim``,
    ``linear_value_head_dim``, ``linear_conv_kernel_dim``.

A config whose ``model_type`` is none of these is a plain transformer (zero SSM layers, zero bytes)
when it has ``num_hidden_layers`` and nothing SSM-like (no key containing ``mamba``, ``ssm``,
``conv_kernel``, ``linear_``, ``state_size`` or ``hybrid_override``, no recurrent layer type);
otherwise it is refused with the list of families. Multimodal wrappers are read through their
``text_config`` when that holds the family's ``model_type``.

The model dtype for ``vllm`` is the config's ``dtype`` (transformers 5) or ``torch_dtype``, else
``text_config``'s, as ``get_torch_dtype`` reads it; float32 and float64 become bfloat16 and a
config without a dtype is taken as bfloat16 (vLLM would read the weights' dtype), i.e. a GPU with
bfloat16 (compute capability 8.0 or later) is assumed. Sizes are the states' own; vLLM's padding
of a mamba page to the attention page size and prefix-caching copies are not included.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

__all__ = [
    "DTYPE_BYTES",
    "FAMILIES",
    "LAYOUTS",
    "ConfigSource",
    "ModelConfigError",
    "SsmState",
    "TensorParallelSplitError",
    "ssm_state",
]

LAYOUTS: Final = ("vllm", "sglang", "metrale")
DTYPE_BYTES: Final[Mapping[str, int]] = {"bfloat16": 2, "float16": 2, "float32": 4}
_DTYPE_ALIASES: Final[Mapping[str, str | None]] = {
    "auto": None,
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
    "float32": "float32",
    "fp32": "float32",
    "float": "float32",
}
# No checkpoint comes near this; it keeps a hostile config from building a huge layer tuple.
_MAX_LAYERS: Final = 100_000
# Tensor sizes are int64 in every server; a larger field describes no model.
_MAX_FIELD: Final = 2**63 - 1
_SSM_KEY_MARKS: Final = ("mamba", "ssm", "conv_kernel", "linear_", "state_size", "hybrid_override")
_SSM_LAYER_MARKS: Final = ("mamba", "linear", "hybrid", "conv", "recurrent", "ssm")
_LAYER_LIST_KEYS: Final = ("layer_types", "layers_block_type")
# Layer-list vocabularies: checkpoints' own names and transformers 5's normalised ones
# (transformers configuration_utils.py _LEGACY_LAYER_TYPE_REMAP maps mamba -> linear_attention).
_SSM_LAYERS: Final = frozenset({"mamba", "linear_attention"})
_ATTENTION_LAYERS: Final = frozenset({"attention", "full_attention"})


class ModelConfigError(ValueError):
    """A config (or an argument) ``ssm_state`` cannot size. The message is one line naming the
    file (when there is one), the family and the field; the same are in ``path``, ``family`` and
    ``field`` (``None`` where they do not apply)."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        family: str | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.family = family
        self.field = field


class TensorParallelSplitError(ModelConfigError):
    """The model cannot be split over ``tp_size`` ranks: a head or channel
    count that the servers shard evenly does not divide by it."""


@dataclass(frozen=True, slots=True)
class SsmState:
    """The SSM state of one sequence on one tensor-parallel rank, as ``layout`` lays it out.

    ``conv_shape`` and ``ssm_shape`` are one layer's, in the layout's dimension order; empty when
    there are no SSM layers. ``per_layer_bytes`` is ``conv_bytes + ssm_bytes`` and
    ``per_sequence_bytes`` is that times ``ssm_layers``; all are exact integers. ``*_dtype_rule``
    says which rule chose each dtype. ``source`` is the file the config came from, if any."""

    family: str
    model_type: str
    ssm_layers: int
    layer_indices: tuple[int, ...]
    conv_shape: tuple[int, ...]
    ssm_shape: tuple[int, ...]
    conv_dtype: str
    ssm_dtype: str
    conv_dtype_rule: str
    ssm_dtype_rule: str
    conv_bytes: int
    ssm_bytes: int
    per_layer_bytes: int
    per_sequence_bytes: int
    tp_size: int
    layout: str
    speculative_tokens: int
    source: str | None

    def as_dict(self) -> dict[str, object]:
        """Every field, tuples as lists: ready for ``json.dumps``."""
        return {
            field.name: list(value) if isinstance(value, tuple) else value
            for field in dataclasses.fields(self)
            for value in (getattr(self, field.name),)
        }


class _HasToDict(Protocol):
    def to_dict(self) -> Mapping[str, Any]: ...


ConfigSource = Mapping[str, Any] | str | os.PathLike[str] | _HasToDict


# --- geometry: what a family's fields say about one layer's state --------------------------------


@dataclass(frozen=True, slots=True)
class _Mamba1:
    d_inner: int
    d_state: int
    kernel: int
    inner_field: str


@dataclass(frozen=True, slots=True)
class _Mamba2:
    d_inner: int
    n_groups: int
    heads: int
    head_dim: int
    d_state: int
    kernel: int
    heads_field: str
    groups_field: str


@dataclass(frozen=True, slots=True)
class _Gdn:
    k_heads: int
    v_heads: int
    k_dim: int
    v_dim: int
    kernel: int


_Geometry = _Mamba1 | _Mamba2 | _Gdn


@dataclass(frozen=True, slots=True)
class _Parsed:
    geometry: _Geometry
    layers: tuple[int, ...]


def _show(value: object) -> str:
    """``value`` for an error message: one line, ASCII, short."""
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return ascii(value)
    if isinstance(value, int):
        # Beyond 4300 digits str() raises; beyond a few dozen nobody reads them.
        return ascii(value) if value.bit_length() <= 128 else f"<{value.bit_length()}-bit integer>"
    if isinstance(value, str):
        text = ascii(value[:64])
        return text if len(value) <= 64 else f"{text}... ({len(value)} characters)"
    return f"<{ascii(type(value).__name__)[1:-1]}>"


def _kind(value: object) -> str:
    return ascii(type(value).__name__)[1:-1]


class _Config:
    """One family's fields with what an error message names: file, family, field."""

    __slots__ = ("family", "fields", "path", "root")

    def __init__(
        self, fields: Mapping[str, Any], root: Mapping[str, Any], family: str, path: str | None
    ) -> None:
        self.fields = fields
        self.root = root
        self.family = family
        self.path = path

    def fail(
        self, field: str, problem: str, error: type[ModelConfigError] = ModelConfigError
    ) -> ModelConfigError:
        where = f"{self.path!a}: " if self.path is not None else ""
        return error(
            f"{where}{self.family} config: field {field!a}: {problem}",
            path=self.path,
            family=self.family,
            field=field,
        )

    def has(self, field: str) -> bool:
        return self.fields.get(field) is not None

    def int_(self, field: str, *, minimum: int = 1) -> int:
        if field not in self.fields:
            raise self.fail(field, "missing")
        return self._checked(field, self.fields[field], minimum)

    def opt_int(self, field: str, *, minimum: int = 1) -> int | None:
        value = self.fields.get(field)
        return None if value is None else self._checked(field, value, minimum)

    def int_or_auto(self, field: str, auto: Callable[[], int]) -> int:
        # transformers resolves "auto" (FalconH1Config / GraniteMoeHybridConfig.__post_init__).
        return auto() if self.fields.get(field) == "auto" else self.int_(field)

    def either_int(self, field: str, legacy: str) -> int:
        """``field``, or its legacy spelling, which transformers 5 prefers when both are given
        (``NemotronHConfig.__post_init__``); two disagreeing spellings are refused."""
        if field in self.fields and legacy in self.fields:
            new, old = self.int_(field), self.int_(legacy)
            if new != old:
                raise self.fail(legacy, f"is {_show(old)} but {field} is {_show(new)}")
            return new
        return self.int_(legacy if legacy in self.fields else field)

    def num_layers(self) -> int:
        layers = self.int_("num_hidden_layers", minimum=0)
        if layers > _MAX_LAYERS:
            raise self.fail("num_hidden_layers", f"{_show(layers)} layers is implausible")
        return layers

    def layer_list(
        self,
        field: str,
        ssm: frozenset[str],
        other: frozenset[str],
        length: int | None,
        note: str = "",
    ) -> tuple[int, ...]:
        """Indices of the entries of list ``field`` that are in ``ssm``; every entry must be in
        ``ssm`` or ``other`` (else the refusal ends with ``note``), and there must be ``length``
        of them when ``length`` is given."""
        if field not in self.fields:
            raise self.fail(field, "missing")
        value = self.fields[field]
        if not isinstance(value, list | tuple):
            raise self.fail(field, f"must be a list of layer types, got {_show(value)}")
        if len(value) > _MAX_LAYERS:
            raise self.fail(field, f"{len(value)} layers is implausible")
        if length is not None and len(value) != length:
            raise self.fail(field, f"has {len(value)} entries but num_hidden_layers is {length}")
        for index, entry in enumerate(value):
            if not isinstance(entry, str) or (entry not in ssm and entry not in other):
                expected = ", ".join(sorted(ssm | other))
                raise self.fail(
                    field, f"entry {index} is {_show(entry)}; expected {expected}{note}"
                )
        return tuple(index for index, entry in enumerate(value) if entry in ssm)

    def _checked(self, field: str, value: object, minimum: int) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.fail(field, f"must be an integer, got {_show(value)} ({_kind(value)})")
        if value < minimum:
            raise self.fail(field, f"must be at least {minimum}, got {_show(value)}")
        if value > _MAX_FIELD:
            raise self.fail(field, f"must be at most 2**63 - 1, got {_show(value)}")
        return value


# --- one reader per family -----------------------------------------------------------------------


def _read_mamba(cfg: _Config, layout: str) -> _Parsed:
    # vLLM 0.33 models/mamba.py:234-247 and SGLang configs/mamba.py:27-38 both read
    # intermediate_size, which transformers' MambaConfig.__post_init__ sets to expand*hidden_size.
    d_inner = cfg.int_("intermediate_size")
    expand, hidden = cfg.opt_int("expand"), cfg.opt_int("hidden_size")
    if expand is not None and hidden is not None and expand * hidden != d_inner:
        raise cfg.fail(
            "intermediate_size",
            f"is {_show(d_inner)} but expand*hidden_size is {_show(expand * hidden)}, which "
            "transformers puts in its place (MambaConfig.__post_init__)",
        )
    geometry = _Mamba1(
        d_inner, cfg.int_("state_size"), cfg.int_("conv_kernel"), "intermediate_size"
    )
    return _Parsed(geometry, tuple(range(cfg.num_layers())))


def _read_mamba2(cfg: _Config, layout: str) -> _Parsed:
    # vLLM 0.33 models/mamba2.py:184-213: intermediate_size = expand * hidden_size.
    heads, head_dim = cfg.int_("num_heads"), cfg.int_("head_dim")
    d_inner = cfg.int_("expand") * cfg.int_("hidden_size")
    if d_inner != heads * head_dim:
        # transformers Mamba2Config.validate_architecture refuses the config.
        raise cfg.fail(
            "num_heads", f"num_heads*head_dim {_show(heads * head_dim)} != {_show(d_inner)}"
        )
    given = cfg.opt_int("intermediate_size")
    if given is not None and given != d_inner:
        # vLLM's mixer would use it (models/mamba2.py:61-63) while its cache uses expand*hidden.
        raise cfg.fail(
            "intermediate_size", f"is {_show(given)} but expand*hidden_size is {_show(d_inner)}"
        )
    if layout == "sglang" and given is None:
        raise cfg.fail(
            "intermediate_size",
            "missing; SGLang 0.5.23 sizes mamba2 by config.intermediate_size "
            "(configs/mamba2.py:46-48), which transformers' Mamba2Config does not define",
        )
    geometry = _Mamba2(
        d_inner,
        cfg.int_("n_groups"),
        heads,
        head_dim,
        cfg.int_("state_size"),
        cfg.int_("conv_kernel"),
        "num_heads",
        "n_groups",
    )
    return _Parsed(geometry, tuple(range(cfg.num_layers())))


def _read_jamba(cfg: _Config, layout: str) -> _Parsed:
    # vLLM 0.33 models/jamba.py:470-483 (Mamba-1 state) and :293-322 (layers_block_type, which
    # transformers' JambaConfig derives from the attention period and offset).
    period = cfg.int_("attn_layer_period")
    offset = cfg.int_("attn_layer_offset", minimum=0)
    if offset >= period:
        # JambaConfig.validate_architecture refuses it.
        raise cfg.fail(
            "attn_layer_offset", f"{_show(offset)} is not below attn_layer_period {_show(period)}"
        )
    d_inner = cfg.int_("mamba_expand") * cfg.int_("hidden_size")
    geometry = _Mamba1(d_inner, cfg.int_("mamba_d_state"), cfg.int_("mamba_d_conv"), "mamba_expand")
    layers = tuple(i for i in range(cfg.num_layers()) if i % period != offset)
    return _Parsed(geometry, layers)


def _read_nemotron_h(cfg: _Config, layout: str) -> _Parsed:
    # vLLM 0.33 models/nemotron_h.py:780-811; SGLang configs/nemotron_h.py:425-439.
    heads, head_dim = cfg.int_("mamba_num_heads"), cfg.int_("mamba_head_dim")
    if layout == "sglang" and "n_groups" not in cfg.fields:
        # SGLang's NemotronHConfig keeps mamba_n_groups apart and reads self.n_groups (:430).
        raise cfg.fail("n_groups", "missing; SGLang 0.5.23 reads n_groups, not mamba_n_groups")
    geometry = _Mamba2(
        heads * head_dim,
        cfg.either_int("n_groups", "mamba_n_groups"),
        heads,
        head_dim,
        cfg.int_("ssm_state_size"),
        cfg.either_int("conv_kernel", "mamba_d_conv"),
        "mamba_num_heads",
        "n_groups",
    )
    return _Parsed(geometry, _nemotron_layers(cfg, layout))


def _nemotron_layers(cfg: _Config, layout: str) -> tuple[int, ...]:
    # The list wins over the pattern in transformers 5 and SGLang (configs/nemotron_h.py:196-206);
    # vLLM reads the pattern transformers derives from it (models/nemotron_h.py:597).
    if cfg.has("layers_block_type"):
        if layout == "sglang":
            # SGLang's NemotronHConfig validates the checkpoint vocabulary only (:167-192), so it
            # refuses a list transformers 5 wrote.
            note = " (SGLang 0.5.23 refuses transformers 5's linear_attention/full_attention)"
            other = frozenset({"attention", "mlp", "moe"})
            return cfg.layer_list("layers_block_type", frozenset({"mamba"}), other, None, note)
        other = frozenset({"attention", "full_attention", "mlp", "moe"})
        return cfg.layer_list("layers_block_type", _SSM_LAYERS, other, None)
    if "hybrid_override_pattern" not in cfg.fields:
        raise cfg.fail("hybrid_override_pattern", "missing (and no layers_block_type)")
    pattern = cfg.fields["hybrid_override_pattern"]
    if not isinstance(pattern, str):
        raise cfg.fail("hybrid_override_pattern", f"must be a string, got {_show(pattern)}")
    if len(pattern) > _MAX_LAYERS:
        raise cfg.fail("hybrid_override_pattern", f"{len(pattern)} layers is implausible")
    for index, char in enumerate(pattern):
        if char not in "M*-E":
            raise cfg.fail(
                "hybrid_override_pattern", f"character {index} is {_show(char)}; expected M * - E"
            )
    return tuple(index for index, char in enumerate(pattern) if char == "M")


def _read_falcon_h1(cfg: _Config, layout: str) -> _Parsed:
    # vLLM 0.33 models/falcon_h1.py:538-572 and :112-116; SGLang configs/falcon_h1.py:211-223.
    if "mamba_d_ssm" not in cfg.fields:
        # transformers would default it to 1024, whatever the model; refuse to guess.
        raise cfg.fail("mamba_d_ssm", "missing")
    if cfg.fields["mamba_d_ssm"] is None:
        d_inner = cfg.int_("mamba_expand") * cfg.int_("hidden_size")
    else:
        d_inner = cfg.int_("mamba_d_ssm")
    return _Parsed(_mamba2_heads(cfg, d_inner), tuple(range(cfg.num_layers())))


def _read_granitemoehybrid(cfg: _Config, layout: str) -> _Parsed:
    # vLLM 0.33 models/granitemoehybrid.py:617-646 and :321-350; SGLang
    # configs/granitemoehybrid.py:29-32, 239-251, 286-310.
    d_inner = cfg.int_("mamba_expand") * cfg.int_("hidden_size")
    layers = cfg.layer_list("layer_types", _SSM_LAYERS, _ATTENTION_LAYERS, cfg.num_layers())
    return _Parsed(_mamba2_heads(cfg, d_inner), layers)


def _mamba2_heads(cfg: _Config, d_inner: int) -> _Mamba2:
    """Falcon-H1 and Granite 4.0 H: ``mamba_n_heads`` heads of ``mamba_d_head`` over ``d_inner``,
    as their transformers configs' ``validate_architecture`` requires."""
    heads = cfg.int_("mamba_n_heads")
    head_dim = cfg.int_or_auto("mamba_d_head", lambda: d_inner // heads)
    if heads * head_dim != d_inner:
        raise cfg.fail(
            "mamba_d_head",
            f"{_show(heads)} heads of {_show(head_dim)} do not make {_show(d_inner)}",
        )
    return _Mamba2(
        d_inner,
        cfg.int_("mamba_n_groups"),
        heads,
        head_dim,
        cfg.int_("mamba_d_state"),
        cfg.int_("mamba_d_conv"),
        "mamba_n_heads",
        "mamba_n_groups",
    )


def _read_zamba2(cfg: _Config, layout: str) -> _Parsed:
    # vLLM 0.33 models/zamba2.py:869-897, mixer :530-545, layers :751-780 (anything but "hybrid"
    # is a Mamba layer, and a hybrid layer wraps one).
    d_inner = cfg.int_("mamba_expand") * cfg.int_("hidden_size")
    heads = cfg.int_("n_mamba_heads")
    if d_inner % heads:
        raise cfg.fail(
            "n_mamba_heads", f"{_show(heads)} heads do not divide mamba_expand*hidden_size"
        )
    given = cfg.opt_int("mamba_headdim")
    if given is not None and given != d_inner // heads:
        # transformers' Zamba2Config.__post_init__ overwrites it with d_inner // n_mamba_heads.
        raise cfg.fail(
            "mamba_headdim",
            f"is {_show(given)} but d_inner/n_mamba_heads is {_show(d_inner // heads)}",
        )
    geometry = _Mamba2(
        d_inner,
        cfg.int_("mamba_ngroups"),
        heads,
        d_inner // heads,
        cfg.int_("mamba_d_state"),
        cfg.int_("mamba_d_conv"),
        "n_mamba_heads",
        "mamba_ngroups",
    )
    layers = cfg.layer_list("layers_block_type", _SSM_LAYERS | {"hybrid"}, frozenset(), None)
    return _Parsed(geometry, layers)


def _read_qwen3_next(cfg: _Config, layout: str) -> _Parsed:
    # vLLM 0.33 models/qwen3_next.py:893-913 (hf_text_config) and :500-512, :668.
    geometry = _Gdn(
        cfg.int_("linear_num_key_heads"),
        cfg.int_("linear_num_value_heads"),
        cfg.int_("linear_key_head_dim"),
        cfg.int_("linear_value_head_dim"),
        cfg.int_("linear_conv_kernel_dim"),
    )
    layers = cfg.num_layers()
    if layout != "sglang" and cfg.has("layer_types"):
        return _Parsed(
            geometry, cfg.layer_list("layer_types", _SSM_LAYERS, _ATTENTION_LAYERS, layers)
        )
    if not cfg.has("full_attention_interval"):
        why = (
            "SGLang 0.5.23 counts linear layers by it alone (configs/qwen3_next.py:259-268)"
            if layout == "sglang"
            else "needed when there is no layer_types"
        )
        raise cfg.fail("full_attention_interval", f"missing; {why}")
    interval = cfg.int_("full_attention_interval")
    return _Parsed(geometry, tuple(i for i in range(layers) if (i + 1) % interval))


@dataclass(frozen=True, slots=True)
class _Family:
    read: Callable[[_Config, str], _Parsed]
    # SGLang 0.5.23 has a config class with mamba2_cache_params for it.
    sglang: bool
    # That mamba2_cache_params passes the config to mamba2_state_dtype (mamba_ssm_dtype counts).
    sglang_config_ssm_dtype: bool = False
    # vLLM's NemotronHForCausalLMConfig sets --mamba-ssm-cache-dtype from the config.
    vllm_config_ssm_dtype: bool = False


_FAMILIES: Final[Mapping[str, _Family]] = {
    "falcon_h1": _Family(_read_falcon_h1, sglang=True, sglang_config_ssm_dtype=True),
    "granitemoehybrid": _Family(_read_granitemoehybrid, sglang=True),
    "jamba": _Family(_read_jamba, sglang=False),
    "mamba": _Family(_read_mamba, sglang=True),
    "mamba2": _Family(_read_mamba2, sglang=True),
    "nemotron_h": _Family(
        _read_nemotron_h, sglang=True, sglang_config_ssm_dtype=True, vllm_config_ssm_dtype=True
    ),
    "qwen3_next": _Family(_read_qwen3_next, sglang=True, sglang_config_ssm_dtype=True),
    "zamba2": _Family(_read_zamba2, sglang=False),
}
FAMILIES: Final = tuple(sorted(_FAMILIES))


# --- shapes: one layer, one sequence, one rank ---------------------------------------------------


def _shapes(
    cfg: _Config, geometry: _Geometry, layout: str, tp: int, spec: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(conv shape, ssm shape) in ``layout``'s order, refusing what the servers refuse."""
    if isinstance(geometry, _Mamba1):
        # vLLM mamba_utils.py:170-183 (divide() asserts, distributed/utils.py:130-134);
        # SGLang mamba_utils.py:245-290 asserts it too (:271).
        channels = _divide(cfg, geometry.inner_field, geometry.d_inner, tp)
        k = geometry.kernel
        if layout == "vllm":
            return (k - 1, channels), (channels, geometry.d_state)
        if layout == "sglang":
            return (channels, k - 1), (channels, 1, geometry.d_state)
        return (k, channels), (channels, geometry.d_state)
    if isinstance(geometry, _Mamba2):
        heads = _divide(cfg, geometry.heads_field, geometry.heads, tp)
        groups = geometry.n_groups
        if groups % tp and groups != 1:
            # vLLM layers/mamba/mamba_mixer2.py:320-323, SGLang layers/attention/mamba/mamba.py:249.
            raise cfg.fail(
                geometry.groups_field,
                f"tp_size {_show(tp)} does not divide {_show(groups)} groups, and only 1 group is "
                "replicated",
                TensorParallelSplitError,
            )
        # extra_groups_for_head_shards: vLLM mamba_utils.py:260-269, SGLang mamba_utils.py:29-38.
        groups += 0 if groups % tp == 0 else tp - groups
        conv_dim = geometry.d_inner + 2 * groups * geometry.d_state
        # Divides: d_inner is heads x head_dim and the heads divided; groups
        # is a multiple of tp, divided or replicated.
        channels = conv_dim // tp
        ssm = (heads, geometry.head_dim, geometry.d_state)
    else:
        # vLLM mamba_utils.py:271-293 and gdn/qwen_gdn_linear_attn.py:647-652 (value heads),
        # :957 (key heads per rank); SGLang configs/qwen3_next.py:288-313 feeds Mamba2StateShape
        # n_groups = key heads, which it never extends once they divide.
        _divide(cfg, "linear_num_key_heads", geometry.k_heads, tp)
        heads = _divide(cfg, "linear_num_value_heads", geometry.v_heads, tp)
        conv_dim = 2 * geometry.k_heads * geometry.k_dim + geometry.v_heads * geometry.v_dim
        channels = conv_dim // tp  # divides: both head counts divided just above
        ssm = (heads, geometry.v_dim, geometry.k_dim)
    k = geometry.kernel
    # vLLM mamba2_state_shape / gated_delta_net_state_shape: conv_kernel - 1 + num_spec,
    # (state_len, dim) in the default SD layout; SGLang mamba_utils.py:225: (dim, K - 1).
    if layout == "vllm":
        return (k - 1 + spec, channels), ssm
    if layout == "sglang":
        return (channels, k - 1), ssm
    return (k, channels), ssm


def _divide(cfg: _Config, field: str, value: int, tp: int) -> int:
    if value % tp:
        raise cfg.fail(
            field,
            f"tp_size {_show(tp)} does not divide {_show(value)}; the servers shard it evenly",
            TensorParallelSplitError,
        )
    return value // tp


# --- dtypes --------------------------------------------------------------------------------------


def _dtype_argument(name: str, value: object) -> str | None:
    """The canonical dtype an override names, ``None`` for no override (``None``, ``"auto"``)."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() in _DTYPE_ALIASES:
        return _DTYPE_ALIASES[value.strip().lower()]
    raise ModelConfigError(
        f"argument {name}: unknown dtype {_show(value)}; use bfloat16, float16 or float32 "
        "(or bf16, fp16, half, fp32, float, auto)",
        field=name,
    )


def _vllm_model_dtype(cfg: _Config) -> tuple[str, str]:
    """vLLM's ``--dtype auto`` for the config (config/model.py:2423-2464 and
    transformers_utils/model_arch_config_convertor.py:201-239), on a bfloat16-capable GPU."""
    text = cfg.root.get("text_config")
    for where in (cfg.root, text if isinstance(text, Mapping) else {}):
        for key in ("dtype", "torch_dtype"):
            raw = where.get(key)
            if raw is None:
                continue
            if raw in ("bfloat16", "float16"):
                return str(raw), f"config {key} {raw} (vLLM: model dtype)"
            if raw in ("float32", "float64"):
                # Float32 models are downcast; float64 is unsupported and falls back likewise.
                return "bfloat16", f"config {key} {raw}, as bfloat16 (vLLM: model dtype)"
            raise cfg.fail(key, f"unknown dtype {_show(raw)}")
    return "bfloat16", "no dtype in config: bfloat16 (vLLM: weights' dtype, float32 downcast)"


def _dtypes(
    cfg: _Config,
    family: _Family | None,
    layout: str,
    conv_override: str | None,
    ssm_override: str | None,
) -> tuple[str, str, str, str]:
    """(conv dtype, its rule, ssm dtype, its rule)."""
    if conv_override is not None:
        conv, conv_rule = conv_override, "override --conv-dtype"
    elif layout == "metrale":
        conv, conv_rule = "float32", "metrale: float32"
    elif layout == "sglang":
        # SGLang mamba_utils.py:68 and environ.py:1628 (SGLANG_MAMBA_CONV_DTYPE).
        conv, conv_rule = "bfloat16", "SGLang default bfloat16"
    else:
        conv, conv_rule = _vllm_model_dtype(cfg)
    if ssm_override is not None:
        return conv, conv_rule, ssm_override, "override --ssm-dtype"
    if layout == "metrale":
        return conv, conv_rule, "float32", "metrale: float32"
    if layout == "sglang":
        return conv, conv_rule, *_sglang_ssm_dtype(cfg, family)
    return conv, conv_rule, *_vllm_ssm_dtype(cfg, family, conv)


def _sglang_ssm_dtype(cfg: _Config, family: _Family | None) -> tuple[str, str]:
    # SGLang mamba_utils.py:70-92: float32 unless the config passed in says mamba_ssm_dtype.
    raw = cfg.fields.get("mamba_ssm_dtype")
    if family is None or not family.sglang_config_ssm_dtype or raw is None:
        return "float32", "SGLang default float32"
    if isinstance(raw, str) and raw in DTYPE_BYTES:
        return raw, "config mamba_ssm_dtype (SGLang)"
    return "float32", f"config mamba_ssm_dtype {_show(raw)} invalid: SGLang default float32"


def _vllm_ssm_dtype(cfg: _Config, family: _Family | None, conv: str) -> tuple[str, str]:
    # vLLM mamba_utils.py:97-110: an "auto" SSM dtype is the conv state's; models/config.py:
    # 812-839 makes NemotronH's "auto" the config's mamba_ssm_cache_dtype, else float32.
    follow = (conv, "as conv state (vLLM: mamba_ssm_cache_dtype auto)")
    if family is None or not family.vllm_config_ssm_dtype:
        return follow
    if "mamba_ssm_cache_dtype" not in cfg.fields:
        return "float32", "vLLM NemotronH default float32"
    raw = cfg.fields["mamba_ssm_cache_dtype"]
    if isinstance(raw, str) and raw in DTYPE_BYTES:
        return raw, "config mamba_ssm_cache_dtype (vLLM NemotronH)"
    if raw == "auto":
        return follow
    raise cfg.fail("mamba_ssm_cache_dtype", f"unknown dtype {_show(raw)}")


# --- loading -------------------------------------------------------------------------------------


def _load(config: object) -> tuple[Mapping[str, Any], str | None]:
    """The config mapping and the file it came from."""
    if isinstance(config, Mapping):
        return config, None
    if isinstance(config, str | os.PathLike):
        return _read_file(config)
    to_dict = getattr(config, "to_dict", None)
    if callable(to_dict):
        mapping = to_dict()
        if not isinstance(mapping, Mapping):
            raise ModelConfigError(f"config.to_dict() returned {_kind(mapping)}, not a mapping")
        return mapping, None
    raise TypeError(
        "config must be a mapping, a path to config.json or its directory, or have to_dict(), "
        f"not {type(config).__name__}"
    )


def _read_file(given: str | os.PathLike[str]) -> tuple[Mapping[str, Any], str]:
    raw = os.fspath(given)
    if not isinstance(raw, str):
        raise TypeError(f"a config path must be str, not {type(raw).__name__}")
    path = Path(raw)
    if path.is_dir():
        path = path / "config.json"
        if not path.is_file():
            raise ModelConfigError(f"{raw!a}: directory has no config.json", path=raw)
    name = os.fspath(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError) as error:
        # ValueError: undecodable bytes, or a NUL in the path.
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        raise ModelConfigError(f"{name!a}: cannot read: {_show(str(reason))}", path=name) from None
    try:
        # HF configs write Infinity (time_step_limit), which json accepts.
        mapping = json.loads(text)
    except json.JSONDecodeError as error:
        raise ModelConfigError(
            f"{name!a}: malformed JSON: {error.msg} at line {error.lineno} column {error.colno}",
            path=name,
        ) from None
    except RecursionError:
        raise ModelConfigError(f"{name!a}: malformed JSON: nested too deep", path=name) from None
    if not isinstance(mapping, dict):
        raise ModelConfigError(f"{name!a}: JSON is {_kind(mapping)}, not an object", path=name)
    return mapping, name


def _ssm_marks(fields: Mapping[str, Any]) -> list[str]:
    """What makes ``fields`` look like an SSM model's config."""
    marks = [
        key for key in fields if isinstance(key, str) and any(m in key for m in _SSM_KEY_MARKS)
    ]
    for key in _LAYER_LIST_KEYS:
        entries = fields.get(key)
        if isinstance(entries, list | tuple) and any(
            isinstance(entry, str) and any(m in entry for m in _SSM_LAYER_MARKS)
            for entry in entries
        ):
            marks.append(key)
    return marks


def _family_fields(root: Mapping[str, Any], path: str | None) -> Mapping[str, Any] | None:
    """The mapping that holds a family's fields: the config, or the ``text_config`` of a
    multimodal wrapper; ``None`` for a plain transformer. Refuses any other config."""
    model_type = root.get("model_type")
    if isinstance(model_type, str) and model_type in _FAMILIES:
        return root
    text = root.get("text_config")
    if isinstance(text, Mapping):
        text_type = text.get("model_type")
        if isinstance(text_type, str) and text_type in _FAMILIES:
            return text
    refusal = _unknown(root, path)
    if refusal is not None:
        raise refusal
    return None


def _unknown(root: Mapping[str, Any], path: str | None) -> ModelConfigError | None:
    """The refusal for a config no family reads, or ``None`` for a plain transformer."""
    where = f"{path!a}: " if path is not None else ""
    model_type = root.get("model_type")
    if not isinstance(model_type, str):
        problem = "missing" if model_type is None else f"must be a string, got {_show(model_type)}"
        return ModelConfigError(
            f"{where}field 'model_type': {problem}", path=path, field="model_type"
        )
    text = root.get("text_config")
    marks = _ssm_marks(root) + (_ssm_marks(text) if isinstance(text, Mapping) else [])
    layers = root.get("num_hidden_layers")
    if layers is None and isinstance(text, Mapping):
        layers = text.get("num_hidden_layers")
    if not marks and isinstance(layers, int) and not isinstance(layers, bool) and layers >= 0:
        return None
    why = (
        f"has SSM fields ({', '.join(_show(mark) for mark in marks[:4])})"
        if marks
        else "is not a plain transformer (no integer num_hidden_layers)"
    )
    return ModelConfigError(
        f"{where}field 'model_type': unknown model_type {_show(model_type)} {why}; "
        f"supported families: {', '.join(FAMILIES)}",
        path=path,
        field="model_type",
    )


def _check_count(name: str, value: object, minimum: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if not minimum <= value <= _MAX_FIELD:
        raise ModelConfigError(
            f"argument {name}: must be from {minimum} to 2**63 - 1, got {_show(value)}",
            field=name,
        )
    return value


def ssm_state(
    config: ConfigSource,
    *,
    tp_size: int = 1,
    layout: str = "vllm",
    conv_dtype: str | None = None,
    ssm_dtype: str | None = None,
    speculative_tokens: int = 0,
) -> SsmState:
    """The per-sequence SSM state of the model ``config`` describes, on one of ``tp_size``
    tensor-parallel ranks, as ``layout`` (``"vllm"``, ``"sglang"`` or ``"metrale"``) lays it out.

    ``config`` is a mapping parsed from ``config.json``, a path to that file or to a directory
    holding it, or an object with ``to_dict()``. ``conv_dtype`` / ``ssm_dtype`` override the
    layout's dtype rules (``bfloat16``, ``float16``, ``float32`` or an alias; ``auto`` or ``None``
    keeps the rule). ``speculative_tokens`` widens the conv window where vLLM does.

    Raises ``ModelConfigError`` (a ``ValueError``) for a config, layout, dtype or ``tp_size`` the
    servers would refuse or this module cannot read, and ``TypeError`` for a ``tp_size``,
    ``speculative_tokens`` or ``config`` of the wrong type. Arithmetic is exact."""
    tp = _check_count("tp_size", tp_size, 1)
    spec = _check_count("speculative_tokens", speculative_tokens, 0)
    if not isinstance(layout, str) or layout not in LAYOUTS:
        raise ModelConfigError(
            f"argument layout: unknown layout {_show(layout)}; use {', '.join(LAYOUTS)}",
            field="layout",
        )
    conv_override = _dtype_argument("conv_dtype", conv_dtype)
    ssm_override = _dtype_argument("ssm_dtype", ssm_dtype)
    root, path = _load(config)
    fields = _family_fields(root, path)
    if fields is None:
        return _transformer(root, path, tp, layout, spec, conv_override, ssm_override)
    model_type = root.get("model_type")
    family_name = str(fields["model_type"])
    family = _FAMILIES[family_name]
    cfg = _Config(fields, root, family_name, path)
    if layout == "sglang" and not family.sglang:
        raise cfg.fail(
            "model_type",
            f"SGLang 0.5.23 has no {family_name} model (no config with mamba2_cache_params); "
            "use layout vllm or metrale",
        )
    parsed = family.read(cfg, layout)
    conv, conv_rule, ssm, ssm_rule = _dtypes(cfg, family, layout, conv_override, ssm_override)
    conv_shape: tuple[int, ...] = ()
    ssm_shape: tuple[int, ...] = ()
    if parsed.layers:
        # With no SSM layer the servers build no mixer, so nothing is refused.
        conv_shape, ssm_shape = _shapes(cfg, parsed.geometry, layout, tp, spec)
    conv_bytes = math.prod(conv_shape) * DTYPE_BYTES[conv] if conv_shape else 0
    ssm_bytes = math.prod(ssm_shape) * DTYPE_BYTES[ssm] if ssm_shape else 0
    return SsmState(
        family=family_name,
        model_type=str(model_type) if isinstance(model_type, str) else family_name,
        ssm_layers=len(parsed.layers),
        layer_indices=parsed.layers,
        conv_shape=conv_shape,
        ssm_shape=ssm_shape,
        conv_dtype=conv,
        ssm_dtype=ssm,
        conv_dtype_rule=conv_rule,
        ssm_dtype_rule=ssm_rule,
        conv_bytes=conv_bytes,
        ssm_bytes=ssm_bytes,
        per_layer_bytes=conv_bytes + ssm_bytes,
        per_sequence_bytes=(conv_bytes + ssm_bytes) * len(parsed.layers),
        tp_size=tp,
        layout=layout,
        speculative_tokens=spec,
        source=path,
    )


def _transformer(
    root: Mapping[str, Any],
    path: str | None,
    tp: int,
    layout: str,
    spec: int,
    conv_override: str | None,
    ssm_override: str | None,
) -> SsmState:
    cfg = _Config(root, root, "transformer", path)
    conv, conv_rule, ssm, ssm_rule = _dtypes(cfg, None, layout, conv_override, ssm_override)
    return SsmState(
        family="transformer",
        model_type=str(root["model_type"]),
        ssm_layers=0,
        layer_indices=(),
        conv_shape=(),
        ssm_shape=(),
        conv_dtype=conv,
        ssm_dtype=ssm,
        conv_dtype_rule=conv_rule,
        ssm_dtype_rule=ssm_rule,
        conv_bytes=0,
        ssm_bytes=0,
        per_layer_bytes=0,
        per_sequence_bytes=0,
        tp_size=tp,
        layout=layout,
        speculative_tokens=spec,
        source=path,
    )
