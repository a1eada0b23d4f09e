"""Every fixture's state: each real checkpoint in ``tests/configs``, in each server's layout, from
the library and from ``decode-ring state``.

Every expected number is written out from the checkpoint's published config values (the products
spell the fields: layers x (conv window x channels x bytes + heads x head dim x d_state x bytes)),
or from the wheels' code (vllm-0.33.0, sglang-0.5.23, cited file:lines; the same cases run through
the servers' own functions in tools/peer_agreement), never computed by the code under test.
Families with no public checkpoint (tests/configs/PROVENANCE.md) are read from transformers 5.23's
own ``to_dict()``, or from configs written out from the fields the wheels read
(tests/configs/written/, not released checkpoints).
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from decode_ring.models import FAMILIES, LAYOUTS, ModelConfigError, SsmState, ssm_state

from .support import (
    CONFIGS,
    FIELD_NAMES,
    JSON_VALUES,
    assert_consistent,
    assert_one_line,
    config,
    run,
    run_json,
    usage_error,
)

# Each covered fixture's state at tp 1: layers, then per layout (conv shape, ssm shape, conv
# dtype, ssm dtype, bytes per sequence). None: the layout refuses the config.
Expected = tuple[tuple[int, ...], tuple[int, ...], str, str, int] | None


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
#: transformers 5.23's own to_dict() in tests/test_models_<kind>.py instead.
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


@pytest.mark.usefixtures("cell")
@pytest.mark.parametrize("layout", ["vllm", "sglang", "metrale"])
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_state_runs_on_every_fixture(
    capsys: pytest.CaptureFixture[str], name: str, layout: str
) -> None:
    layers, by_layout = EXPECTED[name]
    args = ("state", "--config", str(CONFIGS / name), "--layout", layout)
    expected = by_layout[layout]
    if expected is None:
        # A layout whose server lacks the family, or a family vLLM removed: one line, exit 2.
        assert "Traceback" not in usage_error(capsys, *args)
        return
    status, report = run_json(capsys, *args)
    assert status == 0
    assert (report["ssm_layers"], report["per_sequence_bytes"]) == (layers, expected[4])
    assert sum(group["bytes"] for group in report["groups"]) == expected[4]
    status, text, _ = run(capsys, *args)
    assert status == 0 and f"({expected[4]:,} B)" in text


@settings(max_examples=75, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(sorted(EXPECTED)),
    st.dictionaries(st.sampled_from(FIELD_NAMES), JSON_VALUES, min_size=1, max_size=3),
    st.integers(min_value=1, max_value=16),
    st.sampled_from(LAYOUTS),
    st.integers(min_value=0, max_value=4),
)
def test_fuzz_fields_of_a_real_config(
    name: str, changes: dict[str, Any], tp: int, layout: str, spec: int
) -> None:
    # Hostile values in a fixture's fields: a typed one-line refusal or a consistent state.
    try:
        state = ssm_state(
            config(name) | changes, tp_size=tp, layout=layout, speculative_tokens=spec
        )
    except ModelConfigError as error:
        assert_one_line(error)
    else:
        assert_consistent(state)
