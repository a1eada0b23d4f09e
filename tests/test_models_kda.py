"""KDA families (``kimi_linear``, Bailing's KDA variant, ``glm5_next``, ``alice_ai``), read as the
servers' code reads them.

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

from decode_ring.models import ModelConfigError, TensorParallelSplitError, class_fields, ssm_state

from .support import (
    CONFIGS,
    SMALL_KIMI,
    SMALL_LIGHTNING,
    VLLM_LIGHTNING,
    WRITTEN,
    bailing,
    config,
    exported,
    refusal,
    refused,
    run_json,
    tensors,
    written,
)


def test_a_kda_state_as_a_dict_whole() -> None:
    state = ssm_state(SMALL_KIMI, tp_size=2, speculative_tokens=1)
    conv_rule = "config dtype float16 (vLLM: model dtype)"
    kda_rule = "vLLM KDA default float32 (vllm/model_executor/layers/mamba/mamba_utils.py:133-151)"
    assert state.as_dict() == {
        "family": "kimi_linear",
        "model_type": "kimi_linear",
        "layout": "vllm",
        "tp_size": 2,
        "speculative_tokens": 1,
        "source": None,
        "groups": [
            {
                "kind": "kda",
                "layer_indices": [0, 2],
                "tensors": [
                    {
                        "name": "conv",
                        "shape": [3, 12],
                        "dtype": "float16",
                        "dtype_rule": conv_rule,
                        "bytes": 72,
                    },
                    {
                        "name": "recurrent",
                        "shape": [1, 4, 4],
                        "dtype": "float32",
                        "dtype_rule": kda_rule,
                        "bytes": 64,
                    },
                ],
                "per_layer_bytes": 136,
                "bytes": 272,
            }
        ],
        "attention": {
            "layer_indices": [1],
            "num_attention_heads": 4,
            "num_key_value_heads": 1,
            "head_dim": 10,
            "v_head_dim": 0,
            "mla": True,
            "kv_lora_rank": 8,
            "qk_rope_head_dim": 2,
            "model_dtype": "float16",
        },
        "ssm_layers": 2,
        "layer_indices": [0, 2],
        "per_sequence_bytes": 272,
        "conv_shape": [3, 12],
        "ssm_shape": [1, 4, 4],
        "conv_dtype": "float16",
        "ssm_dtype": "float32",
        "conv_dtype_rule": conv_rule,
        "ssm_dtype_rule": kda_rule,
        "conv_bytes": 72,
        "ssm_bytes": 64,
        "per_layer_bytes": 136,
        "server_version": "0.33.0",
    }


def test_kimi_linear_layers_and_mla_attention() -> None:
    state = ssm_state(CONFIGS / "kimi-linear-48b-a3b-instruct.json")
    full = (3, 7, 11, 15, 19, 23, 26)
    assert state.layer_indices == tuple(i for i in range(27) if i not in full)
    assert state.attention is not None
    assert state.attention.layer_indices == full
    assert (state.attention.mla, state.attention.num_key_value_heads) == (True, 1)
    assert (state.attention.head_dim, state.attention.v_head_dim) == (512 + 64, 0)
    assert (state.attention.kv_lora_rank, state.attention.qk_rope_head_dim) == (512, 64)
    assert state.per_layer_bytes == 2_170_880


def test_kda_recurrent_state_is_float32_and_refuses_float16_under_vllm() -> None:
    kimi = config("kimi-linear-48b-a3b-instruct.json")
    # Issue 27: Kimi-Linear's KDA layer (no use_full_rank_gate) passes no --mamba-ssm-cache-
    # dtype (kimi_gdn_linear_attn.py:157-164): float32; the model-level view takes the flag.
    assert ssm_state(kimi, ssm_dtype="bf16").ssm_dtype == "float32"
    assert ssm_state(kimi, ssm_dtype="bf16", view="model").ssm_dtype == "bfloat16"
    full_rank = kimi | {
        "linear_attn_config": {**kimi["linear_attn_config"], "use_full_rank_gate": True}
    }
    assert ssm_state(full_rank, ssm_dtype="bf16").ssm_dtype == "bfloat16"
    assert refusal(kimi, ssm_dtype="fp16") == (
        "argument ssm_dtype: vLLM 0.33.0 keeps a KDA recurrent state only in float32 or "
        "bfloat16 (vllm/model_executor/layers/mamba/mamba_utils.py:143-149), not float16"
    )
    assert ssm_state(kimi, ssm_dtype="fp16", layout="sglang").ssm_dtype == "float16"


def test_kda_speculative_tokens_widen_vllm_only() -> None:
    kimi = config("kimi-linear-48b-a3b-instruct.json")
    assert ssm_state(kimi, speculative_tokens=2).conv_shape == (5, 12288)
    assert ssm_state(kimi, speculative_tokens=2, layout="sglang").conv_shape == (3, 12288)


def test_kimi_linear_layer_lists_that_disagree_are_refused_naming_both() -> None:
    kimi = config("kimi-linear-48b-a3b-instruct.json")
    linear = kimi["linear_attn_config"]
    message = refusal(kimi | {"linear_attn_config": linear | {"full_attn_layers": [4, 8]}})
    assert message == (
        "kimi_linear config: field 'linear_attn_config.full_attn_layers': layer 11 is "
        "'not listed' but kda_layers makes it 'attention'; the two layer descriptions disagree"
    )
    message = refusal(kimi | {"linear_attn_config": linear | {"kda_layers": [0, 1]}})
    assert message == (
        "kimi_linear config: field 'linear_attn_config.kda_layers': entry 0 is not a layer "
        "number from 1 to 27"
    )
    message = refusal(kimi | {"linear_attn_config": linear | {"num_heads": 30}}, tp_size=4)
    assert message == (
        "kimi_linear config: field 'linear_attn_config.num_heads': tp_size 4 does not divide "
        "30; the servers shard it evenly"
    )


def test_kimi_linear_needs_its_linear_attn_config() -> None:
    # transformers 5.23's KimiLinearConfig writes linear_num_heads and layer_types instead; both
    # servers read linear_attn_config through their own config classes.
    message = refusal(exported("kimi_linear"))
    assert message == "kimi_linear config: field 'linear_attn_config': missing"


def test_kimi_full_attn_layers_that_name_a_kda_layer() -> None:
    linear = {**SMALL_KIMI["linear_attn_config"], "full_attn_layers": [1, 2]}
    refused(
        {**SMALL_KIMI, "linear_attn_config": linear},
        "kimi_linear config: field 'linear_attn_config.full_attn_layers': layer 0 is "
        "'full attention' but kda_layers makes it 'KDA'; the two layer descriptions disagree",
    )


def test_kimi_linear_classes_take_head_dim_and_kv_heads_from_the_heads_where_null() -> None:
    # vLLM's and SGLang's KimiLinearConfig.__init__ (vllm/transformers_utils/configs/
    # kimi_linear.py:63-74, S:sglang/srt/configs/kimi_linear.py:69-80): head_dim None is
    # hidden_size // num_attention_heads (42 // 4 = 10), num_key_value_heads None the heads (4);
    # given ones are kept.
    kimi = {**SMALL_KIMI, "hidden_size": 42}
    for layout in ("vllm", "sglang"):
        fields = class_fields(kimi, layout=layout)
        assert (fields["head_dim"], fields["num_key_value_heads"]) == (10, 4)
        assert type(fields["head_dim"]) is int
        given = class_fields(kimi | {"head_dim": 7, "num_key_value_heads": 2}, layout=layout)
        assert (given["head_dim"], given["num_key_value_heads"]) == (7, 2)


def test_kimi_attention_is_mla_under_both_servers_and_needs_kv_lora_rank() -> None:
    # Both servers build Kimi's attention layers as MLA, whatever the config gives: vLLM asserts
    # its fields (vllm/models/kimi_k3/nvidia/model.py:735-745); SGLang builds KimiMLAAttention
    # with config.kv_lora_rank (S:sglang/srt/models/kimi_linear.py:567-581) and sizes its cache
    # as MLA (S:configs/model_config.py:1463-1474), its class defaulting kv_lora_rank to None
    # (S:configs/kimi_linear.py:50). A config without it is refused, not read as GQA.
    kimi = {key: value for key, value in SMALL_KIMI.items() if key != "kv_lora_rank"}
    assert refusal(kimi).startswith("kimi_linear config: field 'kv_lora_rank': missing; ")
    assert refusal(kimi, layout="sglang") == (
        "kimi_linear config: field 'kv_lora_rank': must be an integer, got None (NoneType)"
    )
    # With no attention layer there is nothing to build.
    linear = {"kda_layers": [1, 2, 3], "full_attn_layers": []}
    all_kda = kimi | {"linear_attn_config": kimi["linear_attn_config"] | linear}
    for layout in ("vllm", "sglang"):
        assert ssm_state(all_kda, layout=layout).attention is None


def test_bailing_attention_is_mla_and_a_null_kv_lora_rank_is_refused() -> None:
    # SGLang sizes BailingMoeV2_5ForCausalLM's and BailingMoeV3ForCausalLM's cache as MLA
    # whatever kv_lora_rank is (S:sglang/srt/configs/model_config.py:1476-1503), and its class
    # keeps a given null (S:configs/bailing_hybrid.py); vLLM's transformers class refuses the null.
    lightning = {**SMALL_LIGHTNING, "kv_lora_rank": None, "num_key_value_heads": 1}
    for layout in ("sglang", "vllm"):
        message = refusal(lightning, layout=layout)
        assert message.startswith(
            "bailing_hybrid config: field 'kv_lora_rank': must be an integer, got None (NoneType)"
        )
    attention = ssm_state(SMALL_LIGHTNING, layout="sglang").attention
    assert attention is not None and attention.mla


def test_vllm_bailing_kda_requires_no_kda_lora() -> None:
    # V:vllm/model_executor/models/bailing_moe_v3.py:686-687 raises unless
    # getattr(config, "no_kda_lora", False) is true; SGLang has no such check.
    expected = (
        "bailing_hybrid config: field 'no_kda_lora': {}; vLLM 0.33.0's BailingMoeV3 KDA layer "
        "requires no_kda_lora true (vllm/model_executor/models/bailing_moe_v3.py:686-687)"
    )
    kda = bailing() | {"architectures": ["BailingMoeV3ForCausalLM"]}
    missing = {key: value for key, value in kda.items() if key != "no_kda_lora"}
    assert refusal(missing) == expected.format("missing")
    assert refusal(missing, layout="metrale") == expected.format("missing")
    for falsy, shown in ((False, "is False"), (None, "is None"), (0, "is 0"), ("", "is ''")):
        assert refusal(kda | {"no_kda_lora": falsy}) == expected.format(shown)
    assert ssm_state(missing, layout="sglang").ssm_layers == 35
    # Python truth, as getattr reads it.
    assert ssm_state(kda | {"no_kda_lora": 1}).ssm_layers == 35
    # The layer is built only for KDA layers: the lightning variant and a config with no KDA
    # layer never reach the check.
    lightning = missing | {"architectures": ["BailingMoeV2_5ForCausalLM"]}
    assert ssm_state(lightning).groups[0].kind == "linear_attention"
    assert ssm_state(missing | {"layer_group_size": 1}).ssm_layers == 0


def test_bailing_kda_variant() -> None:
    state = ssm_state(bailing())
    assert state.layer_indices == tuple(i for i in range(42) if (i + 1) % 6)
    assert tensors(state) == [
        ("kda", "conv", (3, 3 * 32 * 64), "bfloat16", 3 * 6144 * 2),
        ("kda", "recurrent", (32, 64, 64), "float32", 32 * 64 * 64 * 4),
    ]
    # BailingMoeV3 passes no --mamba-ssm-cache-dtype to kda_state_dtype.
    assert ssm_state(bailing(), ssm_dtype="bf16").ssm_dtype == "float32"
    assert ssm_state(bailing(), ssm_dtype="bf16", layout="sglang").ssm_dtype == "bfloat16"


def test_bailing_kda_layers_past_the_last_group_are_attention_in_vllm_only() -> None:
    config = bailing(num_hidden_layers=44)
    assert ssm_state(config).layer_indices == tuple(i for i in range(42) if (i + 1) % 6)
    sglang = ssm_state(config, layout="sglang")
    assert sglang.layer_indices == tuple(i for i in range(44) if (i + 1) % 6)


def test_bailing_vllm_picks_the_variant_by_architecture() -> None:
    lightning = bailing() | {"architectures": ["BailingMoeV2_5ForCausalLM"]}
    assert ssm_state(lightning).groups[0].kind == "linear_attention"
    assert ssm_state(lightning, layout="sglang").groups[0].kind == "kda"
    kda = bailing() | {"architectures": ["BailingMoeV3ForCausalLM"]}
    assert ssm_state(kda).groups[0].kind == "kda"


def test_bailing_sglang_reads_a_per_layer_schedule() -> None:
    schedule = [1, 1, 0, 1]
    config = bailing(num_hidden_layers=4) | {"layer_group_size": schedule}
    assert ssm_state(config, layout="sglang").layer_indices == (0, 1, 3)
    with pytest.raises(ModelConfigError, match="'layer_group_size': must be an integer"):
        ssm_state(config)


def test_bailing_kda_names_its_heads_and_keeps_integer_sizes() -> None:
    kda = {**SMALL_LIGHTNING, "short_conv_kernel_size": 4, "no_kda_lora": True}
    error = refused(
        kda,
        "bailing_hybrid config: field 'num_attention_heads': tp_size 3 does not divide 2; the "
        "servers shard it evenly",
        tp_size=3,
    )
    assert error.field == "num_attention_heads"
    fallback = {k: v for k, v in SMALL_LIGHTNING.items() if k != "head_dim"} | {"hidden_size": 6}
    shape = ssm_state(fallback).groups[0].tensors[0].shape
    assert [type(size) for size in shape] == [int, int, int]
    refused(
        {**SMALL_LIGHTNING, "layer_group_size": [1, 0, 1]},
        "bailing_hybrid config: field 'layer_group_size': has 3 entries but num_hidden_layers is 2",
        layout="sglang",
    )


def test_sglang_bailing_head_dim_zero_or_null_is_hidden_size_over_heads() -> None:
    # S:sglang/srt/configs/bailing_hybrid.py:129: head_dim or hidden_size // num_attention_heads
    # (11 // 2 = 5), which its KDA state is sized by; a given head_dim is kept.
    for head_dim in (0, None):
        kda = {
            **SMALL_LIGHTNING,
            "short_conv_kernel_size": 4,
            "hidden_size": 11,
            "head_dim": head_dim,
        }
        fields = class_fields(kda, layout="sglang")
        assert fields["head_dim"] == 5 and type(fields["head_dim"]) is int
        assert ssm_state(kda, layout="sglang").ssm_shape == (2, 5, 5)
    kept = {**SMALL_LIGHTNING, "hidden_size": 11}
    assert class_fields(kept, layout="sglang")["head_dim"] == 4
    # With no head_dim, a hidden_size that is no integer leaves SGLang's class None // 2
    # (a TypeError): refused, naming hidden_size.
    for hidden, shown in ((None, "None (NoneType)"), ("8", "'8' (str)")):
        lightning = {**SMALL_LIGHTNING, "head_dim": None, "hidden_size": hidden}
        assert refusal(lightning, layout="sglang") == (
            f"bailing_hybrid config: field 'hidden_size': must be an integer, got {shown}"
        )


def test_vllm_bailing_keeps_a_given_linear_head_dim() -> None:
    # transformers 5.20.2's BailingHybridConfig.__post_init__ sets linear_head_dim from head_dim
    # (configuration_bailing_hybrid.py:139), then PreTrainedConfig.__post_init__ sets the file's
    # undeclared keys, linear_head_dim among them (configuration_utils.py:497), over it.
    lightning = {**VLLM_LIGHTNING, "head_dim": 128}
    assert class_fields(lightning)["linear_head_dim"] == 128
    assert class_fields(lightning | {"linear_head_dim": 96})["linear_head_dim"] == 96


def test_vllm_bailing_layer_types_are_made_from_the_group_size() -> None:
    # transformers 5.20.2's BailingHybridConfig.__post_init__ (configuration_bailing_hybrid.py:
    # 143-147): no layer_types is full_attention where (i + 1) % layer_group_size == 0, else
    # linear_attention; a given list is kept.
    lightning = {**VLLM_LIGHTNING, "num_hidden_layers": 6, "layer_group_size": 3}
    linear, full = "linear_attention", "full_attention"
    assert class_fields(lightning)["layer_types"] == [linear, linear, full] * 2
    given = [full, linear, linear, linear, full, linear]
    assert class_fields(lightning | {"layer_types": given})["layer_types"] == given


def glm5() -> dict[str, Any]:
    transformers = pytest.importorskip("transformers")
    made: dict[str, Any] = transformers.AutoConfig.for_model("glm5_next").to_dict()
    return made


# transformers' Glm5NextTextConfig defaults: 45 layers, KDA where i % 4 != 3 (34 of them),
# 64 heads of 128, kernel 4; MLA with kv_lora_rank 512 and no RoPE part.
GLM5_KDA = tuple(i for i in range(45) if i % 4 != 3)


def test_glm5_next_from_transformers() -> None:
    config = glm5()
    assert config["text_config"]["model_type"] == "glm5_next_text"
    vllm = ssm_state(config)
    assert (vllm.family, vllm.model_type, vllm.layer_indices) == (
        "glm5_next",
        "glm5_next",
        GLM5_KDA,
    )
    # V:vllm/models/glm5next/common/kda.py:189-202: kda_state_shape(tp, 64, 128, 4, num_spec).
    assert tensors(vllm) == [
        ("kda", "conv", (3, 3 * 64 * 128), "bfloat16", 3 * 3 * 64 * 128 * 2),
        ("kda", "recurrent", (64, 128, 128), "float32", 64 * 128 * 128 * 4),
    ]
    assert tensors(ssm_state(config, speculative_tokens=2, tp_size=8))[0][2] == (5, 3 * 8 * 128)
    # S:sglang/srt/configs/glm5_next.py:256-266: KimiLinearStateShape, window never widened.
    sglang = ssm_state(config, layout="sglang", speculative_tokens=2, tp_size=2)
    assert sglang.layer_indices == GLM5_KDA
    assert tensors(sglang) == [
        ("kda", "conv", (3, 3 * 32 * 128), "bfloat16", 3 * 3 * 32 * 128 * 2),
        ("kda", "recurrent", (32, 128, 128), "float32", 32 * 128 * 128 * 4),
    ]
    attention = vllm.attention
    assert attention is not None and attention.mla
    assert attention.layer_indices == tuple(range(3, 45, 4))
    assert (attention.kv_lora_rank, attention.qk_rope_head_dim, attention.head_dim) == (512, 0, 512)


def test_sglang_fills_a_glm5_next_text_config_from_the_wrappers_top_level_keys() -> None:
    # S:sglang/srt/configs/glm5_next.py:301-309: text_config = {**top_level, **text_config}, the
    # top level's keys of _GLM5_NEXT_TOP_LEVEL_CONFIG_KEYS (:8-74) under the text config's own.
    # transformers' Glm5NextConfig (vLLM's) takes a given text_config alone
    # (configuration_glm5_next.py:306-312): its class default, 64 heads (:144).
    config = glm5()
    del config["text_config"]["linear_num_heads"]
    assert config["text_config"]["linear_conv_kernel_dim"] == 4
    config |= {"linear_num_heads": 32, "linear_conv_kernel_dim": 2}
    sglang = ssm_state(config, layout="sglang")
    assert [shape for _, _, shape, _, _ in tensors(sglang)] == [(3, 3 * 32 * 128), (32, 128, 128)]
    assert class_fields(config, layout="sglang")["linear_num_heads"] == 32
    vllm = ssm_state(config)
    assert [shape for _, _, shape, _, _ in tensors(vllm)] == [(3, 3 * 64 * 128), (64, 128, 128)]
    assert class_fields(config)["linear_num_heads"] == 64


def test_sglang_builds_glm5_next_linear_attn_config_from_its_layer_types_and_flat_fields() -> None:
    # S:sglang/srt/configs/glm5_next.py:194-223: with no linear_attn_config, kda_layers are the
    # linear_attention entries of the given layer_types, full_attn_layers the others, the
    # geometry the flat fields, gate_lower_bound the given one else linear_lower_bound.
    config = glm5()
    linear, full = "linear_attention", "indexed_attention"
    config["text_config"] |= {
        "num_hidden_layers": 6,
        "layer_types": [linear, full, linear, linear, full, linear],
        "linear_head_dim": 64,
        "linear_num_heads": 16,
        "linear_conv_kernel_dim": 3,
        "linear_lower_bound": -3.0,
    }
    built = class_fields(config, layout="sglang")["linear_attn_config"]
    assert built == {
        "full_attn_layers": [1, 4],
        "head_dim": 64,
        "kda_layers": [0, 2, 3, 5],
        "num_heads": 16,
        "short_conv_kernel_size": 3,
        "gate_lower_bound": -3.0,
    }
    config["text_config"]["gate_lower_bound"] = -2.0
    built = class_fields(config, layout="sglang")["linear_attn_config"]
    assert built["gate_lower_bound"] == -2.0
    # A null gate_lower_bound is no bound: linear_lower_bound's (glm5_next.py:195-197).
    config["text_config"]["gate_lower_bound"] = None
    built = class_fields(config, layout="sglang")["linear_attn_config"]
    assert built["gate_lower_bound"] == -3.0
    # vLLM's transformers class builds none (configuration_glm5_next.py:189).
    assert class_fields(config).get("linear_attn_config") is None


def test_vllm_glm5_next_folds_a_linear_attn_config_into_the_flat_fields() -> None:
    # transformers 5.20.2's Glm5NextTextConfig.__post_init__ (configuration_glm5_next.py:
    # 189-197): linear_attn_config's head_dim, num_heads, short_conv_kernel_size and
    # gate_lower_bound override the flat fields; then, with safe_gate (default true) and no
    # bound, the bound is -5.0.
    config = glm5()
    text = config["text_config"]
    text["linear_attn_config"] = {
        "num_heads": 32,
        "head_dim": 64,
        "short_conv_kernel_size": 3,
        "gate_lower_bound": -2.0,
    }
    fields = class_fields(config)
    assert (fields["linear_num_heads"], fields["linear_head_dim"]) == (32, 64)
    assert (fields["linear_conv_kernel_dim"], fields["linear_lower_bound"]) == (3, -2.0)
    text["linear_lower_bound"] = None
    for given, bound in (({}, -5.0), ({"safe_gate": True}, -5.0), ({"safe_gate": False}, None)):
        text["linear_attn_config"] = {"num_heads": 64} | given
        assert class_fields(config)["linear_lower_bound"] == bound
    text["linear_lower_bound"] = -3.0
    text["linear_attn_config"] = {"num_heads": 64}
    assert class_fields(config)["linear_lower_bound"] == -3.0


def test_vllm_glm5_next_head_dim_is_qk_rope_head_dim() -> None:
    # transformers 5.20.2's Glm5NextTextConfig.__post_init__ drops a given head_dim for
    # qk_rope_head_dim, 0 by default (configuration_glm5_next.py:114, :200-201); SGLang's class
    # keeps it.
    config = glm5()
    config["text_config"]["head_dim"] = 192
    assert class_fields(config)["head_dim"] == 0
    assert class_fields(config, layout="sglang")["head_dim"] == 192


def test_vllm_glm5_next_layer_types_name_attention_indexed_attention() -> None:
    # transformers 5.20.2's Glm5NextTextConfig.__post_init__ (configuration_glm5_next.py:
    # 164-172): no layer_types is linear_attention where i % 4 != 3, else indexed_attention; a
    # given full_attention is indexed_attention.
    config = glm5()
    text = config["text_config"]
    del text["layer_types"]
    text["num_hidden_layers"] = 8
    linear, indexed = "linear_attention", "indexed_attention"
    assert class_fields(config)["layer_types"] == [linear, linear, linear, indexed] * 2
    text["layer_types"] = [linear, "full_attention"] * 4
    assert class_fields(config)["layer_types"] == [linear, indexed] * 4


def test_glm5_next_num_hidden_layers_that_is_no_count_is_refused_naming_it() -> None:
    # transformers 5.20.2's @strict Glm5NextTextConfig declares num_hidden_layers an int
    # (configuration_glm5_next.py:105); SGLang's class takes range(num_hidden_layers) to build
    # its linear_attn_config (S:sglang/srt/configs/glm5_next.py:214-217). Neither takes '8'.
    config = glm5()
    config["text_config"]["num_hidden_layers"] = "8"
    for layout in ("vllm", "sglang"):
        assert refusal(config, layout=layout) == (
            "glm5_next config: field 'num_hidden_layers': must be an integer, got '8' (str)"
        )


def test_vllm_names_the_glm5_next_linear_attn_config_key_it_refuses() -> None:
    # transformers' class folds linear_attn_config's keys into the flat fields
    # (configuration_glm5_next.py:189-194): a refusal names the key the file gave.
    config = glm5()
    text = config["text_config"]
    text["linear_attn_config"] = {"num_heads": 30}
    assert refusal(config, tp_size=4) == (
        "glm5_next config: field 'linear_attn_config.num_heads': tp_size 4 does not divide 30; "
        "the servers shard it evenly"
    )
    for key in ("head_dim", "short_conv_kernel_size"):
        text["linear_attn_config"] = {key: "8"}
        assert refusal(config) == (
            f"glm5_next config: field 'linear_attn_config.{key}': must be an integer, got '8' (str)"
        )


def test_glm5_next_vllm_lets_the_ssm_dtype_flag_reach_its_kda_state() -> None:
    # Glm5NextLinearAttention.get_state_dtype passes --mamba-ssm-cache-dtype (kda.py:178-187).
    assert ssm_state(glm5(), ssm_dtype="bf16").ssm_dtype == "bfloat16"
    assert "only in float32 or bfloat16" in refusal(glm5(), ssm_dtype="fp16")


def test_glm5_next_text_only_checkpoints_keep_the_fields_at_the_top_level() -> None:
    # transformers' Glm5NextConfig.__post_init__ and SGLang's Glm5NextConfig.__init__ take the
    # top-level keys as the text config when there is no text_config.
    # Issue 27: SGLang serves GLM-5.3-Flash as Glm5NextForConditionalGeneration only (its one
    # EntryClass, sglang/srt/models/glm5_next.py:1979); vLLM has Glm5NextForCausalLM too.
    text = glm5()["text_config"]
    for layout, architecture in (
        ("vllm", "Glm5NextForCausalLM"),
        ("sglang", "Glm5NextForConditionalGeneration"),
    ):
        flat = {**text, "model_type": "glm5_next", "architectures": [architecture]}
        nested = ssm_state(glm5(), layout=layout)
        state = ssm_state(flat, layout=layout)
        assert (state.layer_indices, tensors(state)) == (nested.layer_indices, tensors(nested))
    flat = {**text, "model_type": "glm5_next", "architectures": ["Glm5NextForCausalLM"]}
    assert "field 'architectures'" in refusal(flat, layout="sglang")


def test_glm5_next_text_at_the_top_level_is_read_as_glm5_next() -> None:
    # A text-only checkpoint whose model_type is the text config's own, under vLLM's
    # Glm5NextForCausalLM (the family's vLLM architectures; SGLang has only the wrapper's).
    text = {**glm5()["text_config"], "architectures": ["Glm5NextForCausalLM"]}
    assert text["model_type"] == "glm5_next_text"
    state = ssm_state(text)
    assert (state.family, state.model_type, state.layer_indices) == (
        "glm5_next",
        "glm5_next_text",
        GLM5_KDA,
    )


def test_a_flat_glm5_next_takes_the_text_classs_defaults() -> None:
    # A flat glm5_next is read by Glm5NextTextConfig, whose defaults are linear_num_heads 64
    # (configuration_glm5_next.py:144), kv_lora_rank 512 and qk_rope_head_dim 0 (:112-114).
    text = glm5()["text_config"]
    left_out = ("kv_lora_rank", "qk_rope_head_dim", "linear_num_heads")
    flat = {
        **{k: v for k, v in text.items() if k not in left_out},
        "model_type": "glm5_next",
        "architectures": ["Glm5NextForCausalLM"],
    }
    state = ssm_state(flat)
    assert tensors(state)[1][2] == (64, 128, 128)
    attention = state.attention
    assert attention is not None and attention.mla
    assert (attention.kv_lora_rank, attention.qk_rope_head_dim) == (512, 0)


def test_glm5_next_without_layer_types_takes_every_fourth_layer_as_attention() -> None:
    text = {key: value for key, value in glm5()["text_config"].items() if key != "layer_types"}
    config = {**text, "model_type": "glm5_next", "num_hidden_layers": 8}
    for layout in ("vllm", "sglang"):
        assert ssm_state(config, layout=layout).layer_indices == (0, 1, 2, 4, 5, 6)


def test_glm5_next_a_given_linear_attn_config_is_read_by_each_server_its_own_way() -> None:
    config = glm5()
    linear = {"kda_layers": [0, 1, 2], "num_heads": 32, "head_dim": 64, "short_conv_kernel_size": 3}
    config["text_config"]["linear_attn_config"] = linear
    # vLLM (transformers' class) folds the geometry into the flat fields, layers by layer_types.
    vllm = ssm_state(config)
    assert vllm.layer_indices == GLM5_KDA
    assert tensors(vllm)[0][2:] == ((2, 3 * 32 * 64), "bfloat16", 2 * 3 * 32 * 64 * 2)
    assert tensors(vllm)[1][2] == (32, 64, 64)
    # SGLang takes it whole: its kda_layers are 0-based layer numbers (glm5_next.py:256-266).
    sglang = ssm_state(config, layout="sglang")
    assert sglang.layer_indices == (0, 1, 2)
    assert tensors(sglang)[1][2] == (32, 64, 64)
    # A partial one: vLLM keeps the flat field for what it leaves out; SGLang needs it.
    del linear["head_dim"]
    assert tensors(ssm_state(config))[1][2] == (32, 128, 128)
    assert refusal(config, layout="sglang") == (
        "glm5_next config: field 'linear_attn_config.head_dim': missing"
    )


def test_written_glm5_next_config_with_its_own_kda_layers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # layer_types makes 0-2 and 4-6 KDA (vLLM); linear_attn_config.kda_layers 0-2, 4, 5 (SGLang).
    path = WRITTEN / "glm5-next-linear-attn-config-written.json"
    # Both: conv (3, 3 * 32 * 128) bfloat16 (vLLM window first, SGLang's too) and (32, 128, 128)
    # float32 per KDA layer.
    per_layer = 3 * 3 * 32 * 128 * 2 + 32 * 128 * 128 * 4
    for layout, layers in (("vllm", (0, 1, 2, 4, 5, 6)), ("sglang", (0, 1, 2, 4, 5))):
        state = ssm_state(path, layout=layout)
        assert state.layer_indices == layers
        assert state.per_sequence_bytes == len(layers) * per_layer
        status, report = run_json(capsys, "state", "--config", str(path), "--layout", layout)
        assert status == 0
        assert report["per_sequence_bytes"] == state.per_sequence_bytes


def test_glm5_next_hostile_configs() -> None:
    config = glm5()
    text = config["text_config"]
    text["layer_types"] = text["layer_types"][:44]
    assert refusal(config) == (
        "glm5_next config: field 'layer_types': has 44 entries but num_hidden_layers is 45"
    )
    text["layer_types"] = ["linear_attention"] * 44 + ["mamba2"]
    assert "field 'layer_types': entry 44 is 'mamba2'; expected" in refusal(config)
    text["layer_types"] = ["indexed_attention"] * 45
    # No KDA layer: no state, but both servers' shape functions still read the geometry.
    for layout in ("vllm", "sglang"):
        assert ssm_state(config, layout=layout).ssm_layers == 0
    text["linear_num_heads"] = "64"
    assert refusal(config) == (
        "glm5_next config: field 'linear_num_heads': must be an integer, got '64' (str)"
    )
    del text["layer_types"]
    text["linear_num_heads"] = 64
    with pytest.raises(TensorParallelSplitError) as split:
        ssm_state(config, tp_size=3)
    assert str(split.value) == (
        "glm5_next config: field 'linear_num_heads': tp_size 3 does not divide 64; the servers "
        "shard it evenly"
    )
    text["linear_attn_config"] = {"kda_layers": [45], "num_heads": 8, "head_dim": 8}
    assert refusal(config, layout="sglang") == (
        "glm5_next config: field 'linear_attn_config.kda_layers': entry 45 is not a layer number "
        "from 0 to 44"
    )


def test_sglang_names_glm5_next_linear_attn_config_heads_in_a_split_refusal() -> None:
    # S:sglang/srt/configs/glm5_next.py:261-266: KimiLinearStateShape.create of the given
    # linear_attn_config's num_heads, which divide() splits by tp (configs/mamba_utils.py:
    # 347-349); 32 heads do not split 3 ways.
    with pytest.raises(TensorParallelSplitError) as caught:
        ssm_state(WRITTEN / "glm5-next-linear-attn-config-written.json", layout="sglang", tp_size=3)
    assert str(caught.value).endswith(
        "glm5_next config: field 'linear_attn_config.num_heads': tp_size 3 does not divide 32; "
        "the servers shard it evenly"
    )


def test_glm5_next_attention_is_mla_with_the_config_classes_ranks() -> None:
    # Both servers build MLA for glm5_next's attention layers (V:vllm/models/glm5next/common/
    # model.py:391-405; S:sglang/srt/configs/model_config.py:1376-1377), and their config
    # classes default kv_lora_rank 512, qk_rope_head_dim 0 (transformers
    # configuration_glm5_next.py:112-114; S:sglang/srt/configs/glm5_next.py:118-120).
    config = json.loads(
        (WRITTEN / "glm5-next-linear-attn-config-written.json").read_text(encoding="utf-8")
    )
    del config["text_config"]["kv_lora_rank"], config["text_config"]["qk_rope_head_dim"]
    for layout in ("vllm", "sglang"):
        attention = ssm_state(config, layout=layout).attention
        assert attention is not None and attention.mla
        assert (attention.kv_lora_rank, attention.qk_rope_head_dim, attention.head_dim) == (
            512,
            0,
            512,
        )
    config["text_config"] |= {"kv_lora_rank": 256, "qk_rope_head_dim": 64}
    attention = ssm_state(config, layout="sglang").attention
    assert attention is not None and attention.head_dim == 256 + 64


def test_alice_ai_written_config() -> None:
    # 8 layers, KDA at the linear_attention entries 0-2 and 4-6; 16 heads of 128, kernel 4.
    config = written("alice-ai-written.json")
    state = ssm_state(config)
    assert state.layer_indices == (0, 1, 2, 4, 5, 6)
    assert tensors(state) == [
        ("kda", "conv", (3, 3 * 16 * 128), "bfloat16", 3 * 3 * 16 * 128 * 2),
        ("kda", "recurrent", (16, 128, 128), "float32", 16 * 128 * 128 * 4),
    ]
    assert state.per_sequence_bytes == 6 * (3 * 6144 * 2 + 16 * 128 * 128 * 4) == 6_512_640
    assert tensors(ssm_state(config, tp_size=2, speculative_tokens=2))[0][2] == (5, 3 * 8 * 128)
    # Kimi's KDA layer and AliceAI's model-level function pass no --mamba-ssm-cache-dtype
    # (V:layers/mamba/gdn/kimi_gdn_linear_attn.py:157-164, alice_ai.py:676-683).
    assert ssm_state(config, ssm_dtype="bf16").ssm_dtype == "float32"
    attention = state.attention
    assert attention is not None and not attention.mla
    assert (attention.layer_indices, attention.num_key_value_heads) == ((3, 7), 4)
    assert "SGLang 0.5.23 has no alice_ai model" in refusal(config, layout="sglang")
    assert ssm_state(config, layout="metrale").layer_indices == (0, 1, 2, 4, 5, 6)


CONFIG_PY = "(vllm/model_executor/models/config.py:29-50)"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        (
            "kda_allow_negative_eigenvalues",
            None,
            f"missing; vLLM 0.33.0 requires false {CONFIG_PY}",
        ),
        ("kda_allow_negative_eigenvalues", 0, f"is 0; vLLM 0.33.0 requires false {CONFIG_PY}"),
        (
            "router_score_function",
            "softmax",
            f"is 'softmax'; vLLM 0.33.0 requires 'sigmoid' {CONFIG_PY}",
        ),
        ("router_bias_correction", 1, f"is 1; vLLM 0.33.0 requires true {CONFIG_PY}"),
        ("block_attn_res_block_size", True, "must be an integer, got True (bool)"),
        ("block_attn_res_block_size", 0, "must be at least 1, got 0"),
        ("num_experts", 0, "must be at least 1, got 0"),
        ("linear_num_value_heads", 8, None),
        ("linear_value_head_dim", 64, None),
    ],
)
def test_alice_ai_refuses_what_vllm_refuses(field: str, value: object, message: str | None) -> None:
    config = written("alice-ai-written.json")
    if value is None:
        del config[field]
    else:
        config[field] = value
    if message is None:
        # _make_kimi_kda_config raises unless key and value heads and dims match (:118-127).
        key_field = field.replace("value", "key")
        message = (
            f"is {value} but {key_field} is {config[key_field]}; vLLM 0.33.0's AliceAI KDA "
            "requires them equal"
        )
    assert refusal(config) == f"alice_ai config: field {field!r}: {message}"


def test_alice_ai_layers_and_split() -> None:
    config = written("alice-ai-written.json")
    config["layer_types"] = ["linear_attention"] * 7 + ["sliding_attention"]
    assert "field 'layer_types': entry 7 is 'sliding_attention'; expected" in refusal(config)
    config["layer_types"] = ["full_attention"] * 8
    # No KDA layer: none of Kimi's checks run, but the model-level shape reads the geometry.
    config["linear_num_value_heads"] = 8
    assert ssm_state(config).ssm_layers == 0
    del config["linear_conv_kernel_dim"]
    assert refusal(config) == "alice_ai config: field 'linear_conv_kernel_dim': missing"
    with pytest.raises(TensorParallelSplitError, match="'linear_num_key_heads': tp_size 32"):
        ssm_state(written("alice-ai-written.json"), tp_size=32)


def test_alice_ai_layer_types_must_cover_every_layer() -> None:
    # vLLM indexes layer_types by layer number up to num_hidden_layers
    # (V:vllm/model_executor/models/alice_ai.py:491-495); a short list has no entry to read.
    alice = json.loads((WRITTEN / "alice-ai-written.json").read_text(encoding="utf-8"))
    alice["layer_types"] = alice["layer_types"][:-1]
    refused(alice, "alice_ai config: field 'layer_types': has 7 entries but num_hidden_layers is 8")
