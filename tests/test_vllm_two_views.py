"""vLLM's two views of a layer's state (issue 27).

The model-level ``get_mamba_state_shape_from_config`` / ``get_mamba_state_dtype_from_config``
size the attention block and pad every state page to one attention page
(vllm/platforms/interface.py:1045-1130); the layer's own ``get_state_shape`` /
``get_state_dtype`` set the page it allocates, and ``MambaSpec.page_size_bytes`` asserts
``page_size_padded >= page_size`` (vllm/v1/kv_cache_interface.py:1120-1129). Where the layer's
page is the larger, vLLM does not start. The numbers below are vLLM's own, run from its wheel
by ``tools/peer_agreement`` (its reservations on these configs), and written out from the
shapes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from decode_ring.models import ssm_state
from decode_ring.servers import ServerArgumentError, vllm_reservation

CONFIGS = Path(__file__).resolve().parent / "configs"
KIMI = CONFIGS / "kimi-linear-48b-a3b-instruct.json"


def test_kimi_linears_layer_keeps_float32_whatever_the_flag() -> None:
    # KimiGatedDeltaNetAttention.get_state_dtype passes no --mamba-ssm-cache-dtype
    # (vllm/model_executor/layers/mamba/gdn/kimi_gdn_linear_attn.py:157-164); the model-level
    # kda_state_dtype takes it (vllm/models/kimi_k3/nvidia/model.py:1495-1504).
    layer = ssm_state(KIMI, ssm_dtype="bfloat16")
    model = ssm_state(KIMI, ssm_dtype="bfloat16", view="model")
    # conv (3, 3 x 32 x 128) bfloat16 = 73,728 B; recurrent (32, 128, 128): float32 2,097,152 B,
    # bfloat16 1,048,576 B.
    assert (layer.ssm_dtype, layer.per_layer_bytes) == ("float32", 73_728 + 2_097_152)
    assert (model.ssm_dtype, model.per_layer_bytes) == ("bfloat16", 73_728 + 1_048_576)
    assert layer.per_layer_bytes == 2_170_880


def test_kimi_linear_with_a_bfloat16_ssm_flag_does_not_start() -> None:
    # MLA keeps (512 + 64) x 2 B = 1,152 B a token; blocks of a multiple of 128 tokens
    # (platforms/interface.py:1083-1088) holding the model-level page of 1,122,304 B are 1,024
    # tokens, so every state page is padded to 1,179,648 B: less than the layer's 2,170,880 B.
    with pytest.raises(ServerArgumentError) as caught:
        vllm_reservation(KIMI, mamba_ssm_cache_dtype="bfloat16")
    assert caught.value.field == "mamba_ssm_cache_dtype"
    assert str(caught.value) == (
        "argument mamba_ssm_cache_dtype: the layer allocates a state page of 2170880 B, but "
        "vLLM 0.33.0 pads state pages to 1179648 B (1024-token attention blocks sized by the "
        "model-level page of 1122304 B): its startup assert page_size_padded >= page_size "
        "fails (vllm/v1/kv_cache_interface.py:1127); a larger --block-size pads more"
    )


def test_kimi_linear_with_a_larger_block_keeps_float32() -> None:
    # With --block-size 2048 the padding (2048 x 1,152 B) holds the layer's float32 page; the
    # package used to report bfloat16 there.
    r = vllm_reservation(KIMI, mamba_ssm_cache_dtype="bfloat16", block_size=2048)
    assert (r.ssm_dtype, r.state_page_bytes, r.block_size) == ("float32", 2_170_880, 2048)
    assert r.state_page_bytes_padded == 2048 * 1152


def lfm2_1_2b() -> dict[str, Any]:
    # LFM2-1.2B's geometry (LiquidAI/LFM2-1.2B config.json): 16 layers, 6 of them attention,
    # conv_dim 2048, 32 heads of 64, 8 KV heads, bfloat16.
    kinds = ["conv"] * 16
    for index in (2, 5, 8, 10, 12, 14):
        kinds[index] = "full_attention"
    return {
        "model_type": "lfm2",
        "architectures": ["Lfm2ForCausalLM"],
        "num_hidden_layers": 16,
        "layer_types": kinds,
        "hidden_size": 2048,
        "conv_dim": 2048,
        "conv_L_cache": 3,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "max_position_embeddings": 128000,
        "dtype": "bfloat16",
    }


def test_lfm2s_model_level_window_leaves_the_speculative_tokens_out() -> None:
    # lfm2.py:556-577 (no num_spec) against ShortConv.get_state_shape (short_conv.py:351-357).
    layer = ssm_state(lfm2_1_2b(), speculative_tokens=7)
    model = ssm_state(lfm2_1_2b(), speculative_tokens=7, view="model")
    assert (layer.groups[0].tensors[0].shape, model.groups[0].tensors[0].shape) == (
        (9, 2048),
        (2, 2048),
    )


def test_lfm2_with_seven_speculative_tokens_does_not_start_at_tp_1() -> None:
    # Attention: 8 KV heads x (64 + 64) x 2 B = 2,048 B a token; the model-level page, 2 x 2,048
    # x 2 B = 8,192 B, fits one 16-token block of 32,768 B. The layer's page with s speculative
    # tokens is (2 + s) x 4,096 B: 32,768 B at s = 6, 36,864 B at s = 7.
    r = vllm_reservation(lfm2_1_2b(), num_speculative_tokens=6)
    assert (r.block_size, r.state_page_bytes, r.state_page_bytes_padded) == (16, 32_768, 32_768)
    with pytest.raises(ServerArgumentError) as caught:
        vllm_reservation(lfm2_1_2b(), num_speculative_tokens=7)
    assert caught.value.field == "num_speculative_tokens"
    assert "state page of 36864 B" in str(caught.value)
    assert "pads state pages to 32768 B" in str(caught.value)
    # A larger block pads more: 32 tokens, 65,536 B.
    r = vllm_reservation(lfm2_1_2b(), num_speculative_tokens=7, block_size=32)
    assert (r.state_page_bytes, r.state_page_bytes_padded) == (36_864, 65_536)


def test_the_views_agree_where_vllm_calls_the_same_functions() -> None:
    for name in ("nemotron-nano-9b-v2.json", "qwen3-next-80b-a3b-instruct.json"):
        for spec in (0, 2):
            layer = ssm_state(CONFIGS / name, speculative_tokens=spec)
            model = ssm_state(CONFIGS / name, speculative_tokens=spec, view="model")
            assert layer == model
    assert json.dumps(ssm_state(KIMI, layout="sglang", view="model").as_dict())


def test_granite_with_speculative_tokens_starts_where_its_model_level_window_widens() -> None:
    # The layer widens its conv window by the speculative tokens from 0.17.0; GraniteMoeHybrid's
    # model-level shape leaves them out until 0.32.0 (vllm-0.32.0:vllm/model_executor/models/
    # granitemoehybrid.py:618-647). Granite-4.0-H-Tiny with 2 speculative tokens: conv_dim
    # 48 x 64 + 2 x 128 = 3,328; the SSM state (48, 64, 128) bfloat16, 786,432 B; attention
    # 4 KV heads x 128 x 2 x 2 B = 2,048 B a token.
    granite = CONFIGS / "granite-4.0-h-tiny.json"
    # 0.31.0: the model-level page, 3 x 3,328 x 2 + 786,432 = 806,400 B, sizes 400-token blocks
    # (819,200 B), less than the layer's 5 x 3,328 x 2 + 786,432 = 819,712 B.
    with pytest.raises(ServerArgumentError) as caught:
        vllm_reservation(granite, version="0.31.0", num_speculative_tokens=2)
    assert caught.value.field == "num_speculative_tokens"
    assert str(caught.value) == (
        "argument num_speculative_tokens: the layer allocates a state page of 819712 B, but "
        "vLLM 0.31.0 pads state pages to 819200 B (400-token attention blocks sized by the "
        "model-level page of 806400 B): its startup assert page_size_padded >= page_size "
        "fails (vllm/v1/kv_cache_interface.py:1127); a larger --block-size pads more"
    )
    # 0.32.0: both views 819,712 B, so 416-token blocks (ceil(819,712 / 2,048 / 16) x 16) of
    # 851,968 B.
    r = vllm_reservation(granite, version="0.32.0", num_speculative_tokens=2)
    assert (r.block_size, r.state_page_bytes, r.state_page_bytes_padded) == (416, 819_712, 851_968)
