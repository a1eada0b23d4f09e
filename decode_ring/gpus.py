"""The GPUs a launch names: each one's memory and compute capability, with where the figures come
from, and the name ``nvidia-smi --query-gpu=name`` prints for it.

``GPUS`` is the table, keyed by a canonical lowercase name for each memory variant; ``gpu(name)``
looks a key or an ``nvidia-smi`` name up (case-insensitively); ``detect_gpu()`` asks NVML
(``nvidia-ml-py``, the optional ``nvml`` extra, imported only then) for device 0 of
``CUDA_VISIBLE_DEVICES``.

Two totals matter, and the servers read different ones:

* ``memory_bytes``: NVML's ``memory.total`` (what ``nvidia-smi`` prints, in MiB). vLLM picks its
  batch defaults from it (``get_device_total_memory``, vllm/platforms/cuda.py:804-815) and SGLang
  its default ``--mem-fraction-static`` (``get_device_memory_capacity``,
  sglang/srt/utils/common.py:802-832).
* ``runtime_bytes``: ``cudaMemGetInfo``'s total, a few hundred MiB less on every card where both
  are published. vLLM multiplies it by ``--gpu-memory-utilization``
  (``MemorySnapshot.measure``, vllm/utils/mem_utils.py:140-152; ``request_memory``,
  vllm/v1/worker/utils.py:716-723) and prints it in "Free memory on device (F/T GiB)". Where no
  published figure exists it is ``memory_bytes``, and ``runtime_rule`` says so.

Each row cites a public ``nvidia-smi`` or ``torch.cuda`` output; where none was found, the
vendor's nominal figure, marked ``nominal``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from .printable import show

__all__ = ["GPUS", "GPU_ARCHS", "Gpu", "GpuError", "capability_major", "detect_gpu", "gpu"]

_MIB: Final = 1 << 20
_GIB: Final = 1 << 30

# The compute capabilities the table names, and what runs on them.
GPU_ARCHS: Final[Mapping[str, str]] = {
    "sm80": "A100 (compute capability 8.0)",
    "sm86": "A10 / RTX 30 (compute capability 8.6)",
    "sm89": "L40S / RTX 40 (compute capability 8.9)",
    "sm90": "H100 / H200 (compute capability 9.0)",
    "sm100": "B200 (compute capability 10.0)",
    "sm120": "RTX 50 / RTX PRO Blackwell (compute capability 12.0)",
    "sm121": "GB10 (compute capability 12.1)",
}


def capability_major(gpu_arch: str) -> int:
    """The compute capability's major version of a ``GPU_ARCHS`` key (``sm90``: 9, ``sm121``:
    12)."""
    return int(gpu_arch[2:-1])


class GpuError(ValueError):
    """A GPU that cannot be named: not in the table, or NVML unavailable. One line."""


@dataclass(frozen=True, slots=True)
class Gpu:
    """One GPU: its table key, the name ``nvidia-smi`` prints, NVML's total and the runtime's
    (``cudaMemGetInfo``) in bytes, the compute capability as a ``GPU_ARCHS`` key, and where each
    figure comes from (``nominal``: the vendor's figure, no published output found)."""

    key: str
    name: str
    memory_bytes: int
    gpu_arch: str
    citation: str
    runtime_bytes: int
    runtime_rule: str
    nominal: bool = False

    @property
    def memory_mib(self) -> int:
        """``memory.total`` in MiB, as ``nvidia-smi`` prints it."""
        return self.memory_bytes // _MIB


def _row(
    key: str,
    name: str,
    mib: int,
    arch: str,
    citation: str,
    runtime_gib: float | None = None,
    runtime_citation: str = "",
    *,
    nominal: bool = False,
) -> Gpu:
    memory = mib * _MIB if mib else round((runtime_gib or 0) * _GIB)
    if runtime_gib is None:
        runtime, rule = memory, "no published runtime total: NVML's memory.total"
    else:
        runtime = round(runtime_gib * _GIB)
        rule = f"runtime total {runtime_gib} GiB, {runtime_citation}"
    return Gpu(key, name, memory, arch, citation, runtime, rule, nominal)


_SMI: Final = "nvidia-smi --query-gpu=name,memory.total output in a public repository file"

GPUS: Final[Mapping[str, Gpu]] = {
    gpu.key: gpu
    for gpu in (
        _row("a10g", "NVIDIA A10G", 23028, "sm86", f"{_SMI} (stored ids 27636968701, 71642959660)"),
        _row(
            "l4",
            "NVIDIA L4",
            23034,
            "sm89",
            f"{_SMI}: '1 x NVIDIA L4, 23034 MiB, compute capability 8.9' (stored id 71028648115)",
        ),
        _row(
            "l40s",
            "NVIDIA L40S",
            46068,
            "sm89",
            f"{_SMI}: 'NVIDIA L40S, 46068 MiB, Ada Lovelace (sm_89)' (stored ids 66007571851, "
            "70074934377)",
        ),
        _row(
            "a100-40gb",
            "NVIDIA A100-SXM4-40GB",
            40960,
            "sm80",
            "nominal 40 GiB (40960 MiB); the name from a test fixture (stored id 71582404700)",
            39.49,
            "vllm-project/vllm#25970: 'Free memory on device (39.0/39.49 GiB)'",
            nominal=True,
        ),
        _row(
            "a100-80gb",
            "NVIDIA A100-SXM4-80GB",
            81920,
            "sm80",
            f"{_SMI} (GCP a2-ultragpu-1g; stored ids 55042174505, 60082241329)",
        ),
        _row(
            "h100-pcie",
            "NVIDIA H100 PCIe",
            81559,
            "sm90",
            "nominal: 80 GB HBM2e, memory.total taken as the SXM part's (no published output)",
            nominal=True,
        ),
        _row(
            "h100-sxm",
            "NVIDIA H100 80GB HBM3",
            81559,
            "sm90",
            f"{_SMI}: 'NVIDIA H100 80GB HBM3, 81559 MiB, 9.0' (stored ids 26245078241, "
            "33416754649)",
            79.22,
            "vllm-project/vllm#10511: 'total_gpu_memory 79.22GiB'",
        ),
        _row(
            "h100-nvl",
            "NVIDIA H100 NVL",
            95830,
            "sm90",
            f"{_SMI}: 'NVIDIA H100 NVL, 95830 MiB' (stored id 55419965514)",
        ),
        _row(
            "h200",
            "NVIDIA H200",
            143771,
            "sm90",
            f"{_SMI}: '2 x NVIDIA H200, 143771 MiB each ... sm_90' (stored ids 56760612803, "
            "5738237740)",
            139.81,
            "vLLM 0.10.2 log (tests/logs/qwen3-next-80b-a3b-bf16-2xh200-vllm-0.10.2.log): "
            "'Free memory on device (139.21/139.81 GiB)'",
        ),
        _row(
            "h20",
            "NVIDIA H20",
            97871,
            "sm90",
            f"{_SMI}: '1x NVIDIA H20, 97871 MiB total' (stored ids 65846954299, 69445134030)",
            95.33,
            "'95.33 GiB reported usable by the runtime' (stored id 69445134030)",
        ),
        _row(
            "gh200-96gb",
            "NVIDIA GH200 480GB",
            97871,
            "sm90",
            f"{_SMI}: 'nvidia-smi reports NVIDIA GH200 480GB, 97871 MiB' (stored id 63088167599)",
        ),
        _row(
            "gh200-144gb",
            "NVIDIA GH200 144G HBM3e",
            144 * 1024,
            "sm90",
            "nominal: 144 GB HBM3e, taken as 147456 MiB (no published nvidia-smi output)",
            nominal=True,
        ),
        _row(
            "b200",
            "NVIDIA B200",
            183359,
            "sm100",
            f"{_SMI}: 'NVIDIA B200, 183359 MiB, 580.95.05' (stored id 71609078484)",
        ),
        _row(
            "gb10",
            "NVIDIA GB10",
            0,
            "sm121",
            "unified memory: nvidia-smi prints memory.total [N/A]; vLLM's runtime total 121.63 "
            "GiB (stored id 66380900772), taken for both totals",
            121.63,
            "vLLM log on 2 x GB10 (stored id 66380900772)",
        ),
        _row(
            "rtx-3090",
            "NVIDIA GeForce RTX 3090",
            24576,
            "sm86",
            f"{_SMI}: 'NVIDIA GeForce RTX 3090, 24576 MiB VRAM, ... CC 8.6' (stored ids "
            "58673792092, 57428273948)",
        ),
        _row(
            "rtx-4090",
            "NVIDIA GeForce RTX 4090",
            24564,
            "sm89",
            f"{_SMI} (stored ids 52394027871, 55542750366)",
        ),
        _row(
            "rtx-5090",
            "NVIDIA GeForce RTX 5090",
            32607,
            "sm120",
            f"{_SMI}: 'NVIDIA GeForce RTX 5090, 32607 MiB ... 12.0' (stored ids 69424666979, "
            "58853633641)",
        ),
    )
}
_BY_NAME: Final = {name.casefold(): gpu for gpu in GPUS.values() for name in (gpu.key, gpu.name)}


def gpu(name: str) -> Gpu:
    """The table's GPU for a key (``h100-sxm``) or the name ``nvidia-smi`` prints (``NVIDIA H100
    80GB HBM3``), in any case. Raises ``GpuError`` naming the keys otherwise."""
    if not isinstance(name, str):
        raise TypeError(f"a GPU name is a str, not {type(name).__name__}")
    found = _BY_NAME.get(name.strip().casefold())
    if found is None:
        raise GpuError(
            f"unknown GPU {show(name, limit=40)}; known: {', '.join(GPUS)} (or give its memory: "
            "--gpu-memory SIZE)"
        )
    return found


def detect_gpu(nvml: Any = None) -> tuple[Gpu, str]:
    """The GPU NVML reports as device 0 of ``CUDA_VISIBLE_DEVICES`` (its first entry, an index
    or a UUID; NVML's device 0 when unset), and one line saying what NVML said. A name the table
    lacks becomes a row of NVML's own total and compute capability. ``nvml`` stands in for the
    ``pynvml`` module (tests)."""
    if nvml is None:
        try:
            import pynvml

            nvml = pynvml
        except ImportError:
            raise GpuError(
                "--gpu auto needs NVML: pip install 'decode_ring[nvml]' (nvidia-ml-py)"
            ) from None
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    index: int | str = int(visible) if visible.isdigit() else visible or 0
    try:
        nvml.nvmlInit()
        try:
            handle = (
                nvml.nvmlDeviceGetHandleByUUID(index)
                if isinstance(index, str)
                else nvml.nvmlDeviceGetHandleByIndex(index)
            )
            name = nvml.nvmlDeviceGetName(handle)
            total = int(nvml.nvmlDeviceGetMemoryInfo(handle).total)
            major, minor = nvml.nvmlDeviceGetCudaComputeCapability(handle)
        finally:
            nvml.nvmlShutdown()
    except Exception as error:  # NVMLError and its kin: no driver, no device
        raise GpuError(f"--gpu auto: NVML could not read device {index}: {error}") from None
    name = name.decode() if isinstance(name, bytes) else str(name)
    said = f"NVML device {index}: {name}, {total // _MIB} MiB, compute capability {major}.{minor}"
    known = _BY_NAME.get(name.strip().casefold())
    arch = f"sm{major}{minor}"
    if known is not None and known.memory_bytes == total:
        return known, said
    if arch not in GPU_ARCHS:
        raise GpuError(f"--gpu auto: {said}: compute capability {major}.{minor} is not modelled")
    rule = "no published runtime total: NVML's memory.total"
    return Gpu("auto", name, total, arch, said, total, rule), said
