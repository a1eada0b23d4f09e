"""Per-sequence recurrent state of a hybrid model, from its Hugging Face ``config.json``.

``ssm_state(config, tp_size=..., layout=...)`` returns an :class:`SsmState`: which layers keep a
recurrent state, grouped by kind (Mamba-1, Mamba-2, gated delta net, KDA, short conv, linear
attention); every state tensor one such layer holds for one sequence on one tensor-parallel rank
(its name, its shape in the layout's own dimension order, its dtype and the rule that chose it,
its bytes); the totals; and the model's attention side (``AttentionLayers``). It reads only the
config (a mapping, a file, a snapshot directory, or anything with ``to_dict()``); it never
imports ``transformers``.

The peers' code is the authority. Citations are paths inside the ``vllm-0.33.0`` and
``sglang-0.5.23`` wheels (``vllm/...``, ``sglang/srt/...``) and inside the transformers each
reads configs through: vLLM 0.33.0 requires transformers >=5.16.1,<5.21.0 (5.20.2, the newest in
range, is modelled), SGLang 0.5.23 pins 5.19.0 (``Release.transformers``).

A config is read as the layout's server reads it (``classes``): the config class the server
builds for the model type (transformers', or the server's own) fills in its defaults, derives
what its ``__post_init__`` derives, renames its aliases and refuses what it refuses; the
architecture the config names keys the server's model classes and dtype hooks.

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
and one module of readers and class rules per kind of layer they hold; the removed families);
``classes`` (the config classes the servers build, their defaults as data in ``tables/``);
``loading``
(files, directories, ``LoadedConfig``); ``dtypes`` (every dtype rule); ``attention`` (the KV
side, its TP checks, the DSA indexer); ``fields`` (typed, bounded field reads named in every
refusal); ``errors``; ``state`` (the returned types; ``AttentionLayers.kv_bytes_per_token``, the
one KV-cache size per token); ``read`` (``ssm_state``, ``text_config``, wrappers).

``MAX_LAYERS`` is the one limit on a layer count (``num_hidden_layers``, a layer list), for
callers that check a count before they read a config.

A config whose ``model_type`` no family reads is a plain transformer (zero recurrent layers,
zero bytes) when it has ``num_hidden_layers`` and nothing SSM-like, in itself or in a text config
it wraps; otherwise it is refused with the list of families. Multimodal wrappers are read
through their ``text_config`` or ``llm_config``, or the text config their class builds where the
file gives none or one without a ``model_type`` (``glm5_next``'s text-only checkpoints keep the
text fields at the top level). Sizes are the states' own; vLLM's padding of a mamba page to the
attention page size and prefix-caching copies are not included.
"""

from __future__ import annotations

from .dtypes import DTYPE_BYTES
from .errors import ModelConfigError, NotModelledError, TensorParallelSplitError
from .families import FAMILIES, REGISTRY, Family
from .fields import MAX_LAYERS
from .kinds import KINDS, KindTraits
from .loading import ConfigSource, LoadedConfig
from .read import LAYOUTS, VIEWS, class_fields, load_config, ssm_state, text_config
from .state import AttentionLayers, DsaIndexer, LayerStates, SsmState, StateTensor

__all__ = [
    "DTYPE_BYTES",
    "FAMILIES",
    "KINDS",
    "LAYOUTS",
    "MAX_LAYERS",
    "REGISTRY",
    "VIEWS",
    "AttentionLayers",
    "ConfigSource",
    "DsaIndexer",
    "Family",
    "KindTraits",
    "LayerStates",
    "LoadedConfig",
    "ModelConfigError",
    "NotModelledError",
    "SsmState",
    "StateTensor",
    "TensorParallelSplitError",
    "class_fields",
    "load_config",
    "ssm_state",
    "text_config",
]
