"""``ssm_state``: from a config to the state every recurrent layer holds, per layout.

A config is read as the layout's server reads it: the family that reads its model type (in the
config, or in a wrapper's text config), the architecture it names (each server keys model
classes and dtype hooks by it), and the config class the server builds (``classes``: defaults,
derived fields, aliases, refusals), before the family's reader lays its layers out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from ..printable import show
from ..releases import SGLANG, VLLM, Release, ResolvedRelease, resolve_release
from ..releases import sglang as sglang_releases
from ..releases.versions import parse_version
from ..releases.vllm import VllmRules, served_releases, vllm_rules
from .attention import check_split, gqa
from .classes import Built, ClassReading, built, config_class, table
from .dtypes import (
    NEMOTRON_H_HOOK,
    NO_HOOKS,
    VLLM_SSM_HOOKS,
    DtypeRules,
    VllmSsmHook,
    dtype_argument,
)
from .errors import ModelConfigError, NotModelledError, refuse_argument
from .families import FAMILIES, REGISTRY, REMOVED, WRAPPED, Family, Geometry, Parsed
from .fields import MAX_FIELD, Fields
from .kinds import KINDS
from .loading import WRAPPERS, ConfigSource, LoadedConfig, load, unknown
from .state import AttentionLayers, LayerStates, Sizing, SsmState, StateTensor

__all__ = ["LAYOUTS", "VIEWS", "class_fields", "load_config", "ssm_state", "text_config"]

LAYOUTS: Final = ("vllm", "sglang", "metrale")
VIEWS: Final = ("layer", "model")
_MODEL_TYPES: Final[Mapping[str, str]] = {
    model_type: name for name, family in REGISTRY.items() for model_type in family.model_types
}
_RELEASES: Final[Mapping[str, Release]] = {"vllm": VLLM, "sglang": SGLANG}


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
    view: str = "layer",
    version: str | None = None,
) -> SsmState:
    """The per-sequence recurrent state of the model ``config`` describes, on one of
    ``tp_size`` tensor-parallel ranks, as ``layout`` (``"vllm"``, ``"sglang"`` or
    ``"metrale"``) lays it out, with the model's attention side.

    ``config`` is a mapping parsed from ``config.json``, a path to that file or to a directory
    holding it, or an object with ``to_dict()``. ``conv_dtype`` / ``ssm_dtype`` override the
    layout's dtype rules (``bfloat16``, ``float16``, ``float32`` or an alias; ``auto`` or ``None``
    keeps the rule). ``speculative_tokens`` widens the conv window where vLLM does. ``view``
    (vLLM's two views of a layer's state): ``"layer"``, what the layer allocates
    (``get_state_shape`` / ``get_state_dtype``), or ``"model"``, what the model-level
    ``get_mamba_state_shape_from_config`` / ``..._dtype_from_config`` say, which set vLLM's
    block alignment and page padding; the same under the other layouts. ``version``: the
    release of the layout's server whose rules to follow (``releases.resolve_release``; ``None``,
    the newest modelled); the metrale layout has none.

    Raises ``ModelConfigError`` (a ``ValueError``) for a config, layout, dtype or ``tp_size`` the
    servers would refuse or this package cannot read (``TensorParallelSplitError`` for a split,
    ``NotModelledError`` for a family the package does not model yet; the release's refusals,
    such as an architecture it does not serve), ``UnmodelledReleaseError`` (a ``ValueError``)
    for a ``version`` not modelled, and ``TypeError`` for a ``tp_size``, ``speculative_tokens``,
    ``version`` or ``config`` of the wrong type. Arithmetic is exact."""
    tp = _check_count("tp_size", tp_size, 1)
    spec = _check_count("speculative_tokens", speculative_tokens, 0)
    if not isinstance(layout, str) or layout not in LAYOUTS:
        raise refuse_argument("layout", f"unknown layout {show(layout)}; use {', '.join(LAYOUTS)}")
    if not isinstance(view, str) or view not in VIEWS:
        raise refuse_argument("view", f"unknown view {show(view)}; use {', '.join(VIEWS)}")
    conv_override = dtype_argument("conv_dtype", conv_dtype)
    ssm_override = dtype_argument("ssm_dtype", ssm_dtype)
    release = _release(layout, version)
    vllm = vllm_rules(release.version) if layout == "vllm" and release is not None else None
    sglang = (
        sglang_releases.sglang_rules(release.version)
        if layout == "sglang" and release is not None
        else None
    )
    loaded = load(config)
    if vllm is not None and release is not None:
        _served_then(loaded, release)
    read = _read(loaded, layout)
    if read is None:
        plain = _plain(loaded, layout, tp, spec, (conv_override, ssm_override))
        return replace(plain, server_version=_named(release))
    family, cfg, reading, architecture = read
    if release is not None:
        _served(cfg, architecture, release, layout)
    parsed = family.read(cfg, reading.server)
    hook = _vllm_ssm_hook(architecture, vllm) if vllm is not None else None
    rules = DtypeRules(
        cfg,
        family.hooks,
        layout,
        conv_override,
        ssm_override,
        vllm_ssm=hook,
        view=view,
        vllm=vllm,
        sglang=sglang,
    )
    model_type = loaded.mapping.get("model_type")
    shown = model_type if isinstance(model_type, str) else str(cfg.fields.get("model_type"))
    sizing = _sizing(layout, tp, spec, view, rules, vllm, cfg.family)
    state = _assemble(cfg, shown, parsed, sizing)
    return replace(state, server_version=_named(release))


def _sizing(
    layout: str,
    tp: int,
    spec: int,
    view: str,
    rules: DtypeRules,
    vllm: VllmRules | None,
    family: str,
) -> Sizing:
    """How ``layout`` lays a layer's state out: the speculative tokens that widen a conv window
    (none in vLLM's model-level view of a family whose pages it sizes unwidened), and, under
    vLLM's rules (``vllm``), the kinds whose conv window the release widens and those whose conv
    state it splits by projection."""
    if vllm is None:
        return Sizing(layout, tp, spec, rules, spec)
    exempt = vllm.sizes_pages_unwidened(family)
    window = spec if view == "layer" or not exempt else 0
    return Sizing(layout, tp, spec, rules, window, vllm.widened_kinds, vllm.split_conv_kinds)


def _release(layout: str, version: object) -> ResolvedRelease | None:
    """The release of ``layout``'s server whose rules ``version`` names; the metrale layout has
    no release, so a version there is refused."""
    if layout == "metrale":
        if version is not None:
            raise refuse_argument("version", "the metrale layout has no server release")
        return None
    return resolve_release(layout, version)


def _named(release: ResolvedRelease | None) -> str | None:
    return release.release.version if release is not None else None


def _served(cfg: Fields, architecture: str | None, release: ResolvedRelease, layout: str) -> None:
    """Refuse an architecture the release does not serve: vLLM's registry, SGLang's model
    modules (an ``EntryClass``) do not name it."""
    spans = served_releases if layout == "vllm" else sglang_releases.served_releases
    span = spans(architecture or "")
    version = release.version
    if span is None or not (
        parse_version(span[0]).release <= version <= parse_version(span[1]).release
    ):
        where = "its registry names" if layout == "vllm" else "an EntryClass of its models names"
        when = f"{where} it from {span[0]} to {span[1]}" if span else "never"
        raise cfg.fail(
            "architectures",
            f"{release.release} does not serve {architecture!a} ({when})",
        )


def _vllm_ssm_hook(architecture: str | None, rules: VllmRules) -> VllmSsmHook | None:
    """The architecture's SSM dtype hook as the release runs it: NemotronH's default is the
    release's, and before it had one there is no hook."""
    hook = VLLM_SSM_HOOKS.get(architecture or "")
    if hook is NEMOTRON_H_HOOK:
        default = rules.nemotron_h_ssm_default
        return None if default is None else dataclasses.replace(hook, default=default)
    return hook


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
    return config.mapping if found is None else found.fields


def class_fields(config: ConfigSource, *, layout: str = "vllm") -> Mapping[str, Any]:
    """The family's fields of ``config`` as the config class of ``layout``'s server holds them
    once built (``classes``): the file's values, the class's defaults and what it derives.
    Raises as ``ssm_state`` does; a config no family reads is returned as it is."""
    loaded = load(config)
    read = _read(loaded, layout)
    return loaded.mapping if read is None else read[1].fields


# --- finding the family ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Found:
    """Where a family's fields are: the family, the mapping that holds them, the model type the
    config class is looked up by, the wrapper around them (``None``: the config itself), and
    whether the wrapper's text config gives no model type (``untyped``) or is not there at all
    (``absent``: its class builds the text config from its defaults)."""

    name: str
    fields: Mapping[str, Any]
    model_type: str
    wrapper: str | None = None
    untyped: bool = False
    absent: bool = False


def _find(root: Mapping[str, Any], path: str | None) -> _Found | None:
    """The family that reads the config and the mapping holding its fields: the config itself;
    a wrapper's text config (``text_config``, ``llm_config``: vLLM reads the latter as the
    former, transformers_utils/config.py:195-197), or the text config its class builds; else
    the first text config whose model type a family reads. Refuses a family vLLM removed and a
    wrapper whose text config names a model type no family reads."""
    root_type = root.get("model_type")
    if isinstance(root_type, str):
        _removed(root_type, path)
        name = _MODEL_TYPES.get(root_type)
        if name is not None and (not REGISTRY[name].wrapper or root_type not in WRAPPED):
            return _Found(name, root, root_type)
        if name is not None or root_type in WRAPPED:
            return _wrapped(root, root_type, name, path)
    for key in WRAPPERS:
        text = root.get(key)
        if not isinstance(text, Mapping):
            continue
        model_type = text.get("model_type")
        if isinstance(model_type, str):
            _removed(model_type, path)
            name = _MODEL_TYPES.get(model_type)
            if name is not None and not REGISTRY[name].wrapper:
                return _Found(
                    name, text, model_type, root_type if isinstance(root_type, str) else None
                )
    return None


def _wrapped(root: Mapping[str, Any], wrapper: str, name: str | None, path: str | None) -> _Found:
    """A wrapper's text config: as the file gives it, or, where it gives none or one without a
    model type, what the wrapper's class builds (``WRAPPED``)."""
    expected = WRAPPED[wrapper]
    text = next((root[key] for key in WRAPPERS if isinstance(root.get(key), Mapping)), None)
    if text is None:
        family = name or _MODEL_TYPES[expected]
        if REGISTRY[family].flat:
            return _Found(family, root, expected, wrapper)
        _flat_fields(root, wrapper, expected, path)
        return _Found(family, {}, expected, wrapper, absent=True)
    own = text.get("model_type")
    if own is None:
        return _Found(name or _MODEL_TYPES[expected], text, expected, wrapper, untyped=True)
    _removed(str(own), path)
    found = name or _MODEL_TYPES.get(str(own))
    if found is None or not isinstance(own, str):
        where = f"{path!a}: " if path is not None else ""
        raise ModelConfigError(
            f"{where}field 'text_config.model_type': {show(own)} in a {wrapper!a} wrapper names "
            f"no family this package reads; a {wrapper!a} checkpoint's text config is "
            f"{expected!a} (give that model_type, or none for the class's own)",
            path=path,
            family=wrapper,
            field="text_config.model_type",
        )
    return _Found(found, text, own, wrapper)


# Fields of a language model that a wrapper's class does not read at its top level: a wrapper
# with these and no text config is a text config under the wrapper's model type.
_TEXT_FIELDS: Final = ("num_hidden_layers", "hidden_size", "num_attention_heads", "layer_types")


def _flat_fields(root: Mapping[str, Any], wrapper: str, expected: str, path: str | None) -> None:
    """Refuse a wrapper that holds its language model's fields at its top level and no text
    config: its class builds its default text config and ignores them (transformers'
    ``Qwen3_5Config``, ``sub_configs``), so the server would size a model the file does not
    describe."""
    flat = [key for key in _TEXT_FIELDS if key in root]
    if not flat:
        return
    where = f"{path!a}: " if path is not None else ""
    raise ModelConfigError(
        f"{where}field 'text_config': missing, and {', '.join(flat)} at the top level, which a "
        f"{wrapper!a} config's class ignores (it builds its default text config); give a flat "
        f"{expected!a} config, or a {wrapper!a} wrapper with text_config",
        path=path,
        family=wrapper,
        field="text_config",
    )


def _served_then(loaded: LoadedConfig, release: ResolvedRelease) -> None:
    """Refuse, as not modelled, a family vLLM has since removed at a release that still serves
    it (``REMOVED`` names the last release that did)."""
    root = loaded.mapping
    texts = [root.get(key) for key in WRAPPERS]
    types = [root.get("model_type")] + [
        t.get("model_type") for t in texts if isinstance(t, Mapping)
    ]
    for model_type in types:
        if not isinstance(model_type, str) or model_type not in REMOVED:
            continue
        name, last = REMOVED[model_type]
        if release.version <= parse_version(last).release:
            where = f"{loaded.path!a}: " if loaded.path is not None else ""
            raise NotModelledError(
                f"{where}field 'model_type': {release.release} serves {name} (vLLM served it "
                f"until {last}); the package does not model its state",
                path=loaded.path,
                family=model_type,
                field="model_type",
            )


def _removed(model_type: str, path: str | None) -> None:
    if model_type not in REMOVED:
        return
    name, version = REMOVED[model_type]
    where = f"{path!a}: " if path is not None else ""
    raise ModelConfigError(
        f"{where}field 'model_type': vLLM served {name} until version {version}; {SGLANG} has "
        f"no {name} ({model_type!a}: vllm/model_executor/models/registry.py:841-895)",
        path=path,
        family=model_type,
        field="model_type",
    )


# --- reading it as the server's class does ------------------------------------------------------


def _read(
    loaded: LoadedConfig, layout: str
) -> tuple[Family, Fields, ClassReading, str | None] | None:
    """The family, its fields as the layout's server's class holds them, the reading, and the
    architecture the config names (else the family's first); ``None`` for a config no family
    reads that is a plain transformer."""
    root, path = loaded.mapping, loaded.path
    found = _find(root, path)
    if found is None:
        refusal = unknown(root, path, FAMILIES)
        if refusal is not None:
            raise refusal
        return None
    family = REGISTRY[found.name]
    given = Fields(found.fields, root, found.name, path)
    server, architecture = _server(given, family, layout)
    reading = _class_reading(given, found, server)
    state = _built(reading, found, given, family)
    cfg = Fields(state.values, root, found.name, path, given=found.fields)
    return family, cfg, reading, architecture


def _server(cfg: Fields, family: Family, layout: str) -> tuple[str, str | None]:
    """Whose reading of the family to follow, and the architecture: the layout's own server,
    and for metrale vLLM's where vLLM serves the family, else SGLang's. Refuses a layout whose
    server lacks the family or the architecture the config names (each server keys its model
    classes by ``architectures[0]``: vLLM's registry, vllm/model_executor/models/registry.py;
    SGLang's ``EntryClass`` lists, sglang/srt/models/)."""
    server = layout
    if layout == "metrale":
        server = "vllm" if family.vllm is not None else "sglang"
    release = _RELEASES[server]
    served = family.architectures(server)
    if not served:
        other = "sglang" if server == "vllm" else "vllm"
        note = " (no config with mamba2_cache_params)" if server == "sglang" else ""
        raise cfg.fail(
            "model_type",
            f"{release} has no {cfg.family} model{note}; use layout {other} or metrale",
        )
    names = cfg.root.get("architectures")
    given = names[0] if isinstance(names, list) and names and isinstance(names[0], str) else None
    if given is not None and given not in served and layout != "metrale":
        where = "its registry" if server == "vllm" else "an EntryClass of sglang/srt/models"
        raise cfg.fail(
            "architectures",
            f"{release} has no model class {given!a} ({where}); it serves {cfg.family} as "
            f"{', '.join(served)}",
        )
    return server, given if given is not None else served[0]


def _class_reading(cfg: Fields, found: _Found, server: str) -> ClassReading:
    """The class ``server`` reads the family's fields with; refuses a wrapper whose class
    cannot build the text config the file gives (none, or one without a model type)."""
    release = _RELEASES[server]
    if found.wrapper is not None and (found.untyped or found.absent):
        wrapper = config_class(release, found.wrapper)
        expected = WRAPPED[found.wrapper]
        what = "no text_config" if found.absent else "a text_config without model_type"
        if wrapper is None or wrapper.text is None:
            raise cfg.fail(
                "text_config.model_type",
                f"missing; {release} has no config class for {found.wrapper!a} (the checkpoint's "
                f"own code would build it), so the text config must say its model_type: "
                f"{expected!a}",
            )
        built_type = wrapper.text.absent if found.absent else wrapper.text.untyped
        if built_type is None:
            raise cfg.fail(
                "text_config.model_type",
                f"missing; {wrapper.cite} refuses {what} ({wrapper.text.refusal}); give "
                f"model_type {expected!a} in text_config",
            )
    return ClassReading(release, server, config_class(release, found.model_type))


def _built(reading: ClassReading, found: _Found, cfg: Fields, family: Family) -> Built:
    """The fields as the class holds them once built; for SGLang, after transformers' own class
    of the model type refused nothing (SGLang builds it first, through ``AutoConfig``,
    sglang/srt/utils/hf_transformers/config.py:230-300)."""
    release, cls = reading.release, reading.cls
    if release is not None and cls is not None and cls.after_transformers:
        first = table(f"transformers-{release.transformers}").get(found.model_type)
        if first is not None:
            built(ClassReading(release, "transformers", first), found.fields, cfg, family.rules)
    return built(reading, found.fields, cfg, family.rules)


# --- the state ---------------------------------------------------------------------------------


def _plain(
    loaded: LoadedConfig,
    layout: str,
    tp: int,
    spec: int,
    overrides: tuple[str | None, str | None],
) -> SsmState:
    """A plain transformer: no recurrent layer, its attention where the config gives heads."""
    root = loaded.mapping
    cfg = Fields(root, root, "transformer", loaded.path)
    rules = DtypeRules(cfg, NO_HOOKS, layout, *overrides)
    parsed = Parsed((), _plain_attention(cfg))
    return _assemble(cfg, str(root["model_type"]), parsed, Sizing(layout, tp, spec, rules, spec))


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
    if len(groups[0].tensors) != 2:  # a conv state split by projection (VllmRules)
        return None, None
    conv, state = groups[0].tensors
    return conv, state
