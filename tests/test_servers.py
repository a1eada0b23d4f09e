"""decode_ring.servers against the servers' own sizing code.

Expected values are written out. Their provenance, unless a test says otherwise: the functions
of the vllm-0.33.0 and sglang-0.5.23 wheels, extracted from the wheels' source with ``ast`` and
run on a CPU with torch stubbed (dtype sizes only), on the state shapes the models package gives
for the fixture:

- vLLM: ``Platform._align_hybrid_block_size`` run whole (vllm/platforms/interface.py:940-1137)
  against a backend reporting ``MultipleOf(16)`` kernel blocks, ``MambaSpec.page_size_bytes`` and
  ``max_memory_usage_bytes``, ``AttentionSpec.page_size_bytes`` (vllm/v1/kv_cache_interface.py),
  ``unify_kv_cache_spec_page_size``, ``_get_kv_cache_groups_uniform_page_size``,
  ``_get_kv_cache_bytes_per_block`` (vllm/v1/core/kv_cache_planning.py) and
  ``get_max_concurrency_for_kv_cache_config`` (vllm/v1/core/kv_cache_utils.py);
- SGLang: ``KVCacheConfigurator._handle_max_mamba_cache`` and ``_calculate_mamba_ratio``
  (sglang/srt/mem_cache/kv_cache_configurator.py), ``get_mamba_tracking_slots``
  (mem_cache/allocation_sizing.py) and ``_mamba_radix_cache_resolution``
  (arg_groups/overrides.py), with stub ``get_schedule``/``get_exec``/``get_memory``/``get_spec``.

Agreement over the whole grid, against ``tools/peer_agreement/reservations.py`` (the peer
oracle, run from the wheels): every fixture x tp 1, 2, 4, 8 x speculative tokens 0, 2 (SGLang:
draft tokens 0, 4) x prefix caching on, off (SGLang: radix cache on, off) x budgets (vLLM: none,
40 and 80 GiB; SGLang: 20, 40, 60 and 100 GiB), field by field (refusals counted once per case):
see ``tools/peer_agreement/README.md`` for the grid and the count. The KV pool's tokens, which
SGLang's default running-request estimate reads, come from ``DefaultPoolConfigurator`` and
``ModelConfig._derive_model_shapes`` run from the wheel.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from decode_ring.models import ModelConfigError, TensorParallelSplitError, ssm_state
from decode_ring.servers import (
    ServerArgumentError,
    metrale,
    sglang_reservation,
    vllm_reservation,
)

CONFIGS = Path(__file__).resolve().parent / "configs"
NEMOTRON = CONFIGS / "nemotron-nano-9b-v2.json"
QWEN3_NEXT = CONFIGS / "qwen3-next-80b-a3b-instruct.json"
MAMBA = CONFIGS / "mamba-2.8b-hf.json"
ZAMBA2 = CONFIGS / "zamba2-2.7b.json"
ZAYA_LEGACY = CONFIGS / "zaya1-8b-legacy.json"
KIMI_LINEAR = CONFIGS / "kimi-linear-48b-a3b-instruct.json"
GLM5_NEXT = CONFIGS / "written" / "glm5-next-transformers-5.23.0.json"
GIB = 2**30

# --- facts ------------------------------------------------------------------------------------


def test_vllm_23230_float32_ssm_state_of_nemotron_nano_9b_v2_at_256_sequences() -> None:
    # vllm-project/vllm#23230: 33.75 GiB of float32 SSM state. 27 Mamba layers, each an SSM
    # state of 128 heads x 80 x 128 in float32, 256 sequences.
    reservation = vllm_reservation(NEMOTRON, max_num_seqs=256)
    state = ssm_state(NEMOTRON)
    (group,) = state.groups
    ssm = next(tensor for tensor in group.tensors if tensor.name == "ssm")
    assert ssm.dtype == "float32"
    assert reservation.state_layers * 256 * ssm.bytes == int(33.75 * GIB)
    assert reservation.ssm_dtype == "float32"


def test_what_vllm_0_33_plans_for_nemotron_nano_9b_v2_at_256_sequences() -> None:
    r = vllm_reservation(NEMOTRON, max_num_seqs=256)
    assert r.enable_prefix_caching and r.mamba_cache_mode == "align"
    assert r.block_size == 1312
    assert r.attention_page_bytes == 5_373_952
    assert r.state_page_bytes == 5_316_608
    assert r.state_page_bytes_padded == 5_373_952
    assert (r.group_size, r.state_groups, r.attention_groups) == (4, 7, 1)
    assert r.bytes_per_block == 21_495_808
    assert (r.state_blocks_per_request, r.planned_blocks_per_request) == (1, 3)
    assert r.planned_state_bytes == 256 * 7 * 3 * 21_495_808 == 115_561_463_808  # 107.6 GiB
    assert r.state_bytes == 38_520_487_936  # 35.9 GiB at steady decode
    assert r.naive_state_bytes == 256 * 27 * 5_316_608
    assert round(r.multiplier, 3) == 1.048
    assert round(r.planned_multiplier, 3) == 3.145


def test_vllm_concurrency_is_vllms_own() -> None:
    r = vllm_reservation(NEMOTRON, kv_cache_memory_bytes=80 * GIB)
    assert r.max_model_len == 131_072  # config max_position_embeddings
    assert r.num_blocks == 3996
    assert r.blocks_per_request_at_max_model_len == 121  # 100 attention + 7 x 3 state
    assert r.max_concurrency == 33.02479338842975
    off = vllm_reservation(NEMOTRON, kv_cache_memory_bytes=80 * GIB, enable_prefix_caching=False)
    assert off.mamba_cache_mode == "none"
    assert off.max_concurrency == 37.345794392523366


# --- vLLM: the other shapes of the arithmetic ------------------------------------------------


def test_vllm_speculative_tokens_keep_whole_extra_blocks() -> None:
    r = vllm_reservation(QWEN3_NEXT, num_speculative_tokens=2, enable_prefix_caching=False)
    assert (r.block_size, r.state_page_bytes_padded, r.bytes_per_block) == (
        560,
        1_146_880,
        13_762_560,
    )
    assert (r.group_size, r.state_groups, r.planned_blocks_per_request) == (12, 3, 3)
    assert r.state_bytes == 256 * 3 * 3 * 13_762_560  # 29.5 GiB
    assert round(r.naive_state_bytes / GIB, 2) == 9.70


def test_vllm_gdn_checkpoint_alignment_on_sm90_only() -> None:
    r = vllm_reservation(QWEN3_NEXT, tensor_parallel_size=4)
    assert r.gdn_prefill_backend == "flashinfer"
    assert (r.block_size, r.state_page_bytes_padded, r.bytes_per_block) == (320, 327_680, 3_932_160)
    assert r.prefill_checkpoint_blocks == 1
    ampere = vllm_reservation(QWEN3_NEXT, tensor_parallel_size=4, gpu_arch="sm80")
    assert ampere.gdn_prefill_backend == "triton"
    assert ampere.prefill_checkpoint_blocks == 0
    # 274,432 B of state in pages of 2 KV heads x 256 x 2 x 2 B / 4 ranks: 1 KV head per rank.
    assert ampere.block_size == 272
    assert ampere.planned_blocks_per_request == 2


def test_vllm_attention_free_model_is_one_group_without_padding() -> None:
    r = vllm_reservation(MAMBA, kv_cache_memory_bytes=40 * GIB, max_model_len=2048)
    assert not r.enable_prefix_caching  # vLLM's default for an attention-free model
    assert r.attention_backend is None
    assert (r.group_size, r.state_groups, r.attention_groups) == (64, 1, 0)
    assert r.state_page_bytes == r.state_page_bytes_padded == 194_560
    assert r.bytes_per_block == 12_451_840
    assert (r.num_blocks, r.max_concurrency) == (3449, 3449.0)


def test_vllm_zamba2_aligns_with_its_attention_head_dim() -> None:
    # Zamba2ModelArchConfigConvertor.get_head_size is attention_head_dim, 160
    # (model_arch_config_convertor.py:502-504), run in the peer oracle's reservations: one token
    # is 32 KV heads x (160 + 160) x 2 B = 20,480 B, and 686,848 B of state take 48 tokens.
    r = vllm_reservation(ZAMBA2)
    assert r.block_size == 48
    assert r.state_page_bytes_padded == r.attention_page_bytes == 983_040
    assert (r.group_size, r.state_groups, r.attention_groups) == (9, 6, 1)
    assert r.bytes_per_block == 8_847_360


def test_vllm_replayssm_ring_joins_the_page() -> None:
    # append_replayssm_ring (mamba_utils.py:213-246) on the Triton backend, run from the wheel:
    # (128, 16, 80) bf16, (128, 16) fp32, (8, 16, 128) bf16 = 368,640 B more per layer.
    r = vllm_reservation(NEMOTRON, use_replayssm=True)
    assert r.state_page_bytes == 5_316_608 + 368_640
    assert (r.block_size, r.state_page_bytes_padded) == (1392, 5_701_632)


def test_vllm_user_block_size_is_raised_not_lowered() -> None:
    assert vllm_reservation(NEMOTRON, block_size=16).block_size == 1312
    kept = vllm_reservation(NEMOTRON, block_size=2048)
    assert (kept.block_size, kept.block_size_rule) == (2048, "flag")
    # Not a multiple of the kernel block: _align_hybrid_block_size rounds it up.
    rounded = vllm_reservation(NEMOTRON, block_size=16_008)
    assert (rounded.block_size, rounded.state_page_bytes_padded) == (16_016, 65_601_536)


# --- SGLang ------------------------------------------------------------------------------------


def test_sglang_sizes_its_pool_from_memory() -> None:
    r = sglang_reservation(NEMOTRON, available_memory=60 * GIB)
    assert r.per_request_bytes == 143_548_416
    assert (r.mamba_radix_cache_strategy, r.ratio) == ("extra_buffer", 5)
    assert r.slots == 211
    assert r.pool_bytes == 212 * 143_548_416
    assert r.max_running_requests == 42
    assert r.kv_cache_bytes == 33_992_245_248
    assert r.speculative_scratch_bytes == 0


def test_sglang_running_256_takes_five_slots_each() -> None:
    r = sglang_reservation(NEMOTRON, available_memory=60 * GIB, max_running_requests=256)
    assert r.max_running_requests == 42
    assert r.slots_for_requested == 1280
    assert round(r.pool_bytes_for_requested / GIB, 1) == 171.3  # the issue's 171 GiB
    assert round(r.multiplier, 2) == 5.0


def test_sglang_strategies_change_the_cap_not_the_pool() -> None:
    # Issue 27: an explicit no_buffer needs --disable-overlap-schedule, which SGLang asserts
    # (sglang/srt/arg_groups/mamba_hook.py:156-160): refused on a default launch.
    with pytest.raises(ServerArgumentError, match="no_buffer needs --disable-overlap-schedule"):
        sglang_reservation(
            NEMOTRON, available_memory=60 * GIB, mamba_radix_cache_strategy="no_buffer"
        )
    off = sglang_reservation(NEMOTRON, available_memory=60 * GIB, disable_radix_cache=True)
    assert (off.slots, off.ratio, off.max_running_requests) == (211, 1, 211)
    assert off.kv_cache_bytes == 33_992_245_248
    lazy = sglang_reservation(
        NEMOTRON, available_memory=60 * GIB, mamba_radix_cache_strategy="extra_buffer_lazy"
    )
    assert lazy.ratio == 4


def test_sglang_speculative_solve_and_scratch() -> None:
    r = sglang_reservation(QWEN3_NEXT, available_memory=60 * GIB, speculative_num_draft_tokens=4)
    assert r.per_request_bytes == 77_266_944
    assert (r.slots, r.max_running_requests) == (216, 43)
    assert r.kv_cache_bytes == 34_058_600_448
    # memory_pool.py:864-938 for 44 rows: 36 layers x 44 x 4 x (32, 128, 128) float32, and the
    # deduplicated conv window 36 x 44 x 8192 x (4 + 3 - 1) bfloat16.
    assert r.speculative_ssm_scratch_bytes == 36 * 44 * 4 * 32 * 128 * 128 * 4
    assert r.speculative_conv_scratch_bytes == 36 * 44 * 8192 * 6 * 2
    assert r.speculative_scratch_bytes == 36 * 44 * 4 * 32 * 128 * 128 * 4 + 36 * 44 * 8192 * 6 * 2


def test_sglang_fixed_pool() -> None:
    r = sglang_reservation(NEMOTRON, available_memory=60 * GIB, max_mamba_cache_size=300)
    assert (r.slots, r.kv_cache_bytes) == (300, 21_216_436_224)
    without_budget = sglang_reservation(NEMOTRON, max_mamba_cache_size=300)
    assert without_budget.kv_cache_bytes is None
    assert without_budget.pool_bytes == 301 * 143_548_416


def test_sglang_non_radix_architecture_keeps_ratio_three() -> None:
    r = sglang_reservation(MAMBA, available_memory=60 * GIB)
    assert (r.mamba_radix_cache_strategy, r.ratio) == ("auto", 3)
    # Issue 27: SGLang ignores no_buffer where it keeps no mamba radix cache and sizes as under
    # auto (model_hook.py:1056-1067); it refuses the extra-buffer strategies there.
    ignored = sglang_reservation(
        MAMBA, available_memory=60 * GIB, mamba_radix_cache_strategy="no_buffer"
    )
    assert (ignored.ratio, ignored.slots, ignored.pool_bytes) == (r.ratio, r.slots, r.pool_bytes)
    with pytest.raises(ServerArgumentError, match="needs mamba state, got MambaForCausalLM"):
        sglang_reservation(
            MAMBA, available_memory=60 * GIB, mamba_radix_cache_strategy="extra_buffer"
        )


def test_sglang_estimate_from_the_kv_pool_binds() -> None:
    # resolve_max_num_reqs (kv_cache_configurator.py:3119-3172) with the KV pool's tokens from
    # DefaultPoolConfigurator (pool_configurator.py:340-634), as the oracle ran them: ZAYA1's 40
    # attention layers hold 2 KV heads x (128 + 128) x 2 B each per token; 11,302,584,320 B
    # of KV pool hold 275,942 tokens; int(275942 / 131072 x 512) = 1077, raised to the floor
    # 2048, below 27,593 slots // 3 and 275,942 // 2.
    r = sglang_reservation(ZAYA_LEGACY, available_memory=20 * GIB)
    assert r.kv_bytes_per_token == 2 * (128 + 128) * 40 * 2 == 40_960
    assert (r.kv_cache_bytes, r.kv_tokens) == (11_302_584_320, 275_942)
    assert (r.context_length, r.context_length_rule) == (131_072, "config max_position_embeddings")
    assert (r.slots, r.max_running_requests) == (27_593, 2048)
    # A shorter context raises the estimate to its ceiling, 4096.
    short = sglang_reservation(ZAYA_LEGACY, available_memory=20 * GIB, context_length=4096)
    assert (short.context_length_rule, short.max_running_requests) == ("--context-length", 4096)


def test_sglang_estimate_for_mla_kimi_linear() -> None:
    # MLA: one latent of kv_lora_rank 512 + qk_rope_head_dim 64 per token for its 7 attention
    # layers, whatever the tp; model_max_length 1,048,576. The oracle: 4,205,455 tokens and
    # int(4205455 / 1048576 x 512) = 2053 running requests with the radix cache off.
    r = sglang_reservation(
        KIMI_LINEAR, tp_size=8, available_memory=60 * GIB, disable_radix_cache=True
    )
    assert r.kv_bytes_per_token == (512 + 64) * 7 * 2 == 8064
    assert (r.kv_tokens, r.max_running_requests) == (4_205_455, 2053)


def test_sglang_attention_free_model_sizes_its_kv_pool_to_the_context() -> None:
    # No attention layer: the pool holds context_len tokens (pool_configurator.py:243-248), and
    # mamba-2.8b-hf has no context field, so 2048 (common.py:694): at most 2048 // 2 running.
    r = sglang_reservation(MAMBA, available_memory=60 * GIB, disable_radix_cache=True)
    assert (r.kv_bytes_per_token, r.kv_tokens, r.context_length) == (0, 2048, 2048)
    assert r.context_length_rule == "no context-length field: SGLang's default"
    assert r.max_running_requests == 1024


def test_sglang_max_total_tokens_caps_the_kv_pool() -> None:
    # _apply_token_constraints (kv_cache_configurator.py:3090-3117): min(275,942, 100,000); the
    # estimate int(100000 / 131072 x 512) = 390 is raised to 2048. Without attention the cap is
    # the pool (pool_configurator.py:243-248): int(100000 / 2048 x 512) = 25000, so 4096, under
    # the radix-off pool's 1,329 slots. Both as the oracle ran them.
    r = sglang_reservation(ZAYA_LEGACY, available_memory=20 * GIB, max_total_tokens=100_000)
    assert (r.kv_tokens, r.max_running_requests, r.max_total_tokens) == (100_000, 2048, 100_000)
    free = sglang_reservation(
        MAMBA, available_memory=60 * GIB, disable_radix_cache=True, max_total_tokens=100_000
    )
    assert (free.kv_tokens, free.slots, free.max_running_requests) == (100_000, 1329, 1329)


def test_sglang_dsa_indexer_joins_the_kv_cell() -> None:
    # GLM-5.3-Flash's defaults are DeepSeek sparse attention (is_deepseek_dsa,
    # configs/model_config.py:191-211): 11 MLA layers of (512 + 0) x 2 B, and each, computing
    # its own top-k, keeps ceil((128 + 128 // 128 x 4) / 16) = 9 uint8 bytes of indexer keys
    # (pool_configurator.py:564-640). The oracle: 1,006,484 tokens and 13 requests at tp 1.
    r = sglang_reservation(GLM5_NEXT, available_memory=20 * GIB)
    assert r.kv_bytes_per_token == (512 + 0) * 11 * 2 + 9 * 11 == 11_363
    assert (r.kv_tokens, r.max_running_requests) == (1_006_484, 13)


def test_vllm_glm5_next_prefills_with_flashkda_and_plans_its_checkpoint_block() -> None:
    # _resolve_kda_prefill_backend (vllm/models/glm5next/common/kda.py:137-159): SM90, head 128,
    # bfloat16 and linear_lower_bound -5.0 choose FlashKDA, whose spec keeps one prefill
    # checkpoint block (:168-176): 2 + 0 + 1 planned in align mode; the oracle's bytes.
    r = vllm_reservation(GLM5_NEXT)
    assert (r.state_blocks_per_request, r.planned_blocks_per_request) == (1, 3)
    assert r.planned_state_bytes == 150_592_290_816
    ampere = vllm_reservation(GLM5_NEXT, gpu_arch="sm80")
    assert ampere.planned_blocks_per_request == 2


def test_sglang_refuses_a_context_longer_than_the_models() -> None:
    with pytest.raises(ServerArgumentError, match="context_length: 4096 is longer than") as error:
        sglang_reservation(MAMBA, available_memory=60 * GIB, context_length=4096)
    assert error.value.field == "context_length"


# --- metrale -----------------------------------------------------------------------------------


def test_metrale_is_the_live_state_and_the_ring() -> None:
    # metrale layout: conv (4, 12288) float32 196,608 B + ssm 5,242,880 B, x 27 layers.
    r = metrale(NEMOTRON, max_batch_size=256)
    assert r.per_sequence_bytes == 27 * (4 * 12288 * 4 + 128 * 80 * 128 * 4)
    assert r.live_state_bytes == 256 * r.per_sequence_bytes
    assert r.requested_slots == r.ring_slots == 8
    assert r.total_bytes == 9 * r.live_state_bytes
    fitted = metrale(NEMOTRON, max_batch_size=256, free_memory=80 * GIB)
    assert fitted.ring_slots == 1
    assert fitted.fit is not None and fitted.fit.warning is not None


# --- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda: vllm_reservation(NEMOTRON, max_num_seqs=-1), "max_num_seqs"),
        (lambda: vllm_reservation(NEMOTRON, tensor_parallel_size=0), "tensor_parallel_size"),
        (lambda: vllm_reservation(NEMOTRON, num_speculative_tokens=-2), "num_speculative_tokens"),
        (lambda: vllm_reservation(NEMOTRON, mamba_cache_dtype="fp33"), "mamba_cache_dtype"),
        (lambda: vllm_reservation(NEMOTRON, kv_cache_dtype="fp8_e5m2"), "kv_cache_dtype"),
        (
            lambda: vllm_reservation(NEMOTRON, kv_cache_dtype="fp8", gpu_arch="sm80"),
            "kv_cache_dtype",
        ),
        (lambda: vllm_reservation(NEMOTRON, gpu_arch="sm100"), "gpu_arch"),
        (lambda: vllm_reservation(NEMOTRON, kv_cache_memory_bytes=GIB), "kv_cache_memory_bytes"),
        (lambda: vllm_reservation(QWEN3_NEXT, use_replayssm=True), "use_replayssm"),
        (lambda: sglang_reservation(NEMOTRON, available_memory=GIB), "available_memory"),
        (lambda: sglang_reservation(NEMOTRON), "available_memory"),
        (lambda: sglang_reservation(NEMOTRON, max_mamba_cache_size=0), "max_mamba_cache_size"),
        (lambda: sglang_reservation(NEMOTRON, max_mamba_cache_size=4), "max_mamba_cache_size"),
        (lambda: sglang_reservation(NEMOTRON, mamba_ssm_dtype="fp32"), "mamba_ssm_dtype"),
        (lambda: sglang_reservation(NEMOTRON, max_total_tokens=0), "max_total_tokens"),
        # One KV token: SGLang caps requests at tokens // 2 = 0 and refuses (:3132, 3160-3168).
        (
            lambda: sglang_reservation(NEMOTRON, available_memory=60 * GIB, max_total_tokens=1),
            "available_memory",
        ),
        (
            lambda: sglang_reservation(NEMOTRON, mamba_full_memory_ratio=0.0),
            "mamba_full_memory_ratio",
        ),
        (
            lambda: sglang_reservation(NEMOTRON, mamba_full_memory_ratio=float("nan")),
            "mamba_full_memory_ratio",
        ),
        (
            lambda: sglang_reservation(NEMOTRON, mamba_radix_cache_strategy="x"),
            "mamba_radix_cache_strategy",
        ),
        (lambda: sglang_reservation(NEMOTRON, max_running_requests=0), "max_running_requests"),
        (lambda: metrale(NEMOTRON, max_batch_size=-1), "max_batch_size"),
    ],
)
def test_bad_values_are_refused_naming_the_argument(call: object, argument: str) -> None:
    with pytest.raises(ServerArgumentError) as raised:
        call()  # type: ignore[operator]
    assert raised.value.field == argument
    assert argument in str(raised.value)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    "call",
    [
        lambda: vllm_reservation(NEMOTRON, max_num_seqs=2.0),  # type: ignore[arg-type]
        lambda: vllm_reservation(NEMOTRON, max_num_seqs=True),
        lambda: vllm_reservation(NEMOTRON, enable_prefix_caching=1),  # type: ignore[arg-type]
        lambda: vllm_reservation(NEMOTRON, kv_cache_dtype=None),  # type: ignore[arg-type]
        lambda: sglang_reservation(NEMOTRON, tp_size="2"),  # type: ignore[arg-type]
        lambda: sglang_reservation(NEMOTRON, mamba_full_memory_ratio=True),
        lambda: vllm_reservation(3.5),  # type: ignore[arg-type]
    ],
)
def test_wrong_types_are_type_errors(call: object) -> None:
    with pytest.raises(TypeError):
        call()  # type: ignore[operator]


def test_a_tp_the_model_cannot_split_is_refused() -> None:
    with pytest.raises(TensorParallelSplitError):
        vllm_reservation(NEMOTRON, tensor_parallel_size=3)
    with pytest.raises(TensorParallelSplitError):
        sglang_reservation(NEMOTRON, tp_size=3, available_memory=60 * GIB)
    with pytest.raises(TensorParallelSplitError):
        # 2 KV heads: vLLM shards or replicates them, never splits 2 over 3.
        vllm_reservation(QWEN3_NEXT, tensor_parallel_size=3)


def test_a_model_without_recurrent_state_is_refused() -> None:
    config = {
        "model_type": "llama",
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "hidden_size": 64,
    }
    with pytest.raises(ModelConfigError, match="no recurrent layer"):
        vllm_reservation(config)
    with pytest.raises(ModelConfigError, match="no recurrent layer"):
        sglang_reservation(config, available_memory=GIB)


def test_json_forms_carry_the_issues_field_names() -> None:
    vllm = vllm_reservation(NEMOTRON, kv_cache_memory_bytes=80 * GIB).as_dict()
    for name in (
        "block_size",
        "attention_page_bytes",
        "state_page_bytes",
        "state_page_bytes_padded",
        "group_size",
        "state_groups",
        "attention_groups",
        "bytes_per_block",
        "state_blocks_per_request",
        "planned_blocks_per_request",
        "state_bytes",
        "planned_state_bytes",
        "num_blocks",
        "max_concurrency",
        "gpu_arch",
        "attention_backend",
    ):
        assert name in vllm
    sglang = sglang_reservation(NEMOTRON, available_memory=60 * GIB).as_dict()
    for name in (
        "per_request_bytes",
        "slots",
        "pool_bytes",
        "max_running_requests",
        "speculative_scratch_bytes",
        "kv_cache_bytes",
        "assumptions",
    ):
        assert name in sglang


# --- fuzzed ------------------------------------------------------------------------------------

_HOSTILE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, 1, 2, 4, 8, 3, 4096, 2**63, 2**64, 20 * GIB, 60 * GIB, 10**30]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from(["auto", "float32", "bfloat16", "float16", "no_buffer", "extra_buffer"]),
)
_SGLANG_ARGUMENTS = (
    "tp_size",
    "available_memory",
    "max_mamba_cache_size",
    "mamba_full_memory_ratio",
    "mamba_radix_cache_strategy",
    "disable_radix_cache",
    "max_running_requests",
    "speculative_num_draft_tokens",
    "mamba_ssm_dtype",
    "context_length",
    "max_total_tokens",
)
_VLLM_ARGUMENTS = (
    "tensor_parallel_size",
    "max_num_seqs",
    "max_model_len",
    "block_size",
    "enable_prefix_caching",
    "num_speculative_tokens",
    "mamba_cache_dtype",
    "mamba_ssm_cache_dtype",
    "kv_cache_dtype",
    "kv_cache_memory_bytes",
)
_FUZZED_CONFIGS = (NEMOTRON, QWEN3_NEXT, MAMBA, ZAYA_LEGACY, KIMI_LINEAR)


def _answer_or_none(call: Any, config: Path, values: dict[str, Any]) -> Any:
    """``call``'s answer, or None where it refused with a documented, typed error whose message
    names what it refuses (an argument, or a config field)."""
    refusal: Exception | None = None
    try:
        answer = call(config, **values)
        event("answered")
        return answer
    except (ServerArgumentError, ModelConfigError, TypeError) as error:
        refusal = error
    assert isinstance(refusal, ValueError | TypeError)
    message = str(refusal)
    assert "\n" not in message
    assert "argument " in message or "field " in message or "config" in message, message
    return None


@settings(max_examples=150, deadline=None, database=None)
@given(
    config=st.sampled_from(_FUZZED_CONFIGS),
    values=st.dictionaries(st.sampled_from(_SGLANG_ARGUMENTS), _HOSTILE, max_size=3),
)
def test_sglang_answers_or_refuses_with_a_typed_error(config: Path, values: dict[str, Any]) -> None:
    # On top of a launch that boots, so that the fuzzed values, not a missing budget, decide.
    r = _answer_or_none(sglang_reservation, config, {"available_memory": 60 * GIB, **values})
    if r is None:
        return
    # What SGLang's own arithmetic guarantees of an answer.
    assert r.pool_bytes == (r.slots + 1) * r.per_request_bytes
    assert 1 <= r.max_running_requests <= r.slots // r.ratio
    if r.kv_tokens is not None:
        assert r.max_running_requests <= r.kv_tokens // 2


@settings(max_examples=150, deadline=None, database=None)
@given(
    config=st.sampled_from(_FUZZED_CONFIGS),
    values=st.dictionaries(st.sampled_from(_VLLM_ARGUMENTS), _HOSTILE, max_size=3),
)
def test_vllm_answers_or_refuses_with_a_typed_error(config: Path, values: dict[str, Any]) -> None:
    r = _answer_or_none(vllm_reservation, config, values)
    if r is None:
        return
    assert r.state_page_bytes <= r.state_page_bytes_padded
    assert r.state_bytes <= r.planned_state_bytes
