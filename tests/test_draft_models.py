"""Draft models (issue 25): a separate drafter brings its own weights and attention layers, and
both servers count them as their code does.

vLLM 0.33.0: the drafter's attention layers are cached beside the target's
(``get_kv_cache_spec``, vllm/v1/worker/gpu_model_runner.py:7081-7120); a causal drafter with the
target's page joins the target's spec, a DFlash drafter's non-causal layers are a spec of their
own (``FullAttentionSpec.non_causal``, vllm/v1/kv_cache_interface.py:634-640; causality from
``_dflash_layer_causal``, vllm/model_executor/models/qwen3_dflash.py:62-81), grouped apart
(``_get_kv_cache_groups_uniform_page_size``, vllm/v1/core/kv_cache_planning.py:416-556).
SGLang 0.5.23: an EAGLE/NEXTN draft adds ``cell x draft layers / target layers`` to the KV
bytes a token (sglang/srt/model_executor/pool_configurator.py:259-313).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest

from decode_ring.cli import main
from decode_ring.models import ModelConfigError, TensorParallelSplitError
from decode_ring.servers import ServerArgumentError, sglang_reservation, vllm_reservation

from .support import DFLASH, bailing

CONFIGS = Path(__file__).resolve().parent / "configs"
QWEN3_5_27B = str(CONFIGS / "qwen3.5-27b.json")
QWEN3_NEXT = str(CONFIGS / "qwen3-next-80b-a3b-instruct.json")
GIB = 2**30

# The published launch: vLLM 0.20.2rc1 on 2 x RTX 3090, Qwen3.6-27B int4, tp 2,
# --max-model-len 200000, DFlash with 5 speculative tokens, "Available KV cache memory:
# 10.16 GiB"; the log: 200,769 tokens, 1.00x.
DFLASH_LAUNCH: dict[str, Any] = {
    "tensor_parallel_size": 2,
    "max_model_len": 200_000,
    "kv_cache_memory_bytes": int(10.16 * GIB),
    "num_speculative_tokens": 5,
    "gpu": "rtx-3090",
}


# A two-layer Llama drafter of 6 heads: no tp of 4 divides them.
SIX_HEADS: dict[str, Any] = {
    **DFLASH,
    "architectures": ["LlamaForCausalLM"],
    "num_hidden_layers": 2,
    "num_attention_heads": 6,
    "num_key_value_heads": 6,
}


def test_the_dflash_launch_of_the_issue() -> None:
    # Without the drafter: the package's earlier answer, about 305,000 tokens and 1.52x.
    alone = vllm_reservation(QWEN3_5_27B, **DFLASH_LAUNCH)
    assert (alone.kv_cache_tokens, f"{alone.max_concurrency:.2f}") == (304_868, "1.52")
    # With it: 48 GDN, 16 attention and 5 non-causal draft layers are three specs; the group
    # size is the smallest, 5: ceil(48/5) = 10 GDN groups, ceil(16/5) = 4 attention groups and
    # 1 draft group. A block is 5 pages of 1,671,168 B: 10.16 GiB // 8,355,840 = 1,305 blocks.
    # A request: 4 x ceil(200,000 / 816) + 1 x 246 + 10 x (1 + 5 speculative + 1) = 1,300.
    held = vllm_reservation(QWEN3_5_27B, draft_config=DFLASH, **DFLASH_LAUNCH)
    assert (held.group_size, held.state_groups, held.attention_groups) == (5, 10, 4)
    assert (held.draft_groups, held.draft_same_spec, held.draft_block_size) == (1, False, 816)
    assert held.num_blocks == 1305 and held.blocks_per_request_at_max_model_len == 1300
    # 1,305 / 1,300 = 1.0038x and int(1.0038... x 200,000) = 200,769: the logged figures.
    assert held.kv_cache_tokens == 200_769
    assert held.log_lines[-1] == (
        "GPU KV cache size: 200,769 tokens, Maximum concurrency for 200,000 tokens per "
        "request: 1.00x"
    )


def test_a_causal_drafter_with_the_targets_page_joins_its_spec() -> None:
    eagle = {**DFLASH, "architectures": ["LlamaForCausalLM"], "model_type": "llama"}
    held = vllm_reservation(QWEN3_5_27B, draft_config=eagle, **DFLASH_LAUNCH)
    # 16 + 5 = 21 attention layers a spec: group size min(48, 21) = 21.
    assert (held.draft_same_spec, held.draft_groups, held.group_size) == (True, 0, 21)
    assert held.attention_groups == 1 and held.state_groups == 3


def write_safetensors(path: Path, tensors: dict[str, tuple[str, list[int]]]) -> None:
    header = {
        name: {"dtype": dtype, "shape": shape, "data_offsets": [0, 0]}
        for name, (dtype, shape) in tensors.items()
    }
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw)


def drafter_snapshot(tmp_path: Path) -> Path:
    folder = tmp_path / "drafter"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(DFLASH))
    write_safetensors(
        folder / "model.safetensors", {"layers.0.mlp.down_proj.weight": ("BF16", [5120, 17408])}
    )
    return folder


def test_the_drafters_weights_load_with_the_targets(tmp_path: Path) -> None:
    folder = drafter_snapshot(tmp_path)
    held = vllm_reservation(
        QWEN3_5_27B, draft_config=folder / "config.json", weights_bytes=GIB, **DFLASH_LAUNCH
    )
    # The drafter's down projection, bfloat16, split by tp 2 (row-parallel).
    assert held.draft_weights_bytes == 5120 * 17408 * 2 // 2
    # Its own rule: a drafter loads no MTP layers of its own.
    assert held.draft_rule.endswith(
        "norms and routers whole, an omni model's talker and token2wav left out; MTP layers left "
        "out"
    )


def test_the_drafters_weights_add_to_a_snapshots_weights(tmp_path: Path) -> None:
    # load_model (vllm/v1/worker/gpu_model_runner.py:4960-5076) loads the drafter with the
    # target. A target snapshot of one down projection, 5120 x 17408 bfloat16 split by tp 2:
    # 89,128,960 B a rank, and the drafter's as much: 178,257,920 B.
    drafter = drafter_snapshot(tmp_path)
    target = tmp_path / "target"
    target.mkdir()
    (target / "config.json").write_text(Path(QWEN3_5_27B).read_text())
    write_safetensors(
        target / "model.safetensors",
        {"model.language_model.layers.0.mlp.down_proj.weight": ("BF16", [5120, 17408])},
    )
    config = str(target / "config.json")
    held = vllm_reservation(config, draft_config=drafter / "config.json", **DFLASH_LAUNCH)
    assert held.draft_weights_bytes == 89_128_960
    assert held.weights_bytes == 178_257_920
    assert held.weights_rule.endswith("MTP layers left out; and the drafter's 89,128,960 B")
    # The weights load in the model dtype, bfloat16, whatever the state's dtype is.
    wide = vllm_reservation(
        config,
        draft_config=drafter / "config.json",
        mamba_cache_dtype="float32",
        **DFLASH_LAUNCH,
    )
    assert wide.weights_bytes == 178_257_920
    # --cpu-offload-gb moves 0.1 GiB (107,374,182 B) of the two: 70,883,738 B stay.
    offloaded = vllm_reservation(
        config, draft_config=drafter / "config.json", cpu_offload_gb=0.1, **DFLASH_LAUNCH
    )
    assert offloaded.weights_bytes == 70_883_738
    assert offloaded.weights_rule.endswith(
        "; and the drafter's 89,128,960 B; less 107,374,182 B offloaded (--cpu-offload-gb 0.1)"
    )
    # A drafter without a snapshot adds no weights, and the rule names none.
    bare = vllm_reservation(config, draft_config=DFLASH, **DFLASH_LAUNCH)
    assert (bare.draft_weights_bytes, bare.weights_bytes) == (0, 89_128_960)
    assert bare.weights_rule.endswith(
        "norms and routers whole, an omni model's talker and "
        "token2wav left out; MTP layers left out"
    )


def test_sglang_counts_a_snapshots_weights_and_its_drafts(tmp_path: Path) -> None:
    # "draft weights are now counted" (sglang-0.5.23:sglang/srt/mem_cache/
    # kv_cache_configurator.py:3050-3058): a target snapshot of one down projection, 5120 x
    # 17408 bfloat16 split by tp 2 (89,128,960 B a rank), and an EAGLE draft's as much.
    drafter = drafter_snapshot(tmp_path)
    eagle = {**DFLASH, "architectures": ["LlamaForCausalLM"]}
    (drafter / "config.json").write_text(json.dumps(eagle))
    target = tmp_path / "target"
    target.mkdir()
    (target / "config.json").write_text(Path(QWEN3_5_27B).read_text())
    write_safetensors(
        target / "model.safetensors",
        {"model.language_model.layers.0.mlp.down_proj.weight": ("BF16", [5120, 17408])},
    )
    flags: dict[str, Any] = {
        "tp_size": 2,
        "available_memory": 60 * GIB,
        "speculative_num_draft_tokens": 4,
    }
    config = target / "config.json"
    alone = sglang_reservation(config, **flags)
    assert alone.weights_bytes == 89_128_960
    # --dtype half loads them as float16, 2 B wide as bfloat16 is.
    assert sglang_reservation(config, dtype="half", **flags).weights_bytes == 89_128_960
    held = sglang_reservation(config, draft_config=drafter / "config.json", **flags)
    assert held.weights_bytes == 178_257_920
    assert held.weights_rule == f"{alone.weights_rule}; and the draft's 89,128,960 B"
    # A draft without a snapshot adds no weights.
    bare = sglang_reservation(config, draft_config=eagle, **flags)
    assert bare.weights_bytes == 89_128_960
    assert bare.weights_rule == f"{alone.weights_rule}; and the draft's 0 B"


def test_sglang_loads_kv_heads_past_the_tp_replicated(tmp_path: Path) -> None:
    # QKVParallelLinear replicates KV heads when tp exceeds them (each rank one head): the
    # target's 4 KV heads of 256 at tp 8 load a quarter of its k_proj (1024 x 5120 bfloat16),
    # 2,621,440 B, not an eighth; an EAGLE draft's 2 KV heads of 128 at tp 4 load half of theirs
    # (256 x 5120 x 2 / 2 = 1,310,720 B), split at the target's tp.
    target = tmp_path / "target"
    target.mkdir()
    (target / "config.json").write_text(Path(QWEN3_5_27B).read_text())
    write_safetensors(
        target / "model.safetensors",
        {"model.language_model.layers.3.self_attn.k_proj.weight": ("BF16", [1024, 5120])},
    )
    drafter = tmp_path / "drafter"
    drafter.mkdir()
    eagle = {**DFLASH, "architectures": ["LlamaForCausalLM"], "num_key_value_heads": 2}
    (drafter / "config.json").write_text(json.dumps(eagle))
    write_safetensors(
        drafter / "model.safetensors", {"layers.0.self_attn.k_proj.weight": ("BF16", [256, 5120])}
    )
    config = target / "config.json"
    wide = sglang_reservation(config, tp_size=8, available_memory=60 * GIB)
    assert wide.weights_bytes == 2_621_440
    held = sglang_reservation(
        config,
        draft_config=drafter / "config.json",
        tp_size=4,
        available_memory=60 * GIB,
        speculative_num_draft_tokens=4,
    )
    assert held.weights_bytes == 2_621_440 + 1_310_720
    assert held.weights_rule.endswith("; and the draft's 1,310,720 B")


def test_sglang_loads_an_attention_free_snapshot_in_bfloat16(tmp_path: Path) -> None:
    # A model without attention layers has no model dtype of the package's; its weights load
    # 2 B an element: Mamba-2.8B's out_proj, 2560 x 5120 bfloat16, 26,214,400 B.
    mamba = tmp_path / "mamba"
    mamba.mkdir()
    (mamba / "config.json").write_text((CONFIGS / "mamba-2.8b-hf.json").read_text())
    write_safetensors(
        mamba / "model.safetensors",
        {"backbone.layers.0.mixer.out_proj.weight": ("BF16", [2560, 5120])},
    )
    held = sglang_reservation(mamba / "config.json", available_memory=60 * GIB)
    assert held.weights_bytes == 26_214_400


def test_a_drafters_kv_heads_are_split_as_the_targets_are(tmp_path: Path) -> None:
    # A drafter of 2 KV heads at tp 4: each rank holds one (vLLM replicates KV heads past the
    # count), so its page is 1 x 128 x 2 x 2 B = 512 B a token and its k_proj (2 x 128 rows of
    # 5120, bfloat16) loads half a rank: 256 x 5120 x 2 / 2 = 1,310,720 B, not a quarter.
    folder = tmp_path / "drafter"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({**DFLASH, "num_key_value_heads": 2}))
    write_safetensors(
        folder / "model.safetensors", {"layers.0.self_attn.k_proj.weight": ("BF16", [256, 5120])}
    )
    held = vllm_reservation(
        QWEN3_5_27B,
        draft_config=folder / "config.json",
        tensor_parallel_size=4,
        max_model_len=200_000,
        kv_cache_memory_bytes=int(10.16 * GIB),
        num_speculative_tokens=5,
        gpu="h200",
    )
    assert held.draft_weights_bytes == 1_310_720
    assert held.draft_rule.startswith("5 draft attention layers, 512 B a token a rank, ")
    # The drafter's block and groups are whole numbers, as vLLM's ints are.
    assert type(held.draft_block_size) is int and type(held.draft_groups) is int


def test_a_drafter_is_read_under_the_launchs_release() -> None:
    # vLLM 0.28.0's registry has no Glm5NextForConditionalGeneration (it names it from 0.30.0),
    # so that release cannot load it as a drafter; the newest reads it and the package refuses
    # its recurrent layers.
    glm5_next = CONFIGS / "written" / "glm5-next-transformers-5.23.0.json"
    launch: dict[str, Any] = {"num_speculative_tokens": 2, "kv_cache_memory_bytes": 16 * GIB}
    with pytest.raises(ModelConfigError) as unserved:
        vllm_reservation(QWEN3_NEXT, version="0.28.0", draft_config=glm5_next, **launch)
    assert str(unserved.value).endswith(
        "glm5_next config: field 'architectures': vLLM 0.28.0 does not serve "
        "'Glm5NextForConditionalGeneration' (its registry names it from 0.30.0 to 0.33.0)"
    )
    with pytest.raises(ServerArgumentError) as recurrent:
        vllm_reservation(QWEN3_NEXT, draft_config=glm5_next, **launch)
    assert str(recurrent.value) == (
        "argument draft_config: a drafter with recurrent layers (or no attention) is not modelled"
    )


def test_the_launch_lines_speculative_config_names_the_drafter(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = drafter_snapshot(tmp_path)
    config = json.dumps({"method": "dflash", "model": str(folder), "num_speculative_tokens": 5})
    status = main(
        [
            "vllm", "--json", "--gpu", "rtx-3090", "serve", QWEN3_5_27B, "-tp", "2",
            "--max-model-len", "200000", "--kv-cache-memory-bytes", str(int(10.16 * GIB)),
            "--speculative-config", config,
        ]
    )  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert status == 0
    assert out["kv_cache_tokens"] == 200_769 and out["draft_attention_layers"] == 5
    missing = json.dumps(
        {"method": "eagle3", "model": "org/not-cached", "num_speculative_tokens": 3}
    )
    status = main(["vllm", "--json", "serve", QWEN3_NEXT, "--speculative-config", missing])
    out = json.loads(capsys.readouterr().out)
    assert status == 0
    assert any(
        note.startswith("draft model 'org/not-cached' not counted") for note in out["assumptions"]
    )


def test_sglang_counts_an_eagle_drafts_kv_layers(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    flags: dict[str, Any] = {
        "tp_size": 2,
        "available_memory": 60 * GIB,
        "speculative_num_draft_tokens": 4,
    }
    plain = sglang_reservation(QWEN3_NEXT, **flags)
    one_layer = {**DFLASH, "architectures": ["LlamaForCausalLM"], "num_hidden_layers": 1}
    drafted = sglang_reservation(QWEN3_NEXT, draft_config=one_layer, **flags)
    # Qwen3-Next's 12 attention layers: cell + int(cell x 1 / 12).
    assert drafted.kv_bytes_per_token == plain.kv_bytes_per_token + plain.kv_bytes_per_token // 12
    folder = drafter_snapshot(tmp_path)
    (folder / "config.json").write_text(json.dumps(one_layer))
    status = main(
        [
            "sglang", "--json", "--available-memory", "60GiB", "--model-path", QWEN3_NEXT,
            "--tp", "2", "--speculative-algorithm", "EAGLE", "--speculative-num-draft-tokens", "4",
            "--speculative-draft-model-path", str(folder),
        ]
    )  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert status == 0 and out["kv_bytes_per_token"] == drafted.kv_bytes_per_token


def test_vllm_splits_a_drafter_at_the_targets_tp() -> None:
    # The drafter runs at the target's tp, and vLLM shards its attention heads evenly
    # (vllm/config/model.py:1557-1564): 6 heads at tp 4 do not split.
    with pytest.raises(TensorParallelSplitError) as raised:
        vllm_reservation(
            QWEN3_NEXT,
            draft_config=SIX_HEADS,
            tensor_parallel_size=4,
            num_speculative_tokens=2,
            kv_cache_memory_bytes=16 * GIB,
        )
    assert raised.value.field == "num_attention_heads"


def test_sglang_splits_an_eagle_draft_at_the_targets_tp() -> None:
    # The draft worker runs at the target's tp; SGLang's LlamaAttention asserts its heads divide
    # by it (sglang-0.5.23:sglang/srt/models/llama.py:183): 6 heads at tp 4 do not.
    with pytest.raises(TensorParallelSplitError) as raised:
        sglang_reservation(
            QWEN3_NEXT,
            draft_config=SIX_HEADS,
            tp_size=4,
            available_memory=60 * GIB,
            speculative_num_draft_tokens=4,
        )
    assert raised.value.field == "num_attention_heads"


def test_sglang_scales_the_cell_by_an_eagle_drafts_layers() -> None:
    # A two-layer Llama draft: max(num_hidden_layers, num_attention_layers) = 2 draft layers
    # (spec_aux_hidden_state.py:158-163), cell x 2 / 12 more a token (pool_configurator.py:259-313).
    flags: dict[str, Any] = {
        "tp_size": 2,
        "available_memory": 60 * GIB,
        "speculative_num_draft_tokens": 4,
    }
    plain = sglang_reservation(QWEN3_NEXT, **flags)
    two_layers = {**DFLASH, "architectures": ["LlamaForCausalLM"], "num_hidden_layers": 2}
    drafted = sglang_reservation(QWEN3_NEXT, draft_config=two_layers, **flags)
    extra = plain.kv_bytes_per_token * 2 // 12
    assert drafted.kv_bytes_per_token == plain.kv_bytes_per_token + extra
    assert drafted.kv_bytes_per_token_rule == (
        f"{plain.kv_bytes_per_token_rule} + the draft's 2 layers ({extra} B)"
    )


def test_sglang_takes_a_drafts_own_nextn_count_and_its_hidden_layers() -> None:
    # draft_kv_num_layers (sglang-0.5.23:sglang/srt/model_executor/model_runner_components/
    # spec_aux_hidden_state.py:156-163): the draft's num_nextn_predict_layers where it has one,
    # else max(num_hidden_layers, num_attention_layers), not the attention layers alone.
    flags: dict[str, Any] = {
        "tp_size": 2,
        "available_memory": 60 * GIB,
        "speculative_num_draft_tokens": 4,
    }
    plain = sglang_reservation(QWEN3_NEXT, **flags).kv_bytes_per_token
    llama = {**DFLASH, "architectures": ["LlamaForCausalLM"], "num_hidden_layers": 1}
    nextn = sglang_reservation(
        QWEN3_NEXT, draft_config=llama | {"num_nextn_predict_layers": 3}, **flags
    )
    assert nextn.kv_bytes_per_token == plain + plain * 3 // 12
    # SGLang rewrites a Qwen3-Next or NemotronH draft checkpoint into its MTP model with
    # num_nextn_predict_layers = 1 (ModelConfig._config_draft_model, sglang-0.5.23:sglang/srt/
    # configs/model_config.py:1134-1136, :1198-1203, run before the count is read): one layer,
    # whatever the checkpoint's 48 layers or NemotronH's class default of 0 say.
    for drafter in (QWEN3_NEXT, CONFIGS / "nemotron-nano-9b-v2.json"):
        one = sglang_reservation(QWEN3_NEXT, draft_config=drafter, **flags)
        assert one.kv_bytes_per_token == plain + plain * 1 // 12
    # A hybrid draft SGLang does not rewrite, without the field: Falcon-H1's 44 layers (all 44
    # with attention beside the SSM) count 44.
    falcon = sglang_reservation(
        QWEN3_NEXT, draft_config=CONFIGS / "falcon-h1-7b-instruct.json", **flags
    )
    assert falcon.kv_bytes_per_token == plain + plain * 44 // 12
    # A draft without attention layers counts its hidden ones: Mamba-2.8B's 64 (max(64, 0)).
    mamba = sglang_reservation(QWEN3_NEXT, draft_config=CONFIGS / "mamba-2.8b-hf.json", **flags)
    assert mamba.kv_bytes_per_token == plain + plain * 64 // 12
    # A draft's own count int() would not make whole and non-negative is refused, named.
    with pytest.raises(ModelConfigError) as raised:
        sglang_reservation(
            QWEN3_NEXT, draft_config=llama | {"num_nextn_predict_layers": -1}, **flags
        )
    assert raised.value.field == "num_nextn_predict_layers"
    assert str(raised.value) == (
        "field 'num_nextn_predict_layers': -1 is not a count of draft layers (SGLang takes int() "
        "of it, model_runner_components/spec_aux_hidden_state.py:156-163)"
    )


def test_sglang_rewrites_a_text_only_qwen3_5_draft_into_its_mtp_model_from_0_5_17() -> None:
    # sglang-0.5.17:sglang/srt/configs/model_config.py:668-676 adds Qwen3_5ForCausalLM to the
    # architectures whose draft is Qwen3_5ForCausalLMMTP with num_nextn_predict_layers = 1;
    # 0.5.16's list (:643-649) has only the ConditionalGeneration ones.
    qwen = json.loads(Path(QWEN3_5_27B).read_text(encoding="utf-8"))
    text_only = qwen | {"architectures": ["Qwen3_5ForCausalLM"]}
    flags: dict[str, Any] = {
        "tp_size": 2,
        "available_memory": 60 * GIB,
        "speculative_num_draft_tokens": 4,
    }
    for version, rewritten in (("0.5.16", False), ("0.5.17", True), ("0.5.23", True)):
        plain = sglang_reservation(QWEN3_NEXT, version=version, **flags).kv_bytes_per_token
        drafted = sglang_reservation(QWEN3_NEXT, version=version, draft_config=text_only, **flags)
        assert (drafted.kv_bytes_per_token == plain + plain * 1 // 12) is rewritten, version


def test_sglang_reads_a_drafts_nextn_count_from_its_own_config_class() -> None:
    # SGLang's BailingHybridConfig defaults num_nextn_predict_layers to 0
    # (sglang-0.5.23:sglang/srt/configs/bailing_hybrid.py:86, :122), which the draft's
    # ModelConfig reads (configs/model_config.py:1602-1604; the draft rewrite of a Bailing
    # architecture, :1118-1127, keeps it): no draft layers, where transformers' class, which
    # declares no such field, would leave max(42 hidden, attention) layers.
    flags: dict[str, Any] = {
        "tp_size": 2,
        "available_memory": 60 * GIB,
        "speculative_num_draft_tokens": 4,
    }
    plain = sglang_reservation(QWEN3_NEXT, **flags).kv_bytes_per_token
    draft = bailing(architectures=["BailingMoeV2_5ForCausalLM"])
    draft.pop("num_nextn_predict_layers")
    drafted = sglang_reservation(QWEN3_NEXT, draft_config=draft, **flags)
    assert drafted.kv_bytes_per_token == plain


def test_sglang_reads_a_targets_nextn_count_as_int_does() -> None:
    # SGLang takes int() of num_nextn_predict_layers (spec_aux_hidden_state.py:156-157): true
    # is one draft layer; a count int() would not make one of 0 or more is refused.
    flags: dict[str, Any] = {"available_memory": 60 * GIB, "speculative_num_draft_tokens": 2}
    target = json.loads(Path(QWEN3_NEXT).read_text())
    plain = sglang_reservation(target, **flags).kv_bytes_per_token
    one = sglang_reservation(target | {"num_nextn_predict_layers": True}, **flags)
    assert one.kv_bytes_per_token == plain + plain // 12
    for bad in ("two", -1, [1]):
        with pytest.raises(ModelConfigError) as raised:
            sglang_reservation(target | {"num_nextn_predict_layers": bad}, **flags)
        assert raised.value.field == "num_nextn_predict_layers"


@pytest.mark.parametrize(
    ("overrides", "causal"),
    [
        # _dflash_layer_causal (vllm/model_executor/models/qwen3_dflash.py:62-74): is_causal
        # first, then dflash_config's causal, then every layer a sliding_attention one.
        ({"is_causal": True}, True),
        ({"is_causal": 0, "dflash_config": {"causal": True}}, False),
        ({"is_causal": False, "dflash_config": {"causal": True}}, False),
        ({"dflash_config": {"causal": True}}, True),
        ({"dflash_config": {"causal": False}, "layer_types": ["sliding_attention"] * 5}, False),
        ({"dflash_config": {"causal": None}, "layer_types": ["sliding_attention"] * 5}, True),
        ({"layer_types": ["sliding_attention"] * 5}, True),
        ({"layer_types": ["sliding_attention"] * 4 + ["full_attention"]}, False),
        ({"layer_types": []}, False),
        # Not a DFlash drafter: causal, whatever the rest says.
        ({"architectures": [], "is_causal": False}, True),
        ({"architectures": "DFlashDraftModel"}, True),
        ({"architectures": ["Eagle3DraftModel"], "layer_types": []}, True),
    ],
)
def test_a_dflash_drafters_causality_is_vllms(overrides: dict[str, Any], causal: bool) -> None:
    held = vllm_reservation(QWEN3_5_27B, draft_config={**DFLASH, **overrides}, **DFLASH_LAUNCH)
    # Causal with the target's page: one spec of 21 layers; else a spec of 5 of its own.
    expected = (True, 0, 21) if causal else (False, 1, 5)
    assert (held.draft_same_spec, held.draft_groups, held.group_size) == expected
    assert held.draft_rule.startswith(
        "5 draft attention layers, 2048 B a token a rank, "
        + ("the target's spec, block 816; " if causal else "a spec of their own, non-causal, ")
    )


def test_a_counted_drafter_is_not_an_assumption() -> None:
    held = vllm_reservation(QWEN3_5_27B, draft_config=DFLASH, **DFLASH_LAUNCH)
    assert held.assumptions == ("CUDA",)


def test_a_causal_drafter_with_a_page_of_its_own() -> None:
    # Head 64: 8 KV heads x 64 x 2 (K, V) x 2 B / tp 2 = 1,024 B a token; the target's page of
    # 1,671,168 B holds 1,632 of its tokens a block, a causal spec apart from the target's.
    eagle = {**DFLASH, "architectures": ["LlamaForCausalLM"], "head_dim": 64}
    held = vllm_reservation(QWEN3_5_27B, draft_config=eagle, **DFLASH_LAUNCH)
    assert (held.draft_same_spec, held.draft_block_size, held.draft_groups) == (False, 1632, 1)
    assert held.draft_rule == (
        "5 draft attention layers, 1024 B a token a rank, a spec of their own, block 1632; "
        "weights no safetensors in the snapshot: give the weights"
    )


def test_drafters_the_package_does_not_model_are_refused() -> None:
    # Head 100: 1,600 B a token does not divide the page, so no block of whole tokens.
    with pytest.raises(ServerArgumentError) as uneven:
        vllm_reservation(QWEN3_5_27B, draft_config={**DFLASH, "head_dim": 100}, **DFLASH_LAUNCH)
    assert uneven.value.field == "draft_config"
    assert str(uneven.value) == (
        "argument draft_config: its 1600 B a token does not divide the 1671168 B page"
    )
    with pytest.raises(ServerArgumentError) as recurrent:
        vllm_reservation(
            QWEN3_5_27B, draft_config=CONFIGS / "nemotron-nano-9b-v2.json", **DFLASH_LAUNCH
        )
    assert recurrent.value.field == "draft_config"
    assert str(recurrent.value) == (
        "argument draft_config: a drafter with recurrent layers (or no attention) is not modelled"
    )
