"""Gated delta net families (``qwen3_next``, ``qwen3_5``, ``qwen3_5_moe``, ``olmo_hybrid``,
``minicpmv4_6``, ``jet_nemotron``, ``gigachat3_5``), read as the servers' code reads them.

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
from pathlib import Path
from typing import Any

import pytest

from decode_ring.models import ModelConfigError, TensorParallelSplitError, class_fields, ssm_state

from .support import (
    CONFIGS,
    SMALL_QWEN3_NEXT,
    WRITTEN,
    config,
    exported,
    fields_of,
    refusal,
    refused,
    tensors,
    written,
)


def test_qwen3_next_layer_types_must_cover_every_layer() -> None:
    refused(
        {**SMALL_QWEN3_NEXT, "layer_types": ["linear_attention"] * 3},
        "qwen3_next config: field 'layer_types': has 3 entries but num_hidden_layers is 4",
    )


def test_qwen3_next_on_sglang_needs_the_interval() -> None:
    config = {
        key: value for key, value in SMALL_QWEN3_NEXT.items() if key != "full_attention_interval"
    }
    refused(
        config,
        "qwen3_next config: field 'full_attention_interval': missing; SGLang 0.5.23 counts "
        "linear layers by it alone (configs/qwen3_next.py:259-268)",
        layout="sglang",
    )


def test_a_layer_type_that_the_interval_makes_linear() -> None:
    # Issue 27: vLLM reads the list, SGLang the interval.
    qwen = {**SMALL_QWEN3_NEXT, "layer_types": ["full_attention"] * 3 + ["full_attention"]}
    assert ssm_state(qwen).ssm_layers == 0
    assert ssm_state(qwen, layout="sglang").layer_indices == (0, 1, 2)


def test_qwen3_next_value_heads_must_split() -> None:
    error = refused(
        {**SMALL_QWEN3_NEXT, "linear_num_value_heads": 3},
        "qwen3_next config: field 'linear_num_value_heads': tp_size 2 does not divide 3; "
        "the servers shard it evenly",
        tp_size=2,
    )
    assert isinstance(error, TensorParallelSplitError)
    assert error.field == "linear_num_value_heads"


@pytest.mark.parametrize(("layout", "layers"), [("vllm", 47), ("sglang", 36), ("metrale", 47)])
def test_qwen3_next_layer_types_that_contradict_the_interval(layout: str, layers: int) -> None:
    # Issue 27: transformers' Qwen3NextConfig keeps a given layer_types, which vLLM's model reads
    # (configuration_qwen3_next.py:127-137; vllm/model_executor/models/qwen3_next.py:893-913);
    # SGLang's class drops it and counts by the interval (configs/qwen3_next.py:183-269).
    qwen = config("qwen3-next-80b-a3b-instruct.json") | {
        "layer_types": ["linear_attention"] * 47 + ["full_attention"]
    }
    assert ssm_state(qwen, layout=layout).ssm_layers == layers


def test_qwen3_next_layer_types_alone_are_read_except_under_sglang() -> None:
    qwen = config("qwen3-next-80b-a3b-instruct.json")
    del qwen["full_attention_interval"]
    qwen["layer_types"] = ["linear_attention"] * 47 + ["full_attention"]
    assert ssm_state(qwen).ssm_layers == 47
    assert ssm_state(qwen, layout="metrale").ssm_layers == 47
    with pytest.raises(ModelConfigError, match="counts linear layers by it alone"):
        ssm_state(qwen, layout="sglang")


def test_olmo_hybrid_from_transformers() -> None:
    # 32 layers, full attention every 4th: 24 GDN layers of Hk = Hv = 30, dk 96, dv 192, K 4.
    state = ssm_state(exported("olmo_hybrid"))
    assert state.layer_indices == tuple(i for i in range(32) if i % 4 != 3)
    channels = 2 * 30 * 96 + 30 * 192
    assert tensors(state) == [
        ("gated_delta_net", "conv", (3, channels), "bfloat16", 3 * channels * 2),
        ("gated_delta_net", "recurrent", (30, 192, 96), "bfloat16", 30 * 192 * 96 * 2),
    ]
    assert "SGLang 0.5.23 has no olmo_hybrid model" in refusal(
        exported("olmo_hybrid"), layout="sglang"
    )


def test_minicpm_v_4_6_reads_its_qwen3_5_text_backbone_without_vllms_qwen3_5_hook() -> None:
    wrapper = exported("minicpmv4_6")
    wrapper["text_config"]["mamba_ssm_dtype"] = "float32"
    state = ssm_state(wrapper)
    assert (state.family, state.model_type, state.ssm_layers) == ("minicpmv4_6", "minicpmv4_6", 24)
    # vLLM maps no VerifyAndUpdateConfig to MiniCPMV4_6: the SSM state follows the conv state.
    assert tensors(state) == [
        ("gated_delta_net", "conv", (3, 8192), "bfloat16", 3 * 8192 * 2),
        ("gated_delta_net", "recurrent", (32, 128, 128), "bfloat16", 32 * 128 * 128 * 2),
    ]
    # SGLang passes the text config to mamba2_state_dtype.
    sglang = ssm_state(
        wrapper | {"text_config": wrapper["text_config"] | {"full_attention_interval": 4}},
        layout="sglang",
    )
    assert tensors(sglang)[1][2:] == ((32, 128, 128), "float32", 32 * 128 * 128 * 4)


def test_qwen3_5_vllm_hook_takes_mamba_ssm_dtype_and_yields_to_the_flag() -> None:
    qwen = config("qwen3.5-35b-a3b.json")
    state = ssm_state(qwen)
    assert state.ssm_dtype_rule == (
        "config mamba_ssm_dtype (vLLM Qwen3.5, vllm/model_executor/models/config.py:953-977)"
    )
    assert ssm_state(qwen, ssm_dtype="bf16").ssm_dtype == "bfloat16"
    del qwen["text_config"]["mamba_ssm_dtype"]
    assert ssm_state(qwen).ssm_dtype == "bfloat16"  # no field: auto follows the conv state
    assert ssm_state(qwen, layout="sglang").ssm_dtype == "float32"


def test_qwen3_5_text_only_config_reads_at_the_top_level() -> None:
    text = config("qwen3.5-27b.json")["text_config"]
    state = ssm_state(text)
    assert (state.family, state.model_type, state.ssm_layers) == ("qwen3_5", "qwen3_5_text", 48)


def test_qwen3_5_from_transformers() -> None:
    state = ssm_state(exported("qwen3_5_text"))
    assert (state.family, state.ssm_layers) == ("qwen3_5", 24)
    assert (state.conv_shape, state.ssm_shape) == ((3, 2 * 16 * 128 + 32 * 128), (32, 128, 128))


def test_qwen3_5_35b_a3b_per_layer_at_every_tp() -> None:
    for tp in (1, 2, 4, 8):
        state = ssm_state(CONFIGS / "qwen3.5-35b-a3b.json", tp_size=tp)
        assert state.per_layer_bytes == (3 * 8192 * 2 + 32 * 128 * 128 * 4) // tp
    assert ssm_state(CONFIGS / "qwen3.5-35b-a3b.json").per_layer_bytes == 2_146_304


def test_jet_nemotron_is_sglang_only() -> None:
    assert refusal(CONFIGS / "jet-nemotron-2b.json", tp_size=2).endswith(
        "jet_nemotron config: field 'model_type': vLLM 0.33.0 has no jet_nemotron model; use "
        "layout sglang or metrale"
    )
    state = ssm_state(CONFIGS / "jet-nemotron-2b.json", layout="sglang")
    assert state.attention is not None
    assert state.attention.layer_indices == (14, 19, 20, 21)


def test_jet_vlm_wraps_jet_nemotron() -> None:
    wrapper = {"model_type": "jet_vlm", "text_config": config("jet-nemotron-2b.json")}
    state = ssm_state(wrapper, layout="sglang")
    assert (state.family, state.model_type, state.ssm_layers) == ("jet_nemotron", "jet_vlm", 24)


def test_jet_nemotron_expand_v_must_be_a_number() -> None:
    jet = config("jet-nemotron-2b.json")
    jet["efficient_attention_config"]["jet"]["expand_v"] = "2"
    assert refusal(jet, layout="sglang") == (
        "jet_nemotron config: field 'efficient_attention_config.jet.expand_v': must be a number, "
        "got '2' (str)"
    )
    jet["efficient_attention_config"]["jet"]["expand_v"] = float("nan")
    assert "must be positive" in refusal(jet, layout="sglang")
    del jet["efficient_attention_config"]["jet"]
    assert refusal(jet, layout="sglang") == (
        "jet_nemotron config: field 'efficient_attention_config.jet': missing"
    )


def test_gigachat3_5_written_configs() -> None:
    # 12 layers, full attention at 3, 7, 11: 9 GDN layers of Hk 8, Hv 16, dk = dv = 128, K 4.
    # S:sglang/srt/configs/gigachat35.py:210-231: Mamba2StateShape with intermediate dv * Hv,
    # n_groups Hk, state dk: conv (dv*Hv + 2*Hk*dk, K - 1), temporal (Hv, dv, dk).
    conv_dim = 128 * 16 + 2 * 8 * 128
    per_layer = conv_dim * 3 * 2 + 16 * 128 * 128 * 4
    for name in ("gigachat3_5-written.json", "gigachat3_5-layer-types-written.json"):
        state = ssm_state(WRITTEN / name, layout="sglang")
        assert state.layer_indices == (0, 1, 2, 4, 5, 6, 8, 9, 10)
        assert tensors(state) == [
            ("gated_delta_net", "conv", (conv_dim, 3), "bfloat16", conv_dim * 3 * 2),
            ("gated_delta_net", "recurrent", (16, 128, 128), "float32", 16 * 128 * 128 * 4),
        ]
        assert state.per_sequence_bytes == 9 * per_layer == 9_658_368
        attention = state.attention
        assert attention is not None and attention.mla
        assert (attention.layer_indices, attention.head_dim) == ((3, 7, 11), 512 + 64)
    assert "vLLM 0.33.0 has no gigachat3_5 model" in refusal(WRITTEN / "gigachat3_5-written.json")
    tp2 = ssm_state(WRITTEN / "gigachat3_5-written.json", layout="sglang", tp_size=2)
    assert tensors(tp2)[0][2] == (conv_dim // 2, 3)


def test_gigachat3_5_layer_rules_and_dtype_hook() -> None:
    config = written("gigachat3_5-written.json")
    del config["full_attention_layers"]
    # Neither layer_types nor full_attention_layers: every layer linear (gigachat35.py:180-186).
    state = ssm_state(config, layout="sglang")
    assert (state.ssm_layers, state.attention) == (12, None)
    # mamba2_state_dtype(self): the config's mamba_ssm_dtype counts (gigachat35.py:228-231).
    config["mamba_ssm_dtype"] = "bfloat16"
    assert ssm_state(config, layout="sglang").ssm_dtype == "bfloat16"
    config["full_attention_layers"] = [12]
    assert refusal(config, layout="sglang") == (
        "gigachat3_5 config: field 'full_attention_layers': entry 12 is not a layer number from "
        "0 to 11"
    )
    listed = written("gigachat3_5-layer-types-written.json")
    listed["layer_types"] = listed["layer_types"][:11]
    assert "field 'layer_types': has 11 entries but num_hidden_layers is 12" in refusal(
        listed, layout="sglang"
    )
    # transformers 5 renames a legacy 'mamba' to 'linear_attention' for SGLang's class too
    # (PreTrainedConfig.__post_init__, remap_legacy_layer_types): a linear layer (issue 27).
    listed["layer_types"] = ["linear_attention"] * 11 + ["mamba"]
    assert ssm_state(listed, layout="sglang").ssm_layers == 12
    listed["layer_types"] = ["linear_attention"] * 11 + ["conv"]
    assert "field 'layer_types': entry 11 is 'conv'; expected" in refusal(listed, layout="sglang")
    # Its mamba2_cache_params needs every linear field, layers or not (gigachat35.py:213-218);
    # a missing one is GigaChat35Config's default (128; issue 27), a null one is refused.
    listed["layer_types"] = ["attention"] * 12
    del listed["linear_value_head_dim"]
    assert ssm_state(listed, layout="sglang").ssm_layers == 0
    listed["linear_value_head_dim"] = None
    assert refusal(listed, layout="sglang") == (
        "gigachat3_5 config: field 'linear_value_head_dim': must be an integer, got None (NoneType)"
    )


def test_gigachat3_5_takes_full_attention_as_an_alias_of_attention() -> None:
    # S:sglang/srt/configs/gigachat35.py:14-16, :172-177: _FULL_ATTENTION_ALIASES.
    config = {
        "model_type": "gigachat3_5",
        "num_hidden_layers": 3,
        "layer_types": ["linear_attention", "full_attention", "attention"],
        "linear_num_key_heads": 1,
        "linear_num_value_heads": 1,
        "linear_key_head_dim": 4,
        "linear_value_head_dim": 4,
        "linear_conv_kernel_dim": 2,
        "num_attention_heads": 1,
        "hidden_size": 4,
    }
    state = ssm_state(config, layout="sglang")
    assert state.layer_indices == (0,)
    attention = state.attention
    assert attention is not None and attention.layer_indices == (1, 2)
    # SGLang serves GigaChat35ForCausalLM as MLA always (configs/model_config.py:1393-1400),
    # ranks from GigaChat35Config's defaults kv_lora_rank 512, qk_rope_head_dim 64
    # (gigachat35.py:51-53) where the config gives none.
    assert (attention.mla, attention.kv_lora_rank, attention.qk_rope_head_dim) == (True, 512, 64)
    assert (attention.num_key_value_heads, attention.head_dim) == (1, 512 + 64)
    given = ssm_state(config | {"kv_lora_rank": 8, "qk_rope_head_dim": 0}, layout="sglang")
    assert given.attention is not None and given.attention.head_dim == 8


def test_an_mla_rank_refusal_names_the_file_family_and_field(tmp_path: Path) -> None:
    config = json.loads((WRITTEN / "gigachat3_5-written.json").read_text(encoding="utf-8"))
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config | {"kv_lora_rank": "x"}))
    error = refused(
        path,
        f"{str(path)!a}: gigachat3_5 config: field 'kv_lora_rank': must be an integer, got 'x' "
        "(str)",
        layout="sglang",
    )
    assert fields_of(error) == (str(path), "gigachat3_5", "kv_lora_rank")


def test_qwen3_next_interval_of_one_makes_every_layer_attention_and_zero_is_refused() -> None:
    # transformers' Qwen3NextConfig.__post_init__ (configuration_qwen3_next.py:130-135):
    # "linear_attention" if (i + 1) % interval else "full_attention"; 1 divides every i + 1, and
    # 0 is a ZeroDivisionError, which the package refuses as no interval.
    listless = {key: value for key, value in SMALL_QWEN3_NEXT.items() if key != "layer_types"}
    state = ssm_state(listless | {"full_attention_interval": 1})
    assert state.ssm_layers == 0
    assert state.attention is not None and state.attention.layer_indices == (0, 1, 2, 3)
    assert ssm_state(listless | {"full_attention_interval": 2}).layer_indices == (0, 2)
    assert refusal(listless | {"full_attention_interval": 0}) == (
        "qwen3_next config: field 'full_attention_interval': 0 is no layer interval; the class "
        "builds layer_types from it (Qwen3NextConfig (transformers 5.20.2, "
        "transformers/models/qwen3_next/configuration_qwen3_next.py:23))"
    )


def interns2_mobius() -> dict[str, Any]:
    loaded: dict[str, Any] = written("interns2-mobius-sglang-0.5.23-defaults.json")
    return loaded


def test_sglang_drops_qwen3_next_layer_types_but_interns2_mobius_keeps_them() -> None:
    # SGLang's Qwen3NextConfig takes layer_types as an argument and never stores it
    # (S:sglang/srt/configs/qwen3_next.py:183-221); InternS2MobiusTextConfig sets the given list
    # back (S:sglang/srt/configs/interns2_mobius.py:21-29), which its layers still do not read:
    # they count by full_attention_interval (configs/qwen3_next.py:259-268).
    qwen = config("qwen3-next-80b-a3b-instruct.json") | {"layer_types": ["linear_attention"] * 48}
    assert "layer_types" not in class_fields(qwen, layout="sglang")
    assert class_fields(qwen)["layer_types"] == ["linear_attention"] * 48
    mobius = interns2_mobius()
    kinds = ["linear_attention"] * 47 + ["full_attention"]
    mobius["text_config"]["layer_types"] = kinds
    assert class_fields(mobius, layout="sglang")["layer_types"] == kinds
    assert ssm_state(mobius, layout="sglang").ssm_layers == 36  # every fourth of 48 attention
    # vLLM has no class for it (the checkpoint's own code): its model reads the list
    # (vllm/model_executor/models/interns2_mobius.py:318).
    assert ssm_state(mobius).ssm_layers == 47
    del mobius["text_config"]["layer_types"]
    assert "layer_types" not in class_fields(mobius, layout="sglang")


def test_interns2_mobius_without_a_class_needs_layer_types_or_the_interval_under_vllm() -> None:
    # No vLLM class builds layer_types for interns2_mobius: a file with neither field gives
    # vLLM's model nothing to read; a list must cover num_hidden_layers (48).
    mobius = interns2_mobius()
    kinds = mobius["text_config"].pop("layer_types")
    del mobius["text_config"]["full_attention_interval"]
    assert refusal(mobius) == (
        "interns2_mobius config: field 'full_attention_interval': missing; needed when there is "
        "no layer_types"
    )
    mobius["text_config"] |= {"full_attention_interval": 4, "layer_types": kinds[:47]}
    assert refusal(mobius) == (
        "interns2_mobius config: field 'layer_types': has 47 entries but num_hidden_layers is 48"
    )


def test_qwen_output_gate_refusal_names_the_value_and_vllms_line() -> None:
    # vLLM's QwenGatedDeltaNetAttention asserts silu, swish or sigmoid
    # (vllm/model_executor/layers/mamba/gdn/qwen_gdn_linear_attn.py:659-663).
    assert refusal({**SMALL_QWEN3_NEXT, "output_gate_type": "relu"}) == (
        "qwen3_next config: field 'output_gate_type': is 'relu'; vLLM 0.33.0's "
        "QwenGatedDeltaNetAttention asserts silu, swish or sigmoid "
        "(vllm/model_executor/layers/mamba/gdn/qwen_gdn_linear_attn.py:659-663)"
    )


def olmo(**fields: Any) -> dict[str, Any]:
    return {
        "model_type": "olmo_hybrid",
        "num_hidden_layers": 6,
        "hidden_size": 64,
        "num_attention_heads": 4,
        **fields,
    }


def test_olmo_hybrid_class_derives_its_layers_and_linear_fields() -> None:
    # transformers' OlmoHybridConfig.__post_init__ (configuration_olmo_hybrid.py:121-141): layer
    # i % 4 == 3 full attention; linear key and value heads num_attention_heads 4; key dim
    # int(0.75 * 64 / 4) = 12, value dim 2 * 12 = 24; kernel 4 (its default);
    # num_key_value_heads num_attention_heads.
    state = ssm_state(olmo())
    assert state.layer_indices == (0, 1, 2, 4, 5)
    assert (state.conv_shape, state.ssm_shape) == ((3, 2 * 4 * 12 + 4 * 24), (4, 24, 12))
    fields = class_fields(olmo())
    assert (
        fields["layer_types"]
        == ["linear_attention"] * 3 + ["full_attention"] + ["linear_attention"] * 2
    )
    assert fields["num_key_value_heads"] == 4
    # hidden_size 0: int(0.75 * 0 / 4) = 0 (the reader then refuses the hidden size).
    assert class_fields(olmo(hidden_size=0))["linear_key_head_dim"] == 0


def test_olmo_hybrid_class_keeps_the_fields_a_config_gives() -> None:
    given = olmo(
        layer_types=["full_attention"] + ["linear_attention"] * 5,
        linear_num_key_heads=2,
        linear_key_head_dim=16,
        linear_value_head_dim=20,
        num_key_value_heads=2,
    )
    state = ssm_state(given)
    assert state.layer_indices == (1, 2, 3, 4, 5)
    # value heads default to num_attention_heads (4), the rest as given.
    assert (state.conv_shape, state.ssm_shape) == ((3, 2 * 2 * 16 + 4 * 20), (4, 20, 16))
    fields = class_fields(given)
    assert (fields["linear_num_key_heads"], fields["num_key_value_heads"]) == (2, 2)
    # Key dim from the given key heads: int(0.75 * 64 / 2) = 24, value dim 48.
    derived = class_fields(olmo(linear_num_key_heads=2))
    assert (derived["linear_key_head_dim"], derived["linear_value_head_dim"]) == (24, 48)
    assert class_fields(olmo(linear_key_head_dim=10))["linear_value_head_dim"] == 20


def test_olmo_hybrid_with_fewer_than_four_layers_makes_the_last_one_attention() -> None:
    # configuration_olmo_hybrid.py:128-130: no i % 4 == 3, so the last layer is full attention.
    for layers, linear in ((2, (0,)), (3, (0, 1)), (4, (0, 1, 2))):
        state = ssm_state(olmo(num_hidden_layers=layers))
        assert state.layer_indices == linear
        assert state.attention is not None and state.attention.layer_indices == (layers - 1,)


def test_olmo_hybrid_refuses_layer_types_without_a_linear_or_an_attention_layer() -> None:
    # OlmoHybridConfig.validate_architecture (configuration_olmo_hybrid.py:145-150).
    for kinds in (["full_attention"] * 6, ["linear_attention"] * 6):
        error = refused(
            olmo(layer_types=kinds),
            "olmo_hybrid config: field 'layer_types': needs at least one linear_attention and "
            "one attention layer (OlmoHybridConfig (transformers 5.20.2, "
            "transformers/models/olmo_hybrid/configuration_olmo_hybrid.py:29))",
        )
        assert fields_of(error)[2] == "layer_types"
