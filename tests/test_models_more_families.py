"""GLM-5.3-Flash (``glm5_next``), AliceAI (``alice_ai``), GigaChat 3.5 (``gigachat3_5``) and
MiniCPM-SALA (``minicpm_sala``), read as the servers' code reads them.

Expected numbers are written out from the wheels' code (the products spell the fields; the
same cases run through the servers' own functions in tools/peer_agreement), never taken from
the code under test. Only MiniCPM-SALA has a public config (tests/configs/minicpm-sala.json).
glm5_next is read from transformers 5.23's ``Glm5NextConfig().to_dict()``; alice_ai and
gigachat3_5, which transformers lacks, from configs written out from the fields the wheels
read (tests/configs/written/, not released checkpoints).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from decode_ring.models import LAYOUTS, ModelConfigError, TensorParallelSplitError, ssm_state

from .support import run_cli
from .test_models import _JSON, _check, _one_line
from .test_models_families import refusal, tensors

CONFIGS = Path(__file__).parent / "configs"
WRITTEN = CONFIGS / "written"


def written(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((WRITTEN / name).read_text(encoding="utf-8"))
    return loaded


# --- glm5_next: KDA and MLA -----------------------------------------------------------------------


def glm5() -> dict[str, Any]:
    transformers = pytest.importorskip("transformers")
    made: dict[str, Any] = transformers.AutoConfig.for_model("glm5_next").to_dict()
    return made


# transformers' Glm5NextTextConfig defaults: 45 layers, KDA where i % 4 != 3 (34 of them),
# 64 heads of 128, kernel 4; MLA with kv_lora_rank 512 and no RoPE part.
GLM5_KDA = tuple(i for i in range(45) if i % 4 != 3)


def test_glm5_next_from_transformers() -> None:
    config = glm5()
    assert config["text_config"]["model_type"] == "glm5_next_text"
    vllm = ssm_state(config)
    assert (vllm.family, vllm.model_type, vllm.layer_indices) == (
        "glm5_next",
        "glm5_next",
        GLM5_KDA,
    )
    # V:vllm/models/glm5next/common/kda.py:189-202: kda_state_shape(tp, 64, 128, 4, num_spec).
    assert tensors(vllm) == [
        ("kda", "conv", (3, 3 * 64 * 128), "bfloat16", 3 * 3 * 64 * 128 * 2),
        ("kda", "recurrent", (64, 128, 128), "float32", 64 * 128 * 128 * 4),
    ]
    assert tensors(ssm_state(config, speculative_tokens=2, tp_size=8))[0][2] == (5, 3 * 8 * 128)
    # S:sglang/srt/configs/glm5_next.py:256-266: KimiLinearStateShape, window never widened.
    sglang = ssm_state(config, layout="sglang", speculative_tokens=2, tp_size=2)
    assert sglang.layer_indices == GLM5_KDA
    assert tensors(sglang) == [
        ("kda", "conv", (3, 3 * 32 * 128), "bfloat16", 3 * 3 * 32 * 128 * 2),
        ("kda", "recurrent", (32, 128, 128), "float32", 32 * 128 * 128 * 4),
    ]
    attention = vllm.attention
    assert attention is not None and attention.mla
    assert attention.layer_indices == tuple(range(3, 45, 4))
    assert (attention.kv_lora_rank, attention.qk_rope_head_dim, attention.head_dim) == (512, 0, 512)


def test_glm5_next_vllm_lets_the_ssm_dtype_flag_reach_its_kda_state() -> None:
    # Glm5NextLinearAttention.get_state_dtype passes --mamba-ssm-cache-dtype (kda.py:178-187).
    assert ssm_state(glm5(), ssm_dtype="bf16").ssm_dtype == "bfloat16"
    assert "only in float32 or bfloat16" in refusal(glm5(), ssm_dtype="fp16")


def test_glm5_next_text_only_checkpoints_keep_the_fields_at_the_top_level() -> None:
    # transformers' Glm5NextConfig.__post_init__ and SGLang's Glm5NextConfig.__init__ take the
    # top-level keys as the text config when there is no text_config.
    # Issue 27: SGLang serves GLM-5.3-Flash as Glm5NextForConditionalGeneration only (its one
    # EntryClass, sglang/srt/models/glm5_next.py:1979); vLLM has Glm5NextForCausalLM too.
    text = glm5()["text_config"]
    for layout, architecture in (
        ("vllm", "Glm5NextForCausalLM"),
        ("sglang", "Glm5NextForConditionalGeneration"),
    ):
        flat = {**text, "model_type": "glm5_next", "architectures": [architecture]}
        nested = ssm_state(glm5(), layout=layout)
        state = ssm_state(flat, layout=layout)
        assert (state.layer_indices, tensors(state)) == (nested.layer_indices, tensors(nested))
    flat = {**text, "model_type": "glm5_next", "architectures": ["Glm5NextForCausalLM"]}
    assert "field 'architectures'" in refusal(flat, layout="sglang")


def test_glm5_next_without_layer_types_takes_every_fourth_layer_as_attention() -> None:
    text = {key: value for key, value in glm5()["text_config"].items() if key != "layer_types"}
    config = {**text, "model_type": "glm5_next", "num_hidden_layers": 8}
    for layout in ("vllm", "sglang"):
        assert ssm_state(config, layout=layout).layer_indices == (0, 1, 2, 4, 5, 6)


def test_glm5_next_a_given_linear_attn_config_is_read_by_each_server_its_own_way() -> None:
    config = glm5()
    linear = {"kda_layers": [0, 1, 2], "num_heads": 32, "head_dim": 64, "short_conv_kernel_size": 3}
    config["text_config"]["linear_attn_config"] = linear
    # vLLM (transformers' class) folds the geometry into the flat fields, layers by layer_types.
    vllm = ssm_state(config)
    assert vllm.layer_indices == GLM5_KDA
    assert tensors(vllm)[0][2:] == ((2, 3 * 32 * 64), "bfloat16", 2 * 3 * 32 * 64 * 2)
    assert tensors(vllm)[1][2] == (32, 64, 64)
    # SGLang takes it whole: its kda_layers are 0-based layer numbers (glm5_next.py:256-266).
    sglang = ssm_state(config, layout="sglang")
    assert sglang.layer_indices == (0, 1, 2)
    assert tensors(sglang)[1][2] == (32, 64, 64)
    # A partial one: vLLM keeps the flat field for what it leaves out; SGLang needs it.
    del linear["head_dim"]
    assert tensors(ssm_state(config))[1][2] == (32, 128, 128)
    assert refusal(config, layout="sglang") == (
        "glm5_next config: field 'linear_attn_config.head_dim': missing"
    )


def test_written_glm5_next_config_with_its_own_kda_layers() -> None:
    # layer_types makes 0-2 and 4-6 KDA (vLLM); linear_attn_config.kda_layers 0-2, 4, 5 (SGLang).
    path = WRITTEN / "glm5-next-linear-attn-config-written.json"
    # Both: conv (3, 3 * 32 * 128) bfloat16 (vLLM window first, SGLang's too) and (32, 128, 128)
    # float32 per KDA layer.
    per_layer = 3 * 3 * 32 * 128 * 2 + 32 * 128 * 128 * 4
    for layout, layers in (("vllm", (0, 1, 2, 4, 5, 6)), ("sglang", (0, 1, 2, 4, 5))):
        state = ssm_state(path, layout=layout)
        assert state.layer_indices == layers
        assert state.per_sequence_bytes == len(layers) * per_layer
        completed = run_cli("state", "--config", str(path), "--layout", layout, "--json")
        assert completed.returncode == 0, completed.stderr
        assert json.loads(completed.stdout)["per_sequence_bytes"] == state.per_sequence_bytes


def test_glm5_next_hostile_configs() -> None:
    config = glm5()
    text = config["text_config"]
    text["layer_types"] = text["layer_types"][:44]
    assert refusal(config) == (
        "glm5_next config: field 'layer_types': has 44 entries but num_hidden_layers is 45"
    )
    text["layer_types"] = ["linear_attention"] * 44 + ["mamba2"]
    assert "field 'layer_types': entry 44 is 'mamba2'; expected" in refusal(config)
    text["layer_types"] = ["indexed_attention"] * 45
    # No KDA layer: no state, but both servers' shape functions still read the geometry.
    for layout in ("vllm", "sglang"):
        assert ssm_state(config, layout=layout).ssm_layers == 0
    text["linear_num_heads"] = "64"
    assert refusal(config) == (
        "glm5_next config: field 'linear_num_heads': must be an integer, got '64' (str)"
    )
    del text["layer_types"]
    text["linear_num_heads"] = 64
    with pytest.raises(TensorParallelSplitError) as split:
        ssm_state(config, tp_size=3)
    assert str(split.value) == (
        "glm5_next config: field 'linear_num_heads': tp_size 3 does not divide 64; the servers "
        "shard it evenly"
    )
    text["linear_attn_config"] = {"kda_layers": [45], "num_heads": 8, "head_dim": 8}
    assert refusal(config, layout="sglang") == (
        "glm5_next config: field 'linear_attn_config.kda_layers': entry 45 is not a layer number "
        "from 0 to 44"
    )


# --- alice_ai: KDA through Kimi's layer (vLLM only) -----------------------------------------------


def test_alice_ai_written_config() -> None:
    # 8 layers, KDA at the linear_attention entries 0-2 and 4-6; 16 heads of 128, kernel 4.
    config = written("alice-ai-written.json")
    state = ssm_state(config)
    assert state.layer_indices == (0, 1, 2, 4, 5, 6)
    assert tensors(state) == [
        ("kda", "conv", (3, 3 * 16 * 128), "bfloat16", 3 * 3 * 16 * 128 * 2),
        ("kda", "recurrent", (16, 128, 128), "float32", 16 * 128 * 128 * 4),
    ]
    assert state.per_sequence_bytes == 6 * (3 * 6144 * 2 + 16 * 128 * 128 * 4) == 6_512_640
    assert tensors(ssm_state(config, tp_size=2, speculative_tokens=2))[0][2] == (5, 3 * 8 * 128)
    # Kimi's KDA layer and AliceAI's model-level function pass no --mamba-ssm-cache-dtype
    # (V:layers/mamba/gdn/kimi_gdn_linear_attn.py:157-164, alice_ai.py:676-683).
    assert ssm_state(config, ssm_dtype="bf16").ssm_dtype == "float32"
    attention = state.attention
    assert attention is not None and not attention.mla
    assert (attention.layer_indices, attention.num_key_value_heads) == ((3, 7), 4)
    assert "SGLang 0.5.23 has no alice_ai model" in refusal(config, layout="sglang")
    assert ssm_state(config, layout="metrale").layer_indices == (0, 1, 2, 4, 5, 6)


CONFIG_PY = "(vllm/model_executor/models/config.py:29-50)"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        (
            "kda_allow_negative_eigenvalues",
            None,
            f"missing; vLLM 0.33.0 requires false {CONFIG_PY}",
        ),
        ("kda_allow_negative_eigenvalues", 0, f"is 0; vLLM 0.33.0 requires false {CONFIG_PY}"),
        (
            "router_score_function",
            "softmax",
            f"is 'softmax'; vLLM 0.33.0 requires 'sigmoid' {CONFIG_PY}",
        ),
        ("router_bias_correction", 1, f"is 1; vLLM 0.33.0 requires true {CONFIG_PY}"),
        ("block_attn_res_block_size", True, "must be an integer, got True (bool)"),
        ("block_attn_res_block_size", 0, "must be at least 1, got 0"),
        ("num_experts", 0, "must be at least 1, got 0"),
        ("linear_num_value_heads", 8, None),
        ("linear_value_head_dim", 64, None),
    ],
)
def test_alice_ai_refuses_what_vllm_refuses(field: str, value: object, message: str | None) -> None:
    config = written("alice-ai-written.json")
    if value is None:
        del config[field]
    else:
        config[field] = value
    if message is None:
        # _make_kimi_kda_config raises unless key and value heads and dims match (:118-127).
        key_field = field.replace("value", "key")
        message = (
            f"is {value} but {key_field} is {config[key_field]}; vLLM 0.33.0's AliceAI KDA "
            "requires them equal"
        )
    assert refusal(config) == f"alice_ai config: field {field!r}: {message}"


def test_alice_ai_layers_and_split() -> None:
    config = written("alice-ai-written.json")
    config["layer_types"] = ["linear_attention"] * 7 + ["sliding_attention"]
    assert "field 'layer_types': entry 7 is 'sliding_attention'; expected" in refusal(config)
    config["layer_types"] = ["full_attention"] * 8
    # No KDA layer: none of Kimi's checks run, but the model-level shape reads the geometry.
    config["linear_num_value_heads"] = 8
    assert ssm_state(config).ssm_layers == 0
    del config["linear_conv_kernel_dim"]
    assert refusal(config) == "alice_ai config: field 'linear_conv_kernel_dim': missing"
    with pytest.raises(TensorParallelSplitError, match="'linear_num_key_heads': tp_size 32"):
        ssm_state(written("alice-ai-written.json"), tp_size=32)


# --- gigachat3_5: gated delta net and MLA (SGLang only) -------------------------------------------


def test_gigachat3_5_written_configs() -> None:
    # 12 layers, full attention at 3, 7, 11: 9 GDN layers of Hk 8, Hv 16, dk = dv = 128, K 4.
    # S:sglang/srt/configs/gigachat35.py:210-231: Mamba2StateShape with intermediate dv * Hv,
    # n_groups Hk, state dk: conv (dv*Hv + 2*Hk*dk, K - 1), temporal (Hv, dv, dk).
    conv_dim = 128 * 16 + 2 * 8 * 128
    per_layer = conv_dim * 3 * 2 + 16 * 128 * 128 * 4
    for name in ("gigachat3_5-written.json", "gigachat3_5-layer-types-written.json"):
        state = ssm_state(WRITTEN / name, layout="sglang")
        assert state.layer_indices == (0, 1, 2, 4, 5, 6, 8, 9, 10)
        assert tensors(state) == [
            ("gated_delta_net", "conv", (conv_dim, 3), "bfloat16", conv_dim * 3 * 2),
            ("gated_delta_net", "recurrent", (16, 128, 128), "float32", 16 * 128 * 128 * 4),
        ]
        assert state.per_sequence_bytes == 9 * per_layer == 9_658_368
        attention = state.attention
        assert attention is not None and attention.mla
        assert (attention.layer_indices, attention.head_dim) == ((3, 7, 11), 512 + 64)
    assert "vLLM 0.33.0 has no gigachat3_5 model" in refusal(WRITTEN / "gigachat3_5-written.json")
    tp2 = ssm_state(WRITTEN / "gigachat3_5-written.json", layout="sglang", tp_size=2)
    assert tensors(tp2)[0][2] == (conv_dim // 2, 3)


def test_gigachat3_5_layer_rules_and_dtype_hook() -> None:
    config = written("gigachat3_5-written.json")
    del config["full_attention_layers"]
    # Neither layer_types nor full_attention_layers: every layer linear (gigachat35.py:180-186).
    state = ssm_state(config, layout="sglang")
    assert (state.ssm_layers, state.attention) == (12, None)
    # mamba2_state_dtype(self): the config's mamba_ssm_dtype counts (gigachat35.py:228-231).
    config["mamba_ssm_dtype"] = "bfloat16"
    assert ssm_state(config, layout="sglang").ssm_dtype == "bfloat16"
    config["full_attention_layers"] = [12]
    assert refusal(config, layout="sglang") == (
        "gigachat3_5 config: field 'full_attention_layers': entry 12 is not a layer number from "
        "0 to 11"
    )
    listed = written("gigachat3_5-layer-types-written.json")
    listed["layer_types"] = listed["layer_types"][:11]
    assert "field 'layer_types': has 11 entries but num_hidden_layers is 12" in refusal(
        listed, layout="sglang"
    )
    # transformers 5 renames a legacy 'mamba' to 'linear_attention' for SGLang's class too
    # (PreTrainedConfig.__post_init__, remap_legacy_layer_types): a linear layer (issue 27).
    listed["layer_types"] = ["linear_attention"] * 11 + ["mamba"]
    assert ssm_state(listed, layout="sglang").ssm_layers == 12
    listed["layer_types"] = ["linear_attention"] * 11 + ["conv"]
    assert "field 'layer_types': entry 11 is 'conv'; expected" in refusal(listed, layout="sglang")
    # Its mamba2_cache_params needs every linear field, layers or not (gigachat35.py:213-218);
    # a missing one is GigaChat35Config's default (128; issue 27), a null one is refused.
    listed["layer_types"] = ["attention"] * 12
    del listed["linear_value_head_dim"]
    assert ssm_state(listed, layout="sglang").ssm_layers == 0
    listed["linear_value_head_dim"] = None
    assert refusal(listed, layout="sglang") == (
        "gigachat3_5 config: field 'linear_value_head_dim': must be an integer, got None (NoneType)"
    )


# --- minicpm_sala: lightning attention (SGLang only) ----------------------------------------------


def sala(**fields: Any) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((CONFIGS / "minicpm-sala.json").read_text("utf-8"))
    return {**loaded, **fields}


SALA_ATTENTION = (0, 9, 16, 17, 22, 29, 30, 31)


def test_minicpm_sala_fixture() -> None:
    # S:sglang/srt/configs/minicpm.py:148-169: Mamba2StateShape(intermediate 0, n_groups 0,
    # heads lightning_nkv 32, head_dim = state = lightning_head_dim 128, kernel 1).
    state = ssm_state(sala(), layout="sglang", tp_size=2)
    assert state.layer_indices == tuple(i for i in range(32) if i not in SALA_ATTENTION)
    assert tensors(state) == [
        ("linear_attention", "conv", (0, 0), "bfloat16", 0),
        ("linear_attention", "recurrent", (16, 128, 128), "float32", 16 * 128 * 128 * 4),
    ]
    attention = state.attention
    assert attention is not None
    assert (attention.layer_indices, attention.num_key_value_heads) == (SALA_ATTENTION, 2)
    assert "vLLM 0.33.0 has no minicpm_sala model" in refusal(sala())
    with pytest.raises(TensorParallelSplitError, match="'lightning_nkv': tp_size 3 does not"):
        ssm_state(sala(), layout="sglang", tp_size=3)


def test_minicpm_sala_repeats_a_short_mixer_list_and_reads_aliases() -> None:
    # minicpm.py:93-104: aliases, then the list repeated to num_hidden_layers.
    config = sala(num_hidden_layers=5, mixer_types=["attn", "lightning"])
    assert ssm_state(config, layout="sglang").layer_indices == (1, 3)
    empties: tuple[list[str] | None, ...] = ([], None)
    for empty in empties:
        state = ssm_state(sala(mixer_types=empty), layout="sglang")
        assert (state.ssm_layers, state.per_sequence_bytes) == (0, 0)
    assert refusal(sala(num_hidden_layers=2, mixer_types=["lightning"] * 3), layout="sglang") == (
        "minicpm_sala config: field 'mixer_types': has 3 entries, more than num_hidden_layers 2"
    )
    assert "field 'mixer_types': entry 0 is 'mamba'; expected" in refusal(
        sala(mixer_types=["mamba"]), layout="sglang"
    )


def test_minicpm_sala_heads_and_their_fallbacks() -> None:
    # lightning_nkv, else num_key_value_heads; lightning_head_dim, else head_dim, else
    # hidden_size // num_attention_heads (minicpm.py:78-80, :105-113).
    config = sala()
    for field in ("lightning_nh", "lightning_nkv", "lightning_head_dim", "head_dim"):
        del config[field]
    config["num_key_value_heads"] = 32
    state = ssm_state(config, layout="sglang")
    assert tensors(state)[1][2] == (32, 4096 // 32, 4096 // 32)
    # Each fallback on its own: 16 KV heads (num_key_value_heads, with 16 query heads from
    # lightning_nh), head_dim 64.
    config |= {"num_key_value_heads": 16, "lightning_nh": 16, "head_dim": 64}
    assert tensors(ssm_state(config, layout="sglang"))[1][2] == (16, 64, 64)
    with pytest.raises(TensorParallelSplitError, match="'num_key_value_heads': tp_size 3 does"):
        ssm_state(config, layout="sglang", tp_size=3)
    # The seg_la backend needs as many query as KV heads (minicpm.py:114-124).
    assert refusal(sala(lightning_nkv=16), layout="sglang") == (
        "minicpm_sala config: field 'lightning_nh': 32 query heads but 16 KV heads "
        "(lightning_nkv); SGLang 0.5.23's lightning attention requires them equal "
        "(configs/minicpm.py:110-120)"
    )
    assert ssm_state(sala(lightning_nkv=16, mixer_types=["minicpm4"]), layout="sglang").groups == ()


# --- decode-ring state on the written configs -----------------------------------------------------


@pytest.mark.parametrize(
    ("name", "layout", "layers", "per_sequence"),
    [
        ("alice-ai-written.json", "vllm", 6, 6_512_640),
        ("gigachat3_5-written.json", "sglang", 9, 9_658_368),
        ("gigachat3_5-layer-types-written.json", "sglang", 9, 9_658_368),
    ],
)
def test_state_runs_on_every_written_config(
    name: str, layout: str, layers: int, per_sequence: int
) -> None:
    path = str(WRITTEN / name)
    completed = run_cli("state", "--config", path, "--layout", layout, "--json")
    assert completed.returncode == 0, completed.stderr
    report = json.loads(completed.stdout)
    assert (report["ssm_layers"], report["per_sequence_bytes"]) == (layers, per_sequence)
    other = "sglang" if layout == "vllm" else "vllm"
    refused = run_cli("state", "--config", path, "--layout", other)
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr


_WRITTEN_NAMES = sorted(path.name for path in WRITTEN.glob("*.json"))
_WRITTEN_FIELDS = sorted(
    {key for name in _WRITTEN_NAMES for key in written(name)}
    | {key for name in _WRITTEN_NAMES for key in written(name).get("text_config", {})}
    | {"mixer_types", "lightning_nh", "lightning_nkv", "lightning_head_dim", "no_kda_lora"}
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from([*_WRITTEN_NAMES, "minicpm-sala.json"]),
    st.dictionaries(st.sampled_from(_WRITTEN_FIELDS), _JSON, min_size=1, max_size=3),
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
    path = WRITTEN / name if name in _WRITTEN_NAMES else CONFIGS / name
    config: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if inner and isinstance(config.get("text_config"), dict):
        config["text_config"] = config["text_config"] | changes
    else:
        config |= changes
    try:
        state = ssm_state(config, tp_size=tp, layout=layout, speculative_tokens=spec)
    except ModelConfigError as error:
        _one_line(error)
    else:
        _check(state)
