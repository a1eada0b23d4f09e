"""Per-sequence recurrent state of a hybrid model, from its Hugging Face ``config.json``.

``ssm_state(config, tp_size=..., layout=...)`` returns an :class:`SsmState`: which layers keep a
recurrent state, grouped by kind (Mamba-1, Mamba-2, gated delta net, KDA, short conv, linear
attention); every state tensor one such layer holds for one sequence on one tensor-parallel rank
(its name, its shape in the layout's own dimension order, its dtype and the rule that chose it,
its bytes); the totals; and the model's attention side (``AttentionLayers``). It reads only the
config (a mapping, a file, a snapshot directory, or anything with ``to_dict()``); it never
imports ``transformers``.

The peers' code is the authority. Citations are paths inside the ``vllm-0.33.0`` and
``sglang-0.5.23`` wheels (``vllm/...``, ``sglang/srt/...``) and transformers 5.19-5.23, which both
pin and which is where they read configs through.

Layouts
=======
``vllm``
    ``MambaStateShapeCalculator`` (``vllm/model_executor/layers/mamba/mamba_utils.py``), fed as each
    model's ``get_mamba_state_shape_from_config`` feeds it. Conv state is ``(window, channels)``
    (the default "SD" layout); windows are ``K - 1 + speculative_tokens`` except Mamba-1's.
``sglang``
    ``Mamba2StateShape`` / ``KimiLinearStateShape`` (``sglang/srt/configs/mamba_utils.py``) as the
    configs' ``mamba2_cache_params`` call them. Conv state is ``(channels, K - 1)``, never widened
    for speculative decoding (SGLang keeps draft-token states in separate scratch buffers, not
    counted here). A family the layout's server lacks (``jamba``, ``zamba2``, ``olmo_hybrid`` and
    ``alice_ai`` in SGLang; ``jet_nemotron``, ``zaya``, ``gigachat3_5`` and ``minicpm_sala`` in
    vLLM) is refused, naming the server and version.
``metrale``
    The reference server's own: the conv window keeps all ``K`` columns, ``(K, channels)``, with no
    speculative widening; recurrent states as vLLM shapes them; everything float32; vLLM's group
    and divisibility rules (SGLang's reading for a family only SGLang serves).

The package's modules: ``kinds`` (one module per kind of state: a geometry that lays out its
tensors with the servers' TP rules, and ``KINDS``, what the servers do with each kind);
``families`` (the registry: one ``Family`` entry per family, with what the servers do with it,
and one module of readers per kind of layer they hold; the removed families); ``loading``
(files, directories, ``LoadedConfig``); ``dtypes`` (every dtype rule); ``attention`` (the KV
side, its TP checks, the DSA indexer); ``fields`` (typed, bounded field reads named in every
refusal); ``errors``; ``state`` (the returned types; ``AttentionLayers.kv_bytes_per_token``, the
one KV-cache size per token); ``read`` (``ssm_state``, ``text_config``, wrappers).

``MAX_LAYERS`` is the one limit on a layer count (``num_hidden_layers``, a layer list), for
callers that check a count before they read a config.

A config whose ``model_type`` no family reads is a plain transformer (zero recurrent layers,
zero bytes) when it has ``num_hidden_layers`` and nothing SSM-like; otherwise it is refused with
the list of families. Multimodal wrappers are read through their ``text_config`` or
``llm_config`` when that holds a family's ``model_type`` (``glm5_next``'s text-only checkpoints
keep the text fields at the top level). Sizes are the states' own; vLLM's
padding of a mamba page to the attention page size and prefix-caching copies are not included.
"""

from __future__ import annotations

from .dtypes import DTYPE_BYTES
from .errors import ModelConfigError, TensorParallelSplitError
from .families import FAMILIES, REGISTRY, Family
from .fields import MAX_LAYERS
from .kinds import KINDS, KindTraits
from .loading import ConfigSource, LoadedConfig
from .read import LAYOUTS, load_config, ssm_state, text_config
from .state import AttentionLayers, DsaIndexer, LayerStates, SsmState, StateTensor

__all__ = [
    "DTYPE_BYTES",
    "FAMILIES",
    "KINDS",
    "LAYOUTS",
    "MAX_LAYERS",
    "REGISTRY",
    "AttentionLayers",
    "ConfigSource",
    "DsaIndexer",
    "Family",
    "KindTraits",
    "LayerStates",
    "LoadedConfig",
    "ModelConfigError",
    "SsmState",
    "StateTensor",
    "TensorParallelSplitError",
    "load_config",
    "ssm_state",
    "text_config",
]
