"""The config mapping a reservation reads, loaded as ``decode_ring.models`` loads it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..models import ConfigSource
from ..models.loading import WRAPPERS, load

__all__ = ["load_config"]


def load_config(config: ConfigSource) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    """The whole config and its text config: the first wrapper that holds a language model's
    layers (``text_config``, ``llm_config``), else the config itself, as vLLM's
    ``get_hf_text_config`` takes it (vllm/transformers_utils/config.py). Raises as
    ``ssm_state`` does for a config it cannot read."""
    root = load(config).mapping
    for key in WRAPPERS:
        text = root.get(key)
        if isinstance(text, Mapping) and "num_hidden_layers" in text:
            return root, text
    return root, root
