"""The config mapping a reservation reads, loaded as ``decode_ring.models`` loads it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import models
from ..models import ConfigSource

__all__ = ["load_config"]


def load_config(config: ConfigSource) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    """The whole config and the mapping that holds its family's fields (itself, or a wrapper's
    ``text_config``). Raises as ``ssm_state`` does for a config it cannot read."""
    root, path = models._load(config)
    fields = models._family_fields(root, path)
    return root, root if fields is None else fields
