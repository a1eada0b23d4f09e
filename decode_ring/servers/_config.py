"""The config mapping a reservation reads, loaded as ``decode_ring.models`` loads it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..models import FAMILIES, ConfigSource
from ..models.loading import family_fields, load

__all__ = ["load_config"]

# The wrappers the models package reads a family through (vLLM text_config, SGLang llm_config).
_WRAPPERS = ("text_config", "llm_config")


def load_config(config: ConfigSource) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    """The whole config and the mapping that holds its family's fields (itself, or a wrapper's).
    Raises as ``ssm_state`` does for a config it cannot read."""
    root, _ = load(config)
    fields = family_fields(root, FAMILIES, _WRAPPERS)
    return root, root if fields is None else fields
