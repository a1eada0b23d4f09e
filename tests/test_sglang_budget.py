"""SGLang 0.5.23's budget from a GPU (issue 25): ``--mem-fraction-static`` or SGLang's default for
the GPU and tp, times free memory, less the weights; then the pools as before, with
``--page-size``, ``--kv-cache-dtype`` and ``--chunked-prefill-size`` modelled.

Expected figures are written out from the wheel's code, cited at each:
sglang/srt/arg_groups/memory_hook.py (``handle_gpu_memory_settings``, ``reserve_for_graph_mb``),
sglang/srt/arg_groups/cuda_graph_hook.py:480-530 (the graph batch sizes),
sglang/srt/mem_cache/kv_cache_configurator.py:2990-3060 (``_profile_available_bytes``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from decode_ring.cli import main
from decode_ring.models import ModelConfigError
from decode_ring.servers import ServerArgumentError, sglang_reservation

CONFIGS = Path(__file__).resolve().parent / "configs"
QWEN3_NEXT = CONFIGS / "qwen3-next-80b-a3b-instruct.json"
NEMOTRON = CONFIGS / "nemotron-nano-9b-v2.json"
GIB = 2**30
MIB = 2**20


def prefill_graph_sizes(largest: int) -> int:
    """How many prefill graph sizes SGLang captures up to ``largest`` (cuda_graph_hook.py:
    480-497), counted by hand: 4..32 by 4 (8), 48..256 by 16 (14), 288..512 by 32 (8),
    576..1024 by 64 (8), 1280..4096 by 256 (12), 4608.. by 512."""
    counts = {1024: 8 + 14 + 8 + 8, 4096: 8 + 14 + 8 + 8 + 12, 8192: 8 + 14 + 8 + 8 + 12 + 8}
    return counts[largest]


def test_the_default_fraction_on_an_h100_at_tp_4() -> None:
    # 81,559 MiB < 90 GiB: chunked prefill 8192, decode max_bs 512 (tp >= 4); reserved =
    # 512 + 8192 x 1.5 + 4 / 8 x 1024 + (512 x 2 + 58 prefill sizes x 8) = 14,800 MiB, above
    # the 10 GiB floor; round((81559 - 14800) / 81559, 3) = 0.819.
    assert prefill_graph_sizes(8192) == 58
    reserved = 512 + 8192 * 1.5 + 4 / 8 * 1024 + 512 * 2 + 58 * 8
    assert reserved == 14_800
    held = sglang_reservation(QWEN3_NEXT, tp_size=4, gpu="h100-sxm", weights_bytes=37 * GIB)
    assert held.mem_fraction_static == round((81559 - 14800) / 81559, 3) == 0.819
    assert held.chunked_prefill_size == 8192
    assert (held.gpu_name, held.gpu_arch) == ("NVIDIA H100 80GB HBM3", "sm90")
    assert held.gpu_memory_bytes == 81559 * 2**20
    assert str(held.gpu_memory_rule).startswith("h100-sxm: memory.total 81559 MiB (nvidia-smi")
    # The pool budget: free memory before the load (the runtime's total, 79.22 GiB in the
    # table) x 0.819 - the weights.
    assert held.available_memory == int(round(79.22 * GIB) * 0.819 - 37 * GIB)


def test_the_default_fraction_on_an_rtx_4090_at_tp_2() -> None:
    # 24,564 MiB < 35 GiB: chunked prefill 4096, decode max_bs 48 (tp < 4); reserved = 512 +
    # 4096 x 1.5 + 2 / 8 x 1024 + (48 x 2 + 50 x 8) = 7,408 MiB, no floor below 60 GiB.
    reserved = 512 + 4096 * 1.5 + 2 / 8 * 1024 + 48 * 2 + prefill_graph_sizes(4096) * 8
    assert reserved == 7408
    held = sglang_reservation(QWEN3_NEXT, tp_size=2, gpu="rtx-4090", weights_bytes=8 * GIB)
    assert held.mem_fraction_static == round((24564 - 7408) / 24564, 3) == 0.698


def test_max_running_requests_caps_the_decode_graphs_and_chunked_prefill_is_read() -> None:
    # memory_hook.py:193-200: the default decode max_bs is capped by --max-running-requests.
    held = sglang_reservation(
        QWEN3_NEXT,
        tp_size=4,
        gpu="h100-sxm",
        weights_bytes=37 * GIB,
        max_running_requests=64,
        chunked_prefill_size=4096,
    )
    reserved = max(512 + 4096 * 1.5 + 512 + 64 * 2 + prefill_graph_sizes(4096) * 8, 10 * 1024)
    assert reserved == 10 * 1024  # the floor
    assert held.mem_fraction_static == round((81559 - 10240) / 81559, 3)


def test_the_10_gib_floor_holds_only_above_60_gib() -> None:
    # memory_hook.py:47-345 with --chunked-prefill-size 1024 (counted as 2048) at tp 1 on 60 GiB
    # (the 60-90 GiB tier, decode max_bs 256): 512 + 2048 x 1.5 + 1 / 8 x 1024 + (256 x 2 + 38
    # prefill sizes up to 1024 x 8) = 4,528 MiB; the 10 GiB floor only above 61,440 MiB.
    assert prefill_graph_sizes(1024) == 38
    flags: dict[str, Any] = {"weights_bytes": 10 * GIB, "chunked_prefill_size": 1024}
    at = sglang_reservation(QWEN3_NEXT, gpu_memory_bytes=60 * GIB, **flags)
    assert at.mem_fraction_static == round((61440 - 4528) / 61440, 3) == 0.926
    assert at.mem_fraction_static_rule == (
        "SGLang's default: round((61440 - 4528 MiB reserved) / 61440, 3)"
    )
    above = sglang_reservation(QWEN3_NEXT, gpu_memory_bytes=60 * GIB + 512 * 2**20, **flags)
    assert above.mem_fraction_static == round((61952 - 10240) / 61952, 3) == 0.835
    just = sglang_reservation(QWEN3_NEXT, gpu_memory_bytes=61470 * 2**20, **flags)
    assert just.mem_fraction_static == round((61470 - 10240) / 61470, 3) == 0.833


def test_without_a_gpu_the_launchs_fraction_and_chunked_prefill_are_kept() -> None:
    held = sglang_reservation(
        NEMOTRON, mem_fraction_static=0.85, chunked_prefill_size=4096, max_mamba_cache_size=10
    )
    assert (held.mem_fraction_static, held.chunked_prefill_size) == (0.85, 4096)
    one = sglang_reservation(NEMOTRON, chunked_prefill_size=1, max_mamba_cache_size=10)
    assert one.chunked_prefill_size == 1  # the smallest chunk taken
    # Before 0.5.19 SGLang's default fraction is not modelled: the flag is named.
    with pytest.raises(ServerArgumentError) as raised:
        sglang_reservation(QWEN3_NEXT, version="0.5.18", gpu="h100-sxm", weights_bytes=10 * GIB)
    assert raised.value.field == "mem_fraction_static"


def test_a_vision_model_outside_the_prefill_graph_list_reserves_no_prefill_graphs() -> None:
    # JetVLM is no architecture of the multimodal prefill-graph list (sglang-0.5.22:sglang/srt/
    # configs/model_config.py:2388), so on 80 GiB at tp 1 only the decode graphs are reserved:
    # 512 + 8192 x 1.5 + 1 / 8 x 1024 + 256 x 2 = 13,440 MiB; the default-sized tower (24 x
    # 1024) scales by 0.95 x 1.0.
    text = json.loads((CONFIGS / "jet-nemotron-2b.json").read_text())
    text.pop("model_type")
    jet_vlm = {
        "model_type": "jet_vlm",
        "architectures": ["JetVLMForConditionalGeneration"],
        "text_config": text,
        "vision_config": {},
    }
    held = sglang_reservation(jet_vlm, gpu_memory_bytes=80 * GIB, weights_bytes=20 * GIB)
    assert held.mem_fraction_static_rule == (
        "SGLang's default: round((81920 - 13440 MiB reserved) / 81920, 3), scaled for the "
        "vision tower"
    )
    assert held.mem_fraction_static == pytest.approx(0.836 * 0.95, rel=1e-12)


def test_a_given_fraction_and_its_range() -> None:
    held = sglang_reservation(
        QWEN3_NEXT, tp_size=2, gpu="h200", weights_bytes=70 * GIB, mem_fraction_static=0.85
    )
    assert held.mem_fraction_static_rule == "--mem-fraction-static"
    runtime = round(139.81 * GIB)
    assert held.available_memory == int(runtime * 0.85 - 70 * GIB)
    for bad in (0.0, 1.0, 1.2):
        with pytest.raises(ServerArgumentError) as raised:
            sglang_reservation(QWEN3_NEXT, gpu="h200", mem_fraction_static=bad)
        assert raised.value.field == "mem_fraction_static"


def test_weights_that_fill_the_fraction_are_sglangs_refusal() -> None:
    with pytest.raises(ServerArgumentError) as raised:
        sglang_reservation(QWEN3_NEXT, gpu="l40s", weights_bytes=80 * GIB, mem_fraction_static=0.9)
    refusal = raised.value.server_refusal
    assert refusal is not None
    assert refusal.startswith(
        "ValueError: Loaded weights leave no GPU memory for the KV cache under "
        "--mem-fraction-static=0.9."
    )


def test_weights_that_fill_the_fraction_are_refused_in_sglangs_words() -> None:
    # kv_cache_configurator.py:3042-3058: rest = pre x fraction - weights, refused at <= 0 with
    # minimum = 1 - available / pre, printed ceil(minimum x 1000) / 1000 to 3 places and to 4.
    # An A100-80GB's runtime total is its 80 GiB (85,899,345,920 B).
    refusals = {}
    for fraction, weights in ((0.5, 40 * GIB), (0.9, 75 * GIB)):
        with pytest.raises(ServerArgumentError) as raised:
            sglang_reservation(
                QWEN3_NEXT, gpu="a100-80gb", weights_bytes=weights, mem_fraction_static=fraction
            )
        assert raised.value.field == "mem_fraction_static"
        refusals[fraction] = (str(raised.value), raised.value.server_refusal)
    assert refusals == {
        # Exactly nothing left: 0.5 x 80 GiB - 40 GiB = 0; minimum 1 - 40 / 80.
        0.5: (
            "argument mem_fraction_static: the weights (42,949,672,960 B) leave nothing of 0.5 x "
            "85,899,345,920 B; SGLang refuses to start",
            "ValueError: Loaded weights leave no GPU memory for the KV cache under "
            "--mem-fraction-static=0.5. Raise --mem-fraction-static above 0.500 (minimum viable "
            "= 1 - available/pre = 0.5000). If using speculative decoding, draft weights are now "
            "counted.",
        ),
        # 72 GiB - 75 GiB; minimum 1 - 5 / 80 = 0.9375, raised to 0.938.
        0.9: (
            "argument mem_fraction_static: the weights (80,530,636,800 B) leave nothing of 0.9 x "
            "85,899,345,920 B; SGLang refuses to start",
            "ValueError: Loaded weights leave no GPU memory for the KV cache under "
            "--mem-fraction-static=0.9. Raise --mem-fraction-static above 0.938 (minimum viable "
            "= 1 - available/pre = 0.9375). If using speculative decoding, draft weights are now "
            "counted.",
        ),
    }
    # Half a byte left (the H200's 150,119,844,413 B halved, less its floor) is no refusal of
    # the fraction: the budget's 0 B holds no state slot.
    with pytest.raises(ServerArgumentError) as half:
        sglang_reservation(
            QWEN3_NEXT, gpu="h200", weights_bytes=75_059_922_206, mem_fraction_static=0.5
        )
    assert half.value.field == "available_memory"
    held = sglang_reservation(
        QWEN3_NEXT, gpu="a100-80gb", weights_bytes=10 * GIB, mem_fraction_static=0.85
    )
    assert held.available_memory_rule == (
        "85,899,345,920 B free x 0.85 - weights (kv_cache_configurator.py:2990-3060)"
    )


def test_available_memory_still_names_the_budget_itself() -> None:
    held = sglang_reservation(NEMOTRON, available_memory=60 * GIB, gpu="h100-sxm")
    assert held.available_memory == 60 * GIB and held.slots == 211


def test_page_size_rounds_the_kv_tokens_down_to_whole_pages() -> None:
    # pool_configurator.py:646: max_total_num_tokens // page_size * page_size.
    one = sglang_reservation(NEMOTRON, available_memory=60 * GIB)
    paged = sglang_reservation(NEMOTRON, available_memory=60 * GIB, page_size=256)
    assert one.kv_tokens == 2_074_722
    assert paged.kv_tokens == 2_074_722 // 256 * 256
    assert paged.page_size_rule == "--page-size"


def test_blackwell_overrides_pick_64_token_pages() -> None:
    # model_overrides/nemotron_h.py:123-148 and qwen3_5.py:26-48: trtllm_mha on SM100.
    held = sglang_reservation(NEMOTRON, available_memory=60 * GIB, gpu="b200")
    assert (held.page_size, held.gpu_arch) == (64, "sm100")
    assert held.page_size_rule == "NemotronHForCausalLM on SM100: trtllm_mha, 64-token pages"
    assert held.kv_tokens is not None and held.kv_tokens % 64 == 0
    assert sglang_reservation(NEMOTRON, available_memory=60 * GIB, gpu="h200").page_size == 1


def test_an_fp8_kv_cache_halves_the_bytes_per_token() -> None:
    auto = sglang_reservation(NEMOTRON, available_memory=60 * GIB)
    fp8 = sglang_reservation(NEMOTRON, available_memory=60 * GIB, kv_cache_dtype="fp8_e4m3")
    assert auto.kv_bytes_per_token == 16_384 and fp8.kv_bytes_per_token == 8_192
    with pytest.raises(ServerArgumentError):
        sglang_reservation(NEMOTRON, available_memory=60 * GIB, kv_cache_dtype="nvfp4")


def test_model_override_args_are_applied_to_the_config() -> None:
    held = sglang_reservation(
        QWEN3_NEXT,
        available_memory=60 * GIB,
        json_model_override_args={"num_hidden_layers": 8, "layer_types": None},
    )
    assert held.state_layers == 6


def test_the_launch_line_feeds_the_budget(capsys: pytest.CaptureFixture[str]) -> None:
    # docs.sglang.io/basic_usage/qwen3.html: python3 -m sglang.launch_server --model
    # Qwen/Qwen3-Next-80B-A3B-Instruct --tp 4; on an H100 with 37 GiB of weights a rank.
    status = main(
        [
            "sglang",
            "--json",
            "--gpu",
            "NVIDIA H100 80GB HBM3",
            "--weights-memory",
            "37GiB",
            "--",
            "python3",
            "-m",
            "sglang.launch_server",
            "--model",
            str(QWEN3_NEXT),
            "--tp",
            "4",
            "--page-size",
            "16",
            "--trust-remote-code",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert status == 0
    assert out["mem_fraction_static"] == 0.819 and out["page_size"] == 16
    assert out["kv_tokens"] % 16 == 0
    assert out["launch"]["no_effect"] == ["--trust-remote-code"]


def test_dtype_and_quantization_are_read_as_sglang_reads_them() -> None:
    assert sglang_reservation(NEMOTRON, available_memory=60 * GIB, dtype="half").conv_dtype == (
        "bfloat16"  # SGLang's conv state stays bfloat16 (configs/mamba_utils.py:68)
    )
    with pytest.raises(ServerArgumentError, match="'gguf' is not modelled"):
        sglang_reservation(NEMOTRON, available_memory=60 * GIB, quantization="gguf")
    # SGLang's --dtype takes float and float32 (its choices): not modelled, not unknown.
    for spelling in ("float", "float32"):
        with pytest.raises(ServerArgumentError) as raised:
            sglang_reservation(NEMOTRON, available_memory=60 * GIB, dtype=spelling)
        assert raised.value.field == "dtype"
        assert str(raised.value) == (
            f"argument dtype: {spelling} is not modelled: float32 activations widen the auto KV "
            "and state cache dtypes and change the attention backends SGLang can pick; use auto, "
            "bfloat16, float16, half"
        )


@pytest.mark.parametrize(
    ("gpu_gib", "reserved"),
    [
        # 184,320 MiB, past the last tier's 160 GiB: chunked prefill 16384, decode max_bs 512;
        # prefill sizes up to 16384: 50 to 4096 and 4608..16384 by 512 (24), 74; reserved =
        # 512 + 16384 x 1.5 + 1 / 8 x 1024 + (512 x 2 + 74 x 8) = 26,832 MiB.
        (180, 26_832),
        # Exactly 160 GiB is not below the tier's ceiling: the largest tier as well.
        (160, 26_832),
        # Below it: chunked 8192, max_bs 256 (tp < 4), 58 prefill sizes: 512 + 12,288 + 128 +
        # (512 + 464) = 13,904 MiB.
        (159, 13_904),
    ],
)
def test_the_default_fraction_past_the_last_tier(gpu_gib: int, reserved: int) -> None:
    held = sglang_reservation(NEMOTRON, gpu_memory_bytes=gpu_gib * GIB, weights_bytes=20 * GIB)
    mib = gpu_gib * 1024
    assert held.mem_fraction_static_rule == (
        f"SGLang's default: round(({mib} - {reserved} MiB reserved) / {mib}, 3)"
    )
    assert held.mem_fraction_static == round((mib - reserved) / mib, 3)
    assert held.chunked_prefill_size == (16384 if gpu_gib >= 160 else 8192)


@pytest.mark.parametrize(
    ("vision", "field", "shown"),
    [
        ({"depth": None}, "vision_config.depth", "None"),
        ({"num_hidden_layers": 0, "depth": 27}, "vision_config.num_hidden_layers", "0"),
        ({"hidden_size": "1024"}, "vision_config.hidden_size", "'1024'"),
        ({"hidden_size": True}, "vision_config.hidden_size", "True"),
        ({"depth": 2**63}, "vision_config.depth", "9223372036854775808"),
    ],
)
def test_a_vision_tower_sglang_cannot_size_is_refused_naming_the_field(
    vision: dict[str, object], field: str, shown: str
) -> None:
    # adjust_mem_fraction_for_vlm multiplies the tower's layers by its hidden size squared
    # (memory_hook.py:439-447): a null there fails SGLang at startup; here it is refused, the
    # field named, never a TypeError.
    config = json.loads((CONFIGS / "qwen3.5-27b.json").read_text())
    config["vision_config"] = vision
    with pytest.raises(ModelConfigError) as raised:
        sglang_reservation(config, gpu_memory_bytes=80 * GIB, weights_bytes=20 * GIB)
    assert raised.value.field == field
    assert str(raised.value) == (
        f"field {field!r}: {shown} is not a count from 1 to 2**63 - 1; SGLang scales its "
        "default memory fraction by the vision tower's size (memory_hook.py:439-447)"
    )


@pytest.mark.parametrize(
    ("vision", "factor"),
    [
        # adjust_mem_fraction_for_vlm (memory_hook.py:417-462): 0.95 x (1 - 0.1 x (layers x
        # hidden^2 / (24 x 1024^2) - 1)), within [0.8, 1.05]; 24 layers of 1024 by default.
        ({}, 1.0),
        ({"num_hidden_layers": 24, "hidden_size": 1024, "depth": 27}, 1.0),
        ({"num_hidden_layers": 48, "hidden_size": 1024}, 0.9),
        ({"depth": 48}, 0.9),
        ({"num_hidden_layers": 24, "hidden_size": 512}, 1.05),  # 1.075, capped at 1.05
        ({"num_hidden_layers": 400}, 0.8),  # far below 0.8, floored
        ({"num_hidden_layers": 12, "hidden_size": 1024}, 1.05),  # 1.05 itself
        # The sizes' bounds, each taken: one layer (1.0958, capped), 2**63 - 1 layers (floored).
        ({"num_hidden_layers": 1, "hidden_size": 1024}, 1.05),
        ({"depth": 2**63 - 1}, 0.8),
    ],
)
def test_a_vision_models_default_fraction_is_scaled_for_its_tower(
    vision: dict[str, int], factor: float
) -> None:
    # Qwen3.5-27B with the vision config given, on 80 GiB at tp 1: chunked prefill 8192, decode
    # max_bs 256, prefill graphs (Qwen3_5ForConditionalGeneration captures them, model_config.py:
    # 2501-2516): reserved 13,904 MiB (above), round((81920 - 13904) / 81920, 3) = 0.830.
    config = json.loads((CONFIGS / "qwen3.5-27b.json").read_text())
    config["vision_config"] = vision
    held = sglang_reservation(config, gpu_memory_bytes=80 * GIB, weights_bytes=20 * GIB)
    assert held.mem_fraction_static == pytest.approx(0.830 * 0.95 * factor, rel=1e-12)
    assert held.mem_fraction_static_rule == (
        "SGLang's default: round((81920 - 13904 MiB reserved) / 81920, 3), scaled for the "
        "vision tower"
    )
