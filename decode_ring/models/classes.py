"""The config class a server reads a config with, and the fields it holds once built.

A server never reads a ``config.json`` as it is. vLLM 0.33.0 builds transformers' config class
for the model type (its wheel requires transformers >=5.16.1,<5.21.0; the newest in range is
modelled, ``Release.transformers``) unless its own ``_CONFIG_REGISTRY`` has one
(vllm/transformers_utils/config.py:122-176, :343-466); SGLang 0.5.23 builds transformers
5.19.0's, its own classes registered in their place for most hybrid families
(sglang/srt/utils/hf_transformers/common.py:117-330, config.py:214-300). The class fills a
field the file lacks with its default, derives others (``__post_init__``, ``__init__``), reads
an alias under the name it aliases (``attribute_map``) and refuses what it cannot take.

The classes' declared defaults are data: ``tables/transformers-<version>.json`` (transformers'
own classes, one table per version a server pins) and ``tables/<server>-<version>.json`` (the
classes a server registers itself), written from the classes by ``tools/config-classes``. The
package never imports transformers. What a class derives is code, one ``Rules`` function per
family beside its reader (``families/``), each citing the class.

``built(reading, given)`` is the config's fields as the class holds them: the file's values,
transformers 5's renaming of legacy layer types (``remap_legacy_layer_types``,
transformers/configuration_utils.py), each declared field's default where the file gives none,
an alias's value under both names, and the family's rules; a ``null`` the class's type does not
allow is refused, naming the field and the class.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, Final

from ..releases import Release
from .fields import Fields

__all__ = [
    "LEGACY_LAYER_TYPES",
    "Built",
    "ClassReading",
    "ConfigClass",
    "Declared",
    "Rules",
    "TextRule",
    "built",
    "config_class",
    "no_rules",
    "table",
]

# transformers 5's remap_legacy_layer_types (configuration_utils.py, _LEGACY_LAYER_TYPE_REMAP),
# which PreTrainedConfig.__post_init__ applies to ``layer_types`` of every class built on it.
LEGACY_LAYER_TYPES: Final[Mapping[str, str]] = {
    "mamba": "linear_attention",
    "attention": "full_attention",
    "deepseek_sparse_attention": "indexed_attention",
    "qwen_sparse_attention": "indexed_attention",
}


# The ``@strict`` types whose field refuses ``None``, as a refusal names them.
_WANTED: Final[Mapping[str, str]] = {
    "int": "an integer",
    "float": "a number",
    "float | int": "a number",
    "int | float": "a number",
    "bool": "a boolean",
    "str": "a string",
}


@dataclass(frozen=True, slots=True)
class Declared:
    """How a class declares one field: ``kind`` ``field`` (a dataclass field of transformers
    5), ``init`` (an ``__init__`` parameter), ``alias`` (of ``of``, ``attribute_map``; its
    default is the aliased field's), ``property`` (computed from others) or ``undeclared`` (a
    file's value is kept as it is); its ``default`` where it has one, and the type ``@strict``
    holds it to (``strict``, transformers 5's validated fields)."""

    kind: str
    default: Any = None
    has_default: bool = False
    strict: str | None = None
    of: str | None = None

    def refuses(self, value: Any) -> bool:
        """Whether ``@strict`` refuses ``value`` for the field: ``None`` where its type does not
        allow it. (A value of another wrong type the readers refuse as they read it.)"""
        if self.strict is None or value is not None:
            return False
        return self.strict in _WANTED


@dataclass(frozen=True, slots=True)
class TextRule:
    """A wrapper class's text config: its key, and the model type of the text config the class
    builds when the file gives none (``absent``) or gives one without a ``model_type``
    (``untyped``); ``None`` where the class refuses that (``refusal`` says how)."""

    key: str
    absent: str | None
    untyped: str | None
    refusal: str | None


@dataclass(frozen=True, slots=True)
class ConfigClass:
    """One config class: its name, where it is defined and where its rules are, the table it
    came from (``source``: ``transformers 5.20.2``, ``SGLang 0.5.23``), the fields the package
    reads of it, for a wrapper its text config, and whether the server builds it after
    transformers' own class of the model type (SGLang's registry classes: ``AutoConfig`` first,
    sglang/srt/utils/hf_transformers/config.py:230-300)."""

    name: str
    source: str
    defined_at: str
    rules_at: str | None
    fields: Mapping[str, Declared]
    text: TextRule | None
    after_transformers: bool = False

    @property
    def cite(self) -> str:
        """``Qwen3NextConfig (transformers 5.20.2, transformers/models/...:23)``."""
        return f"{self.name} ({self.source}, {self.defined_at})"


@cache
def table(name: str) -> Mapping[str, ConfigClass]:
    """The classes of table ``tables/<name>.json``, by model type."""
    files = resources.files(__package__).joinpath("tables").joinpath(f"{name}.json")
    raw = json.loads(files.read_text(encoding="utf-8"))
    source = raw["source"]  # transformers, vllm or sglang
    label = {"vllm": "vLLM", "sglang": "SGLang"}.get(source, source)
    return {
        model_type: _config_class(entry, f"{label} {raw['version']}")
        for model_type, entry in raw["classes"].items()
    }


def _config_class(entry: Mapping[str, Any], source: str) -> ConfigClass:
    fields = {
        name: Declared(
            kind=spec["kind"],
            default=spec.get("default"),
            has_default="default" in spec,
            strict=spec.get("strict"),
            of=spec.get("of"),
        )
        for name, spec in entry["fields"].items()
    }
    text = entry.get("text")
    rule = None
    if text is not None:
        refused = [v for v in (text["absent"], text["untyped"]) if v.startswith("refused: ")]
        rule = TextRule(
            text["key"],
            None if text["absent"].startswith("refused") else text["absent"],
            None if text["untyped"].startswith("refused") else text["untyped"],
            refused[0].removeprefix("refused: ") if refused else None,
        )
    return ConfigClass(
        entry["class"],
        source,
        entry["defined_at"],
        entry.get("rules_at"),
        fields,
        rule,
        entry.get("built") == "after transformers'",
    )


def config_class(release: Release, model_type: str) -> ConfigClass | None:
    """The class ``release`` reads ``model_type`` with: its own, else the one of the
    transformers it pins; ``None`` where neither has one (the checkpoint's own code would be
    run, ``trust_remote_code``)."""
    own = table(f"{release.server.lower()}-{release.version}").get(model_type)
    if own is not None:
        return own
    return table(f"transformers-{release.transformers}").get(model_type)


@dataclass(frozen=True, slots=True)
class ClassReading:
    """Whose class reads a config: the server's release (``None``: the reference server's own
    reading, which takes the file as it is), its name as the readers take it (``vllm``,
    ``sglang``), and the class (``None``: no class, the file as it is)."""

    release: Release | None
    server: str
    cls: ConfigClass | None


@dataclass(slots=True)
class Built:
    """A config's fields while a class builds them: ``values`` (what the class holds so far),
    ``given`` (the file's own), the reading, and ``cfg`` for refusals."""

    values: dict[str, Any]
    given: Mapping[str, Any]
    reading: ClassReading
    cfg: Fields
    notes: list[str] = field(default_factory=list)

    def fail(self, name: str, problem: str) -> Exception:
        """The refusal of field ``name``, naming the class."""
        cls = self.reading.cls
        return self.cfg.fail(name, f"{problem} ({cls.cite})" if cls is not None else problem)


Rules = Callable[[Built], None]
"""A family's class rules: what its classes derive once the defaults are in (each server's
class where they differ: ``Built.reading``)."""


def no_rules(built: Built) -> None:
    """A class that derives nothing the package reads."""


def built(reading: ClassReading, given: Mapping[str, Any], cfg: Fields, rules: Rules) -> Built:
    """``given``'s fields as ``reading``'s class holds them once built (see the module)."""
    values = copy.deepcopy(dict(given))
    cls = reading.cls
    state = Built(values, given, reading, cfg)
    if cls is None:
        rules(state)
        return state
    aliases = {
        name: declared.of
        for name, declared in cls.fields.items()
        if declared.kind == "alias" and declared.of is not None
    }
    for name, target in aliases.items():
        if name in given:
            values[target] = values.pop(name)
    for key in ("layer_types", "mtp_layer_types"):
        key = aliases.get(key, key)
        if isinstance(values.get(key), list):
            values[key] = [
                LEGACY_LAYER_TYPES.get(item, item) if isinstance(item, str) else item
                for item in values[key]
            ]
    for name, declared in cls.fields.items():
        where = aliases.get(name, name)
        if declared.has_default and where not in values:
            values[where] = copy.deepcopy(declared.default)
        if where in values and declared.refuses(values[where]):
            wanted = _WANTED[str(declared.strict)]
            raise state.fail(name, f"must be {wanted}, got None (NoneType)")
    rules(state)
    _validate_layer_type(state, cls, aliases)
    for name, target in aliases.items():
        if target in values:
            values[name] = values[target]
    return state


def _validate_layer_type(state: Built, cls: ConfigClass, aliases: Mapping[str, str]) -> None:
    """transformers 5's ``validate_layer_type`` (configuration_utils.py, a ``@strict`` class
    validator): a ``layer_types`` list has ``num_hidden_layers`` entries, where both are
    fields of the class (not where the layer count is a property of the list)."""
    if not cls.source.startswith("transformers"):
        return
    key = aliases.get("layer_types", "layer_types")
    declared, count = cls.fields.get("layer_types"), cls.fields.get("num_hidden_layers")
    if declared is None or declared.strict is None or count is None or count.kind != "field":
        return
    kinds, layers = state.values.get(key), state.values.get("num_hidden_layers")
    if isinstance(kinds, list) and isinstance(layers, int) and len(kinds) != layers:
        name = "layer_types" if "layer_types" in state.given else key
        if name not in state.given:
            # The class's default list (Zamba2Config's is Zamba2-2.7B's 54 layers) fits only
            # its default layer count: the checkpoint must give its own.
            raise state.fail(
                name,
                f"missing, and the class's default of {len(kinds)} layers does not fit "
                f"num_hidden_layers {layers}; give {name}, one entry a layer",
            )
        raise state.cfg.fail(name, f"has {len(kinds)} entries but num_hidden_layers is {layers}")
