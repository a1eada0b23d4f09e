"""A model as an operator names it: a file, a snapshot, the Hugging Face cache, stdin.

``resolve_model(text)`` turns what follows ``--config`` into what ``ssm_state``
reads, and the snapshot directory it came from, if any, whose
``model.safetensors.index.json`` gives the weights' size
(``snapshot_weights``):

- ``-``: a ``config.json`` read from standard input;
- a ``config.json`` file, or a snapshot directory holding one;
- a Hugging Face cache folder ``models--ORG--NAME``: the snapshot that its
  ``refs/main`` names (or its only snapshot);
- ``ORG/NAME`` that is not a path: the snapshot in the local Hugging Face
  cache, found by ``huggingface_hub`` itself (it honours ``HF_HOME`` and
  ``HF_HUB_CACHE`` and never touches the network). ``huggingface_hub`` is an
  optional extra (``pip install 'decode_ring[hub]'``), imported only here and
  only then.

Every refusal is a ``ModelConfigError`` whose message is one line:
``cannot read PATH: reason`` for a path that cannot be read.
"""

from __future__ import annotations

import errno
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TextIO

from .models import LoadedConfig, ModelConfigError
from .models.loading import (
    TOO_LARGE,
    TooLarge,
    cannot_read,
    config_entry,
    read_bounded,
    read_json_file,
    read_json_object,
)

STDIN: Final = "-"
CONFIG_FILE: Final = "config.json"
INDEX_FILE: Final = "model.safetensors.index.json"
HUB_EXTRA: Final = "pip install 'decode_ring[hub]'"
_REPO_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*", re.ASCII)
_CACHE_FOLDER: Final = re.compile(r"models--(.+)--(.+)")

# What resolve_model accepts, as every command's --config help says it.
CONFIG_HELP: Final = (
    "the model: a config.json, a snapshot directory, a models--ORG--NAME cache folder, "
    f"ORG/NAME from the local Hugging Face cache ({HUB_EXTRA}), or - for stdin"
)


@dataclass(frozen=True)
class ModelReference:
    """What ``--config`` named: ``config``, the config read once (every reader
    takes it as it is), ``shown`` as the operator wrote it, and the snapshot
    directory it lives in, if any."""

    config: LoadedConfig
    shown: str
    snapshot: Path | None


def cache_snapshot(folder: Path) -> Path:
    """The snapshot of a Hugging Face cache folder ``models--ORG--NAME``: the
    one ``refs/main`` names, else the only one there is."""
    try:
        revision = (folder / "refs" / "main").read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        revision = None
    except (OSError, ValueError) as error:
        reason = error if isinstance(error, OSError) else OSError(str(error))
        raise cannot_read(folder / "refs" / "main", reason) from None
    snapshots = folder / "snapshots"
    if revision:
        return _named_snapshot(folder, snapshots, revision)
    try:
        found = sorted(entry.name for entry in snapshots.iterdir())
    except OSError as error:
        raise cannot_read(snapshots, error) from None
    if len(found) != 1:
        raise ModelConfigError(
            f"{os.fspath(folder)!a}: a cache folder with no refs/main and "
            f"{len(found)} snapshots; give one of them: "
            + (", ".join(ascii(name) for name in found[:4]) or "none")
        )
    return snapshots / found[0]


def _named_snapshot(folder: Path, snapshots: Path, revision: str) -> Path:
    """The snapshot ``refs/main`` names: one entry of ``snapshots``, never a path that leaves
    it (``..``, an absolute path, a path of several parts)."""
    if (
        revision in (os.curdir, os.pardir)
        or "\0" in revision
        or any(separator in revision for separator in (os.sep, os.altsep) if separator)
    ):
        raise ModelConfigError(
            f"{os.fspath(folder / 'refs' / 'main')!a}: names {revision!a}, which is not a "
            f"snapshot in {os.fspath(snapshots)!a}"
        )
    return snapshots / revision


def hub_snapshot(repo_id: str) -> Path:
    """The snapshot of ``repo_id`` in the local Hugging Face cache, as
    ``huggingface_hub`` finds it (``HF_HOME``, ``HF_HUB_CACHE``), offline."""
    try:
        import huggingface_hub
    except ImportError:
        raise ModelConfigError(
            f"cannot read {repo_id!a}: no such file or directory; to read ORG/NAME from "
            f"the Hugging Face cache: {HUB_EXTRA}"
        ) from None
    try:
        found = huggingface_hub.try_to_load_from_cache(repo_id, CONFIG_FILE)
    except ValueError as error:  # HFValidationError: not a repository id
        raise ModelConfigError(f"{repo_id!a}: not a model id: {error}") from None
    if not isinstance(found, str):
        cache = huggingface_hub.constants.HF_HUB_CACHE
        raise ModelConfigError(
            f"cannot read {repo_id!a}: not a path, and its config.json is not in the "
            f"Hugging Face cache at {os.fspath(cache)!a} (download it first: "
            f"hf download {repo_id} {CONFIG_FILE} {INDEX_FILE})"
        )
    return Path(found).parent


def resolve_model(text: str, stdin: TextIO | None = None) -> ModelReference:
    """What ``text`` (the value of ``--config``) names; see the module.
    Raises ``ModelConfigError``, never ``OSError``."""
    if text == "":
        raise ModelConfigError(
            "empty path; give a config.json, a snapshot directory, a models--ORG--NAME cache "
            "folder, ORG/NAME from the Hugging Face cache, or - for stdin"
        )
    if text == STDIN:
        config = read_json_object(read_stdin(sys.stdin if stdin is None else stdin), "stdin")
        return ModelReference(LoadedConfig(config, None), "(stdin)", None)
    path = Path(text)
    try:
        is_dir = path.is_dir()
        exists = is_dir or os.path.lexists(path)
    except OSError as error:
        raise cannot_read(text, error) from None
    if not exists:
        if _REPO_ID.fullmatch(text) and not text.startswith("."):
            snapshot = hub_snapshot(text)
            return _snapshot_reference(snapshot, text)
        raise cannot_read(text, FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT)))
    if not is_dir:
        return ModelReference(LoadedConfig(read_json_file(path), os.fspath(path)), text, None)
    if _CACHE_FOLDER.fullmatch(path.resolve().name) and (path / "snapshots").is_dir():
        path = cache_snapshot(path)
    return _snapshot_reference(path, text)


def read_stdin(stream: TextIO | None) -> str:
    """A config from standard input, at most ``MAX_CONFIG_BYTES`` of it: the bytes under a
    text stream, read as UTF-8 as a file is, or the text of a stream that has none. Raises
    ``ModelConfigError``; a closed standard input (``None``) is one."""

    def refused(reason: object) -> ModelConfigError:
        return ModelConfigError(f"cannot read the config from stdin: {reason}")

    if stream is None:
        raise refused("standard input is closed")
    binary = getattr(stream, "buffer", None)
    try:
        data = read_bounded(stream.read if binary is None else binary.read)
    except TooLarge:
        raise refused(TOO_LARGE) from None
    except (OSError, ValueError) as error:
        raise refused(getattr(error, "strerror", None) or error) from None
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise refused(f"not UTF-8 text ({error})") from None


def _snapshot_reference(path: Path, shown: str) -> ModelReference:
    """The snapshot directory ``path`` and its ``config.json``, read once."""
    config = config_entry(path, os.fspath(path))
    return ModelReference(LoadedConfig(read_json_file(config), os.fspath(config)), shown, path)


def snapshot_weights(snapshot: Path) -> int | None:
    """The weights' bytes that a snapshot's ``model.safetensors.index.json``
    gives (``metadata.total_size``); None when the snapshot has no index."""
    index = snapshot / INDEX_FILE
    if not os.path.lexists(index):
        return None
    metadata = read_json_file(index).get("metadata")
    total = metadata.get("total_size") if isinstance(metadata, dict) else None
    if not isinstance(total, int) or isinstance(total, bool) or total < 0:
        raise ModelConfigError(
            f"{os.fspath(index)!a}: field 'metadata.total_size': must be a non-negative "
            "integer of bytes"
        )
    return total
