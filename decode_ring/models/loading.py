"""Loading a config: a mapping, a ``config.json`` file, a snapshot directory holding one, or
anything with ``to_dict()``; and finding, in the config or a wrapper around it, the mapping that
holds a family's fields.

A path that cannot be read is refused as ``cannot read 'PATH': reason`` (``cannot_read``), a
file that is not a JSON object as ``'PATH': malformed JSON: ...`` (``read_json_file``,
``read_json_object``): the command line's resolver says the same through the same functions."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

from ..printable import show, type_name
from .errors import ModelConfigError

__all__ = [
    "WRAPPERS",
    "ConfigSource",
    "LoadedConfig",
    "cannot_read",
    "load",
    "read_json_file",
    "read_json_object",
    "unknown",
]


class _HasToDict(Protocol):
    def to_dict(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True, slots=True)
class LoadedConfig:
    """A config read once: the mapping and the file it came from (``None`` for a mapping or an
    object). Every function that takes a ``ConfigSource`` takes one of these as it is, so a
    command reads its config once and hands the value on."""

    mapping: Mapping[str, Any]
    path: str | None


ConfigSource = LoadedConfig | Mapping[str, Any] | str | os.PathLike[str] | _HasToDict

# The keys under which a multimodal wrapper keeps its language model's config.
WRAPPERS: Final = ("text_config", "llm_config")
_SSM_KEY_MARKS: Final = ("mamba", "ssm", "conv_kernel", "linear_", "state_size", "hybrid_override")
_SSM_LAYER_MARKS: Final = ("mamba", "linear", "hybrid", "conv", "recurrent", "ssm")
_LAYER_LIST_KEYS: Final = ("layer_types", "layers_block_type")


def load(config: object) -> LoadedConfig:
    """The config read once: a ``LoadedConfig`` as it is; a mapping; a ``config.json`` file or a
    directory holding one, read now; or an object's ``to_dict()``."""
    if isinstance(config, LoadedConfig):
        return config
    if isinstance(config, Mapping):
        return LoadedConfig(config, None)
    if isinstance(config, str | os.PathLike):
        return LoadedConfig(*_read_file(config))
    to_dict = getattr(config, "to_dict", None)
    if callable(to_dict):
        mapping = to_dict()
        if not isinstance(mapping, Mapping):
            raise ModelConfigError(f"config.to_dict() returned {type_name(mapping)}, not a mapping")
        return LoadedConfig(mapping, None)
    raise TypeError(
        "config must be a mapping, a path to config.json or its directory, or have to_dict(), "
        f"not {type(config).__name__}"
    )


def _read_file(given: str | os.PathLike[str]) -> tuple[Mapping[str, Any], str]:
    raw = os.fspath(given)
    if not isinstance(raw, str):
        raise TypeError(f"a config path must be str, not {type(raw).__name__}")
    if not raw:
        # Path("") is the current directory, which nobody means by an empty string.
        raise ModelConfigError(
            "empty path; give a config.json or a snapshot directory holding one", path=raw
        )
    path = Path(raw)
    try:
        is_dir = path.is_dir()
    except OSError as error:  # ENAMETOOLONG and the like, which is_dir() does not swallow
        raise cannot_read(raw, error) from None
    if is_dir:
        path = path / "config.json"
        # lexists, not is_file(): a config.json that is a loop or a directory is there, and
        # reading it says what is wrong with it.
        if not os.path.lexists(path):
            raise ModelConfigError(f"{raw!a}: directory has no config.json", path=raw)
    name = os.fspath(path)
    return read_json_file(path), name


def cannot_read(path: str | os.PathLike[str], error: OSError) -> ModelConfigError:
    """The refusal of a path ``error`` says cannot be read: ``cannot read 'PATH': reason``, the
    OS's whole reason, a symlink loop named as one."""
    name = os.fspath(path)
    reason = error.strerror or str(error)
    if error.errno == errno.ELOOP:
        reason += " (a symlink loop)"
    return ModelConfigError(f"cannot read {name!a}: {reason}", path=name)


def read_json_file(path: Path) -> dict[str, Any]:
    """The JSON object in the file at ``path``, read as UTF-8. Every failure is one
    ``ModelConfigError`` naming the path with the whole reason; never an ``OSError``."""
    name = os.fspath(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise cannot_read(name, error) from None
    except ValueError as error:  # a NUL in the path
        raise ModelConfigError(f"cannot read {name!a}: {error}", path=name) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ModelConfigError(
            f"cannot read {name!a}: not UTF-8 text ({error})", path=name
        ) from None
    return read_json_object(text, f"{name!a}", path=name)


def read_json_object(text: str, where: str, *, path: str | None = None) -> dict[str, Any]:
    """The JSON object in ``text``, refused in one line naming ``where`` (the error's ``path``
    is ``path``). HF configs write ``Infinity`` (``time_step_limit``), which json accepts."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        # Some of json's messages end in "at" ("Unterminated string starting at"), before the
        # position its str() appends: say the position once.
        raise ModelConfigError(
            f"{where}: malformed JSON: {error.msg.removesuffix(' at')} at line {error.lineno} "
            f"column {error.colno}",
            path=path,
        ) from None
    except RecursionError:
        raise ModelConfigError(f"{where}: malformed JSON: nested too deep", path=path) from None
    if not isinstance(value, dict):
        raise ModelConfigError(f"{where}: JSON is {type_name(value)}, not an object", path=path)
    return value


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


def unknown(
    root: Mapping[str, Any], path: str | None, families: tuple[str, ...]
) -> ModelConfigError | None:
    """The refusal for a config no family reads, or ``None`` for a plain transformer (an integer
    ``num_hidden_layers`` and nothing that looks like SSM state, in the config or in any text
    config it wraps, ``text_config`` or ``llm_config``)."""
    where = f"{path!a}: " if path is not None else ""
    model_type = root.get("model_type")
    if not isinstance(model_type, str):
        problem = "missing" if model_type is None else f"must be a string, got {show(model_type)}"
        return ModelConfigError(
            f"{where}field 'model_type': {problem}", path=path, field="model_type"
        )
    texts = [text for key in WRAPPERS if isinstance(text := root.get(key), Mapping)]
    marks = _ssm_marks(root) + [mark for text in texts for mark in _ssm_marks(text)]
    layers = root.get("num_hidden_layers")
    if layers is None and texts:
        layers = texts[0].get("num_hidden_layers")
    if not marks and isinstance(layers, int) and not isinstance(layers, bool) and layers >= 0:
        return None
    why = (
        f"has SSM fields ({', '.join(show(mark) for mark in marks[:4])})"
        if marks
        else "is not a plain transformer (no integer num_hidden_layers)"
    )
    return ModelConfigError(
        f"{where}field 'model_type': unknown model_type {show(model_type)} {why}; "
        f"supported families: {', '.join(families)}",
        path=path,
        field="model_type",
    )
