"""The families issue 17 adds, and the hostile configs it lists, each as a test.

Expected numbers are written out from the config values (the products spell the fields) and
checked against the servers' own functions in the wheels (tools/peer_agreement), never taken
from the code under test. Families with no public checkpoint (tests/configs/PROVENANCE.md) are
read from transformers 5.23's own ``to_dict()``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from decode_ring.models import (
    LAYOUTS,
    ModelConfigError,
    SsmState,
    TensorParallelSplitError,
    ssm_state,
)

CONFIGS = Path(__file__).parent / "configs"

# LiquidAI/LFM2-1.2B's published layout: 16 layers, attention at 2, 5, 8, 10, 12, 14.
LFM2_LAYERS = [
    "conv",
    "conv",
    "full_attention",
    "conv",
    "conv",
    "full_attention",
    "conv",
    "conv",
    "full_attention",
    "conv",
    "full_attention",
    "conv",
    "full_attention",
    "conv",
    "full_attention",
    "conv",
]
LFM2_CONV = (0, 1, 3, 4, 6, 7, 9, 11, 13, 15)


def config(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((CONFIGS / name).read_text(encoding="utf-8"))
    return loaded


def exported(model_type: str, **fields: Any) -> dict[str, Any]:
    transformers = pytest.importorskip("transformers")
    made: dict[str, Any] = transformers.AutoConfig.for_model(model_type, **fields).to_dict()
    return made


def tensors(state: SsmState) -> list[tuple[str, str, tuple[int, ...], str, int]]:
    return [
        (group.kind, tensor.name, tensor.shape, tensor.dtype, tensor.bytes)
        for group in state.groups
        for tensor in group.tensors
    ]


def refusal(config: Any, **arguments: Any) -> str:
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(config, **arguments)
    return str(caught.value)


# --- short convolution: LFM2 --------------------------------------------------------------------


def lfm2_1_2b() -> dict[str, Any]:
    # LFM2-1.2B's state fields: hidden = conv_dim = 2048, conv_L_cache 3, 32 heads, 8 KV heads.
    return exported(
        "lfm2",
        num_hidden_layers=16,
        hidden_size=2048,
        conv_dim=2048,
        num_attention_heads=32,
        num_key_value_heads=8,
        layer_types=LFM2_LAYERS,
        dtype="bfloat16",
    )


def test_lfm2_1_2b_holds_a_conv_state_only() -> None:
    # Peers notes §3.2: (2, 2048) bfloat16 = 8,192 B per layer, 10 conv layers.
    state = ssm_state(lfm2_1_2b())
    assert (state.family, state.layer_indices) == ("lfm2", LFM2_CONV)
    assert tensors(state) == [("short_conv", "conv", (2, 2048), "bfloat16", 2 * 2048 * 2)]
    assert state.per_layer_bytes == 8_192
    assert state.per_sequence_bytes == 10 * 8_192
    assert (state.conv_shape, state.ssm_shape, state.conv_bytes, state.ssm_bytes) == ((), (), 0, 0)
    assert state.attention is not None
    assert state.attention.layer_indices == (2, 5, 8, 10, 12, 14)
    assert (state.attention.num_key_value_heads, state.attention.head_dim) == (8, 2048 // 32)


def test_lfm2_sglang_adds_an_empty_temporal_state() -> None:
    state = ssm_state(lfm2_1_2b(), layout="sglang", tp_size=2)
    assert tensors(state) == [
        ("short_conv", "conv", (1024, 2), "bfloat16", 1024 * 2 * 2),
        ("short_conv", "ssm", (1, 2048, 0), "float32", 0),
    ]
    metrale = ssm_state(lfm2_1_2b(), layout="metrale")
    assert tensors(metrale) == [("short_conv", "conv", (3, 2048), "float32", 3 * 2048 * 4)]


def test_lfm2_the_allocating_layer_widens_the_vllm_window() -> None:
    # vLLM's model-level shape omits num_spec; ShortConv.get_state_shape passes it.
    state = ssm_state(lfm2_1_2b(), speculative_tokens=2)
    assert tensors(state) == [("short_conv", "conv", (4, 2048), "bfloat16", 4 * 2048 * 2)]
    sglang = ssm_state(lfm2_1_2b(), speculative_tokens=2, layout="sglang")
    assert tensors(sglang)[0][2] == (2048, 2)


def test_lfm2_vllm_sizes_by_conv_dim_and_sglang_by_hidden_size() -> None:
    wide = lfm2_1_2b() | {"conv_dim": 4096}
    assert tensors(ssm_state(wide))[0][2] == (2, 4096)
    assert tensors(ssm_state(wide, layout="sglang"))[0][2] == (2048, 2)
    del wide["conv_dim"]
    assert "field 'conv_dim': missing" in refusal(wide)


def test_lfm2_moe_and_lfm2_vl_size_by_hidden_size() -> None:
    moe = exported("lfm2_moe", num_hidden_layers=16, layer_types=LFM2_LAYERS)
    state = ssm_state(moe)
    assert (state.family, state.layer_indices) == ("lfm2_moe", LFM2_CONV)
    # transformers' Lfm2MoeConfig default hidden_size 2048.
    assert tensors(state) == [("short_conv", "conv", (2, 2048), "bfloat16", 2 * 2048 * 2)]
    vl = exported(
        "lfm2_vl",
        text_config={
            "model_type": "lfm2",
            "num_hidden_layers": 16,
            "hidden_size": 1024,
            "layer_types": LFM2_LAYERS,
        },
    )
    state = ssm_state(vl, layout="sglang")
    assert (state.family, state.model_type, state.layer_indices) == (
        "lfm2_vl",
        "lfm2_vl",
        LFM2_CONV,
    )
    assert tensors(state)[0][2] == (1024, 2)
    # lfm2_vl's mamba2_cache_params passes no config: mamba_ssm_dtype does not count.
    vl["text_config"]["mamba_ssm_dtype"] = "bfloat16"
    assert tensors(ssm_state(vl, layout="sglang"))[1][3] == "float32"


def test_lfm2_sglang_passes_its_config_for_the_ssm_dtype() -> None:
    state = ssm_state(lfm2_1_2b() | {"mamba_ssm_dtype": "bfloat16"}, layout="sglang")
    assert tensors(state)[1][3] == "bfloat16"


def test_lfm2_layer_types_win_over_full_attn_idxs() -> None:
    # Issue 27: transformers' Lfm2Config (and SGLang's subclass) reads full_attn_idxs only to
    # make a missing layer_types (configuration_lfm2.py:81-88): a given list wins.
    agreeing = lfm2_1_2b() | {"full_attn_idxs": [2, 5, 8, 10, 12, 14]}
    assert ssm_state(agreeing).layer_indices == LFM2_CONV
    for full in ([2, 5, 8, 10, 12], [16]):
        for layout in ("vllm", "sglang"):
            given = lfm2_1_2b() | {"full_attn_idxs": full}
            assert ssm_state(given, layout=layout).layer_indices == LFM2_CONV
    derived = {key: value for key, value in lfm2_1_2b().items() if key != "layer_types"}
    derived["full_attn_idxs"] = [2, 5, 8, 10, 12, 14]
    for layout in ("vllm", "sglang"):
        assert ssm_state(derived, layout=layout).layer_indices == LFM2_CONV


def test_lfm2_layer_types_must_cover_every_layer() -> None:
    message = refusal(lfm2_1_2b() | {"layer_types": LFM2_LAYERS[:-1]})
    assert message == (
        "lfm2 config: field 'layer_types': has 15 entries but num_hidden_layers is 16"
    )


def test_an_lfm2_config_without_conv_layers_has_no_state() -> None:
    # transformers' default Lfm2Config is all attention, and has no conv_dim.
    sglang = ssm_state(exported("lfm2"), layout="sglang")
    assert (sglang.ssm_layers, sglang.groups, sglang.per_sequence_bytes) == (0, (), 0)
    for layout in LAYOUTS:
        state = ssm_state(exported("lfm2", conv_dim=1024), layout=layout)
        assert (state.ssm_layers, state.groups, state.per_sequence_bytes) == (0, (), 0)


def test_vllm_reads_the_lfm2_channels_even_without_conv_layers() -> None:
    # vLLM sizes every hybrid model's state page from get_mamba_state_shape_from_config
    # (platforms/interface.py:1056-1060), which reads hf_config.conv_dim (lfm2.py:575):
    # AttributeError, so vLLM does not start. metrale follows vLLM's reading.
    for layout in ("vllm", "metrale"):
        assert refusal(exported("lfm2"), layout=layout) == (
            "lfm2 config: field 'conv_dim': missing; vLLM 0.33.0 sizes the short conv by conv_dim "
            "for every lfm2 model (vllm/model_executor/models/lfm2.py:575), which transformers' "
            "class does not define; SGLang 0.5.23 sizes it by hidden_size (use layout sglang)"
        )
    # lfm2_moe and lfm2_vl read hidden_size and conv_L_cache there (lfm2_moe.py:565-566,
    # lfm2_vl.py:673-674).
    moe = exported("lfm2_moe", layer_types=["full_attention"] * 32)
    del moe["conv_L_cache"]
    # Issue 27: a missing conv_L_cache is the class's default, 3 (configuration_lfm2_moe.py).
    assert ssm_state(moe).ssm_layers == ssm_state(moe, layout="sglang").ssm_layers == 0
    del moe["hidden_size"]
    moe["hidden_size"] = None
    assert refusal(moe) == "lfm2_moe config: field 'hidden_size': must be an integer, got None " + (
        "(NoneType) (Lfm2MoeConfig (transformers 5.20.2, "
        "transformers/models/lfm2_moe/configuration_lfm2_moe.py:22))"
    )


def test_sglang_takes_a_null_lfm2_moe_layer_types_as_no_layer() -> None:
    # transformers' Lfm2MoeConfig leaves layer_types None; SGLang's Lfm2MoeConfig.linear_layer_ids
    # returns [] for it (configs/lfm2_moe.py:34-41), so mamba2_cache_params is None.
    config = exported("lfm2_moe")
    assert config["layer_types"] is None
    for given in (config, {key: value for key, value in config.items() if key != "layer_types"}):
        state = ssm_state(given, layout="sglang")
        assert (state.ssm_layers, state.groups, state.per_sequence_bytes) == (0, (), 0)
        assert state.attention is None
        # vLLM indexes config.layer_types and fails (models/lfm2_moe.py:433).
        assert "field 'layer_types'" in refusal(given)
    # lfm2 and lfm2_vl have no such case: transformers' Lfm2Config, which SGLang's subclasses,
    # makes a null layer_types from full_attn_idxs (configuration_lfm2.py:81-88; issue 27).
    lfm2 = exported("lfm2", conv_dim=1024) | {"layer_types": None, "full_attn_idxs": [1, 3]}
    assert ssm_state(lfm2, layout="sglang").layer_indices == (0, 2, *range(4, 32))


# --- gated delta net: OLMo hybrid, MiniCPM-V 4.6, Qwen3.5 -----------------------------------------


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


# --- KDA: Kimi-Linear, Kimi-K3, Bailing ----------------------------------------------------------


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


def bailing(**fields: Any) -> dict[str, Any]:
    # transformers' default BailingHybrid: 42 layers in groups of 6, 32 heads of 64, K 4, MLA;
    # with no_kda_lora true, which vLLM's BailingMoeV3 KDA layer requires.
    return exported("bailing_hybrid", **fields) | {"no_kda_lora": True}


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


# --- Mamba-1: falcon-mamba ------------------------------------------------------------------------


def test_falcon_mamba_reads_intermediate_size_beside_a_contradicting_expand() -> None:
    # Issue 17: expand 16 x hidden 4096 = 65536 would be refused; both servers read 8192.
    state = ssm_state(CONFIGS / "falcon-mamba-7b.json")
    assert (state.conv_shape, state.ssm_shape) == ((3, 8192), (8192, 16))
    assert state.per_layer_bytes == 311_296
    assert ssm_state(CONFIGS / "falcon-mamba-7b.json", layout="sglang").per_layer_bytes == 573_440


def test_falcon_mamba_from_transformers() -> None:
    # transformers' default: hidden 768, expand 2 -> intermediate_size 1536, d_state 16, K 4.
    state = ssm_state(exported("falcon_mamba"))
    assert (state.family, state.ssm_layers) == ("falcon_mamba", 32)
    assert state.per_sequence_bytes == 32 * (3 * 1536 * 2 + 1536 * 16 * 2)


def test_mamba_without_intermediate_size_names_expand_and_hidden_size() -> None:
    mamba = config("mamba-2.8b-hf.json")
    del mamba["intermediate_size"]
    assert ssm_state(mamba).ssm_shape == (5120, 16)
    assert refusal(mamba, tp_size=3) == (
        "mamba config: field 'expand': tp_size 3 does not divide 5120 (expand * hidden_size); "
        "the servers shard it evenly"
    )


# --- SGLang only: Jet-Nemotron -------------------------------------------------------------------


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


# --- wrappers, removed families, zero recurrent layers --------------------------------------------


@pytest.mark.parametrize("layout", ["vllm", "sglang"])
def test_nemotron_h_vl_under_llm_config(layout: str) -> None:
    # Issue 17: refused before. SGLang reads llm_config; vLLM maps it to text_config.
    wrapper = {
        "model_type": "NemotronH_Nano_VL_V2",
        "llm_config": config("nemotron-nano-9b-v2.json"),
    }
    state = ssm_state(wrapper, layout=layout)
    assert (state.family, state.model_type, state.ssm_layers) == (
        "nemotron_h",
        "NemotronH_Nano_VL_V2",
        27,
    )
    assert state.per_sequence_bytes == 27 * (3 * 12288 * 2 + 128 * 80 * 128 * 4)


def test_a_nemotron_h_config_with_no_mamba_layer_is_0_layers_and_0_bytes() -> None:
    # Issue 17: cosmos-rl's dense config has no Mamba field at all; it was refused. Issue 27:
    # its architecture (NemotronVLForConditionCausalLM) is neither vLLM's nor SGLang's, so
    # both servers' layouts refuse it; the reference reads its geometry.
    path = CONFIGS / "nemotron-dense-siglip2.json"
    state = ssm_state(path, layout="metrale", tp_size=4)
    assert (state.ssm_layers, state.groups, state.per_sequence_bytes) == (0, (), 0)
    assert state.attention is not None and len(state.attention.layer_indices) == 28
    for layout in ("vllm", "sglang"):
        assert "field 'architectures'" in refusal(path, layout=layout)


@pytest.mark.parametrize(
    ("model_type", "name", "version"),
    [
        ("bamba", "Bamba", "0.23.0"),
        ("plamo2", "Plamo2", "0.26.0"),
        ("phi4flash", "Phi4Flash", "0.10.2"),
        ("minimax", "MiniMax", "0.23.0"),
        ("minimax_text_01", "MiniMax-Text-01", "0.23.0"),
        ("minimax_m1", "MiniMax-M1", "0.23.0"),
        ("minimax_vl_01", "MiniMax-VL-01", "0.23.0"),
    ],
)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_removed_families_are_refused_as_removed(
    model_type: str, name: str, version: str, layout: str
) -> None:
    fields = {"model_type": model_type, "num_hidden_layers": 4, "mamba_d_state": 16}
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(fields, layout=layout)
    assert str(caught.value) == (
        f"field 'model_type': vLLM removed {name} in version {version}; SGLang 0.5.23 has no "
        f"{name} ('{model_type}': vllm/model_executor/models/registry.py:841-895)"
    )
    assert (caught.value.field, caught.value.family) == ("model_type", model_type)
    wrapped = {"model_type": "vl", "text_config": fields}
    assert "vLLM removed" in refusal(wrapped, layout=layout)


def test_minimax_m1_is_refused_as_removed_not_for_its_layernorm_fields() -> None:
    message = refusal(CONFIGS / "minimax-m1.json")
    assert "vLLM removed MiniMax-M1 in version 0.23.0" in message
    assert "layernorm" not in message


def test_a_wrapper_without_its_text_config_is_its_class_default() -> None:
    # Issue 27: a wrapper's class builds its default text config when the file gives none
    # (transformers' Lfm2VlConfig: Lfm2Config(), every layer attention, no conv layer).
    for layout in ("vllm", "sglang"):
        assert ssm_state({"model_type": "lfm2_vl"}, layout=layout).ssm_layers == 0


# --- the attention side of tensor parallelism ---------------------------------------------------


@pytest.mark.parametrize("layout", ["vllm", "sglang", "metrale"])
def test_attention_heads_must_split(layout: str) -> None:
    # Falcon-H1-7B: 12 attention heads. vLLM config/model.py:1557-1564; SGLang
    # models/falcon_h1.py:120 asserts the same.
    path = CONFIGS / "falcon-h1-7b-instruct.json"
    with pytest.raises(TensorParallelSplitError) as caught:
        ssm_state(path, tp_size=8, layout=layout)
    assert str(caught.value).endswith(
        "falcon_h1 config: field 'num_attention_heads': tp_size 8 does not divide 12; the "
        "servers shard attention heads evenly (vllm/config/model.py:1557-1564)"
    )
    assert caught.value.field == "num_attention_heads"


def test_kv_heads_must_divide_or_be_divided_by_tp() -> None:
    # Jet-Nemotron-2B: 12 heads (tp 3 divides them), 2 KV heads (neither way with 3).
    with pytest.raises(TensorParallelSplitError) as caught:
        ssm_state(CONFIGS / "jet-nemotron-2b.json", tp_size=3, layout="sglang")
    assert str(caught.value).endswith(
        "jet_nemotron config: field 'num_key_value_heads': tp_size 3 neither divides 2 KV heads "
        "nor is a multiple of them; the servers shard or replicate them evenly"
    )
    # Two KV heads replicate over 4 ranks.
    assert ssm_state(CONFIGS / "jet-nemotron-2b.json", tp_size=4, layout="sglang").tp_size == 4


def test_mla_attention_checks_the_heads_only() -> None:
    # One latent per token, replicated: 3 KV heads in the config do not matter at tp 8.
    kimi = config("kimi-linear-48b-a3b-instruct.json") | {"num_key_value_heads": 3}
    state = ssm_state(kimi, tp_size=8)
    assert state.attention is not None and state.attention.mla


# --- the README's family table ---------------------------------------------------------------

TABLE_FIXTURES = {
    "falcon_h1": "falcon-h1-7b-instruct.json",
    "falcon_mamba": "falcon-mamba-7b.json",
    "granitemoehybrid": "granite-4.0-h-tiny.json",
    "jamba": "jamba-mini-1.5.json",
    "jet_nemotron": "jet-nemotron-2b.json",
    "kimi_linear": "kimi-linear-48b-a3b-instruct.json",
    "mamba": "mamba-2.8b-hf.json",
    "mamba2": "mamba-codestral-7b.json",
    "minicpm_sala": "minicpm-sala.json",
    "nemotron_h": "nemotron-nano-9b-v2.json",
    "qwen3_5": "qwen3.5-27b.json",
    "qwen3_5_moe": "qwen3.5-35b-a3b.json",
    "qwen3_next": "qwen3-next-80b-a3b-instruct.json",
    "zamba2": "zamba2-2.7b.json",
    "zaya": "zaya1-8b-legacy.json",
}


def test_the_readme_family_table_lists_every_family_with_its_servers() -> None:
    from decode_ring.models import REGISTRY
    from decode_ring.units import format_size

    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    rows = [line for line in readme.splitlines() if line.startswith("| `")]
    table = {}
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        if len(cells) == 7:
            table[cells[0].strip("`")] = cells[1:]
    assert sorted(table) == sorted(REGISTRY)
    absent = {"vllm": "not in vLLM", "sglang": "not in SGLang"}
    for family, (_, checkpoint, layers, *sizes) in table.items():
        served = {"vllm": REGISTRY[family].vllm, "sglang": REGISTRY[family].sglang}
        for layout, cell in zip(LAYOUTS, sizes, strict=True):
            if layout in served and served[layout] is None:
                assert cell == absent[layout], (family, layout)
            elif family not in TABLE_FIXTURES:
                assert (checkpoint, layers, cell) == ("no public config", "-", "served")
            else:
                state = ssm_state(CONFIGS / TABLE_FIXTURES[family], layout=layout)
                assert cell == format_size(state.per_sequence_bytes), (family, layout)
                assert layers == str(state.ssm_layers)


@pytest.mark.parametrize(
    ("name", "field", "layout"),
    [
        ("granite-4.0-h-tiny.json", "layer_types", "vllm"),
        ("zamba2-2.7b.json", "layers_block_type", "vllm"),
        ("qwen3.5-35b-a3b.json", "layer_types", "sglang"),
        ("jet-nemotron-2b.json", "layer_types", "sglang"),
    ],
)
def test_a_layer_list_one_short_is_refused_in_every_family(
    name: str, field: str, layout: str
) -> None:
    fields = config(name)
    where = fields.get("text_config", fields)
    where[field] = where[field][:-1]
    layers = where["num_hidden_layers"]
    message = refusal(fields, layout=layout)
    assert message.endswith(
        f"field {field!r}: has {layers - 1} entries but num_hidden_layers is {layers}"
    )


def test_importing_decode_ring_imports_no_models_module() -> None:
    import subprocess
    import sys

    root = Path(__file__).parent.parent
    script = (
        "import sys, decode_ring; "
        "print(sorted(m for m in sys.modules if m.startswith('decode_ring.models')))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], cwd=root, capture_output=True, text=True, check=True
    )
    assert completed.stdout == "[]\n"


# ZAYA1 (SGLang only). Every figure below is SGLang 0.5.23's own ZayaConfig.mamba2_cache_params
# (configs/zaya.py:259-313), run from the wheel through tools/peer_agreement's loader at tp 1,
# 2, 4 and 8 on both fixtures: conv ((8 + 2) * 128 / tp, (2 - 1) + (2 - 1)) and prev_hs
# (2048, 1), bfloat16; the temporal (1, 1, 0) has no element. (The oracle's own registry reads
# SGLang's _CONFIG_REGISTRY only and misses ZayaConfig, which registers itself with AutoConfig
# at import, configs/zaya.py:316-331; the run added it by hand.)
ZAYA_PEER = {
    1: ((1280, 2), 5120),
    2: ((640, 2), 2560),
}
# Issue 27: at tp 4 and 8 SGLang's ZAYA1 attention asserts num_query_groups (2) % tp_size == 0
# (S:sglang/srt/models/zaya.py:921-925; the oracle's attention check runs that assert).
ZAYA_REFUSED = (4, 8)


@pytest.mark.parametrize("tp", sorted(ZAYA_PEER))
@pytest.mark.parametrize(("name", "layers"), [("zaya1-8b-legacy.json", 40), ("zaya1-8b.json", 20)])
def test_zaya_state_is_sglangs_two_conv_tensors(name: str, tp: int, layers: int) -> None:
    conv, conv_bytes = ZAYA_PEER[tp]
    state = ssm_state(CONFIGS / name, tp_size=tp, layout="sglang")
    (group,) = state.groups
    assert group.kind == "short_conv"
    assert group.layer_indices == tuple(range(0, 2 * layers, 2)) == state.layer_indices
    assert [(t.name, t.shape, t.dtype, t.bytes) for t in group.tensors] == [
        ("conv", conv, "bfloat16", conv_bytes),
        ("prev_hs", (2048, 1), "bfloat16", 4096),
        ("ssm", (1, 1, 0), "float32", 0),
    ]
    assert group.per_layer_bytes == conv_bytes + 4096 == state.per_layer_bytes
    assert state.per_sequence_bytes == layers * (conv_bytes + 4096)
    assert (state.conv_shape, state.ssm_shape, state.conv_bytes) == ((), (), 0)
    # The CCA layers are the attention layers: they keep a KV cache as well.
    assert state.attention is not None
    assert state.attention.layer_indices == group.layer_indices
    assert (state.attention.num_attention_heads, state.attention.num_key_value_heads) == (8, 2)
    assert state.attention.head_dim == 128


@pytest.mark.parametrize("tp", ZAYA_REFUSED)
def test_zaya_refuses_a_tp_that_splits_its_query_groups(tp: int) -> None:
    for name in ("zaya1-8b-legacy.json", "zaya1-8b.json"):
        with pytest.raises(TensorParallelSplitError) as caught:
            ssm_state(CONFIGS / name, tp_size=tp, layout="sglang")
        assert caught.value.field == "num_key_value_heads"
        assert f"tp_size {tp} does not divide the 2 query groups" in str(caught.value)


def test_zaya_metrale_keeps_every_column_in_float32() -> None:
    state = ssm_state(CONFIGS / "zaya1-8b-legacy.json", tp_size=2, layout="metrale")
    assert [(t.name, t.shape, t.dtype, t.bytes) for t in state.groups[0].tensors] == [
        ("conv", (3, 640), "float32", 3 * 640 * 4),
        ("prev_hs", (2, 2048), "float32", 2 * 2048 * 4),
    ]


def test_zaya_is_refused_by_the_vllm_layout() -> None:
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(config("zaya1-8b-legacy.json"))
    assert str(caught.value) == (
        "zaya config: field 'model_type': vLLM 0.33.0 has no zaya model; use layout sglang or "
        "metrale"
    )


def test_zaya_layers_list_gives_the_layers_whatever_num_hidden_layers_says() -> None:
    # SGLang configs/zaya.py:96-107: a non-empty zaya_layers is the layer count; "a" entries
    # are the CCA layers, integers MoE layers.
    fields = {**config("zaya1-8b-legacy.json"), "zaya_layers": ["a", 16, "a", 16, 16, "a"]}
    state = ssm_state(fields, layout="sglang")
    assert state.layer_indices == (0, 2, 5)
    assert state.per_sequence_bytes == 3 * 9216
    fields["zaya_layers"] = ["a", "m"]
    with pytest.raises(ModelConfigError, match=r"field 'zaya_layers': entry 1 is 'm'; expected"):
        ssm_state(fields, layout="sglang")


def test_zaya_cca_windows_and_head_dim_spellings() -> None:
    fields = {**config("zaya1-8b-legacy.json"), "cca_time0": 3, "cca_time1": 4, "kv_channels": 64}
    del fields["head_dim"]
    # Issue 27: a missing head_dim is ZayaConfig's default 128; kv_channels stands in only for a
    # null one (S:sglang/srt/configs/zaya.py:165-169). Padding (3 - 1) + (4 - 1) = 5.
    (conv, _, _) = ssm_state(fields, layout="sglang").groups[0].tensors
    assert conv.shape == (1280, 5)
    (conv, _, _) = ssm_state(fields | {"head_dim": None}, layout="sglang").groups[0].tensors
    assert conv.shape == (640, 5)


def test_zaya_refusals_name_the_fields() -> None:
    fields = {**config("zaya1-8b-legacy.json"), "num_query_groups": 4}
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(fields, layout="sglang")
    assert str(caught.value) == (
        "zaya config: field 'num_query_groups': is 4 but num_key_value_heads is 2 "
        "(ZayaConfig (SGLang 0.5.23, sglang/srt/configs/zaya.py:29))"
    )
    with pytest.raises(TensorParallelSplitError) as split:
        ssm_state(config("zaya1-8b-legacy.json"), tp_size=3, layout="sglang")
    assert str(split.value) == (
        "zaya config: field 'num_attention_heads': tp_size 3 does not divide 1280 "
        "((num_attention_heads + num_key_value_heads) * head_dim); the servers shard it evenly"
    )
