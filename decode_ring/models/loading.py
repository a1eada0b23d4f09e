"""Loading a config: a mapping, a ``config.json`` file, a snapshot directory holding one, or
anything with ``to_dict()``; and finding, in the config or a wrapper around it, the mapping that
holds a family's fields.

A path that cannot be read is refused as ``cannot read 'PATH': reason`` (``cannot_read``), a
file that is not a JSON object as ``'PATH': malformed JSON: ...`` (``read_json_file``,
``read_json_object``): the command line's resolver says the same through the same functions.

A config is read once, and at most ``MAX_CONFIG_BYTES`` of it (``read_bounded``): real configs
are kilobytes, the largest published safetensors index a few MiB, and an endless input
(``/dev/zero``, a pipe that never ends) stops there, a chunk at a time, so Ctrl-C stops it too.
A JSON integer of more than ``MAX_INTEGER_DIGITS`` digits is refused before it is converted,
whatever limit the interpreter sets."""

from __future__ import annotations

import errno
import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

from ..printable import show, type_name
from .errors import ModelConfigError

__all__ = [
    "MAX_CONFIG_BYTES",
    "MAX_INTEGER_DIGITS",
    "WRAPPERS",
    "ConfigSource",
    "LoadedConfig",
    "cannot_read",
    "config_entry",
    "load",
    "read_bounded",
    "read_json_file",
    "read_json_object",
    "unknown",
]

# The most of a config (or a safetensors index) that is read: 16 MiB.
MAX_CONFIG_BYTES: Final = 16 * 2**20
# The longest JSON integer converted: CPython's own default limit, kept whatever the
# interpreter's (``sys.set_int_max_str_digits``); no field takes more than 19 digits.
MAX_INTEGER_DIGITS: Final = 4300
_CHUNK: Final = 2**20


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
        path = config_entry(path, raw)
    name = os.fspath(path)
    return read_json_file(path), name


def config_entry(directory: Path, shown: str) -> Path:
    """The ``config.json`` of ``directory``; refused as missing only when it is not there, and
    as ``cannot read`` when it is there but cannot be looked at (a directory without search
    permission). Not ``is_file()``: a ``config.json`` that is a loop or a directory is there,
    and reading it says what is wrong with it."""
    path = directory / "config.json"
    try:
        os.lstat(path)
    except FileNotFoundError:
        raise ModelConfigError(f"{shown!a}: directory has no config.json", path=shown) from None
    except OSError as error:
        raise cannot_read(path, error) from None
    return path


def cannot_read(path: str | os.PathLike[str], error: OSError) -> ModelConfigError:
    """The refusal of a path ``error`` says cannot be read: ``cannot read 'PATH': reason``, the
    OS's whole reason, a symlink loop named as one."""
    name = os.fspath(path)
    reason = error.strerror or str(error)
    if error.errno == errno.ELOOP:
        reason += " (a symlink loop)"
    return ModelConfigError(f"cannot read {name!a}: {reason}", path=name)


class TooLarge(Exception):
    """What ``read_bounded`` read is larger than ``MAX_CONFIG_BYTES``."""


TOO_LARGE: Final = f"larger than {MAX_CONFIG_BYTES // 2**20} MiB"


def read_bounded(read: Callable[[int], bytes | str]) -> bytes | str:
    """Everything ``read(n)`` returns until it returns nothing, a chunk at a time; raises
    ``TooLarge`` as soon as that is more than ``MAX_CONFIG_BYTES`` (bytes, or characters of a
    text stream)."""
    chunks: list[Any] = []
    size = 0
    while chunk := read(min(_CHUNK, MAX_CONFIG_BYTES + 1 - size)):
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_CONFIG_BYTES:
            raise TooLarge
    return (b"" if not chunks or isinstance(chunks[0], bytes) else "").join(chunks)


def read_json_file(path: Path) -> dict[str, Any]:
    """The JSON object in the file at ``path``, read as UTF-8, at most ``MAX_CONFIG_BYTES``.
    Every failure is one ``ModelConfigError`` naming the path with the whole reason; never an
    ``OSError``."""
    name = os.fspath(path)
    try:
        with path.open("rb") as stream:
            data = read_bounded(stream.read)
    except OSError as error:
        raise cannot_read(name, error) from None
    except ValueError as error:  # a NUL in the path
        raise ModelConfigError(f"cannot read {name!a}: {error}", path=name) from None
    except TooLarge:
        raise ModelConfigError(f"cannot read {name!a}: {TOO_LARGE}", path=name) from None
    assert isinstance(data, bytes)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ModelConfigError(
            f"cannot read {name!a}: not UTF-8 text ({error})", path=name
        ) from None
    return read_json_object(text, f"{name!a}", path=name)


class _LongInteger(ValueError):
    """A JSON integer of more than ``MAX_INTEGER_DIGITS`` digits, with its count."""

    def __init__(self, digits: int) -> None:
        super().__init__(digits)
        self.digits = digits


def _json_integer(text: str) -> int:
    digits = len(text) - text.startswith("-")
    if digits > _integer_digits():
        raise _LongInteger(digits)
    return int(text)


def _integer_digits() -> int:
    """``MAX_INTEGER_DIGITS``, or the interpreter's own limit where that is lower."""
    own = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    return min(MAX_INTEGER_DIGITS, own) if own else MAX_INTEGER_DIGITS


# What a JSON value that is not an object is called, by its Python type.
_JSON_NAMES: Final = {
    type(None): "null",
    list: "an array",
    str: "a string",
    int: "a number",
    float: "a number",
}


def _json_name(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return _JSON_NAMES.get(type(value), type_name(value))


def read_json_object(text: str, where: str, *, path: str | None = None) -> dict[str, Any]:
    """The JSON object in ``text``, refused in one line naming ``where`` (the error's ``path``
    is ``path``). HF configs write ``Infinity`` (``time_step_limit``), which json accepts; an
    integer of more than ``MAX_INTEGER_DIGITS`` digits is refused."""
    try:
        value = json.loads(text, parse_int=_json_integer)
    except _LongInteger as error:
        raise ModelConfigError(
            f"{where}: a JSON integer of {error.digits:,} digits; a config's have at most "
            f"{_integer_digits():,}",
            path=path,
        ) from None
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
        raise ModelConfigError(f"{where}: JSON is {_json_name(value)}, not an object", path=path)
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
