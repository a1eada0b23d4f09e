"""No silent zero (issue 27): 0 recurrent layers and 0 B only where the servers read none.

A wrapper is read through the text config its class builds, a wrapper or a config whose
recurrent-layer fields name no family is refused, saying what was expected; a family's config
with no recurrent layer is 0 only as each server reads it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from decode_ring.models import ModelConfigError, ssm_state

CONFIGS = Path(__file__).resolve().parent / "configs"


def config(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((CONFIGS / name).read_text(encoding="utf-8"))
    return loaded


def jet_vlm_untyped() -> dict[str, Any]:
    text = {k: v for k, v in config("jet-nemotron-2b.json").items() if k != "model_type"}
    return {
        "model_type": "jet_vlm",
        "architectures": ["JetVLMForConditionalGeneration"],
        "text_config": text,
    }


def test_a_jet_vlm_whose_text_config_has_no_model_type() -> None:
    # Issue 27 read it as a plain transformer, 0 layers, 0 B. SGLang registers JetVLM
    # (S:sglang/srt/configs/jet_vlm.py:10-35 builds JetNemotronConfig from the text config
    # dict, whatever its model_type; models/jet_vlm.py:141 serves it): Jet-Nemotron-2B's 24
    # layers. vLLM has no Jet model at all.
    state = ssm_state(jet_vlm_untyped(), layout="sglang")
    published = ssm_state(CONFIGS / "jet-nemotron-2b.json", layout="sglang")
    assert (state.family, state.model_type, state.ssm_layers) == ("jet_nemotron", "jet_vlm", 24)
    assert state.per_sequence_bytes == published.per_sequence_bytes
    with pytest.raises(ModelConfigError, match=r"vLLM 0\.33\.0 has no jet_nemotron model"):
        ssm_state(jet_vlm_untyped())


def test_an_unknown_family_wrapped_in_llm_config_is_refused() -> None:
    # Issue 27: read as 0 B when the root had num_hidden_layers.
    wrapped = {
        "model_type": "mystery_vl",
        "num_hidden_layers": 24,
        "llm_config": {"model_type": "mystery_hybrid", "linear_num_key_heads": 16},
    }
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(wrapped)
    assert str(caught.value).startswith(
        "field 'model_type': unknown model_type 'mystery_vl' has SSM fields "
        "('linear_num_key_heads'); supported families: "
    )


def test_a_wrapper_whose_text_config_names_no_family_is_refused() -> None:
    wrapper = {
        "model_type": "qwen3_5",
        "text_config": {"model_type": "llama", "num_hidden_layers": 2},
    }
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(wrapper)
    assert str(caught.value) == (
        "field 'text_config.model_type': 'llama' in a 'qwen3_5' wrapper names no family this "
        "package reads; a 'qwen3_5' checkpoint's text config is 'qwen3_5_text' (give that "
        "model_type, or none for the class's own)"
    )
    assert (caught.value.field, caught.value.family) == ("text_config.model_type", "qwen3_5")


def test_a_wrapper_with_its_text_fields_at_the_top_level_is_refused() -> None:
    # transformers' Qwen3_5Config builds its default text config and ignores top-level text
    # fields: the server would size a model the file does not describe.
    flat = {**config("qwen3.5-27b.json")["text_config"], "model_type": "qwen3_5"}
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(flat)
    assert "give a flat 'qwen3_5_text' config, or a 'qwen3_5' wrapper with text_config" in str(
        caught.value
    )
    assert caught.value.field == "text_config"
    assert ssm_state({**flat, "model_type": "qwen3_5_text"}).ssm_layers == 48


def test_wrapper_refusals_from_a_file_name_the_file(tmp_path: Path) -> None:
    qwen = {"model_type": "qwen3_5", "text_config": {"model_type": "llama"}}
    path = tmp_path / "qwen.json"
    path.write_text(json.dumps(qwen), encoding="utf-8")
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(path)
    assert str(caught.value) == (
        f"{str(path)!a}: field 'text_config.model_type': 'llama' in a 'qwen3_5' wrapper names no "
        "family this package reads; a 'qwen3_5' checkpoint's text config is 'qwen3_5_text' (give "
        "that model_type, or none for the class's own)"
    )
    assert caught.value.path == str(path)
    flat = {"model_type": "qwen3_5", "hidden_size": 64, "num_hidden_layers": 2}
    message = (
        "field 'text_config': missing, and num_hidden_layers, hidden_size at the top level, which "
        "a 'qwen3_5' config's class ignores (it builds its default text config); give a flat "
        "'qwen3_5_text' config, or a 'qwen3_5' wrapper with text_config"
    )
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(flat)
    assert str(caught.value) == message
    assert (caught.value.path, caught.value.family) == (None, "qwen3_5")
    path = tmp_path / "flat.json"
    path.write_text(json.dumps(flat), encoding="utf-8")
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(path)
    assert str(caught.value) == f"{str(path)!a}: {message}"
    assert (caught.value.path, caught.value.family) == (str(path), "qwen3_5")


def test_a_family_config_with_no_recurrent_layer_is_zero_where_the_servers_read_zero() -> None:
    # transformers' default LFM2 config: every layer attention (Lfm2Config: full_attn_idxs
    # defaults to every layer), read as no conv layer by both servers (tools/peer_agreement).
    lfm2 = {
        "model_type": "lfm2",
        "architectures": ["Lfm2ForCausalLM"],
        "num_hidden_layers": 16,
        "conv_dim": 2048,
        "hidden_size": 2048,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
    }
    for layout in ("vllm", "sglang", "metrale"):
        state = ssm_state(lfm2, layout=layout)
        assert (state.ssm_layers, state.per_sequence_bytes) == (0, 0)


def test_a_plain_transformer_stays_zero() -> None:
    llama = {
        "model_type": "llama",
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "hidden_size": 4096,
    }
    assert ssm_state(llama).per_sequence_bytes == 0
    assert ssm_state({"model_type": "llava", "text_config": llama}).ssm_layers == 0
