"""What mutation testing found unchecked in ``models``: whole refusal messages
with the field and file they name, the edges of what is accepted, and exact
integer shapes. Small hand-made configs; expected values written out."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from decode_ring.models import ModelConfigError, TensorParallelSplitError, ssm_state

MAMBA2: dict[str, Any] = {
    "model_type": "mamba2",
    "num_heads": 8,
    "head_dim": 16,
    "expand": 2,
    "hidden_size": 64,
    "n_groups": 1,
    "state_size": 16,
    "conv_kernel": 4,
    "num_hidden_layers": 2,
}
JAMBA: dict[str, Any] = {
    "model_type": "jamba",
    "attn_layer_period": 2,
    "attn_layer_offset": 0,
    "mamba_expand": 2,
    "hidden_size": 3,
    "mamba_d_state": 16,
    "mamba_d_conv": 4,
    "num_hidden_layers": 4,
    "num_attention_heads": 1,
}
NEMOTRON: dict[str, Any] = {
    "model_type": "nemotron_h",
    "mamba_num_heads": 3,
    "mamba_head_dim": 16,
    "n_groups": 1,
    "ssm_state_size": 16,
    "conv_kernel": 4,
    "hybrid_override_pattern": "M*M",
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
}
FALCON: dict[str, Any] = {
    "model_type": "falcon_h1",
    "mamba_d_ssm": None,
    "mamba_expand": 2,
    "hidden_size": 64,
    "mamba_n_heads": 8,
    "mamba_d_head": "auto",
    "mamba_n_groups": 3,
    "mamba_d_state": 16,
    "mamba_d_conv": 4,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
}
ZAMBA2: dict[str, Any] = {
    "model_type": "zamba2",
    # Issue 27: transformers' Zamba2Config holds layers_block_type to num_hidden_layers (54 by
    # default; validate_layer_type).
    "num_hidden_layers": 2,
    "mamba_expand": 2,
    "hidden_size": 64,
    "n_mamba_heads": 8,
    "mamba_ngroups": 3,
    "mamba_d_state": 16,
    "mamba_d_conv": 4,
    "layers_block_type": ["mamba", "hybrid"],
    "num_attention_heads": 4,
}
QWEN: dict[str, Any] = {
    "model_type": "qwen3_next",
    "linear_num_key_heads": 2,
    "linear_num_value_heads": 4,
    "linear_key_head_dim": 8,
    "linear_value_head_dim": 8,
    "linear_conv_kernel_dim": 4,
    "num_hidden_layers": 4,
    "full_attention_interval": 4,
    "num_attention_heads": 4,
    "hidden_size": 64,
}

# vLLM's rules for the SSM state's dtype, with their citations.
FOLLOWS_CONV = (
    "as conv state (vLLM: mamba_ssm_cache_dtype auto, "
    "vllm/model_executor/layers/mamba/mamba_utils.py:98-111)"
)


def refused(config: Any, message: str, **kwargs: Any) -> ModelConfigError:
    with pytest.raises(ModelConfigError, match=f"^{re.escape(message)}$") as caught:
        ssm_state(config, **kwargs)
    return caught.value


def fields_of(error: ModelConfigError) -> tuple[str | None, str | None, str | None]:
    return error.path, error.family, error.field


# --- how values are shown -----------------------------------------------------


def test_integers_are_shown_in_full_up_to_128_bits() -> None:
    for value, shown in [
        (-(2**128 - 1), f"-{2**128 - 1}"),
        (-(2**128), "<129-bit integer>"),
    ]:
        refused(
            {**MAMBA2, "conv_kernel": value},
            f"mamba2 config: field 'conv_kernel': must be at least 1, got {shown}",
        )


def test_strings_are_shown_up_to_64_characters() -> None:
    refused(
        {**MAMBA2, "state_size": "a" * 64},
        f"mamba2 config: field 'state_size': must be an integer, got '{'a' * 64}' (str)",
    )
    refused(
        {**MAMBA2, "state_size": "b" * 65},
        f"mamba2 config: field 'state_size': must be an integer, got '{'b' * 64}'... "
        "(65 characters) (str)",
    )


def test_other_values_are_shown_by_their_type() -> None:
    refused(
        {**MAMBA2, "state_size": [1]},
        "mamba2 config: field 'state_size': must be an integer, got <list> (list)",
    )
    refused(
        {**MAMBA2, "state_size": {"a": 1}},
        "mamba2 config: field 'state_size': must be an integer, got <dict> (dict)",
    )


# --- layer lists and patterns -------------------------------------------------


def test_a_layer_list_of_100000_entries_is_read_and_one_more_is_not() -> None:
    config = {**ZAMBA2, "layers_block_type": ["mamba"] * 100_000, "num_hidden_layers": 100_000}
    assert ssm_state(config).ssm_layers == 100_000
    error = refused(
        {**ZAMBA2, "layers_block_type": ["mamba"] * 100_001, "num_hidden_layers": 100_001},
        "zamba2 config: field 'layers_block_type': 100001 layers is implausible",
    )
    assert fields_of(error) == (None, "zamba2", "layers_block_type")


def test_a_bad_layer_entry_names_the_vocabulary_and_no_note() -> None:
    error = refused(
        {**ZAMBA2, "layers_block_type": ["mamba", "attention"]},
        # transformers 5 renames a legacy 'attention' to 'full_attention' (issue 27).
        "zamba2 config: field 'layers_block_type': entry 1 is 'full_attention'; "
        "expected hybrid, linear_attention, mamba",
    )
    assert fields_of(error) == (None, "zamba2", "layers_block_type")


def test_a_pattern_of_100000_layers_is_read_and_one_more_is_not() -> None:
    assert ssm_state({**NEMOTRON, "hybrid_override_pattern": "M" * 100_000}).ssm_layers == 100_000
    # Issue 27: the classes read the pattern into layers_block_type, which is refused.
    error = refused(
        {**NEMOTRON, "hybrid_override_pattern": "M" * 100_001},
        "nemotron_h config: field 'layers_block_type': 100001 layers is implausible",
    )
    assert error.field == "layers_block_type"


def test_a_pattern_that_is_not_a_string() -> None:
    error = refused(
        {**NEMOTRON, "hybrid_override_pattern": ["M"]},
        "nemotron_h config: field 'hybrid_override_pattern': must be a string, got <list>",
    )
    assert error.field == "hybrid_override_pattern"


def test_qwen3_next_layer_types_must_cover_every_layer() -> None:
    refused(
        {**QWEN, "layer_types": ["linear_attention"] * 3},
        "qwen3_next config: field 'layer_types': has 3 entries but num_hidden_layers is 4",
    )


def test_qwen3_next_on_sglang_needs_the_interval() -> None:
    config = {key: value for key, value in QWEN.items() if key != "full_attention_interval"}
    refused(
        config,
        "qwen3_next config: field 'full_attention_interval': missing; SGLang 0.5.23 counts "
        "linear layers by it alone (configs/qwen3_next.py:259-268)",
        layout="sglang",
    )


# --- families -----------------------------------------------------------------


def test_mamba2_intermediate_size_must_agree() -> None:
    error = refused(
        {**MAMBA2, "intermediate_size": 100},
        "mamba2 config: field 'intermediate_size': is 100 but expand*hidden_size is 128",
    )
    assert error.field == "intermediate_size"


def test_jamba_takes_offset_zero_and_names_mamba_expand_in_a_split() -> None:
    state = ssm_state(JAMBA)
    assert state.layer_indices == (1, 3)
    error = refused(
        JAMBA,
        "jamba config: field 'mamba_expand': tp_size 4 does not divide 6 "
        "(mamba_expand * hidden_size); the servers shard it evenly",
        tp_size=4,
    )
    assert isinstance(error, TensorParallelSplitError)
    assert error.field == "mamba_expand"


def test_nemotron_split_errors_name_heads_and_groups() -> None:
    error = refused(
        NEMOTRON,
        "nemotron_h config: field 'mamba_num_heads': tp_size 2 does not divide 3; "
        "the servers shard it evenly",
        tp_size=2,
    )
    assert error.field == "mamba_num_heads"
    error = refused(
        {**NEMOTRON, "mamba_num_heads": 4, "n_groups": 3},
        "nemotron_h config: field 'n_groups': tp_size 2 does not divide 3 groups, and only "
        "1 group is replicated",
        tp_size=2,
    )
    assert error.field == "n_groups"


def test_falcon_auto_head_dim_is_an_integer() -> None:
    state = ssm_state(FALCON)
    assert state.ssm_shape == (8, 16, 16)
    assert [type(size) for size in state.ssm_shape] == [int, int, int]
    assert json.dumps(state.ssm_shape) == "[8, 16, 16]"
    error = refused(
        FALCON,
        "falcon_h1 config: field 'mamba_n_groups': tp_size 2 does not divide 3 groups, and "
        "only 1 group is replicated",
        tp_size=2,
    )
    assert error.field == "mamba_n_groups"


def test_zamba2_heads_that_do_not_divide() -> None:
    error = refused(
        {**ZAMBA2, "n_mamba_heads": 5},
        "zamba2 config: field 'n_mamba_heads': 5 heads do not divide mamba_expand*hidden_size",
    )
    assert error.field == "n_mamba_heads"
    error = refused(
        ZAMBA2,
        "zamba2 config: field 'mamba_ngroups': tp_size 2 does not divide 3 groups, and only "
        "1 group is replicated",
        tp_size=2,
    )
    assert error.field == "mamba_ngroups"


def test_zamba2_head_dim_is_compared_exactly() -> None:
    # 2**55 + 1 is no float: a float division would round it and refuse the config.
    head_dim = 2**55 + 1
    config = {**ZAMBA2, "mamba_expand": 1, "hidden_size": 3 * head_dim, "n_mamba_heads": 3}
    config["mamba_headdim"] = head_dim
    config["mamba_ngroups"] = 1
    state = ssm_state(config, layout="metrale")
    assert state.ssm_shape == (3, head_dim, 16)


# --- files --------------------------------------------------------------------


class BytesPath:
    def __fspath__(self) -> bytes:
        return b"config.json"


def test_a_bytes_path_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"^a config path must be str, not bytes$"):
        ssm_state(BytesPath())  # type: ignore[arg-type]


def test_file_errors_carry_the_path(tmp_path: Path) -> None:
    error = refused(tmp_path, f"{str(tmp_path)!a}: directory has no config.json")
    assert error.path == str(tmp_path)
    missing = tmp_path / "missing.json"
    error = refused(missing, f"cannot read {str(missing)!a}: No such file or directory")
    assert error.path == str(missing)
    malformed = tmp_path / "malformed.json"
    malformed.write_text("{")
    error = refused(
        malformed,
        f"{str(malformed)!a}: malformed JSON: Expecting property name "
        "enclosed in double quotes at line 1 column 2",
    )
    assert error.path == str(malformed)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    error = refused(deep, f"{str(deep)!a}: malformed JSON: nested too deep")
    assert error.path == str(deep)
    array = tmp_path / "array.json"
    array.write_text("[]")
    error = refused(array, f"{str(array)!a}: JSON is list, not an object")
    assert error.path == str(array)


def test_a_config_is_read_as_utf8(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(
        json.dumps(
            {"model_type": "llama", "num_hidden_layers": 2, "é": 1}, ensure_ascii=False
        ).encode("utf-8")
    )
    assert ssm_state(path).model_type == "llama"


# --- configs no family reads --------------------------------------------------


def test_unknown_configs_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text("{}")
    error = refused(path, f"{str(path)!a}: field 'model_type': missing")
    assert (error.path, error.field) == (str(path), "model_type")
    error = refused({"model_type": 1}, "field 'model_type': must be a string, got 1")
    assert (error.path, error.field) == (None, "model_type")


FAMILY_LIST = (
    "supported families: alice_ai, bailing_hybrid, falcon_h1, falcon_mamba, gigachat3_5, "
    "glm5_next, granitemoehybrid, inkling, interns2_mobius, jamba, jet_nemotron, kimi_linear, "
    "lfm2, lfm2_moe, lfm2_vl, mamba, mamba2, minicpm_sala, minicpmv4_6, nemotron_h, "
    "nemotron_h_puzzle, olmo_hybrid, qwen3_5, qwen3_5_moe, qwen3_next, qwen4_exp, zamba2, zaya"
)


def test_unknown_ssm_configs_list_what_looks_ssm(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(
        json.dumps({"model_type": "x", "num_hidden_layers": 1, "layer_types": ["mamba"]})
    )
    error = refused(
        path,
        f"{str(path)!a}: field 'model_type': unknown model_type 'x' has SSM fields "
        f"('layer_types'); {FAMILY_LIST}",
    )
    assert (error.path, error.field) == (str(path), "model_type")
    refused(
        {
            "model_type": "x",
            "num_hidden_layers": 1,
            "a_mamba": 1,
            "b_ssm": 1,
            "conv_kernel": 1,
            "linear_x": 1,
            "state_size": 1,
        },
        "field 'model_type': unknown model_type 'x' has SSM fields ('a_mamba', 'b_ssm', "
        f"'conv_kernel', 'linear_x'); {FAMILY_LIST}",
    )
    refused(
        {"model_type": "x", "text_config": {"mamba_x": 1, "num_hidden_layers": 1}},
        f"field 'model_type': unknown model_type 'x' has SSM fields ('mamba_x'); {FAMILY_LIST}",
    )
    refused(
        {"model_type": "x"},
        "field 'model_type': unknown model_type 'x' is not a plain transformer (no integer "
        f"num_hidden_layers); {FAMILY_LIST}",
    )
    refused(
        {"model_type": "x", "num_hidden_layers": None, "text_config": {"num_hidden_layers": "2"}},
        "field 'model_type': unknown model_type 'x' is not a plain transformer (no integer "
        f"num_hidden_layers); {FAMILY_LIST}",
    )


def test_plain_transformers_take_their_layers_from_text_config(tmp_path: Path) -> None:
    assert ssm_state({"model_type": "x", "text_config": {"num_hidden_layers": 2}}).ssm_layers == 0
    assert ssm_state({"model_type": "x", "num_hidden_layers": 0}).ssm_layers == 0
    refused(
        {"model_type": "x", "num_hidden_layers": "2", "text_config": {"num_hidden_layers": 2}},
        "field 'model_type': unknown model_type 'x' is not a plain transformer (no integer "
        f"num_hidden_layers); {FAMILY_LIST}",
    )


def test_a_plain_transformer_state(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(
        json.dumps({"model_type": "llama", "num_hidden_layers": 2, "torch_dtype": "float16"})
    )
    state = ssm_state(path, tp_size=2, layout="sglang", speculative_tokens=3, ssm_dtype="fp16")
    assert state.as_dict() == {
        "family": "transformer",
        "model_type": "llama",
        "groups": [],
        "attention": None,
        "ssm_layers": 0,
        "layer_indices": [],
        "conv_shape": [],
        "ssm_shape": [],
        "conv_dtype": "bfloat16",
        "ssm_dtype": "float16",
        "conv_dtype_rule": "SGLang default bfloat16 (sglang/srt/configs/mamba_utils.py:68)",
        "ssm_dtype_rule": "override --ssm-dtype",
        "conv_bytes": 0,
        "ssm_bytes": 0,
        "per_layer_bytes": 0,
        "per_sequence_bytes": 0,
        "tp_size": 2,
        "layout": "sglang",
        "speculative_tokens": 3,
        "source": str(path),
    }
    state = ssm_state({"model_type": "llama", "num_hidden_layers": 2}, conv_dtype="fp32")
    assert (state.conv_dtype, state.conv_dtype_rule) == ("float32", "override --conv-dtype")
    assert (state.ssm_dtype, state.ssm_dtype_rule) == (
        "float32",
        FOLLOWS_CONV,
    )


def test_a_plain_transformer_with_a_bad_dtype_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "llama", "num_hidden_layers": 2, "dtype": "int8"}))
    error = refused(path, f"{str(path)!a}: transformer config: field 'dtype': unknown dtype 'int8'")
    assert fields_of(error) == (str(path), "transformer", "dtype")


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
    assert ssm_state({**MAMBA2, "num_hidden_layers": 0}).ssm_layers == 0
    assert ssm_state({**MAMBA2, "num_hidden_layers": 100_000}).ssm_layers == 100_000
    error = refused(
        {**MAMBA2, "num_hidden_layers": 100_001},
        "mamba2 config: field 'num_hidden_layers': 100001 layers is implausible",
    )
    assert error.field == "num_hidden_layers"


def test_fields_past_int64_are_refused() -> None:
    refused(
        {**MAMBA2, "state_size": 2**63},
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


def test_float64_models_are_taken_as_bfloat16() -> None:
    state = ssm_state({**MAMBA2, "torch_dtype": "float64"})
    assert (state.conv_dtype, state.conv_dtype_rule) == (
        "bfloat16",
        "config torch_dtype float64, as bfloat16 (vLLM: model dtype)",
    )


def test_qwen3_next_value_heads_must_split() -> None:
    error = refused(
        {**QWEN, "linear_num_value_heads": 3},
        "qwen3_next config: field 'linear_num_value_heads': tp_size 2 does not divide 3; "
        "the servers shard it evenly",
        tp_size=2,
    )
    assert isinstance(error, TensorParallelSplitError)
    assert error.field == "linear_num_value_heads"


def test_a_group_split_is_a_tensor_parallel_error() -> None:
    with pytest.raises(TensorParallelSplitError):
        ssm_state({**NEMOTRON, "mamba_num_heads": 4, "n_groups": 3}, tp_size=2)


def test_a_wrapper_without_its_own_model_type_is_named_by_the_family() -> None:
    assert ssm_state({"text_config": MAMBA2}).model_type == "mamba2"
    assert ssm_state({"model_type": "wrapper", "text_config": MAMBA2}).model_type == "wrapper"


# --- the package's new pieces: written-out values for what mutation testing changes ----------

KIMI: dict[str, Any] = {
    "model_type": "kimi_linear",
    "num_hidden_layers": 3,
    "num_attention_heads": 4,
    "kv_lora_rank": 8,
    "qk_rope_head_dim": 2,
    # vLLM builds Kimi's attention as NoPE MLA and asserts these (issue 27,
    # vllm/models/kimi_k3/nvidia/model.py:735-745).
    "qk_nope_head_dim": 8,
    "v_head_dim": 8,
    "mla_use_nope": True,
    "linear_attn_config": {
        "kda_layers": [1, 3],
        "full_attn_layers": [2],
        "num_heads": 2,
        "head_dim": 4,
        "short_conv_kernel_size": 3,
    },
    "dtype": "float16",
}


def test_a_kda_state_as_a_dict_whole() -> None:
    state = ssm_state(KIMI, tp_size=2, speculative_tokens=1)
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
    }


def test_gqa_attention_defaults() -> None:
    jamba = {**JAMBA, "num_attention_heads": 1, "hidden_size": 8, "mamba_expand": 1}
    attention = ssm_state(jamba).attention
    assert attention is not None
    # No num_key_value_heads: JambaConfig's default, 8 (issue 27; it was one per head); no
    # head_dim: hidden_size // heads.
    assert (attention.layer_indices, attention.num_key_value_heads) == ((0, 2), 8)
    assert (attention.head_dim, attention.v_head_dim, attention.mla) == (8, 8, False)
    assert (attention.kv_lora_rank, attention.qk_rope_head_dim) == (None, None)
    assert attention.model_dtype == "bfloat16"
    zero = ssm_state({**NEMOTRON, "head_dim": 0, "hidden_size": 64}).attention
    assert zero is not None and zero.head_dim == 16
    plain = ssm_state(
        {
            "model_type": "llama",
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "hidden_size": 32,
            "num_key_value_heads": 2,
        }
    )
    assert plain.attention is not None
    assert (plain.attention.layer_indices, plain.attention.head_dim) == ((0, 1), 8)
    assert ssm_state({"model_type": "llama", "num_hidden_layers": 2}).attention is None
    assert (
        ssm_state(
            {"model_type": "llama", "num_hidden_layers": 2, "num_attention_heads": 4}
        ).attention
        is None
    )
    headed = {
        "model_type": "llama",
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "head_dim": 8,
    }
    assert ssm_state(headed).attention is not None


def test_kv_heads_that_divide_or_are_divided_split() -> None:
    for kv, tp in [(2, 2), (2, 4), (4, 2)]:
        assert (
            ssm_state(
                {**NEMOTRON, "mamba_num_heads": 4, "num_key_value_heads": kv}, tp_size=tp
            ).tp_size
            == tp
        )
    error = refused(
        {**NEMOTRON, "mamba_num_heads": 4, "num_attention_heads": 8, "num_key_value_heads": 6},
        "nemotron_h config: field 'num_key_value_heads': tp_size 4 neither divides 6 KV heads "
        "nor is a multiple of them; the servers shard or replicate them evenly",
        tp_size=4,
    )
    assert isinstance(error, TensorParallelSplitError)
    assert error.field == "num_key_value_heads"


def test_the_vllm_hooks_read_their_field() -> None:
    qwen = {**QWEN, "model_type": "qwen3_5_text"}
    follows = (
        "as conv state (vLLM: mamba_ssm_cache_dtype auto, "
        "vllm/model_executor/layers/mamba/mamba_utils.py:98-111)"
    )
    for value in (None, "auto"):
        state = ssm_state({**qwen, "mamba_ssm_dtype": value})
        assert (state.ssm_dtype, state.ssm_dtype_rule) == ("bfloat16", follows)
    state = ssm_state({**qwen, "mamba_ssm_dtype": "float16"})
    assert (state.ssm_dtype, state.ssm_dtype_rule) == (
        "float16",
        "config mamba_ssm_dtype (vLLM Qwen3.5, vllm/model_executor/models/config.py:953-977)",
    )
    refused(
        {**qwen, "mamba_ssm_dtype": "fp8"},
        "qwen3_5 config: field 'mamba_ssm_dtype': unknown dtype 'fp8'",
    )
    refused(
        {**NEMOTRON, "mamba_ssm_cache_dtype": None},
        "nemotron_h config: field 'mamba_ssm_cache_dtype': must be a string, got None (NoneType) "
        "(NemotronHConfig (transformers 5.20.2, "
        "transformers/models/nemotron_h/configuration_nemotron_h.py:25))",
    )


def test_linear_attention_dtype_rules() -> None:
    lightning = {
        "model_type": "bailing_hybrid",
        "num_hidden_layers": 2,
        "layer_group_size": 2,
        "num_attention_heads": 2,
        "head_dim": 4,
        # transformers 5.20's BailingHybridConfig makes head_dim qk_rope_head_dim (issue 27).
        "qk_rope_head_dim": 4,
        # vLLM picks lightning by the architecture (bailing_moe_linear.py).
        "architectures": ["BailingMoeV2_5ForCausalLM"],
    }
    state = ssm_state(lightning)
    (tensor,) = state.groups[0].tensors
    assert (tensor.dtype, tensor.dtype_rule) == (
        "bfloat16",
        "no dtype in config: bfloat16 (vLLM: weights' dtype, float32 downcast); "
        "linear_attention_state_dtype (vllm/model_executor/layers/mamba/mamba_utils.py:55-62)",
    )
    (tensor,) = ssm_state(lightning, conv_dtype="fp32").groups[0].tensors
    assert (tensor.dtype, tensor.dtype_rule) == (
        "float32",
        "override --conv-dtype (vLLM: --mamba-cache-dtype)",
    )
    conv, state_tensor = ssm_state(lightning, layout="sglang", ssm_dtype="fp16").groups[0].tensors
    assert (state_tensor.dtype, state_tensor.dtype_rule) == ("float16", "override --ssm-dtype")
    assert (conv.shape, conv.bytes) == ((0, 0), 0)
    # SGLang's head size falls back to hidden_size // num_attention_heads for a null head_dim.
    fallback = lightning | {"hidden_size": 6, "head_dim": None}
    assert ssm_state(fallback, layout="sglang").groups[0].tensors[1].shape == (2, 3, 3)
    assert ssm_state(lightning).per_layer_bytes == 2 * 4 * 4 * 2
    assert ssm_state(lightning).layer_indices == (0,)


def test_kda_override_rules() -> None:
    # Kimi-Linear's layer keeps float32 whatever the flag; the model-level view reads it.
    state = ssm_state(KIMI, ssm_dtype="bf16", view="model")
    assert (state.ssm_dtype, state.ssm_dtype_rule) == ("bfloat16", "override --ssm-dtype")
    assert ssm_state(KIMI, ssm_dtype="bf16").ssm_dtype == "float32"
    error = refused(
        KIMI,
        "argument ssm_dtype: vLLM 0.33.0 keeps a KDA recurrent state only in float32 or "
        "bfloat16 (vllm/model_executor/layers/mamba/mamba_utils.py:143-149), not float16",
        ssm_dtype="half",
    )
    assert fields_of(error) == (None, "kimi_linear", "ssm_dtype")
    assert ssm_state(KIMI, layout="metrale").ssm_dtype_rule == "metrale: float32"


def test_nested_fields_name_their_path() -> None:
    error = refused(
        {**KIMI, "linear_attn_config": [1]},
        "kimi_linear config: field 'linear_attn_config': must be a mapping, got <list>",
    )
    assert error.field == "linear_attn_config"
    linear = {**KIMI["linear_attn_config"], "head_dim": 0}
    error = refused(
        {**KIMI, "linear_attn_config": linear},
        "kimi_linear config: field 'linear_attn_config.head_dim': must be at least 1, got 0",
    )
    assert fields_of(error) == (None, "kimi_linear", "linear_attn_config.head_dim")
    bad = {**KIMI["linear_attn_config"], "kda_layers": [True, 3]}
    refused(
        {**KIMI, "linear_attn_config": bad},
        "kimi_linear config: field 'linear_attn_config.kda_layers': entry True is not a layer "
        "number from 1 to 3",
    )
    upper = {**KIMI["linear_attn_config"], "kda_layers": [1, 4]}
    refused(
        {**KIMI, "linear_attn_config": upper},
        "kimi_linear config: field 'linear_attn_config.kda_layers': entry 4 is not a layer "
        "number from 1 to 3",
    )
    assert ssm_state(
        {**KIMI, "linear_attn_config": {**KIMI["linear_attn_config"], "kda_layers": [3, 1, 1]}}
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
    assert ssm_state(
        {
            **jet,
            "efficient_attention_config": {
                "jet": {**jet["efficient_attention_config"]["jet"], "expand_v": 2**63 - 1}
            },
        },
        layout="metrale",
    ).ssm_shape[1] == 4 * (2**63 - 1)


def test_wrappers_and_removed_families() -> None:
    assert ssm_state({"model_type": "w", "text_config": 3, "llm_config": MAMBA2}).family == "mamba2"
    error = refused(
        {"model_type": "w", "llm_config": {"model_type": "plamo2"}},
        "field 'model_type': vLLM removed Plamo2 in version 0.26.0; SGLang 0.5.23 has no Plamo2 "
        "('plamo2': vllm/model_executor/models/registry.py:841-895)",
    )
    assert fields_of(error) == (None, "plamo2", "model_type")
    lfm2 = {
        "model_type": "lfm2",
        "num_hidden_layers": 1,
        "layer_types": ["conv"],
        "hidden_size": 4,
        "conv_L_cache": 2,
    }
    assert (
        ssm_state(
            {"model_type": "lfm2_vl", "text_config": 1, "llm_config": lfm2}, layout="sglang"
        ).family
        == "lfm2_vl"
    )
    assert (
        ssm_state({"model_type": "lfm2_vl", "text_config": lfm2}, layout="sglang").ssm_shape == ()
    )


def test_a_render_of_a_model_that_mixes_kinds(tmp_path: Path) -> None:
    import dataclasses

    from decode_ring.cli.render import render
    from decode_ring.reports import StateReport

    mamba = ssm_state(MAMBA2)
    kda = ssm_state(KIMI)
    mixed = dataclasses.replace(
        mamba, groups=(mamba.groups[0], kda.groups[0]), per_layer_bytes=None
    )
    lines = render(StateReport(mixed)).lines
    assert "  mamba2 layers                    2  0-1" in lines
    assert "  kda layers                       2  0,2" in lines
    assert any(line.startswith("  kda recurrent state    (2, 4, 4) float32 (") for line in lines)
    assert "  per layer                        -" in lines


def test_zamba2_shared_attention_reads_a_doubled_hidden_state(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text((Path(__file__).parent / "configs" / "zamba2-2.7b.json").read_text())
    state = ssm_state(path)
    assert state.attention is not None
    # Hybrid layers hold the shared attention: 32 heads of 2 x 2560 / 32 = 160.
    assert state.attention.layer_indices == (6, 12, 18, 24, 30, 36, 42, 47, 51)
    assert (state.attention.head_dim, state.attention.num_key_value_heads) == (160, 32)
    given = {**json.loads(path.read_text()), "attention_head_dim": 96}
    assert ssm_state(given).attention.head_dim == 96  # type: ignore[union-attr]
    plain = {**json.loads(path.read_text()), "layers_block_type": ["mamba"] * 54}
    assert ssm_state(plain).attention is None
    # The Mamba side splits over 4 ranks; 6 shared-attention heads do not.
    error = refused(
        {**ZAMBA2, "n_mamba_heads": 4, "mamba_ngroups": 1, "num_attention_heads": 6},
        "zamba2 config: field 'num_attention_heads': tp_size 4 does not divide 6; the servers "
        "shard attention heads evenly (vllm/config/model.py:1557-1564)",
        tp_size=4,
    )
    assert error.family == "zamba2"


LIGHTNING: dict[str, Any] = {
    "model_type": "bailing_hybrid",
    "num_hidden_layers": 2,
    "layer_group_size": 2,
    "num_attention_heads": 2,
    "head_dim": 4,
}


def test_the_new_kinds_name_their_field_in_a_split() -> None:
    error = refused(
        LIGHTNING,
        "bailing_hybrid config: field 'num_attention_heads': tp_size 3 does not divide 2; the "
        "servers shard it evenly",
        tp_size=3,
    )
    assert fields_of(error) == (None, "bailing_hybrid", "num_attention_heads")
    lfm2 = {
        "model_type": "lfm2",
        "num_hidden_layers": 1,
        "layer_types": ["conv"],
        "hidden_size": 8,
        "conv_dim": 9,
        "conv_L_cache": 3,
    }
    refused(
        lfm2,
        "lfm2 config: field 'conv_dim': tp_size 2 does not divide 9; the servers shard it evenly",
        tp_size=2,
    )
    refused(
        {**lfm2, "hidden_size": 5},
        "lfm2 config: field 'hidden_size': tp_size 2 does not divide 5; the servers shard it "
        "evenly",
        tp_size=2,
        layout="sglang",
    )
    moe = {**lfm2, "model_type": "lfm2_moe", "hidden_size": 5}
    refused(
        moe,
        "lfm2_moe config: field 'hidden_size': tp_size 2 does not divide 5; the servers shard it "
        "evenly",
        tp_size=2,
    )
    jet = {
        "model_type": "jet_nemotron",
        "num_hidden_layers": 1,
        "layer_types": ["jet"],
        "efficient_attention_config": {
            "jet": {"num_heads": 3, "head_dim": 4, "expand_v": 0.5, "conv_size": 4}
        },
    }
    # A fractional expand_v: int(4 x 0.5) = 2.
    assert ssm_state(jet, layout="sglang").ssm_shape == (3, 2, 4)
    error = refused(
        jet,
        "jet_nemotron config: field 'efficient_attention_config.jet.num_heads': tp_size 2 does "
        "not divide 3; the servers shard it evenly",
        tp_size=2,
        layout="sglang",
    )
    assert error.field == "efficient_attention_config.jet.num_heads"


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


def test_a_removed_family_in_a_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "bamba", "num_hidden_layers": 2}))
    error = refused(
        path,
        f"{str(path)!a}: field 'model_type': vLLM removed Bamba in version 0.23.0; SGLang 0.5.23 "
        "has no Bamba ('bamba': vllm/model_executor/models/registry.py:841-895)",
    )
    assert error.path == str(path)


@pytest.mark.parametrize(
    ("name", "layers", "heads", "kv_heads", "head_dim"),
    [
        ("granite-4.0-h-tiny.json", (5, 15, 25, 35), 12, 4, 1536 // 12),
        ("jamba-mini-1.5.json", (4, 12, 20, 28), 32, 8, 4096 // 32),
        ("nemotron-nano-9b-v2.json", (14, 21, 30, 39), 40, 8, 128),
        ("falcon-h1-7b-instruct.json", tuple(range(44)), 12, 2, 128),
        ("qwen3-next-80b-a3b-instruct.json", tuple(range(3, 48, 4)), 16, 2, 256),
    ],
)
def test_the_attention_side_of_each_fixture(
    name: str, layers: tuple[int, ...], heads: int, kv_heads: int, head_dim: int
) -> None:
    attention = ssm_state(Path(__file__).parent / "configs" / name).attention
    assert attention is not None
    assert attention.layer_indices == layers
    assert (attention.num_attention_heads, attention.num_key_value_heads) == (heads, kv_heads)
    assert (attention.head_dim, attention.mla) == (head_dim, False)


def test_gqa_where_a_kda_or_lightning_model_has_no_mla() -> None:
    gqa_kimi = {k: v for k, v in KIMI.items() if k != "kv_lora_rank"} | {
        "num_key_value_heads": 2,
        "head_dim": 8,
    }
    # Issue 27: vLLM builds every Kimi attention layer as MLA and asserts kv_lora_rank
    # (vllm/models/kimi_k3/nvidia/model.py:735-745).
    refused(
        gqa_kimi,
        "kimi_linear config: field 'kv_lora_rank': missing; vLLM 0.33.0 builds Kimi's attention "
        "layers as MLA and asserts it (vllm/models/kimi_k3/nvidia/model.py:735-745)",
    )
    # Bailing's classes default kv_lora_rank 512 and qk_rope_head_dim 64, and vLLM builds its
    # attention as MLA whatever (bailing_moe_linear.py:77-116): no GQA reading (issue 27).
    lightning = ssm_state({**LIGHTNING, "num_key_value_heads": 1}).attention
    assert lightning is not None
    assert (lightning.layer_indices, lightning.mla, lightning.head_dim) == ((1,), True, 576)
    mla = ssm_state({**LIGHTNING, "kv_lora_rank": 4, "qk_rope_head_dim": 2}).attention
    assert mla is not None and (mla.layer_indices, mla.mla, mla.head_dim) == ((1,), True, 6)


def test_bailing_kda_names_its_heads_and_keeps_integer_sizes() -> None:
    kda = {**LIGHTNING, "short_conv_kernel_size": 4, "no_kda_lora": True}
    error = refused(
        kda,
        "bailing_hybrid config: field 'num_attention_heads': tp_size 3 does not divide 2; the "
        "servers shard it evenly",
        tp_size=3,
    )
    assert error.field == "num_attention_heads"
    fallback = {k: v for k, v in LIGHTNING.items() if k != "head_dim"} | {"hidden_size": 6}
    shape = ssm_state(fallback).groups[0].tensors[0].shape
    assert [type(size) for size in shape] == [int, int, int]
    refused(
        {**LIGHTNING, "layer_group_size": [1, 0, 1]},
        "bailing_hybrid config: field 'layer_group_size': has 3 entries but num_hidden_layers is 2",
        layout="sglang",
    )


def test_mamba2_tensors_are_named_conv_and_ssm() -> None:
    state = ssm_state(MAMBA2)
    assert [tensor.name for tensor in state.groups[0].tensors] == ["conv", "ssm"]
    assert state.groups[0].kind == "mamba2"


def test_nemotron_descriptions_of_different_lengths() -> None:
    # Issue 27: the classes take the list over the pattern, whatever their lengths.
    longer = {**NEMOTRON, "layers_block_type": ["mamba", "attention", "mamba", "mlp"]}
    assert ssm_state(longer).layer_indices == (0, 2)
    assert ssm_state({**NEMOTRON, "layers_block_type": ["mamba", "attention"]}).ssm_layers == 1
    refused(
        {**NEMOTRON, "layers_block_type": ["mamba", "ssm"]},
        "nemotron_h config: field 'layers_block_type': entry 1 is 'ssm'; expected attention, "
        "full_attention, linear_attention, mamba, mlp, moe",
    )


def test_a_layer_type_that_the_interval_makes_linear() -> None:
    # Issue 27: vLLM reads the list, SGLang the interval.
    qwen = {**QWEN, "layer_types": ["full_attention"] * 3 + ["full_attention"]}
    assert ssm_state(qwen).ssm_layers == 0
    assert ssm_state(qwen, layout="sglang").layer_indices == (0, 1, 2)


def test_refusals_of_nested_fields_and_kda_dtypes_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**KIMI, "linear_attn_config": {"kda_layers": [1]}}))
    error = refused(
        path,
        f"{str(path)!a}: kimi_linear config: field 'linear_attn_config.full_attn_layers': missing",
    )
    assert error.path == str(path)
    path.write_text(json.dumps(KIMI))
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(path, ssm_dtype="fp16")
    assert caught.value.path == str(path)


def test_kimi_full_attn_layers_that_name_a_kda_layer() -> None:
    linear = {**KIMI["linear_attn_config"], "full_attn_layers": [1, 2]}
    refused(
        {**KIMI, "linear_attn_config": linear},
        "kimi_linear config: field 'linear_attn_config.full_attn_layers': layer 0 is "
        "'full attention' but kda_layers makes it 'KDA'; the two layer descriptions disagree",
    )


def test_zamba2_attention_refusals_name_family_and_file(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**ZAMBA2, "num_attention_heads": 4, "num_key_value_heads": "x"}))
    error = refused(
        path,
        f"{str(path)!a}: zamba2 config: field 'num_key_value_heads': must be an integer, got "
        "'x' (str)",
    )
    assert fields_of(error) == (str(path), "zamba2", "num_key_value_heads")


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


def test_optional_and_listed_fields_are_named_in_their_refusal() -> None:
    refused(
        {**MAMBA2, "intermediate_size": "x"},
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


def test_a_head_size_from_hidden_size_is_an_integer() -> None:
    attention = ssm_state(Path(__file__).parent / "configs" / "granite-4.0-h-tiny.json").attention
    assert attention is not None and type(attention.head_dim) is int


def test_a_wrapper_without_text_config_in_a_file_names_it(tmp_path: Path) -> None:
    # Issue 27: a class that cannot build a text config without one is refused, naming it.
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "minicpmv4_6", "text_config": {}}))
    error = refused(
        path,
        f"{str(path)!a}: minicpmv4_6 config: field 'text_config.model_type': missing; "
        "MiniCPMV4_6Config (SGLang 0.5.23, sglang/srt/configs/minicpmv4_6.py:96) refuses a "
        "text_config without model_type (KeyError: 'Unknown text_config model_type: None'); "
        "give model_type 'qwen3_5_text' in text_config",
        layout="sglang",
    )
    assert error.path == str(path)


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


# --- the families merged with glm5_next, alice_ai, gigachat3_5 and minicpm_sala ------------------


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


WRITTEN = Path(__file__).parent / "configs" / "written"


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


def test_alice_ai_layer_types_must_cover_every_layer() -> None:
    # vLLM indexes layer_types by layer number up to num_hidden_layers
    # (V:vllm/model_executor/models/alice_ai.py:491-495); a short list has no entry to read.
    alice = json.loads((WRITTEN / "alice-ai-written.json").read_text(encoding="utf-8"))
    alice["layer_types"] = alice["layer_types"][:-1]
    refused(alice, "alice_ai config: field 'layer_types': has 7 entries but num_hidden_layers is 8")


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


def test_a_wrapped_model_type_that_is_not_a_string_names_no_family() -> None:
    # A list or mapping cannot key the family table; the wrapper is read as a plain model.
    for odd in (["mamba"], {"name": "mamba"}):
        state = ssm_state(
            {"model_type": "llava", "num_hidden_layers": 2, "text_config": {"model_type": odd}}
        )
        assert (state.family, state.ssm_layers, state.per_sequence_bytes) == ("transformer", 0, 0)
