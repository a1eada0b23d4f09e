"""The servers' refusals are refusals here (issue 27), under that server's layout, with the
server's reason and its citation, naming the field; a value no server runs with (a head size
of 0, a context of 0 or less) is refused under every layout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from decode_ring.models import ModelConfigError, TensorParallelSplitError, ssm_state
from decode_ring.servers import sglang_reservation, vllm_reservation

CONFIGS = Path(__file__).resolve().parent / "configs"
GIB = 1 << 30


def config(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((CONFIGS / name).read_text(encoding="utf-8"))
    return loaded


def test_zaya_at_a_tp_that_splits_its_query_groups() -> None:
    # SGLang's ZayaAttention asserts num_query_groups % tp_size == 0 (sglang/srt/models/
    # zaya.py:921-925): ZAYA1's 2 KV heads do not split over 4 ranks.
    with pytest.raises(TensorParallelSplitError) as caught:
        sglang_reservation(CONFIGS / "zaya1-8b.json", tp_size=4, available_memory=40 * GIB)
    assert caught.value.field == "num_key_value_heads"
    assert "(sglang/srt/models/zaya.py:921-925)" in str(caught.value)
    assert sglang_reservation(CONFIGS / "zaya1-8b.json", tp_size=2, available_memory=40 * GIB)


def olmo() -> dict[str, Any]:
    # OLMo-hybrid's geometry as transformers' OlmoHybridConfig derives it (8 layers, every
    # fourth attention; linear heads and dims from the attention's).
    return {
        "model_type": "olmo_hybrid",
        "architectures": ["OlmoHybridForCausalLM"],
        "num_hidden_layers": 8,
        "hidden_size": 1024,
        "num_attention_heads": 8,
    }


def test_olmo_hybrid_with_linear_use_gate_false() -> None:
    assert ssm_state(olmo() | {"linear_use_gate": True}).ssm_layers == 6
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(olmo() | {"linear_use_gate": False})
    assert str(caught.value) == (
        "olmo_hybrid config: field 'linear_use_gate': is False; vLLM 0.33.0's "
        "OlmoHybridGatedDeltaNet requires linear_use_gate true (vllm/model_executor/layers/"
        "mamba/gdn/olmo_gdn_linear_attn.py:80-82)"
    )


def test_heads_larger_than_the_hidden_size_without_head_dim() -> None:
    # Issue 27: head_dim 0, "kv/seq 0 B" in plan and a ZeroDivisionError in vllm.
    qwen = config("qwen3-next-80b-a3b-instruct.json") | {"num_attention_heads": 4096, "head_dim": 0}
    qwen["hidden_size"] = 2048
    for layout in ("vllm", "sglang", "metrale"):
        with pytest.raises(ModelConfigError) as caught:
            ssm_state(qwen, layout=layout)
        assert caught.value.field == "hidden_size"
        assert "2048 // num_attention_heads 4096 is a head size of 0; give head_dim" in str(
            caught.value
        )
    with pytest.raises(ModelConfigError, match="field 'hidden_size'"):
        vllm_reservation(qwen)


@pytest.mark.parametrize("length", [0, -1])
def test_a_context_of_zero_or_less(length: int) -> None:
    # Issue 27: max_model_len -1 with concurrency 95.14x, and "context length -1". vLLM refuses
    # max_model_len below 1 (vllm/config/model.py:1070-1075); SGLang divides by its context
    # (resolve_max_num_reqs). The state of a sequence does not depend on it.
    nemotron = config("nemotron-nano-9b-v2.json") | {"max_position_embeddings": length}
    for layout in ("vllm", "sglang", "metrale"):
        assert ssm_state(nemotron, layout=layout).ssm_layers == 27
    with pytest.raises(ModelConfigError) as vllm:
        vllm_reservation(nemotron, kv_cache_memory_bytes=40 * GIB)
    assert str(vllm.value) == (
        f"field 'max_position_embeddings': {length} is not a count of tokens from 1 to "
        "2**63 - 1; vLLM refuses a max_model_len below 1 (vllm/config/model.py:1070-1075)"
    )
    with pytest.raises(ModelConfigError) as sglang:
        sglang_reservation(nemotron, available_memory=40 * GIB)
    assert sglang.value.field == vllm.value.field == "max_position_embeddings"
    # A --max-model-len stands in for the config's, as vLLM takes the flag first.
    assert (
        vllm_reservation(nemotron, kv_cache_memory_bytes=40 * GIB, max_model_len=4096).max_model_len
        == 4096
    )


def test_kimi_attention_that_is_not_nope_mla() -> None:
    kimi = config("kimi-linear-48b-a3b-instruct.json") | {"mla_use_nope": False}
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(kimi)
    assert str(caught.value) == (
        "kimi_linear config: field 'mla_use_nope': is False; vLLM 0.33.0 asserts Kimi's MLA is "
        "NoPE-only (vllm/models/kimi_k3/nvidia/model.py:745)"
    )
    assert ssm_state(kimi, layout="sglang").ssm_layers == 20


def test_a_qwen_gated_delta_net_output_gate_vllm_does_not_know() -> None:
    qwen = config("qwen3-next-80b-a3b-instruct.json")
    assert ssm_state(qwen | {"output_gate_type": "swish"}).ssm_layers == 36
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(qwen | {"output_gate_type": None})
    assert caught.value.field == "output_gate_type"
    assert "(vllm/model_executor/layers/mamba/gdn/qwen_gdn_linear_attn.py:659-663)" in str(
        caught.value
    )


def test_granite_d_head_auto_is_sglangs_refusal() -> None:
    # transformers' GraniteMoeHybridConfig resolves "auto" (configuration_granitemoehybrid.py:
    # 102-104); SGLang's multiplies it and refuses (configs/granitemoehybrid.py:248-252).
    granite = config("granite-4.0-h-tiny.json") | {"mamba_d_head": "auto"}
    assert ssm_state(granite).ssm_shape == ssm_state(CONFIGS / "granite-4.0-h-tiny.json").ssm_shape
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(granite, layout="sglang")
    assert caught.value.field == "mamba_d_head"
    assert "(configs/granitemoehybrid.py:248-252)" in str(caught.value)


def test_a_minicpm_v_text_config_without_model_type() -> None:
    # transformers 5.20's MiniCPMV4_6Config (vLLM's) builds Qwen3_5TextConfig from it; SGLang's
    # refuses it (KeyError, S:sglang/srt/configs/minicpmv4_6.py:70).
    text = {k: v for k, v in config("qwen3.5-27b.json")["text_config"].items() if k != "model_type"}
    wrapper = {"model_type": "minicpmv4_6", "text_config": text}
    assert ssm_state(wrapper).ssm_layers == 48
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(wrapper, layout="sglang")
    assert caught.value.field == "text_config.model_type"
    assert "give model_type 'qwen3_5_text' in text_config" in str(caught.value)


def test_a_checkpoint_only_remote_code_defines() -> None:
    # cosmos-rl's dense Nemotron-H VL names NemotronVLForConditionCausalLM: in neither vLLM's
    # registry nor an SGLang EntryClass (tools/peer_agreement: both refuse it).
    path = CONFIGS / "nemotron-dense-siglip2.json"
    for layout in ("vllm", "sglang"):
        with pytest.raises(ModelConfigError) as caught:
            ssm_state(path, layout=layout)
        assert caught.value.field == "architectures"
        assert "'NemotronVLForConditionCausalLM'" in str(caught.value)
