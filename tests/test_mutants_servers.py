"""Tests that kill mutmut's surviving mutants of ``decode_ring.servers`` (tests/MUTANTS.md).

Expected figures are written out. Unless a test says otherwise they come from the servers' own
code run from the wheels, through the peer oracle ``tools/peer_agreement/reservations.py``
(``VllmReservations(open_wheels(["/work/wheels"]), gpu_arch=ARCH).reservation(config, **flags)``
and ``SglangReservations(...).reservation(config, **flags)``, vllm-0.33.0 and sglang-0.5.23,
torch stubbed), on the fixtures in ``tests/configs``; ``None`` is the server refusing to start.
Text and rule lines are pinned where their content cites the wheels.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from decode_ring.cli import main
from decode_ring.cli.render import render
from decode_ring.cli.servers import SGLANG_COMMAND, VLLM_COMMAND
from decode_ring.models import ModelConfigError
from decode_ring.servers import ServerArgumentError, metrale, sglang_reservation, vllm_reservation

run_vllm, vllm_flags = VLLM_COMMAND.run, VLLM_COMMAND.flags
run_sglang, sglang_flags = SGLANG_COMMAND.run, SGLANG_COMMAND.flags


def refuse_unknown(server: str, extras: list[str]) -> str:
    return {"vllm": VLLM_COMMAND, "sglang": SGLANG_COMMAND}[server].refuse_unknown(extras)


CONFIGS = Path(__file__).resolve().parent / "configs"
NEMOTRON = str(CONFIGS / "nemotron-nano-9b-v2.json")
QWEN3_NEXT = str(CONFIGS / "qwen3-next-80b-a3b-instruct.json")
GIB = 2**30

# The oracle's VLLM_FIELDS, in this order.
VLLM_FIELDS = (
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
)
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

# The oracle's answers, every fixture x three launches (sm90) and the default launch on sm80.
# kimi-k3 on sm80 is left out: the oracle counts a FlashKDA checkpoint block there, but the
# wheel's is_flashkda_supported needs capability major 9, 10 or 12
# (vllm/models/kimi_k3/nvidia/kda.py:363-379), so the oracle, not the package, is off there.
# metrale-gdn-48 is a written config the oracle cannot read (no full_attention_interval).
VLLM_CASES: tuple[tuple[str, str, dict[str, Any], tuple[object, ...] | None], ...] = (
    (
        "falcon-h1-7b-instruct.json",
        "sm90",
        {},
        (
            1568,
            1605632,
            1594368,
            1605632,
            44,
            1,
            1,
            70647808,
            1,
            3,
            18085838848,
            54257516544,
            None,
            None,
        ),
    ),
    (
        "falcon-h1-7b-instruct.json",
        "sm90",
        {
            "tensor_parallel_size": 2,
            "num_speculative_tokens": 2,
            "enable_prefix_caching": False,
            "kv_cache_memory_bytes": 60 * GIB,
        },
        (
            1584,
            811008,
            806912,
            811008,
            44,
            1,
            1,
            35684352,
            3,
            3,
            27405582336,
            27405582336,
            1805,
            10.680473372781066,
        ),
    ),
    (
        "falcon-h1-7b-instruct.json",
        "sm90",
        {"max_model_len": 4096, "kv_cache_memory_bytes": 20 * GIB, "max_num_seqs": 7},
        (
            1568,
            1605632,
            1594368,
            1605632,
            44,
            1,
            1,
            70647808,
            1,
            3,
            494534656,
            1483603968,
            303,
            50.5,
        ),
    ),
    (
        "falcon-mamba-7b.json",
        "sm90",
        {},
        (16, 0, 311296, 311296, 64, 1, 0, 19922944, 1, 1, 5100273664, 5100273664, None, None),
    ),
    (
        "falcon-mamba-7b.json",
        "sm90",
        {
            "tensor_parallel_size": 2,
            "num_speculative_tokens": 2,
            "enable_prefix_caching": False,
            "kv_cache_memory_bytes": 60 * GIB,
        },
        (
            16,
            0,
            155648,
            155648,
            64,
            1,
            0,
            9961472,
            3,
            3,
            7650410496,
            7650410496,
            6467,
            2155.6666666666665,
        ),
    ),
    (
        "falcon-mamba-7b.json",
        "sm90",
        {"max_model_len": 4096, "kv_cache_memory_bytes": 20 * GIB, "max_num_seqs": 7},
        (16, 0, 311296, 311296, 64, 1, 0, 19922944, 1, 1, 139460608, 139460608, 1077, 1077.0),
    ),
    (
        "granite-4.0-h-tiny.json",
        "sm90",
        {},
        (400, 819200, 806400, 819200, 4, 9, 1, 3276800, 1, 3, 7549747200, 22649241600, None, None),
    ),
    (
        "granite-4.0-h-tiny.json",
        "sm90",
        {
            "tensor_parallel_size": 2,
            "num_speculative_tokens": 2,
            "enable_prefix_caching": False,
            "kv_cache_memory_bytes": 60 * GIB,
        },
        (
            416,
            425984,
            411136,
            425984,
            4,
            9,
            1,
            1703936,
            3,
            3,
            11777605632,
            11777605632,
            37809,
            110.23032069970846,
        ),
    ),
    (
        "granite-4.0-h-tiny.json",
        "sm90",
        {"max_model_len": 4096, "kv_cache_memory_bytes": 20 * GIB, "max_num_seqs": 7},
        (
            400,
            819200,
            806400,
            819200,
            4,
            9,
            1,
            3276800,
            1,
            3,
            206438400,
            619315200,
            6553,
            172.44736842105263,
        ),
    ),
    (
        "jamba-mini-1.5.json",
        "sm90",
        {},
        (80, 327680, 311296, 327680, 4, 7, 1, 1310720, 1, 2, 2348810240, 4697620480, None, None),
    ),
    (
        "jamba-mini-1.5.json",
        "sm90",
        {
            "tensor_parallel_size": 2,
            "num_speculative_tokens": 2,
            "enable_prefix_caching": False,
            "kv_cache_memory_bytes": 60 * GIB,
        },
        (
            80,
            163840,
            155648,
            163840,
            4,
            7,
            1,
            655360,
            3,
            3,
            3523215360,
            3523215360,
            98304,
            29.807155852031535,
        ),
    ),
    (
        "jamba-mini-1.5.json",
        "sm90",
        {"max_model_len": 4096, "kv_cache_memory_bytes": 20 * GIB, "max_num_seqs": 7},
        (
            80,
            327680,
            311296,
            327680,
            4,
            7,
            1,
            1310720,
            1,
            2,
            64225280,
            128450560,
            16384,
            248.24242424242425,
        ),
    ),
    ("jet-nemotron-2b.json", "sm90", {}, None),
    (
        "jet-nemotron-2b.json",
        "sm90",
        {
            "tensor_parallel_size": 2,
            "num_speculative_tokens": 2,
            "enable_prefix_caching": False,
            "kv_cache_memory_bytes": 60 * GIB,
        },
        None,
    ),
    (
        "jet-nemotron-2b.json",
        "sm90",
        {"max_model_len": 4096, "kv_cache_memory_bytes": 20 * GIB, "max_num_seqs": 7},
        None,
    ),
    (
        "kimi-k3.json",
        "sm90",
        {},
        (
            5760,
            6635520,
            6512640,
            6635520,
            24,
            3,
            1,
            159252480,
            1,
            3,
            122305904640,
            366917713920,
            None,
            None,
        ),
    ),
    (
        "kimi-k3.json",
        "sm90",
        {
            "tensor_parallel_size": 2,
            "num_speculative_tokens": 2,
            "enable_prefix_caching": False,
            "kv_cache_memory_bytes": 60 * GIB,
        },
        (
            2944,
            3391488,
            3330048,
            3391488,
            24,
            3,
            1,
            81395712,
            3,
            3,
            187535720448,
            187535720448,
            791,
            2.16120218579235,
        ),
    ),
    (
        "kimi-k3.json",
        "sm90",
        {"max_model_len": 4096, "kv_cache_memory_bytes": 20 * GIB, "max_num_seqs": 7},
        (
            5760,
            6635520,
            6512640,
            6635520,
            24,
            3,
            1,
            159252480,
            1,
            3,
            3344302080,
            10032906240,
            134,
            13.4,
        ),
    ),
    (
        "kimi-linear-48b-a3b-instruct.json",
        "sm90",
        {},
        (
            1920,
            2211840,
            2170880,
            2211840,
            7,
            3,
            1,
            15482880,
            1,
            2,
            11890851840,
            23781703680,
            None,
            None,
        ),
    ),
    (
        "kimi-linear-48b-a3b-instruct.json",
        "sm90",
        {
            "tensor_parallel_size": 2,
            "num_speculative_tokens": 2,
            "enable_prefix_caching": False,
            "kv_cache_memory_bytes": 60 * GIB,
        },
        (
            1024,
            1179648,
            1110016,
            1179648,
            7,
            3,
            1,
            8257536,
            3,
            3,
            19025362944,
            19025362944,
            7801,
            7.551790900290416,
        ),
    ),
    (
        "kimi-linear-48b-a3b-instruct.json",
        "sm90",
        {"max_model_len": 4096, "kv_cache_memory_bytes": 20 * GIB, "max_num_seqs": 7},
        (
            1920,
            2211840,
            2170880,
            2211840,
            7,
            3,
            1,
            15482880,
            1,
            2,
            325140480,
            650280960,
            1387,
            154.11111111111111,
        ),
    ),
    (
        "mamba-2.8b-hf.json",
        "sm90",
        {},
        (16, 0, 194560, 194560, 64, 1, 0, 12451840, 1, 1, 3187671040, 3187671040, None, None),
    ),
    (
        "mamba-2.8b-hf.json",
        "sm90",
        {
            "tensor_parallel_size": 2,
            "num_speculative_tokens": 2,
            "enable_prefix_caching": False,
            "kv_cache_memory_bytes": 60 * GIB,
        },
        (16, 0, 97280, 97280, 64, 1, 0, 6225920, 3, 3, 4781506560, 4781506560, 10347, 3449.0),
    ),
    (
        "mamba-2.8b-hf.json",
        "sm90",
        {"max_model_len": 4096, "kv_cache_memory_bytes": 20 * GIB, "max_num_seqs": 7},
        (16, 0, 194560, 194560, 64, 1, 0, 12451840, 1, 1, 87162880, 87162880, 1724, 1724.0),
    ),
    (
        "mamba-codestral-7b.json",
        "sm90",
        {},
        (16, 0, 2158592, 2158592, 64, 1, 0, 138149888, 1, 1, 35366371328, 35366371328, None, None),
    ),
    (
        "mamba-codestral-7b.json",
        "sm90",
        {
            "tensor_parallel_size": 2,
            "num_speculative_tokens": 2,
            "enable_prefix_caching": False,
            "kv_cache_memory_bytes": 60 * GIB,
        },
        (16, 0, 1099776, 1099776, 64, 1, 0, 70385664, 3, 3, 54056189952, 54056189952, 915, 305.0),
    ),
    (
        "mamba-codestral-7b.json",
        "sm90",
        {"max_model_len": 4096, "kv_cache_memory_bytes": 20 * GIB, "max_num_seqs": 7},
        (16, 0, 2158592, 2158592, 64, 1, 0, 138149888, 1, 1, 967049216, 967049216, 155, 155.0),
    ),
    ("minimax-m1.json", "sm90", {}, None),
    (
        "minimax-m1.json",
        "sm90",
        {
            "tensor_parallel_size": 2,
            "num_speculative_tokens": 2,
            "enable_prefix_caching": False,
            "kv_cache_memory_bytes": 60 * GIB,
        },
        None,
    ),
    (
        "minimax-m1.json",
        "sm90",
        {"max_model_len": 4096, "kv_cache_memory_bytes": 20 * GIB, "max_num_seqs": 7},
        None,
    ),
    ("nemotron-dense-siglip2.json", "sm90", {}, None),
    (
        "nemotron-dense-siglip2.json",
        "sm90",
        {
            "tensor_parallel_size": 2,
            "num_speculative_tokens": 2,
            "enable_prefix_caching": False,
            "kv_cache_memory_bytes": 60 * GIB,
        },
        None,
    ),
    (
        "nemotron-dense-siglip2.json",
        "sm90",
        {"max_model_len": 4096, "kv_cache_memory_bytes": 20 * GIB, "max_num_seqs": 7},
        None,
    ),
    (
        "nemotron-nano-9b-v2.json",
        "sm90",
        {},
        (
            1312,
            5373952,
            5316608,
            5373952,
            4,
            7,
            1,
            21495808,
            1,
            3,
            38520487936,
            115561463808,
            None,
            None,
        ),
    ),
    (
        "nemotron-nano-9b-v2.json",
        "sm90",
        {
            "tensor_parallel_size": 2,
            "num_speculative_tokens": 2,
            "enable_prefix_caching": False,
            "kv_cache_memory_bytes": 60 * GIB,
        },
        (
            1312,
            2686976,
            2682880,
            2686976,
            4,
            7,
            1,
            10747904,
            3,
            3,
            57780731904,
            57780731904,
            5994,
            49.53719008264463,
        ),
    ),
    (
        "nemotron-nano-9b-v2.json",
        "sm90",
        {"max_model_len": 4096, "kv_cache_memory_bytes": 20 * GIB, "max_num_seqs": 7},
        (
            1312,
            5373952,
            5316608,
            5373952,
            4,
            7,
            1,
            21495808,
            1,
            3,
            1053294592,
            3159883776,
            999,
            39.96,
        ),
    ),
    (
        "qwen3-next-80b-a3b-instruct.json",
        "sm90",
        {},
        (
            576,
            1179648,
            1097728,
            1179648,
            12,
            3,
            1,
            14155776,
            1,
            3,
            10871635968,
            32614907904,
            None,
            None,
        ),
    ),
    (
        "qwen3-next-80b-a3b-instruct.json",
        "sm90",
        {
            "tensor_parallel_size": 2,
            "num_speculative_tokens": 2,
            "enable_prefix_caching": False,
            "kv_cache_memory_bytes": 60 * GIB,
        },
        (
            560,
            573440,
            565248,
            573440,
            12,
            3,
            1,
            6881280,
            3,
            3,
            15854469120,
            15854469120,
            9362,
            19.585774058577407,
        ),
    ),
    (
        "qwen3-next-80b-a3b-instruct.json",
        "sm90",
        {"max_model_len": 4096, "kv_cache_memory_bytes": 20 * GIB, "max_num_seqs": 7},
        (
            576,
            1179648,
            1097728,
            1179648,
            12,
            3,
            1,
            14155776,
            1,
            3,
            297271296,
            891813888,
            1517,
            89.23529411764706,
        ),
    ),
    (
        "qwen3.5-27b.json",
        "sm90",
        {},
        (
            832,
            3407872,
            3207168,
            3407872,
            16,
            3,
            1,
            54525952,
            1,
            3,
            41875931136,
            125627793408,
            None,
            None,
        ),
    ),
    (
        "qwen3.5-27b.json",
        "sm90",
        {
            "tensor_parallel_size": 2,
            "num_speculative_tokens": 2,
            "enable_prefix_caching": False,
            "kv_cache_memory_bytes": 60 * GIB,
        },
        (
            800,
            1638400,
            1624064,
            1638400,
            16,
            3,
            1,
            26214400,
            3,
            3,
            60397977600,
            60397977600,
            2457,
            7.29080118694362,
        ),
    ),
    (
        "qwen3.5-27b.json",
        "sm90",
        {"max_model_len": 4096, "kv_cache_memory_bytes": 20 * GIB, "max_num_seqs": 7},
        (
            832,
            3407872,
            3207168,
            3407872,
            16,
            3,
            1,
            54525952,
            1,
            3,
            1145044992,
            3435134976,
            393,
            28.071428571428573,
        ),
    ),
    (
        "qwen3.5-35b-a3b.json",
        "sm90",
        {},
        (
            1088,
            2228224,
            2146304,
            2228224,
            10,
            3,
            1,
            22282240,
            1,
            3,
            17112760320,
            51338280960,
            None,
            None,
        ),
    ),
    (
        "qwen3.5-35b-a3b.json",
        "sm90",
        {
            "tensor_parallel_size": 2,
            "num_speculative_tokens": 2,
            "enable_prefix_caching": False,
            "kv_cache_memory_bytes": 60 * GIB,
        },
        (
            1072,
            1097728,
            1089536,
            1097728,
            10,
            3,
            1,
            10977280,
            3,
            3,
            25291653120,
            25291653120,
            5868,
            23.10236220472441,
        ),
    ),
    (
        "qwen3.5-35b-a3b.json",
        "sm90",
        {"max_model_len": 4096, "kv_cache_memory_bytes": 20 * GIB, "max_num_seqs": 7},
        (
            1088,
            2228224,
            2146304,
            2228224,
            10,
            3,
            1,
            22282240,
            1,
            3,
            467927040,
            1403781120,
            963,
            74.07692307692308,
        ),
    ),
    (
        "zamba2-2.7b.json",
        "sm90",
        {},
        (48, 983040, 686848, 983040, 9, 6, 1, 8847360, 1, 3, 13589544960, 40768634880, None, None),
    ),
    (
        "zamba2-2.7b.json",
        "sm90",
        {
            "tensor_parallel_size": 2,
            "num_speculative_tokens": 2,
            "enable_prefix_caching": False,
            "kv_cache_memory_bytes": 60 * GIB,
        },
        (
            48,
            491520,
            354560,
            491520,
            9,
            6,
            1,
            4423680,
            3,
            3,
            20384317440,
            20384317440,
            14563,
            140.02884615384616,
        ),
    ),
    (
        "zamba2-2.7b.json",
        "sm90",
        {"max_model_len": 4096, "kv_cache_memory_bytes": 20 * GIB, "max_num_seqs": 7},
        (
            48,
            983040,
            686848,
            983040,
            9,
            6,
            1,
            8847360,
            1,
            3,
            371589120,
            1114767360,
            2427,
            23.33653846153846,
        ),
    ),
    ("zaya1-8b-legacy.json", "sm90", {}, None),
    (
        "zaya1-8b-legacy.json",
        "sm90",
        {
            "tensor_parallel_size": 2,
            "num_speculative_tokens": 2,
            "enable_prefix_caching": False,
            "kv_cache_memory_bytes": 60 * GIB,
        },
        None,
    ),
    (
        "zaya1-8b-legacy.json",
        "sm90",
        {"max_model_len": 4096, "kv_cache_memory_bytes": 20 * GIB, "max_num_seqs": 7},
        None,
    ),
    ("zaya1-8b.json", "sm90", {}, None),
    (
        "zaya1-8b.json",
        "sm90",
        {
            "tensor_parallel_size": 2,
            "num_speculative_tokens": 2,
            "enable_prefix_caching": False,
            "kv_cache_memory_bytes": 60 * GIB,
        },
        None,
    ),
    (
        "zaya1-8b.json",
        "sm90",
        {"max_model_len": 4096, "kv_cache_memory_bytes": 20 * GIB, "max_num_seqs": 7},
        None,
    ),
    (
        "falcon-h1-7b-instruct.json",
        "sm80",
        {},
        (
            1568,
            1605632,
            1594368,
            1605632,
            44,
            1,
            1,
            70647808,
            1,
            3,
            18085838848,
            54257516544,
            None,
            None,
        ),
    ),
    (
        "falcon-mamba-7b.json",
        "sm80",
        {},
        (16, 0, 311296, 311296, 64, 1, 0, 19922944, 1, 1, 5100273664, 5100273664, None, None),
    ),
    (
        "granite-4.0-h-tiny.json",
        "sm80",
        {},
        (400, 819200, 806400, 819200, 4, 9, 1, 3276800, 1, 3, 7549747200, 22649241600, None, None),
    ),
    (
        "jamba-mini-1.5.json",
        "sm80",
        {},
        (80, 327680, 311296, 327680, 4, 7, 1, 1310720, 1, 2, 2348810240, 4697620480, None, None),
    ),
    ("jet-nemotron-2b.json", "sm80", {}, None),
    (
        "kimi-linear-48b-a3b-instruct.json",
        "sm80",
        {},
        (
            1920,
            2211840,
            2170880,
            2211840,
            7,
            3,
            1,
            15482880,
            1,
            2,
            11890851840,
            23781703680,
            None,
            None,
        ),
    ),
    (
        "mamba-2.8b-hf.json",
        "sm80",
        {},
        (16, 0, 194560, 194560, 64, 1, 0, 12451840, 1, 1, 3187671040, 3187671040, None, None),
    ),
    (
        "mamba-codestral-7b.json",
        "sm80",
        {},
        (16, 0, 2158592, 2158592, 64, 1, 0, 138149888, 1, 1, 35366371328, 35366371328, None, None),
    ),
    ("minimax-m1.json", "sm80", {}, None),
    ("nemotron-dense-siglip2.json", "sm80", {}, None),
    (
        "nemotron-nano-9b-v2.json",
        "sm80",
        {},
        (
            1312,
            5373952,
            5316608,
            5373952,
            4,
            7,
            1,
            21495808,
            1,
            3,
            38520487936,
            115561463808,
            None,
            None,
        ),
    ),
    (
        "qwen3-next-80b-a3b-instruct.json",
        "sm80",
        {},
        (
            544,
            1114112,
            1097728,
            1114112,
            12,
            3,
            1,
            13369344,
            1,
            2,
            10267656192,
            20535312384,
            None,
            None,
        ),
    ),
    (
        "qwen3.5-27b.json",
        "sm80",
        {},
        (
            784,
            3211264,
            3207168,
            3211264,
            16,
            3,
            1,
            51380224,
            1,
            2,
            39460012032,
            78920024064,
            None,
            None,
        ),
    ),
    (
        "qwen3.5-35b-a3b.json",
        "sm80",
        {},
        (
            1056,
            2162688,
            2146304,
            2162688,
            10,
            3,
            1,
            21626880,
            1,
            2,
            16609443840,
            33218887680,
            None,
            None,
        ),
    ),
    (
        "zamba2-2.7b.json",
        "sm80",
        {},
        (48, 983040, 686848, 983040, 9, 6, 1, 8847360, 1, 3, 13589544960, 40768634880, None, None),
    ),
    ("zaya1-8b-legacy.json", "sm80", {}, None),
    ("zaya1-8b.json", "sm80", {}, None),
)
SGLANG_CASES: tuple[tuple[str, dict[str, Any], tuple[object, ...] | None], ...] = (
    (
        "falcon-h1-7b-instruct.json",
        {"available_memory": 60 * GIB},
        (139358208, 217, 30380089344, 43, 0, 34044420096, 45056, 755602),
    ),
    (
        "falcon-h1-7b-instruct.json",
        {
            "tp_size": 2,
            "available_memory": 40 * GIB,
            "speculative_num_draft_tokens": 4,
            "mamba_full_memory_ratio": 0.5,
        },
        (69746688, 111, 7811629056, 22, 6391824384, 28721348608, 22528, 1274917),
    ),
    (
        "falcon-h1-7b-instruct.json",
        {"available_memory": 20 * GIB, "disable_radix_cache": True, "context_length": 4096},
        (139358208, 71, 10033790976, 71, 0, 11441045504, 45056, 253929),
    ),
    (
        "falcon-h1-7b-instruct.json",
        {
            "available_memory": 60 * GIB,
            "max_mamba_cache_size": 300,
            "speculative_num_draft_tokens": 2,
        },
        (139358208, 300, 41946820608, 48, 13626195968, 8820584448, 45056, 195769),
    ),
    (
        "falcon-mamba-7b.json",
        {"available_memory": 60 * GIB},
        (36700160, 830, 30497832960, 276, 0, 33926676480, 0, 2048),
    ),
    (
        "falcon-mamba-7b.json",
        {
            "tp_size": 2,
            "available_memory": 40 * GIB,
            "speculative_num_draft_tokens": 4,
            "mamba_full_memory_ratio": 0.5,
        },
        (18350080, 332, 6110576640, 48, 3442475008, 33242480640, 0, 2048),
    ),
    (
        "falcon-mamba-7b.json",
        {"available_memory": 20 * GIB, "disable_radix_cache": True, "context_length": 4096},
        None,
    ),
    (
        "falcon-mamba-7b.json",
        {
            "available_memory": 60 * GIB,
            "max_mamba_cache_size": 300,
            "speculative_num_draft_tokens": 2,
        },
        (36700160, 300, 11046748160, 48, 3493855232, 49781145600, 0, 2048),
    ),
    (
        "granite-4.0-h-tiny.json",
        {"available_memory": 60 * GIB},
        (57341952, 531, 30505918464, 106, 0, 33918590976, 8192, 4140453),
    ),
    (
        "granite-4.0-h-tiny.json",
        {
            "tp_size": 2,
            "available_memory": 40 * GIB,
            "speculative_num_draft_tokens": 4,
            "mamba_full_memory_ratio": 0.5,
        },
        (28698624, 274, 7892121600, 48, 5586997248, 29432621056, 4096, 7185698),
    ),
    (
        "granite-4.0-h-tiny.json",
        {"available_memory": 20 * GIB, "disable_radix_cache": True, "context_length": 4096},
        (57341952, 176, 10149525504, 176, 0, 11325310976, 8192, 1382484),
    ),
    (
        "granite-4.0-h-tiny.json",
        {
            "available_memory": 60 * GIB,
            "max_mamba_cache_size": 300,
            "speculative_num_draft_tokens": 2,
        },
        (57341952, 300, 17259927552, 48, 5596028928, 41545070592, 8192, 5071419),
    ),
    ("jamba-mini-1.5.json", {"available_memory": 60 * GIB}, None),
    (
        "jamba-mini-1.5.json",
        {
            "tp_size": 2,
            "available_memory": 40 * GIB,
            "speculative_num_draft_tokens": 4,
            "mamba_full_memory_ratio": 0.5,
        },
        None,
    ),
    (
        "jamba-mini-1.5.json",
        {"available_memory": 20 * GIB, "disable_radix_cache": True, "context_length": 4096},
        None,
    ),
    (
        "jamba-mini-1.5.json",
        {
            "available_memory": 60 * GIB,
            "max_mamba_cache_size": 300,
            "speculative_num_draft_tokens": 2,
        },
        None,
    ),
    (
        "jet-nemotron-2b.json",
        {"available_memory": 60 * GIB},
        (29085696, 1048, 30510895104, 349, 0, 33913614336, 4096, 8279691),
    ),
    (
        "jet-nemotron-2b.json",
        {
            "tp_size": 2,
            "available_memory": 40 * GIB,
            "speculative_num_draft_tokens": 4,
            "mamba_full_memory_ratio": 0.5,
        },
        (14542848, 419, 6107996160, 48, 2812465152, 33991278592, 2048, 16597304),
    ),
    (
        "jet-nemotron-2b.json",
        {"available_memory": 20 * GIB, "disable_radix_cache": True, "context_length": 4096},
        (29085696, 348, 10150907904, 348, 0, 11323928576, 4096, 2764631),
    ),
    (
        "jet-nemotron-2b.json",
        {
            "available_memory": 60 * GIB,
            "max_mamba_cache_size": 300,
            "speculative_num_draft_tokens": 2,
        },
        (29085696, 300, 8754794496, 48, 2825109504, 52819316736, 4096, 12895341),
    ),
    (
        "kimi-k3.json",
        {"available_memory": 60 * GIB},
        (449372160, 66, 30107934720, 13, 0, 34316574720, 27648, 1241195),
    ),
    (
        "kimi-k3.json",
        {
            "tp_size": 2,
            "available_memory": 40 * GIB,
            "speculative_num_draft_tokens": 4,
            "mamba_full_memory_ratio": 0.5,
        },
        (224686080, 32, 7414640640, 6, 6291210240, 29243822080, 27648, 1057719),
    ),
    (
        "kimi-k3.json",
        {"available_memory": 20 * GIB, "disable_radix_cache": True, "context_length": 4096},
        (449372160, 21, 9886187520, 21, 0, 11588648960, 27648, 419149),
    ),
    (
        "kimi-k3.json",
        {
            "available_memory": 60 * GIB,
            "max_mamba_cache_size": 300,
            "speculative_num_draft_tokens": 2,
        },
        None,
    ),
    (
        "kimi-linear-48b-a3b-instruct.json",
        {"available_memory": 60 * GIB},
        (43417600, 701, 30479155200, 140, 0, 33945354240, 8064, 4209493),
    ),
    (
        "kimi-linear-48b-a3b-instruct.json",
        {
            "tp_size": 2,
            "available_memory": 40 * GIB,
            "speculative_num_draft_tokens": 4,
            "mamba_full_memory_ratio": 0.5,
        },
        (21708800, 363, 7902003200, 48, 4254924800, 30792744960, 8064, 3818544),
    ),
    (
        "kimi-linear-48b-a3b-instruct.json",
        {"available_memory": 20 * GIB, "disable_radix_cache": True, "context_length": 4096},
        (43417600, 233, 10159718400, 233, 0, 11315118080, 8064, 1403164),
    ),
    (
        "kimi-linear-48b-a3b-instruct.json",
        {
            "available_memory": 60 * GIB,
            "max_mamba_cache_size": 300,
            "speculative_num_draft_tokens": 2,
        },
        (43417600, 300, 13068697600, 48, 4254924800, 47100887040, 8064, 5840883),
    ),
    (
        "mamba-2.8b-hf.json",
        {"available_memory": 60 * GIB},
        (22937600, 1329, 30507008000, 443, 0, 33917501440, 0, 2048),
    ),
    (
        "mamba-2.8b-hf.json",
        {
            "tp_size": 2,
            "available_memory": 40 * GIB,
            "speculative_num_draft_tokens": 4,
            "mamba_full_memory_ratio": 0.5,
        },
        (11468800, 532, 6112870400, 48, 2151546880, 34588917760, 0, 2048),
    ),
    (
        "mamba-2.8b-hf.json",
        {"available_memory": 20 * GIB, "disable_radix_cache": True, "context_length": 4096},
        None,
    ),
    (
        "mamba-2.8b-hf.json",
        {
            "available_memory": 60 * GIB,
            "max_mamba_cache_size": 300,
            "speculative_num_draft_tokens": 2,
        },
        (22937600, 300, 6904217600, 48, 2183659520, 55272407040, 0, 2048),
    ),
    (
        "mamba-codestral-7b.json",
        {"available_memory": 60 * GIB},
        (272367616, 111, 30505172992, 37, 0, 33919336448, 0, 2048),
    ),
    (
        "mamba-codestral-7b.json",
        {
            "tp_size": 2,
            "available_memory": 40 * GIB,
            "speculative_num_draft_tokens": 4,
            "mamba_full_memory_ratio": 0.5,
        },
        (136183808, 42, 5855903744, 14, 8112046080, 28922740736, 0, 2048),
    ),
    (
        "mamba-codestral-7b.json",
        {"available_memory": 20 * GIB, "disable_radix_cache": True, "context_length": 4096},
        None,
    ),
    (
        "mamba-codestral-7b.json",
        {
            "available_memory": 60 * GIB,
            "max_mamba_cache_size": 300,
            "speculative_num_draft_tokens": 2,
        },
        None,
    ),
    ("minimax-m1.json", {"available_memory": 60 * GIB}, None),
    (
        "minimax-m1.json",
        {
            "tp_size": 2,
            "available_memory": 40 * GIB,
            "speculative_num_draft_tokens": 4,
            "mamba_full_memory_ratio": 0.5,
        },
        None,
    ),
    (
        "minimax-m1.json",
        {"available_memory": 20 * GIB, "disable_radix_cache": True, "context_length": 4096},
        None,
    ),
    (
        "minimax-m1.json",
        {
            "available_memory": 60 * GIB,
            "max_mamba_cache_size": 300,
            "speculative_num_draft_tokens": 2,
        },
        None,
    ),
    ("nemotron-dense-siglip2.json", {"available_memory": 60 * GIB}, None),
    (
        "nemotron-dense-siglip2.json",
        {
            "tp_size": 2,
            "available_memory": 40 * GIB,
            "speculative_num_draft_tokens": 4,
            "mamba_full_memory_ratio": 0.5,
        },
        None,
    ),
    (
        "nemotron-dense-siglip2.json",
        {"available_memory": 20 * GIB, "disable_radix_cache": True, "context_length": 4096},
        None,
    ),
    (
        "nemotron-dense-siglip2.json",
        {
            "available_memory": 60 * GIB,
            "max_mamba_cache_size": 300,
            "speculative_num_draft_tokens": 2,
        },
        None,
    ),
    (
        "nemotron-nano-9b-v2.json",
        {"available_memory": 60 * GIB},
        (143548416, 211, 30432264192, 42, 0, 33992245248, 16384, 2074722),
    ),
    (
        "nemotron-nano-9b-v2.json",
        {
            "tp_size": 2,
            "available_memory": 40 * GIB,
            "speculative_num_draft_tokens": 4,
            "mamba_full_memory_ratio": 0.5,
        },
        (71774208, 108, 7823388672, 21, 6272335872, 28810153984, 8192, 3516864),
    ),
    (
        "nemotron-nano-9b-v2.json",
        {"available_memory": 20 * GIB, "disable_radix_cache": True, "context_length": 4096},
        (143548416, 69, 10048389120, 69, 0, 11426447360, 16384, 697415),
    ),
    (
        "nemotron-nano-9b-v2.json",
        {
            "available_memory": 60 * GIB,
            "max_mamba_cache_size": 300,
            "speculative_num_draft_tokens": 2,
        },
        (143548416, 300, 43208073216, 48, 14002716672, 7148691456, 16384, 436321),
    ),
    (
        "qwen3-next-80b-a3b-instruct.json",
        {"available_memory": 60 * GIB},
        (77266944, 393, 30443175936, 78, 0, 33981333504, 24576, 1382704),
    ),
    (
        "qwen3-next-80b-a3b-instruct.json",
        {
            "tp_size": 2,
            "available_memory": 40 * GIB,
            "speculative_num_draft_tokens": 4,
            "mamba_full_memory_ratio": 0.5,
        },
        (38633472, 203, 7881228288, 40, 6263341056, 28732555264, 12288, 2338261),
    ),
    (
        "qwen3-next-80b-a3b-instruct.json",
        {"available_memory": 20 * GIB, "disable_radix_cache": True, "context_length": 4096},
        (77266944, 130, 10121969664, 130, 0, 11352866816, 24576, 461949),
    ),
    (
        "qwen3-next-80b-a3b-instruct.json",
        {
            "available_memory": 60 * GIB,
            "max_mamba_cache_size": 300,
            "speculative_num_draft_tokens": 2,
        },
        (77266944, 300, 23257350144, 48, 7514357760, 33594998784, 24576, 1366984),
    ),
    (
        "qwen3.5-27b.json",
        {"available_memory": 60 * GIB},
        (153944064, 197, 30480924672, 39, 0, 33943584768, 65536, 517938),
    ),
    (
        "qwen3.5-27b.json",
        {
            "tp_size": 2,
            "available_memory": 40 * GIB,
            "speculative_num_draft_tokens": 4,
            "mamba_full_memory_ratio": 0.5,
        },
        (76972032, 100, 7774175232, 20, 6403719168, 28709847040, 32768, 876155),
    ),
    (
        "qwen3.5-27b.json",
        {"available_memory": 20 * GIB, "disable_radix_cache": True, "context_length": 4096},
        (153944064, 65, 10160308224, 65, 0, 11314528256, 65536, 172646),
    ),
    (
        "qwen3.5-27b.json",
        {
            "available_memory": 60 * GIB,
            "max_mamba_cache_size": 300,
            "speculative_num_draft_tokens": 2,
        },
        (153944064, 300, 46337163264, 48, 14990180352, 3000827904, 65536, 45789),
    ),
    (
        "qwen3.5-35b-a3b.json",
        {"available_memory": 60 * GIB},
        (64389120, 472, 30456053760, 94, 0, 33968455680, 20480, 1658616),
    ),
    (
        "qwen3.5-35b-a3b.json",
        {
            "tp_size": 2,
            "available_memory": 40 * GIB,
            "speculative_num_draft_tokens": 4,
            "mamba_full_memory_ratio": 0.5,
        },
        (32194560, 244, 7887667200, 48, 6237880320, 28751872000, 10240, 2807800),
    ),
    (
        "qwen3.5-35b-a3b.json",
        {"available_memory": 20 * GIB, "disable_radix_cache": True, "context_length": 4096},
        (64389120, 156, 10109091840, 156, 0, 11365744640, 20480, 554968),
    ),
    (
        "qwen3.5-35b-a3b.json",
        {
            "available_memory": 60 * GIB,
            "max_mamba_cache_size": 300,
            "speculative_num_draft_tokens": 2,
        },
        (64389120, 300, 19381125120, 48, 6261964800, 38733250560, 20480, 1891272),
    ),
    ("zamba2-2.7b.json", {"available_memory": 60 * GIB}, None),
    (
        "zamba2-2.7b.json",
        {
            "tp_size": 2,
            "available_memory": 40 * GIB,
            "speculative_num_draft_tokens": 4,
            "mamba_full_memory_ratio": 0.5,
        },
        None,
    ),
    (
        "zamba2-2.7b.json",
        {"available_memory": 20 * GIB, "disable_radix_cache": True, "context_length": 4096},
        None,
    ),
    (
        "zamba2-2.7b.json",
        {
            "available_memory": 60 * GIB,
            "max_mamba_cache_size": 300,
            "speculative_num_draft_tokens": 2,
        },
        None,
    ),
    (
        "zaya1-8b-legacy.json",
        {"available_memory": 60 * GIB},
        (368640, 82781, 30516756480, 3233, 0, 33907752960, 40960, 827826),
    ),
    (
        "zaya1-8b-legacy.json",
        {
            "tp_size": 2,
            "available_memory": 40 * GIB,
            "speculative_num_draft_tokens": 4,
            "mamba_full_memory_ratio": 0.5,
        },
        (266240, 23043, 6135234560, 48, 44656640, 36762255360, 20480, 1795032),
    ),
    (
        "zaya1-8b-legacy.json",
        {"available_memory": 20 * GIB, "disable_radix_cache": True, "context_length": 4096},
        (368640, 27593, 10172252160, 4096, 0, 11302584320, 40960, 275942),
    ),
    (
        "zaya1-8b-legacy.json",
        {
            "available_memory": 60 * GIB,
            "max_mamba_cache_size": 300,
            "speculative_num_draft_tokens": 2,
        },
        (368640, 300, 110960640, 48, 31109120, 64277422080, 40960, 1569273),
    ),
    (
        "zaya1-8b.json",
        {"available_memory": 60 * GIB},
        (184320, 165563, 30516756480, 4096, 0, 33907752960, 20480, 1655652),
    ),
    (
        "zaya1-8b.json",
        {
            "tp_size": 2,
            "available_memory": 40 * GIB,
            "speculative_num_draft_tokens": 4,
            "mamba_full_memory_ratio": 0.5,
        },
        (133120, 46089, 6135500800, 48, 22328320, 36788080640, 10240, 3592586),
    ),
    (
        "zaya1-8b.json",
        {"available_memory": 20 * GIB, "disable_radix_cache": True, "context_length": 4096},
        (184320, 55187, 10172252160, 4096, 0, 11302584320, 20480, 551884),
    ),
    (
        "zaya1-8b.json",
        {
            "available_memory": 60 * GIB,
            "max_mamba_cache_size": 300,
            "speculative_num_draft_tokens": 2,
        },
        (184320, 300, 55480320, 48, 15554560, 64350965760, 20480, 3142137),
    ),
)

# More launches: kv, conv and SSM dtypes, KDA's FlashKDA rule, block sizes, TP, other GPUs.
VLLM_MORE_CASES: tuple[tuple[str, str, dict[str, Any], tuple[object, ...] | None], ...] = (
    (
        "falcon-h1-7b-instruct.json",
        "sm90",
        {"kv_cache_dtype": "float16", "mamba_cache_dtype": "float32"},
        (
            3120,
            3194880,
            3188736,
            3194880,
            44,
            1,
            1,
            140574720,
            1,
            3,
            35987128320,
            107961384960,
            None,
            None,
        ),
    ),
    (
        "nemotron-nano-9b-v2.json",
        "sm90",
        {
            "mamba_cache_dtype": "float16",
            "mamba_ssm_cache_dtype": "bfloat16",
            "tensor_parallel_size": 4,
        },
        (672, 688128, 673792, 688128, 4, 7, 1, 2752512, 1, 3, 4932501504, 14797504512, None, None),
    ),
    (
        "kimi-k3.json",
        "sm90",
        {"mamba_ssm_cache_dtype": "bfloat16", "tensor_parallel_size": 4},
        (
            768,
            884736,
            841728,
            884736,
            24,
            3,
            1,
            21233664,
            1,
            3,
            16307453952,
            48922361856,
            None,
            None,
        ),
    ),
    (
        "kimi-k3.json",
        "sm90",
        {"enable_prefix_caching": False, "num_speculative_tokens": 1},
        (
            5760,
            6635520,
            6586368,
            6635520,
            24,
            3,
            1,
            159252480,
            2,
            2,
            244611809280,
            244611809280,
            None,
            None,
        ),
    ),
    (
        "qwen3.5-27b.json",
        "sm90",
        {"tensor_parallel_size": 8, "block_size": 64, "num_speculative_tokens": 3},
        (
            448,
            458752,
            408576,
            458752,
            16,
            3,
            1,
            7340032,
            4,
            6,
            22548578304,
            33822867456,
            None,
            None,
        ),
    ),
    (
        "granite-4.0-h-tiny.json",
        "sm90",
        {"block_size": 1000, "kv_cache_memory_bytes": 9 * GIB},
        (
            1008,
            2064384,
            806400,
            2064384,
            4,
            9,
            1,
            8257536,
            1,
            3,
            19025362944,
            57076088832,
            1170,
            7.405063291139241,
        ),
    ),
    (
        "jamba-mini-1.5.json",
        "sm90",
        {"tensor_parallel_size": 8, "num_speculative_tokens": 1, "kv_cache_memory_bytes": 30 * GIB},
        (
            80,
            40960,
            38912,
            40960,
            4,
            7,
            1,
            163840,
            2,
            3,
            587202560,
            880803840,
            196608,
            59.61431170406307,
        ),
    ),
    (
        "mamba-codestral-7b.json",
        "sm90",
        {"enable_prefix_caching": True, "tensor_parallel_size": 8},
        (16, 0, 269824, 269824, 64, 1, 0, 17268736, 1, 3, 4420796416, 13262389248, None, None),
    ),
    (
        "falcon-mamba-7b.json",
        "sm90",
        {"kv_cache_memory_bytes": 10 * GIB, "mamba_ssm_cache_dtype": "float32"},
        (16, 0, 573440, 573440, 64, 1, 0, 36700160, 1, 1, 9395240960, 9395240960, 292, 292.0),
    ),
    (
        "kimi-linear-48b-a3b-instruct.json",
        "sm80",
        {"kv_cache_memory_bytes": 20 * GIB, "max_model_len": 8192},
        (
            1920,
            2211840,
            2170880,
            2211840,
            7,
            3,
            1,
            15482880,
            1,
            2,
            11890851840,
            23781703680,
            1387,
            126.0909090909091,
        ),
    ),
    (
        "qwen3.5-35b-a3b.json",
        "sm89",
        {"tensor_parallel_size": 4, "max_num_seqs": 3},
        (528, 540672, 536576, 540672, 10, 3, 1, 5406720, 1, 2, 48660480, 97320960, None, None),
    ),
)


@pytest.mark.parametrize(("name", "gpu_arch", "flags", "expected"), VLLM_CASES + VLLM_MORE_CASES)
def test_vllm_agrees_with_the_wheel_field_by_field(
    name: str, gpu_arch: str, flags: dict[str, Any], expected: tuple[object, ...] | None
) -> None:
    if expected is None:
        with pytest.raises(ModelConfigError):
            vllm_reservation(CONFIGS / name, gpu_arch=gpu_arch, **flags)
        return
    answer = vllm_reservation(CONFIGS / name, gpu_arch=gpu_arch, **flags).as_dict()
    assert tuple(answer[field] for field in VLLM_FIELDS) == expected


@pytest.mark.parametrize(("name", "flags", "expected"), SGLANG_CASES)
def test_sglang_agrees_with_the_wheel_field_by_field(
    name: str, flags: dict[str, Any], expected: tuple[object, ...] | None
) -> None:
    if expected is None:
        with pytest.raises(ModelConfigError):
            sglang_reservation(CONFIGS / name, **flags)
        return
    answer = sglang_reservation(CONFIGS / name, **flags).as_dict()
    assert tuple(answer[field] for field in SGLANG_FIELDS) == expected


# --- the command lines ---------------------------------------------------------------------------

# (option strings, action, default, metavar, help, type, choices, required) of every option. The
# spellings are the servers' own (vllm/engine/arg_utils.py; sglang/srt/arg_groups/fields/*.py,
# aliases included, as tools read them into _flags.py); the defaults are theirs (vLLM
# tensor_parallel_size 1, replayssm_buffer_len 16; SGLang tp_size 1, mamba_full_memory_ratio
# 0.9, mamba_radix_cache_strategy auto, from the same files), and 256 sequences is the issue's B.


def _refusal(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """The one stderr line of a refused command line, which must exit 2 and print nothing."""
    status = main(list(args))
    captured = capsys.readouterr()
    assert (status, captured.out) == (2, "")
    assert captured.err.startswith("decode-ring: error: ")
    assert captured.err.count("\n") == 1
    return captured.err[len("decode-ring: error: ") : -1]


_ALIASES_SEQS = "argument --max-num-seqs/--max_num_seqs"
_ALIASES_LEN = "argument --max-model-len/--max_model_len"
_ALIASES_RATIO = "argument --mamba-full-memory-ratio"  # SGLang has no underscore spelling
_ALIASES_SPEC = "argument --speculative-config/-sc/--speculative_config"
_ONE = "1" * 24  # the longest number read; 2**63 - 1 has 19 digits


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (("vllm",), "the following arguments are required: --config"),
        (
            ("vllm", "--max-num-seqs", _ONE),
            f"argument --max-num-seqs: must be from 1 to 2**63 - 1, got {_ONE}",
        ),
        (
            ("vllm", "--max-num-seqs", _ONE + "1"),
            f"{_ALIASES_SEQS}: more than 2**63 - 1: '{_ONE}1'",
        ),
        (
            ("vllm", "--max-model-len", "-1"),
            f"{_ALIASES_LEN}: '-1': vLLM's auto-fit of the length to memory is not modelled",
        ),
        (
            ("vllm", "--max-model-len", _ONE + "k"),
            # int(float(24 ones) * 1000): vLLM's human_readable_int goes through float too.
            "argument --max-model-len: must be from 1 to 2**63 - 1, got "
            "111111111111111104952008704",
        ),
        (
            ("vllm", "--max-model-len", _ONE + "1k"),
            f"{_ALIASES_LEN}: more than 2**63 - 1: '{_ONE}1k'",
        ),
        (
            ("vllm", "--max-model-len", "1.5G"),
            f"{_ALIASES_LEN}: decimals are not allowed with binary suffixes like G; did you mean "
            "1.5g?",
        ),
        (
            ("sglang", "--mamba-full-memory-ratio", "abc"),
            f"{_ALIASES_RATIO}: not a number: 'abc'",
        ),
        (
            ("sglang", "--mamba-full-memory-ratio", "inf"),
            f"{_ALIASES_RATIO}: must be a finite number above 0: 'inf'",
        ),
        (
            ("sglang", "--mamba-full-memory-ratio", "0"),
            f"{_ALIASES_RATIO}: must be a finite number above 0: '0'",
        ),
        (("vllm", "--speculative-config", "{"), f"{_ALIASES_SPEC}: not JSON: '{{'"),
        (
            ("vllm", "--speculative-config", '{"foo": 1}'),
            f"{_ALIASES_SPEC}: key 'foo' is not modelled; read are num_speculative_tokens, "
            "method, model",
        ),
        (
            ("vllm", "--speculative-config", '{"num_speculative_tokens": -1}'),
            f"{_ALIASES_SPEC}: num_speculative_tokens must be a non-negative integer",
        ),
        (
            ("vllm", "--speculative-config", '{"num_speculative_tokens": true}'),
            f"{_ALIASES_SPEC}: num_speculative_tokens must be a non-negative integer",
        ),
        (
            ("vllm", "--speculative-config", '{"num_speculative_tokens": "2"}'),
            f"{_ALIASES_SPEC}: num_speculative_tokens must be a non-negative integer",
        ),
        (
            ("vllm", "--speculative-config", '{"method": 5}'),
            f"{_ALIASES_SPEC}: method must be a string",
        ),
        (
            ("vllm", "--speculative-config", '{"model": 5}'),
            f"{_ALIASES_SPEC}: model must be a string",
        ),
        (
            ("vllm", "--spec-tokens", "1", "--speculative-config", '{"num_speculative_tokens": 2}'),
            "argument --speculative-config: --spec-tokens and "
            "--speculative-config['num_speculative_tokens'] are mutually exclusive (vLLM)",
        ),
        (
            ("vllm", "--gpu_memory_utilization=0.9=1"),
            "vLLM 0.33.0's '--gpu_memory_utilization' is not modelled by decode-ring vllm; drop it",
        ),
        (("vllm", "--ab-max-num-seqs", "1"), "'--ab-max-num-seqs' is not a vLLM 0.33.0 flag"),
        (
            ("sglang", "--speculative-num-steps", "2"),
            "argument --speculative-num-steps: needs --speculative-algorithm",
        ),
        (
            ("sglang", "--speculative-num-draft-tokens", "2"),
            "argument --speculative-num-draft-tokens: needs --speculative-algorithm",
        ),
        (
            ("sglang", "--speculative-algorithm", "ngram", "--speculative-num-draft-tokens", "2"),
            "argument --speculative-algorithm: 'ngram' is not modelled; use EAGLE, EAGLE3, "
            "NEXTN, MTP",
        ),
        (
            (
                "sglang",
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
            ("sglang", "--speculative-algorithm", "EAGLE"),
            "argument --speculative-num-draft-tokens: needed with --speculative-algorithm "
            "(SGLang's automatic choice is not modelled)",
        ),
    ],
)
def test_a_refused_command_line_is_this_one_line(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], line: str
) -> None:
    config = () if args == ("vllm",) else ("--config", NEMOTRON)
    assert _refusal(capsys, args[0], *config, *args[1:]) == line


def _parsed(add_flags: Any, *args: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_flags(parser)
    return parser.parse_args(args)


def test_the_vllm_command_passes_each_flag_on() -> None:
    # What each flag changes, from the wheels: --block-size 2048 is kept (it holds the state
    # page, test_servers.py); a bfloat16 SSM cache under --mamba-ssm-cache-dtype; a ReplaySSM
    # ring of 8 is half the ring of 16 the wheel's append_replayssm_ring gives (368,640 B,
    # mamba_utils.py:213-246); sm80 runs the GDN prefill on Triton (_resolve_gdn_prefill_backend).
    r = run_vllm(
        _parsed(
            vllm_flags,
            "--config",
            NEMOTRON,
            "--block-size",
            "2048",
            "--mamba-ssm-cache-dtype",
            "bfloat16",
            "--use-replayssm",
            "--replayssm-buffer-len",
            "8",
            "--gpu-arch",
            "sm80",
            "--max-num-seqs",
            "+12",
        )
    )
    assert (r.block_size, r.ssm_dtype, r.gpu_arch, r.max_num_seqs) == (2048, "bfloat16", "sm80", 12)
    ssm_bf16 = 27 * (128 * 80 * 128 * 2)  # 27 layers of (128, 80, 128) bfloat16
    conv = 27 * (3 * 12288 * 2)  # 27 layers of (12288, 3) bfloat16
    assert r.per_sequence_bytes == ssm_bf16 + conv
    assert r.state_page_bytes == (ssm_bf16 + conv) // 27 + 368_640 // 2


def test_the_vllm_command_reads_the_speculative_config() -> None:
    # --spec-tokens stands when the JSON names only the drafter; the drafter is an assumption.
    r = run_vllm(
        _parsed(
            vllm_flags,
            "--config",
            QWEN3_NEXT,
            "--no-enable-prefix-caching",
            "--spec-tokens",
            "2",
            "--speculative-config",
            '{"model": "drafter", "method": "mtp"}',
        )
    )
    assert r.num_speculative_tokens == 2
    assert r.block_size == 560  # test_servers.py: Qwen3-Next, s = 2, no prefix caching
    assert r.assumptions[-2:] == (
        "speculative method 'mtp': its drafter's own KV layers are not counted",
        "speculative model 'drafter': its drafter's own KV layers are not counted",
    )
    alone = run_vllm(
        _parsed(vllm_flags, "--config", QWEN3_NEXT, "--speculative-config", '{"method": "mtp"}')
    )
    assert alone.num_speculative_tokens == 0
    zero = run_vllm(
        _parsed(vllm_flags, "--config", QWEN3_NEXT, "-sc", '{"num_speculative_tokens": 0}')
    )
    assert zero.num_speculative_tokens == 0


def test_the_sglang_command_passes_each_flag_on() -> None:
    args = _parsed(
        sglang_flags,
        "--config",
        QWEN3_NEXT,
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
    r = run_sglang(args)
    # The oracle (SGLANG_CASES above): Qwen3-Next, tp 2, 40 GiB, ratio 0.5, 4 draft tokens.
    assert (r.slots, r.max_running_requests) == (203, 40)
    assert (r.tp_size, r.gpu_arch, r.mamba_full_memory_ratio) == (2, "sm86", 0.5)
    assert r.assumptions[-2:] == (
        "speculative algorithm NEXTN",
        "speculative num steps 3: does not change the state pool",
    )
    off = run_sglang(
        _parsed(
            sglang_flags,
            "--config",
            NEMOTRON,
            "--available-memory",
            "20GiB",
            "--disable-radix-cache",
            "--context-length",
            "4096",
        )
    )
    # The oracle: Nemotron-Nano-9B-v2, 20 GiB, radix cache off, context 4096: 69 slots, 69 run.
    assert (off.slots, off.max_running_requests, off.ratio) == (69, 69, 1)
    assert (off.context_length, off.context_length_rule) == (4096, "--context-length")


def test_a_refusal_names_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    def refusal(*argv: str) -> str:
        assert main(list(argv)) == 2
        return capsys.readouterr().err

    assert refusal("sglang", "--config", NEMOTRON).startswith(
        "decode-ring: error: argument --available-memory: needed: "
    )
    assert refusal("vllm", "--config", NEMOTRON, "--kv-cache-memory-bytes", "1G").startswith(
        "decode-ring: error: argument --kv-cache-memory-bytes: "
    )
    assert refusal(
        "vllm", "--config", NEMOTRON, "--spec-tokens", "1", "-sc", '{"num_speculative_tokens": 1}'
    ).startswith("decode-ring: error: argument --speculative-config: ")


@pytest.mark.parametrize(
    ("server", "extras", "line"),
    [
        # vLLM's parser takes --no- forms of its boolean flags (BooleanOptionalAction).
        ("vllm", ["--no-enable-chunked-prefill"], "vLLM 0.33.0's '--no-enable-chunked-prefill'"),
        ("vllm", ["--no-such-flag"], "'--no-such-flag' is not a vLLM 0.33.0 flag"),
        ("vllm", ["-q_x"], "'-q_x' is not a vLLM 0.33.0 flag"),
        # SGLang takes no underscore spellings (its parser does not rewrite them, as vLLM's does).
        ("sglang", ["--mem_fraction_static=0.8"], "'--mem_fraction_static' is not a SGLang 0.5.23"),
        ("sglang", ["--mem-fraction-static=0.8"], "SGLang 0.5.23's '--mem-fraction-static'"),
        ("sglang", ["stray", "--x"], "unexpected argument 'stray'"),
    ],
)
def test_refuse_unknown_names_the_first_extra(server: str, extras: list[str], line: str) -> None:
    assert refuse_unknown(server, extras).startswith(line)


# --- metrale -----------------------------------------------------------------------------------

# Nemotron-Nano-9B-v2 in the reference's layout, per layer: conv (4, 12288 / tp) and SSM
# (128 / tp, 80, 128), both float32 (as tests/test_servers.py writes it), 27 layers.
_METRALE_PER_SEQUENCE = 27 * (4 * 12288 * 4 + 128 * 80 * 128 * 4)
_METRALE_PER_SEQUENCE_TP2 = 27 * (4 * 6144 * 4 + 64 * 80 * 128 * 4)
# The reference's ring depth (decode_rollback_ring_slots_with, ../shared/spec/decode_ring.rs):
# DECODE_ROLLBACK_RING_SLOTS (8) without speculation; 0 under speculative decode (rule 4).
_RING_DEPTH = 8


@pytest.fixture
def reference_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("METRALE_SSM_DECODE_RING", "METRALE_DISABLE_WATCHDOGS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("METRALE_SSM_RESERVE_RING_FULL", raising=False)


@pytest.mark.usefixtures("reference_environment")
def test_metrale_json_is_every_field() -> None:
    r = metrale(NEMOTRON, max_batch_size=4, free_memory=80 * GIB)
    live = 4 * _METRALE_PER_SEQUENCE
    assert r.fit is not None
    assert r.as_dict() == {
        "model_type": "nemotron_h",
        "family": "nemotron_h",
        "source": NEMOTRON,
        "tp_size": 1,
        "max_batch_size": 4,
        "speculative_tokens": 0,
        "state_layers": 27,
        "per_sequence_bytes": _METRALE_PER_SEQUENCE,
        "live_state_bytes": live,
        "requested_slots": _RING_DEPTH,
        "ring_slots": _RING_DEPTH,
        "ring_bytes": _RING_DEPTH * live,
        "total_bytes": (1 + _RING_DEPTH) * live,
        "free_memory": 80 * GIB,
        "decision": r.fit.decision,
        "refusal": r.fit.refusal,
        "multiplier": 1.0 + _RING_DEPTH,
    }
    assert r.fit.decision.startswith("ssm decode ring: 8 of 8 requested slots")


@pytest.mark.usefixtures("reference_environment")
def test_metrale_speculation_and_tp() -> None:
    r = metrale(NEMOTRON, tp_size=2, speculative_tokens=1)
    assert (r.tp_size, r.speculative_tokens, r.max_batch_size) == (2, 1, 256)
    assert r.per_sequence_bytes == _METRALE_PER_SEQUENCE_TP2
    assert (r.requested_slots, r.ring_slots, r.ring_bytes) == (0, 0, 0)
    assert r.as_dict()["decision"] is None and r.as_dict()["refusal"] is None
    assert r.fit is None


@pytest.mark.usefixtures("reference_environment")
def test_metrale_takes_zero_sequences_and_zero_memory() -> None:
    r = metrale(NEMOTRON, max_batch_size=0, free_memory=0)
    assert (r.live_state_bytes, r.ring_bytes, r.free_memory, r.multiplier) == (0, 0, 0, 1.0)


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"tp_size": 0}, "tp_size"),
        ({"speculative_tokens": -1}, "speculative_tokens"),
        ({"free_memory": -1}, "free_memory"),
    ],
)
def test_metrale_refusals_name_the_argument(arguments: dict[str, int], field: str) -> None:
    with pytest.raises(ServerArgumentError) as raised:
        metrale(NEMOTRON, **arguments)
    assert raised.value.field == field
    assert str(raised.value).startswith(f"argument {field}: must be from ")


# --- whole answers ---------------------------------------------------------------------------

# Every field of ten answers. The figures are the oracle's (each case was run through it; the
# fixed pool of mamba-2.8b-hf without a budget is SGLang's flag K and (K + 1) x the per-request
# bytes the oracle gives for that model), the ReplaySSM ring of 8 is half the wheel's 368,640 B
# at 16 (append_replayssm_ring, mamba_utils.py:213-246). The rule and assumption texts are the
# package's own wording of the rules cited in vllm.py and sglang.py, pinned so that each rule
# the answer reports is the one its figure came from.
WHOLE_ANSWERS: tuple[tuple[str, str, dict[str, Any], dict[str, object]], ...] = (
    (
        "vllm",
        "nemotron-nano-9b-v2.json",
        {"kv_cache_memory_bytes": 80 * GIB, "max_num_seqs": 64},
        {
            "model_type": "nemotron_h",
            "family": "nemotron_h",
            "source": str(CONFIGS / "nemotron-nano-9b-v2.json"),
            "tensor_parallel_size": 1,
            "max_num_seqs": 64,
            "max_model_len": 131072,
            "max_model_len_rule": "config max_position_embeddings (vLLM derived)",
            "enable_prefix_caching": True,
            "prefix_caching_rule": "vLLM default: on for a hybrid generative model",
            "mamba_cache_mode": "align",
            "num_speculative_tokens": 0,
            "use_replayssm": False,
            "gpu_arch": "sm90",
            "gpu": "H100 / H200 (compute capability 9.0)",
            "attention_backend": "FLASH_ATTN",
            "gdn_prefill_backend": None,
            "kv_cache_dtype": "auto",
            "conv_dtype": "bfloat16",
            "conv_dtype_rule": "config torch_dtype bfloat16 (vLLM: model dtype)",
            "ssm_dtype": "float32",
            "ssm_dtype_rule": (
                "vLLM NemotronH default float32 (vllm/model_executor/models/config.py:812-848)"
            ),
            "state_layers": 27,
            "attention_layers": 4,
            "block_size": 1312,
            "block_size_rule": (
                "raised by _align_hybrid_block_size so that one attention page holds the state page"
            ),
            "attention_page_bytes": 5373952,
            "state_page_bytes": 5316608,
            "state_page_bytes_padded": 5373952,
            "group_size": 4,
            "state_groups": 7,
            "attention_groups": 1,
            "bytes_per_block": 21495808,
            "state_blocks_per_request": 1,
            "planned_blocks_per_request": 3,
            "prefill_checkpoint_blocks": 1,
            "state_bytes": 9630121984,
            "planned_state_bytes": 28890365952,
            "naive_state_bytes": 9187098624,
            "per_sequence_bytes": 143548416,
            "kv_cache_memory_bytes": 85899345920,
            "num_blocks": 3996,
            "blocks_per_request_at_max_model_len": 121,
            "max_concurrency": 33.02479338842975,
            "assumptions": ["CUDA; a draft model's own KV layers are not counted"],
            "multiplier": 1.0482223363579295,
            "planned_multiplier": 3.144667009073789,
        },
    ),
    (
        "vllm",
        "mamba-2.8b-hf.json",
        {"num_speculative_tokens": 2, "tensor_parallel_size": 2},
        {
            "model_type": "mamba",
            "family": "mamba",
            "source": str(CONFIGS / "mamba-2.8b-hf.json"),
            "tensor_parallel_size": 2,
            "max_num_seqs": 256,
            "max_model_len": 2048,
            "max_model_len_rule": "no length in config: 2048 (vLLM derived)",
            "enable_prefix_caching": False,
            "prefix_caching_rule": "vLLM default: off for an attention-free model",
            "mamba_cache_mode": "none",
            "num_speculative_tokens": 2,
            "use_replayssm": False,
            "gpu_arch": "sm90",
            "gpu": "H100 / H200 (compute capability 9.0)",
            "attention_backend": None,
            "gdn_prefill_backend": None,
            "kv_cache_dtype": "auto",
            "conv_dtype": "bfloat16",
            "conv_dtype_rule": "config torch_dtype float32, as bfloat16 (vLLM: model dtype)",
            "ssm_dtype": "bfloat16",
            "ssm_dtype_rule": (
                "as conv state (vLLM: mamba_ssm_cache_dtype auto, "
                "vllm/model_executor/layers/mamba/mamba_utils.py:98-111)"
            ),
            "state_layers": 64,
            "attention_layers": 0,
            "block_size": 16,
            "block_size_rule": "vLLM default 16",
            "attention_page_bytes": 0,
            "state_page_bytes": 97280,
            "state_page_bytes_padded": 97280,
            "group_size": 64,
            "state_groups": 1,
            "attention_groups": 0,
            "bytes_per_block": 6225920,
            "state_blocks_per_request": 3,
            "planned_blocks_per_request": 3,
            "prefill_checkpoint_blocks": 0,
            "state_bytes": 4781506560,
            "planned_state_bytes": 4781506560,
            "naive_state_bytes": 1593835520,
            "per_sequence_bytes": 6225920,
            "kv_cache_memory_bytes": None,
            "num_blocks": None,
            "blocks_per_request_at_max_model_len": 3,
            "max_concurrency": None,
            "assumptions": ["CUDA; a draft model's own KV layers are not counted"],
            "multiplier": 3.0,
            "planned_multiplier": 3.0,
        },
    ),
    (
        "vllm",
        "kimi-linear-48b-a3b-instruct.json",
        {"tensor_parallel_size": 2},
        {
            "model_type": "kimi_linear",
            "family": "kimi_linear",
            "source": str(CONFIGS / "kimi-linear-48b-a3b-instruct.json"),
            "tensor_parallel_size": 2,
            "max_num_seqs": 256,
            "max_model_len": 1048576,
            "max_model_len_rule": "config model_max_length (vLLM derived)",
            "enable_prefix_caching": True,
            "prefix_caching_rule": "vLLM default: on for a hybrid generative model",
            "mamba_cache_mode": "align",
            "num_speculative_tokens": 0,
            "use_replayssm": False,
            "gpu_arch": "sm90",
            "gpu": "H100 / H200 (compute capability 9.0)",
            "attention_backend": "FLASH_ATTN_MLA",
            "gdn_prefill_backend": None,
            "kv_cache_dtype": "auto",
            "conv_dtype": "bfloat16",
            "conv_dtype_rule": "config dtype bfloat16 (vLLM: model dtype)",
            "ssm_dtype": "float32",
            "ssm_dtype_rule": (
                "vLLM KDA default float32 (vllm/model_executor/layers/mamba/mamba_utils.py:133-151)"
            ),
            "state_layers": 20,
            "attention_layers": 7,
            "block_size": 1024,
            "block_size_rule": (
                "raised by _align_hybrid_block_size so that one attention page holds the state page"
            ),
            "attention_page_bytes": 1179648,
            "state_page_bytes": 1085440,
            "state_page_bytes_padded": 1179648,
            "group_size": 7,
            "state_groups": 3,
            "attention_groups": 1,
            "bytes_per_block": 8257536,
            "state_blocks_per_request": 1,
            "planned_blocks_per_request": 2,
            "prefill_checkpoint_blocks": 0,
            "state_bytes": 6341787648,
            "planned_state_bytes": 12683575296,
            "naive_state_bytes": 5557452800,
            "per_sequence_bytes": 21708800,
            "kv_cache_memory_bytes": None,
            "num_blocks": None,
            "blocks_per_request_at_max_model_len": 1030,
            "max_concurrency": None,
            "assumptions": ["CUDA; a draft model's own KV layers are not counted"],
            "multiplier": 1.141132075471698,
            "planned_multiplier": 2.282264150943396,
        },
    ),
    (
        "vllm",
        "nemotron-nano-9b-v2.json",
        {
            "use_replayssm": True,
            "replayssm_buffer_len": 8,
            "gpu_arch": "sm89",
            "block_size": 2048,
            "max_model_len": 1000,
        },
        {
            "model_type": "nemotron_h",
            "family": "nemotron_h",
            "source": str(CONFIGS / "nemotron-nano-9b-v2.json"),
            "tensor_parallel_size": 1,
            "max_num_seqs": 256,
            "max_model_len": 1000,
            "max_model_len_rule": "flag",
            "enable_prefix_caching": True,
            "prefix_caching_rule": "vLLM default: on for a hybrid generative model",
            "mamba_cache_mode": "align",
            "num_speculative_tokens": 0,
            "use_replayssm": True,
            "gpu_arch": "sm89",
            "gpu": "L40S / RTX 40 (compute capability 8.9)",
            "attention_backend": "FLASH_ATTN",
            "gdn_prefill_backend": None,
            "kv_cache_dtype": "auto",
            "conv_dtype": "bfloat16",
            "conv_dtype_rule": "config torch_dtype bfloat16 (vLLM: model dtype)",
            "ssm_dtype": "float32",
            "ssm_dtype_rule": (
                "vLLM NemotronH default float32 (vllm/model_executor/models/config.py:812-848)"
            ),
            "state_layers": 27,
            "attention_layers": 4,
            "block_size": 2048,
            "block_size_rule": "flag",
            "attention_page_bytes": 8388608,
            "state_page_bytes": 5500928,
            "state_page_bytes_padded": 8388608,
            "group_size": 4,
            "state_groups": 7,
            "attention_groups": 1,
            "bytes_per_block": 33554432,
            "state_blocks_per_request": 1,
            "planned_blocks_per_request": 3,
            "prefill_checkpoint_blocks": 1,
            "state_bytes": 60129542144,
            "planned_state_bytes": 180388626432,
            "naive_state_bytes": 36748394496,
            "per_sequence_bytes": 143548416,
            "kv_cache_memory_bytes": None,
            "num_blocks": None,
            "blocks_per_request_at_max_model_len": 22,
            "max_concurrency": None,
            "assumptions": ["CUDA; a draft model's own KV layers are not counted"],
            "multiplier": 1.6362495006562803,
            "planned_multiplier": 4.908748501968841,
        },
    ),
    (
        "sglang",
        "nemotron-nano-9b-v2.json",
        {"available_memory": 60 * GIB, "max_running_requests": 256},
        {
            "model_type": "nemotron_h",
            "family": "nemotron_h",
            "architecture": "NemotronHForCausalLM",
            "source": str(CONFIGS / "nemotron-nano-9b-v2.json"),
            "tp_size": 1,
            "gpu_arch": "sm90",
            "state_layers": 27,
            "conv_dtype": "bfloat16",
            "conv_dtype_rule": "SGLang default bfloat16 (sglang/srt/configs/mamba_utils.py:68)",
            "ssm_dtype": "float32",
            "ssm_dtype_rule": "SGLang default float32 (sglang/srt/configs/mamba_utils.py:70)",
            "per_request_bytes": 143548416,
            "available_memory": 64424509440,
            "mamba_full_memory_ratio": 0.9,
            "mamba_radix_cache_strategy": "extra_buffer",
            "strategy_rule": "auto: overlap scheduler on, architecture supports it",
            "overlap_schedule": True,
            "disable_radix_cache": False,
            "ratio": 5,
            "slots": 211,
            "slots_rule": "0.9/(1+0.9) of available_memory, one slot padding",
            "pool_bytes": 30432264192,
            "max_running_requests": 42,
            "max_running_requests_rule": (
                "min(--max-running-requests 256, slots 211 // ratio 5, 2074722 KV tokens // 2)"
            ),
            "speculative_num_draft_tokens": 0,
            "speculative_scratch_bytes": 0,
            "speculative_ssm_scratch_bytes": 0,
            "speculative_conv_scratch_bytes": 0,
            "kv_cache_bytes": 33992245248,
            "kv_bytes_per_token": 16384,
            "kv_bytes_per_token_rule": "8 KV heads x (128 + 128) x 4 layers x 2 B",
            "kv_tokens": 2074722,
            "requested_requests": 256,
            "slots_for_requested": 1280,
            "pool_bytes_for_requested": 183885520896,
            "naive_state_bytes": 36748394496,
            "context_length": 131072,
            "context_length_rule": "config max_position_embeddings",
            "max_total_tokens": None,
            "assumptions": [
                "CUDA, one attention data-parallel rank, one pipeline stage, page size 1",
                "no ReplaySSM, no fused draft state, no multimodal reserve",
            ],
            "multiplier": 5.00390625,
        },
    ),
    (
        "sglang",
        "qwen3-next-80b-a3b-instruct.json",
        {
            "available_memory": 60 * GIB,
            "speculative_num_draft_tokens": 4,
            "mamba_ssm_dtype": "bfloat16",
            "gpu_arch": "sm80",
        },
        {
            "model_type": "qwen3_next",
            "family": "qwen3_next",
            "architecture": "Qwen3NextForCausalLM",
            "source": str(CONFIGS / "qwen3-next-80b-a3b-instruct.json"),
            "tp_size": 1,
            "gpu_arch": "sm80",
            "state_layers": 36,
            "conv_dtype": "bfloat16",
            "conv_dtype_rule": "SGLang default bfloat16 (sglang/srt/configs/mamba_utils.py:68)",
            "ssm_dtype": "bfloat16",
            "ssm_dtype_rule": "--mamba-ssm-dtype (SGLANG_MAMBA_SSM_DTYPE)",
            "per_request_bytes": 39518208,
            "available_memory": 64424509440,
            "mamba_full_memory_ratio": 0.9,
            "mamba_radix_cache_strategy": "extra_buffer",
            "strategy_rule": "auto: overlap scheduler on, architecture supports it",
            "overlap_schedule": True,
            "disable_radix_cache": False,
            "ratio": 5,
            "slots": 426,
            "slots_rule": "0.9/(1+0.9) of available_memory, one slot padding",
            "pool_bytes": 16874274816,
            "max_running_requests": 48,
            "max_running_requests_rule": (
                "min(48 for speculative decoding, slots 426 // ratio 5, 1619656 KV tokens // 2)"
            ),
            "speculative_num_draft_tokens": 4,
            "speculative_scratch_bytes": 7572160512,
            "speculative_ssm_scratch_bytes": 7398752256,
            "speculative_conv_scratch_bytes": 173408256,
            "kv_cache_bytes": 39804665856,
            "kv_bytes_per_token": 24576,
            "kv_bytes_per_token_rule": "2 KV heads x (256 + 256) x 12 layers x 2 B",
            "kv_tokens": 1619656,
            "requested_requests": 48,
            "slots_for_requested": 240,
            "pool_bytes_for_requested": 9523888128,
            "naive_state_bytes": 1896873984,
            "context_length": 262144,
            "context_length_rule": "config max_position_embeddings",
            "max_total_tokens": None,
            "assumptions": [
                "CUDA, one attention data-parallel rank, one pipeline stage, page size 1",
                "no ReplaySSM, no fused draft state, no multimodal reserve",
                (
                    "speculation is EAGLE/NEXTN with topk 1 and adds no draft-model KV; "
                    "conv windows deduplicated (CUDA, linear chain)"
                ),
            ],
            "multiplier": 5.020833333333333,
        },
    ),
    (
        "sglang",
        "mamba-2.8b-hf.json",
        {"max_mamba_cache_size": 90},
        {
            "model_type": "mamba",
            "family": "mamba",
            "architecture": "MambaForCausalLM",
            "source": str(CONFIGS / "mamba-2.8b-hf.json"),
            "tp_size": 1,
            "gpu_arch": "sm90",
            "state_layers": 64,
            "conv_dtype": "bfloat16",
            "conv_dtype_rule": "SGLang default bfloat16 (sglang/srt/configs/mamba_utils.py:68)",
            "ssm_dtype": "float32",
            "ssm_dtype_rule": "SGLang default float32 (sglang/srt/configs/mamba_utils.py:70)",
            "per_request_bytes": 22937600,
            "available_memory": None,
            "mamba_full_memory_ratio": 0.9,
            "mamba_radix_cache_strategy": "auto",
            "strategy_rule": "MambaForCausalLM is not a mamba-radix-cache architecture",
            "overlap_schedule": True,
            "disable_radix_cache": False,
            "ratio": 3,
            "slots": 90,
            "slots_rule": "--max-mamba-cache-size",
            "pool_bytes": 2087321600,
            "max_running_requests": 30,
            "max_running_requests_rule": (
                "min(SGLang's estimate from the KV pool, at most 4096 (without "
                "available_memory the KV pool's tokens, and so the estimate, are "
                "unknown: an upper bound), slots 90 // ratio 3)"
            ),
            "speculative_num_draft_tokens": 0,
            "speculative_scratch_bytes": 0,
            "speculative_ssm_scratch_bytes": 0,
            "speculative_conv_scratch_bytes": 0,
            "kv_cache_bytes": None,
            "kv_bytes_per_token": 0,
            "kv_bytes_per_token_rule": "no attention layer: no KV cache",
            "kv_tokens": None,
            "requested_requests": 30,
            "slots_for_requested": 90,
            "pool_bytes_for_requested": 2087321600,
            "naive_state_bytes": 688128000,
            "context_length": 2048,
            "context_length_rule": "no context-length field: SGLang's default",
            "max_total_tokens": None,
            "assumptions": [
                "CUDA, one attention data-parallel rank, one pipeline stage, page size 1",
                "no ReplaySSM, no fused draft state, no multimodal reserve",
            ],
            "multiplier": 3.033333333333333,
        },
    ),
    (
        "sglang",
        "nemotron-nano-9b-v2.json",
        # Issue 27: an explicit no_buffer needs --disable-overlap-schedule, which SGLang asserts
        # (mamba_hook.py:156-160); extra_buffer_lazy keeps one tracking slot (ratio 4). The
        # oracle's SglangReservations (its class snapshots) gives these values.
        {"available_memory": 40 * GIB, "mamba_radix_cache_strategy": "extra_buffer_lazy"},
        {
            "model_type": "nemotron_h",
            "family": "nemotron_h",
            "architecture": "NemotronHForCausalLM",
            "source": str(CONFIGS / "nemotron-nano-9b-v2.json"),
            "tp_size": 1,
            "gpu_arch": "sm90",
            "state_layers": 27,
            "conv_dtype": "bfloat16",
            "conv_dtype_rule": "SGLang default bfloat16 (sglang/srt/configs/mamba_utils.py:68)",
            "ssm_dtype": "float32",
            "ssm_dtype_rule": "SGLang default float32 (sglang/srt/configs/mamba_utils.py:70)",
            "per_request_bytes": 143548416,
            "available_memory": 42949672960,
            "mamba_full_memory_ratio": 0.9,
            "mamba_radix_cache_strategy": "extra_buffer_lazy",
            "strategy_rule": "flag",
            "overlap_schedule": True,
            "disable_radix_cache": False,
            "ratio": 4,
            "slots": 140,
            "slots_rule": "0.9/(1+0.9) of available_memory, one slot padding",
            "pool_bytes": 20240326656,
            "max_running_requests": 35,
            "max_running_requests_rule": (
                "min(SGLang's estimate clamp(1386068 KV tokens / context 131072 x 512, "
                "2048, 4096), slots 140 // ratio 4, 1386068 KV tokens // 2)"
            ),
            "speculative_num_draft_tokens": 0,
            "speculative_scratch_bytes": 0,
            "speculative_ssm_scratch_bytes": 0,
            "speculative_conv_scratch_bytes": 0,
            "kv_cache_bytes": 22709346304,
            "kv_bytes_per_token": 16384,
            "kv_bytes_per_token_rule": "8 KV heads x (128 + 128) x 4 layers x 2 B",
            "kv_tokens": 1386068,
            "requested_requests": 35,
            "slots_for_requested": 140,
            "pool_bytes_for_requested": 20240326656,
            "naive_state_bytes": 5024194560,
            "context_length": 131072,
            "context_length_rule": "config max_position_embeddings",
            "max_total_tokens": None,
            "assumptions": [
                "CUDA, one attention data-parallel rank, one pipeline stage, page size 1",
                "no ReplaySSM, no fused draft state, no multimodal reserve",
            ],
            "multiplier": 4.0285714285714285,
        },
    ),
    (
        "sglang",
        "jet-nemotron-2b.json",
        {"available_memory": 20 * GIB},
        {
            "model_type": "jet_nemotron",
            "family": "jet_nemotron",
            "architecture": "JetNemotronForCausalLM",
            "source": str(CONFIGS / "jet-nemotron-2b.json"),
            "tp_size": 1,
            "gpu_arch": "sm90",
            "state_layers": 24,
            "conv_dtype": "bfloat16",
            "conv_dtype_rule": "SGLang default bfloat16 (sglang/srt/configs/mamba_utils.py:68)",
            "ssm_dtype": "float32",
            "ssm_dtype_rule": "SGLang default float32 (sglang/srt/configs/mamba_utils.py:70)",
            "per_request_bytes": 29085696,
            "available_memory": 21474836480,
            "mamba_full_memory_ratio": 0.9,
            "mamba_radix_cache_strategy": "no_buffer",
            "strategy_rule": "auto: architecture has no extra_buffer; overlap turned off",
            "overlap_schedule": False,
            "disable_radix_cache": False,
            "ratio": 3,
            "slots": 348,
            "slots_rule": "0.9/(1+0.9) of available_memory, one slot padding",
            "pool_bytes": 10150907904,
            "max_running_requests": 116,
            "max_running_requests_rule": (
                "min(SGLang's estimate clamp(2764631 KV tokens / context 131072 x 512, "
                "2048, 4096), slots 348 // ratio 3, 2764631 KV tokens // 2)"
            ),
            "speculative_num_draft_tokens": 0,
            "speculative_scratch_bytes": 0,
            "speculative_ssm_scratch_bytes": 0,
            "speculative_conv_scratch_bytes": 0,
            "kv_cache_bytes": 11323928576,
            "kv_bytes_per_token": 4096,
            "kv_bytes_per_token_rule": "2 KV heads x (128 + 128) x 4 layers x 2 B",
            "kv_tokens": 2764631,
            "requested_requests": 116,
            "slots_for_requested": 348,
            "pool_bytes_for_requested": 10150907904,
            "naive_state_bytes": 3373940736,
            "context_length": 131072,
            "context_length_rule": "config max_position_embeddings",
            "max_total_tokens": None,
            "assumptions": [
                "CUDA, one attention data-parallel rank, one pipeline stage, page size 1",
                "no ReplaySSM, no fused draft state, no multimodal reserve",
                "no_buffer runs without the overlap scheduler, as SGLang pairs them",
            ],
            "multiplier": 3.0086206896551726,
        },
    ),
    (
        "sglang",
        "kimi-linear-48b-a3b-instruct.json",
        {
            "tp_size": 8,
            "available_memory": 60 * GIB,
            "disable_radix_cache": True,
            "max_running_requests": 100,
            "speculative_num_draft_tokens": 2,
        },
        {
            "model_type": "kimi_linear",
            "family": "kimi_linear",
            "architecture": "KimiLinearForCausalLM",
            "source": str(CONFIGS / "kimi-linear-48b-a3b-instruct.json"),
            "tp_size": 8,
            "gpu_arch": "sm90",
            "state_layers": 20,
            "conv_dtype": "bfloat16",
            "conv_dtype_rule": "SGLang default bfloat16 (sglang/srt/configs/mamba_utils.py:68)",
            "ssm_dtype": "float32",
            "ssm_dtype_rule": "SGLang default float32 (sglang/srt/configs/mamba_utils.py:70)",
            "per_request_bytes": 5427200,
            "available_memory": 64424509440,
            "mamba_full_memory_ratio": 0.9,
            "mamba_radix_cache_strategy": "none",
            "strategy_rule": "--disable-radix-cache",
            "overlap_schedule": True,
            "disable_radix_cache": True,
            "ratio": 1,
            "slots": 100,
            "slots_rule": "--disable-radix-cache with max_running_requests",
            "pool_bytes": 548147200,
            "max_running_requests": 100,
            "max_running_requests_rule": (
                "min(--max-running-requests 100, slots 100 // ratio 1, 7785226 KV tokens // 2)"
            ),
            "speculative_num_draft_tokens": 2,
            "speculative_scratch_bytes": 1096294400,
            "speculative_ssm_scratch_bytes": 1059061760,
            "speculative_conv_scratch_bytes": 37232640,
            "kv_cache_bytes": 62780067840,
            "kv_bytes_per_token": 8064,
            "kv_bytes_per_token_rule": "MLA (512 + 64) x 7 layers x 2 B",
            "kv_tokens": 7785226,
            "requested_requests": 100,
            "slots_for_requested": 100,
            "pool_bytes_for_requested": 548147200,
            "naive_state_bytes": 542720000,
            "context_length": 1048576,
            "context_length_rule": "config model_max_length",
            "max_total_tokens": None,
            "assumptions": [
                "CUDA, one attention data-parallel rank, one pipeline stage, page size 1",
                "no ReplaySSM, no fused draft state, no multimodal reserve",
                (
                    "speculation is EAGLE/NEXTN with topk 1 and adds no draft-model KV; "
                    "conv windows deduplicated (CUDA, linear chain)"
                ),
            ],
            "multiplier": 1.01,
        },
    ),
)


@pytest.mark.parametrize(("server", "name", "flags", "expected"), WHOLE_ANSWERS)
def test_the_whole_answer(
    server: str, name: str, flags: dict[str, Any], expected: dict[str, object]
) -> None:
    reserve = vllm_reservation if server == "vllm" else sglang_reservation
    assert reserve(CONFIGS / name, **flags).as_dict() == expected


# --- text --------------------------------------------------------------------------------------

# The text of five answers, line by line: each term beside the rule and the wheel file:lines it
# comes from (the citations the module docstrings of vllm.py and sglang.py give), and the
# server's figure beside the naive B x per-sequence one. Figures as in WHOLE_ANSWERS (the
# oracle's; Nemotron under ReplaySSM at 16 as tests/test_servers.py pins it), sizes in
# decode_ring.units' format; mamba-2.8b-hf is given as a mapping, which has no path.
_MAMBA = str(CONFIGS / "mamba-2.8b-hf.json")
TEXTS: tuple[tuple[str, str | None, dict[str, Any], list[str]], ...] = (
    (
        "vllm",
        "nemotron-nano-9b-v2.json",
        {"kv_cache_memory_bytes": 80 * GIB, "max_num_seqs": 64},
        [
            "vLLM 0.33.0 reserves for nemotron_h (nemotron_h), per rank, tp rank 1 of 1",
            "  assumed GPU            sm90: H100 / H200 (compute capability 9.0)",
            (
                "  assumed backends       attention FLASH_ATTN, GDN prefill -  "
                "vllm/platforms/cuda.py:84-178; gdn/qwen_gdn_linear_attn.py:148-270"
            ),
            "  assumed                CUDA; a draft model's own KV layers are not counted",
            f"  config                 {str(CONFIGS / 'nemotron-nano-9b-v2.json')!a}",
            (
                "  prefix caching         on -> mamba_cache_mode align         vLLM "
                "default: on for a hybrid generative model "
                "(vllm/engine/arg_utils.py:3075-3081; "
                "model_executor/models/config.py:750-787)"
            ),
            (
                "  max_model_len          131072                               config "
                "max_position_embeddings (vLLM derived) "
                "(transformers_utils/model_arch_config_convertor.py:374-407)"
            ),
            (
                "  conv dtype             bfloat16                             config "
                "torch_dtype bfloat16 (vLLM: model dtype)"
            ),
            (
                "  ssm dtype              float32                              vLLM "
                "NemotronH default float32 "
                "(vllm/model_executor/models/config.py:812-848)"
            ),
            (
                "  state layers           27                                   "
                "recurrent layers, one MambaSpec each"
            ),
            "  attention layers       4                                    kv cache dtype auto",
            (
                "  block size             1312 tokens                          raised "
                "by _align_hybrid_block_size so that one attention page holds the state "
                "page (vllm/platforms/interface.py:940-1137)"
            ),
            (
                "  attention page         5.12 MiB (5,373,952 B)               block x "
                "kv heads/rank x (head + head_v) x bytes "
                "(vllm/v1/kv_cache_interface.py:552-617)"
            ),
            (
                "  state page             5.07 MiB (5,316,608 B)               sum of "
                "prod(shape) x itemsize (MambaSpec.page_size_bytes, "
                "vllm/v1/kv_cache_interface.py:1117-1129)"
            ),
            (
                "  state page, padded     5.12 MiB (5,373,952 B)               one "
                "attention page (interface.py:1117-1137; unify, "
                "kv_cache_planning.py:346-408)"
            ),
            (
                "  groups                 7 state + 1 attention, 4 layers each "
                "_get_kv_cache_groups_uniform_page_size "
                "(vllm/v1/core/kv_cache_planning.py:416-556)"
            ),
            (
                "  bytes per block        20.50 MiB (21,495,808 B)             group "
                "size x padded page (_get_kv_cache_bytes_per_block, "
                "vllm/v1/core/kv_cache_planning.py:574-605)"
            ),
            (
                "  blocks per request     held 1, planned 3                    held 1 + "
                "s; planned 2 + s 0 + checkpoint 1 (max_memory_usage_bytes, "
                "vllm/v1/kv_cache_interface.py:1135-1141)"
            ),
            "",
            "  at max_num_seqs 64           server  naive B x state  multiplier",
            "  held at decode             8.97 GiB         8.56 GiB  1.048x",
            "  planned at startup        26.91 GiB         8.56 GiB  3.145x",
            (
                "  server: seqs x state groups x blocks x bytes per block; naive: seqs "
                "x per-sequence state 136.90 MiB"
            ),
            "",
            "  kv cache memory        80.00 GiB (85,899,345,920 B)         --kv-cache-memory-bytes",
            (
                "  num blocks             3,996                                budget "
                "// bytes per block (vllm/v1/core/kv_cache_planning.py:1540-1544)"
            ),
            (
                "  blocks per request     121 at 131,072 tokens                "
                "attention groups x ceil(len / block) + state groups x planned"
            ),
            (
                "  maximum concurrency    33.02x                               num "
                "blocks / blocks per request (vllm/v1/core/kv_cache_utils.py:1061-1093)"
            ),
        ],
    ),
    (
        "vllm",
        None,
        {"num_speculative_tokens": 2, "tensor_parallel_size": 2},
        [
            "vLLM 0.33.0 reserves for mamba (mamba), per rank, tp rank 1 of 2",
            "  assumed GPU            sm90: H100 / H200 (compute capability 9.0)",
            (
                "  assumed backends       attention -, GDN prefill -           "
                "vllm/platforms/cuda.py:84-178; gdn/qwen_gdn_linear_attn.py:148-270"
            ),
            "  assumed                CUDA; a draft model's own KV layers are not counted",
            "  config                 (mapping)",
            (
                "  prefix caching         off -> mamba_cache_mode none         vLLM "
                "default: off for an attention-free model "
                "(vllm/engine/arg_utils.py:3075-3081; "
                "model_executor/models/config.py:750-787)"
            ),
            (
                "  max_model_len          2048                                 no "
                "length in config: 2048 (vLLM derived) "
                "(transformers_utils/model_arch_config_convertor.py:374-407)"
            ),
            (
                "  conv dtype             bfloat16                             config "
                "torch_dtype float32, as bfloat16 (vLLM: model dtype)"
            ),
            (
                "  ssm dtype              bfloat16                             as conv "
                "state (vLLM: mamba_ssm_cache_dtype auto, "
                "vllm/model_executor/layers/mamba/mamba_utils.py:98-111)"
            ),
            (
                "  state layers           64                                   "
                "recurrent layers, one MambaSpec each"
            ),
            "  attention layers       0                                    kv cache dtype auto",
            (
                "  block size             16 tokens                            vLLM "
                "default 16 (vllm/platforms/interface.py:940-1137)"
            ),
            (
                "  attention page         0 B (0 B)                            block x "
                "kv heads/rank x (head + head_v) x bytes "
                "(vllm/v1/kv_cache_interface.py:552-617)"
            ),
            (
                "  state page             95.00 KiB (97,280 B)                 sum of "
                "prod(shape) x itemsize (MambaSpec.page_size_bytes, "
                "vllm/v1/kv_cache_interface.py:1117-1129)"
            ),
            (
                "  state page, padded     95.00 KiB (97,280 B)                 one "
                "attention page (interface.py:1117-1137; unify, "
                "kv_cache_planning.py:346-408)"
            ),
            (
                "  groups                 1 state + 0 attention, 64 layers each "
                "_get_kv_cache_groups_uniform_page_size "
                "(vllm/v1/core/kv_cache_planning.py:416-556)"
            ),
            (
                "  bytes per block        5.94 MiB (6,225,920 B)               group "
                "size x padded page (_get_kv_cache_bytes_per_block, "
                "vllm/v1/core/kv_cache_planning.py:574-605)"
            ),
            (
                "  blocks per request     held 3, planned 3                    held 1 + "
                "s; planned 1 + s 2 (max_memory_usage_bytes, "
                "vllm/v1/kv_cache_interface.py:1135-1141)"
            ),
            "",
            "  at max_num_seqs 256          server  naive B x state  multiplier",
            "  held at decode             4.45 GiB         1.48 GiB  3.000x",
            "  planned at startup         4.45 GiB         1.48 GiB  3.000x",
            (
                "  server: seqs x state groups x blocks x bytes per block; naive: seqs "
                "x per-sequence state 5.94 MiB"
            ),
        ],
    ),
    (
        "vllm",
        "nemotron-nano-9b-v2.json",
        {"use_replayssm": True},
        [
            "vLLM 0.33.0 reserves for nemotron_h (nemotron_h), per rank, tp rank 1 of 1",
            "  assumed GPU            sm90: H100 / H200 (compute capability 9.0)",
            (
                "  assumed backends       attention FLASH_ATTN, GDN prefill -  "
                "vllm/platforms/cuda.py:84-178; gdn/qwen_gdn_linear_attn.py:148-270"
            ),
            "  assumed                CUDA; a draft model's own KV layers are not counted",
            f"  config                 {str(CONFIGS / 'nemotron-nano-9b-v2.json')!a}",
            (
                "  prefix caching         on -> mamba_cache_mode align         vLLM "
                "default: on for a hybrid generative model "
                "(vllm/engine/arg_utils.py:3075-3081; "
                "model_executor/models/config.py:750-787)"
            ),
            (
                "  max_model_len          131072                               config "
                "max_position_embeddings (vLLM derived) "
                "(transformers_utils/model_arch_config_convertor.py:374-407)"
            ),
            (
                "  conv dtype             bfloat16                             config "
                "torch_dtype bfloat16 (vLLM: model dtype)"
            ),
            (
                "  ssm dtype              float32                              vLLM "
                "NemotronH default float32 "
                "(vllm/model_executor/models/config.py:812-848)"
            ),
            (
                "  state layers           27                                   "
                "recurrent layers, one MambaSpec each"
            ),
            "  attention layers       4                                    kv cache dtype auto",
            (
                "  block size             1392 tokens                          raised "
                "by _align_hybrid_block_size so that one attention page holds the state "
                "page (vllm/platforms/interface.py:940-1137)"
            ),
            (
                "  attention page         5.44 MiB (5,701,632 B)               block x "
                "kv heads/rank x (head + head_v) x bytes "
                "(vllm/v1/kv_cache_interface.py:552-617)"
            ),
            (
                "  state page             5.42 MiB (5,685,248 B)               sum of "
                "prod(shape) x itemsize (MambaSpec.page_size_bytes, "
                "vllm/v1/kv_cache_interface.py:1117-1129)"
            ),
            (
                "  state page, padded     5.44 MiB (5,701,632 B)               one "
                "attention page (interface.py:1117-1137; unify, "
                "kv_cache_planning.py:346-408)"
            ),
            (
                "  groups                 7 state + 1 attention, 4 layers each "
                "_get_kv_cache_groups_uniform_page_size "
                "(vllm/v1/core/kv_cache_planning.py:416-556)"
            ),
            (
                "  bytes per block        21.75 MiB (22,806,528 B)             group "
                "size x padded page (_get_kv_cache_bytes_per_block, "
                "vllm/v1/core/kv_cache_planning.py:574-605)"
            ),
            (
                "  blocks per request     held 1, planned 3                    held 1 + "
                "s; planned 2 + s 0 + checkpoint 1 (max_memory_usage_bytes, "
                "vllm/v1/kv_cache_interface.py:1135-1141)"
            ),
            "",
            "  at max_num_seqs 256          server  naive B x state  multiplier",
            "  held at decode            38.06 GiB        34.22 GiB  1.112x",
            "  planned at startup       114.19 GiB        34.22 GiB  3.336x",
            (
                "  server: seqs x state groups x blocks x bytes per block; naive: seqs "
                "x per-sequence state 136.90 MiB"
            ),
        ],
    ),
    (
        "sglang",
        "qwen3-next-80b-a3b-instruct.json",
        {"available_memory": 60 * GIB, "speculative_num_draft_tokens": 4},
        [
            (
                "SGLang 0.5.23 reserves for qwen3_next (qwen3_next, "
                "Qwen3NextForCausalLM), per rank, tp rank 1 of 1"
            ),
            "  assumed GPU            sm90: H100 / H200 (compute capability 9.0)",
            (
                "  assumed                CUDA, one attention data-parallel rank, one "
                "pipeline stage, page size 1"
            ),
            "  assumed                no ReplaySSM, no fused draft state, no multimodal reserve",
            (
                "  assumed                speculation is EAGLE/NEXTN with topk 1 and "
                "adds no draft-model KV; conv windows deduplicated (CUDA, linear chain)"
            ),
            f"  config                 {str(CONFIGS / 'qwen3-next-80b-a3b-instruct.json')!a}",
            (
                "  conv dtype             bfloat16                             SGLang "
                "default bfloat16 (sglang/srt/configs/mamba_utils.py:68)"
            ),
            (
                "  ssm dtype              float32                              SGLang "
                "default float32 (sglang/srt/configs/mamba_utils.py:70)"
            ),
            "  state layers           36",
            (
                "  per request            73.69 MiB (77,266,944 B)             "
                "mamba_cache_per_req: layers x (conv + temporal) "
                "(configs/mamba_utils.py:115-125)"
            ),
            (
                "  radix cache strategy   extra_buffer                         auto: "
                "overlap scheduler on, architecture supports it "
                "(sglang/srt/arg_groups/overrides.py:453-487)"
            ),
            (
                "  slots per request      5                                    "
                "_calculate_mamba_ratio "
                "(sglang/srt/mem_cache/kv_cache_configurator.py:3062-3088)"
            ),
            (
                "  available memory       60.00 GiB (64,424,509,440 B)         "
                "after the weights, per rank"
            ),
            (
                "  state slots K          216                                  "
                "0.9/(1+0.9) of available_memory, one slot padding "
                "(sglang/srt/mem_cache/kv_cache_configurator.py:3229-3409)"
            ),
            (
                "  state pool             15.62 GiB (16,766,926,848 B)         (K + 1) "
                "x per request (MambaPool, sglang/srt/mem_cache/memory_pool.py:722-753)"
            ),
            (
                "  speculative scratch    12.52 GiB (13,443,268,608 B)         4 draft "
                "tokens x (running + 1) rows (memory_pool.py:864-965)"
            ),
            (
                "  kv cache               31.72 GiB (34,058,600,448 B)         what is "
                "left for the KV pool "
                "(sglang/srt/mem_cache/kv_cache_configurator.py:3409)"
            ),
            (
                "  kv per token           24.00 KiB (24,576 B)                 2 KV "
                "heads x (256 + 256) x 12 layers x 2 B (_compute_cell_size, "
                "sglang/srt/model_executor/pool_configurator.py:340-534)"
            ),
            (
                "  kv tokens              1,385,848                            kv cache "
                "// kv per token; the context without attention "
                "(sglang/srt/model_executor/pool_configurator.py:243-248, 623-634)"
            ),
            (
                "  context length         262,144                              config "
                "max_position_embeddings"
            ),
            (
                "  max running requests   43                                   min(48 "
                "for speculative decoding, slots 216 // ratio 5, 1385848 KV tokens // "
                "2) (resolve_max_num_reqs, "
                "sglang/srt/mem_cache/kv_cache_configurator.py:3119-3172)"
            ),
            "",
            "  at 48 requests               server  naive B x state  multiplier",
            "  state pool now            15.62 GiB         3.45 GiB  4.521x",
            "  240 slots                 17.34 GiB         3.45 GiB  5.021x",
            "  running 48 takes 5 slots each, + 1 padding; naive: requests x per request",
        ],
    ),
    (
        "sglang",
        None,
        {"max_mamba_cache_size": 90},
        [
            "SGLang 0.5.23 reserves for mamba (mamba, MambaForCausalLM), per rank, tp rank 1 of 1",
            "  assumed GPU            sm90: H100 / H200 (compute capability 9.0)",
            (
                "  assumed                CUDA, one attention data-parallel rank, one "
                "pipeline stage, page size 1"
            ),
            "  assumed                no ReplaySSM, no fused draft state, no multimodal reserve",
            "  config                 (mapping)",
            (
                "  conv dtype             bfloat16                             SGLang "
                "default bfloat16 (sglang/srt/configs/mamba_utils.py:68)"
            ),
            (
                "  ssm dtype              float32                              SGLang "
                "default float32 (sglang/srt/configs/mamba_utils.py:70)"
            ),
            "  state layers           64",
            (
                "  per request            21.88 MiB (22,937,600 B)             "
                "mamba_cache_per_req: layers x (conv + temporal) "
                "(configs/mamba_utils.py:115-125)"
            ),
            (
                "  radix cache strategy   auto                                 "
                "MambaForCausalLM is not a mamba-radix-cache architecture "
                "(sglang/srt/arg_groups/overrides.py:453-487)"
            ),
            (
                "  slots per request      3                                    "
                "_calculate_mamba_ratio "
                "(sglang/srt/mem_cache/kv_cache_configurator.py:3062-3088)"
            ),
            (
                "  available memory       -                                    "
                "after the weights, per rank"
            ),
            (
                "  state slots K          90                                   "
                "--max-mamba-cache-size "
                "(sglang/srt/mem_cache/kv_cache_configurator.py:3229-3409)"
            ),
            (
                "  state pool             1.94 GiB (2,087,321,600 B)           (K + 1) "
                "x per request (MambaPool, sglang/srt/mem_cache/memory_pool.py:722-753)"
            ),
            (
                "  speculative scratch    0 B (0 B)                            0 draft "
                "tokens x (running + 1) rows (memory_pool.py:864-965)"
            ),
            (
                "  kv cache               -                                    what is "
                "left for the KV pool "
                "(sglang/srt/mem_cache/kv_cache_configurator.py:3409)"
            ),
            (
                "  kv per token           0 B (0 B)                            no "
                "attention layer: no KV cache (_compute_cell_size, "
                "sglang/srt/model_executor/pool_configurator.py:340-534)"
            ),
            (
                "  kv tokens              unknown                              kv cache "
                "// kv per token; the context without attention "
                "(sglang/srt/model_executor/pool_configurator.py:243-248, 623-634)"
            ),
            (
                "  context length         2,048                                no "
                "context-length field: SGLang's default"
            ),
            (
                "  max running requests   30                                   "
                "min(SGLang's estimate from the KV pool, at most 4096 (without "
                "available_memory the KV pool's tokens, and so the estimate, are "
                "unknown: an upper bound), slots 90 // ratio 3) (resolve_max_num_reqs, "
                "sglang/srt/mem_cache/kv_cache_configurator.py:3119-3172)"
            ),
            "",
            "  at 30 requests               server  naive B x state  multiplier",
            "  state pool now             1.94 GiB       656.25 MiB  3.033x",
            "  90 slots                   1.94 GiB       656.25 MiB  3.033x",
            "  running 30 takes 3 slots each, + 1 padding; naive: requests x per request",
        ],
    ),
)


@pytest.mark.parametrize(("server", "name", "flags", "lines"), TEXTS)
def test_the_text_shows_each_term_with_its_rule(
    server: str, name: str | None, flags: dict[str, Any], lines: list[str]
) -> None:
    config: Any = CONFIGS / name if name else json.loads(Path(_MAMBA).read_text())
    reserve = vllm_reservation if server == "vllm" else sglang_reservation
    assert render(reserve(config, **flags)).lines == lines


def test_vllm_fp8_kv_cache_halves_the_attention_page() -> None:
    # FullAttentionSpec.page_size_bytes (vllm/v1/kv_cache_interface.py:552-617) with fp8's one
    # byte (vllm/config/cache.py:44-60): Nemotron's 8 KV heads x (128 + 128) x 1 B = 2048 B a
    # token; _align_hybrid_block_size (vllm/platforms/interface.py:940-1137) then needs
    # 16 x ceil(5,316,608 / (16 x 2048)) = 2608 tokens for the state page. (The oracle's torch
    # stub has no fp8 dtype, so this is written out from the wheel's code.)
    r = vllm_reservation(CONFIGS / "nemotron-nano-9b-v2.json", kv_cache_dtype="fp8")
    assert (r.block_size, r.attention_page_bytes) == (2608, 2608 * 2048)
    assert r.bytes_per_block == 4 * 2608 * 2048
    e4m3 = vllm_reservation(CONFIGS / "nemotron-nano-9b-v2.json", kv_cache_dtype="fp8_e4m3")
    assert e4m3.block_size == 2608


def _nemotron_with(**fields: object) -> dict[str, Any]:
    """Nemotron-Nano-9B-v2's config without its length keys, with ``fields`` added."""
    config: dict[str, Any] = json.loads(Path(NEMOTRON).read_text())
    config.pop("max_position_embeddings", None)
    config.update(fields)
    return config


@pytest.mark.parametrize(
    ("fields", "length", "rule"),
    [
        # derive_max_model_len_and_key (model_arch_config_convertor.py:374-407): the smallest of
        # the keys, but model_max_length whenever it is there.
        (
            {"max_position_embeddings": 5000, "n_positions": 3000, "seq_len": 4000},
            3000,
            "config n_positions (vLLM derived)",
        ),
        (
            {"max_position_embeddings": 5000, "model_max_length": 7000},
            7000,
            "config model_max_length (vLLM derived)",
        ),
        ({"max_seq_length": 6000}, 6000, "config max_seq_length (vLLM derived)"),
        # _get_and_verify_max_len (vllm/config/model.py:2597-2652): a RoPE factor scales the
        # length, except for the types that leave it already scaled.
        (
            {
                "max_position_embeddings": 4096,
                "rope_parameters": {"rope_type": "linear", "factor": 2.0},
            },
            8192,
            "config max_position_embeddings x RoPE factor 2 (vLLM derived)",
        ),
        (
            {"max_position_embeddings": 4096, "rope_scaling": {"type": "dynamic", "factor": 4}},
            16384,
            "config max_position_embeddings x RoPE factor 4 (vLLM derived)",
        ),
        (
            {
                "max_position_embeddings": 4096,
                "rope_parameters": {"rope_type": "yarn", "factor": 4},
            },
            4096,
            "config max_position_embeddings (vLLM derived)",
        ),
        (
            {
                "max_position_embeddings": 4096,
                "rope_parameters": {"rope_type": "linear", "factor": None},
            },
            4096,
            "config max_position_embeddings (vLLM derived)",
        ),
        # Nested per layer type (iter_rope_parameters, transformers_utils/config.py:690-699):
        # a type without a factor keeps the one found so far.
        (
            {
                "max_position_embeddings": 4096,
                "rope_parameters": {
                    "full_attention": {"rope_type": "linear", "factor": 3},
                    "sliding_attention": {"rope_type": "default"},
                    "empty": {},
                },
            },
            12288,
            "config max_position_embeddings x RoPE factor 3 (vLLM derived)",
        ),
        # LongRoPE defaults to original_max_position_embeddings (model.py:2640-2650).
        (
            {
                "max_position_embeddings": 131072,
                "original_max_position_embeddings": 4096,
                "rope_parameters": {"rope_type": "longrope", "factor": 32},
            },
            4096,
            "config original_max_position_embeddings (vLLM LongRoPE default)",
        ),
        (
            {"max_position_embeddings": 8192, "rope_parameters": {"rope_type": "longrope"}},
            8192,
            "config original_max_position_embeddings (vLLM LongRoPE default)",
        ),
    ],
)
def test_vllm_derives_max_model_len_as_vllm_does(
    fields: dict[str, object], length: int, rule: str
) -> None:
    r = vllm_reservation(_nemotron_with(**fields))
    assert (r.max_model_len, r.max_model_len_rule) == (length, rule)


@pytest.mark.parametrize(
    "fields",
    [
        {
            "max_position_embeddings": 4096,
            "rope_parameters": {"rope_type": "linear", "factor": "x"},
        },
        {
            "max_position_embeddings": 4096,
            "rope_parameters": {"rope_type": "linear", "factor": True},
        },
        {"max_position_embeddings": 4096, "rope_parameters": {"rope_type": "linear", "factor": 0}},
        {
            "max_position_embeddings": 4096,
            "original_max_position_embeddings": "4k",
            "rope_parameters": {"rope_type": "longrope"},
        },
    ],
)
def test_a_length_vllm_cannot_derive_is_asked_for(fields: dict[str, object]) -> None:
    with pytest.raises(ServerArgumentError) as raised:
        vllm_reservation(_nemotron_with(**fields))
    assert raised.value.field == "max_model_len"
    assert str(raised.value).startswith("argument max_model_len: ")
    assert str(raised.value).endswith("; give it")


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
    r = sglang_reservation(_nemotron_with(**fields), max_mamba_cache_size=300)
    assert (r.context_length, r.context_length_rule) == (length, rule)
    given = sglang_reservation(
        _nemotron_with(**fields), max_mamba_cache_size=300, context_length=length
    )
    assert (given.context_length, given.context_length_rule) == (length, "--context-length")


def test_sglang_refuses_a_context_length_field_that_is_not_an_integer() -> None:
    with pytest.raises(ModelConfigError) as raised:
        sglang_reservation(_nemotron_with(seq_length="4k"), max_mamba_cache_size=300)
    assert raised.value.field == "seq_length"
    assert str(raised.value) == "field 'seq_length': '4k' is not an integer"
    with pytest.raises(ServerArgumentError) as longer:
        sglang_reservation(
            _nemotron_with(max_position_embeddings=4096),
            max_mamba_cache_size=300,
            context_length=4097,
        )
    assert str(longer.value) == (
        "argument context_length: 4097 is longer than the model's 4096 (config "
        "max_position_embeddings); SGLang refuses it (configs/model_config.py:1295-1316)"
    )


JET = CONFIGS / "jet-nemotron-2b.json"


def test_sglang_strategy_of_a_radix_architecture_without_extra_buffer() -> None:
    # JetNemotronForCausalLM is in _MAMBA_RADIX_CACHE_ARCHS (arg_groups/overrides.py:369-399)
    # but not in _MAMBA_EXTRA_BUFFER_ARCHS (:403-436): auto resolves to no_buffer with the
    # overlap scheduler off (model_hook.py:1050-1075), 3 slots a request
    # (kv_cache_configurator.py:227, allocation_sizing.py:11-19).
    auto = sglang_reservation(JET, available_memory=20 * GIB)
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
        sglang_reservation(JET, available_memory=20 * GIB, mamba_radix_cache_strategy="no_buffer")
    assert "no_buffer needs --disable-overlap-schedule" in str(flag.value)
    for strategy in ("extra_buffer", "extra_buffer_lazy"):
        with pytest.raises(ServerArgumentError) as raised:
            sglang_reservation(JET, available_memory=20 * GIB, mamba_radix_cache_strategy=strategy)
        assert raised.value.field == "mamba_radix_cache_strategy"
        assert str(raised.value) == (
            f"argument mamba_radix_cache_strategy: {strategy} is not supported for "
            "JetNemotronForCausalLM; use no_buffer: SGLang 0.5.23 asserts it "
            "(sglang/srt/arg_groups/mamba_hook.py:115-119, overrides.py:403-451)"
        )
    off = sglang_reservation(JET, available_memory=20 * GIB, disable_radix_cache=True)
    assert (off.mamba_radix_cache_strategy, off.strategy_rule, off.overlap_schedule) == (
        "none",
        "--disable-radix-cache",
        True,
    )
    assert off.ratio == 1


def test_sglang_refusals_are_these_lines() -> None:
    with pytest.raises(ServerArgumentError) as not_radix:
        sglang_reservation(
            CONFIGS / "mamba-2.8b-hf.json",
            available_memory=20 * GIB,
            mamba_radix_cache_strategy="extra_buffer",
        )
    assert str(not_radix.value) == (
        "argument mamba_radix_cache_strategy: extra_buffer needs mamba state, got "
        "MambaForCausalLM: SGLang 0.5.23 refuses it where the mamba radix cache is off "
        "(sglang/srt/arg_groups/model_hook.py:1059-1066)"
    )
    with pytest.raises(ServerArgumentError) as no_slot:
        sglang_reservation(NEMOTRON, available_memory=100 * 2**20)
    # 143,548,416 B a request (test_servers.py): 100 MiB holds none.
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
        sglang_reservation(config, available_memory=20 * GIB)
    assert raised.value.field == "architectures"
    assert str(raised.value) == (
        "field 'architectures': missing; SGLang picks the model class, and with it the cache "
        "strategy, from architectures[0]"
    )


# --- vLLM's refusals ---------------------------------------------------------------------------

KIMI_LINEAR = CONFIGS / "kimi-linear-48b-a3b-instruct.json"
_BYTES_PER_BLOCK = 21_495_808  # Nemotron-Nano-9B-v2's block (test_servers.py)


def test_vllm_startup_check_holds_back_the_null_block() -> None:
    # _check_enough_kv_cache_memory (vllm/v1/core/kv_cache_planning.py:50-87) runs against the
    # budget less the null block (:1533-1543): at max_model_len 4096 one request takes
    # ceil(4096 / 1312) = 4 attention blocks + 7 state groups x 3 = 25 blocks, so 26 blocks of
    # budget start and one byte less does not. (The oracle passes the whole budget to the check,
    # so these two figures are written out from the wheel.)
    fits = vllm_reservation(
        NEMOTRON, max_model_len=4096, kv_cache_memory_bytes=26 * _BYTES_PER_BLOCK
    )
    assert (fits.num_blocks, fits.blocks_per_request_at_max_model_len) == (26, 25)
    assert fits.max_concurrency == 26 / 25
    with pytest.raises(ServerArgumentError) as short:
        vllm_reservation(
            NEMOTRON, max_model_len=4096, kv_cache_memory_bytes=26 * _BYTES_PER_BLOCK - 1
        )
    assert str(short.value) == (
        f"argument kv_cache_memory_bytes: {26 * _BYTES_PER_BLOCK - 1} B holds 24 usable blocks "
        f"of {_BYTES_PER_BLOCK} B; one request at max_model_len 4096 needs 25: vLLM refuses to "
        "start"
    )
    with pytest.raises(ServerArgumentError) as nothing:
        vllm_reservation(NEMOTRON, kv_cache_memory_bytes=0)
    assert str(nothing.value).startswith(
        f"argument kv_cache_memory_bytes: 0 B holds 0 usable blocks of {_BYTES_PER_BLOCK} B; "
    )


@pytest.mark.parametrize(
    ("config", "flags", "field", "line"),
    [
        (
            KIMI_LINEAR,
            {"kv_cache_dtype": "fp8"},
            "kv_cache_dtype",
            "argument kv_cache_dtype: fp8 with MLA is not modelled",
        ),
        (
            NEMOTRON,
            {"kv_cache_dtype": "fp8", "gpu_arch": "sm89"},
            "kv_cache_dtype",
            "argument kv_cache_dtype: fp8 needs FlashAttention 3 (SM90); vLLM's fallback "
            "backend on sm89 is not modelled",
        ),
        (
            NEMOTRON,
            {"kv_cache_dtype": "turboquant_4bit_nc"},
            "kv_cache_dtype",
            "argument kv_cache_dtype: turboquant_4bit_nc is not modelled",
        ),
        (
            NEMOTRON,
            {"kv_cache_dtype": "bogus"},
            "kv_cache_dtype",
            "argument kv_cache_dtype: unknown value 'bogus'; use auto, float16, bfloat16, fp8, "
            "fp8_e4m3",
        ),
        (
            QWEN3_NEXT,
            {"use_replayssm": True},
            "use_replayssm",
            "argument use_replayssm: vLLM 0.33.0 supports ReplaySSM only for NemotronH, not "
            "qwen3_next (vllm/config/vllm.py:3475-3479)",
        ),
        (
            NEMOTRON,
            {"use_replayssm": True, "num_speculative_tokens": 1},
            "use_replayssm",
            "argument use_replayssm: ReplaySSM with speculative decoding needs the FlashInfer "
            "mamba backend; not modelled",
        ),
    ],
)
def test_vllm_refusals_are_these_lines(
    config: Path | str, flags: dict[str, Any], field: str, line: str
) -> None:
    with pytest.raises(ServerArgumentError) as raised:
        vllm_reservation(config, **flags)
    assert (raised.value.field, str(raised.value)) == (field, line)


@pytest.mark.parametrize("head_dim", [100, 264])
def test_vllm_refuses_a_head_flash_attention_does_not_take(head_dim: int) -> None:
    # flash_attn.py:424-433: head sizes that are multiples of 8 up to 256.
    config = json.loads(Path(NEMOTRON).read_text())
    config["head_dim"] = head_dim
    with pytest.raises(ModelConfigError) as raised:
        vllm_reservation(config)
    assert raised.value.field == "head_dim"
    assert str(raised.value) == (
        f"head_dim {head_dim}: FlashAttention takes multiples of 8 up to 256; vLLM's fallback "
        "backend is not modelled"
    )
    config["head_dim"] = 256
    assert vllm_reservation(config).attention_backend == "FLASH_ATTN"


def test_vllm_backends_by_gpu() -> None:
    # _get_backend_priorities (vllm/platforms/cuda.py:84-178): FlashAttention-MLA on SM90,
    # Triton-MLA before it; GDN prefill on FlashInfer only on SM90.
    assert vllm_reservation(KIMI_LINEAR).attention_backend == "FLASH_ATTN_MLA"
    assert vllm_reservation(KIMI_LINEAR, gpu_arch="sm86").attention_backend == "TRITON_MLA"
    assert vllm_reservation(KIMI_LINEAR, kv_cache_dtype="bfloat16").attention_backend == (
        "FLASH_ATTN_MLA"
    )
    assert vllm_reservation(QWEN3_NEXT, gpu_arch="sm89").gdn_prefill_backend == "triton"


# The models package names a family-less attention model "transformer".
def test_vllm_refuses_a_model_without_recurrent_state_in_this_line() -> None:
    config = {"model_type": "llama", "num_hidden_layers": 2, "num_attention_heads": 4}
    config["hidden_size"] = 64
    with pytest.raises(ModelConfigError) as raised:
        vllm_reservation(config)
    assert str(raised.value) == "llama: no recurrent layer, so vLLM reserves no state for it"
    assert (raised.value.field, raised.value.family) == ("model_type", "transformer")
    with pytest.raises(ModelConfigError) as sglang_raised:
        sglang_reservation(config, available_memory=GIB)
    assert str(sglang_raised.value) == (
        "llama: no recurrent layer, so SGLang keeps no state pool for it"
    )
    assert (sglang_raised.value.field, sglang_raised.value.family) == ("model_type", "transformer")


def test_vllm_replayssm_ring_is_in_the_model_dtype() -> None:
    # append_replayssm_ring (mamba_utils.py:92-95, :213-246): the x and B caches take the
    # activation (model) dtype, bfloat16 here, whatever --mamba-cache-dtype says: 368,640 B a
    # layer at 16 (test_servers.py). A float32 conv state (12288, 3) and the float32 SSM state
    # (128, 80, 128) make the rest of the page.
    r = vllm_reservation(NEMOTRON, use_replayssm=True, mamba_cache_dtype="float32")
    assert r.state_page_bytes == 12288 * 3 * 4 + 128 * 80 * 128 * 4 + 368_640
    assert type(r.state_page_bytes) is int and type(r.bytes_per_block) is int
    # Without attention layers (every '*' of the pattern made an MLP '-') the model dtype is
    # read from the state's: bfloat16 again, and no page alignment.
    config = json.loads(Path(NEMOTRON).read_text())
    config["hybrid_override_pattern"] = config["hybrid_override_pattern"].replace("*", "-")
    free = vllm_reservation(config, use_replayssm=True)
    assert (free.attention_layers, free.block_size) == (0, 16)
    assert free.state_page_bytes == free.state_page_bytes_padded == 5_316_608 + 368_640
    assert free.assumptions[-1] == (
        "no attention layer: no page alignment, one group of every layer"
    )


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("--speculative-num-steps", "2"), "speculative_num_steps"),
        (("--speculative-num-draft-tokens", "2"), "speculative_num_draft_tokens"),
        (
            ("--speculative-algorithm", "ngram", "--speculative-num-draft-tokens", "2"),
            "speculative_algorithm",
        ),
        (
            (
                "--speculative-algorithm",
                "EAGLE",
                "--speculative-eagle-topk",
                "2",
                "--speculative-num-draft-tokens",
                "2",
            ),
            "speculative_eagle_topk",
        ),
        (("--speculative-algorithm", "EAGLE3"), "speculative_num_draft_tokens"),
        (
            ("--speculative-algorithm", "EAGLE3", "--speculative-num-draft-tokens", "0"),
            "speculative_num_draft_tokens",
        ),
    ],
)
def test_sglang_speculative_refusals_name_their_flag(
    args: tuple[str, ...], field: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sglang", "--config", NEMOTRON, "--available-memory", "60GiB", *args]) == 2
    assert capsys.readouterr().err.startswith(
        f"decode-ring: error: argument --{field.replace('_', '-')}: "
    )


def test_vllm_sizes_in_plain_digits() -> None:
    # human_readable_int (vllm/utils/argparse_utils.py:30-75) takes plain integers too.
    r = run_vllm(
        _parsed(
            vllm_flags,
            "--config",
            NEMOTRON,
            "--max-model-len",
            "4096",
            "--kv-cache-memory-bytes",
            str(26 * _BYTES_PER_BLOCK),
        )
    )
    assert (r.max_model_len, r.num_blocks) == (4096, 26)


@pytest.mark.usefixtures("reference_environment")
def test_metrale_json_carries_the_fits_refusal() -> None:
    # 256 sequences of 146,866,176 B (35.02 GiB) do not fit 1 GiB with any ring.
    r = metrale(NEMOTRON, max_batch_size=256, free_memory=GIB)
    assert r.fit is not None and r.fit.refusal is not None
    assert r.as_dict()["refusal"] == r.fit.refusal
    assert r.fit.refusal.startswith("refused: the reserve without ring alone, 35.02 GiB")


@pytest.mark.parametrize(
    ("layers", "group_size", "state_groups"),
    [
        # _get_kv_cache_groups_uniform_page_size (kv_cache_planning.py:416-556), run by the
        # oracle on Nemotron-H patterns of 27 Mamba and N attention layers: g = N, unless
        # 27 < 1.5 N, when g = 27.
        (12, 12, 3),
        (18, 18, 2),
        (20, 27, 1),
    ],
)
def test_vllm_group_size_follows_the_one_and_a_half_rule(
    layers: int, group_size: int, state_groups: int
) -> None:
    config = json.loads(Path(NEMOTRON).read_text())
    config["hybrid_override_pattern"] = "M" * 27 + "*" * layers
    config["num_hidden_layers"] = 27 + layers
    r = vllm_reservation(config)
    assert (r.group_size, r.state_groups, r.attention_groups) == (group_size, state_groups, 1)


def test_vllm_more_launches_the_oracle_ran() -> None:
    # An odd --block-size: _align_hybrid_block_size keeps 3001 (it holds the page) and rounds
    # it up to the kernel's 16: 3008. MLA takes a float16 KV cache (FLASH_ATTN_MLA).
    odd = vllm_reservation(NEMOTRON, block_size=3001)
    assert (odd.block_size, odd.bytes_per_block) == (3008, 49_283_072)
    mla = vllm_reservation(KIMI_LINEAR, kv_cache_dtype="float16")
    assert (mla.attention_backend, mla.block_size, mla.bytes_per_block) == (
        "FLASH_ATTN_MLA",
        1920,
        15_482_880,
    )
    # The smallest values vLLM takes: a block of 1 token is raised as any other; a ReplaySSM
    # ring of one step is 1/16 of the ring of 16 (368,640 B).
    assert vllm_reservation(NEMOTRON, block_size=1).block_size == 1312
    one = vllm_reservation(NEMOTRON, use_replayssm=True, replayssm_buffer_len=1)
    assert one.state_page_bytes == 5_316_608 + 368_640 // 16
    assert vllm_reservation(NEMOTRON, enable_prefix_caching=True).prefix_caching_rule == "flag"


@pytest.mark.parametrize(
    ("arguments", "field", "error"),
    [
        ({"block_size": 0}, "block_size", ServerArgumentError),
        ({"kv_cache_memory_bytes": -1}, "kv_cache_memory_bytes", ServerArgumentError),
        ({"replayssm_buffer_len": 0}, "replayssm_buffer_len", ServerArgumentError),
        ({"mamba_ssm_cache_dtype": "fp32"}, "mamba_ssm_cache_dtype", ServerArgumentError),
        ({"use_replayssm": 1}, "use_replayssm", TypeError),
        ({"enable_prefix_caching": "yes"}, "enable_prefix_caching", TypeError),
    ],
)
def test_vllm_refusals_name_the_argument(
    arguments: dict[str, Any], field: str, error: type[Exception]
) -> None:
    with pytest.raises(error) as raised:
        vllm_reservation(NEMOTRON, **arguments)
    assert str(raised.value).startswith(f"argument {field}: ")


@pytest.mark.parametrize(
    "key",
    ["max_seq_len", "seq_length", "max_target_positions", "max_sequence_length", "seq_len"],
)
def test_vllm_reads_each_length_key(key: str) -> None:
    # derive_max_model_len_and_key's possible_keys (model_arch_config_convertor.py:374-407).
    r = vllm_reservation(_nemotron_with(**{key: 3333, "n_positions": 4444}))
    assert (r.max_model_len, r.max_model_len_rule) == (3333, f"config {key} (vLLM derived)")


def test_vllm_reads_the_legacy_rope_type_and_ignores_what_is_not_a_mapping() -> None:
    # patch_rope_parameters reads a legacy "type" as rope_type: yarn leaves the length as it is.
    yarn = vllm_reservation(
        _nemotron_with(max_position_embeddings=4096, rope_scaling={"type": "yarn", "factor": 4})
    )
    assert yarn.max_model_len == 4096
    # iter_rope_parameters (transformers_utils/config.py:690-699) yields nothing for a value
    # that is not a dict.
    assert (
        vllm_reservation(
            _nemotron_with(max_position_embeddings=4096, rope_parameters="linear")
        ).max_model_len
        == 4096
    )
    with pytest.raises(ServerArgumentError) as raised:
        vllm_reservation(
            _nemotron_with(
                max_position_embeddings=4096,
                original_max_position_embeddings=None,
                rope_parameters={"rope_type": "longrope"},
            )
        )
    assert str(raised.value) == (
        "argument max_model_len: LongRoPE without an integer original length; give it"
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
            {"gpu_arch": "sm100"},
            "argument gpu_arch: unknown value 'sm100'; use sm80, sm86, sm89, sm90",
        ),
        (
            {"mamba_full_memory_ratio": "x"},
            "argument mamba_full_memory_ratio: must be a float, not str",
        ),
        (
            {"mamba_full_memory_ratio": -0.5},
            "argument mamba_full_memory_ratio: must be a finite number above 0, got -0.5",
        ),
        (
            {"available_memory": 0},
            "argument available_memory: 0 B holds no state slot of 143548416 B (with one padding "
            "slot); SGLang refuses to start",
        ),
    ],
)
def test_sglang_refusals_name_the_argument(arguments: dict[str, Any], line: str) -> None:
    flags: dict[str, Any] = {"available_memory": 60 * GIB, **arguments}
    with pytest.raises((ServerArgumentError, TypeError)) as raised:
        sglang_reservation(NEMOTRON, **flags)
    assert str(raised.value) == line


def test_sglang_smallest_values() -> None:
    # One running request, a context of one token: SGLang takes both (the estimate is then
    # clamped to 4096, and the cap is the pool's 211 // 5 = 42, test_servers.py).
    assert (
        sglang_reservation(
            NEMOTRON, available_memory=60 * GIB, max_running_requests=1
        ).max_running_requests
        == 1
    )
    assert (
        sglang_reservation(
            NEMOTRON, available_memory=60 * GIB, context_length=1
        ).max_running_requests
        == 42
    )


def test_sglang_layer_types_make_only_granite_a_radix_architecture() -> None:
    # overrides.py:369-399: GraniteMoeHybrid is a mamba-radix-cache architecture when its
    # layer_types hold "mamba"; another architecture's layer_types change nothing.
    config = json.loads((CONFIGS / "mamba-2.8b-hf.json").read_text())
    config["layer_types"] = ["mamba"] * config["num_hidden_layers"]
    r = sglang_reservation(config, available_memory=60 * GIB)
    assert (r.mamba_radix_cache_strategy, r.ratio) == ("auto", 3)
