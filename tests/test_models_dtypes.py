"""The state's dtypes: each server's rule (the model dtype, a config field, a family's own default,
an override), and the rule named beside the dtype it chose.

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

from decode_ring.models import LAYOUTS, ssm_state

from .support import (
    FOLLOWS_CONV,
    SMALL_KIMI,
    SMALL_MAMBA2,
    SMALL_NEMOTRON,
    SMALL_QWEN3_NEXT,
    VLLM_LIGHTNING,
    config,
    fields_of,
    refused,
)

NEMOTRON_FROM_CONFIG = (
    "config mamba_ssm_cache_dtype (vLLM NemotronH, vllm/model_executor/models/config.py:812-848)"
)


def test_vllm_conv_dtype_override_carries_an_auto_ssm_dtype() -> None:
    state = ssm_state(config("mamba-codestral-7b.json"), conv_dtype="fp32")
    assert (state.conv_dtype, state.ssm_dtype) == ("float32", "float32")
    assert state.conv_dtype_rule == "override --conv-dtype"
    assert state.ssm_dtype_rule == FOLLOWS_CONV
    assert state.per_sequence_bytes == 64 * (3 * 10240 * 4 + 128 * 64 * 128 * 4)


def test_vllm_ssm_dtype_override() -> None:
    state = ssm_state(config("mamba-codestral-7b.json"), ssm_dtype="half")
    assert (state.conv_dtype, state.ssm_dtype, state.ssm_dtype_rule) == (
        "bfloat16",
        "float16",
        "override --ssm-dtype",
    )


def test_vllm_nemotron_ssm_dtype_keeps_its_own_rule_under_a_conv_override() -> None:
    state = ssm_state(config("nemotron-nano-9b-v2.json"), conv_dtype="float16")
    assert (state.conv_dtype, state.ssm_dtype) == ("float16", "float32")


@pytest.mark.parametrize(
    ("value", "ssm_dtype", "rule"),
    [
        (
            "float16",
            "float16",
            NEMOTRON_FROM_CONFIG,
        ),
        (
            "float32",
            "float32",
            NEMOTRON_FROM_CONFIG,
        ),
        (
            "auto",
            "bfloat16",
            FOLLOWS_CONV,
        ),
    ],
)
def test_vllm_nemotron_ssm_dtype_from_config(value: str, ssm_dtype: str, rule: str) -> None:
    nemotron = config("nemotron-nano-9b-v2.json") | {"mamba_ssm_cache_dtype": value}
    state = ssm_state(nemotron)
    assert (state.ssm_dtype, state.ssm_dtype_rule) == (ssm_dtype, rule)


@pytest.mark.parametrize(
    ("fields", "dtype", "rule"),
    [
        (
            {"torch_dtype": "bfloat16"},
            "bfloat16",
            "config torch_dtype bfloat16 (vLLM: model dtype)",
        ),
        ({"dtype": "float16"}, "float16", "config dtype float16 (vLLM: model dtype)"),
        (
            {"dtype": "float16", "torch_dtype": "bfloat16"},
            "float16",
            "config dtype float16 (vLLM: model dtype)",
        ),
        (
            {"torch_dtype": "float32"},
            "bfloat16",
            "config torch_dtype float32, as bfloat16 (vLLM: model dtype)",
        ),
        (
            {"torch_dtype": None},
            "bfloat16",
            "no dtype in config: bfloat16 (vLLM: weights' dtype, float32 downcast)",
        ),
        ({}, "bfloat16", "no dtype in config: bfloat16 (vLLM: weights' dtype, float32 downcast)"),
    ],
)
def test_vllm_model_dtype(fields: dict[str, Any], dtype: str, rule: str) -> None:
    codestral = config("mamba-codestral-7b.json")
    del codestral["torch_dtype"]
    state = ssm_state(codestral | fields)
    assert (state.conv_dtype, state.conv_dtype_rule) == (dtype, rule)
    assert state.ssm_dtype == dtype


def test_vllm_model_dtype_falls_back_to_text_config() -> None:
    wrapper = {
        "model_type": "nemotron_h_vl_wrapper",
        "text_config": config("nemotron-nano-9b-v2.json") | {"torch_dtype": "float16"},
    }
    state = ssm_state(wrapper)
    assert (state.family, state.model_type) == ("nemotron_h", "nemotron_h_vl_wrapper")
    assert (state.conv_dtype, state.ssm_layers) == ("float16", 27)


@pytest.mark.parametrize(
    ("name", "value", "ssm_dtype", "rule"),
    [
        (
            "qwen3-next-80b-a3b-instruct.json",
            "bfloat16",
            "bfloat16",
            "config mamba_ssm_dtype (SGLang, sglang/srt/configs/mamba_utils.py:73-92)",
        ),
        (
            "nemotron-nano-9b-v2.json",
            "float16",
            "float16",
            "config mamba_ssm_dtype (SGLang, sglang/srt/configs/mamba_utils.py:73-92)",
        ),
        (
            "falcon-h1-7b-instruct.json",
            "fp8",
            "float32",
            "config mamba_ssm_dtype 'fp8' invalid: SGLang default float32",
        ),
        # Granite's mamba2_cache_params does not pass its config to mamba2_state_dtype.
        (
            "granite-4.0-h-tiny.json",
            "bfloat16",
            "float32",
            "SGLang default float32 (sglang/srt/configs/mamba_utils.py:70)",
        ),
    ],
)
def test_sglang_ssm_dtype_from_config(name: str, value: str, ssm_dtype: str, rule: str) -> None:
    state = ssm_state(config(name) | {"mamba_ssm_dtype": value}, layout="sglang")
    assert (state.ssm_dtype, state.ssm_dtype_rule) == (ssm_dtype, rule)
    assert (state.conv_dtype, state.conv_dtype_rule) == (
        "bfloat16",
        "SGLang default bfloat16 (sglang/srt/configs/mamba_utils.py:68)",
    )


def test_sglang_ignores_vllm_nemotron_field() -> None:
    nemotron = config("nemotron-nano-9b-v2.json") | {"mamba_ssm_cache_dtype": "float16"}
    assert ssm_state(nemotron, layout="sglang").ssm_dtype == "float32"


@pytest.mark.parametrize("layout", LAYOUTS)
def test_overrides_win_in_every_layout(layout: str) -> None:
    state = ssm_state(
        config("qwen3-next-80b-a3b-instruct.json"),
        layout=layout,
        conv_dtype=" FP16 ",
        ssm_dtype="BF16",
    )
    assert (state.conv_dtype, state.ssm_dtype) == ("float16", "bfloat16")
    assert (state.conv_dtype_rule, state.ssm_dtype_rule) == (
        "override --conv-dtype",
        "override --ssm-dtype",
    )


@pytest.mark.parametrize(
    ("alias", "dtype"),
    [
        ("bfloat16", "bfloat16"),
        ("bf16", "bfloat16"),
        ("float16", "float16"),
        ("fp16", "float16"),
        ("half", "float16"),
        ("float32", "float32"),
        ("fp32", "float32"),
        ("float", "float32"),
    ],
)
def test_dtype_aliases(alias: str, dtype: str) -> None:
    state = ssm_state(
        config("zamba2-2.7b.json"), layout="metrale", conv_dtype=alias, ssm_dtype=alias
    )
    assert (state.conv_dtype, state.ssm_dtype) == (dtype, dtype)


def test_auto_keeps_the_layout_rule() -> None:
    state = ssm_state(config("granite-4.0-h-tiny.json"), layout="sglang", conv_dtype="auto")
    assert (state.conv_dtype_rule, state.ssm_dtype_rule) == (
        "SGLang default bfloat16 (sglang/srt/configs/mamba_utils.py:68)",
        "SGLang default float32 (sglang/srt/configs/mamba_utils.py:70)",
    )


def test_float64_models_are_taken_as_bfloat16() -> None:
    state = ssm_state({**SMALL_MAMBA2, "torch_dtype": "float64"})
    assert (state.conv_dtype, state.conv_dtype_rule) == (
        "bfloat16",
        "config torch_dtype float64, as bfloat16 (vLLM: model dtype)",
    )


def test_the_vllm_hooks_read_their_field() -> None:
    qwen = {**SMALL_QWEN3_NEXT, "model_type": "qwen3_5_text"}
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
        {**SMALL_NEMOTRON, "mamba_ssm_cache_dtype": None},
        "nemotron_h config: field 'mamba_ssm_cache_dtype': must be a string, got None (NoneType) "
        "(NemotronHConfig (transformers 5.20.2, "
        "transformers/models/nemotron_h/configuration_nemotron_h.py:25))",
    )


def test_linear_attention_dtype_rules() -> None:
    lightning = dict(VLLM_LIGHTNING)
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
    state = ssm_state(SMALL_KIMI, ssm_dtype="bf16", view="model")
    assert (state.ssm_dtype, state.ssm_dtype_rule) == ("bfloat16", "override --ssm-dtype")
    assert ssm_state(SMALL_KIMI, ssm_dtype="bf16").ssm_dtype == "float32"
    error = refused(
        SMALL_KIMI,
        "argument ssm_dtype: vLLM 0.33.0 keeps a KDA recurrent state only in float32 or "
        "bfloat16 (vllm/model_executor/layers/mamba/mamba_utils.py:143-149), not float16",
        ssm_dtype="half",
    )
    assert fields_of(error) == (None, "kimi_linear", "ssm_dtype")
    assert ssm_state(SMALL_KIMI, layout="metrale").ssm_dtype_rule == "metrale: float32"


def test_vllm_before_0_20_1_refuses_a_float32_linear_attention_state(tmp_path: Path) -> None:
    # vLLM 0.17.0 to 0.20.0 serve BailingMoeV2_5ForCausalLM and raise "fp32 state for minimax is
    # not yet supported" from linear_attention_state_dtype for a float32 --mamba-cache-dtype;
    # 0.20.1 accepts it (vllm-0.20.1:vllm/model_executor/layers/mamba/mamba_utils.py:53-60).
    lightning = dict(VLLM_LIGHTNING)
    (tensor,) = ssm_state(lightning, version="0.17.0").groups[0].tensors
    assert tensor.dtype == "bfloat16"
    (tensor,) = ssm_state(lightning, version="0.17.0", conv_dtype="fp16").groups[0].tensors
    assert (tensor.dtype, tensor.dtype_rule) == (
        "float16",
        "override --conv-dtype (vLLM: --mamba-cache-dtype)",
    )
    path = tmp_path / "config.json"
    path.write_text(json.dumps(lightning), encoding="utf-8")
    error = refused(
        path,
        "argument conv_dtype: this vLLM release refuses a float32 linear-attention state: "
        "'fp32 state for minimax is not yet supported' (mamba_utils.py "
        "linear_attention_state_dtype)",
        version="0.20.0",
        conv_dtype="fp32",
    )
    assert fields_of(error) == (str(path), "bailing_hybrid", "conv_dtype")
    (tensor,) = ssm_state(lightning, version="0.20.1", conv_dtype="fp32").groups[0].tensors
    assert tensor.dtype == "float32"


def test_vllm_before_0_13_reads_no_nemotron_h_ssm_dtype_field() -> None:
    # NemotronH has no MODELS_CONFIG_MAP entry before vLLM 0.13.0, so an auto
    # --mamba-ssm-cache-dtype follows the conv state whatever mamba_ssm_cache_dtype says
    # (vllm-0.13.0:vllm/model_executor/models/config.py:493-510 added it, default float16).
    nemotron = config("nemotron-nano-9b-v2.json") | {"mamba_ssm_cache_dtype": "float32"}
    state = ssm_state(nemotron, version="0.12.0")
    assert (state.ssm_dtype, state.ssm_dtype_rule) == ("bfloat16", FOLLOWS_CONV)
    state = ssm_state(config("nemotron-nano-9b-v2.json"), version="0.13.0")
    assert (state.ssm_dtype, state.ssm_dtype_rule) == (
        "float16",
        "vLLM NemotronH default float16 (vllm/model_executor/models/config.py:812-848)",
    )
