"""Per-sequence SSM state from a config, as vLLM 0.33, SGLang 0.5.23 and metrale lay it out.

Every expected number is written out from the checkpoint's published config values (the products
spell the fields: layers x (conv window x channels x bytes + heads x head dim x d_state x bytes)),
never computed by the code under test.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import math
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from decode_ring.models import FAMILIES, LAYOUTS, ModelConfigError, SsmState, ssm_state

CONFIGS = Path(__file__).parent / "configs"
# vLLM's rules for the SSM state's dtype, with their citations.
FOLLOWS_CONV = (
    "as conv state (vLLM: mamba_ssm_cache_dtype auto, "
    "vllm/model_executor/layers/mamba/mamba_utils.py:98-111)"
)
NEMOTRON_FROM_CONFIG = (
    "config mamba_ssm_cache_dtype (vLLM NemotronH, vllm/model_executor/models/config.py:812-848)"
)

#: Which checkpoint each fixture is, and how sure its values are. The state fields of every
#: fixture agree with at least one public copy of that checkpoint's config found in other
#: repositories; fields outside the state are as published to the best of our knowledge and
#: do not change any number here.
CHECKPOINTS: dict[str, str] = {
    "mamba-2.8b-hf.json": "state-spaces/mamba-2.8b-hf",
    "mamba-codestral-7b.json": (
        "mistralai/Mamba-Codestral-7B-v0.1, as Hugging Face's conversion wrote it (with "
        "intermediate_size)"
    ),
    "jamba-mini-1.5.json": "ai21labs/AI21-Jamba-Mini-1.5",
    "nemotron-nano-9b-v2.json": "nvidia/NVIDIA-Nemotron-Nano-9B-v2 (the fields the state reads)",
    "falcon-h1-7b-instruct.json": "tiiuae/Falcon-H1-7B-Instruct (the fields the state reads)",
    "granite-4.0-h-tiny.json": "ibm-granite/granite-4.0-h-tiny",
    "zamba2-2.7b.json": (
        "Zyphra/Zamba2-2.7B; layers_block_type is transformers' 'Zamba2-2.7B style' default "
        "(every entry holds a Mamba block, so the hybrid positions change no number)"
    ),
    "qwen3-next-80b-a3b-instruct.json": "Qwen/Qwen3-Next-80B-A3B-Instruct",
    "metrale-gdn-48.json": (
        "not a checkpoint: the metrale worked example, 48 gated-delta-net layers, Hk 16, Hv 48, "
        "dk = dv = 128, K 4"
    ),
    # The rest: repository, path and commit of each public copy in tests/configs/PROVENANCE.md.
    "qwen3.5-35b-a3b.json": "Qwen/Qwen3.5-35B-A3B",
    "qwen3.5-27b.json": "Qwen/Qwen3.5-27B",
    "kimi-linear-48b-a3b-instruct.json": "moonshotai/Kimi-Linear-48B-A3B-Instruct",
    "kimi-k3.json": "moonshotai/Kimi-K3 (a kimi_linear text_config)",
    "falcon-mamba-7b.json": "tiiuae/falcon-mamba-7b (expand 16 beside intermediate_size 8192)",
    "jet-nemotron-2b.json": "jet-ai/Jet-Nemotron-2B",
    "nemotron-dense-siglip2.json": "nvidia-cosmos/cosmos-rl's dense Nemotron-H VL (no Mamba layer)",
    "minimax-m1.json": "MiniMaxAI/MiniMax-M1 (a family vLLM removed)",
    "zaya1-8b-legacy.json": "Zyphra/ZAYA1-8B-legacy (the schema SGLang 0.5.23's ZayaConfig reads)",
    "zaya1-8b.json": (
        "Zyphra/ZAYA1-8B (transformers' native schema, which SGLang does not translate)"
    ),
    "minicpm-sala.json": (
        "openbmb/MiniCPM-SALA, as a GPTQ derivative saved it (quantization_config removed)"
    ),
}
#: The family each fixture is read as, where its top-level model_type is not it.
FAMILY_OF: dict[str, str] = {
    "kimi-k3.json": "kimi_linear",
    "nemotron-dense-siglip2.json": "nemotron_h",
}
#: Families with no whole public config found (tests/configs/PROVENANCE.md): each is read from
#: transformers 5.23's own to_dict() in tests/test_models_families.py instead.
#: alice_ai and gigachat3_5 (no transformers class) are read from configs written out from the
#: fields the wheels read (tests/configs/written).
NO_FIXTURE: frozenset[str] = frozenset(
    {
        "alice_ai",
        "bailing_hybrid",
        "gigachat3_5",
        "glm5_next",
        "lfm2",
        "lfm2_moe",
        "lfm2_vl",
        "minicpmv4_6",
        "olmo_hybrid",
        # Issue 27: no published config; written from their config classes (written/).
        "inkling",
        "interns2_mobius",
        "nemotron_h_puzzle",
        "qwen4_exp",
    }
)

# Each covered fixture's state at tp 1: layers, then per layout (conv shape, ssm shape, conv
# dtype, ssm dtype, bytes per sequence). None: the layout refuses the config.
Expected = tuple[tuple[int, ...], tuple[int, ...], str, str, int] | None
EXPECTED: dict[str, tuple[int, dict[str, Expected]]] = {
    # d_inner 5120 (expand 2 x hidden 2560), d_state 16, K 4, 64 layers; float32 checkpoint,
    # which vLLM serves as bfloat16.
    "mamba-2.8b-hf.json": (
        64,
        {
            "vllm": (
                (3, 5120),
                (5120, 16),
                "bfloat16",
                "bfloat16",
                64 * (3 * 5120 * 2 + 5120 * 16 * 2),
            ),
            "sglang": (
                (5120, 3),
                (5120, 1, 16),
                "bfloat16",
                "float32",
                64 * (5120 * 3 * 2 + 5120 * 16 * 4),
            ),
            "metrale": (
                (4, 5120),
                (5120, 16),
                "float32",
                "float32",
                64 * (4 * 5120 * 4 + 5120 * 16 * 4),
            ),
        },
    ),
    # d_inner 8192, 8 groups of d_state 128: conv channels 8192 + 2 * 8 * 128; 128 heads of 64.
    "mamba-codestral-7b.json": (
        64,
        {
            "vllm": (
                (3, 8192 + 2 * 8 * 128),
                (128, 64, 128),
                "bfloat16",
                "bfloat16",
                64 * (3 * 10240 * 2 + 128 * 64 * 128 * 2),
            ),
            "sglang": (
                (10240, 3),
                (128, 64, 128),
                "bfloat16",
                "float32",
                64 * (10240 * 3 * 2 + 128 * 64 * 128 * 4),
            ),
            "metrale": (
                (4, 10240),
                (128, 64, 128),
                "float32",
                "float32",
                64 * (4 * 10240 * 4 + 128 * 64 * 128 * 4),
            ),
        },
    ),
    # 32 layers, attention where i % 8 == 4: 28 Mamba-1 layers of d_inner 2 * 4096, d_state 16.
    "jamba-mini-1.5.json": (
        28,
        {
            "vllm": (
                (3, 8192),
                (8192, 16),
                "bfloat16",
                "bfloat16",
                28 * (3 * 8192 * 2 + 8192 * 16 * 2),
            ),
            "sglang": None,  # no jamba in SGLang 0.5.23
            "metrale": (
                (4, 8192),
                (8192, 16),
                "float32",
                "float32",
                28 * (4 * 8192 * 4 + 8192 * 16 * 4),
            ),
        },
    ),
    # 27 M of 56; 128 heads of 80 (d_inner 10240), 8 groups of d_state 128, K 4.
    "nemotron-nano-9b-v2.json": (
        27,
        {
            "vllm": (
                (3, 128 * 80 + 2 * 8 * 128),
                (128, 80, 128),
                "bfloat16",
                "float32",
                27 * (3 * 12288 * 2 + 128 * 80 * 128 * 4),
            ),
            "sglang": (
                (12288, 3),
                (128, 80, 128),
                "bfloat16",
                "float32",
                27 * (12288 * 3 * 2 + 128 * 80 * 128 * 4),
            ),
            "metrale": (
                (4, 12288),
                (128, 80, 128),
                "float32",
                "float32",
                27 * (4 * 12288 * 4 + 128 * 80 * 128 * 4),
            ),
        },
    ),
    # mamba_d_ssm 3072 (not expand x hidden = 6144): 24 heads of 128, 1 group of d_state 256.
    "falcon-h1-7b-instruct.json": (
        44,
        {
            "vllm": (
                (3, 3072 + 2 * 1 * 256),
                (24, 128, 256),
                "bfloat16",
                "bfloat16",
                44 * (3 * 3584 * 2 + 24 * 128 * 256 * 2),
            ),
            "sglang": (
                (3584, 3),
                (24, 128, 256),
                "bfloat16",
                "float32",
                44 * (3584 * 3 * 2 + 24 * 128 * 256 * 4),
            ),
            "metrale": (
                (4, 3584),
                (24, 128, 256),
                "float32",
                "float32",
                44 * (4 * 3584 * 4 + 24 * 128 * 256 * 4),
            ),
        },
    ),
    # 36 mamba of 40 layers; d_inner 2 x 1536 = 48 heads of 64, 1 group of d_state 128.
    "granite-4.0-h-tiny.json": (
        36,
        {
            "vllm": (
                (3, 3072 + 2 * 1 * 128),
                (48, 64, 128),
                "bfloat16",
                "bfloat16",
                36 * (3 * 3328 * 2 + 48 * 64 * 128 * 2),
            ),
            "sglang": (
                (3328, 3),
                (48, 64, 128),
                "bfloat16",
                "float32",
                36 * (3328 * 3 * 2 + 48 * 64 * 128 * 4),
            ),
            "metrale": (
                (4, 3328),
                (48, 64, 128),
                "float32",
                "float32",
                36 * (4 * 3328 * 4 + 48 * 64 * 128 * 4),
            ),
        },
    ),
    # 54 layers, each with a Mamba-2 block: d_inner 2 x 2560 = 80 heads of 64, d_state 64.
    "zamba2-2.7b.json": (
        54,
        {
            "vllm": (
                (3, 5120 + 2 * 1 * 64),
                (80, 64, 64),
                "bfloat16",
                "bfloat16",
                54 * (3 * 5248 * 2 + 80 * 64 * 64 * 2),
            ),
            "sglang": None,  # no zamba2 in SGLang 0.5.23
            "metrale": (
                (4, 5248),
                (80, 64, 64),
                "float32",
                "float32",
                54 * (4 * 5248 * 4 + 80 * 64 * 64 * 4),
            ),
        },
    ),
    # 48 layers, full attention every 4th: 36 GDN layers; Hk 16, Hv 32, dk = dv = 128.
    "qwen3-next-80b-a3b-instruct.json": (
        36,
        {
            "vllm": (
                (3, 2 * 16 * 128 + 32 * 128),
                (32, 128, 128),
                "bfloat16",
                "bfloat16",
                36 * (3 * 8192 * 2 + 32 * 128 * 128 * 2),
            ),
            "sglang": (
                (8192, 3),
                (32, 128, 128),
                "bfloat16",
                "float32",
                36 * (8192 * 3 * 2 + 32 * 128 * 128 * 4),
            ),
            "metrale": (
                (4, 8192),
                (32, 128, 128),
                "float32",
                "float32",
                36 * (4 * 8192 * 4 + 32 * 128 * 128 * 4),
            ),
        },
    ),
    "metrale-gdn-48.json": (
        48,
        {
            "vllm": (
                (3, 2 * 16 * 128 + 48 * 128),
                (48, 128, 128),
                "bfloat16",
                "bfloat16",
                48 * (3 * 10240 * 2 + 48 * 128 * 128 * 2),
            ),
            "sglang": None,  # SGLang counts qwen3_next layers by full_attention_interval alone
            "metrale": ((4, 10240), (48, 128, 128), "float32", "float32", 158_859_264),
        },
    ),
    # 40 layers, full attention every 4th: 30 GDN layers; Hk 16, Hv 32, dk = dv = 128, K 4; the
    # config's mamba_ssm_dtype float32 rules the SSM state in both servers. Peers notes §3.2:
    # 49,152 + 2,097,152 = 2,146,304 B per layer at tp 1.
    "qwen3.5-35b-a3b.json": (
        30,
        {
            "vllm": (
                (3, 2 * 16 * 128 + 32 * 128),
                (32, 128, 128),
                "bfloat16",
                "float32",
                30 * (3 * 8192 * 2 + 32 * 128 * 128 * 4),
            ),
            "sglang": (
                (8192, 3),
                (32, 128, 128),
                "bfloat16",
                "float32",
                30 * (8192 * 3 * 2 + 32 * 128 * 128 * 4),
            ),
            "metrale": (
                (4, 8192),
                (32, 128, 128),
                "float32",
                "float32",
                30 * (4 * 8192 * 4 + 32 * 128 * 128 * 4),
            ),
        },
    ),
    # 64 layers, full attention every 4th: 48 GDN layers; Hk 16, Hv 48, dk = dv = 128, K 4.
    "qwen3.5-27b.json": (
        48,
        {
            "vllm": (
                (3, 2 * 16 * 128 + 48 * 128),
                (48, 128, 128),
                "bfloat16",
                "float32",
                48 * (3 * 10240 * 2 + 48 * 128 * 128 * 4),
            ),
            "sglang": (
                (10240, 3),
                (48, 128, 128),
                "bfloat16",
                "float32",
                48 * (10240 * 3 * 2 + 48 * 128 * 128 * 4),
            ),
            "metrale": ((4, 10240), (48, 128, 128), "float32", "float32", 158_859_264),
        },
    ),
    # 27 layers, 20 KDA (kda_layers, 1-based) of 32 heads x 128, K 4: conv 3 x 32 x 128 channels,
    # window first in both servers; the recurrent state is float32 by default. Peers notes §3.2:
    # 73,728 + 2,097,152 = 2,170,880 B per layer.
    "kimi-linear-48b-a3b-instruct.json": (
        20,
        {
            "vllm": (
                (3, 3 * 32 * 128),
                (32, 128, 128),
                "bfloat16",
                "float32",
                20 * (3 * 12288 * 2 + 32 * 128 * 128 * 4),
            ),
            "sglang": (
                (3, 12288),
                (32, 128, 128),
                "bfloat16",
                "float32",
                20 * (3 * 12288 * 2 + 32 * 128 * 128 * 4),
            ),
            "metrale": (
                (4, 12288),
                (32, 128, 128),
                "float32",
                "float32",
                20 * (4 * 12288 * 4 + 32 * 128 * 128 * 4),
            ),
        },
    ),
    # 93 layers, 69 KDA of 96 heads x 128, K 4.
    "kimi-k3.json": (
        69,
        {
            "vllm": (
                (3, 3 * 96 * 128),
                (96, 128, 128),
                "bfloat16",
                "float32",
                69 * (3 * 36864 * 2 + 96 * 128 * 128 * 4),
            ),
            "sglang": (
                (3, 36864),
                (96, 128, 128),
                "bfloat16",
                "float32",
                69 * (3 * 36864 * 2 + 96 * 128 * 128 * 4),
            ),
            "metrale": (
                (4, 36864),
                (96, 128, 128),
                "float32",
                "float32",
                69 * (4 * 36864 * 4 + 96 * 128 * 128 * 4),
            ),
        },
    ),
    # 64 Mamba-1 layers of intermediate_size 8192 (not expand 16 x hidden 4096), d_state 16, K 4.
    # Peers notes §3.2: vLLM 49,152 + 262,144 = 311,296 B, SGLang 49,152 + 524,288 = 573,440 B.
    "falcon-mamba-7b.json": (
        64,
        {
            "vllm": ((3, 8192), (8192, 16), "bfloat16", "bfloat16", 64 * 311_296),
            "sglang": ((8192, 3), (8192, 1, 16), "bfloat16", "float32", 64 * 573_440),
            "metrale": (
                (4, 8192),
                (8192, 16),
                "float32",
                "float32",
                64 * (4 * 8192 * 4 + 8192 * 16 * 4),
            ),
        },
    ),
    # 24 jet layers of 28; 12 heads, key dim 96, value dim int(96 x 2.6666666667) = 256, K 4:
    # conv 12 x 256 + 2 x 12 x 96 channels.
    "jet-nemotron-2b.json": (
        24,
        {
            "vllm": None,  # no jet_nemotron in vLLM 0.33.0
            "sglang": (
                (12 * 256 + 2 * 12 * 96, 3),
                (12, 256, 96),
                "bfloat16",
                "float32",
                24 * (5376 * 3 * 2 + 12 * 256 * 96 * 4),
            ),
            "metrale": (
                (4, 5376),
                (12, 256, 96),
                "float32",
                "float32",
                24 * (4 * 5376 * 4 + 12 * 256 * 96 * 4),
            ),
        },
    ),
    # Every hybrid_override_pattern entry is * or -: no Mamba layer, no byte. Its architecture,
    # NemotronVLForConditionCausalLM (sic), is in neither vLLM's registry nor an SGLang
    # EntryClass: both servers refuse it (issue 27); the reference reads the geometry.
    "nemotron-dense-siglip2.json": (
        0,
        {
            "vllm": None,
            "sglang": None,
            "metrale": ((), (), "float32", "float32", 0),
        },
    ),
    "minimax-m1.json": (0, {"vllm": None, "sglang": None, "metrale": None}),
    # ZAYA1 (SGLang only): two conv tensors a layer, so no compatibility shapes. SGLang's own
    # ZayaConfig.mamba2_cache_params, run from the 0.5.23 wheel: conv (1280, 2) + prev_hs
    # (2048, 1) bfloat16 = 9,216 B on each of 40 CCA layers (80 half-layers, even ones).
    "zaya1-8b-legacy.json": (
        40,
        {
            "vllm": None,  # no zaya in vLLM 0.33.0
            "sglang": ((), (), "bfloat16", "float32", 40 * 9_216),
            "metrale": ((), (), "float32", "float32", 40 * (3 * 1280 * 4 + 2 * 2048 * 4)),
        },
    ),
    # 24 lightning layers of 32 heads x 128 (lightning_nkv, lightning_head_dim); MiniCPM4
    # attention at 0, 9, 16, 17, 22, 29, 30, 31. SGLang keeps the (H, d, d) state in float32
    # beside a 0-element conv state; vLLM 0.33.0 has no minicpm_sala model.
    "minicpm-sala.json": (
        24,
        {
            "vllm": None,
            "sglang": ((), (), "bfloat16", "float32", 24 * 32 * 128 * 128 * 4),
            "metrale": ((), (), "float32", "float32", 24 * 32 * 128 * 128 * 4),
        },
    ),
    # The same run: SGLang ignores layer_types and takes the even layers of 40, 20 of them.
    "zaya1-8b.json": (
        20,
        {
            "vllm": None,
            "sglang": ((), (), "bfloat16", "float32", 20 * 9_216),
            "metrale": ((), (), "float32", "float32", 20 * (3 * 1280 * 4 + 2 * 2048 * 4)),
        },
    ),
}


def config(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((CONFIGS / name).read_text(encoding="utf-8"))
    return loaded


def test_every_fixture_is_documented_and_covered() -> None:
    names = sorted(path.name for path in CONFIGS.glob("*.json"))
    assert names == sorted(CHECKPOINTS) == sorted(EXPECTED)
    families = {
        FAMILY_OF[name] if name in FAMILY_OF else config(name)["model_type"] for name in names
    }
    assert families - {"minimax_m1"} | NO_FIXTURE == set(FAMILIES)
    assert not NO_FIXTURE & families
    provenance = (CONFIGS / "PROVENANCE.md").read_text(encoding="utf-8")
    # The nine fixtures that predate PROVENANCE.md are described here alone.
    later = [name for name in names if name not in list(CHECKPOINTS)[:9]]
    assert len(later) == len(names) - 9
    assert all(f"| {name} |" in provenance for name in later)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_state(name: str, layout: str) -> None:
    layers, by_layout = EXPECTED[name]
    expected = by_layout[layout]
    if expected is None:
        with pytest.raises(ModelConfigError, match=r"SGLang 0\.5\.23|vLLM 0\.33\.0"):
            ssm_state(config(name), layout=layout)
        return
    conv_shape, ssm_shape, conv_dtype, ssm_dtype, per_sequence = expected
    state = ssm_state(CONFIGS / name, layout=layout)
    assert state.family == FAMILY_OF.get(name, config(name).get("model_type"))
    assert state.model_type == config(name).get("model_type", state.family)
    assert (state.ssm_layers, len(state.layer_indices)) == (layers, layers)
    assert (state.conv_shape, state.ssm_shape) == (conv_shape, ssm_shape)
    assert (state.conv_dtype, state.ssm_dtype) == (conv_dtype, ssm_dtype)
    assert state.per_sequence_bytes == per_sequence
    assert state.per_layer_bytes is not None
    assert state.per_layer_bytes * layers == per_sequence
    if state.conv_shape or not layers:
        assert state.per_layer_bytes == (state.conv_bytes + state.ssm_bytes if layers else 0)
    else:
        assert (state.conv_bytes, state.ssm_bytes) == (0, 0)
        assert state.per_layer_bytes == state.groups[0].per_layer_bytes
    assert (state.tp_size, state.layout, state.speculative_tokens) == (1, layout, 0)
    assert state.source == os.fspath(CONFIGS / name)


def test_metrale_worked_example() -> None:
    state = ssm_state(CONFIGS / "metrale-gdn-48.json", layout="metrale")
    assert state.ssm_bytes == 48 * 128 * 128 * 4 == 3_145_728
    assert state.conv_bytes == (2 * 16 * 128 + 48 * 128) * 4 * 4 == 163_840
    assert state.per_sequence_bytes == 158_859_264
    assert (state.conv_dtype_rule, state.ssm_dtype_rule) == ("metrale: float32", "metrale: float32")


def test_nemotron_nano_9b_v2_float32_ssm_state_is_the_published_33_75_gib() -> None:
    # vllm-project/vllm#23230: 27 Mamba layers x 128 heads x 80 x d_state 128, float32.
    state = ssm_state(CONFIGS / "nemotron-nano-9b-v2.json")
    assert state.ssm_layers == 27
    assert state.ssm_dtype == "float32"
    assert (
        state.ssm_dtype_rule
        == "vLLM NemotronH default float32 (vllm/model_executor/models/config.py:812-848)"
    )
    assert state.ssm_bytes * state.ssm_layers == 27 * 128 * 80 * 128 * 4
    assert state.ssm_bytes * state.ssm_layers * 256 == 33.75 * 2**30
    assert state.layer_indices == (
        0, 2, 4, 6, 7, 9, 11, 13, 16, 18, 20, 23, 25, 27, 29, 32, 34, 36, 38, 41, 43, 44, 46, 48,
        50, 52, 54,
    )  # fmt: skip


def test_jamba_layers_skip_the_attention_period() -> None:
    state = ssm_state(config("jamba-mini-1.5.json"))
    assert state.layer_indices == tuple(i for i in range(32) if i not in (4, 12, 20, 28))


def test_granite_layers_skip_attention() -> None:
    state = ssm_state(config("granite-4.0-h-tiny.json"))
    assert state.layer_indices == tuple(i for i in range(40) if i not in (5, 15, 25, 35))


def test_qwen3_next_layers_skip_every_fourth() -> None:
    state = ssm_state(config("qwen3-next-80b-a3b-instruct.json"))
    assert state.layer_indices == tuple(i for i in range(48) if i % 4 != 3)


# --- tensor parallelism ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "tp", "conv_shape", "ssm_shape"),
    [
        ("mamba-2.8b-hf.json", 2, (3, 2560), (2560, 16)),
        ("mamba-2.8b-hf.json", 8, (3, 640), (640, 16)),
        ("jamba-mini-1.5.json", 4, (3, 2048), (2048, 16)),
        ("jamba-mini-1.5.json", 8, (3, 1024), (1024, 16)),
        # 8 groups divide 2, 4, 8: everything shards.
        ("mamba-codestral-7b.json", 2, (3, 10240 // 2), (64, 64, 128)),
        ("mamba-codestral-7b.json", 4, (3, 10240 // 4), (32, 64, 128)),
        ("mamba-codestral-7b.json", 8, (3, 10240 // 8), (16, 64, 128)),
        ("nemotron-nano-9b-v2.json", 8, (3, 12288 // 8), (16, 80, 128)),
        # One group is replicated to tp groups: conv channels (d_inner + 2 * tp * d_state) / tp.
        ("falcon-h1-7b-instruct.json", 2, (3, (3072 + 2 * 2 * 256) // 2), (12, 128, 256)),
        ("falcon-h1-7b-instruct.json", 4, (3, (3072 + 2 * 4 * 256) // 4), (6, 128, 256)),
        ("granite-4.0-h-tiny.json", 4, (3, (3072 + 2 * 4 * 128) // 4), (12, 64, 128)),
        ("zamba2-2.7b.json", 8, (3, (5120 + 2 * 8 * 64) // 8), (10, 64, 64)),
        ("qwen3-next-80b-a3b-instruct.json", 8, (3, 8192 // 8), (4, 128, 128)),
        ("qwen3-next-80b-a3b-instruct.json", 16, (3, 8192 // 16), (2, 128, 128)),
    ],
)
def test_tensor_parallel_shapes(
    name: str, tp: int, conv_shape: tuple[int, ...], ssm_shape: tuple[int, ...]
) -> None:
    state = ssm_state(config(name), tp_size=tp)
    assert (state.conv_shape, state.ssm_shape, state.tp_size) == (conv_shape, ssm_shape, tp)
    one = ssm_state(config(name))
    assert state.ssm_layers == one.ssm_layers
    assert state.ssm_bytes * tp == one.ssm_bytes


@pytest.mark.parametrize(
    ("name", "tp", "message"),
    [
        (
            "mamba-2.8b-hf.json",
            3,
            "mamba config: field 'intermediate_size': tp_size 3 does not divide 5120; "
            "the servers shard it evenly",
        ),
        (
            "mamba-codestral-7b.json",
            3,
            "mamba2 config: field 'num_heads': tp_size 3 does not divide 128; "
            "the servers shard it evenly",
        ),
        (
            "mamba-codestral-7b.json",
            16,
            "mamba2 config: field 'n_groups': tp_size 16 does not divide 8 groups, "
            "and only 1 group is replicated",
        ),
        (
            "falcon-h1-7b-instruct.json",
            16,
            "falcon_h1 config: field 'mamba_n_heads': tp_size 16 does not divide 24; "
            "the servers shard it evenly",
        ),
        (
            "qwen3-next-80b-a3b-instruct.json",
            32,
            "qwen3_next config: field 'linear_num_key_heads': tp_size 32 does not divide 16; "
            "the servers shard it evenly",
        ),
        (
            "zamba2-2.7b.json",
            3,
            "zamba2 config: field 'n_mamba_heads': tp_size 3 does not divide 80; "
            "the servers shard it evenly",
        ),
    ],
)
@pytest.mark.parametrize("layout", ["vllm", "metrale"])
def test_tensor_parallel_refusals(name: str, tp: int, message: str, layout: str) -> None:
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(CONFIGS / name, tp_size=tp, layout=layout)
    assert str(caught.value) == f"{os.fspath(CONFIGS / name)!a}: {message}"
    assert caught.value.path == os.fspath(CONFIGS / name)
    assert caught.value.family == config(name)["model_type"]


@pytest.mark.parametrize("tp", [1, 2, 4, 8])
@pytest.mark.parametrize(
    "name",
    [name for name, (_, layouts) in sorted(EXPECTED.items()) if None not in layouts.values()],
)
def test_vllm_and_sglang_bytes_agree_for_equal_dtypes(name: str, tp: int) -> None:
    if tp == 8 and name in ("falcon-h1-7b-instruct.json", "granite-4.0-h-tiny.json"):
        # 12 attention heads: both servers refuse tp 8 (test_attention_heads_must_split).
        return
    states = [
        ssm_state(config(name), tp_size=tp, layout=layout, conv_dtype="bf16", ssm_dtype="fp32")
        for layout in ("vllm", "sglang")
    ]
    vllm, sglang = states
    assert vllm.per_sequence_bytes == sglang.per_sequence_bytes
    assert (vllm.conv_bytes, vllm.ssm_bytes) == (sglang.conv_bytes, sglang.ssm_bytes)
    # SGLang keeps a KDA conv state window first, as vLLM does (KimiLinearStateShape).
    kda = [group.kind for group in vllm.groups] == ["kda"]
    assert vllm.conv_shape == (sglang.conv_shape if kda else sglang.conv_shape[::-1])
    assert vllm.layer_indices == sglang.layer_indices


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


def test_mamba1_sglang_ssm_state_has_a_unit_head_dim() -> None:
    state = ssm_state(config("mamba-2.8b-hf.json"), tp_size=4, layout="sglang")
    assert (state.conv_shape, state.ssm_shape) == ((1280, 3), (1280, 1, 16))


def test_zero_ssm_layers_refuse_nothing_on_the_recurrent_side() -> None:
    granite = config("granite-4.0-h-tiny.json") | {"mamba_n_groups": 5}
    granite["layer_types"] = ["attention"] * 40
    for layout in LAYOUTS:
        # 4 ranks cannot split 5 groups, but no mixer is built, so nothing is refused.
        state = ssm_state(granite, tp_size=4, layout=layout)
        assert (state.family, state.ssm_layers, state.layer_indices) == ("granitemoehybrid", 0, ())
        assert (state.conv_shape, state.ssm_shape) == ((), ())
        assert state.per_layer_bytes == state.per_sequence_bytes == 0


# --- speculative decoding -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "window"),
    [
        ("mamba-codestral-7b.json", 3 + 3),
        ("nemotron-nano-9b-v2.json", 3 + 3),
        ("qwen3-next-80b-a3b-instruct.json", 3 + 3),
        # vLLM's mamba1_state_shape takes no num_spec.
        ("mamba-2.8b-hf.json", 3),
        ("jamba-mini-1.5.json", 3),
    ],
)
def test_speculative_tokens_widen_the_vllm_conv_window(name: str, window: int) -> None:
    state = ssm_state(config(name), speculative_tokens=3)
    assert state.conv_shape[0] == window
    assert state.speculative_tokens == 3
    assert state.ssm_shape == ssm_state(config(name)).ssm_shape


@pytest.mark.parametrize("layout", ["sglang", "metrale"])
def test_speculative_tokens_leave_sglang_and_metrale_alone(layout: str) -> None:
    qwen = config("qwen3-next-80b-a3b-instruct.json")
    assert ssm_state(qwen, layout=layout, speculative_tokens=5).per_sequence_bytes == (
        ssm_state(qwen, layout=layout).per_sequence_bytes
    )


# --- dtypes ---------------------------------------------------------------------------------------


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


# --- the config's forms and vocabularies ----------------------------------------------------------


class _Exported:
    """Stands in for a transformers config: only ``to_dict()``."""

    def __init__(self, fields: dict[str, Any]) -> None:
        self.fields = fields

    def to_dict(self) -> dict[str, Any]:
        return dict(self.fields)


def test_every_form_of_config_reads_the_same(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(
        (CONFIGS / "nemotron-nano-9b-v2.json").read_text(encoding="utf-8"), encoding="utf-8"
    )
    forms: list[Any] = [
        config("nemotron-nano-9b-v2.json"),
        _Exported(config("nemotron-nano-9b-v2.json")),
        tmp_path,
        str(tmp_path),
        tmp_path / "config.json",
        os.fspath(tmp_path / "config.json"),
    ]
    states = [ssm_state(form) for form in forms]
    assert {state.per_sequence_bytes for state in states} == {
        27 * (3 * 12288 * 2 + 128 * 80 * 128 * 4)
    }
    assert [state.source for state in states] == [None, None] + [
        os.fspath(tmp_path / "config.json")
    ] * 4


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


@pytest.mark.parametrize(("layout", "layers"), [("vllm", 47), ("sglang", 36), ("metrale", 47)])
def test_qwen3_next_layer_types_that_contradict_the_interval(layout: str, layers: int) -> None:
    # Issue 27: transformers' Qwen3NextConfig keeps a given layer_types, which vLLM's model reads
    # (configuration_qwen3_next.py:127-137; vllm/model_executor/models/qwen3_next.py:893-913);
    # SGLang's class drops it and counts by the interval (configs/qwen3_next.py:183-269).
    qwen = config("qwen3-next-80b-a3b-instruct.json") | {
        "layer_types": ["linear_attention"] * 47 + ["full_attention"]
    }
    assert ssm_state(qwen, layout=layout).ssm_layers == layers


def test_qwen3_next_layer_types_alone_are_read_except_under_sglang() -> None:
    qwen = config("qwen3-next-80b-a3b-instruct.json")
    del qwen["full_attention_interval"]
    qwen["layer_types"] = ["linear_attention"] * 47 + ["full_attention"]
    assert ssm_state(qwen).ssm_layers == 47
    assert ssm_state(qwen, layout="metrale").ssm_layers == 47
    with pytest.raises(ModelConfigError, match="counts linear layers by it alone"):
        ssm_state(qwen, layout="sglang")


def test_falcon_h1_without_d_ssm_uses_expand_times_hidden() -> None:
    falcon = config("falcon-h1-7b-instruct.json") | {"mamba_d_ssm": None, "mamba_d_head": "auto"}
    state = ssm_state(falcon)
    # d_inner 2 x 3072 = 6144: 24 heads of 256.
    assert (state.conv_shape, state.ssm_shape) == ((3, 6144 + 2 * 256), (24, 256, 256))


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


def test_plain_transformer_has_no_state() -> None:
    llama = {
        "model_type": "llama",
        "num_hidden_layers": 32,
        "hidden_size": 4096,
        "layer_types": ["full_attention"] * 32,
        "torch_dtype": "bfloat16",
    }
    for layout in LAYOUTS:
        state = ssm_state(llama, layout=layout, tp_size=3)
        assert (state.family, state.model_type, state.ssm_layers) == ("transformer", "llama", 0)
        assert (state.conv_shape, state.ssm_shape, state.per_sequence_bytes) == ((), (), 0)


def test_exact_integer_arithmetic_for_huge_fields() -> None:
    mamba = config("mamba-2.8b-hf.json") | {"state_size": 2**63 - 1}
    state = ssm_state(mamba, layout="metrale")
    assert state.ssm_bytes == 5120 * (2**63 - 1) * 4
    assert state.per_sequence_bytes == 64 * (4 * 5120 * 4 + 5120 * (2**63 - 1) * 4)
    with pytest.raises(ModelConfigError, match=r"'state_size': must be at most 2\*\*63 - 1, got"):
        ssm_state(mamba | {"state_size": 2**63})


def test_as_dict_is_json_ready_and_the_state_is_frozen() -> None:
    state = ssm_state(CONFIGS / "jamba-mini-1.5.json")
    data = state.as_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["conv_shape"] == [3, 8192]
    assert data["source"] == os.fspath(CONFIGS / "jamba-mini-1.5.json")
    assert set(data) == {field.name for field in dataclasses.fields(SsmState)}
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.tp_size = 2  # type: ignore[misc]
    assert not hasattr(state, "__dict__")


# --- transformers' own configs --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model_type", "overrides", "layers", "conv_shape", "ssm_shape", "per_sequence"),
    [
        # hidden 768 x expand 2, d_state 16, K 4, 32 layers.
        ("mamba", {}, 32, (3, 1536), (1536, 16), 32 * (3 * 1536 * 2 + 1536 * 16 * 2)),
        (
            "mamba",
            {"hidden_size": 1024, "state_size": 32, "conv_kernel": 3, "num_hidden_layers": 7},
            7,
            (2, 2048),
            (2048, 32),
            7 * (2 * 2048 * 2 + 2048 * 32 * 2),
        ),
        (
            "mamba2",
            {},
            64,
            (3, 8192 + 2 * 8 * 128),
            (128, 64, 128),
            64 * (3 * 10240 * 2 + 128 * 64 * 128 * 2),
        ),
        (
            "mamba2",
            {
                "hidden_size": 2048,
                "num_heads": 64,
                "head_dim": 64,
                "n_groups": 1,
                "state_size": 64,
                "num_hidden_layers": 5,
            },
            5,
            (3, 4096 + 2 * 1 * 64),
            (64, 64, 64),
            5 * (3 * 4224 * 2 + 64 * 64 * 64 * 2),
        ),
        ("jamba", {}, 28, (3, 8192), (8192, 16), 28 * (3 * 8192 * 2 + 8192 * 16 * 2)),
        (
            "jamba",
            {
                "num_hidden_layers": 13,
                "attn_layer_period": 3,
                "attn_layer_offset": 2,
                "mamba_d_state": 8,
                "hidden_size": 1024,
            },
            9,
            (3, 2048),
            (2048, 8),
            9 * (3 * 2048 * 2 + 2048 * 8 * 2),
        ),
        # transformers 5's default layers_block_type has one linear_attention layer; its
        # mamba_ssm_cache_dtype defaults to float32.
        (
            "nemotron_h",
            {},
            1,
            (3, 128 * 64 + 2 * 8 * 128),
            (128, 64, 128),
            1 * (3 * 10240 * 2 + 128 * 64 * 128 * 4),
        ),
        (
            "nemotron_h",
            {
                "hybrid_override_pattern": "M*M-MEM",
                "mamba_num_heads": 48,
                "mamba_head_dim": 32,
                "n_groups": 2,
                "ssm_state_size": 64,
            },
            4,
            (3, 48 * 32 + 2 * 2 * 64),
            (48, 32, 64),
            4 * (3 * 1792 * 2 + 48 * 32 * 64 * 4),
        ),
        # mamba_d_ssm 1024 over 128 heads: head dim "auto" = 8.
        (
            "falcon_h1",
            {},
            32,
            (3, 1024 + 2 * 1 * 256),
            (128, 8, 256),
            32 * (3 * 1536 * 2 + 128 * 8 * 256 * 2),
        ),
        (
            "falcon_h1",
            {
                "mamba_d_ssm": None,
                "hidden_size": 1024,
                "mamba_n_heads": 32,
                "mamba_n_groups": 2,
                "num_hidden_layers": 9,
            },
            9,
            (3, 2048 + 2 * 2 * 256),
            (32, 64, 256),
            9 * (3 * 3072 * 2 + 32 * 64 * 256 * 2),
        ),
        (
            "granitemoehybrid",
            {},
            32,
            (3, 8192 + 2 * 1 * 256),
            (128, 64, 256),
            32 * (3 * 8704 * 2 + 128 * 64 * 256 * 2),
        ),
        (
            "granitemoehybrid",
            {
                "layer_types": ["mamba", "attention", "mamba"],
                "num_hidden_layers": 3,
                "hidden_size": 512,
                "mamba_n_heads": 16,
                "mamba_n_groups": 4,
            },
            2,
            (3, 1024 + 2 * 4 * 256),
            (16, 64, 256),
            2 * (3 * 3072 * 2 + 16 * 64 * 256 * 2),
        ),
        # transformers' default: 54 layers, 8 heads of 5120 / 8 = 640, d_state 64.
        (
            "zamba2",
            {},
            54,
            (3, 5120 + 2 * 1 * 64),
            (8, 640, 64),
            54 * (3 * 5248 * 2 + 8 * 640 * 64 * 2),
        ),
        (
            "zamba2",
            {
                "layers_block_type": ["mamba", "hybrid", "mamba"],
                "num_hidden_layers": 3,
                "n_mamba_heads": 40,
                "mamba_ngroups": 2,
                "mamba_d_state": 32,
            },
            3,
            (3, 5120 + 2 * 2 * 32),
            (40, 128, 32),
            3 * (3 * 5248 * 2 + 40 * 128 * 32 * 2),
        ),
        (
            "qwen3_next",
            {},
            36,
            (3, 2 * 16 * 128 + 32 * 128),
            (32, 128, 128),
            36 * (3 * 8192 * 2 + 32 * 128 * 128 * 2),
        ),
        (
            "qwen3_next",
            {
                "num_hidden_layers": 12,
                "full_attention_interval": 3,
                "linear_num_value_heads": 64,
                "linear_num_key_heads": 8,
                "linear_key_head_dim": 64,
            },
            8,
            (3, 2 * 8 * 64 + 64 * 128),
            (64, 128, 64),
            8 * (3 * 9216 * 2 + 64 * 128 * 64 * 2),
        ),
    ],
)
def test_transformers_to_dict(
    model_type: str,
    overrides: dict[str, Any],
    layers: int,
    conv_shape: tuple[int, ...],
    ssm_shape: tuple[int, ...],
    per_sequence: int,
) -> None:
    transformers = pytest.importorskip("transformers")
    exported = transformers.AutoConfig.for_model(model_type, **overrides)
    state = ssm_state(exported.to_dict())
    assert (state.family, state.ssm_layers) == (model_type, layers)
    assert (state.conv_shape, state.ssm_shape) == (conv_shape, ssm_shape)
    assert state.per_sequence_bytes == per_sequence
    assert ssm_state(exported) == state  # the object itself, through to_dict()


# --- refusals -------------------------------------------------------------------------------------


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


def test_unknown_model_type_with_ssm_fields_lists_the_families() -> None:
    with pytest.raises(ModelConfigError) as caught:
        ssm_state({"model_type": "rwkv7", "num_hidden_layers": 32, "mamba_d_state": 128})
    assert str(caught.value) == (
        "field 'model_type': unknown model_type 'rwkv7' has SSM fields ('mamba_d_state'); "
        "supported families: alice_ai, bailing_hybrid, falcon_h1, falcon_mamba, gigachat3_5, "
        "glm5_next, granitemoehybrid, inkling, interns2_mobius, jamba, jet_nemotron, "
        "kimi_linear, lfm2, lfm2_moe, lfm2_vl, mamba, mamba2, minicpm_sala, minicpmv4_6, "
        "nemotron_h, nemotron_h_puzzle, olmo_hybrid, qwen3_5, qwen3_5_moe, qwen3_next, qwen4_exp, "
        "zamba2, zaya"
    )
    assert (caught.value.field, caught.value.family) == ("model_type", None)


@pytest.mark.parametrize(
    "fields",
    [
        {"model_type": "rwkv7", "num_hidden_layers": 16, "layer_types": ["conv", "full_attention"]},
        {
            "model_type": "rwkv7_vl",
            "llm_config": {"model_type": "rwkv7", "linear_num_key_heads": 16},
            "num_hidden_layers": 16,
        },
        {"model_type": "x", "hybrid_override_pattern": "M*", "num_hidden_layers": 2},
        {"model_type": "mystery"},
        {"model_type": "llama", "num_hidden_layers": 32.0},
    ],
)
def test_unknown_model_types_are_refused(fields: dict[str, Any]) -> None:
    with pytest.raises(ModelConfigError, match="supported families: alice_ai, bailing_hybrid, "):
        ssm_state(fields)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"num_hidden_layers": 2}, "field 'model_type': missing"),
        ({"model_type": 7}, "field 'model_type': must be a string, got 7"),
    ],
)
def test_model_type_must_be_a_string(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(fields)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("name", "family"), [("jamba-mini-1.5.json", "jamba"), ("zamba2-2.7b.json", "zamba2")]
)
def test_sglang_refuses_families_it_does_not_have(name: str, family: str) -> None:
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(config(name), layout="sglang")
    assert str(caught.value) == (
        f"{family} config: field 'model_type': SGLang 0.5.23 has no {family} model "
        "(no config with mamba2_cache_params); use layout vllm or metrale"
    )


def test_file_errors(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.json"
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(missing)
    assert str(caught.value) == f"cannot read {os.fspath(missing)!a}: No such file or directory"
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(tmp_path)
    assert str(caught.value) == f"{os.fspath(tmp_path)!a}: directory has no config.json"
    broken = tmp_path / "broken.json"
    broken.write_text('{"model_type": "mamba",\n  "state_size": }', encoding="utf-8")
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(broken)
    assert str(caught.value) == (
        f"{os.fspath(broken)!a}: malformed JSON: Expecting value at line 2 column 17"
    )
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(listed)
    assert str(caught.value) == f"{os.fspath(listed)!a}: JSON is list, not an object"
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe{")
    with pytest.raises(ModelConfigError, match="cannot read"):
        ssm_state(binary)


# What ssm_state says of a path it cannot read: "cannot read 'PATH': reason", the OS's whole
# reason (os.strerror, the C library's text), a ModelConfigError and never a bare OSError; the
# same form as the command line's resolver (decode_ring/snapshots.py on the CLI branch).


def test_a_path_too_long_is_a_config_error_not_an_oserror(tmp_path: Path) -> None:
    # Path.is_dir() raises ENAMETOOLONG rather than answering False.
    long = tmp_path / ("x" * 300) / "config.json"
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(long)
    assert str(caught.value) == (
        f"cannot read {os.fspath(long)!a}: {os.strerror(errno.ENAMETOOLONG)}"
    )
    assert caught.value.path == os.fspath(long)


def test_a_looped_config_json_symlink_says_it_is_a_loop(tmp_path: Path) -> None:
    looped = tmp_path / "config.json"
    looped.symlink_to(looped)
    expected = f"{os.strerror(errno.ELOOP)} (a symlink loop)"
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(tmp_path)  # the directory has a config.json: it cannot be read
    assert str(caught.value) == f"cannot read {os.fspath(looped)!a}: {expected}"
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(looped)
    assert str(caught.value) == f"cannot read {os.fspath(looped)!a}: {expected}"


def test_the_reason_a_file_cannot_be_read_is_whole(tmp_path: Path) -> None:
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe{")
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(binary)
    # Python's own UnicodeDecodeError text, 83 characters: nothing cut.
    assert str(caught.value) == (
        f"cannot read {os.fspath(binary)!a}: not UTF-8 text ('utf-8' codec can't decode byte "
        "0xff in position 0: invalid start byte)"
    )
    directory = tmp_path / "holder"
    (directory / "config.json").mkdir(parents=True)
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(directory)
    inner = os.fspath(directory / "config.json")
    assert str(caught.value) == f"cannot read {inner!a}: {os.strerror(errno.EISDIR)}"
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(f"{tmp_path}/a\0b")
    assert (
        str(caught.value) == f"cannot read {f'{tmp_path}/a' + chr(0) + 'b'!a}: embedded null byte"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # json's own messages end in "at" before the position it appends.
        ('{"a": "unterminated', "Unterminated string starting at line 1 column 7"),
        ('{"a": "\x01"}', "Invalid control character at line 1 column 8"),
        ('{"a": 1}\n{', "Extra data at line 2 column 1"),
    ],
)
def test_malformed_json_names_the_place_once(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(path)
    assert str(caught.value) == f"{os.fspath(path)!a}: malformed JSON: {message}"


def test_an_empty_path_is_refused_not_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "config.json").write_text(json.dumps(config("mamba-2.8b-hf.json")))
    monkeypatch.chdir(tmp_path)
    assert ssm_state(".").ssm_layers == 64
    # (Path("") is Path("."), the directory named on purpose; only the string can be empty.)
    with pytest.raises(ModelConfigError) as caught:
        ssm_state("")
    assert str(caught.value) == "empty path; give a config.json or a snapshot directory holding one"
    assert caught.value.path == ""


def test_a_file_path_with_odd_characters_stays_on_one_line(tmp_path: Path) -> None:
    odd = tmp_path / "a\nb\u00e9"
    odd.mkdir()
    with pytest.raises(ModelConfigError) as caught:
        ssm_state(odd)
    assert "\n" not in str(caught.value)
    assert str(caught.value).isascii()


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


@pytest.mark.parametrize("bad", [None, 42, [("model_type", "mamba")], b"config.json"])
def test_config_of_the_wrong_type(bad: Any) -> None:
    with pytest.raises(TypeError):
        ssm_state(bad)


def test_to_dict_must_return_a_mapping() -> None:
    class Odd:
        def to_dict(self) -> list[int]:
            return [1]

    with pytest.raises(ModelConfigError, match=r"config.to_dict\(\) returned list"):
        ssm_state(Odd())  # type: ignore[arg-type]


# --- fuzz -----------------------------------------------------------------------------------------

_FIELD_NAMES = sorted(
    {key for name in EXPECTED for key in config(name)}
    | {
        "layers_block_type",
        "mamba_n_groups",
        "mamba_d_conv",
        "mamba_ssm_dtype",
        "dtype",
        "text_config",
    }
)
_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-3, max_value=300)
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.builds(pow, st.just(10), st.just(5000))  # past the digits str() takes
    | st.floats(allow_nan=True)
    | st.sampled_from(["mamba", "attention", "linear_attention", "hybrid", "M-*E", "auto", "bf16"])
    | st.text(max_size=8)
)
_JSON = st.recursive(
    _LEAVES,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=6,
)
_MODEL_TYPES = st.sampled_from([*FAMILIES, "llama", "bamba", ""]) | _LEAVES


def _one_line(error: ModelConfigError) -> None:
    assert "\n" not in str(error) and str(error).isascii()


def _check(state: SsmState) -> None:
    sizes = {"bfloat16": 2, "float16": 2, "float32": 4}
    assert state.ssm_layers == len(state.layer_indices) >= 0
    assert state.layer_indices == tuple(
        sorted(index for group in state.groups for index in group.layer_indices)
    )
    assert state.per_sequence_bytes == sum(group.bytes for group in state.groups)
    for group in state.groups:
        assert group.layer_indices and group.bytes == group.per_layer_bytes * len(
            group.layer_indices
        )
        assert group.per_layer_bytes == sum(tensor.bytes for tensor in group.tensors)
        for tensor in group.tensors:
            assert all(isinstance(size, int) and size >= 0 for size in tensor.shape)
            assert tensor.bytes == math.prod(tensor.shape) * sizes[tensor.dtype]
    if state.conv_shape:
        assert state.per_layer_bytes == state.conv_bytes + state.ssm_bytes
        assert state.conv_bytes == math.prod(state.conv_shape) * sizes[state.conv_dtype]
    assert state.conv_dtype in sizes and state.ssm_dtype in sizes
    json.dumps(state.as_dict())


@settings(max_examples=75, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.dictionaries(st.sampled_from(_FIELD_NAMES), _JSON, max_size=10),
    _MODEL_TYPES,
    st.integers(min_value=1, max_value=16),
    st.sampled_from(LAYOUTS),
)
def test_fuzz_arbitrary_configs(
    fields: dict[str, Any], model_type: Any, tp: int, layout: str
) -> None:
    try:
        state = ssm_state(fields | {"model_type": model_type}, tp_size=tp, layout=layout)
    except ModelConfigError as error:
        _one_line(error)
    else:
        _check(state)


@settings(max_examples=75, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(sorted(EXPECTED)),
    st.dictionaries(st.sampled_from(_FIELD_NAMES), _JSON, min_size=1, max_size=3),
    st.integers(min_value=1, max_value=16),
    st.sampled_from(LAYOUTS),
    st.integers(min_value=0, max_value=4),
)
def test_fuzz_fields_of_a_real_config(
    name: str, changes: dict[str, Any], tp: int, layout: str, spec: int
) -> None:
    try:
        state = ssm_state(
            config(name) | changes, tp_size=tp, layout=layout, speculative_tokens=spec
        )
    except ModelConfigError as error:
        _one_line(error)
    else:
        _check(state)


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
