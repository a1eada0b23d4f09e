"""Short-convolution families (``lfm2``, ``lfm2_moe``, ``lfm2_vl``, and ZAYA1's CCA layers), read as
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

from typing import Any

import pytest

from decode_ring.models import (
    LAYOUTS,
    ModelConfigError,
    TensorParallelSplitError,
    class_fields,
    ssm_state,
)

from .support import CONFIGS, config, exported, refusal, refused, tensors

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
    # transformers 5's validate_layer_type, which SGLang's Lfm2Config inherits (it subclasses
    # transformers' Lfm2Config, S:sglang/srt/configs/lfm2.py:19), refuses a list of another
    # length under both servers.
    for layout in ("vllm", "sglang"):
        message = refusal(lfm2_1_2b() | {"layer_types": LFM2_LAYERS[:-1]}, layout=layout)
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


def test_full_attn_idxs_that_list_a_conv_layer() -> None:
    lfm2 = {
        "model_type": "lfm2",
        "num_hidden_layers": 2,
        "layer_types": ["conv", "full_attention"],
        "full_attn_idxs": [0, 1],
        "conv_dim": 4,
        "conv_L_cache": 3,
        "num_attention_heads": 1,
        "hidden_size": 4,
    }
    # Issue 27: Lfm2Config reads full_attn_idxs only without layer_types; the list wins.
    assert ssm_state(lfm2).layer_indices == (0,)


def test_metrale_reads_a_family_as_vllm_does_where_vllm_serves_it() -> None:
    lfm2 = {
        "model_type": "lfm2",
        "num_hidden_layers": 1,
        "layer_types": ["conv"],
        "hidden_size": 8,
        "conv_dim": 4,
        "conv_L_cache": 3,
    }
    # vLLM sizes lfm2 by conv_dim, SGLang by hidden_size; metrale follows vLLM.
    assert ssm_state(lfm2, layout="metrale").groups[0].tensors[0].shape == (3, 4)
    assert ssm_state(lfm2, layout="sglang").groups[0].tensors[0].shape == (8, 2)


def lfm2_vl(**text: Any) -> dict[str, Any]:
    language = {
        "model_type": "lfm2",
        "num_hidden_layers": 2,
        "layer_types": ["conv", "full_attention"],
        "hidden_size": 8,
        "conv_dim": 8,
        "conv_L_cache": 3,
        "num_attention_heads": 2,
    }
    return {"model_type": "lfm2_vl", "text_config": {**language, **text}}


def test_vllm_sizes_lfm2_vl_by_the_text_config_and_reads_it_with_no_conv_layer() -> None:
    # V:vllm/model_executor/models/lfm2_vl.py:669-675: short_conv_state_shape of
    # text_config.hidden_size and text_config.conv_L_cache, (K - 1, channels).
    state = ssm_state(lfm2_vl(), layout="vllm")
    assert [(tensor.name, tensor.shape) for tensor in state.groups[0].tensors] == [("conv", (2, 8))]
    # That model-level function runs for every hybrid model, conv layers or none.
    no_conv = lfm2_vl(layer_types=["full_attention"] * 2)
    del no_conv["text_config"]["hidden_size"]
    no_conv["text_config"]["hidden_size"] = None
    refused(
        no_conv,
        "lfm2_vl config: field 'hidden_size': must be an integer, got None (NoneType) "
        "(Lfm2Config (transformers 5.20.2, transformers/models/lfm2/configuration_lfm2.py:23))",
    )


def test_sglang_refuses_an_lfm2_vl_text_config_with_null_layer_types() -> None:
    # Issue 27: Lfm2Config makes a null layer_types from full_attn_idxs (default: every layer
    # attention), for SGLang's subclass too: no conv layer.
    assert ssm_state(lfm2_vl(layer_types=None), layout="sglang").ssm_layers == 0
    half = lfm2_vl(layer_types=None, full_attn_idxs=[1])
    assert ssm_state(half, layout="sglang").layer_indices == (0,)


def test_sglang_reads_a_given_lfm2_moe_layer_types() -> None:
    # S:sglang/srt/configs/lfm2_moe.py:34-41: the conv entries of a given layer_types; its
    # mamba2_cache_params sizes them by hidden_size and conv_L_cache, (hidden, K - 1).
    moe = {
        "model_type": "lfm2_moe",
        "num_hidden_layers": 3,
        "layer_types": ["full_attention", "conv", "conv"],
        "hidden_size": 8,
        "conv_L_cache": 3,
        "num_attention_heads": 2,
    }
    state = ssm_state(moe, layout="sglang")
    assert state.layer_indices == (1, 2)
    assert state.groups[0].tensors[0].shape == (8, 2)


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
        # The message whole, with the line of SGLang's assert it stands for (num_query_groups
        # % tp_size, S:sglang/srt/models/zaya.py:921-925).
        assert str(caught.value) == (
            f"{str(CONFIGS / name)!a}: zaya config: field 'num_key_value_heads': tp_size {tp} "
            "does not divide the 2 query groups; SGLang's ZAYA1 attention keeps each on one "
            "rank and replicates none (sglang/srt/models/zaya.py:921-925)"
        )


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


@pytest.mark.parametrize(
    ("head_dim", "channels"),
    [
        # ZayaConfig's head_dim defaults to 128 whatever kv_channels says; kv_channels stands in
        # only for a null head_dim (configs/zaya.py:54, :163-169). The peer oracle, on the config
        # without head_dim and kv_channels 64: 368,640 B a request and a KV cell of 2 KV heads x
        # (128 + 128) x 40 layers x 2 B.
        ("missing", (8 + 2) * 128),
        (None, (8 + 2) * 64),
    ],
)
def test_zaya_cca_windows_and_head_dim_spellings(head_dim: object, channels: int) -> None:
    fields = {**config("zaya1-8b-legacy.json"), "cca_time0": 3, "cca_time1": 4, "kv_channels": 64}
    del fields["head_dim"]
    if head_dim is None:
        fields["head_dim"] = None
    state = ssm_state(fields, layout="sglang")
    # padding (3 - 1) + (4 - 1) = 5.
    (conv, _, _) = state.groups[0].tensors
    assert conv.shape == (channels, 5)
    assert state.attention is not None
    assert state.attention.head_dim == channels // (8 + 2)


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


def test_zaya_refuses_a_null_cca_window() -> None:
    # SGLang's ZayaConfig keeps cca_time0 and cca_time1 as given (configs/zaya.py:215-216) and
    # sizes the conv by (cca_time0 - 1) + (cca_time1 - 1) (:282): null is a TypeError there;
    # only a missing window is the class's default 2 (:84-85).
    legacy = config("zaya1-8b-legacy.json")
    for field in ("cca_time0", "cca_time1"):
        assert refusal(legacy | {field: None}, layout="sglang") == (
            f"zaya config: field '{field}': must be an integer, got None (NoneType)"
        )
    missing = {key: value for key, value in legacy.items() if not key.startswith("cca_time")}
    assert ssm_state(missing, layout="sglang").groups[0].tensors[0].shape == (1280, 2)


def test_zaya_layers_set_the_class_layer_count() -> None:
    # configs/zaya.py:109-113: a non-empty zaya_layers is num_hidden_layers, whatever the file's.
    fields = {**config("zaya1-8b-legacy.json"), "zaya_layers": ["a", 16, "a", 16, 16, "a"]}
    assert class_fields(fields, layout="sglang")["num_hidden_layers"] == 6
    fields["zaya_layers"] = []
    assert class_fields(fields, layout="sglang")["num_hidden_layers"] == 80


def test_zaya_per_layer_lists_give_the_first_nonzero_heads_and_query_groups() -> None:
    # configs/zaya.py:136-148: num_attention_heads and num_query_groups are the first non-zero
    # entries of cca_num_q_heads and num_query_groups_list, else the scalars.
    fields = {
        **config("zaya1-8b-legacy.json"),
        "num_attention_heads": 8,
        "cca_num_q_heads": [0, 4, 0, 6],
        "num_query_groups": 4,
        "num_query_groups_list": [0, 2, 0, 2],
    }
    held = class_fields(fields, layout="sglang")
    assert (held["num_attention_heads"], held["num_query_groups"]) == (4, 2)
    state = ssm_state(fields, layout="sglang")
    # conv channels (4 + 2) * 128, padding (2 - 1) + (2 - 1).
    assert state.groups[0].tensors[0].shape == ((4 + 2) * 128, 2)
    assert state.attention is not None and state.attention.num_attention_heads == 4
    zeros = fields | {
        "cca_num_q_heads": [0, 0],
        "num_query_groups_list": [0],
        "num_query_groups": 2,
    }
    held = class_fields(zeros, layout="sglang")
    assert (held["num_attention_heads"], held["num_query_groups"]) == (8, 2)


def test_zaya_head_dim_and_kv_channels_stand_in_for_each_other() -> None:
    # configs/zaya.py:163-169: head_dim null takes kv_channels; kv_channels null takes head_dim;
    # neither is an assertion error.
    legacy = config("zaya1-8b-legacy.json")
    given = {key: value for key, value in legacy.items() if key != "kv_channels"}
    assert class_fields(given | {"head_dim": 64}, layout="sglang")["kv_channels"] == 64
    held = class_fields(given | {"head_dim": 128, "kv_channels": 32}, layout="sglang")
    assert (held["head_dim"], held["kv_channels"]) == (128, 32)
    error = refused(
        given | {"head_dim": None},
        "zaya config: field 'head_dim': missing, and no kv_channels; ZayaConfig asserts a head "
        "size (ZayaConfig (SGLang 0.5.23, sglang/srt/configs/zaya.py:29))",
        layout="sglang",
    )
    assert error.field == "head_dim"


def test_lfm2_class_keeps_the_full_attn_idxs_it_makes_layer_types_from() -> None:
    # transformers' Lfm2Config.__post_init__ (configuration_lfm2.py:81-88): no layer_types sets
    # full_attn_idxs to every layer where it is None, and makes layer_types from it.
    lfm2 = {
        key: value
        for key, value in lfm2_1_2b().items()
        if key not in ("layer_types", "full_attn_idxs")
    }
    for layout in ("vllm", "sglang"):
        held = class_fields(lfm2, layout=layout)
        assert held["full_attn_idxs"] == list(range(16))
        assert held["layer_types"] == ["full_attention"] * 16
    # @strict holds full_attn_idxs to list[int] | None.
    error = refused(
        lfm2 | {"full_attn_idxs": 3},
        "lfm2 config: field 'full_attn_idxs': must be a list of layer numbers, got 3 "
        "(Lfm2Config (transformers 5.20.2, transformers/models/lfm2/configuration_lfm2.py:23))",
    )
    assert error.field == "full_attn_idxs"


def test_vllm_reads_the_lfm2_vl_kernel_even_without_conv_layers() -> None:
    # V:vllm/model_executor/models/lfm2_vl.py:669-675 runs for every hybrid model: a kernel of 0
    # is refused there; SGLang reads it only with a conv layer (configs/lfm2_vl.py:62-103).
    no_conv = lfm2_vl(layer_types=["full_attention"] * 2, conv_L_cache=0)
    assert refusal(no_conv) == ("lfm2_vl config: field 'conv_L_cache': must be at least 1, got 0")
    assert ssm_state(no_conv, layout="sglang").ssm_layers == 0


def test_an_lfm2_vl_with_an_lfm2_moe_text_config_needs_its_layer_types() -> None:
    # transformers' Lfm2MoeConfig has no full_attn_idxs and leaves layer_types None (unlike
    # Lfm2Config, configuration_lfm2.py:81-88); SGLang's Lfm2VlConfig enumerates
    # text_config.layer_types (S:sglang/srt/configs/lfm2_vl.py:38-52): None fails there.
    text = {
        "model_type": "lfm2_moe",
        "num_hidden_layers": 2,
        "hidden_size": 8,
        "conv_L_cache": 3,
        "num_attention_heads": 2,
    }
    assert refusal({"model_type": "lfm2_vl", "text_config": text}, layout="sglang") == (
        "lfm2_vl config: field 'layer_types': must be a list of layer types, got None"
    )
