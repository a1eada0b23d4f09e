"""The GPU table (``decode_ring.gpus``): its keys, the names ``nvidia-smi`` prints, NVML through a
fake module, and the attention backends vLLM 0.33.0 picks by compute capability.

Expected backends are read from the wheel's code, cited at each case: ``_get_backend_priorities``
(vllm/platforms/cuda.py:84-178) and each backend's checks (flash_attn.py:424-459,
fa_utils.py:282-313, flashinfer.py:690-704, triton_attn.py:379-406, :511-524)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from decode_ring.gpus import GPU_ARCHS, GPUS, GpuError, detect_gpu, gpu
from decode_ring.servers import vllm_reservation

CONFIGS = Path(__file__).resolve().parent / "configs"
QWEN3_NEXT = str(CONFIGS / "qwen3-next-80b-a3b-instruct.json")
NEMOTRON = str(CONFIGS / "nemotron-nano-9b-v2.json")
MIB = 2**20

KEYS = [
    "a10g",
    "l4",
    "l40s",
    "a100-40gb",
    "a100-80gb",
    "h100-pcie",
    "h100-sxm",
    "h100-nvl",
    "h200",
    "h20",
    "gh200-96gb",
    "gh200-144gb",
    "b200",
    "gb10",
    "rtx-3090",
    "rtx-4090",
    "rtx-5090",
]


def test_the_table_names_each_memory_variant_with_a_citation() -> None:
    assert list(GPUS) == KEYS
    for key, row in GPUS.items():
        assert row.key == key and key == key.lower()
        assert row.gpu_arch in GPU_ARCHS
        assert row.citation and row.runtime_rule
        assert row.runtime_bytes <= row.memory_bytes
        assert row.nominal == ("nominal" in row.citation)
    # Every architecture the table names, and only those, is one vLLM's backends are chosen for.
    assert {row.gpu_arch for row in GPUS.values()} == set(GPU_ARCHS)
    assert [key for key, row in GPUS.items() if row.nominal] == [
        "a100-40gb",
        "h100-pcie",
        "gh200-144gb",
    ]


@pytest.mark.parametrize(
    ("name", "key", "mib", "arch"),
    [
        ("NVIDIA H100 80GB HBM3", "h100-sxm", 81559, "sm90"),
        ("nvidia h100 80gb hbm3", "h100-sxm", 81559, "sm90"),
        ("H200", "h200", 143771, "sm90"),
        ("NVIDIA L40S", "l40s", 46068, "sm89"),
        ("NVIDIA GeForce RTX 3090", "rtx-3090", 24576, "sm86"),
        ("NVIDIA GeForce RTX 5090", "rtx-5090", 32607, "sm120"),
        ("NVIDIA B200", "b200", 183359, "sm100"),
        ("gb10", "gb10", 124549, "sm121"),
        ("NVIDIA A100-SXM4-80GB", "a100-80gb", 81920, "sm80"),
    ],
)
def test_a_key_or_the_name_nvidia_smi_prints_finds_the_row(
    name: str, key: str, mib: int, arch: str
) -> None:
    row = gpu(name)
    assert (row.key, row.memory_mib, row.gpu_arch) == (key, mib, arch)


def test_the_runtime_total_is_the_published_one_where_there_is_one() -> None:
    # vLLM 0.10.2 on an H200: 'Free memory on device (139.21/139.81 GiB)'.
    assert gpu("h200").runtime_bytes == round(139.81 * 2**30)
    assert gpu("h200").memory_bytes == 143771 * MIB
    assert gpu("l40s").runtime_bytes == gpu("l40s").memory_bytes


KNOWN = (
    "a10g, l4, l40s, a100-40gb, a100-80gb, h100-pcie, h100-sxm, h100-nvl, h200, h20, gh200-96gb, "
    "gh200-144gb, b200, gb10, rtx-3090, rtx-4090, rtx-5090"
)


def test_an_unknown_gpu_is_refused_naming_the_keys_and_gpu_memory() -> None:
    with pytest.raises(GpuError) as raised:
        gpu("NVIDIA Tesla V100")
    assert str(raised.value) == (
        f"unknown GPU 'NVIDIA Tesla V100'; known: {KNOWN} (or give its memory: --gpu-memory SIZE)"
    )
    # A long name is quoted to its first 40 characters.
    with pytest.raises(GpuError) as raised:
        gpu("N" * 41)
    assert str(raised.value).startswith(f"unknown GPU '{'N' * 40}'... (41 characters); known: ")
    with pytest.raises(TypeError, match=r"^a GPU name is a str, not int$"):
        gpu(3)  # type: ignore[arg-type]


class FakeNvml:
    """``pynvml`` as NVML answers it: one device per (name, total bytes, capability)."""

    def __init__(self, devices: list[tuple[Any, int, tuple[int, int]]]) -> None:
        self.devices = devices
        self.calls: list[str] = []

    def nvmlInit(self) -> None:
        self.calls.append("init")

    def nvmlShutdown(self) -> None:
        self.calls.append("shutdown")

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        if index >= len(self.devices):
            raise RuntimeError(f"NVML_ERROR_INVALID_ARGUMENT ({index})")
        return index

    def nvmlDeviceGetHandleByUUID(self, uuid: str) -> int:
        raise RuntimeError(f"NVML_ERROR_NOT_FOUND ({uuid})")

    def nvmlDeviceGetName(self, handle: int) -> Any:
        return self.devices[handle][0]

    def nvmlDeviceGetMemoryInfo(self, handle: int) -> SimpleNamespace:
        return SimpleNamespace(total=self.devices[handle][1])

    def nvmlDeviceGetCudaComputeCapability(self, handle: int) -> tuple[int, int]:
        return self.devices[handle][2]


def test_nvml_names_the_first_visible_device(monkeypatch: pytest.MonkeyPatch) -> None:
    nvml = FakeNvml(
        [
            (b"NVIDIA GeForce RTX 3090", 24576 * MIB, (8, 6)),
            ("NVIDIA H100 80GB HBM3", 81559 * MIB, (9, 0)),
        ]
    )
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    found, said = detect_gpu(nvml)
    assert found == gpu("rtx-3090")
    assert said == "NVML device 0: NVIDIA GeForce RTX 3090, 24576 MiB, compute capability 8.6"
    assert nvml.calls == ["init", "shutdown"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1,0")
    assert detect_gpu(nvml)[0] == gpu("h100-sxm")


def test_nvml_reports_a_gpu_the_table_lacks_as_a_row_of_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    nvml = FakeNvml([("NVIDIA RTX PRO 6000 Blackwell Server Edition", 97887 * MIB, (12, 0))])
    found, said = detect_gpu(nvml)
    assert (found.key, found.memory_bytes, found.gpu_arch) == ("auto", 97887 * MIB, "sm120")
    assert found.runtime_bytes == found.memory_bytes
    assert found.name == "NVIDIA RTX PRO 6000 Blackwell Server Edition"
    assert (
        found.citation
        == said
        == (
            "NVML device 0: NVIDIA RTX PRO 6000 Blackwell Server Edition, 97887 MiB, "
            "compute capability 12.0"
        )
    )
    assert found.runtime_rule == "no published runtime total: NVML's memory.total"
    old = FakeNvml([("Tesla V100-SXM2-16GB", 16160 * MIB, (7, 0))])
    with pytest.raises(GpuError, match=r"compute capability 7\.0 is not modelled"):
        detect_gpu(old)


def test_nvml_failures_are_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    with pytest.raises(GpuError, match="NVML could not read device 3"):
        detect_gpu(FakeNvml([]))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-1234")
    with pytest.raises(GpuError) as raised:
        detect_gpu(FakeNvml([]))
    # A UUID is looked up as a UUID (the fake's lookup by UUID fails with these words).
    assert str(raised.value) == (
        "--gpu auto: NVML could not read device GPU-1234: NVML_ERROR_NOT_FOUND (GPU-1234)"
    )


def test_without_nvidia_ml_py_auto_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml raises ImportError
    with pytest.raises(GpuError) as raised:
        detect_gpu()
    assert str(raised.value) == (
        "--gpu auto needs NVML: pip install 'decode_ring[nvml]' (nvidia-ml-py)"
    )


# Qwen3-Next at tp 2: head size 256 (FlashAttention, FlashInfer and Triton all take it).
@pytest.mark.parametrize(
    ("arch", "kv", "backend"),
    [
        ("sm80", "auto", "FLASH_ATTN"),
        ("sm86", "fp8", "FLASHINFER"),  # FA2 takes no fp8 KV cache (fa_utils.py:282-313)
        ("sm89", "fp8", "FLASHINFER"),  # the L40S launch: FA2 refuses fp8, FlashInfer takes it
        ("sm90", "fp8", "FLASH_ATTN"),  # FA3 takes fp8 on SM90
        ("sm100", "auto", "FLASHINFER"),  # SM10x puts FlashInfer first (cuda.py:158-169)
        ("sm100", "fp8", "FLASHINFER"),
        ("sm120", "auto", "FLASH_ATTN"),  # SM12x keeps FlashAttention first (FA2)
        ("sm120", "fp8", "FLASHINFER"),
        ("sm121", "fp8", "FLASHINFER"),  # FlashInfer goes up to capability 12.1
    ],
)
def test_the_backend_follows_the_capability_and_the_kv_dtype(
    arch: str, kv: str, backend: str
) -> None:
    held = vllm_reservation(QWEN3_NEXT, tensor_parallel_size=2, gpu_arch=arch, kv_cache_dtype=kv)
    assert held.attention_backend == backend
    assert held.attention_backend_rule.endswith(f"on {arch}")


def test_the_gdn_prefill_follows_the_capability() -> None:
    # _resolve_gdn_prefill_backend (gdn/qwen_gdn_linear_attn.py:148-270): FlashInfer on SM90,
    # and on SM10x and SM12x (12.1 included: is_device_capability_family compares majors,
    # platforms/interface.py:577-588) when linear_key_head_dim is 128 (Qwen3-Next: 128).
    backends = {
        arch: vllm_reservation(QWEN3_NEXT, gpu_arch=arch).gdn_prefill_backend for arch in GPU_ARCHS
    }
    assert backends == {
        "sm80": "triton",
        "sm86": "triton",
        "sm89": "triton",
        "sm90": "flashinfer",
        "sm100": "flashinfer",
        "sm120": "flashinfer",
        "sm121": "flashinfer",
    }


def test_fp8_on_the_l40s_sizes_the_block_as_the_published_log() -> None:
    # vLLM 0.13.0 on 2 x L40S, Qwen3-Next, --kv-cache-dtype fp8: "Setting attention block size
    # to 1072 tokens". One attention token per rank: 1 KV head x (256 + 256) x 1 B = 512 B; the
    # GDN page per rank: conv 3 x 12,288 x 2 B + SSM 16 x 128 x 128 x 2 B = 548,864 B; block =
    # 16 x ceil(548,864 / (16 x 512)) = 1072, and 1072 x 512 = 548,864: no padding.
    held = vllm_reservation(
        QWEN3_NEXT, tensor_parallel_size=2, gpu_arch="sm89", kv_cache_dtype="fp8"
    )
    assert (held.block_size, held.state_page_bytes, held.attention_page_bytes) == (
        1072,
        548_864,
        548_864,
    )
    # Triton prefills the GDN layers on SM89: no 64-token checkpoint alignment.
    assert held.gdn_prefill_backend == "triton"


def test_fp8_off_sm89_on_ampere_falls_to_flashinfer_and_triton_refuses_it() -> None:
    # Nemotron-H's head size 128: FlashInfer takes fp8 on SM80; Triton would need SM89.
    assert vllm_reservation(NEMOTRON, kv_cache_dtype="fp8", gpu_arch="sm80").attention_backend == (
        "FLASHINFER"
    )


def test_gpu_auto_asks_nvml_and_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json
    import sys

    from decode_ring.cli import main

    nvml = FakeNvml([("NVIDIA L40S", 46068 * MIB, (8, 9))])
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    line = ["serve", QWEN3_NEXT, "-tp", "2", "--max-model-len", "32768", "--kv-cache-dtype", "fp8"]
    status = main(["vllm", "--json", "--gpu", "auto", "--weights-memory", "20GiB", *line])
    out = json.loads(capsys.readouterr().out)
    assert status == 0
    assert (out["gpu_name"], out["gpu_arch"], out["attention_backend"]) == (
        "NVIDIA L40S",
        "sm89",
        "FLASHINFER",
    )
    assert (
        "--gpu auto: NVML device 0: NVIDIA L40S, 46068 MiB, compute capability 8.9"
        in (out["assumptions"])
    )


def test_an_unknown_gpu_on_the_command_line_is_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from decode_ring.cli import main

    assert main(["sglang", "--gpu", "v100", "--model-path", QWEN3_NEXT]) == 2
    err = capsys.readouterr().err
    assert err.startswith("decode-ring: error: argument --gpu: unknown GPU 'v100'; known: a10g,")
    assert err.count("\n") == 1 and "--gpu-memory SIZE" in err
