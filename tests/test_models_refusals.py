"""How the models refuse what they cannot read: one line naming the file, the family and the
field (or the argument), showing the value as far as it is useful; the edges of what is accepted;
and hostile configs, fuzzed, which answer a consistent state or such a refusal.

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
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from decode_ring.models import FAMILIES, LAYOUTS, ModelConfigError, ssm_state

from .support import (
    CONFIGS,
    FIELD_NAMES,
    JSON_LEAVES,
    JSON_VALUES,
    SMALL_KIMI,
    SMALL_MAMBA2,
    SMALL_NEMOTRON,
    SMALL_ZAMBA2,
    WRITTEN,
    assert_consistent,
    assert_one_line,
    config,
    fields_of,
    refusal,
    refused,
    written,
)


@pytest.mark.parametrize(
    ("name", "change", "message"),
    [
        (
            "nemotron-nano-9b-v2.json",
            {"mamba_num_heads": None},
            "nemotron_h config: field 'mamba_num_heads': must be an integer, got None (NoneType) "
            "(NemotronHConfig (transformers 5.20.2, "
            "transformers/models/nemotron_h/configuration_nemotron_h.py:25))",
        ),
        (
            "nemotron-nano-9b-v2.json",
            {"ssm_state_size": 128.0},
            "nemotron_h config: field 'ssm_state_size': must be an integer, got 128.0 (float)",
        ),
        (
            "mamba-2.8b-hf.json",
            {"conv_kernel": True},
            "mamba config: field 'conv_kernel': must be an integer, got True (bool)",
        ),
        (
            "qwen3-next-80b-a3b-instruct.json",
            {"linear_key_head_dim": "128"},
            "qwen3_next config: field 'linear_key_head_dim': must be an integer, got '128' (str)",
        ),
        (
            "zamba2-2.7b.json",
            {"mamba_d_state": 0},
            "zamba2 config: field 'mamba_d_state': must be at least 1, got 0",
        ),
        (
            "jamba-mini-1.5.json",
            {"attn_layer_offset": 8},
            "jamba config: field 'attn_layer_offset': 8 is not below attn_layer_period 8",
        ),
        (
            "mamba-codestral-7b.json",
            {"num_heads": 64},
            "mamba2 config: field 'num_heads': num_heads*head_dim 4096 != 8192 "
            "(expand * hidden_size)",
        ),
        (
            "falcon-h1-7b-instruct.json",
            {"mamba_d_head": 64},
            "falcon_h1 config: field 'mamba_d_head': 24 heads of 64 do not make 3072",
        ),
        (
            "zamba2-2.7b.json",
            {"mamba_headdim": 32},
            "zamba2 config: field 'mamba_headdim': is 32 but d_inner/n_mamba_heads is 64",
        ),
        (
            "nemotron-nano-9b-v2.json",
            {"hybrid_override_pattern": "M-X"},
            "nemotron_h config: field 'hybrid_override_pattern': character 2 is 'X'; "
            "expected M * - E",
        ),
        (
            "granite-4.0-h-tiny.json",
            {"num_hidden_layers": 41},
            "granitemoehybrid config: field 'layer_types': has 40 entries but num_hidden_layers "
            "is 41",
        ),
        (
            "granite-4.0-h-tiny.json",
            {"layer_types": "mamba"},
            "granitemoehybrid config: field 'layer_types': must be a list of layer types, "
            "got 'mamba'",
        ),
        (
            "qwen3-next-80b-a3b-instruct.json",
            {"full_attention_interval": None},
            "qwen3_next config: field 'full_attention_interval': None is no layer interval; the "
            "class builds layer_types from it (Qwen3NextConfig (transformers 5.20.2, "
            "transformers/models/qwen3_next/configuration_qwen3_next.py:23))",
        ),
        (
            "falcon-h1-7b-instruct.json",
            {"torch_dtype": "int8"},
            "falcon_h1 config: field 'torch_dtype': unknown dtype 'int8'",
        ),
        (
            "nemotron-nano-9b-v2.json",
            {"mamba_ssm_cache_dtype": "fp8"},
            "nemotron_h config: field 'mamba_ssm_cache_dtype': unknown dtype 'fp8'",
        ),
        (
            "mamba-2.8b-hf.json",
            {"num_hidden_layers": 10**9},
            "mamba config: field 'num_hidden_layers': 1000000000 layers is implausible",
        ),
    ],
)
def test_bad_fields(name: str, change: dict[str, Any], message: str) -> None:
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(config(name) | change)
    assert str(caught.value) == message
    assert caught.value.family == config(name)["model_type"]
    assert caught.value.field == message.split("'")[1]


@pytest.mark.parametrize(
    ("name", "field"),
    [
        # Fields no config class of the family declares (issue 27: a declared one gets the
        # class's default, tests/test_models_config_classes.py).
        ("kimi-linear-48b-a3b-instruct.json", "linear_attn_config"),
    ],
)
def test_missing_field_names_file_family_and_field(name: str, field: str, tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    fields = {key: value for key, value in config(name).items() if key != field}
    path.write_text(json.dumps(fields), encoding="utf-8")
    family = fields["model_type"]
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(tmp_path)
    assert str(caught.value).startswith(
        f"{os.fspath(path)!a}: {family} config: field {field!a}: missing"
    )
    assert (caught.value.path, caught.value.family, caught.value.field) == (
        os.fspath(path),
        family,
        field,
    )


def test_long_values_are_cut() -> None:
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(config("mamba-2.8b-hf.json") | {"state_size": "x" * 10_000})
    assert len(str(caught.value)) < 200
    assert "(10000 characters)" in str(caught.value)
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(config("mamba-2.8b-hf.json") | {"state_size": -(10**5000)})
    assert "<16610-bit integer>" in str(caught.value)


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({"tp_size": 0}, ModelConfigError, "argument tp_size: must be from 1 to 2**63 - 1, got 0"),
        (
            {"tp_size": 2**63},
            ModelConfigError,
            "argument tp_size: must be from 1 to 2**63 - 1, got 9223372036854775808",
        ),
        ({"tp_size": 2.0}, TypeError, "tp_size must be an int, not float"),
        ({"tp_size": True}, TypeError, "tp_size must be an int, not bool"),
        ({"tp_size": "2"}, TypeError, "tp_size must be an int, not str"),
        (
            {"speculative_tokens": -1},
            ModelConfigError,
            "argument speculative_tokens: must be from 0 to 2**63 - 1, got -1",
        ),
        ({"speculative_tokens": False}, TypeError, "speculative_tokens must be an int, not bool"),
        (
            {"layout": "trtllm"},
            ModelConfigError,
            "argument layout: unknown layout 'trtllm'; use vllm, sglang, metrale",
        ),
        (
            {"conv_dtype": "int8"},
            ModelConfigError,
            "argument conv_dtype: unknown dtype 'int8'; use bfloat16, float16 or float32 "
            "(or bf16, fp16, half, fp32, float, auto)",
        ),
        (
            {"ssm_dtype": 4},
            ModelConfigError,
            "argument ssm_dtype: unknown dtype 4; use bfloat16, float16 or float32 "
            "(or bf16, fp16, half, fp32, float, auto)",
        ),
    ],
)
def test_bad_arguments(arguments: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error) as caught:
        ssm_state(config("zamba2-2.7b.json"), **arguments)
    assert str(caught.value) == message
    assert issubclass(ModelConfigError, ValueError)


def test_exact_integer_arithmetic_for_huge_fields() -> None:
    mamba = config("mamba-2.8b-hf.json") | {"state_size": 2**40}
    state = ssm_state(mamba, layout="metrale")
    assert state.ssm_bytes == 5120 * 2**40 * 4
    assert state.per_sequence_bytes == 64 * (4 * 5120 * 4 + 5120 * 2**40 * 4)
    # Issue 28: a byte count past 64 bits is refused, not carried.
    with pytest.raises(OverflowError) as overflow:
        ssm_state(mamba | {"state_size": 2**63 - 1}, layout="metrale")
    # The message names the model type, and the sequence's bytes written out whole.
    huge = 64 * (4 * 5120 * 4 + 5120 * (2**63 - 1) * 4)
    assert str(overflow.value) == (
        f"mamba: per_sequence_bytes would be {huge}, beyond the 18446744073709551615 a 64-bit "
        "count holds"
    )
    with pytest.raises(ModelConfigError, match=r"'state_size': must be at most 2\*\*63 - 1, got"):
        ssm_state(mamba | {"state_size": 2**63})


def test_max_layers_is_public_and_is_the_limit_ssm_state_applies() -> None:
    from decode_ring import models

    assert "MAX_LAYERS" in models.__all__
    assert models.MAX_LAYERS == 100_000
    fields = config("mamba-2.8b-hf.json")
    assert ssm_state(fields | {"num_hidden_layers": 100_000}).ssm_layers == 100_000
    with pytest.raises(
        ModelConfigError, match=r"'num_hidden_layers': 100001 layers is implausible"
    ):
        ssm_state(fields | {"num_hidden_layers": 100_001})


def test_integers_are_shown_in_full_up_to_128_bits() -> None:
    for value, shown in [
        (-(2**128 - 1), f"-{2**128 - 1}"),
        (-(2**128), "<129-bit integer>"),
    ]:
        refused(
            {**SMALL_MAMBA2, "conv_kernel": value},
            f"mamba2 config: field 'conv_kernel': must be at least 1, got {shown}",
        )


def test_strings_are_shown_up_to_64_characters() -> None:
    refused(
        {**SMALL_MAMBA2, "state_size": "a" * 64},
        f"mamba2 config: field 'state_size': must be an integer, got '{'a' * 64}' (str)",
    )
    refused(
        {**SMALL_MAMBA2, "state_size": "b" * 65},
        f"mamba2 config: field 'state_size': must be an integer, got '{'b' * 64}'... "
        "(65 characters) (str)",
    )


def test_other_values_are_shown_by_their_type() -> None:
    refused(
        {**SMALL_MAMBA2, "state_size": [1]},
        "mamba2 config: field 'state_size': must be an integer, got <list> (list)",
    )
    refused(
        {**SMALL_MAMBA2, "state_size": {"a": 1}},
        "mamba2 config: field 'state_size': must be an integer, got <dict> (dict)",
    )


def test_a_layer_list_of_100000_entries_is_read_and_one_more_is_not() -> None:
    config = {
        **SMALL_ZAMBA2,
        "layers_block_type": ["mamba"] * 100_000,
        "num_hidden_layers": 100_000,
    }
    assert ssm_state(config).ssm_layers == 100_000
    error = refused(
        {**SMALL_ZAMBA2, "layers_block_type": ["mamba"] * 100_001, "num_hidden_layers": 100_001},
        "zamba2 config: field 'layers_block_type': 100001 layers is implausible",
    )
    assert fields_of(error) == (None, "zamba2", "layers_block_type")


def test_a_bad_layer_entry_names_the_vocabulary_and_no_note() -> None:
    error = refused(
        {**SMALL_ZAMBA2, "layers_block_type": ["mamba", "attention"]},
        # transformers 5 renames a legacy 'attention' to 'full_attention' (issue 27).
        "zamba2 config: field 'layers_block_type': entry 1 is 'full_attention'; "
        "expected hybrid, linear_attention, mamba",
    )
    assert fields_of(error) == (None, "zamba2", "layers_block_type")


def test_a_pattern_of_100000_layers_is_read_and_one_more_is_not() -> None:
    assert (
        ssm_state({**SMALL_NEMOTRON, "hybrid_override_pattern": "M" * 100_000}).ssm_layers
        == 100_000
    )
    # Issue 27: the classes read the pattern into layers_block_type, which is refused.
    error = refused(
        {**SMALL_NEMOTRON, "hybrid_override_pattern": "M" * 100_001},
        "nemotron_h config: field 'layers_block_type': 100001 layers is implausible",
    )
    assert error.field == "layers_block_type"


def test_a_pattern_that_is_not_a_string() -> None:
    error = refused(
        {**SMALL_NEMOTRON, "hybrid_override_pattern": ["M"]},
        "nemotron_h config: field 'hybrid_override_pattern': must be a string, got <list>",
    )
    assert error.field == "hybrid_override_pattern"


def test_optional_fields_are_checked_by_name() -> None:
    mamba = {
        "model_type": "mamba",
        "hidden_size": 8,
        "state_size": 4,
        "conv_kernel": 4,
        "num_hidden_layers": 1,
    }
    error = refused(
        {**mamba, "expand": "2"},
        "mamba config: field 'expand': must be an integer, got '2' (str)",
    )
    assert error.field == "expand"


def test_layer_counts_from_0_to_100000() -> None:
    assert ssm_state({**SMALL_MAMBA2, "num_hidden_layers": 0}).ssm_layers == 0
    assert ssm_state({**SMALL_MAMBA2, "num_hidden_layers": 100_000}).ssm_layers == 100_000
    error = refused(
        {**SMALL_MAMBA2, "num_hidden_layers": 100_001},
        "mamba2 config: field 'num_hidden_layers': 100001 layers is implausible",
    )
    assert error.field == "num_hidden_layers"


def test_fields_past_int64_are_refused() -> None:
    refused(
        {**SMALL_MAMBA2, "state_size": 2**63},
        "mamba2 config: field 'state_size': must be at most 2**63 - 1, got 9223372036854775808",
    )


def test_an_optional_field_of_one_is_read() -> None:
    mamba = {
        "model_type": "mamba",
        "intermediate_size": 8,
        "expand": 1,
        "hidden_size": 8,
        "state_size": 4,
        "conv_kernel": 4,
        "num_hidden_layers": 1,
    }
    assert ssm_state(mamba).ssm_shape == (8, 4)


def test_argument_errors_name_the_argument() -> None:
    plain = {"model_type": "llama", "num_hidden_layers": 1}
    assert ssm_state(plain, tp_size=2**63 - 1).tp_size == 2**63 - 1
    error = refused(plain, "argument tp_size: must be from 1 to 2**63 - 1, got 0", tp_size=0)
    assert error.field == "tp_size"
    error = refused(
        plain,
        "argument tp_size: must be from 1 to 2**63 - 1, got 9223372036854775808",
        tp_size=2**63,
    )
    assert error.field == "tp_size"
    error = refused(
        plain, "argument layout: unknown layout 'x'; use vllm, sglang, metrale", layout="x"
    )
    assert error.field == "layout"
    error = refused(
        plain,
        "argument conv_dtype: unknown dtype 'int8'; use bfloat16, float16 or float32 "
        "(or bf16, fp16, half, fp32, float, auto)",
        conv_dtype="int8",
    )
    assert error.field == "conv_dtype"
    with pytest.raises(
        TypeError,
        match=r"^config must be a mapping, a path to config\.json or its directory, or have "
        r"to_dict\(\), not int$",
    ):
        ssm_state(42)  # type: ignore[arg-type]


def test_the_view_and_the_version_arguments_are_refused_by_name() -> None:
    error = refused(
        SMALL_MAMBA2, "argument view: unknown view 'page'; use layer, model", view="page"
    )
    assert fields_of(error) == (None, None, "view")
    error = refused(
        SMALL_MAMBA2,
        "argument version: the metrale layout has no server release",
        layout="metrale",
        version="0.33.0",
    )
    assert fields_of(error) == (None, None, "version")


def test_a_plain_transformer_names_the_release_that_answered() -> None:
    plain = {"model_type": "llama", "num_hidden_layers": 1}
    assert ssm_state(plain, version="0.20.0").server_version == "0.20.0"
    assert ssm_state(plain, layout="sglang", version="0.5.10").server_version == "0.5.10"
    assert ssm_state(plain, layout="metrale").server_version is None


def test_vllm_refuses_an_architecture_its_registry_does_not_name_for_the_family() -> None:
    # vLLM serves mamba2 as Mamba2ForCausalLM only; MambaForCausalLM is Mamba-1's class
    # (vllm/model_executor/models/registry.py).
    error = refused(
        {**SMALL_MAMBA2, "architectures": ["MambaForCausalLM"]},
        "mamba2 config: field 'architectures': vLLM 0.33.0 has no model class "
        "'MambaForCausalLM' (its registry); it serves mamba2 as Mamba2ForCausalLM",
    )
    assert fields_of(error) == (None, "mamba2", "architectures")


def test_nested_fields_name_their_path() -> None:
    error = refused(
        {**SMALL_KIMI, "linear_attn_config": [1]},
        "kimi_linear config: field 'linear_attn_config': must be a mapping, got <list>",
    )
    assert error.field == "linear_attn_config"
    linear = {**SMALL_KIMI["linear_attn_config"], "head_dim": 0}
    error = refused(
        {**SMALL_KIMI, "linear_attn_config": linear},
        "kimi_linear config: field 'linear_attn_config.head_dim': must be at least 1, got 0",
    )
    assert fields_of(error) == (None, "kimi_linear", "linear_attn_config.head_dim")
    bad = {**SMALL_KIMI["linear_attn_config"], "kda_layers": [True, 3]}
    refused(
        {**SMALL_KIMI, "linear_attn_config": bad},
        "kimi_linear config: field 'linear_attn_config.kda_layers': entry True is not a layer "
        "number from 1 to 3",
    )
    upper = {**SMALL_KIMI["linear_attn_config"], "kda_layers": [1, 4]}
    refused(
        {**SMALL_KIMI, "linear_attn_config": upper},
        "kimi_linear config: field 'linear_attn_config.kda_layers': entry 4 is not a layer "
        "number from 1 to 3",
    )
    assert ssm_state(
        {
            **SMALL_KIMI,
            "linear_attn_config": {**SMALL_KIMI["linear_attn_config"], "kda_layers": [3, 1, 1]},
        }
    ).layer_indices == (0, 2)


def test_numbers_are_bounded() -> None:
    jet: dict[str, Any] = {
        "model_type": "jet_nemotron",
        "num_hidden_layers": 1,
        "layer_types": ["jet"],
        "efficient_attention_config": {
            "jet": {"num_heads": 2, "head_dim": 4, "expand_v": 2, "conv_size": 4}
        },
    }
    state = ssm_state(jet, layout="sglang")
    assert state.ssm_shape == (2, 8, 4)
    for value, problem in [
        (True, "must be a number, got True (bool)"),
        (0, "must be positive and at most 2**63 - 1, got 0"),
        (2**63, "must be positive and at most 2**63 - 1, got 9223372036854775808"),
    ]:
        bad = {**jet["efficient_attention_config"]["jet"], "expand_v": value}
        refused(
            {**jet, "efficient_attention_config": {"jet": bad}},
            f"jet_nemotron config: field 'efficient_attention_config.jet.expand_v': {problem}",
            layout="sglang",
        )
    refused(
        {
            **jet,
            "efficient_attention_config": {
                "jet": {
                    k: v
                    for k, v in jet["efficient_attention_config"]["jet"].items()
                    if k != "expand_v"
                }
            },
        },
        "jet_nemotron config: field 'efficient_attention_config.jet.expand_v': missing",
        layout="sglang",
    )
    wide = {**jet["efficient_attention_config"]["jet"], "expand_v": 2**40}
    wide_state = ssm_state({**jet, "efficient_attention_config": {"jet": wide}}, layout="metrale")
    assert wide_state.ssm_shape[1] == 4 * 2**40
    with pytest.raises(OverflowError):  # issue 28: bytes past 64 bits are refused
        ssm_state(
            {
                **jet,
                "efficient_attention_config": {
                    "jet": {**jet["efficient_attention_config"]["jet"], "expand_v": 2**63 - 1}
                },
            },
            layout="metrale",
        )


def test_optional_and_listed_fields_are_named_in_their_refusal() -> None:
    refused(
        {**SMALL_MAMBA2, "intermediate_size": "x"},
        "mamba2 config: field 'intermediate_size': must be an integer, got 'x' (str)",
    )
    granite = {
        "model_type": "granitemoehybrid",
        "num_hidden_layers": 1,
        "layer_types": ["ssm"],
    }
    refused(
        granite,
        "granitemoehybrid config: field 'layer_types': entry 0 is 'ssm'; expected attention, "
        "full_attention, linear_attention, mamba",
    )


def test_refusals_of_nested_fields_and_kda_dtypes_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**SMALL_KIMI, "linear_attn_config": {"kda_layers": [1]}}))
    error = refused(
        path,
        f"{str(path)!a}: kimi_linear config: field 'linear_attn_config.full_attn_layers': missing",
    )
    assert error.path == str(path)
    path.write_text(json.dumps(SMALL_KIMI))
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(path, ssm_dtype="fp16")
    assert caught.value.path == str(path)


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


MODEL_TYPES = st.sampled_from([*FAMILIES, "llama", "bamba", ""]) | JSON_LEAVES


@settings(max_examples=75, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.dictionaries(st.sampled_from(FIELD_NAMES), JSON_VALUES, max_size=10),
    MODEL_TYPES,
    st.integers(min_value=1, max_value=16),
    st.sampled_from(LAYOUTS),
)
def test_fuzz_arbitrary_configs(
    fields: dict[str, Any], model_type: Any, tp: int, layout: str
) -> None:
    try:
        state = ssm_state(fields | {"model_type": model_type}, tp_size=tp, layout=layout)
    except ModelConfigError as error:
        assert_one_line(error)
    else:
        assert_consistent(state)


WRITTEN_NAMES = sorted(path.name for path in WRITTEN.glob("*.json"))


WRITTEN_FIELDS = sorted(
    {key for name in WRITTEN_NAMES for key in written(name)}
    | {key for name in WRITTEN_NAMES for key in written(name).get("text_config", {})}
    | {"mixer_types", "lightning_nh", "lightning_nkv", "lightning_head_dim", "no_kda_lora"}
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from([*WRITTEN_NAMES, "minicpm-sala.json"]),
    st.dictionaries(st.sampled_from(WRITTEN_FIELDS), JSON_VALUES, min_size=1, max_size=3),
    st.booleans(),
    st.integers(min_value=1, max_value=16),
    st.sampled_from(LAYOUTS),
    st.integers(min_value=0, max_value=4),
)
def test_fuzz_fields_of_the_new_families(
    name: str, changes: dict[str, Any], inner: bool, tp: int, layout: str, spec: int
) -> None:
    # Hostile values in the fields these families read: a typed one-line refusal or a
    # consistent state, never another exception.
    path = WRITTEN / name if name in WRITTEN_NAMES else CONFIGS / name
    config: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if inner and isinstance(config.get("text_config"), dict):
        config["text_config"] = config["text_config"] | changes
    else:
        config |= changes
    try:
        state = ssm_state(config, tp_size=tp, layout=layout, speculative_tokens=spec)
    except ModelConfigError as error:
        assert_one_line(error)
    else:
        assert_consistent(state)


def test_a_refused_argument_is_worded_with_the_callers_name_and_a_config_refusal_as_it_is() -> None:
    from decode_ring.models.errors import refuse_argument

    argument = refuse_argument("tp_size", "must be at least 1, got 0")
    assert str(argument) == "argument tp_size: must be at least 1, got 0"
    flags = {"tp_size": "--tp-size", "config": "--config"}
    assert argument.worded(flags) == "argument --tp-size: must be at least 1, got 0"
    # An argument the caller has no name for keeps its own.
    assert argument.worded({"config": "--config"}) == "argument tp_size: must be at least 1, got 0"
    with pytest.raises(ModelConfigError) as caught:
        ssm_state({"model_type": "mamba", "state_size": "x"})
    # Not an argument's refusal: the message whatever the names given.
    assert caught.value.worded(flags) == str(caught.value)
    assert caught.value.worded({caught.value.field or "": "--config"}) == str(caught.value)
    assert str(caught.value).startswith("mamba config: field ")


def test_a_count_past_64_bits_without_a_subject_names_the_field_alone() -> None:
    from decode_ring.models.errors import check_within_64_bits

    check_within_64_bits({"kv_tokens": 2**64 - 1})
    with pytest.raises(OverflowError) as caught:
        check_within_64_bits({"kv_tokens": 2**64})
    assert str(caught.value) == (
        "kv_tokens would be 18446744073709551616, beyond the 18446744073709551615 a 64-bit "
        "count holds"
    )
