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

The package's modules: ``mamba1``, ``mamba2``, ``gated_delta_net``, ``kda``, ``short_conv``,
``linear_attention`` (one per kind of state: a geometry that lays out its tensors with the
servers' TP rules); ``families`` (the registry: one reader and one entry per family, the removed
families); ``loading`` (files, directories); ``dtypes`` (every dtype rule); ``attention`` (the KV
side and its TP checks); ``fields`` (typed, bounded field reads named in every refusal);
``errors``; ``state`` (the returned types); ``read`` (``ssm_state``, wrappers).

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
from .families import FAMILIES
from .fields import MAX_LAYERS
from .loading import ConfigSource
from .read import LAYOUTS, ssm_state
from .state import AttentionLayers, LayerStates, SsmState, StateTensor

__all__ = [
    "DTYPE_BYTES",
    "FAMILIES",
    "LAYOUTS",
    "MAX_LAYERS",
    "AttentionLayers",
    "ConfigSource",
    "LayerStates",
    "ModelConfigError",
    "SsmState",
    "StateTensor",
    "TensorParallelSplitError",
    "ssm_state",
]
