"""What ``ssm_state`` returns: each state tensor of each kind of recurrent layer, the attention
side, and the totals; and ``Sizing``, what a kind of state needs to lay its tensors out."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import ClassVar

from .dtypes import DTYPE_BYTES, DtypeRules, Rule
from .errors import check_within_64_bits

__all__ = [
    "AttentionLayers",
    "DsaIndexer",
    "LayerStates",
    "Sizing",
    "SsmState",
    "StateTensor",
    "conv_window",
    "tensor",
]


@dataclass(frozen=True, slots=True)
class StateTensor:
    """One state tensor of one layer, for one sequence on one TP rank, in the layout's order.

    ``name`` is ``"conv"``, ``"ssm"`` (Mamba), ``"recurrent"`` (gated delta net, KDA, linear
    attention), or the peer's own name where a layer holds several conv tensors. ``bytes`` is
    ``prod(shape) * DTYPE_BYTES[dtype]``, exactly."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    dtype_rule: str
    bytes: int


@dataclass(frozen=True, slots=True)
class LayerStates:
    """The recurrent layers of one kind, that hold the same tensors: ``per_layer_bytes`` is the
    sum of the tensors' bytes and ``bytes`` that times the number of layers."""

    kind: str
    layer_indices: tuple[int, ...]
    tensors: tuple[StateTensor, ...]
    per_layer_bytes: int
    bytes: int


@dataclass(frozen=True, slots=True)
class AttentionLayers:
    """The attention (KV-cache) side, whole-model figures (not per rank).

    For MLA, ``num_key_value_heads`` is 1, ``head_dim`` is ``kv_lora_rank + qk_rope_head_dim``
    and ``v_head_dim`` 0 (vLLM stores one latent). ``model_dtype`` is vLLM's ``--dtype auto``
    for the config, the KV cache's ``auto`` dtype."""

    layer_indices: tuple[int, ...]
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    v_head_dim: int
    mla: bool
    kv_lora_rank: int | None
    qk_rope_head_dim: int | None
    model_dtype: str

    def page_bytes_per_token(
        self, tp_size: int, element_bytes: int, *, latent_rope: bool = True
    ) -> int:
        """One layer's KV-cache bytes per token on one of ``tp_size`` ranks, at
        ``element_bytes`` an element (what the servers differ in: vLLM's KV or model dtype,
        SGLang's 2 B). GQA: ``max(1, kv_heads // tp_size)`` heads (the servers replicate KV
        heads past the TP size) of ``head_dim + v_head_dim`` (vLLM ``FullAttentionSpec``,
        vllm/v1/kv_cache_interface.py:552-617; SGLang ``get_num_kv_heads``,
        sglang/srt/configs/model_config.py:1700-1711). MLA: one latent of ``kv_lora_rank +
        qk_rope_head_dim``, not split (vLLM ``MLAAttentionSpec``, :743; SGLang
        ``calculate_mla_kv_cache_dim``); ``latent_rope=False`` drops the RoPE part (SGLang's
        ``use_mla_nope``, configs/model_config.py:1420-1431)."""
        heads, width = self._per_rank(tp_size, latent_rope)
        return heads * sum(width) * element_bytes

    def kv_terms(self, tp_size: int, element_bytes: int, *, latent_rope: bool = True) -> str:
        """``kv_bytes_per_token``'s terms, as a rule line shows them: ``8 KV heads x (128 +
        128) x 4 layers x 2 B``, or ``MLA (512 + 64) x 7 layers x 2 B``."""
        heads, (first, second) = self._per_rank(tp_size, latent_rope)
        layers = f"x {len(self.layer_indices)} layers x {element_bytes} B"
        if self.mla:
            return f"MLA ({first} + {second}) {layers}"
        return f"{heads} KV heads x ({first} + {second}) {layers}"

    def _per_rank(self, tp_size: int, latent_rope: bool) -> tuple[int, tuple[int, int]]:
        """The KV heads one rank holds and each head's two widths (key and value; MLA's
        latent and its RoPE part)."""
        if self.mla:
            rank, rope = self.kv_lora_rank or 0, self.qk_rope_head_dim or 0
            return 1, (rank, rope if latent_rope else 0)
        return max(1, self.num_key_value_heads // tp_size), (self.head_dim, self.v_head_dim)

    def kv_bytes_per_token(
        self,
        tp_size: int,
        element_bytes: int,
        *,
        latent_rope: bool = True,
        indexer: DsaIndexer | None = None,
    ) -> int:
        """Every attention layer's KV-cache bytes per token on one rank: ``len(layer_indices)``
        pages of ``page_bytes_per_token``, plus a DeepSeek-sparse-attention ``indexer``'s keys
        where the server keeps them (SGLang ``_compute_cell_size`` and
        ``_compute_dsa_indexer_cell_size``, sglang/srt/model_executor/pool_configurator.py:
        340-640)."""
        pages = len(self.layer_indices) * self.page_bytes_per_token(
            tp_size, element_bytes, latent_rope=latent_rope
        )
        return pages + (0 if indexer is None else indexer.bytes_per_token)


@dataclass(frozen=True, slots=True)
class DsaIndexer:
    """A DeepSeek-sparse-attention indexer's keys: ``ceil((head_dim + head_dim // 128 x 4) /
    kpool)`` uint8 bytes per token (``DSATokenToKVPool``, sglang/srt/mem_cache/memory_pool.py:
    5280-5281) for each of ``layer_indices``, the attention layers that compute their own
    top-k."""

    head_dim: int
    kpool: int
    layer_indices: tuple[int, ...]

    QUANT_BLOCK: ClassVar[int] = 128

    @property
    def per_layer_bytes(self) -> int:
        """One layer's indexer bytes per token."""
        scales = self.head_dim // self.QUANT_BLOCK * 4
        return -(-(self.head_dim + scales) // self.kpool)

    @property
    def bytes_per_token(self) -> int:
        """Every keyed layer's indexer bytes per token."""
        return self.per_layer_bytes * len(self.layer_indices)

    @property
    def rule(self) -> str:
        """The arithmetic, as the text output shows it."""
        return (
            f"ceil(({self.head_dim} + {self.head_dim} // {self.QUANT_BLOCK} x 4) / {self.kpool}) "
            f"x {len(self.layer_indices)} layers x 1 B"
        )


@dataclass(frozen=True, slots=True)
class SsmState:
    """The recurrent state of one sequence on one tensor-parallel rank, as ``layout`` lays it
    out, and the model's attention side.

    ``groups`` holds one ``LayerStates`` per kind of recurrent layer, in layer order;
    ``ssm_layers`` and ``layer_indices`` are all recurrent layers and ``per_sequence_bytes`` the
    sum of the groups' bytes. ``attention`` is ``None`` for an attention-free model (and for a
    plain transformer whose config gives no ``num_attention_heads``).

    Compatibility (0.1): ``conv_shape``, ``ssm_shape``, ``conv_bytes`` and ``ssm_bytes`` are
    those of the one conv and the one state tensor where the model has exactly one kind of
    recurrent layer holding exactly those two (Mamba, Mamba-2, gated delta net, KDA); otherwise
    the shapes are ``()`` and the bytes 0. ``per_layer_bytes`` is one layer's bytes when every
    recurrent layer holds the same bytes (0 with no recurrent layer), else ``None``.
    ``conv_dtype`` / ``ssm_dtype`` and their rules are those two tensors', else the layout's conv
    and SSM rules for this config (each tensor's own are in ``groups``). ``source`` is the file
    the config came from. Raises ``OverflowError`` when ``per_sequence_bytes`` is past 64
    bits. ``server_version`` is the release of the layout's server whose rules laid it out
    (``None`` for metrale)."""

    family: str
    model_type: str
    layout: str
    tp_size: int
    speculative_tokens: int
    source: str | None
    groups: tuple[LayerStates, ...]
    attention: AttentionLayers | None
    ssm_layers: int
    layer_indices: tuple[int, ...]
    per_sequence_bytes: int
    conv_shape: tuple[int, ...]
    ssm_shape: tuple[int, ...]
    conv_dtype: str
    ssm_dtype: str
    conv_dtype_rule: str
    ssm_dtype_rule: str
    conv_bytes: int
    ssm_bytes: int
    per_layer_bytes: int | None
    server_version: str | None = None

    def __post_init__(self) -> None:
        # Every tensor's and group's bytes are at most the sequence's.
        check_within_64_bits({"per_sequence_bytes": self.per_sequence_bytes}, self.model_type)

    def as_dict(self) -> dict[str, object]:
        """Every field, nested dataclasses as dicts and tuples as lists: ready for
        ``json.dumps``."""
        return {field.name: _plain(getattr(self, field.name)) for field in dataclasses.fields(self)}


def _plain(value: object) -> object:
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            field.name: _plain(getattr(value, field.name)) for field in dataclasses.fields(value)
        }
    return value


@dataclass(frozen=True, slots=True)
class Sizing:
    """What laying out a layer's state depends on besides its geometry: the layout, the TP size,
    the speculative tokens, the dtype rules, the speculative tokens that widen a conv window
    (``window``: ``spec``, or 0 in vLLM's model-level view of a family whose
    ``get_mamba_state_shape_from_config`` leaves them out), the kinds whose conv window the
    release widens (``widened``, ``VllmRules.widened_kinds``) and those whose conv state it
    splits by projection (``split``, ``VllmRules.split_conv_kinds``)."""

    layout: str
    tp: int
    spec: int
    dtypes: DtypeRules
    window: int = 0
    widened: frozenset[str] = frozenset()
    split: frozenset[str] = frozenset()


def tensor(name: str, shape: tuple[int, ...], rule: Rule) -> StateTensor:
    """The tensor ``name`` of ``shape`` in ``rule``'s dtype, with its exact bytes."""
    dtype, why = rule
    return StateTensor(name, shape, dtype, why, math.prod(shape) * DTYPE_BYTES[dtype])


def conv_window(
    sizing: Sizing, channels: int, kernel: int, *, kind: str | None, window_first: bool = False
) -> tuple[int, int]:
    """A conv state's shape in the layout's order: vLLM ``(K - 1 [+ spec], channels)`` (the
    default SD layout, mamba_utils.py:28-45; ``+ spec`` where the release widens ``kind``, the
    conv's kind of layer, ``None`` for one never widened), SGLang
    ``(channels, K - 1)``, or ``(K - 1, channels)`` for a kind it lays out ``window_first``
    (never widened), metrale ``(K, channels)``."""
    if sizing.layout == "vllm":
        return (kernel - 1 + (sizing.window if kind in sizing.widened else 0), channels)
    if sizing.layout == "sglang":
        return (kernel - 1, channels) if window_first else (channels, kernel - 1)
    return (kernel, channels)
