"""Rules keyed as the servers key them (issue 27): vLLM's dtype hooks and model classes by the
architecture a config names, SGLang's radix-cache strategy by the architecture and, for
Granite, by its own config class's ``layer_types``.

The numbers are the servers' own, run from the wheels (``tools/peer_agreement``, whose class
snapshots build each config as the server does), or written out from the shapes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from decode_ring.models import ModelConfigError, ssm_state
from decode_ring.models.dtypes import NEMOTRON_H_HOOK, QWEN3_5_HOOK, VLLM_SSM_HOOKS
from decode_ring.servers import sglang_reservation

CONFIGS = Path(__file__).resolve().parent / "configs"
GIB = 1 << 30


def config(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((CONFIGS / name).read_text(encoding="utf-8"))
    return loaded


def test_vllms_ssm_hooks_are_its_models_config_map() -> None:
    # vllm/model_executor/models/config.py:1211-1269, looked up by the architecture vLLM
    # resolved (vllm/config/vllm.py:2744-2764).
    assert {arch for arch, hook in VLLM_SSM_HOOKS.items() if hook is NEMOTRON_H_HOOK} == {
        "NemotronHForCausalLM",
        "NemotronHPuzzleForCausalLM",
        "NemotronH_Nano_VL_V2",
    }
    assert {arch for arch, hook in VLLM_SSM_HOOKS.items() if hook is QWEN3_5_HOOK} == {
        "Qwen3_5ForCausalLM",
        "Qwen3_5MoeForCausalLM",
        "Qwen3_5ForConditionalGeneration",
        "Qwen3_5MoeForConditionalGeneration",
        "ColQwen3_5",
        "D3ForSequenceClassification",
        "Qwen4ExpForCausalLM",
        "Qwen4ExpForConditionalGeneration",
    }


def qwen3_5_27b_text() -> dict[str, Any]:
    text: dict[str, Any] = config("qwen3.5-27b.json")["text_config"]
    return text


def test_a_qwen3_5_text_model_under_a_wrapper_vllm_does_not_hook() -> None:
    # Issue 27: Qwen3.5-27B's text config wrapped as MiniCPM-V 4.7. MODELS_CONFIG_MAP has no
    # MiniCPMV4_7ForConditionalGeneration, so --mamba-ssm-cache-dtype stays auto and the
    # state follows the model dtype: 48 layers x (conv (3, 10240) + (48, 128, 128)) bfloat16 =
    # 48 x (61,440 + 1,572,864) = 78,446,592 B; under Qwen3_5ForConditionalGeneration the
    # hook reads mamba_ssm_dtype float32: 48 x (61,440 + 3,145,728) = 153,944,064 B.
    wrapped = {
        "model_type": "minicpmv4_7",
        "architectures": ["MiniCPMV4_7ForConditionalGeneration"],
        "text_config": qwen3_5_27b_text(),
    }
    state = ssm_state(wrapped)
    assert (state.family, state.ssm_layers, state.ssm_dtype) == ("minicpmv4_6", 48, "bfloat16")
    assert state.per_sequence_bytes == 48 * (3 * 10240 * 2 + 48 * 128 * 128 * 2) == 78_446_592
    published = ssm_state(CONFIGS / "qwen3.5-27b.json")
    assert (published.ssm_dtype, published.per_sequence_bytes) == ("float32", 153_944_064)
    # SGLang passes the config to mamba2_state_dtype for both (configs/qwen3_5.py,
    # minicpmv4_6.py): float32 either way.
    assert ssm_state(wrapped, layout="sglang").ssm_dtype == "float32"


def test_a_text_config_alone_takes_the_familys_first_architecture() -> None:
    # No architectures: the family's first (Qwen3_5ForConditionalGeneration), which vLLM hooks.
    text = {**qwen3_5_27b_text(), "model_type": "qwen3_5_text"}
    assert ssm_state(text).ssm_dtype == "float32"


def test_an_empty_or_unnamed_architectures_list_takes_the_familys_first() -> None:
    # No name in architectures[0]: the family's first, NemotronHForCausalLM, whose vLLM hook
    # reads mamba_ssm_cache_dtype (vllm/model_executor/models/config.py:812-848).
    nemotron = {**config("nemotron-nano-9b-v2.json"), "mamba_ssm_cache_dtype": "float16"}
    for names in ([], [None], [5]):
        assert ssm_state({**nemotron, "architectures": names}).ssm_dtype == "float16"


@pytest.mark.parametrize(
    ("architecture", "dtype"),
    [
        ("NemotronH_Nano_VL_V2", "float32"),
        ("NemotronH_Nano_Omni_Reasoning_V3", "bfloat16"),
        ("NemotronH_Omni_Reasoning_V3", "bfloat16"),
        ("NemotronH_Super_Omni_Reasoning_V3", "bfloat16"),
    ],
)
def test_nemotron_h_wrappers_vllm_hooks_by_architecture(architecture: str, dtype: str) -> None:
    # vLLM's registry serves all four with NemotronH_Nano_VL_V2's class
    # (vllm/model_executor/models/registry.py:550-553); only its key is in MODELS_CONFIG_MAP.
    wrapper = {
        "model_type": "NemotronH_Nano_VL_V2",
        "architectures": [architecture],
        "llm_config": config("nemotron-nano-9b-v2.json"),
    }
    assert ssm_state(wrapper).ssm_dtype == dtype


def test_an_architecture_the_server_has_no_model_class_for_is_refused() -> None:
    # vLLM serves MiniCPM-OCR (registry.py:528-531); SGLang has no
    # MiniCPMOcrForConditionalGeneration.
    ocr = {
        "model_type": "minicpmv4_6",
        "architectures": ["MiniCPMOcrForConditionalGeneration"],
        "text_config": {**qwen3_5_27b_text(), "model_type": "qwen3_5_text"},
    }
    assert ssm_state(ocr).ssm_layers == 48
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(ocr, layout="sglang")
    assert str(caught.value) == (
        "minicpmv4_6 config: field 'architectures': SGLang 0.5.23 has no model class "
        "'MiniCPMOcrForConditionalGeneration' (an EntryClass of sglang/srt/models); it serves "
        "minicpmv4_6 as MiniCPMV4_6ForConditionalGeneration, MiniCPMV4_7ForConditionalGeneration"
    )
    # The reference server's layout keeps its own rules.
    assert ssm_state(ocr, layout="metrale").ssm_layers == 48


def granite_default() -> dict[str, Any]:
    # transformers 5.19.0's AutoConfig.for_model("granitemoehybrid").to_dict(): 32 layers named
    # linear_attention, as tools/peer_agreement's transformers configs write it (abridged to
    # the fields the servers read).
    return {
        "model_type": "granitemoehybrid",
        "architectures": ["GraniteMoeHybridForCausalLM"],
        "num_hidden_layers": 32,
        "layer_types": ["linear_attention"] * 32,
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 32,
        "max_position_embeddings": 2048,
        "mamba_n_heads": 128,
        "mamba_d_head": 64,
        "mamba_n_groups": 1,
        "mamba_d_state": 256,
        "mamba_d_conv": 4,
        "mamba_expand": 2,
    }


def test_sglang_keys_grannites_radix_cache_by_its_own_layer_names() -> None:
    # Issue 27: SGLang's GraniteMoeHybridConfig names these layers mamba again (configs/
    # granitemoehybrid.py:29-32, :195, :276), so _mamba_radix_cache_resolution's Granite case
    # (arg_groups/overrides.py:462-466) uses the radix cache, extra_buffer under auto: 5 slots
    # a request. At 40 GiB, tp 1: 74 slots, 14 running requests (SGLang's own code, run by
    # tools/peer_agreement on transformers' default Granite config; the package said 24).
    granite = granite_default()
    r = sglang_reservation(granite, available_memory=40 * GIB)
    assert (r.mamba_radix_cache_strategy, r.ratio) == ("extra_buffer", 5)
    assert (r.slots, r.max_running_requests) == (74, 14)
    lazy = sglang_reservation(
        granite, available_memory=40 * GIB, mamba_radix_cache_strategy="extra_buffer_lazy"
    )
    assert lazy.ratio == 4
    # An explicit no_buffer needs --disable-overlap-schedule (mamba_hook.py:156-160).
    with pytest.raises(ValueError, match="no_buffer needs --disable-overlap-schedule"):
        sglang_reservation(
            granite, available_memory=40 * GIB, mamba_radix_cache_strategy="no_buffer"
        )
