"""The four families issue 27 adds, each on a config written from its config class
(``tests/configs/written/``, ``PROVENANCE.md``): InternS2-Mobius and NemotronH-Puzzle are read;
Qwen4-Exp and Inkling keep several KV-cache specs per model, which the package does not model
yet, and are refused as such. The sizes are the servers' own, run from the wheels
(``python tools/peer_agreement states --configs tests/configs/written --transformers ...``:
112 of 112 cases agree), written out from the shapes."""

from __future__ import annotations

from pathlib import Path

import pytest

from decode_ring.models import NotModelledError, ssm_state

WRITTEN = Path(__file__).resolve().parent / "configs" / "written"


def test_interns2_mobius_is_qwen3_5_moes_gated_delta_net() -> None:
    # SGLang's InternS2MobiusConfig defaults: 48 layers, every fourth attention, 16 key heads
    # and 32 value heads of 128, kernel 4; bfloat16 (its class sets the dtype, configs/
    # interns2_mobius.py:17-31).
    path = WRITTEN / "interns2-mobius-sglang-0.5.23-defaults.json"
    channels = 2 * 16 * 128 + 32 * 128
    vllm = ssm_state(path)
    assert (vllm.family, vllm.ssm_layers) == ("interns2_mobius", 36)
    # vLLM has no class for it (the checkpoint's own code): the file's bfloat16, and no
    # Qwen3.5 hook for InternS2MobiusForConditionalGeneration (vllm/model_executor/models/
    # config.py:1211-1269): the state follows the model dtype.
    assert vllm.per_layer_bytes == 3 * channels * 2 + 32 * 128 * 128 * 2
    sglang = ssm_state(path, layout="sglang")
    assert sglang.per_layer_bytes == channels * 3 * 2 + 32 * 128 * 128 * 4


def test_nemotron_h_puzzle_reads_nemotron_h_layers() -> None:
    # SGLang's NemotronHPuzzleConfig defaults (block_configs one per layer of its default
    # list): 52 layers, 24 Mamba; 128 heads of 64, 8 groups, state 128, kernel 4; float32 SSM.
    path = WRITTEN / "nemotron-h-puzzle-sglang-0.5.23-defaults.json"
    conv = (128 * 64 + 2 * 8 * 128) * 3 * 2
    ssm = 128 * 64 * 128 * 4
    for layout in ("vllm", "sglang"):
        state = ssm_state(path, layout=layout)
        assert (state.family, state.ssm_layers, state.ssm_dtype) == (
            "nemotron_h_puzzle",
            24,
            "float32",
        )
        assert state.per_layer_bytes == conv + ssm


@pytest.mark.parametrize(
    ("name", "what"),
    [
        ("qwen4-exp-transformers-5.20.2-defaults.json", "Qwen4-Exp"),
        ("inkling-mm-model-sglang-0.5.23-defaults.json", "Inkling"),
    ],
)
def test_several_kv_specs_a_model_are_not_modelled(name: str, what: str) -> None:
    for layout in ("vllm", "sglang", "metrale"):
        with pytest.raises(NotModelledError) as caught:
            ssm_state(WRITTEN / name, layout=layout)
        assert f"{what} holds several KV-cache specs per model" in str(caught.value)
        assert str(caught.value).endswith("which this package does not model yet")
        assert caught.value.field == "model_type"


def test_the_not_modelled_refusals_name_the_specs_and_vllms_lines() -> None:
    # Qwen4-Exp: vllm/models/qwen4_exp/nvidia/model.py:880-900 (get_mamba_specs_from_config);
    # Inkling: vllm/models/inkling/nvidia/sconv_swa_attn.py:185-190.
    qwen4 = WRITTEN / "qwen4-exp-transformers-5.20.2-defaults.json"
    with pytest.raises(NotModelledError) as caught:
        ssm_state(qwen4)
    assert str(caught.value) == (
        f"{str(qwen4)!a}: qwen4_exp config: field 'model_type': Qwen4-Exp holds several "
        "KV-cache specs per model (its gated delta nets and its per-layer-embedding short "
        "convolutions, vllm/models/qwen4_exp/nvidia/model.py:880-900), which this package does "
        "not model yet"
    )
    inkling = WRITTEN / "inkling-mm-model-sglang-0.5.23-defaults.json"
    with pytest.raises(NotModelledError) as caught:
        ssm_state(inkling, layout="sglang")
    assert str(caught.value) == (
        f"{str(inkling)!a}: inkling config: field 'model_type': Inkling holds several KV-cache "
        "specs per model (full and sliding-window attention and its short-conv streams, "
        "vllm/models/inkling/nvidia/sconv_swa_attn.py:185-190), which this package does not "
        "model yet"
    )
