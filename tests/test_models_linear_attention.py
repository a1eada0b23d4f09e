"""Lightning (linear) attention families (Bailing's lightning variant, ``minicpm_sala``), read as
the servers' code reads them.

Every expected number is written out from the checkpoint's published config values (the products
spell the fields: layers x (conv window x channels x bytes + heads x head dim x d_state x bytes)),
or from the wheels' code (vllm-0.33.0, sglang-0.5.23, cited file:lines; the same cases run through
the servers' own functions in tools/peer_agreement), never computed by the code under test.
Families with no public checkpoint (tests/configs/PROVENANCE.md) are read from transformers 5.23's
own ``to_dict()``, or from configs written out from the fields the wheels read
(tests/configs/written/, not released checkpoints).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from decode_ring.models import TensorParallelSplitError, class_fields, ssm_state

from .support import CONFIGS, bailing, refusal, tensors


def test_bailing_lightning_variant() -> None:
    # Ling/Ring 2.5 (BailingMoeV2.5): no short conv. transformers' class insists on the field,
    # so it is taken out of its to_dict().
    config = bailing()
    del config["short_conv_kernel_size"]
    layers = tuple(i for i in range(42) if (i + 1) % 6)
    vllm = ssm_state(config)
    assert vllm.layer_indices == layers
    # vLLM keeps it in the model dtype; SGLang in float32 beside an empty conv state.
    assert tensors(vllm) == [
        ("linear_attention", "recurrent", (32, 64, 64), "bfloat16", 32 * 64 * 64 * 2)
    ]
    assert tensors(ssm_state(config, layout="sglang", tp_size=2)) == [
        ("linear_attention", "conv", (0, 0), "bfloat16", 0),
        ("linear_attention", "recurrent", (16, 64, 64), "float32", 16 * 64 * 64 * 4),
    ]
    assert ssm_state(config, conv_dtype="fp32").groups[0].tensors[0].dtype == "float32"
    # No conv state, so nothing to widen.
    assert ssm_state(config, speculative_tokens=3).per_sequence_bytes == vllm.per_sequence_bytes


def sala(**fields: Any) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((CONFIGS / "minicpm-sala.json").read_text("utf-8"))
    return {**loaded, **fields}


SALA_ATTENTION = (0, 9, 16, 17, 22, 29, 30, 31)


def test_minicpm_sala_fixture() -> None:
    # S:sglang/srt/configs/minicpm.py:148-169: Mamba2StateShape(intermediate 0, n_groups 0,
    # heads lightning_nkv 32, head_dim = state = lightning_head_dim 128, kernel 1).
    state = ssm_state(sala(), layout="sglang", tp_size=2)
    assert state.layer_indices == tuple(i for i in range(32) if i not in SALA_ATTENTION)
    assert tensors(state) == [
        ("linear_attention", "conv", (0, 0), "bfloat16", 0),
        ("linear_attention", "recurrent", (16, 128, 128), "float32", 16 * 128 * 128 * 4),
    ]
    attention = state.attention
    assert attention is not None
    assert (attention.layer_indices, attention.num_key_value_heads) == (SALA_ATTENTION, 2)
    assert "vLLM 0.33.0 has no minicpm_sala model" in refusal(sala())
    with pytest.raises(TensorParallelSplitError, match="'lightning_nkv': tp_size 3 does not"):
        ssm_state(sala(), layout="sglang", tp_size=3)


def test_minicpm_sala_repeats_a_short_mixer_list_and_reads_aliases() -> None:
    # minicpm.py:93-104: aliases, then the list repeated to num_hidden_layers.
    config = sala(num_hidden_layers=5, mixer_types=["attn", "lightning"])
    assert ssm_state(config, layout="sglang").layer_indices == (1, 3)
    empties: tuple[list[str] | None, ...] = ([], None)
    for empty in empties:
        state = ssm_state(sala(mixer_types=empty), layout="sglang")
        assert (state.ssm_layers, state.per_sequence_bytes) == (0, 0)
    assert refusal(sala(num_hidden_layers=2, mixer_types=["lightning"] * 3), layout="sglang") == (
        "minicpm_sala config: field 'mixer_types': has 3 entries, more than num_hidden_layers 2"
    )
    assert "field 'mixer_types': entry 0 is 'mamba'; expected" in refusal(
        sala(mixer_types=["mamba"]), layout="sglang"
    )


def test_minicpm_sala_heads_and_their_fallbacks() -> None:
    # lightning_nkv, else num_key_value_heads; lightning_head_dim, else head_dim, else
    # hidden_size // num_attention_heads (minicpm.py:78-80, :105-113).
    config = sala()
    for field in ("lightning_nh", "lightning_nkv", "lightning_head_dim", "head_dim"):
        del config[field]
    config["num_key_value_heads"] = 32
    state = ssm_state(config, layout="sglang")
    assert tensors(state)[1][2] == (32, 4096 // 32, 4096 // 32)
    # Each fallback on its own: 16 KV heads (num_key_value_heads, with 16 query heads from
    # lightning_nh), head_dim 64.
    config |= {"num_key_value_heads": 16, "lightning_nh": 16, "head_dim": 64}
    assert tensors(ssm_state(config, layout="sglang"))[1][2] == (16, 64, 64)
    with pytest.raises(TensorParallelSplitError, match="'num_key_value_heads': tp_size 3 does"):
        ssm_state(config, layout="sglang", tp_size=3)
    # The seg_la backend needs as many query as KV heads (minicpm.py:114-124).
    assert refusal(sala(lightning_nkv=16), layout="sglang") == (
        "minicpm_sala config: field 'lightning_nh': 32 query heads but 16 KV heads "
        "(lightning_nkv); SGLang 0.5.23's lightning attention requires them equal "
        "(configs/minicpm.py:110-120)"
    )
    assert ssm_state(sala(lightning_nkv=16, mixer_types=["minicpm4"]), layout="sglang").groups == ()


def test_minicpm_sala_lightning_head_dim_over_head_dim_over_hidden_size() -> None:
    # S:sglang/srt/configs/minicpm.py:78-80, :110-112, :158-166: heads lightning_nkv of
    # lightning_head_dim, state lightning_head_dim; head_dim falls back to
    # hidden_size // num_attention_heads (floor division).
    sala: dict[str, Any] = {
        "model_type": "minicpm_sala",
        "num_hidden_layers": 1,
        "mixer_types": ["lightning"],
        "hidden_size": 36,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "head_dim": 16,
        "lightning_head_dim": 8,
    }
    recurrent = ssm_state(sala, layout="sglang").groups[0].tensors[1]
    assert (recurrent.shape, recurrent.bytes) == ((4, 8, 8), 4 * 8 * 8 * 4)
    del sala["lightning_head_dim"], sala["head_dim"]
    recurrent = ssm_state(sala, layout="sglang").groups[0].tensors[1]
    # 36 // 4 = 9.
    assert (recurrent.shape, recurrent.bytes) == ((4, 9, 9), 4 * 9 * 9 * 4)
    assert all(type(size) is int for size in recurrent.shape)


def small_sala(**fields: Any) -> dict[str, Any]:
    return {
        "model_type": "minicpm_sala",
        "num_hidden_layers": 5,
        "hidden_size": 36,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "mixer_types": ["attn", "lightning"],
        **fields,
    }


def test_minicpm_sala_class_derives_head_dim_mixers_and_lightning_heads() -> None:
    # SGLang's MiniCPMHybridConfig.__init__ (S:sglang/srt/configs/minicpm.py:78-80, :93-113):
    # head_dim 36 // 4 = 9; mixer_types through the aliases, repeated to 5 layers; lightning_nh
    # num_attention_heads, lightning_nkv num_key_value_heads, lightning_head_dim head_dim.
    held = class_fields(small_sala(), layout="sglang")
    assert held["head_dim"] == 9
    assert held["mixer_types"] == ["minicpm4", "lightning-attn"] * 2 + ["minicpm4"]
    assert (held["lightning_nh"], held["lightning_nkv"], held["lightning_head_dim"]) == (4, 4, 9)
    # No mixer_types: ["minicpm4"] repeated (:93-94).
    listless = {key: value for key, value in small_sala().items() if key != "mixer_types"}
    assert class_fields(listless, layout="sglang")["mixer_types"] == ["minicpm4"] * 5
    # As many mixers as layers: the list through the aliases, as it is (:95-104).
    even = class_fields(
        small_sala(num_hidden_layers=2, mixer_types=["lightning", "attn"]), layout="sglang"
    )
    assert (even["mixer_types"], even["lightning_nh"]) == (["lightning-attn", "minicpm4"], 4)


def test_minicpm_sala_without_query_heads_is_refused_naming_them() -> None:
    # MiniCPMHybridConfig divides hidden_size by num_attention_heads for a missing head_dim
    # (S:sglang/srt/configs/minicpm.py:78-80): 0 or null fails there. Every layer lightning, so
    # no attention layer reads the heads first.
    lightning = small_sala(mixer_types=["lightning"])
    assert refusal(lightning | {"num_attention_heads": 0, "lightning_nh": 4}, layout="sglang") == (
        "minicpm_sala config: field 'num_attention_heads': must be at least 1, got 0"
    )
    assert refusal(lightning | {"num_attention_heads": None}, layout="sglang") == (
        "minicpm_sala config: field 'num_attention_heads': must be an integer, got None (NoneType)"
    )


def test_minicpm_sala_of_no_layers_has_no_state() -> None:
    # MiniCPMHybridConfig repeats ["minicpm4"] (0 + 1 - 1) // 1 = 0 times (configs/minicpm.py:93-
    # 104): no mixer, so no lightning layer and no attention layer.
    listless = {key: value for key, value in small_sala().items() if key != "mixer_types"}
    state = ssm_state(listless | {"num_hidden_layers": 0}, layout="sglang")
    assert (state.ssm_layers, state.groups, state.attention) == (0, (), None)
    # The class checks the length of a given list only (elif, :93-96): the default ["minicpm4"]
    # of 0 layers is no refusal, and the lightning defaults follow (:105-113).
    held = class_fields(listless | {"num_hidden_layers": 0}, layout="sglang")
    assert (held["mixer_types"], held["lightning_nh"], held["lightning_head_dim"]) == ([], 4, 9)
