"""Mamba-1 (``mamba``, ``falcon_mamba``, ``jamba``) and Mamba-2 (``mamba2``, ``nemotron_h``,
``falcon_h1``, ``granitemoehybrid``, ``zamba2``) families, read as the servers' code reads them.

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

import pytest

from decode_ring.models import (
    LAYOUTS,
    ModelConfigError,
    TensorParallelSplitError,
    class_fields,
    ssm_state,
)

from .support import (
    CONFIGS,
    SMALL_FALCON,
    SMALL_JAMBA,
    SMALL_MAMBA2,
    SMALL_NEMOTRON,
    SMALL_ZAMBA2,
    config,
    exported,
    refusal,
    refused,
)


def test_mamba1_tensors_are_named_conv_and_ssm() -> None:
    mamba = {
        "model_type": "mamba",
        "intermediate_size": 8,
        "state_size": 4,
        "conv_kernel": 4,
        "num_hidden_layers": 1,
    }
    state = ssm_state(mamba)
    assert [(tensor.name, tensor.shape) for tensor in state.groups[0].tensors] == [
        ("conv", (3, 8)),
        ("ssm", (8, 4)),
    ]


def test_mamba2_tensors_are_named_conv_and_ssm() -> None:
    state = ssm_state(SMALL_MAMBA2)
    assert [tensor.name for tensor in state.groups[0].tensors] == ["conv", "ssm"]
    assert state.groups[0].kind == "mamba2"


def test_mamba1_sglang_ssm_state_has_a_unit_head_dim() -> None:
    state = ssm_state(config("mamba-2.8b-hf.json"), tp_size=4, layout="sglang")
    assert (state.conv_shape, state.ssm_shape) == ((1280, 3), (1280, 1, 16))


def test_sglang_needs_mamba2_intermediate_size() -> None:
    codestral = config("mamba-codestral-7b.json")
    del codestral["intermediate_size"]
    assert ssm_state(codestral).per_sequence_bytes == 64 * (3 * 10240 * 2 + 128 * 64 * 128 * 2)
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(codestral, layout="sglang")
    assert str(caught.value) == (
        "mamba2 config: field 'intermediate_size': missing; SGLang 0.5.23 sizes mamba2 by "
        "config.intermediate_size (configs/mamba2.py:46-48), which transformers' Mamba2Config "
        "does not define"
    )


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


def test_mamba2_intermediate_size_must_agree() -> None:
    error = refused(
        {**SMALL_MAMBA2, "intermediate_size": 100},
        "mamba2 config: field 'intermediate_size': is 100 but expand*hidden_size is 128",
    )
    assert error.field == "intermediate_size"


def test_jamba_takes_offset_zero_and_names_mamba_expand_in_a_split() -> None:
    state = ssm_state(SMALL_JAMBA)
    assert state.layer_indices == (1, 3)
    error = refused(
        SMALL_JAMBA,
        "jamba config: field 'mamba_expand': tp_size 4 does not divide 6 "
        "(mamba_expand * hidden_size); the servers shard it evenly",
        tp_size=4,
    )
    assert isinstance(error, TensorParallelSplitError)
    assert error.field == "mamba_expand"


def test_nemotron_layer_list_in_both_vocabularies_and_the_pattern() -> None:
    nemotron = config("nemotron-nano-9b-v2.json")
    pattern = nemotron.pop("hybrid_override_pattern")
    names = {"M": "mamba", "*": "attention", "-": "mlp", "E": "moe"}
    normalised = {"M": "linear_attention", "*": "full_attention", "-": "mlp", "E": "moe"}
    by_pattern = ssm_state(nemotron | {"hybrid_override_pattern": pattern})
    by_names = ssm_state(nemotron | {"layers_block_type": [names[c] for c in pattern]})
    by_normalised = ssm_state(nemotron | {"layers_block_type": [normalised[c] for c in pattern]})
    assert by_pattern == by_names == by_normalised
    both = nemotron | {"hybrid_override_pattern": pattern}
    assert ssm_state(both | {"layers_block_type": [names[c] for c in pattern]}) == by_pattern


@pytest.mark.parametrize("layout", LAYOUTS)
def test_nemotron_layer_descriptions_that_disagree_take_the_list(layout: str) -> None:
    # Issue 27: both servers' NemotronHConfig take layers_block_type over the pattern, which
    # they then derive from the list (transformers configuration_nemotron_h.py:160-166, :246-251;
    # S:sglang/srt/configs/nemotron_h.py:196-206, :457-463).
    nemotron = config("nemotron-nano-9b-v2.json")
    names = {"M": "mamba", "*": "attention", "-": "mlp", "E": "moe"}
    listed = [names[c] for c in nemotron["hybrid_override_pattern"]]
    listed[1] = "mamba"  # the pattern says '-'
    state = ssm_state(nemotron | {"layers_block_type": listed}, layout=layout)
    assert (state.ssm_layers, state.layer_indices[:2]) == (28, (0, 1))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_nemotron_pattern_one_layer_short_is_read_as_its_layers(layout: str) -> None:
    # Issue 27: both servers' NemotronHConfig make num_hidden_layers the length of the layers
    # and ignore a given one, with a warning (transformers configuration_nemotron_h.py:170-176,
    # :228-243; S:sglang/srt/configs/nemotron_h.py:313-322, :441-455).
    nemotron = config("nemotron-nano-9b-v2.json")
    short = nemotron | {"hybrid_override_pattern": nemotron["hybrid_override_pattern"][:-1]}
    assert ssm_state(short, layout=layout).ssm_layers == 27  # the last layer is '-'
    listed = {"layers_block_type": ["mamba"] * 57}
    assert ssm_state(nemotron | listed, layout=layout).ssm_layers == 57


def test_sglang_refuses_transformers_5_names_in_nemotron_layers() -> None:
    nemotron = config("nemotron-nano-9b-v2.json") | {"layers_block_type": ["linear_attention"]}
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(nemotron, layout="sglang")
    assert str(caught.value) == (
        "nemotron_h config: field 'layers_block_type': holds linear_attention; SGLang's class "
        "takes mamba, attention, mlp and moe only (transformers 5's names are refused) "
        "(NemotronHConfig (SGLang 0.5.23, sglang/srt/configs/nemotron_h.py:44))"
    )


def test_sglang_names_an_unprintable_nemotron_layer_kind_bounded() -> None:
    # An integer past Python's 4,300-digit str() limit raised a bare ValueError here (found by
    # the fuzz of test_models_fixtures.py): it is named as <N-bit integer>, in one line.
    nemotron = config("nemotron-nano-9b-v2.json") | {"layers_block_type": [10**5000]}
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(nemotron, layout="sglang")
    assert str(caught.value).startswith(
        "nemotron_h config: field 'layers_block_type': holds <16610-bit integer>; SGLang's class "
    )


def test_nemotron_legacy_field_spellings() -> None:
    nemotron = config("nemotron-nano-9b-v2.json")
    legacy = {k: v for k, v in nemotron.items() if k not in ("n_groups", "conv_kernel")}
    legacy |= {"mamba_n_groups": 8, "mamba_d_conv": 4}
    assert ssm_state(legacy) == ssm_state(nemotron)
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(legacy, layout="sglang")
    assert str(caught.value) == (
        "nemotron_h config: field 'n_groups': missing; SGLang 0.5.23 reads n_groups, "
        "not mamba_n_groups"
    )


def test_nemotron_legacy_conv_spelling_alone_and_two_disagreeing_group_counts() -> None:
    # NVIDIA-Nemotron-Nano-9B-v2: 128 heads of 80, 8 groups of d_state 128: conv channels
    # 128 x 80 + 2 x 8 x 128 = 12288. mamba_d_conv 3 alone is the conv kernel: a window of 2
    # (SGLang's NemotronHConfig sets conv_kernel = mamba_d_conv, configs/nemotron_h.py:363).
    nemotron = config("nemotron-nano-9b-v2.json")
    legacy = {k: v for k, v in nemotron.items() if k != "conv_kernel"} | {"mamba_d_conv": 3}
    assert ssm_state(legacy, layout="sglang").groups[0].tensors[0].shape == (12288, 2)
    assert ssm_state(legacy, layout="metrale").groups[0].tensors[0].shape == (3, 12288)
    # Both group spellings, disagreeing, under SGLang's own class: refused, naming the legacy one.
    error = refused(
        nemotron | {"mamba_n_groups": 4},
        "nemotron_h config: field 'mamba_n_groups': is 4 but n_groups is 8",
        layout="sglang",
    )
    assert error.field == "mamba_n_groups"


def test_nemotron_descriptions_of_different_lengths() -> None:
    # Issue 27: the classes take the list over the pattern, whatever their lengths.
    longer = {**SMALL_NEMOTRON, "layers_block_type": ["mamba", "attention", "mamba", "mlp"]}
    assert ssm_state(longer).layer_indices == (0, 2)
    assert (
        ssm_state({**SMALL_NEMOTRON, "layers_block_type": ["mamba", "attention"]}).ssm_layers == 1
    )
    refused(
        {**SMALL_NEMOTRON, "layers_block_type": ["mamba", "ssm"]},
        "nemotron_h config: field 'layers_block_type': entry 1 is 'ssm'; expected attention, "
        "full_attention, linear_attention, mamba, mlp, moe",
    )


def test_nemotron_split_errors_name_heads_and_groups() -> None:
    error = refused(
        SMALL_NEMOTRON,
        "nemotron_h config: field 'mamba_num_heads': tp_size 2 does not divide 3; "
        "the servers shard it evenly",
        tp_size=2,
    )
    assert error.field == "mamba_num_heads"
    error = refused(
        {**SMALL_NEMOTRON, "mamba_num_heads": 4, "n_groups": 3},
        "nemotron_h config: field 'n_groups': tp_size 2 does not divide 3 groups, and only "
        "1 group is replicated",
        tp_size=2,
    )
    assert error.field == "n_groups"


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


def test_falcon_h1_without_d_ssm_uses_expand_times_hidden() -> None:
    falcon = config("falcon-h1-7b-instruct.json") | {"mamba_d_ssm": None, "mamba_d_head": "auto"}
    state = ssm_state(falcon)
    # d_inner 2 x 3072 = 6144: 24 heads of 256.
    assert (state.conv_shape, state.ssm_shape) == ((3, 6144 + 2 * 256), (24, 256, 256))


def test_falcon_auto_head_dim_is_an_integer() -> None:
    state = ssm_state(SMALL_FALCON)
    assert state.ssm_shape == (8, 16, 16)
    assert [type(size) for size in state.ssm_shape] == [int, int, int]
    assert json.dumps(state.ssm_shape) == "[8, 16, 16]"
    error = refused(
        SMALL_FALCON,
        "falcon_h1 config: field 'mamba_n_groups': tp_size 2 does not divide 3 groups, and "
        "only 1 group is replicated",
        tp_size=2,
    )
    assert error.field == "mamba_n_groups"


def test_granite_layer_types_in_both_vocabularies() -> None:
    granite = config("granite-4.0-h-tiny.json")
    renamed = [
        {"mamba": "linear_attention", "attention": "full_attention"}[entry]
        for entry in granite["layer_types"]
    ]
    for layout in ("vllm", "sglang"):
        assert ssm_state(granite, layout=layout) == ssm_state(
            granite | {"layer_types": renamed}, layout=layout
        )


def test_zamba2_heads_that_do_not_divide() -> None:
    error = refused(
        {**SMALL_ZAMBA2, "n_mamba_heads": 5},
        "zamba2 config: field 'n_mamba_heads': 5 heads do not divide mamba_expand*hidden_size",
    )
    assert error.field == "n_mamba_heads"
    error = refused(
        SMALL_ZAMBA2,
        "zamba2 config: field 'mamba_ngroups': tp_size 2 does not divide 3 groups, and only "
        "1 group is replicated",
        tp_size=2,
    )
    assert error.field == "mamba_ngroups"


def test_zamba2_head_dim_is_compared_exactly() -> None:
    # 2**55 + 1 is no float: a float division would round it and refuse the config.
    head_dim = 2**55 + 1
    config = {**SMALL_ZAMBA2, "mamba_expand": 1, "hidden_size": 3 * head_dim, "n_mamba_heads": 3}
    config["num_attention_heads"] = 6  # the shared attention spans 2 * hidden_size exactly
    config["mamba_headdim"] = head_dim
    config["mamba_ngroups"] = 1
    state = ssm_state(config, layout="metrale")
    assert state.ssm_shape == (3, head_dim, 16)


@pytest.mark.parametrize("layout", ["vllm", "metrale"])
def test_zamba2_without_its_layer_list_says_the_class_default_does_not_fit(layout: str) -> None:
    # Issue 27: transformers' Zamba2Config fills a missing layers_block_type with Zamba2-2.7B's
    # 54 layers (configuration_zamba2.py, its __post_init__), and its validate_layer_type
    # refuses it against any other num_hidden_layers: the message says what to give.
    config = {key: value for key, value in SMALL_ZAMBA2.items() if key != "layers_block_type"}
    error = refused(
        config,
        "zamba2 config: field 'layers_block_type': missing, and the class's default of 54 layers "
        "does not fit num_hidden_layers 2; give layers_block_type, one entry a layer "
        "(Zamba2Config (transformers 5.20.2, "
        "transformers/models/zamba2/configuration_zamba2.py:24))",
        layout=layout,
    )
    assert error.field == "layers_block_type"
    assert ssm_state({**config, "num_hidden_layers": 54}, layout=layout).ssm_layers == 54


# --- what the config classes derive (class_fields: the fields as the class holds them) ---------


@pytest.mark.parametrize(
    ("expand", "inner"),
    [
        (1, 2560),
        (2, 5120),
        (200, 512_000),
        (0, 0),
        (-1, -2560),
        (0.5, 1280),
        (2**63, 2**63 * 2560),
        (10**400, 10**400 * 2560),
    ],
)
def test_mamba_classes_derive_intermediate_size_from_expand_and_hidden_size(
    expand: int, inner: int
) -> None:
    # MambaConfig.__post_init__: intermediate_size = int(expand * hidden_size)
    # (configuration_mamba.py:95), which SGLang's MambaConfig keeps; a file's own is kept. The
    # class computes it for any number; the reader refuses an expand it cannot size.
    mamba = {k: v for k, v in config("mamba-2.8b-hf.json").items() if k != "intermediate_size"}
    for layout in ("vllm", "sglang"):
        fields = class_fields(mamba | {"expand": expand}, layout=layout)
        assert fields["intermediate_size"] == inner  # 2560 x expand
    assert class_fields(mamba | {"intermediate_size": 1000})["intermediate_size"] == 1000


@pytest.mark.parametrize("expand", [float("inf"), None, "2", True])
def test_a_mamba_expand_the_class_cannot_multiply_is_refused_as_a_field(expand: object) -> None:
    # int(inf * hidden_size) fails in MambaConfig (OverflowError), as does a non-number; the
    # package refuses expand, never raising the class's own error.
    mamba = {k: v for k, v in config("mamba-2.8b-hf.json").items() if k != "intermediate_size"}
    for layout in ("vllm", "sglang"):
        with pytest.raises(ModelConfigError, match="expand"):
            ssm_state(mamba | {"expand": expand}, layout=layout)


@pytest.mark.parametrize("layout", ["vllm", "sglang"])
def test_falcon_h1_classes_resolve_an_auto_head_dim_over_the_mamba_channels(layout: str) -> None:
    # FalconH1Config.__post_init__ (configuration_falcon_h1.py:105-111; SGLang's
    # configs/falcon_h1.py alike): no KV heads are the heads; mamba_d_head "auto" is
    # (mamba_d_ssm, or when it is null mamba_expand * hidden_size) // mamba_n_heads.
    fields = class_fields(SMALL_FALCON | {"num_key_value_heads": None}, layout=layout)
    assert fields["mamba_d_head"] == 16  # 2 x 64 // 8
    assert fields["num_key_value_heads"] == 4
    # Falcon-H1-7B: mamba_d_ssm 3072, not mamba_expand 2 x hidden_size 3072 = 6144.
    falcon = config("falcon-h1-7b-instruct.json") | {"mamba_d_head": "auto"}
    assert class_fields(falcon, layout=layout)["mamba_d_head"] == 128  # 3072 // 24


def test_granite_classes_resolve_an_auto_head_dim_under_transformers_only() -> None:
    # GraniteMoeHybridConfig.__post_init__: mamba_d_head "auto" is mamba_expand * hidden_size
    # // mamba_n_heads (configuration_granitemoehybrid.py:101-103): 2 x 1536 // 48 = 64.
    granite = config("granite-4.0-h-tiny.json") | {"mamba_d_head": "auto"}
    assert class_fields(granite)["mamba_d_head"] == 64
    assert ssm_state(granite).ssm_shape == (48, 64, 128)
    # SGLang's class multiplies mamba_d_head by mamba_n_heads and compares it with the
    # channels (S:sglang/srt/configs/granitemoehybrid.py:248-252): "auto" is refused.
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(granite, layout="sglang")
    assert str(caught.value).startswith(
        "granitemoehybrid config: field 'mamba_d_head': is 'auto'; SGLang's class multiplies it "
        "by mamba_n_heads and refuses what is not mamba_expand * hidden_size 3072 "
        "(configs/granitemoehybrid.py:248-252)"
    )


def test_granite_refuses_a_negative_mamba_expand_by_name() -> None:
    granite = config("granite-4.0-h-tiny.json") | {"mamba_expand": -1, "mamba_d_head": "auto"}
    error = refused(
        granite, "granitemoehybrid config: field 'mamba_expand': must be at least 1, got -1"
    )
    assert error.field == "mamba_expand"


def test_sglang_puts_granite_attention_at_every_sixth_layer() -> None:
    # S:sglang/srt/configs/granitemoehybrid.py:186-193: attention where (i + 1) % 6 == 0.
    granite = {k: v for k, v in config("granite-4.0-h-tiny.json").items() if k != "layer_types"}
    state = ssm_state(granite, layout="sglang")
    assert state.attention is not None
    assert state.attention.layer_indices == (5, 11, 17, 23, 29, 35)


def test_zamba2_classes_derive_both_head_dims_from_the_hidden_size() -> None:
    # Zamba2Config.__post_init__ (configuration_zamba2.py:115-116): attention_head_dim
    # 2 * hidden_size // num_attention_heads, mamba_headdim mamba_expand * hidden_size //
    # n_mamba_heads; vLLM sizes the shared attention by attention_head_dim
    # (model_arch_config_convertor.py:502-504).
    fields = class_fields(SMALL_ZAMBA2)
    assert (fields["attention_head_dim"], fields["mamba_headdim"]) == (32, 16)  # 128 // 4, 8
    state = ssm_state(CONFIGS / "zamba2-2.7b.json")
    assert state.attention is not None
    assert state.attention.head_dim == 160  # 2 x 2560 // 32


def test_nemotron_without_a_list_or_a_pattern_takes_the_class_default() -> None:
    # transformers' NemotronHConfig: linear_attention, moe, full_attention, mlp
    # (configuration_nemotron_h.py:164-166).
    nemotron = {
        k: v
        for k, v in config("nemotron-nano-9b-v2.json").items()
        if k not in ("hybrid_override_pattern", "num_hidden_layers")
    }
    state = ssm_state(nemotron)
    assert state.attention is not None
    assert (state.layer_indices, state.attention.layer_indices) == ((0,), (2,))
    assert class_fields(nemotron)["hybrid_override_pattern"] == "ME*-"


@pytest.mark.parametrize("layout", ["vllm", "sglang"])
def test_nemotron_classes_derive_the_pattern_from_the_list(layout: str) -> None:
    # transformers: hybrid_override_pattern is a property of layers_block_type
    # (configuration_nemotron_h.py:245-251), as is SGLang's (S:configs/nemotron_h.py:457-463).
    nemotron = config("nemotron-nano-9b-v2.json")
    pattern = nemotron.pop("hybrid_override_pattern")
    names = {"M": "mamba", "*": "attention", "-": "mlp", "E": "moe"}
    fields = class_fields(
        nemotron | {"layers_block_type": [names[c] for c in pattern]}, layout=layout
    )
    assert (fields["hybrid_override_pattern"], fields["num_hidden_layers"]) == (pattern, 56)


def test_sglang_names_every_unknown_nemotron_layer_kind_and_bounds_a_long_one() -> None:
    # SGLang's NemotronHConfig._validate_layers_block_type (S:configs/nemotron_h.py:167-192).
    nemotron = config("nemotron-nano-9b-v2.json")
    kinds = ["mamba", "ssm", "linear_attention", "x" * 64, "y" * 65]
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(nemotron | {"layers_block_type": kinds}, layout="sglang")
    # Sorted as written: the bounded one starts with its quote.
    shown = "'" + "y" * 64 + "'... (65 characters), linear_attention, ssm, " + "x" * 64
    assert str(caught.value).startswith(
        f"nemotron_h config: field 'layers_block_type': holds {shown}; SGLang's class takes "
    )


@pytest.mark.parametrize("layout", ["vllm", "metrale"])
def test_zamba2_shared_attention_head_dim_is_the_files_own_or_its_alias(layout: str) -> None:
    # transformers keeps a file's attention_head_dim, or its alias head_dim (attribute_map,
    # configuration_zamba2.py:71), over the derived one: the kwargs are set after
    # __post_init__ (configuration_utils.py:496-501); vLLM reads it (model_arch_config_convertor.py:
    # 502-504). 2 x 64 over 4 heads would be 32.
    for given in ({"attention_head_dim": 16}, {"head_dim": 16}):
        assert class_fields(SMALL_ZAMBA2 | given)["attention_head_dim"] == 16
        state = ssm_state(SMALL_ZAMBA2 | given, layout=layout)
        assert state.attention is not None
        assert state.attention.head_dim == 16
    # A null or 0 one is kept by the class, and vLLM's Zamba2Attention divides it by 2
    # (models/zamba2.py:151-153).
    refused(
        SMALL_ZAMBA2 | {"attention_head_dim": None},
        "zamba2 config: field 'attention_head_dim': must be an integer, got None (NoneType)",
        layout=layout,
    )
    refused(
        SMALL_ZAMBA2 | {"head_dim": 0},
        "zamba2 config: field 'attention_head_dim': must be at least 1, got 0",
        layout=layout,
    )


@pytest.mark.parametrize(("layout", "release"), [("vllm", "5.20.2"), ("sglang", "5.19.0")])
def test_a_null_nemotron_pattern_without_a_list_is_refused(layout: str, release: str) -> None:
    # transformers' NemotronHConfig turns a given hybrid_override_pattern into layers
    # (configuration_nemotron_h.py:160-163), one per character (:268-271): None fails
    # (TypeError). SGLang builds transformers 5.19's class first, through AutoConfig
    # (S:sglang/srt/utils/hf_transformers/config.py:228-233), whose code is the same.
    nemotron = config("nemotron-nano-9b-v2.json") | {"hybrid_override_pattern": None}
    error = refused(
        nemotron,
        "nemotron_h config: field 'hybrid_override_pattern': is null and there is no "
        "layers_block_type; the class makes each layer of a character of the pattern "
        "(configuration_nemotron_h.py:160-163, :268-271) (NemotronHConfig (transformers "
        f"{release}, transformers/models/nemotron_h/configuration_nemotron_h.py:25))",
        layout=layout,
    )
    assert error.field == "hybrid_override_pattern"


def test_sglang_refuses_a_granite_layer_kind_that_is_not_a_string_by_its_entry() -> None:
    # transformers 5.19's @strict GraniteMoeHybridConfig (layer_types: list[str] | None), which
    # SGLang builds first, refuses it; the reader names the entry.
    granite = config("granite-4.0-h-tiny.json")
    kinds = [["mamba"], *granite["layer_types"][1:]]
    error = refused(
        granite | {"layer_types": kinds},
        "granitemoehybrid config: field 'layer_types': entry 0 is <list>; expected attention, "
        "full_attention, linear_attention, mamba",
        layout="sglang",
    )
    assert error.field == "layer_types"


@pytest.mark.parametrize("layout", LAYOUTS)
def test_nemotron_moe_and_mlp_layers_are_neither_mamba_nor_attention(layout: str) -> None:
    # SGLang's class takes mamba, attention, mlp and moe (S:configs/nemotron_h.py:185-186);
    # transformers' the same as linear_attention, full_attention, mlp, moe (:204-205).
    listed = {"layers_block_type": ["mamba", "moe", "attention", "mlp", "mamba"]}
    # (n_groups 1: SGLang's own default of mamba_n_groups, 8, is never read.)
    state = ssm_state(SMALL_NEMOTRON | listed, layout=layout)
    assert state.attention is not None
    assert (state.layer_indices, state.attention.layer_indices) == ((0, 4), (2,))


def test_sglang_reads_a_nemotron_n_groups_other_than_its_class_default_of_mamba_n_groups() -> None:
    # SGLang's NemotronHConfig defaults mamba_n_groups to 8 (S:configs/nemotron_h.py:277, :359)
    # and sizes the state by n_groups (:430), the file's own (super().__init__(**kwargs)).
    # NVIDIA-Nemotron-Nano-9B-v2 with 4 groups: conv channels 128 x 80 + 2 x 4 x 128 = 11264.
    nemotron = config("nemotron-nano-9b-v2.json") | {"n_groups": 4}
    assert ssm_state(nemotron, layout="sglang").conv_shape == (11264, 3)
    assert ssm_state(nemotron).conv_shape == (3, 11264)


# --- nemotron_h_puzzle under vLLM: no transformers class, the file read as it is ---------------

PUZZLE = SMALL_NEMOTRON | {"model_type": "nemotron_h_puzzle"}


def test_a_puzzle_nemotron_layer_list_and_pattern_that_disagree_are_refused() -> None:
    # transformers 5.20.2 has no nemotron_h_puzzle class (vLLM runs the checkpoint's own,
    # registry.py:187 maps it to NemotronHForCausalLM, which reads the pattern,
    # models/nemotron_h.py:597): the package cannot tell which description that class keeps.
    mismatch = "; the two layer descriptions disagree"
    cases = [
        (
            ["mamba", "mamba", "mamba"],
            "layer 1 is 'mamba' but hybrid_override_pattern makes it '*'",
        ),
        (["mamba", "attention"], "layer 2 is None but hybrid_override_pattern makes it 'M'"),
        (
            ["mamba", "attention", "mamba", "mlp"],
            "layer 3 is 'mlp' but hybrid_override_pattern makes it None",
        ),
    ]
    for listed, problem in cases:
        error = refused(
            PUZZLE | {"layers_block_type": listed},
            f"nemotron_h_puzzle config: field 'layers_block_type': {problem}{mismatch}",
        )
        assert error.field == "layers_block_type"
    same = ssm_state(PUZZLE | {"layers_block_type": ["mamba", "attention", "mamba"]})
    assert same.layer_indices == (0, 2)


def test_a_puzzle_nemotron_without_layers_or_with_a_miscounted_description_is_refused() -> None:
    bare = {k: v for k, v in PUZZLE.items() if k != "hybrid_override_pattern"}
    refused(
        bare,
        "nemotron_h_puzzle config: field 'hybrid_override_pattern': missing (and no "
        "layers_block_type)",
    )
    refused(
        bare | {"layers_block_type": ["mamba", "attention"], "num_hidden_layers": 3},
        "nemotron_h_puzzle config: field 'layers_block_type': has 2 entries but "
        "num_hidden_layers is 3",
    )
    refused(
        PUZZLE | {"num_hidden_layers": 2},
        "nemotron_h_puzzle config: field 'hybrid_override_pattern': has 3 entries but "
        "num_hidden_layers is 2",
    )
    listed = ssm_state(bare | {"layers_block_type": ["attention", "mamba"]})
    assert listed.layer_indices == (1,)


def test_a_puzzle_nemotron_reads_the_legacy_conv_spelling_as_transformers_renames_it() -> None:
    # NemotronHConfig takes mamba_d_conv for conv_kernel (configuration_nemotron_h.py:147); the
    # raw puzzle file is read alike. Conv channels 3 x 16 + 2 x 1 x 16 = 80, window 3 - 1.
    legacy = {k: v for k, v in PUZZLE.items() if k != "conv_kernel"} | {"mamba_d_conv": 3}
    assert ssm_state(legacy).conv_shape == (2, 80)


def test_sglang_reads_a_null_puzzle_nemotron_pattern_as_its_class_default() -> None:
    # transformers has no nemotron_h_puzzle class to fail on it first; SGLang's
    # NemotronHPuzzleConfig(NemotronHConfig) makes a null pattern without a list its four default
    # layers, mamba, moe, attention, moe (S:sglang/srt/configs/nemotron_h.py:39, :196-206, :523).
    state = ssm_state(PUZZLE | {"hybrid_override_pattern": None}, layout="sglang")
    assert state.attention is not None
    assert (state.layer_indices, state.attention.layer_indices) == ((0,), (2,))
