"""The attention side of a hybrid model: its layers, heads and head size (GQA or MLA), as each
server reads them, and how they split over tensor-parallel ranks.

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

import pytest

from decode_ring.models import (
    AttentionLayers,
    DsaIndexer,
    ModelConfigError,
    TensorParallelSplitError,
    ssm_state,
)
from decode_ring.models.attention import dsa_indexer

from .support import (
    CONFIGS,
    SMALL_JAMBA,
    SMALL_KIMI,
    SMALL_LIGHTNING,
    SMALL_NEMOTRON,
    SMALL_ZAMBA2,
    config,
    fields_of,
    refused,
)


@pytest.mark.parametrize(
    ("name", "layers", "heads", "kv_heads", "head_dim"),
    [
        ("granite-4.0-h-tiny.json", (5, 15, 25, 35), 12, 4, 1536 // 12),
        ("jamba-mini-1.5.json", (4, 12, 20, 28), 32, 8, 4096 // 32),
        ("nemotron-nano-9b-v2.json", (14, 21, 30, 39), 40, 8, 128),
        ("falcon-h1-7b-instruct.json", tuple(range(44)), 12, 2, 128),
        ("qwen3-next-80b-a3b-instruct.json", tuple(range(3, 48, 4)), 16, 2, 256),
    ],
)
def test_the_attention_side_of_each_fixture(
    name: str, layers: tuple[int, ...], heads: int, kv_heads: int, head_dim: int
) -> None:
    attention = ssm_state(Path(__file__).parent / "configs" / name).attention
    assert attention is not None
    assert attention.layer_indices == layers
    assert (attention.num_attention_heads, attention.num_key_value_heads) == (heads, kv_heads)
    assert (attention.head_dim, attention.mla) == (head_dim, False)


def test_a_head_size_from_hidden_size_is_an_integer() -> None:
    attention = ssm_state(Path(__file__).parent / "configs" / "granite-4.0-h-tiny.json").attention
    assert attention is not None and type(attention.head_dim) is int


def test_as_many_heads_as_the_hidden_size_is_a_head_size_of_1() -> None:
    # vLLM's get_head_size without a head_dim is hidden_size // num_attention_heads
    # (vllm/transformers_utils/model_arch_config_convertor.py:104-118): 8 // 8 is 1, a head size
    # the page holds; only more heads than the hidden size (a head size of 0) is refused.
    jamba = {**SMALL_JAMBA, "num_attention_heads": 8, "hidden_size": 8, "mamba_expand": 1}
    attention = ssm_state(jamba).attention
    assert attention is not None
    assert (attention.num_attention_heads, attention.head_dim, attention.v_head_dim) == (8, 1, 1)


def test_one_kv_head_is_multi_query_attention() -> None:
    # num_key_value_heads 1 (multi-query attention) is a KV-head count like any other: vLLM's
    # get_total_num_kv_heads returns it.
    attention = ssm_state({**SMALL_NEMOTRON, "num_key_value_heads": 1}).attention
    assert attention is not None
    assert (attention.num_attention_heads, attention.num_key_value_heads) == (4, 1)


def test_gqa_attention_defaults() -> None:
    jamba = {**SMALL_JAMBA, "num_attention_heads": 1, "hidden_size": 8, "mamba_expand": 1}
    attention = ssm_state(jamba).attention
    assert attention is not None
    # No num_key_value_heads: JambaConfig's default, 8 (issue 27; it was one per head); no
    # head_dim: hidden_size // heads.
    assert (attention.layer_indices, attention.num_key_value_heads) == ((0, 2), 8)
    assert (attention.head_dim, attention.v_head_dim, attention.mla) == (8, 8, False)
    assert (attention.kv_lora_rank, attention.qk_rope_head_dim) == (None, None)
    assert attention.model_dtype == "bfloat16"
    zero = ssm_state({**SMALL_NEMOTRON, "head_dim": 0, "hidden_size": 64}).attention
    assert zero is not None and zero.head_dim == 16
    plain = ssm_state(
        {
            "model_type": "llama",
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "hidden_size": 32,
            "num_key_value_heads": 2,
        }
    )
    assert plain.attention is not None
    assert (plain.attention.layer_indices, plain.attention.head_dim) == ((0, 1), 8)
    assert ssm_state({"model_type": "llama", "num_hidden_layers": 2}).attention is None
    assert (
        ssm_state(
            {"model_type": "llama", "num_hidden_layers": 2, "num_attention_heads": 4}
        ).attention
        is None
    )
    headed = {
        "model_type": "llama",
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "head_dim": 8,
    }
    assert ssm_state(headed).attention is not None


def test_gqa_where_a_kda_or_lightning_model_has_no_mla() -> None:
    gqa_kimi = {k: v for k, v in SMALL_KIMI.items() if k != "kv_lora_rank"} | {
        "num_key_value_heads": 2,
        "head_dim": 8,
    }
    # Issue 27: vLLM builds every Kimi attention layer as MLA and asserts kv_lora_rank
    # (vllm/models/kimi_k3/nvidia/model.py:735-745).
    refused(
        gqa_kimi,
        "kimi_linear config: field 'kv_lora_rank': missing; vLLM 0.33.0 builds Kimi's attention "
        "layers as MLA and asserts it (vllm/models/kimi_k3/nvidia/model.py:735-745)",
    )
    # Bailing's classes default kv_lora_rank 512 and qk_rope_head_dim 64, and vLLM builds its
    # attention as MLA whatever (bailing_moe_linear.py:77-116): no GQA reading (issue 27).
    lightning = ssm_state({**SMALL_LIGHTNING, "num_key_value_heads": 1}).attention
    assert lightning is not None
    assert (lightning.layer_indices, lightning.mla, lightning.head_dim) == ((1,), True, 576)
    mla = ssm_state({**SMALL_LIGHTNING, "kv_lora_rank": 4, "qk_rope_head_dim": 2}).attention
    assert mla is not None and (mla.layer_indices, mla.mla, mla.head_dim) == ((1,), True, 6)


def test_zamba2_shared_attention_reads_a_doubled_hidden_state(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text((Path(__file__).parent / "configs" / "zamba2-2.7b.json").read_text())
    state = ssm_state(path)
    assert state.attention is not None
    # Hybrid layers hold the shared attention: 32 heads of 2 x 2560 / 32 = 160.
    assert state.attention.layer_indices == (6, 12, 18, 24, 30, 36, 42, 47, 51)
    assert (state.attention.head_dim, state.attention.num_key_value_heads) == (160, 32)
    given = {**json.loads(path.read_text()), "attention_head_dim": 96}
    assert ssm_state(given).attention.head_dim == 96  # type: ignore[union-attr]
    plain = {**json.loads(path.read_text()), "layers_block_type": ["mamba"] * 54}
    assert ssm_state(plain).attention is None
    # The Mamba side splits over 4 ranks; 6 shared-attention heads do not.
    error = refused(
        {**SMALL_ZAMBA2, "n_mamba_heads": 4, "mamba_ngroups": 1, "num_attention_heads": 6},
        "zamba2 config: field 'num_attention_heads': tp_size 4 does not divide 6; the servers "
        "shard attention heads evenly (vllm/config/model.py:1557-1564)",
        tp_size=4,
    )
    assert error.family == "zamba2"


def test_zamba2_attention_refusals_name_family_and_file(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(
        json.dumps({**SMALL_ZAMBA2, "num_attention_heads": 4, "num_key_value_heads": "x"})
    )
    error = refused(
        path,
        f"{str(path)!a}: zamba2 config: field 'num_key_value_heads': must be an integer, got "
        "'x' (str)",
    )
    assert fields_of(error) == (str(path), "zamba2", "num_key_value_heads")


def test_kv_heads_that_divide_or_are_divided_split() -> None:
    for kv, tp in [(2, 2), (2, 4), (4, 2)]:
        assert (
            ssm_state(
                {**SMALL_NEMOTRON, "mamba_num_heads": 4, "num_key_value_heads": kv}, tp_size=tp
            ).tp_size
            == tp
        )
    error = refused(
        {
            **SMALL_NEMOTRON,
            "mamba_num_heads": 4,
            "num_attention_heads": 8,
            "num_key_value_heads": 6,
        },
        "nemotron_h config: field 'num_key_value_heads': tp_size 4 neither divides 6 KV heads "
        "nor is a multiple of them; the servers shard or replicate them evenly",
        tp_size=4,
    )
    assert isinstance(error, TensorParallelSplitError)
    assert error.field == "num_key_value_heads"


@pytest.mark.parametrize("layout", ["vllm", "sglang", "metrale"])
def test_attention_heads_must_split(layout: str) -> None:
    # Falcon-H1-7B: 12 attention heads. vLLM config/model.py:1557-1564; SGLang
    # models/falcon_h1.py:120 asserts the same.
    path = CONFIGS / "falcon-h1-7b-instruct.json"
    with pytest.raises(TensorParallelSplitError) as caught:
        ssm_state(path, tp_size=8, layout=layout)
    assert str(caught.value).endswith(
        "falcon_h1 config: field 'num_attention_heads': tp_size 8 does not divide 12; the "
        "servers shard attention heads evenly (vllm/config/model.py:1557-1564)"
    )
    assert caught.value.field == "num_attention_heads"


def test_kv_heads_must_divide_or_be_divided_by_tp() -> None:
    # Jet-Nemotron-2B: 12 heads (tp 3 divides them), 2 KV heads (neither way with 3).
    with pytest.raises(TensorParallelSplitError) as caught:
        ssm_state(CONFIGS / "jet-nemotron-2b.json", tp_size=3, layout="sglang")
    assert str(caught.value).endswith(
        "jet_nemotron config: field 'num_key_value_heads': tp_size 3 neither divides 2 KV heads "
        "nor is a multiple of them; the servers shard or replicate them evenly"
    )
    # Two KV heads replicate over 4 ranks.
    assert ssm_state(CONFIGS / "jet-nemotron-2b.json", tp_size=4, layout="sglang").tp_size == 4


def test_mla_attention_checks_the_heads_only() -> None:
    # One latent per token, replicated: 3 KV heads in the config do not matter at tp 8.
    kimi = config("kimi-linear-48b-a3b-instruct.json") | {"num_key_value_heads": 3}
    state = ssm_state(kimi, tp_size=8)
    assert state.attention is not None and state.attention.mla


def mla_layers(layers: tuple[int, ...]) -> AttentionLayers:
    """MLA attention at ``layers``: a latent of 512 and a RoPE part of 64 (DeepSeek-V3's)."""
    return AttentionLayers(
        layer_indices=layers,
        num_attention_heads=16,
        num_key_value_heads=1,
        head_dim=512 + 64,
        v_head_dim=0,
        mla=True,
        kv_lora_rank=512,
        qk_rope_head_dim=64,
        model_dtype="bfloat16",
    )


def test_an_mla_page_keeps_its_rope_part_unless_told_not_to() -> None:
    # vLLM's MLAAttentionSpec and SGLang's calculate_mla_kv_cache_dim keep kv_lora_rank +
    # qk_rope_head_dim per token; only SGLang's use_mla_nope drops the RoPE part.
    attention = mla_layers((0, 1, 2))
    assert attention.kv_terms(8, 2) == "MLA (512 + 64) x 3 layers x 2 B"
    assert attention.kv_terms(8, 2, latent_rope=False) == "MLA (512 + 0) x 3 layers x 2 B"
    assert attention.kv_bytes_per_token(8, 2) == 3 * (512 + 64) * 2
    assert attention.kv_bytes_per_token(8, 2, latent_rope=False) == 3 * 512 * 2
    # A DSA indexer's keys join the page: ceil((128 + 128 // 128 x 4) / 16) = 9 B a keyed layer.
    indexer = DsaIndexer(128, 16, (0, 2))
    assert attention.kv_bytes_per_token(8, 2, indexer=indexer) == 3 * (512 + 64) * 2 + 2 * 9


# SGLang's dsa_layer_skips_topk (sglang/srt/configs/model_config.py:488-522), case by case: the
# attention layers (0 to 5) whose indexer computes its own top-k and so keeps keys.
DSA_KEYED = [
    # indexer_types: "shared" reuses; past the list's end, a layer keeps its keys.
    ({"indexer_types": ["full", "shared"]}, (0, 2, 3, 4, 5)),
    # LongCat: fresh top-k every cli_factor layers.
    ({"cli_factor": 2}, (0, 2, 4)),
    ({"cli_factor": 3}, (0, 3)),
    # index_topk_pattern: "S" reuses; past the pattern's end, a layer keeps its keys.
    ({"index_topk_pattern": "FS"}, (0, 2, 3, 4, 5)),
    ({"index_topk_pattern": ["F", "S", "S"]}, (0, 3, 4, 5)),
    # No field: index_topk_freq 1, every layer computes its own.
    ({}, (0, 1, 2, 3, 4, 5)),
    # index_topk_freq 2: layers 0 and 1, then every other (max(layer - 1, 0) % 2).
    ({"index_topk_freq": 2}, (0, 1, 3, 5)),
    # index_skip_topk_offset: max(layer - offset + 1, 0) % freq instead.
    ({"index_topk_freq": 2, "index_skip_topk_offset": 1}, (0, 2, 4)),
    ({"index_topk_freq": 2, "index_skip_topk_offset": 3}, (0, 1, 2, 4)),
]


@pytest.mark.parametrize(("fields", "keyed"), DSA_KEYED)
def test_the_dsa_indexer_keeps_keys_where_sglang_computes_a_top_k(
    fields: dict[str, object], keyed: tuple[int, ...]
) -> None:
    root = {"index_head_dim": 128} | fields
    indexer = dsa_indexer(root, {}, mla_layers(tuple(range(6))))
    assert indexer == DsaIndexer(128, 1, keyed)
    # The same fields in the text config only (SGLang's wrapper configs carry them).
    assert dsa_indexer({}, root, mla_layers(tuple(range(6)))) == indexer


def test_the_dsa_indexer_without_attention_keys_no_layer() -> None:
    indexer = dsa_indexer({"index_head_dim": 128, "index_kpool": 1}, {}, None)
    assert indexer == DsaIndexer(128, 1, ())
    assert indexer.bytes_per_token == 0


@pytest.mark.parametrize(
    ("value", "shown"),
    [(None, "None"), (0, "0"), (-1, "-1"), (True, "True"), ("128", "'128'"), (1.5, "1.5")],
)
@pytest.mark.parametrize("field", ["index_head_dim", "index_kpool"])
def test_the_dsa_indexer_refuses_a_field_that_is_not_a_positive_integer(
    field: str, value: object, shown: str
) -> None:
    if field == "index_kpool" and value is None:
        # index_kpool defaults to 1 (get_dsa_index_kpool).
        assert dsa_indexer({"index_head_dim": 128, field: value}, {}, None).kpool == 1
        return
    root = {"index_head_dim": 128, field: value}
    with pytest.raises(ModelConfigError) as caught:
        dsa_indexer(root, {}, None)
    assert str(caught.value) == f"field '{field}': {shown} is not a positive integer"
    assert caught.value.field == field


@pytest.mark.parametrize(
    ("fields", "refused", "shown"),
    [
        ({"index_topk_freq": -1}, "index_topk_freq", "-1"),
        ({"index_topk_freq": 0}, "index_topk_freq", "0"),
        ({"index_topk_freq": "2"}, "index_topk_freq", "'2'"),
        ({"index_topk_freq": 1.5}, "index_topk_freq", "1.5"),
        ({"cli_factor": 0}, "cli_factor", "0"),
        ({"cli_factor": -2}, "cli_factor", "-2"),
        ({"index_topk_freq": 2, "index_skip_topk_offset": 0}, "index_skip_topk_offset", "0"),
        ({"index_skip_topk_offset": -1}, "index_skip_topk_offset", "-1"),
    ],
)
def test_the_dsa_indexer_refuses_a_top_k_count_that_is_not_a_positive_integer(
    fields: dict[str, object], refused: str, shown: str
) -> None:
    # SGLang asserts cli_factor > 0, index_topk_freq > 0 and, where given,
    # index_skip_topk_offset > 0 (dsa_layer_skips_topk, sglang-0.5.23
    # configs/model_config.py:488-522); a count not given is 1 (cli_factor, index_topk_freq).
    root = {"index_head_dim": 128, **fields}
    with pytest.raises(ModelConfigError) as caught:
        dsa_indexer(root, {}, mla_layers((0, 1)))
    assert str(caught.value) == f"field '{refused}': {shown} is not a positive integer"
    assert caught.value.field == refused
