"""SGLang 0.5.23's state pool for a hybrid model: ``decode_ring.servers.sglang_reservation`` and
``decode-ring sglang``, against the server's own sizing code.

Expected values are written out. Their provenance, unless a test says otherwise: the functions of
the sglang-0.5.23 wheel, extracted from the wheel's source with ``ast`` and run on a CPU with
torch stubbed (dtype sizes only), on the state shapes the models package gives for the fixture:
``KVCacheConfigurator._handle_max_mamba_cache`` and ``_calculate_mamba_ratio``
(sglang/srt/mem_cache/kv_cache_configurator.py), ``get_mamba_tracking_slots``
(mem_cache/allocation_sizing.py) and ``_mamba_radix_cache_resolution``
(arg_groups/overrides.py), with stub ``get_schedule``/``get_exec``/``get_memory``/``get_spec``;
the KV pool's tokens, which SGLang's default running-request estimate reads, from
``DefaultPoolConfigurator`` and ``ModelConfig._derive_model_shapes`` run from the wheel. The
table of answers is the peer oracle's (``tools/peer_agreement/reservations.py``:
``SglangReservations(open_wheels(["/work/wheels"])).reservation(config, **flags)``, torch
stubbed) on the fixtures in ``tests/configs``; ``None`` is the server refusing to start.

Agreement over the whole grid, against the peer oracle: every fixture x tp 1, 2, 4, 8 x draft
tokens 0, 4 x radix cache on, off x budgets 20, 40, 60 and 100 GiB, field by field: see
``tools/peer_agreement/README.md``. Whole answers and the text, term by term, are golden files
(``tests/golden/sglang-*``, tests/test_golden.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from decode_ring.models import ModelConfigError, TensorParallelSplitError
from decode_ring.servers import ServerArgumentError, sglang_reservation
from decode_ring.servers.common import scaled_context_length

from .support import (
    BAILING_V3,
    CONFIGS,
    FUZZED_CONFIGS,
    HOSTILE_ARGUMENTS,
    KIMI_LINEAR,
    MAMBA,
    NEMOTRON,
    QWEN3_NEXT,
    WRITTEN,
    GiB,
    answer_or_refusal,
    nemotron_with,
    run,
    run_json,
    squeeze,
    usage_error,
)

ZAYA_LEGACY = CONFIGS / "zaya1-8b-legacy.json"
GLM5_NEXT = WRITTEN / "glm5-next-transformers-5.23.0.json"


def sglang_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    """``decode-ring sglang --config NEMOTRON --available-memory 60GiB ARGS --json`` (another
    config or budget where ARGS give one), which must answer."""
    given = {arg.split("=", 1)[0] for arg in args}
    config = () if "--config" in given else ("--config", str(NEMOTRON))
    budget = () if "--available-memory" in given else ("--available-memory", "60GiB")
    status, answer = run_json(capsys, "sglang", *config, *budget, *args)
    assert status == 0, answer
    assert isinstance(answer, dict)
    return answer


# --- the oracle's answers, field by field ------------------------------------------------------

# The oracle's SGLANG_FIELDS, in this order.
SGLANG_FIELDS = (
    "per_request_bytes",
    "slots",
    "pool_bytes",
    "max_running_requests",
    "speculative_scratch_bytes",
    "kv_cache_bytes",
    "kv_bytes_per_token",
    "kv_tokens",
)
# The launches the oracle ran on every fixture.
MEM60: dict[str, Any] = {"available_memory": 60 * GiB}
TP2_MEM40_DRAFT4_RATIO_HALF: dict[str, Any] = {
    "tp_size": 2,
    "available_memory": 40 * GiB,
    "speculative_num_draft_tokens": 4,
    "mamba_full_memory_ratio": 0.5,
}
MEM20_NO_RADIX_CONTEXT4096: dict[str, Any] = {
    "available_memory": 20 * GiB,
    "disable_radix_cache": True,
    "context_length": 4096,
}
MEM60_K300_DRAFT2: dict[str, Any] = {
    "available_memory": 60 * GiB,
    "max_mamba_cache_size": 300,
    "speculative_num_draft_tokens": 2,
}


def fields(row: str) -> tuple[int, ...]:
    """A row of the table below: the fields of SGLANG_FIELDS in order."""
    return tuple(int(word) for word in row.split())


# The oracle's answers, every fixture x four launches.
# fmt: off
SGLANG_CASES: tuple[tuple[str, dict[str, Any], str | None], ...] = (
    ("falcon-h1-7b-instruct.json", MEM60,
     "139358208 217 30380089344 43 0 34044420096 45056 755602"),
    ("falcon-h1-7b-instruct.json", TP2_MEM40_DRAFT4_RATIO_HALF,
     "69746688 111 7811629056 22 6391824384 28721348608 22528 1274917"),
    ("falcon-h1-7b-instruct.json", MEM20_NO_RADIX_CONTEXT4096,
     "139358208 71 10033790976 71 0 11441045504 45056 253929"),
    ("falcon-h1-7b-instruct.json", MEM60_K300_DRAFT2,
     "139358208 300 41946820608 48 13626195968 8820584448 45056 195769"),
    ("falcon-mamba-7b.json", MEM60, "36700160 830 30497832960 276 0 33926676480 0 2048"),
    ("falcon-mamba-7b.json", TP2_MEM40_DRAFT4_RATIO_HALF,
     "18350080 332 6110576640 48 3442475008 33242480640 0 2048"),
    ("falcon-mamba-7b.json", MEM20_NO_RADIX_CONTEXT4096, None),
    ("falcon-mamba-7b.json", MEM60_K300_DRAFT2,
     "36700160 300 11046748160 48 3493855232 49781145600 0 2048"),
    ("granite-4.0-h-tiny.json", MEM60, "57341952 531 30505918464 106 0 33918590976 8192 4140453"),
    ("granite-4.0-h-tiny.json", TP2_MEM40_DRAFT4_RATIO_HALF,
     "28698624 274 7892121600 48 5586997248 29432621056 4096 7185698"),
    ("granite-4.0-h-tiny.json", MEM20_NO_RADIX_CONTEXT4096,
     "57341952 176 10149525504 176 0 11325310976 8192 1382484"),
    ("granite-4.0-h-tiny.json", MEM60_K300_DRAFT2,
     "57341952 300 17259927552 48 5596028928 41545070592 8192 5071419"),
    ("jamba-mini-1.5.json", MEM60, None),
    ("jamba-mini-1.5.json", TP2_MEM40_DRAFT4_RATIO_HALF, None),
    ("jamba-mini-1.5.json", MEM20_NO_RADIX_CONTEXT4096, None),
    ("jamba-mini-1.5.json", MEM60_K300_DRAFT2, None),
    ("jet-nemotron-2b.json", MEM60, "29085696 1048 30510895104 349 0 33913614336 4096 8279691"),
    ("jet-nemotron-2b.json", TP2_MEM40_DRAFT4_RATIO_HALF,
     "14542848 419 6107996160 48 2812465152 33991278592 2048 16597304"),
    ("jet-nemotron-2b.json", MEM20_NO_RADIX_CONTEXT4096,
     "29085696 348 10150907904 348 0 11323928576 4096 2764631"),
    ("jet-nemotron-2b.json", MEM60_K300_DRAFT2,
     "29085696 300 8754794496 48 2825109504 52819316736 4096 12895341"),
    ("kimi-k3.json", MEM60, "449372160 66 30107934720 13 0 34316574720 27648 1241195"),
    ("kimi-k3.json", TP2_MEM40_DRAFT4_RATIO_HALF,
     "224686080 32 7414640640 6 6291210240 29243822080 27648 1057719"),
    ("kimi-k3.json", MEM20_NO_RADIX_CONTEXT4096,
     "449372160 21 9886187520 21 0 11588648960 27648 419149"),
    ("kimi-k3.json", MEM60_K300_DRAFT2, None),
    ("kimi-linear-48b-a3b-instruct.json", MEM60,
     "43417600 701 30479155200 140 0 33945354240 8064 4209493"),
    ("kimi-linear-48b-a3b-instruct.json", TP2_MEM40_DRAFT4_RATIO_HALF,
     "21708800 363 7902003200 48 4254924800 30792744960 8064 3818544"),
    ("kimi-linear-48b-a3b-instruct.json", MEM20_NO_RADIX_CONTEXT4096,
     "43417600 233 10159718400 233 0 11315118080 8064 1403164"),
    ("kimi-linear-48b-a3b-instruct.json", MEM60_K300_DRAFT2,
     "43417600 300 13068697600 48 4254924800 47100887040 8064 5840883"),
    ("mamba-2.8b-hf.json", MEM60, "22937600 1329 30507008000 443 0 33917501440 0 2048"),
    ("mamba-2.8b-hf.json", TP2_MEM40_DRAFT4_RATIO_HALF,
     "11468800 532 6112870400 48 2151546880 34588917760 0 2048"),
    ("mamba-2.8b-hf.json", MEM20_NO_RADIX_CONTEXT4096, None),
    ("mamba-2.8b-hf.json", MEM60_K300_DRAFT2,
     "22937600 300 6904217600 48 2183659520 55272407040 0 2048"),
    ("mamba-codestral-7b.json", MEM60, "272367616 111 30505172992 37 0 33919336448 0 2048"),
    ("mamba-codestral-7b.json", TP2_MEM40_DRAFT4_RATIO_HALF,
     "136183808 42 5855903744 14 8112046080 28922740736 0 2048"),
    ("mamba-codestral-7b.json", MEM20_NO_RADIX_CONTEXT4096, None),
    ("mamba-codestral-7b.json", MEM60_K300_DRAFT2, None),
    ("minimax-m1.json", MEM60, None),
    ("minimax-m1.json", TP2_MEM40_DRAFT4_RATIO_HALF, None),
    ("minimax-m1.json", MEM20_NO_RADIX_CONTEXT4096, None),
    ("minimax-m1.json", MEM60_K300_DRAFT2, None),
    ("nemotron-dense-siglip2.json", MEM60, None),
    ("nemotron-dense-siglip2.json", TP2_MEM40_DRAFT4_RATIO_HALF, None),
    ("nemotron-dense-siglip2.json", MEM20_NO_RADIX_CONTEXT4096, None),
    ("nemotron-dense-siglip2.json", MEM60_K300_DRAFT2, None),
    ("nemotron-nano-9b-v2.json", MEM60, "143548416 211 30432264192 42 0 33992245248 16384 2074722"),
    ("nemotron-nano-9b-v2.json", TP2_MEM40_DRAFT4_RATIO_HALF,
     "71774208 108 7823388672 21 6272335872 28810153984 8192 3516864"),
    ("nemotron-nano-9b-v2.json", MEM20_NO_RADIX_CONTEXT4096,
     "143548416 69 10048389120 69 0 11426447360 16384 697415"),
    ("nemotron-nano-9b-v2.json", MEM60_K300_DRAFT2,
     "143548416 300 43208073216 48 14002716672 7148691456 16384 436321"),
    ("qwen3-next-80b-a3b-instruct.json", MEM60,
     "77266944 393 30443175936 78 0 33981333504 24576 1382704"),
    ("qwen3-next-80b-a3b-instruct.json", TP2_MEM40_DRAFT4_RATIO_HALF,
     "38633472 203 7881228288 40 6263341056 28732555264 12288 2338261"),
    ("qwen3-next-80b-a3b-instruct.json", MEM20_NO_RADIX_CONTEXT4096,
     "77266944 130 10121969664 130 0 11352866816 24576 461949"),
    ("qwen3-next-80b-a3b-instruct.json", MEM60_K300_DRAFT2,
     "77266944 300 23257350144 48 7514357760 33594998784 24576 1366984"),
    ("qwen3.5-27b.json", MEM60, "153944064 197 30480924672 39 0 33943584768 65536 517938"),
    ("qwen3.5-27b.json", TP2_MEM40_DRAFT4_RATIO_HALF,
     "76972032 100 7774175232 20 6403719168 28709847040 32768 876155"),
    ("qwen3.5-27b.json", MEM20_NO_RADIX_CONTEXT4096,
     "153944064 65 10160308224 65 0 11314528256 65536 172646"),
    ("qwen3.5-27b.json", MEM60_K300_DRAFT2,
     "153944064 300 46337163264 48 14990180352 3000827904 65536 45789"),
    ("qwen3.5-35b-a3b.json", MEM60, "64389120 472 30456053760 94 0 33968455680 20480 1658616"),
    ("qwen3.5-35b-a3b.json", TP2_MEM40_DRAFT4_RATIO_HALF,
     "32194560 244 7887667200 48 6237880320 28751872000 10240 2807800"),
    ("qwen3.5-35b-a3b.json", MEM20_NO_RADIX_CONTEXT4096,
     "64389120 156 10109091840 156 0 11365744640 20480 554968"),
    ("qwen3.5-35b-a3b.json", MEM60_K300_DRAFT2,
     "64389120 300 19381125120 48 6261964800 38733250560 20480 1891272"),
    ("zamba2-2.7b.json", MEM60, None),
    ("zamba2-2.7b.json", TP2_MEM40_DRAFT4_RATIO_HALF, None),
    ("zamba2-2.7b.json", MEM20_NO_RADIX_CONTEXT4096, None),
    ("zamba2-2.7b.json", MEM60_K300_DRAFT2, None),
    ("zaya1-8b-legacy.json", MEM60, "368640 82781 30516756480 3233 0 33907752960 40960 827826"),
    ("zaya1-8b-legacy.json", TP2_MEM40_DRAFT4_RATIO_HALF,
     "266240 23043 6135234560 48 44656640 36762255360 20480 1795032"),
    ("zaya1-8b-legacy.json", MEM20_NO_RADIX_CONTEXT4096,
     "368640 27593 10172252160 4096 0 11302584320 40960 275942"),
    ("zaya1-8b-legacy.json", MEM60_K300_DRAFT2,
     "368640 300 110960640 48 31109120 64277422080 40960 1569273"),
    ("zaya1-8b.json", MEM60, "184320 165563 30516756480 4096 0 33907752960 20480 1655652"),
    ("zaya1-8b.json", TP2_MEM40_DRAFT4_RATIO_HALF,
     "133120 46089 6135500800 48 22328320 36788080640 10240 3592586"),
    ("zaya1-8b.json", MEM20_NO_RADIX_CONTEXT4096,
     "184320 55187 10172252160 4096 0 11302584320 20480 551884"),
    ("zaya1-8b.json", MEM60_K300_DRAFT2,
     "184320 300 55480320 48 15554560 64350965760 20480 3142137"),
)
# fmt: on


@pytest.mark.parametrize(("name", "flags", "expected"), SGLANG_CASES)
def test_sglang_agrees_with_the_wheel_field_by_field(
    name: str, flags: dict[str, Any], expected: str | None
) -> None:
    if expected is None:
        with pytest.raises(ModelConfigError):
            sglang_reservation(CONFIGS / name, **flags)
        return
    answer = sglang_reservation(CONFIGS / name, **flags).as_dict()
    assert tuple(answer[field] for field in SGLANG_FIELDS) == fields(expected)


# --- facts ------------------------------------------------------------------------------------


def test_sglang_sizes_its_pool_from_memory() -> None:
    r = sglang_reservation(NEMOTRON, available_memory=60 * GiB)
    assert r.per_request_bytes == 143_548_416
    assert (r.mamba_radix_cache_strategy, r.ratio) == ("extra_buffer", 5)
    assert r.slots == 211
    assert r.pool_bytes == 212 * 143_548_416
    assert r.max_running_requests == 42
    assert r.kv_cache_bytes == 33_992_245_248
    assert r.speculative_scratch_bytes == 0


def test_sglang_running_256_takes_five_slots_each() -> None:
    r = sglang_reservation(NEMOTRON, available_memory=60 * GiB, max_running_requests=256)
    assert r.max_running_requests == 42
    assert r.slots_for_requested == 1280
    assert round(r.pool_bytes_for_requested / GiB, 1) == 171.3  # the issue's 171 GiB
    assert round(r.multiplier, 2) == 5.0


def test_sglang_strategies_change_the_cap_not_the_pool() -> None:
    # Issue 27: an explicit no_buffer needs --disable-overlap-schedule, which SGLang asserts
    # (sglang/srt/arg_groups/mamba_hook.py:156-160): refused on a default launch.
    with pytest.raises(ServerArgumentError, match="no_buffer needs --disable-overlap-schedule"):
        sglang_reservation(
            NEMOTRON, available_memory=60 * GiB, mamba_radix_cache_strategy="no_buffer"
        )
    off = sglang_reservation(NEMOTRON, available_memory=60 * GiB, disable_radix_cache=True)
    assert (off.slots, off.ratio, off.max_running_requests) == (211, 1, 211)
    assert off.kv_cache_bytes == 33_992_245_248
    lazy = sglang_reservation(
        NEMOTRON, available_memory=60 * GiB, mamba_radix_cache_strategy="extra_buffer_lazy"
    )
    assert lazy.ratio == 4


def test_sglang_speculative_solve_and_scratch() -> None:
    r = sglang_reservation(QWEN3_NEXT, available_memory=60 * GiB, speculative_num_draft_tokens=4)
    assert r.per_request_bytes == 77_266_944
    assert (r.slots, r.max_running_requests) == (216, 43)
    assert r.kv_cache_bytes == 34_058_600_448
    # memory_pool.py:864-938 for 44 rows: 36 layers x 44 x 4 x (32, 128, 128) float32, and the
    # deduplicated conv window 36 x 44 x 8192 x (4 + 3 - 1) bfloat16.
    assert r.speculative_ssm_scratch_bytes == 36 * 44 * 4 * 32 * 128 * 128 * 4
    assert r.speculative_conv_scratch_bytes == 36 * 44 * 8192 * 6 * 2
    assert r.speculative_scratch_bytes == 36 * 44 * 4 * 32 * 128 * 128 * 4 + 36 * 44 * 8192 * 6 * 2


def test_sglang_fixed_pool() -> None:
    r = sglang_reservation(NEMOTRON, available_memory=60 * GiB, max_mamba_cache_size=300)
    assert (r.slots, r.kv_cache_bytes) == (300, 21_216_436_224)
    without_budget = sglang_reservation(NEMOTRON, max_mamba_cache_size=300)
    assert without_budget.kv_cache_bytes is None
    assert without_budget.pool_bytes == 301 * 143_548_416


def test_sglang_non_radix_architecture_keeps_ratio_three() -> None:
    r = sglang_reservation(MAMBA, available_memory=60 * GiB)
    assert (r.mamba_radix_cache_strategy, r.ratio) == ("auto", 3)
    # Issue 27: SGLang ignores no_buffer where it keeps no mamba radix cache and sizes as under
    # auto (model_hook.py:1056-1067); it refuses the extra-buffer strategies there.
    ignored = sglang_reservation(
        MAMBA, available_memory=60 * GiB, mamba_radix_cache_strategy="no_buffer"
    )
    assert (ignored.ratio, ignored.slots, ignored.pool_bytes) == (r.ratio, r.slots, r.pool_bytes)
    with pytest.raises(ServerArgumentError, match="needs mamba state, got MambaForCausalLM"):
        sglang_reservation(
            MAMBA, available_memory=60 * GiB, mamba_radix_cache_strategy="extra_buffer"
        )


def test_sglang_estimate_from_the_kv_pool_binds() -> None:
    # resolve_max_num_reqs (kv_cache_configurator.py:3119-3172) with the KV pool's tokens from
    # DefaultPoolConfigurator (pool_configurator.py:340-634), as the oracle ran them: ZAYA1's 40
    # attention layers hold 2 KV heads x (128 + 128) x 2 B each per token; 11,302,584,320 B
    # of KV pool hold 275,942 tokens; int(275942 / 131072 x 512) = 1077, raised to the floor
    # 2048, below 27,593 slots // 3 and 275,942 // 2.
    r = sglang_reservation(ZAYA_LEGACY, available_memory=20 * GiB)
    assert r.kv_bytes_per_token == 2 * (128 + 128) * 40 * 2 == 40_960
    assert (r.kv_cache_bytes, r.kv_tokens) == (11_302_584_320, 275_942)
    assert (r.context_length, r.context_length_rule) == (131_072, "config max_position_embeddings")
    assert (r.slots, r.max_running_requests) == (27_593, 2048)
    # A shorter context raises the estimate to its ceiling, 4096.
    short = sglang_reservation(ZAYA_LEGACY, available_memory=20 * GiB, context_length=4096)
    assert (short.context_length_rule, short.max_running_requests) == ("--context-length", 4096)


def test_sglang_estimate_for_mla_kimi_linear() -> None:
    # MLA: one latent of kv_lora_rank 512 + qk_rope_head_dim 64 per token for its 7 attention
    # layers, whatever the tp; model_max_length 1,048,576. The oracle: 4,205,455 tokens and
    # int(4205455 / 1048576 x 512) = 2053 running requests with the radix cache off.
    r = sglang_reservation(
        KIMI_LINEAR, tp_size=8, available_memory=60 * GiB, disable_radix_cache=True
    )
    assert r.kv_bytes_per_token == (512 + 64) * 7 * 2 == 8064
    assert (r.kv_tokens, r.max_running_requests) == (4_205_455, 2053)


def test_sglang_attention_free_model_sizes_its_kv_pool_to_the_context() -> None:
    # No attention layer: the pool holds context_len tokens (pool_configurator.py:243-248), and
    # mamba-2.8b-hf has no context field, so 2048 (common.py:694): at most 2048 // 2 running.
    r = sglang_reservation(MAMBA, available_memory=60 * GiB, disable_radix_cache=True)
    assert (r.kv_bytes_per_token, r.kv_tokens, r.context_length) == (0, 2048, 2048)
    assert r.context_length_rule == "no context-length field: SGLang's default"
    assert r.max_running_requests == 1024


def test_sglang_max_total_tokens_caps_the_kv_pool() -> None:
    # _apply_token_constraints (kv_cache_configurator.py:3090-3117): min(275,942, 100,000); the
    # estimate int(100000 / 131072 x 512) = 390 is raised to 2048. Without attention the cap is
    # the pool (pool_configurator.py:243-248): int(100000 / 2048 x 512) = 25000, so 4096, under
    # the radix-off pool's 1,329 slots. Both as the oracle ran them.
    r = sglang_reservation(ZAYA_LEGACY, available_memory=20 * GiB, max_total_tokens=100_000)
    assert (r.kv_tokens, r.max_running_requests, r.max_total_tokens) == (100_000, 2048, 100_000)
    free = sglang_reservation(
        MAMBA, available_memory=60 * GiB, disable_radix_cache=True, max_total_tokens=100_000
    )
    assert (free.kv_tokens, free.slots, free.max_running_requests) == (100_000, 1329, 1329)
    assert free.max_total_tokens == 100_000


def test_sglang_dsa_indexer_joins_the_kv_cell() -> None:
    # GLM-5.3-Flash's defaults are DeepSeek sparse attention (is_deepseek_dsa,
    # configs/model_config.py:191-211): 11 MLA layers of (512 + 0) x 2 B, and each, computing
    # its own top-k, keeps ceil((128 + 128 // 128 x 4) / 16) = 9 uint8 bytes of indexer keys
    # (pool_configurator.py:564-640). The oracle: 1,006,484 tokens and 13 requests at tp 1.
    r = sglang_reservation(GLM5_NEXT, available_memory=20 * GiB)
    assert r.kv_bytes_per_token == (512 + 0) * 11 * 2 + 9 * 11 == 11_363
    assert (r.kv_tokens, r.max_running_requests) == (1_006_484, 13)


def test_sglang_adds_the_nextn_draft_its_config_class_defaults() -> None:
    # The file gives no num_nextn_predict_layers; transformers 5.19.0's Glm5NextConfig, which
    # SGLang 0.5.23 builds, defaults it to 1 (models/glm5_next/configuration_glm5_next.py:127).
    # Under speculative decoding the draft's layer joins the KV cell (pool_configurator.py:
    # 259-313): int(11,363 x 1 / 11) = 1,033 B more a token, as the wheel oracle's run gives.
    r = sglang_reservation(GLM5_NEXT, available_memory=40 * GiB, speculative_num_draft_tokens=2)
    assert r.kv_bytes_per_token == 11_363 + 11_363 // 11 == 12_396
    assert r.kv_bytes_per_token_rule.endswith("+ the draft's 1 layers (1033 B)")
    plain = sglang_reservation(GLM5_NEXT, available_memory=40 * GiB)
    assert plain.kv_bytes_per_token == 11_363


def test_sglang_a_target_without_nextn_layers_adds_no_draft_kv() -> None:
    # Nemotron-H's config gives no num_nextn_predict_layers and no draft path is given:
    # _resolve_eagle_aux_hidden_state returns before any draft layer (spec_aux_hidden_state.py:
    # 172-178), so the cell and its rule are the target's alone.
    plain = sglang_reservation(NEMOTRON, available_memory=60 * GiB)
    drafted = sglang_reservation(
        NEMOTRON, available_memory=60 * GiB, speculative_num_draft_tokens=2
    )
    assert (drafted.kv_bytes_per_token, drafted.kv_bytes_per_token_rule) == (
        plain.kv_bytes_per_token,
        "8 KV heads x (128 + 128) x 4 layers x 2 B",
    )


def test_sglang_assumptions_are_these_lines() -> None:
    common = "no ReplaySSM, no fused draft state, no multimodal reserve"
    cuda = "CUDA, one attention data-parallel rank, one pipeline stage"

    def assumptions(config: Path, **flags: Any) -> tuple[str, ...]:
        return tuple(sglang_reservation(config, available_memory=60 * GiB, **flags).assumptions)

    assert assumptions(GRANITE) == (f"{cuda}, page size 1", common)
    assert assumptions(GRANITE, page_size=16) == (cuda, common)
    assert assumptions(GRANITE, disable_overlap_schedule=True) == (
        f"{cuda}, page size 1",
        common,
        "no overlap scheduler (--disable-overlap-schedule)",
    )
    assert assumptions(GRANITE, version="0.5.13") == (
        f"{cuda}, page size 1",
        common,
        "no_buffer runs without the overlap scheduler, as SGLang pairs them",
        "the rules of SGLang 0.5.13 (decode_ring.releases.sglang, each change cited in its "
        "release); the line citations here are SGLang 0.5.23's",
    )
    # GLM-5-Next's NEXTN layer is counted (above); Nemotron-H has none to count.
    speculation = "speculation is EAGLE/NEXTN with topk 1"
    conv = "; conv windows deduplicated (CUDA, linear chain)"
    assert assumptions(GLM5_NEXT, speculative_num_draft_tokens=2) == (
        f"{cuda}, page size 1",
        common,
        speculation + conv,
    )
    assert assumptions(NEMOTRON, speculative_num_draft_tokens=2) == (
        f"{cuda}, page size 1",
        common,
        speculation + " and adds no draft-model KV" + conv,
    )


def glm5_next_with(**fields: object) -> dict[str, Any]:
    """The written GLM-5.3-Flash config, its text config's indexer_types dropped, ``fields`` at
    the root, where SGLang's Glm5NextConfig keeps what it is given (configs/glm5_next.py:
    289-337)."""
    config: dict[str, Any] = json.loads(GLM5_NEXT.read_text())
    del config["text_config"]["indexer_types"]
    config.update(fields)
    return config


@pytest.mark.parametrize(
    ("fields", "keyed"),
    [
        # dsa_layer_skips_topk (configs/model_config.py:488-522) over the 11 attention layers,
        # 3, 7, ..., 43: a "shared" entry of indexer_types reuses the previous layer's top-k;
        ({"indexer_types": ["full", "shared"] * 23}, 0),
        # else LongCat's cli_factor: fresh top-k every 3rd layer id (3, 15, 27, 39);
        ({"cli_factor": 3}, 4),
        # else index_topk_pattern's "S" entries (layer 7);
        ({"index_topk_pattern": "F" * 7 + "S" + "F" * 37}, 10),
        # else every index_topk_freq-th layer after the first (7, 19, 31, 43),
        ({"index_topk_freq": 3}, 4),
        # shifted by index_skip_topk_offset (11, 23, 35).
        ({"index_topk_freq": 3, "index_skip_topk_offset": 3}, 3),
        # index_kpool defaults to 1 (get_dsa_index_kpool, :530-531): 132 B a layer.
        ({}, 11),
    ],
)
def test_sglang_dsa_layers_that_keep_indexer_keys(fields: dict[str, object], keyed: int) -> None:
    config = glm5_next_with(**fields)
    per_layer = 9  # ceil((128 + 4) / 16), index_kpool 16
    if not fields:
        del config["text_config"]["index_kpool"]
        per_layer = 132
    r = sglang_reservation(config, available_memory=20 * GiB)
    # The peer oracle's cells: 11,264, 11,300, 11,354, 11,300, 11,291 and 12,716 B.
    assert r.kv_bytes_per_token == 512 * 11 * 2 + per_layer * keyed
    assert r.kv_bytes_per_token_rule.endswith(f" x {keyed} layers x 1 B")


@pytest.mark.parametrize(
    ("fields", "line"),
    [
        ({"index_head_dim": 0}, "field 'index_head_dim': 0 is not a positive integer"),
        ({"index_head_dim": True}, "field 'index_head_dim': True is not a positive integer"),
        ({"index_kpool": 0}, "field 'index_kpool': 0 is not a positive integer"),
        ({"index_topk_freq": -1}, "field 'index_topk_freq': -1 is not a positive integer"),
    ],
)
def test_sglang_refuses_an_indexer_it_cannot_size(fields: dict[str, object], line: str) -> None:
    # SGLang fails on each: ceil_div by a kpool of 0, an index_head_dim that is no count,
    # dsa_layer_skips_topk's assert freq > 0 (configs/model_config.py:488-522).
    with pytest.raises(ModelConfigError) as raised:
        sglang_reservation(glm5_next_with(**fields), available_memory=20 * GiB)
    assert (raised.value.field, str(raised.value)) == (next(iter(fields)), line)


def test_sglang_refuses_a_context_longer_than_the_models() -> None:
    with pytest.raises(ServerArgumentError, match="context_length: 4096 is longer than") as error:
        sglang_reservation(MAMBA, available_memory=60 * GiB, context_length=4096)
    assert error.value.field == "context_length"


# --- SGLang's rules, written out from the wheel ---------------------------------------------


@pytest.mark.parametrize(
    ("fields", "length", "rule"),
    [
        # get_context_length (sglang/srt/utils/hf_transformers/common.py:668-695): the first
        # of CONTEXT_LENGTH_KEYS in their order, not the smallest.
        (
            {"max_position_embeddings": 5000, "seq_length": 3000, "max_seq_len": 2000},
            3000,
            "config seq_length",
        ),
        (
            {"max_sequence_length": 9000, "seq_length": 3000},
            9000,
            "config max_sequence_length",
        ),
        ({"model_max_length": 6000}, 6000, "config model_max_length"),
        # times rope_scaling's factor, unless it carries original_max_position_embeddings or
        # is llama3.
        (
            {"max_position_embeddings": 4095, "rope_scaling": {"factor": 2.5}},
            10237,
            "config max_position_embeddings x RoPE factor 2.5",
        ),
        (
            {
                "max_position_embeddings": 4096,
                "rope_scaling": {"factor": 4, "original_max_position_embeddings": 1024},
            },
            4096,
            "config max_position_embeddings",
        ),
        (
            {"max_position_embeddings": 4096, "rope_scaling": {"factor": 8, "rope_type": "llama3"}},
            4096,
            "config max_position_embeddings",
        ),
        (
            {"max_position_embeddings": 4096, "rope_scaling": {}},
            4096,
            "config max_position_embeddings",
        ),
        (
            {"max_position_embeddings": 4096, "rope_scaling": {"rope_type": "linear"}},
            4096,
            "config max_position_embeddings",
        ),
        ({}, 2048, "no context-length field: SGLang's default"),
    ],
)
def test_sglang_reads_the_context_length_as_sglang_does(
    fields: dict[str, object], length: int, rule: str
) -> None:
    r = sglang_reservation(nemotron_with(**fields), max_mamba_cache_size=300)
    assert (r.context_length, r.context_length_rule) == (length, rule)
    given = sglang_reservation(
        nemotron_with(**fields), max_mamba_cache_size=300, context_length=length
    )
    assert (given.context_length, given.context_length_rule) == (length, "--context-length")


def test_sglang_refuses_a_context_length_field_that_is_not_an_integer() -> None:
    with pytest.raises(ModelConfigError) as raised:
        sglang_reservation(nemotron_with(seq_length="4k"), max_mamba_cache_size=300)
    assert raised.value.field == "seq_length"
    assert str(raised.value) == "field 'seq_length': '4k' is not an integer"
    with pytest.raises(ServerArgumentError) as longer:
        sglang_reservation(
            nemotron_with(max_position_embeddings=4096),
            max_mamba_cache_size=300,
            context_length=4097,
        )
    assert str(longer.value) == (
        "argument context_length: 4097 is longer than the model's 4096 (config "
        "max_position_embeddings); SGLang refuses it (configs/model_config.py:1295-1316)"
    )


@pytest.mark.parametrize(
    ("fields", "field", "line"),
    [
        # get_context_length (common.py:680-686) calls .get on any truthy rope_scaling, with or
        # without a length key, and fails on one that is not a mapping.
        (
            {"max_position_embeddings": 4096, "rope_scaling": "yarn"},
            "rope_scaling",
            "field 'rope_scaling': 'yarn' is not a mapping; SGLang reads its factor with .get "
            "(common.py:680-686)",
        ),
        (
            {"rope_scaling": [2]},
            "rope_scaling",
            "field 'rope_scaling': <list> is not a mapping; SGLang reads its factor with .get "
            "(common.py:680-686)",
        ),
        # int(factor * val) (:690-693): a factor that is not a number fails, or multiplies a
        # string.
        (
            {"max_position_embeddings": 4096, "rope_scaling": {"factor": "2"}},
            "rope_scaling.factor",
            "field 'rope_scaling.factor': '2' is not a finite factor above 0",
        ),
        (
            {"seq_length": 4096, "rope_scaling": {"factor": None}},
            "rope_scaling.factor",
            "field 'rope_scaling.factor': None is not a finite factor above 0",
        ),
        # A context of 0 tokens: resolve_max_num_reqs divides by it
        # (kv_cache_configurator.py:3123).
        (
            {"max_position_embeddings": 4096, "rope_scaling": {"factor": 0.0001}},
            "rope_scaling.factor",
            "field 'rope_scaling.factor': 4096 x 0.0001 is 0 tokens, not a count of tokens "
            "from 1 to 2**63 - 1",
        ),
        (
            {"seq_length": -4},
            "seq_length",
            "field 'seq_length': -4 is not a count of tokens from 1 to 2**63 - 1",
        ),
    ],
)
def test_sglang_refuses_a_context_length_it_cannot_derive(
    fields: dict[str, object], field: str, line: str
) -> None:
    with pytest.raises(ModelConfigError) as raised:
        sglang_reservation(nemotron_with(**fields), max_mamba_cache_size=300, context_length=64)
    assert (raised.value.field, str(raised.value)) == (field, line)


def test_sglang_multiplies_by_the_factor_only_a_length_key() -> None:
    # Without a length key get_context_length returns 2048 (common.py:690-694) and never
    # multiplies, whatever the factor.
    r = sglang_reservation(nemotron_with(rope_scaling={"factor": "x"}), max_mamba_cache_size=300)
    assert (r.context_length, r.context_length_rule) == (
        2048,
        "no context-length field: SGLang's default",
    )


JET = CONFIGS / "jet-nemotron-2b.json"


def test_sglang_strategy_of_a_radix_architecture_without_extra_buffer() -> None:
    # JetNemotronForCausalLM is in _MAMBA_RADIX_CACHE_ARCHS (arg_groups/overrides.py:369-399)
    # but not in _MAMBA_EXTRA_BUFFER_ARCHS (:403-436): auto resolves to no_buffer with the
    # overlap scheduler off (model_hook.py:1050-1075), 3 slots a request
    # (kv_cache_configurator.py:227, allocation_sizing.py:11-19).
    auto = sglang_reservation(JET, available_memory=20 * GiB)
    assert (auto.mamba_radix_cache_strategy, auto.overlap_schedule, auto.ratio) == (
        "no_buffer",
        False,
        3,
    )
    assert auto.strategy_rule == "auto: architecture has no extra_buffer; overlap turned off"
    assert auto.assumptions[-1] == (
        "no_buffer runs without the overlap scheduler, as SGLang pairs them"
    )
    # Issue 27: an explicit no_buffer asserts the overlap scheduler off (mamba_hook.py:156-160),
    # which a default launch leaves on: refused, as the oracle's SGLang run refuses it.
    with pytest.raises(ServerArgumentError) as flag:
        sglang_reservation(JET, available_memory=20 * GiB, mamba_radix_cache_strategy="no_buffer")
    assert "no_buffer needs --disable-overlap-schedule" in str(flag.value)
    for strategy in ("extra_buffer", "extra_buffer_lazy"):
        with pytest.raises(ServerArgumentError) as raised:
            sglang_reservation(JET, available_memory=20 * GiB, mamba_radix_cache_strategy=strategy)
        assert raised.value.field == "mamba_radix_cache_strategy"
        assert str(raised.value) == (
            f"argument mamba_radix_cache_strategy: {strategy} is not supported for "
            "JetNemotronForCausalLM; use no_buffer: SGLang 0.5.23 asserts it "
            "(sglang/srt/arg_groups/mamba_hook.py:115-119, overrides.py:403-451)"
        )
    off = sglang_reservation(JET, available_memory=20 * GiB, disable_radix_cache=True)
    assert (off.mamba_radix_cache_strategy, off.strategy_rule, off.overlap_schedule) == (
        "none",
        "--disable-radix-cache",
        True,
    )
    assert off.ratio == 1


GRANITE = CONFIGS / "granite-4.0-h-tiny.json"


def granite_at_40gib(**flags: Any) -> tuple[str, bool, int, int, int]:
    """Granite-4.0-H-Tiny with 40 GiB after the weights: strategy, overlap, ratio, K slots and
    the running cap. Every case below has the same pool: 57,341,952 B a request, K =
    int(40 GiB x 0.9 / 1.9 / 57,341,952) - 1 = 353 slots, and 2,764,968 KV tokens left (8,192 B
    each), whose estimate (int(2764968 / 131072 x 512), clamped to 4,096) never binds: the cap is
    353 // ratio."""
    r = sglang_reservation(GRANITE, available_memory=40 * GiB, **flags)
    return (
        r.mamba_radix_cache_strategy,
        r.overlap_schedule,
        r.ratio,
        r.slots,
        r.max_running_requests,
    )


def test_sglang_disable_overlap_schedule_decides_the_strategy_and_its_slots() -> None:
    # Issue 27: SGLang accepts no_buffer on Granite with --disable-overlap-schedule. auto is
    # extra_buffer only with the overlap scheduler or pages over one token (overrides.py:476-487),
    # and an extra buffer keeps two tracking slots with the overlap scheduler, one without
    # (allocation_sizing.py:11-19): 3 + 2, 3 + 1, 3 + 0 slots a request.
    assert granite_at_40gib() == ("extra_buffer", True, 5, 353, 70)
    off: dict[str, Any] = {"disable_overlap_schedule": True}
    assert granite_at_40gib(**off) == ("no_buffer", False, 3, 353, 117)
    named = {**off, "mamba_radix_cache_strategy": "no_buffer"}
    assert granite_at_40gib(**named) == ("no_buffer", False, 3, 353, 117)
    extra = {**off, "mamba_radix_cache_strategy": "extra_buffer"}
    assert granite_at_40gib(**extra) == ("extra_buffer", False, 4, 353, 88)
    # 16-token pages keep auto on the extra buffer without the overlap scheduler.
    assert granite_at_40gib(**off, page_size=16) == ("extra_buffer", False, 4, 353, 88)
    r = sglang_reservation(GRANITE, available_memory=40 * GiB, disable_overlap_schedule=True)
    assert (
        r.strategy_rule == "auto: --disable-overlap-schedule with 1-token pages; overlap turned off"
    )
    assert "no overlap scheduler (--disable-overlap-schedule)" in r.assumptions
    # A lazy extra buffer needs the overlap scheduler (kv_cache_configurator.py:3071-3076).
    with pytest.raises(ServerArgumentError) as lazy:
        granite_at_40gib(**off, mamba_radix_cache_strategy="extra_buffer_lazy")
    assert lazy.value.field == "mamba_radix_cache_strategy"
    assert "extra_buffer_lazy needs the overlap scheduler" in str(lazy.value)
    assert granite_at_40gib(mamba_radix_cache_strategy="extra_buffer_lazy")[2] == 4


def test_sglang_no_buffer_takes_only_one_token_pages() -> None:
    # validate_mamba_no_buffer (mamba_hook.py:155-157) asserts page_size in (1, None): JetNemotron
    # resolves auto to no_buffer, so 16-token pages stop SGLang at boot, flag or none.
    cases: list[dict[str, Any]] = [
        {},
        {"disable_overlap_schedule": True, "mamba_radix_cache_strategy": "no_buffer"},
    ]
    for flags in cases:
        with pytest.raises(ServerArgumentError) as raised:
            sglang_reservation(JET, available_memory=20 * GiB, page_size=16, **flags)
        assert raised.value.field == "page_size"
        assert str(raised.value).startswith(
            "argument page_size: 16: no_buffer supports only page_size=1, which SGLang 0.5.23 "
            "asserts (sglang/srt/arg_groups/mamba_hook.py:155-157); the strategy is no_buffer ("
        )
    ones = sglang_reservation(JET, available_memory=20 * GiB, page_size=1)
    assert (ones.mamba_radix_cache_strategy, ones.ratio) == ("no_buffer", 3)
    # Before 0.5.14 no_buffer asserted nothing of the page: 0.5.11 to 0.5.13 set it to 1, with a
    # warning (sglang-0.5.11:sglang/srt/server_args.py:2420-2427; the same at sglang-0.5.13:
    # :2721-2727), and 0.5.10 kept it (sglang-0.5.10:sglang/srt/server_args.py:2189-2199).
    reset = sglang_reservation(JET, version="0.5.13", available_memory=20 * GiB, page_size=16)
    assert (reset.mamba_radix_cache_strategy, reset.page_size) == ("no_buffer", 1)
    assert reset.page_size_rule == "SGLang 0.5.13 sets 1 for no_buffer (--page-size 16)"
    for pages, rule in (
        (2, "SGLang 0.5.13 sets 1 for no_buffer (--page-size 2)"),
        (1, "--page-size"),
    ):
        one = sglang_reservation(JET, version="0.5.13", available_memory=20 * GiB, page_size=pages)
        assert (one.page_size, one.page_size_rule) == (1, rule)
    # 20 GiB holds 2,764,631 tokens of JetNemotron's KV at page 1, 2,764,624 in 16-token pages.
    assert reset.kv_tokens == 2_764_631
    assert (
        sglang_reservation(JET, version="0.5.11", available_memory=20 * GiB, page_size=16).page_size
        == 1
    )
    kept = sglang_reservation(JET, version="0.5.10", available_memory=20 * GiB, page_size=16)
    assert (kept.page_size, kept.kv_tokens) == (16, 2_764_624)


def test_sglang_disable_overlap_schedule_moves_nothing_else() -> None:
    # A pure Mamba model keeps no mamba radix cache: the flag turns the scheduler off and
    # changes no figure. Before 0.5.14 no_buffer turned it off already.
    mamba = sglang_reservation(MAMBA, available_memory=60 * GiB)
    off = sglang_reservation(MAMBA, available_memory=60 * GiB, disable_overlap_schedule=True)
    assert (mamba.overlap_schedule, off.overlap_schedule) == (True, False)
    assert (off.ratio, off.slots, off.max_running_requests) == (3, mamba.slots, 443)
    old = sglang_reservation(GRANITE, version="0.5.13", available_memory=40 * GiB)
    old_off = sglang_reservation(
        GRANITE, version="0.5.13", available_memory=40 * GiB, disable_overlap_schedule=True
    )
    assert (old.ratio, old.slots, old.max_running_requests) == (3, 354, 118)
    assert (old_off.ratio, old_off.slots, old_off.max_running_requests) == (3, 354, 118)
    assert old.strategy_rule == "auto: no_buffer; SGLang 0.5.13 turns the overlap scheduler off"
    assert (
        old_off.strategy_rule
        == "auto: no_buffer; overlap scheduler off (--disable-overlap-schedule)"
    )
    with pytest.raises(TypeError, match="disable_overlap_schedule: must be a bool"):
        sglang_reservation(GRANITE, available_memory=40 * GiB, disable_overlap_schedule=1)  # type: ignore[arg-type]


def test_sglang_no_buffer_on_sm100_trtllm_architectures_is_not_modelled() -> None:
    with pytest.raises(ServerArgumentError) as raised:
        sglang_reservation(
            CONFIGS / "qwen3.5-27b.json",
            available_memory=40 * GiB,
            disable_overlap_schedule=True,
            gpu_arch="sm100",
        )
    assert "is not modelled: no_buffer refuses that backend" in str(raised.value)


def test_sglang_no_buffer_refusals_on_sm100_and_for_pages_are_these_lines() -> None:
    # Qwen3.5's SM100 default is trtllm_mha with 64-token pages (model_overrides/qwen3_5.py:26-48),
    # which validate_mamba_no_buffer refuses (mamba_hook.py:161-162), auto or by name.
    qwen = CONFIGS / "qwen3.5-27b.json"
    sm100 = (
        "argument mamba_radix_cache_strategy: no_buffer for Qwen3_5ForConditionalGeneration on "
        "SM100, where SGLang gives it trtllm_mha and 64-token pages, is not modelled: no_buffer "
        "refuses that backend (sglang/srt/arg_groups/mamba_hook.py:161-162)"
    )
    for strategy in ("auto", "no_buffer"):
        with pytest.raises(ServerArgumentError) as raised:
            sglang_reservation(
                qwen,
                available_memory=40 * GiB,
                disable_overlap_schedule=True,
                mamba_radix_cache_strategy=strategy,
                gpu_arch="sm100",
            )
        assert (raised.value.field, str(raised.value)) == ("mamba_radix_cache_strategy", sm100)
    # Two-token pages are refused as 16 are (mamba_hook.py:155: page_size in (1, None)); the
    # line names the rule's first part only.
    with pytest.raises(ServerArgumentError) as two:
        sglang_reservation(JET, available_memory=20 * GiB, page_size=2)
    assert (two.value.field, str(two.value)) == (
        "page_size",
        "argument page_size: 2: no_buffer supports only page_size=1, which SGLang 0.5.23 asserts "
        "(sglang/srt/arg_groups/mamba_hook.py:155-157); the strategy is no_buffer (auto: "
        "architecture has no extra_buffer)",
    )


def test_sglang_strategy_rules_name_what_chose_the_strategy() -> None:
    # sglang-0.5.23 overrides.py:476-487: auto is extra_buffer with the overlap scheduler or
    # pages over one token (:479, page_size > 1, so 2 counts), and an extra buffer without the
    # overlap scheduler keeps one tracking slot (allocation_sizing.py:11-19): 3 + 1.
    def strategy(config: Path, **flags: Any) -> tuple[str, bool, int, str]:
        r = sglang_reservation(config, **flags)
        return (r.mamba_radix_cache_strategy, r.overlap_schedule, r.ratio, r.strategy_rule)

    off: dict[str, Any] = {"available_memory": 40 * GiB, "disable_overlap_schedule": True}
    assert strategy(GRANITE, **off, page_size=2) == (
        "extra_buffer",
        False,
        4,
        "auto: --page-size 2, architecture supports it",
    )
    assert strategy(GRANITE, **off, mamba_radix_cache_strategy="no_buffer") == (
        "no_buffer",
        False,
        3,
        "flag, with --disable-overlap-schedule",
    )
    assert strategy(GRANITE, **off, mamba_radix_cache_strategy="extra_buffer") == (
        "extra_buffer",
        False,
        4,
        "flag",
    )
    # Before 0.5.14 no_buffer by name turns the overlap scheduler off itself
    # (sglang-0.5.13 server_args.py:2728-2734).
    old: dict[str, Any] = {"version": "0.5.13", "available_memory": 40 * GiB}
    assert strategy(GRANITE, **old, mamba_radix_cache_strategy="no_buffer") == (
        "no_buffer",
        False,
        3,
        "flag; SGLang 0.5.13 turns the overlap scheduler off",
    )
    assert strategy(
        GRANITE, **old, mamba_radix_cache_strategy="no_buffer", disable_overlap_schedule=True
    ) == ("no_buffer", False, 3, "flag; overlap scheduler off (--disable-overlap-schedule)")
    # An architecture outside the mamba radix cache ignores no_buffer by name (overrides.py:
    # 470-471 returns before any strategy), and keeps the overlap scheduler.
    assert strategy(MAMBA, available_memory=40 * GiB) == (
        "auto",
        True,
        3,
        "MambaForCausalLM is not a mamba-radix-cache architecture",
    )
    assert strategy(MAMBA, available_memory=40 * GiB, mamba_radix_cache_strategy="no_buffer") == (
        "auto",
        True,
        3,
        "MambaForCausalLM is not a mamba-radix-cache architecture; "
        "--mamba-radix-cache-strategy no_buffer ignored",
    )
    # sglang-0.5.13 server_args.py:2459-2462 (support_mamba_cache=False for Kimi-Linear) turns
    # the radix cache off, and with it nothing of the scheduler (:2684-2689 returns first).
    for flag in (False, True):
        kimi = strategy(
            KIMI_LINEAR, version="0.5.13", available_memory=60 * GiB, disable_overlap_schedule=flag
        )
        assert kimi == ("none", not flag, 1, "SGLang 0.5.13 turns the radix cache off for it")


def test_sglang_strategy_refusals_are_these_lines() -> None:
    def refusal(config: Path, **flags: Any) -> tuple[str | None, str]:
        with pytest.raises(ServerArgumentError) as raised:
            sglang_reservation(config, available_memory=40 * GiB, **flags)
        return raised.value.field, str(raised.value)

    assert refusal(GRANITE, mamba_radix_cache_strategy="no_buffer") == (
        "mamba_radix_cache_strategy",
        "argument mamba_radix_cache_strategy: no_buffer needs --disable-overlap-schedule: SGLang "
        "0.5.23 asserts the overlap scheduler off (sglang/srt/arg_groups/mamba_hook.py:156-160); "
        "auto resolves no_buffer, and turns it off, where extra_buffer is not supported",
    )
    lazy = {"mamba_radix_cache_strategy": "extra_buffer_lazy"}
    assert refusal(GRANITE, disable_overlap_schedule=True, **lazy) == (
        "mamba_radix_cache_strategy",
        "argument mamba_radix_cache_strategy: extra_buffer_lazy needs the overlap scheduler: "
        "SGLang 0.5.23 asserts it (--disable-overlap-schedule is incompatible; "
        "sglang/srt/mem_cache/kv_cache_configurator.py:3071-3076)",
    )
    # Both extra-buffer strategies need the mamba radix cache (model_hook.py:1059-1066).
    assert refusal(MAMBA, **lazy) == (
        "mamba_radix_cache_strategy",
        "argument mamba_radix_cache_strategy: extra_buffer_lazy needs mamba state, got "
        "MambaForCausalLM: SGLang 0.5.23 refuses it where the mamba radix cache is off "
        "(sglang/srt/arg_groups/model_hook.py:1059-1066)",
    )


def test_sglang_command_line_disables_the_overlap_schedule(
    capsys: pytest.CaptureFixture[str],
) -> None:
    no_buffer = (
        *("--config", str(GRANITE), "--available-memory", "40GiB"),
        *("--mamba-radix-cache-strategy", "no_buffer"),
    )
    answer = sglang_json(capsys, *no_buffer, "--disable-overlap-schedule")
    assert (answer["mamba_radix_cache_strategy"], answer["ratio"]) == ("no_buffer", 3)
    assert answer["max_running_requests"] == 117
    refused = usage_error(capsys, "sglang", *no_buffer)
    assert refused.startswith(
        "argument --mamba-radix-cache-strategy: no_buffer needs --disable-overlap-schedule"
    )


def test_sglang_refusals_are_these_lines() -> None:
    with pytest.raises(ServerArgumentError) as not_radix:
        sglang_reservation(
            CONFIGS / "mamba-2.8b-hf.json",
            available_memory=20 * GiB,
            mamba_radix_cache_strategy="extra_buffer",
        )
    assert str(not_radix.value) == (
        "argument mamba_radix_cache_strategy: extra_buffer needs mamba state, got "
        "MambaForCausalLM: SGLang 0.5.23 refuses it where the mamba radix cache is off "
        "(sglang/srt/arg_groups/model_hook.py:1059-1066)"
    )
    with pytest.raises(ServerArgumentError) as no_slot:
        sglang_reservation(NEMOTRON, available_memory=100 * 2**20)
    # 143,548,416 B a request (above): 100 MiB holds none.
    assert str(no_slot.value) == (
        "argument available_memory: 104857600 B holds no state slot of 143548416 B (with one "
        "padding slot); SGLang refuses to start"
    )
    with pytest.raises(ServerArgumentError) as zero:
        sglang_reservation(NEMOTRON, max_mamba_cache_size=0)
    assert (
        str(zero.value) == "argument max_mamba_cache_size: 0 state slots: SGLang refuses to start"
    )
    assert zero.value.field == "max_mamba_cache_size"


@pytest.mark.parametrize("architectures", [None, [], [5], "NemotronHForCausalLM"])
def test_sglang_needs_the_architecture(architectures: object) -> None:
    config = json.loads(Path(NEMOTRON).read_text())
    config["architectures"] = architectures
    with pytest.raises(ModelConfigError) as raised:
        sglang_reservation(config, available_memory=20 * GiB)
    assert raised.value.field == "architectures"
    assert str(raised.value) == (
        "field 'architectures': missing; SGLang picks the model class, and with it the cache "
        "strategy, from architectures[0]"
    )


@pytest.mark.parametrize(
    ("arguments", "line"),
    [
        ({"tp_size": 0}, "argument tp_size: must be from 1 to 2**63 - 1, got 0"),
        (
            {"available_memory": -1},
            "argument available_memory: must be from 0 to 2**63 - 1, got -1",
        ),
        (
            {"max_mamba_cache_size": -1},
            "argument max_mamba_cache_size: must be from 0 to 2**63 - 1, got -1",
        ),
        ({"disable_radix_cache": 1}, "argument disable_radix_cache: must be a bool, not int"),
        (
            {"speculative_num_draft_tokens": -1},
            "argument speculative_num_draft_tokens: must be from 0 to 2**63 - 1, got -1",
        ),
        ({"context_length": 0}, "argument context_length: must be from 1 to 2**63 - 1, got 0"),
        (
            {"gpu_arch": "sm75"},
            "argument gpu_arch: unknown value 'sm75'; use sm80, sm86, sm89, sm90, sm100, sm120, "
            "sm121",
        ),
        (
            {"mamba_full_memory_ratio": "x"},
            "argument mamba_full_memory_ratio: must be a float, not str",
        ),
        (
            {"mamba_full_memory_ratio": -0.5},
            "argument mamba_full_memory_ratio: must be a finite number above 0 and at most "
            "1,000,000, got -0.5",
        ),
        (
            {"available_memory": 0},
            "argument available_memory: 0 B holds no state slot of 143548416 B (with one padding "
            "slot); SGLang refuses to start",
        ),
        ({"mem_fraction_static": 1.0}, "argument mem_fraction_static: must be below 1, got 1.0"),
        ({"page_size": 0}, "argument page_size: must be from 1 to 2**63 - 1, got 0"),
        (
            {"kv_cache_dtype": "fp16"},
            "argument kv_cache_dtype: unknown value 'fp16'; use auto, bf16, bfloat16, fp8_e4m3, "
            "fp8_e5m2",
        ),
        (
            {"chunked_prefill_size": 0},
            "argument chunked_prefill_size: must be from 1 to 2**63 - 1, got 0",
        ),
        ({"weights_bytes": -1}, "argument weights_bytes: must be from 0 to 2**63 - 1, got -1"),
        (
            {"mamba_radix_cache_strategy": "lazy"},
            "argument mamba_radix_cache_strategy: unknown value 'lazy'; use auto, no_buffer, "
            "extra_buffer, extra_buffer_lazy",
        ),
        (
            {"disable_overlap_schedule": 1},
            "argument disable_overlap_schedule: must be a bool, not int",
        ),
        (
            {"max_running_requests": 0},
            "argument max_running_requests: must be from 1 to 2**63 - 1, got 0",
        ),
        (
            {"mamba_ssm_dtype": "fp8"},
            "argument mamba_ssm_dtype: unknown value 'fp8'; use float32, bfloat16, float16",
        ),
        ({"max_total_tokens": 0}, "argument max_total_tokens: must be from 1 to 2**63 - 1, got 0"),
        (
            {"dtype": "fp8"},
            "argument dtype: unknown value 'fp8'; use auto, bfloat16, float16, half",
        ),
    ],
)
def test_sglang_refusals_name_the_argument(arguments: dict[str, Any], line: str) -> None:
    flags: dict[str, Any] = {"available_memory": 60 * GiB, **arguments}
    with pytest.raises((ServerArgumentError, TypeError)) as raised:
        sglang_reservation(NEMOTRON, **flags)
    assert str(raised.value) == line
    if isinstance(raised.value, ServerArgumentError):
        assert raised.value.field == line.split(":")[0].removeprefix("argument ")


def test_sglang_smallest_values() -> None:
    # One running request, a context of one token: SGLang takes both (the estimate is then
    # clamped to 4096, and the cap is the pool's 211 // 5 = 42, above).
    assert (
        sglang_reservation(
            NEMOTRON, available_memory=60 * GiB, max_running_requests=1
        ).max_running_requests
        == 1
    )
    assert (
        sglang_reservation(
            NEMOTRON, available_memory=60 * GiB, context_length=1
        ).max_running_requests
        == 42
    )


def test_sglang_layer_types_make_only_granite_a_radix_architecture() -> None:
    # overrides.py:369-399: GraniteMoeHybrid is a mamba-radix-cache architecture when its
    # layer_types hold "mamba"; another architecture's layer_types change nothing.
    config = json.loads((CONFIGS / "mamba-2.8b-hf.json").read_text())
    config["layer_types"] = ["mamba"] * config["num_hidden_layers"]
    r = sglang_reservation(config, available_memory=60 * GiB)
    assert (r.mamba_radix_cache_strategy, r.ratio) == ("auto", 3)


# --- the pool at its edges, as the oracle ran them ----------------------------------------------

# Nemotron-Nano-9B-v2's state per request (the table above).
NEMOTRON_PER_REQUEST = 143_548_416


def test_sglang_radix_cache_off_with_one_running_request_keeps_one_slot() -> None:
    # _handle_max_mamba_cache (kv_cache_configurator.py:3325-3336): with the radix cache off the
    # slots are max(1, max_running_requests) = 1; the oracle: a pool of 2 x 143,548,416 B and
    # 64,137,412,608 B of KV pool.
    r = sglang_reservation(
        NEMOTRON, available_memory=60 * GiB, disable_radix_cache=True, max_running_requests=1
    )
    assert (r.slots, r.slots_rule) == (1, "--disable-radix-cache with max_running_requests")
    assert (r.pool_bytes, r.max_running_requests) == (2 * NEMOTRON_PER_REQUEST, 1)
    assert (r.kv_cache_bytes, r.kv_tokens) == (64_137_412_608, 3_914_637)


def test_sglang_takes_a_pool_of_one_slot() -> None:
    # --max-mamba-cache-size 1 with the radix cache off: one slot serves one request (ratio 1);
    # SGLang refuses only a size of 0 or less (:3392-3403). The oracle's answer.
    r = sglang_reservation(
        NEMOTRON, available_memory=60 * GiB, max_mamba_cache_size=1, disable_radix_cache=True
    )
    assert (r.slots, r.ratio, r.max_running_requests) == (1, 1, 1)
    assert (r.pool_bytes, r.kv_cache_bytes) == (2 * NEMOTRON_PER_REQUEST, 64_137_412_608)


def test_sglang_speculative_scratch_of_one_running_request() -> None:
    # One running request with 2 draft tokens: the scratch is kept for max(1, 1) = 1 request and
    # the padding row (:3372-3377), 2 x 2 x 143,548,416 B out of the KV budget. The oracle's.
    r = sglang_reservation(
        NEMOTRON, available_memory=60 * GiB, max_running_requests=1, speculative_num_draft_tokens=2
    )
    assert (r.slots, r.max_running_requests) == (149, 1)
    assert (r.speculative_scratch_bytes, r.kv_cache_bytes) == (571_539_456, 42_318_053_376)


def test_sglang_fixed_pool_with_draft_tokens_and_no_budget() -> None:
    # A fixed pool needs no budget; the scratch comes out of a budget only where there is one.
    r = sglang_reservation(
        NEMOTRON, max_mamba_cache_size=300, speculative_num_draft_tokens=2, max_total_tokens=5000
    )
    assert (r.slots, r.pool_bytes) == (300, 301 * NEMOTRON_PER_REQUEST)
    assert (r.kv_cache_bytes, r.kv_tokens) == (None, None)
    assert r.max_total_tokens == 5000  # the flag, though no KV pool is sized


def test_sglang_floors_the_slots_as_sglang_does() -> None:
    # _handle_max_mamba_cache's joint solve (:3362-3369) floors a float quotient with //. At this
    # ratio the state budget less 3 x 143,548,416 B falls short of 150 slots of 1.4 x
    # 143,548,416 B by less than the quotient's rounding, so a true division would give 150.0;
    # the oracle, which runs the wheel's code, keeps 149.
    r = sglang_reservation(
        NEMOTRON,
        available_memory=60 * GiB,
        speculative_num_draft_tokens=2,
        mamba_full_memory_ratio=0.9033084127213464,
    )
    assert (r.slots, r.max_running_requests) == (149, 29)
    assert (r.speculative_scratch_bytes, r.kv_cache_bytes) == (8_573_091_840, 34_279_342_080)


def test_sglang_keeps_scratch_for_the_one_request_asked_with_the_radix_cache_off() -> None:
    # _handle_max_mamba_cache (kv_cache_configurator.py:3229-3409): with the radix cache off,
    # --max-running-requests 1 is the one slot; the KV budget loses that slot and the padding
    # one (2 p) and the scratch of 2 draft tokens for the request and the padding row (4 p).
    r = sglang_reservation(
        NEMOTRON,
        available_memory=60 * GiB,
        disable_radix_cache=True,
        max_running_requests=1,
        speculative_num_draft_tokens=2,
    )
    assert (r.slots, r.slots_rule) == (1, "--disable-radix-cache with max_running_requests")
    assert r.kv_cache_bytes == 60 * GiB - 6 * NEMOTRON_PER_REQUEST


def test_sglang_without_a_gpu_or_a_budget_leaves_the_kv_pool_unknown() -> None:
    # A fraction without a GPU gives no budget (the pool then needs max_mamba_cache_size);
    # available_memory given keeps the quantization read from the launch.
    r = sglang_reservation(
        NEMOTRON, mem_fraction_static=0.85, weights_bytes=10 * GiB, max_mamba_cache_size=10
    )
    assert (r.available_memory, r.kv_cache_bytes, r.kv_tokens) == (None, None, None)
    fixed = sglang_reservation(NEMOTRON, max_mamba_cache_size=10, quantization="fp8")
    assert (fixed.available_memory, fixed.quantization) == (None, "fp8")
    # A GPU's budget needs the weights: a config without safetensors beside it names the flag.
    with pytest.raises(ServerArgumentError) as raised:
        sglang_reservation(QWEN3_NEXT, gpu="h100-sxm")
    assert (raised.value.field, str(raised.value)) == (
        "weights_bytes",
        "argument weights_bytes: the snapshot holds no safetensors to size the weights from; "
        "give their size",
    )
    q = sglang_reservation(QWEN3_NEXT, available_memory=60 * GiB, quantization="fp8")
    assert (q.quantization, q.available_memory_rule) == ("fp8", "--available-memory")


def test_sglang_refuses_a_budget_the_state_pool_takes_whole() -> None:
    # rest_memory <= 0 after the pool (kv_cache_configurator.py:3042-3058): exactly the 301
    # slots' bytes leave 0 for the KV cache, which SGLang refuses, as the oracle does.
    with pytest.raises(ServerArgumentError) as raised:
        sglang_reservation(
            NEMOTRON, available_memory=301 * NEMOTRON_PER_REQUEST, max_mamba_cache_size=300
        )
    assert raised.value.field == "available_memory"
    assert str(raised.value) == (
        "argument available_memory: 43208073216 B leaves no memory for the KV cache after the "
        "state pool of 43208073216 B; SGLang refuses to start (kv_cache_configurator.py:3042-3058)"
    )
    # SGLang's own line opens so (sglang-0.5.23:sglang/srt/mem_cache/kv_cache_configurator.py:
    # 3050-3051); the rest of it names figures of the launch the budget stands for.
    assert raised.value.server_refusal is not None
    assert raised.value.server_refusal.startswith(
        "ValueError: Loaded weights leave no GPU memory for the KV cache "
    )


def test_sglang_refuses_kimi_k3_whose_fixed_pool_outgrows_the_budget() -> None:
    # The table's refused case: 301 slots of 449,372,160 B exceed 60 GiB (the oracle refuses).
    with pytest.raises(ServerArgumentError) as raised:
        sglang_reservation(CONFIGS / "kimi-k3.json", **MEM60_K300_DRAFT2)
    assert raised.value.field == "available_memory"
    assert str(raised.value) == (
        "argument available_memory: 64424509440 B leaves no memory for the KV cache after the "
        "state pool of 135261020160 B; SGLang refuses to start (kv_cache_configurator.py:3042-3058)"
    )


def test_sglang_refuses_a_kv_pool_that_serves_no_request() -> None:
    # resolve_max_num_reqs (:3119-3172): 5 slots at 5 a request serve one, but one KV token
    # caps the requests at 1 // 2 = 0, and SGLang refuses (the oracle: max_num_reqs=0).
    with pytest.raises(ServerArgumentError) as raised:
        sglang_reservation(
            NEMOTRON, available_memory=60 * GiB, max_mamba_cache_size=5, max_total_tokens=1
        )
    assert raised.value.field == "max_mamba_cache_size"
    assert str(raised.value) == (
        "argument max_mamba_cache_size: a KV pool of 1 tokens (requests are capped at tokens // "
        "2) serves no request; SGLang refuses to start (kv_cache_configurator.py:3160-3168)"
    )
    # A KV budget under one token's bytes holds no token: Qwen3-Next's 5 slots and the padding
    # one take 6 x 77,266,944 B, and the 100 B left are under its 24,576 B a token.
    with pytest.raises(ServerArgumentError) as empty:
        sglang_reservation(
            QWEN3_NEXT, available_memory=6 * 77_266_944 + 100, max_mamba_cache_size=5
        )
    assert str(empty.value) == (
        "argument max_mamba_cache_size: a KV pool of 0 tokens (requests are capped at tokens // "
        "2) serves no request; SGLang refuses to start (kv_cache_configurator.py:3160-3168)"
    )


def test_sglang_asks_for_a_budget_in_one_line() -> None:
    with pytest.raises(ServerArgumentError) as raised:
        sglang_reservation(NEMOTRON)
    assert str(raised.value) == (
        "argument available_memory: needed: SGLang sizes the state pool from the memory left "
        "after the weights (or give max_mamba_cache_size)"
    )


@pytest.mark.parametrize(
    ("config", "per_token", "rule", "tokens"),
    [
        # configs/model_config.py:1420-1431: BailingMoeV3 under use_mla_nope reads
        # qk_rope_head_dim as 0, so its latent is 512 wide.
        (
            {**BAILING_V3, "use_mla_nope": True},
            512 * 2 * 2,
            "MLA (512 + 0) x 2 layers x 2 B",
            5_524_960,
        ),
        (BAILING_V3, (512 + 64) * 2 * 2, "MLA (512 + 64) x 2 layers x 2 B", 4_911_075),
        # Another MLA architecture keeps its RoPE part whatever use_mla_nope says.
        (
            {**json.loads(KIMI_LINEAR.read_text()), "use_mla_nope": True},
            (512 + 64) * 7 * 2,
            "MLA (512 + 64) x 7 layers x 2 B",
            1_403_164,
        ),
    ],
)
def test_sglang_mla_latent_without_its_rope_part_under_use_mla_nope(
    config: dict[str, Any], per_token: int, rule: str, tokens: int
) -> None:
    # The KV tokens are the oracle's, at 20 GiB.
    r = sglang_reservation(config, available_memory=20 * GiB)
    assert (r.kv_bytes_per_token, r.kv_bytes_per_token_rule) == (per_token, rule)
    assert r.kv_tokens == tokens


def test_sglang_dsa_indexer_is_read_as_sglangs_config_object_reads_it() -> None:
    # is_deepseek_dsa (configs/model_config.py:191-211) reads index_topk from the config object,
    # which answers the wrapper's fields, else its text config's: at the root alone it counts.
    config = json.loads(GLM5_NEXT.read_text())
    config["index_topk"] = config["text_config"].pop("index_topk")
    r = sglang_reservation(config, available_memory=20 * GiB)
    assert r.kv_bytes_per_token == (512 + 0) * 11 * 2 + 9 * 11 == 11_363
    assert r.kv_bytes_per_token_rule == (
        "MLA (512 + 0) x 11 layers x 2 B + DSA indexer ceil((128 + 128 // 128 x 4) / 16) x 11 "
        "layers x 1 B"
    )
    assert (r.kv_tokens, r.max_running_requests) == (1_006_484, 13)
    # An index_topk on an architecture outside the DSA list adds no indexer: the oracle's cell
    # is Nemotron's own, 16,384 B.
    plain = sglang_reservation({**json.loads(NEMOTRON.read_text()), "index_topk": 2048}, **MEM60)
    assert plain.kv_bytes_per_token == 16_384
    assert plain.kv_bytes_per_token_rule == "8 KV heads x (128 + 128) x 4 layers x 2 B"


# --- refusals ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda: sglang_reservation(NEMOTRON, available_memory=GiB), "available_memory"),
        (lambda: sglang_reservation(NEMOTRON), "available_memory"),
        (lambda: sglang_reservation(NEMOTRON, max_mamba_cache_size=0), "max_mamba_cache_size"),
        (lambda: sglang_reservation(NEMOTRON, max_mamba_cache_size=4), "max_mamba_cache_size"),
        (lambda: sglang_reservation(NEMOTRON, mamba_ssm_dtype="fp32"), "mamba_ssm_dtype"),
        (lambda: sglang_reservation(NEMOTRON, max_total_tokens=0), "max_total_tokens"),
        # One KV token: SGLang caps requests at tokens // 2 = 0 and refuses (:3132, 3160-3168).
        (
            lambda: sglang_reservation(NEMOTRON, available_memory=60 * GiB, max_total_tokens=1),
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
        lambda: sglang_reservation(NEMOTRON, tp_size="2"),  # type: ignore[arg-type]
        lambda: sglang_reservation(NEMOTRON, mamba_full_memory_ratio=True),
    ],
)
def test_wrong_types_are_type_errors(call: object) -> None:
    with pytest.raises(TypeError):
        call()  # type: ignore[operator]


def test_a_tp_the_model_cannot_split_is_refused() -> None:
    with pytest.raises(TensorParallelSplitError):
        sglang_reservation(NEMOTRON, tp_size=3, available_memory=60 * GiB)


# The models package names a family-less attention model "transformer".
def test_a_model_without_recurrent_state_is_refused_in_one_line() -> None:
    config = {"model_type": "llama", "num_hidden_layers": 2, "num_attention_heads": 4}
    config["hidden_size"] = 64
    with pytest.raises(ModelConfigError) as raised:
        sglang_reservation(config, available_memory=GiB)
    assert str(raised.value) == "llama: no recurrent layer, so SGLang keeps no state pool for it"
    assert (raised.value.field, raised.value.family) == ("model_type", "transformer")


def test_the_answer_carries_the_issues_field_names() -> None:
    answer = sglang_reservation(NEMOTRON, available_memory=60 * GiB).as_dict()
    for name in (
        "per_request_bytes",
        "slots",
        "pool_bytes",
        "max_running_requests",
        "speculative_scratch_bytes",
        "kv_cache_bytes",
        "assumptions",
    ):
        assert name in answer


# --- decode-ring sglang --------------------------------------------------------------------------


def test_the_text_and_the_json(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("sglang", "--config", str(NEMOTRON), "--available-memory", "60GiB")
    status, out, err = run(capsys, *args, "--max-running-requests", "256")
    assert (status, err) == (0, "")
    assert out.startswith(
        "SGLang 0.5.23 reserves for nemotron_h (nemotron_h, NemotronHForCausalLM)"
    )
    assert "state slots K          211" in out
    assert "1280 slots               171.26 GiB        34.22 GiB  5.004x" in out
    result = sglang_json(capsys, "--tp", "1")
    assert (result["slots"], result["max_running_requests"]) == (211, 42)
    assert result["kv_cache_bytes"] == 33_992_245_248
    # A flag given twice: argparse keeps the last value, and the text says whose parser.
    status, out, err = run(
        capsys, *args, "--max-running-requests", "8", "--max-running-requests", "4"
    )
    assert (status, err) == (0, "")
    assert (
        "  given more than once   --max-running-requests: the last value, as SGLang's parser "
        "takes it\n"
    ) in out


def test_the_speculative_flags(capsys: pytest.CaptureFixture[str]) -> None:
    result = sglang_json(
        capsys,
        "--config",
        str(QWEN3_NEXT),
        "--speculative-algorithm",
        "EAGLE",
        "--speculative-num-steps",
        "3",
        "--speculative-eagle-topk",
        "1",
        "--speculative-num-draft-tokens",
        "4",
    )
    assert (result["slots"], result["max_running_requests"]) == (216, 43)
    assert result["speculative_scratch_bytes"] == (
        36 * 44 * 4 * 32 * 128 * 128 * 4 + 36 * 44 * 8192 * 6 * 2
    )


# SGLang's spellings of each flag (sglang/srt/arg_groups/fields/*.py, aliases included, as tools
# read them into _flags.py), each given a value, and the field of the answer it sets; a draft
# token count needs its algorithm.
FLAGS: list[tuple[tuple[str, ...], str, tuple[str, ...], str, object]] = [
    (("--tp-size", "--tp", "--tensor-parallel-size"), "2", (), "tp_size", 2),
    (("--available-memory",), "40GiB", (), "available_memory", 40 * GiB),
    (("--max-mamba-cache-size",), "300", (), "slots", 300),
    (
        ("--mamba-full-memory-ratio",),
        "0.5",
        (),
        "mamba_full_memory_ratio",
        0.5,
    ),
    # Issue 27: an explicit no_buffer needs --disable-overlap-schedule (mamba_hook.py:156-160),
    # refused here; extra_buffer_lazy is one Nemotron-H takes.
    (
        ("--mamba-radix-cache-strategy",),
        "extra_buffer_lazy",
        (),
        "mamba_radix_cache_strategy",
        "extra_buffer_lazy",
    ),
    (("--max-running-requests",), "8", (), "requested_requests", 8),
    (
        ("--speculative-num-draft-tokens",),
        "4",
        ("--speculative-algorithm", "EAGLE"),
        "speculative_num_draft_tokens",
        4,
    ),
    (("--mamba-ssm-dtype",), "bfloat16", (), "ssm_dtype", "bfloat16"),
    (("--context-length",), "4096", (), "context_length", 4096),
    (("--max-total-tokens",), "100000", (), "max_total_tokens", 100_000),
    (("--gpu-arch",), "sm86", (), "gpu_arch", "sm86"),
]


@pytest.mark.parametrize(("spellings", "value", "beside", "field", "expected"), FLAGS)
def test_each_flag_in_each_of_sglangs_spellings(
    capsys: pytest.CaptureFixture[str],
    spellings: tuple[str, ...],
    value: str,
    beside: tuple[str, ...],
    field: str,
    expected: object,
) -> None:
    for spelling in spellings:
        assert sglang_json(capsys, *beside, spelling, value)[field] == expected
        assert sglang_json(capsys, *beside, f"{spelling}={value}")[field] == expected


def test_sglang_takes_no_underscore_spellings(capsys: pytest.CaptureFixture[str]) -> None:
    # SGLang's parser does not rewrite --a_b as --a-b (vLLM's does), so it refuses
    # --tp_size; so does decode-ring sglang, naming the spelling SGLang has (issue 25).
    base = ("sglang", "--config", str(NEMOTRON), "--available-memory", "60GiB")
    assert usage_error(capsys, *base, "--tp_size", "2") == (
        "'--tp_size' is not a SGLang 0.5.23 flag (SGLang spells it --tp-size: it reads no "
        "underscores)"
    )


def test_the_speculative_flags_in_each_spelling(capsys: pytest.CaptureFixture[str]) -> None:
    draft = ("--speculative-num-draft-tokens", "2")
    for spelling in ("--speculative-algorithm",):
        answer = sglang_json(capsys, spelling, "nextn", *draft)
        assert answer["assumptions"][-1] == "speculative algorithm NEXTN"
    for spelling in ("--speculative-num-steps",):
        answer = sglang_json(capsys, "--speculative-algorithm", "MTP", *draft, spelling, "3")
        assert answer["assumptions"][-2:] == [
            "speculative algorithm MTP",
            "speculative num steps 3: does not change the state pool",
        ]
    for spelling in ("--speculative-eagle-topk",):
        assert sglang_json(capsys, "--speculative-algorithm", "EAGLE", *draft, spelling, "1")
        assert usage_error(
            capsys,
            *("sglang", "--config", str(NEMOTRON), "--available-memory", "60GiB"),
            *("--speculative-algorithm", "EAGLE", *draft, spelling, "2"),
        ) == ("argument --speculative-eagle-topk: only a linear draft chain (topk 1) is modelled")
    for spelling in ("--disable-radix-cache",):
        off = sglang_json(capsys, spelling)
        assert (off["disable_radix_cache"], off["ratio"]) == (True, 1)


def test_without_a_flag_each_value_is_sglangs_default(capsys: pytest.CaptureFixture[str]) -> None:
    # SGLang's defaults (sglang/srt/arg_groups/fields/*.py): tp_size 1, mamba_full_memory_ratio
    # 0.9, mamba_radix_cache_strategy auto, the radix cache on, no speculation, the context from
    # the config, no token cap; the GPU assumed is sm90 (H100/H200). Nemotron-Nano-9B-v2 with
    # 60 GiB: 211 state slots, 5 a request, 42 running (below).
    answer = sglang_json(capsys)
    assert (answer["tp_size"], answer["gpu_arch"], answer["mamba_full_memory_ratio"]) == (
        1,
        "sm90",
        0.9,
    )
    assert answer["strategy_rule"] == "auto: overlap scheduler on, architecture supports it"
    assert answer["slots_rule"] == "0.9/(1+0.9) of available_memory, one slot padding"
    assert (answer["disable_radix_cache"], answer["speculative_num_draft_tokens"]) == (False, 0)
    assert (answer["slots"], answer["ratio"], answer["requested_requests"]) == (211, 5, 42)
    assert answer["ssm_dtype_rule"] == (
        "SGLang default float32 (sglang/srt/configs/mamba_utils.py:70)"
    )
    assert (answer["context_length_rule"], answer["max_total_tokens"]) == (
        "config max_position_embeddings",
        None,
    )


def test_the_help_shows_each_flag_as_sglang_names_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")  # where the help text wraps
    status, out, err = run(capsys, "sglang", "--help")
    assert (status, err) == (0, "")
    text = squeeze(out)
    # Issue 25: the package's flags are argparse's; SGLang's are the launch line's, read apart
    # as SGLang reads them, and listed by the flag SGLang names them with.
    assert text.startswith(
        "usage: decode-ring sglang [-h] [--config MODEL] [--allow-unmodelled] [--gpu NAME] "
        "[--gpu-memory SIZE] [--gpu-arch {sm80,sm86,sm89,sm90,sm100,sm120,sm121}] "
        "[--weights-memory SIZE] [--json] [--sglang-version VERSION] [--compare VERSION] "
        "[--available-memory SIZE] "
    )
    # Each help text whole, between its flag and the next flag.
    for fragment in (
        "--config MODEL the model the earlier way, before the launch line: the model: a "
        "config.json, a snapshot directory, a models--ORG--NAME cache folder, ORG/NAME from the "
        "local Hugging Face cache (pip install 'decode_ring[hub]'), or - for stdin "
        "--allow-unmodelled ",
        "--gpu-arch {sm80,sm86,sm89,sm90,sm100,sm120,sm121} the GPU's architecture, over --gpu's "
        "(default sm90: H100/H200, without --gpu) --weights-memory ",
        "--json one JSON object on stdout --sglang-version VERSION",
        "--compare VERSION also answer the launch under another release",
        "--available-memory SIZE per rank, after the weights: what _handle_max_mamba_cache divides "
        "The launch line",
        "read as SGLang reads them: unambiguous prefixes (--tp for --tp-size), no underscores.",
        "modelled SGLang flags: --tp-size, --max-mamba-cache-size, --mamba-full-memory-ratio, "
        "--mamba-radix-cache-strategy, --disable-radix-cache, --disable-overlap-schedule, "
        "--max-running-requests, --speculative-algorithm, --speculative-num-draft-tokens, "
        "--speculative-num-steps, --speculative-eagle-topk, --mamba-ssm-dtype, --context-length, "
        "--max-total-tokens, ",
        "SIZE: bytes, or a number with a unit: Ki/KiB, Mi/MiB, Gi/GiB, Ti/TiB (powers of 1024) or "
        "K/KB, M/MB, G/GB, T/TB (powers of 1000), any case, e.g. 14.1GiB.",
    ):
        assert fragment in text
    assert text.endswith("Exit statuses and environment variables: decode-ring --help.")


_ALIASES_RATIO = "argument --mamba-full-memory-ratio"


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (("--mamba-full-memory-ratio", "abc"), f"{_ALIASES_RATIO}: not a number: 'abc'"),
        (
            ("--mamba-full-memory-ratio", "inf"),
            f"{_ALIASES_RATIO}: must be a finite number above 0: 'inf'",
        ),
        (
            ("--mamba-full-memory-ratio", "0"),
            f"{_ALIASES_RATIO}: must be a finite number above 0: '0'",
        ),
        # The launch line is read as SGLang reads it (issue 25): a refusal names the flag as
        # given.
        (("--tp", "x"), "argument --tp: not a non-negative integer: 'x'"),
        (
            ("--max-mamba-cache-size", "x"),
            "argument --max-mamba-cache-size: not a non-negative integer: 'x'",
        ),
        (
            ("--max-running-requests", "x"),
            "argument --max-running-requests: not a non-negative integer: 'x'",
        ),
        (
            ("--speculative-num-draft-tokens", "x"),
            "argument --speculative-num-draft-tokens: not a non-negative integer: 'x'",
        ),
        (
            ("--speculative-num-steps", "x"),
            "argument --speculative-num-steps: not a non-negative integer: 'x'",
        ),
        (
            ("--speculative-eagle-topk", "x"),
            "argument --speculative-eagle-topk: not a non-negative integer: 'x'",
        ),
        (
            ("--context-length", "x"),
            "argument --context-length: not a non-negative integer: 'x'",
        ),
        (
            ("--max-total-tokens", "x"),
            "argument --max-total-tokens: not a non-negative integer: 'x'",
        ),
        (
            ("--disable-radix-cache=1",),
            "argument '--disable-radix-cache': ignored explicit argument '1'",
        ),
        # --mem-fraction-static is modelled now (issue 25); --attention-backend is not.
        (
            ("--attention-backend=triton",),
            "SGLang 0.5.23 flags that change memory in a way decode-ring sglang does not model: "
            "--attention-backend (kernel/backend/offload/compile option that can change "
            "workspaces, weights or pools); drop it, or pass --allow-unmodelled to answer "
            "without it",
        ),
        (("stray", "--x"), "SGLang 0.5.23: unexpected argument 'stray'"),
        (
            ("--speculative-num-steps", "2"),
            "argument --speculative-num-steps: needs --speculative-algorithm",
        ),
        (
            ("--speculative-num-draft-tokens", "2"),
            "argument --speculative-num-draft-tokens: needs --speculative-algorithm",
        ),
        (
            ("--speculative-algorithm", "ngram", "--speculative-num-draft-tokens", "2"),
            "argument --speculative-algorithm: 'ngram' is not modelled; use EAGLE, EAGLE3, "
            "NEXTN, MTP",
        ),
        (
            (
                "--speculative-algorithm",
                "EAGLE",
                "--speculative-eagle-topk",
                "4",
                "--speculative-num-draft-tokens",
                "2",
            ),
            "argument --speculative-eagle-topk: only a linear draft chain (topk 1) is modelled",
        ),
        (
            ("--speculative-algorithm", "EAGLE"),
            "argument --speculative-num-draft-tokens: needed with --speculative-algorithm "
            "(SGLang's automatic choice is not modelled)",
        ),
        (
            ("--speculative-algorithm", "EAGLE3", "--speculative-num-draft-tokens", "0"),
            "argument --speculative-num-draft-tokens: needed with --speculative-algorithm "
            "(SGLang's automatic choice is not modelled)",
        ),
    ],
)
def test_a_refused_command_line_is_this_one_line(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], line: str
) -> None:
    assert usage_error(capsys, "sglang", "--config", str(NEMOTRON), *args) == line


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--attention-backend", "triton"), "does not model: --attention-backend"),
        (("--tp-sizes", "2"), "'--tp-sizes' is not a SGLang 0.5.23 flag"),
        ((), "argument --available-memory: needed"),
        (("--available-memory", "1.5"), "bytes must be whole"),
        (("--mamba-full-memory-ratio", "nan"), "finite number above 0"),
        (("--mamba-ssm-dtype", "fp32", "--max-mamba-cache-size", "9"), "mamba-ssm-dtype"),
        (("--speculative-num-draft-tokens", "4"), "needs --speculative-algorithm"),
        (("--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "2"), "topk 1"),
        (("--speculative-algorithm", "EAGLE"), "--speculative-num-draft-tokens: needed"),
        (("--speculative-algorithm", "NGRAM"), "not modelled"),
        (("--mamba-radix-cache-strategy", "lazy", "--max-mamba-cache-size", "9"), "lazy"),
    ],
)
def test_what_the_command_does_not_take_is_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], expected: str
) -> None:
    message = usage_error(capsys, "sglang", "--config", str(NEMOTRON), *args)
    assert expected in message
    assert "Traceback" not in message


@pytest.mark.parametrize(
    ("args", "expected", "words"),
    [
        # Moved from the status-2 table above (issue 25): a launch SGLang would not boot is
        # status 1, with the package's reason on stdout and SGLang's own refusal on stderr
        # (kv_cache_configurator.py:3160-3168, :3386-3399).
        (
            ("--available-memory", "100MiB"),
            "holds no state slot",
            "RuntimeError: Not enough GPU memory for hybrid",
        ),
        (
            ("--available-memory", "1GiB"),
            "2 state slots at 5 per request serve no",
            "RuntimeError: Hybrid (mamba/linear-attention) state cache is too small",
        ),
        (
            ("--max-mamba-cache-size", "0"),
            "argument --max-mamba-cache-size",
            "RuntimeError: Not enough GPU memory for hybrid",
        ),
    ],
)
def test_a_launch_sglang_would_not_boot_is_status_1(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], expected: str, words: str
) -> None:
    status, out, err = run(capsys, "sglang", "--config", str(NEMOTRON), *args)
    assert status == 1
    assert out.startswith("the server would not boot: ") and expected in out
    assert err.startswith(f"decode-ring: {words}") and err.count("\n") == 1


def test_the_command_passes_each_flag_on(capsys: pytest.CaptureFixture[str]) -> None:
    r = sglang_json(
        capsys,
        "--config",
        str(QWEN3_NEXT),
        "--tp",
        "2",
        "--available-memory",
        "40GiB",
        "--mamba-full-memory-ratio",
        "0.5",
        "--speculative-algorithm",
        "nextn",
        "--speculative-num-draft-tokens",
        "4",
        "--speculative-num-steps",
        "3",
        "--gpu-arch",
        "sm86",
    )
    # The oracle (SGLANG_CASES above): Qwen3-Next, tp 2, 40 GiB, ratio 0.5, 4 draft tokens.
    assert (r["slots"], r["max_running_requests"]) == (203, 40)
    assert (r["tp_size"], r["gpu_arch"], r["mamba_full_memory_ratio"]) == (2, "sm86", 0.5)
    assert r["assumptions"][-2:] == [
        "speculative algorithm NEXTN",
        "speculative num steps 3: does not change the state pool",
    ]
    off = sglang_json(
        capsys, "--available-memory", "20GiB", "--disable-radix-cache", "--context-length", "4096"
    )
    # The oracle: Nemotron-Nano-9B-v2, 20 GiB, radix cache off, context 4096: 69 slots, 69 run.
    assert (off["slots"], off["max_running_requests"], off["ratio"]) == (69, 69, 1)
    assert (off["context_length"], off["context_length_rule"]) == (4096, "--context-length")


def test_a_refusal_keeps_the_arguments_field_and_words_it_as_the_flag() -> None:
    # The library names the argument as the API spells it (field and message); the command line
    # names its flag instead, from the same error (ServerArgumentError.worded).
    with pytest.raises(ServerArgumentError) as raised:
        sglang_reservation(NEMOTRON)
    assert raised.value.field == "available_memory"
    assert str(raised.value).startswith("argument available_memory: needed: ")
    assert raised.value.worded({"available_memory": "--available-memory"}).startswith(
        "argument --available-memory: needed: SGLang sizes the state pool"
    )


# --- fuzzed --------------------------------------------------------------------------------------

_SGLANG_ARGUMENTS = (
    "tp_size",
    "available_memory",
    "max_mamba_cache_size",
    "mamba_full_memory_ratio",
    "mamba_radix_cache_strategy",
    "disable_radix_cache",
    "disable_overlap_schedule",
    "max_running_requests",
    "speculative_num_draft_tokens",
    "mamba_ssm_dtype",
    "context_length",
    "max_total_tokens",
    "page_size",
    "dtype",
)


@settings(max_examples=150, deadline=None, database=None)
@given(
    config=st.sampled_from(FUZZED_CONFIGS),
    values=st.dictionaries(st.sampled_from(_SGLANG_ARGUMENTS), HOSTILE_ARGUMENTS, max_size=3),
)
def test_sglang_answers_or_refuses_with_a_typed_error(config: Path, values: dict[str, Any]) -> None:
    # On top of a launch that boots, so that the fuzzed values, not a missing budget, decide.
    r = answer_or_refusal(sglang_reservation, config, {"available_memory": 60 * GiB, **values})
    if r is None:
        return
    # What SGLang's own arithmetic guarantees of an answer.
    assert r.pool_bytes == (r.slots + 1) * r.per_request_bytes
    assert 1 <= r.max_running_requests <= r.slots // r.ratio
    if r.kv_tokens is not None:
        assert r.max_running_requests <= r.kv_tokens // 2


def test_sglangs_refusals_of_a_pool_word_for_word() -> None:
    # kv_cache_configurator.py:3392-3402 (no slot) and :3152-3160 (no request), as SGLang
    # words them: 100 MiB is 0.10 GB of rest memory, 143,548,416 B a request 136.90 MB.
    tail = (
        "Try: (1) reduce --max-running-requests, (2) increase --mem-fraction-static, (3) reduce "
        "--speculative-num-draft-tokens, or (4) use GPUs with more memory."
    )
    with pytest.raises(ServerArgumentError) as computed:
        sglang_reservation(NEMOTRON, available_memory=100 * 2**20)
    assert computed.value.server_refusal == (
        "RuntimeError: Not enough GPU memory for hybrid (mamba/linear-attention) state cache. "
        "Computed max_mamba_cache_size=0 (total_rest_memory=0.10 GB, mamba_cache_per_req=136.90 "
        "MB). " + tail
    )
    with pytest.raises(ServerArgumentError) as given:
        sglang_reservation(NEMOTRON, max_mamba_cache_size=0)
    assert given.value.server_refusal == (
        "RuntimeError: Not enough GPU memory for hybrid (mamba/linear-attention) state cache. "
        "Computed max_mamba_cache_size=0 (total_rest_memory=0.00 GB, mamba_cache_per_req=136.90 "
        "MB). " + tail
    )
    with pytest.raises(ServerArgumentError) as serves_none:
        sglang_reservation(
            NEMOTRON, available_memory=60 * GiB, max_mamba_cache_size=5, max_total_tokens=1
        )
    assert serves_none.value.server_refusal == (
        "RuntimeError: Hybrid (mamba/linear-attention) state cache is too small to serve any "
        "requests. max_mamba_cache_size=5, mamba_ratio=5, resulting max_num_reqs=0. Try: (1) "
        "reduce --max-running-requests, (2) increase --mem-fraction-static, or (3) use GPUs "
        "with more memory."
    )


def test_a_ratio_past_floats_range_is_infinite() -> None:
    # An int of 1024 bits or more is taken as infinite (2**1023 still fits a float, 8.99e307:
    # both are refused, above 1,000,000, and the refusal says which).
    for value, shown in ((2**1024, "inf"), (2**1023, "inf"), (2**1022, "4.49423283715579e+307")):
        with pytest.raises(ServerArgumentError) as raised:
            sglang_reservation(NEMOTRON, mamba_full_memory_ratio=value)
        assert str(raised.value) == (
            "argument mamba_full_memory_ratio: must be a finite number above 0 and at most "
            f"1,000,000, got {shown}"
        )


def test_a_context_length_from_one_token_to_the_largest_count() -> None:
    # int(factor * value) (common.py:690-693), from 1 to 2**63 - 1 tokens.
    assert scaled_context_length("max_position_embeddings", 1, 1.0) == 1
    assert scaled_context_length("max_position_embeddings", 1, 1.5) == 1
    assert scaled_context_length("max_position_embeddings", 2, 0.5) == 1
    assert scaled_context_length("max_position_embeddings", 2**63 - 1, 1) == 2**63 - 1
    with pytest.raises(ModelConfigError) as past:
        scaled_context_length("max_position_embeddings", 2**62, 1e308)
    assert str(past.value) == (
        "field 'rope_scaling.factor': 4611686018427387904 x 1e+308 is more than 2**1024 tokens, "
        "not a count of tokens from 1 to 2**63 - 1"
    )
