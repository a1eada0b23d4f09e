"""The recurrent state over tensor-parallel ranks: what each server shards, replicates or refuses
to split, named by its field.

Every expected number is written out from the checkpoint's published config values (the products
spell the fields: layers x (conv window x channels x bytes + heads x head dim x d_state x bytes)),
or from the wheels' code (vllm-0.33.0, sglang-0.5.23, cited file:lines; the same cases run through
the servers' own functions in tools/peer_agreement), never computed by the code under test.
Families with no public checkpoint (tests/configs/PROVENANCE.md) are read from transformers 5.23's
own ``to_dict()``, or from configs written out from the fields the wheels read
(tests/configs/written/, not released checkpoints).
"""

from __future__ import annotations

import os

import pytest

from decode_ring.models import LAYOUTS, ModelConfigError, TensorParallelSplitError, ssm_state

from .support import CONFIGS, SMALL_LIGHTNING, SMALL_NEMOTRON, config, fields_of, refused


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


def test_zero_ssm_layers_refuse_nothing_on_the_recurrent_side() -> None:
    granite = config("granite-4.0-h-tiny.json") | {"mamba_n_groups": 5}
    granite["layer_types"] = ["attention"] * 40
    for layout in LAYOUTS:
        # 4 ranks cannot split 5 groups, but no mixer is built, so nothing is refused.
        state = ssm_state(granite, tp_size=4, layout=layout)
        assert (state.family, state.ssm_layers, state.layer_indices) == ("granitemoehybrid", 0, ())
        assert (state.conv_shape, state.ssm_shape) == ((), ())
        assert state.per_layer_bytes == state.per_sequence_bytes == 0


def test_a_group_split_is_a_tensor_parallel_error() -> None:
    with pytest.raises(TensorParallelSplitError):
        ssm_state({**SMALL_NEMOTRON, "mamba_num_heads": 4, "n_groups": 3}, tp_size=2)


def test_the_new_kinds_name_their_field_in_a_split() -> None:
    error = refused(
        SMALL_LIGHTNING,
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
