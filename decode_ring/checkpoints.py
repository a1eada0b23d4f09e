"""A checkpoint's tensors as its safetensors files describe them, read from their headers only.

``read_checkpoint(folder)`` reads a snapshot's ``model.safetensors.index.json`` (its
``weight_map`` and ``metadata.total_size``) and the header of each shard it names that is present
(8 bytes of header length, then the JSON header: each tensor's dtype and shape), or the header of a
single ``model.safetensors``. No tensor data is read. Where the index names shards that are not
there (a snapshot downloaded with its config and index only), the checkpoint has its total size
and its tensors' names, not their sizes.
"""

from __future__ import annotations

import json
import math
import os
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from .models import ModelConfigError

__all__ = ["INDEX_FILE", "SINGLE_FILE", "Checkpoint", "Tensor", "read_checkpoint"]

INDEX_FILE: Final = "model.safetensors.index.json"
SINGLE_FILE: Final = "model.safetensors"
# The safetensors format's dtypes and their bytes (safetensors' Dtype: F4 and F6 pack below a
# byte; they are counted by the shape of the packed tensor the file stores).
_ELEMENT_BYTES: Final[Mapping[str, float]] = {
    "BOOL": 1,
    "U8": 1,
    "I8": 1,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    "F8_E8M0": 1,
    "I16": 2,
    "U16": 2,
    "F16": 2,
    "BF16": 2,
    "I32": 4,
    "U32": 4,
    "F32": 4,
    "I64": 8,
    "U64": 8,
    "F64": 8,
    "F4": 0.5,
}
# A header longer than this is not a safetensors header (the format caps it at 100 MB).
_LONGEST_HEADER: Final = 100_000_000


@dataclass(frozen=True, slots=True)
class Tensor:
    """One tensor of a checkpoint: its name, the file's dtype, its shape and its bytes."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    bytes: int


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A snapshot's weights: where they were read from, every tensor (``None`` when the shards'
    headers are not all there), and the total bytes (the index's ``metadata.total_size``, else
    the tensors' sum)."""

    source: str
    tensors: tuple[Tensor, ...] | None
    total_bytes: int
    names: tuple[str, ...]


def _header(path: Path) -> dict[str, Any]:
    """The JSON header of one safetensors file."""
    try:
        with path.open("rb") as stream:
            raw = stream.read(8)
            if len(raw) != 8:
                raise ModelConfigError(f"{os.fspath(path)!a}: too short for a safetensors file")
            (length,) = struct.unpack("<Q", raw)
            if length > _LONGEST_HEADER:
                raise ModelConfigError(f"{os.fspath(path)!a}: header of {length} B is not one")
            text = stream.read(length)
    except OSError as error:
        raise ModelConfigError(
            f"cannot read {os.fspath(path)!a}: {error.strerror or error}"
        ) from None
    try:
        header = json.loads(text)
    except (ValueError, UnicodeDecodeError):
        raise ModelConfigError(f"{os.fspath(path)!a}: its header is not JSON") from None
    if not isinstance(header, dict):
        raise ModelConfigError(f"{os.fspath(path)!a}: its header is not a JSON object")
    return header


def _tensors(path: Path, header: Mapping[str, Any]) -> list[Tensor]:
    """The tensors a header describes (its ``__metadata__`` left out)."""
    found = []
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        dtype = entry.get("dtype") if isinstance(entry, dict) else None
        shape = entry.get("shape") if isinstance(entry, dict) else None
        if not isinstance(dtype, str) or dtype not in _ELEMENT_BYTES or not isinstance(shape, list):
            raise ModelConfigError(
                f"{os.fspath(path)!a}: tensor {name!a}: not a safetensors entry (dtype {dtype!a})"
            )
        dims = tuple(int(size) for size in shape)
        size = math.ceil(math.prod(dims) * _ELEMENT_BYTES[dtype])
        found.append(Tensor(name, dtype, dims, size))
    return found


def read_checkpoint(folder: Path) -> Checkpoint | None:
    """The checkpoint of a snapshot folder, or ``None`` when it holds no safetensors index and
    no ``model.safetensors``. Raises ``ModelConfigError`` for a file that is not what its name
    says."""
    index = folder / INDEX_FILE
    single = folder / SINGLE_FILE
    if os.path.lexists(index):
        return _indexed(index)
    if os.path.lexists(single):
        tensors = _tensors(single, _header(single))
        return Checkpoint(
            os.fspath(single),
            tuple(tensors),
            sum(t.bytes for t in tensors),
            tuple(t.name for t in tensors),
        )
    return None


def _indexed(index: Path) -> Checkpoint:
    """The checkpoint an index names: each shard's header where all are present."""
    try:
        data = json.loads(index.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ModelConfigError(f"cannot read {os.fspath(index)!a}: {error}") from None
    weight_map = data.get("weight_map") if isinstance(data, dict) else None
    metadata = data.get("metadata") if isinstance(data, dict) else None
    total = metadata.get("total_size") if isinstance(metadata, dict) else None
    if not isinstance(weight_map, dict) or not isinstance(total, int) or total < 0:
        raise ModelConfigError(
            f"{os.fspath(index)!a}: needs a weight_map and metadata.total_size (bytes)"
        )
    shards = sorted(set(weight_map.values()))
    names = tuple(sorted(weight_map))
    paths = [index.parent / shard for shard in shards]
    if not all(os.path.lexists(path) for path in paths):
        return Checkpoint(os.fspath(index), None, total, names)
    tensors = [tensor for path in paths for tensor in _tensors(path, _header(path))]
    return Checkpoint(os.fspath(index), tuple(tensors), total, names)
