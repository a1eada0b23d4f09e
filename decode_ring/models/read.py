"""``ssm_state``: from a config to the state every recurrent layer holds, per layout."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from ..printable import show
from ..releases import SGLANG, VLLM
from .attention import check_split, gqa
from .dtypes import NO_HOOKS, DtypeRules, dtype_argument
from .errors import ModelConfigError, refuse_argument
from .families import FAMILIES, REGISTRY, REMOVED, Family, Geometry, Parsed
from .fields import MAX_FIELD, Fields
from .kinds import KINDS
from .loading import WRAPPERS, ConfigSource, LoadedConfig, load, unknown
from .state import AttentionLayers, LayerStates, Sizing, SsmState, StateTensor

__all__ = ["LAYOUTS", "load_config", "ssm_state", "text_config"]

LAYOUTS: Final = ("vllm", "sglang", "metrale")
_MODEL_TYPES: Final[Mapping[str, str]] = {
    model_type: name for name, family in REGISTRY.items() for model_type in family.model_types
}


def _check_count(name: str, value: object, minimum: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if not minimum <= value <= MAX_FIELD:
        raise refuse_argument(name, f"must be from {minimum} to 2**63 - 1, got {show(value)}")
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
    """The per-sequence recurrent state of the model ``config`` describes, on one of
    ``tp_size`` tensor-parallel ranks, as ``layout`` (``"vllm"``, ``"sglang"`` or
    ``"metrale"``) lays it out, with the model's attention side.

    ``config`` is a mapping parsed from ``config.json``, a path to that file or to a directory
    holding it, or an object with ``to_dict()``. ``conv_dtype`` / ``ssm_dtype`` override the
    layout's dtype rules (``bfloat16``, ``float16``, ``float32`` or an alias; ``auto`` or ``None``
    keeps the rule). ``speculative_tokens`` widens the conv window where vLLM does.

    Raises ``ModelConfigError`` (a ``ValueError``) for a config, layout, dtype or ``tp_size`` the
    servers would refuse or this package cannot read (``TensorParallelSplitError`` for a split),
    and ``TypeError`` for a ``tp_size``, ``speculative_tokens`` or ``config`` of the wrong type.
    Arithmetic is exact."""
    tp = _check_count("tp_size", tp_size, 1)
    spec = _check_count("speculative_tokens", speculative_tokens, 0)
    if not isinstance(layout, str) or layout not in LAYOUTS:
        raise refuse_argument("layout", f"unknown layout {show(layout)}; use {', '.join(LAYOUTS)}")
    conv_override = dtype_argument("conv_dtype", conv_dtype)
    ssm_override = dtype_argument("ssm_dtype", ssm_dtype)
    loaded = load(config)
    root, path = loaded.mapping, loaded.path
    found = _find(root, path)
    if found is None:
        refusal = unknown(root, path, FAMILIES)
        if refusal is not None:
            raise refusal
        cfg = Fields(root, root, "transformer", path)
        rules = DtypeRules(cfg, NO_HOOKS, layout, conv_override, ssm_override)
        parsed = Parsed((), _plain_attention(cfg))
        return _assemble(cfg, str(root["model_type"]), parsed, Sizing(layout, tp, spec, rules))
    name, fields = found
    family = REGISTRY[name]
    cfg = Fields(fields, root, name, path)
    parsed = family.read(cfg, _server(cfg, family, layout))
    rules = DtypeRules(cfg, family.hooks, layout, conv_override, ssm_override)
    model_type = root.get("model_type")
    shown = model_type if isinstance(model_type, str) else str(fields["model_type"])
    return _assemble(cfg, shown, parsed, Sizing(layout, tp, spec, rules))


def load_config(config: ConfigSource) -> LoadedConfig:
    """``config`` read once (a ``LoadedConfig`` is returned as it is), for callers that hand
    one config to several readers. Raises as ``ssm_state`` does for a config it cannot read."""
    return load(config)


def text_config(config: LoadedConfig) -> Mapping[str, Any]:
    """The mapping that holds the language model's fields, where ``ssm_state`` finds its
    family's: a wrapper's ``text_config`` / ``llm_config`` (vLLM's ``get_hf_text_config``,
    vllm/transformers_utils/config.py), else the config itself. Raises as ``ssm_state`` does
    for a wrapper without its text config or a family vLLM removed."""
    found = _find(config.mapping, config.path)
    return config.mapping if found is None else found[1]


def _find(root: Mapping[str, Any], path: str | None) -> tuple[str, Mapping[str, Any]] | None:
    """The family that reads the config and the mapping holding its fields: the config itself,
    the text config of a wrapper the family names, or the first wrapper (``text_config``,
    ``llm_config``: vLLM reads the latter as the former, transformers_utils/config.py:195-197)
    whose ``model_type`` a family reads. Refuses a family vLLM removed."""
    wrapped = [root.get(key) for key in WRAPPERS]
    for where in (root, *wrapped):
        if not isinstance(where, Mapping):
            continue
        model_type = where.get("model_type")
        if isinstance(model_type, str) and model_type in REMOVED:
            _refuse_removed(model_type, path)
        name = _MODEL_TYPES.get(model_type) if isinstance(model_type, str) else None
        if name is None:
            continue
        if not REGISTRY[name].wrapper:
            return name, where
        if where is root:
            text = next((item for item in wrapped if isinstance(item, Mapping)), None)
            if text is None and REGISTRY[name].flat:
                return name, root
            if text is None:
                cfg = Fields(root, root, name, path)
                raise cfg.fail("text_config", "missing; the wrapper keeps its language model there")
            return name, text
    return None


def _refuse_removed(model_type: str, path: str | None) -> None:
    name, version = REMOVED[model_type]
    where = f"{path!a}: " if path is not None else ""
    raise ModelConfigError(
        f"{where}field 'model_type': vLLM removed {name} in version {version}; {SGLANG} has "
        f"no {name} ({model_type!a}: vllm/model_executor/models/registry.py:841-895)",
        path=path,
        family=model_type,
        field="model_type",
    )


def _server(cfg: Fields, family: Family, layout: str) -> str:
    """Whose reading of the family to follow: the layout's own server, and for metrale vLLM's
    where vLLM serves the family, else SGLang's. Refuses a layout whose server lacks it."""
    if layout == "vllm" and family.vllm is None:
        raise cfg.fail(
            "model_type", f"{VLLM} has no {cfg.family} model; use layout sglang or metrale"
        )
    if layout == "sglang" and family.sglang is None:
        raise cfg.fail(
            "model_type",
            f"{SGLANG} has no {cfg.family} model (no config with mamba2_cache_params); "
            "use layout vllm or metrale",
        )
    if layout == "metrale":
        return "vllm" if family.vllm is not None else "sglang"
    return layout


def _plain_attention(cfg: Fields) -> AttentionLayers | None:
    """A plain transformer's attention: every layer, when the config gives its heads."""
    if not cfg.has("num_attention_heads") or not (cfg.has("hidden_size") or cfg.has("head_dim")):
        return None
    return gqa(cfg, tuple(range(cfg.num_layers())))


def _assemble(cfg: Fields, model_type: str, parsed: Parsed, sizing: Sizing) -> SsmState:
    groups = tuple(
        sorted(
            (_group(cfg, geometry, layers, sizing) for geometry, layers in parsed.groups if layers),
            key=lambda group: group.layer_indices[0],
        )
    )
    if parsed.attention is not None:
        check_split(cfg, parsed.attention, sizing.tp)
    indices = tuple(sorted(index for group in groups for index in group.layer_indices))
    per_layer = {group.per_layer_bytes for group in groups}
    conv, ssm = _compatible(groups)
    conv_dtype, conv_rule = (conv.dtype, conv.dtype_rule) if conv else sizing.dtypes.conv()
    ssm_dtype, ssm_rule = (ssm.dtype, ssm.dtype_rule) if ssm else sizing.dtypes.ssm()
    return SsmState(
        family=cfg.family,
        model_type=model_type,
        layout=sizing.layout,
        tp_size=sizing.tp,
        speculative_tokens=sizing.spec,
        source=cfg.path,
        groups=groups,
        attention=parsed.attention,
        ssm_layers=len(indices),
        layer_indices=indices,
        per_sequence_bytes=sum(group.bytes for group in groups),
        conv_shape=conv.shape if conv else (),
        ssm_shape=ssm.shape if ssm else (),
        conv_dtype=conv_dtype,
        ssm_dtype=ssm_dtype,
        conv_dtype_rule=conv_rule,
        ssm_dtype_rule=ssm_rule,
        conv_bytes=conv.bytes if conv else 0,
        ssm_bytes=ssm.bytes if ssm else 0,
        per_layer_bytes=per_layer.pop() if len(per_layer) == 1 else (None if per_layer else 0),
    )


def _group(
    cfg: Fields, read: Callable[[], Geometry], layers: tuple[int, ...], sizing: Sizing
) -> LayerStates:
    geometry = read()
    tensors = geometry.tensors(cfg, sizing)
    per_layer = sum(tensor.bytes for tensor in tensors)
    return LayerStates(geometry.traits.name, layers, tensors, per_layer, per_layer * len(layers))


def _compatible(
    groups: tuple[LayerStates, ...],
) -> tuple[StateTensor | None, StateTensor | None]:
    """The one conv and the one state tensor, where one kind of layer holds exactly those."""
    if len(groups) != 1 or not KINDS[groups[0].kind].one_conv_one_state:
        return None, None
    conv, state = groups[0].tensors
    return conv, state
