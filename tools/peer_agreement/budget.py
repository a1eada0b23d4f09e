"""The budget's computed parts (issue 25), run from the wheels' own functions against
``decode_ring.servers`` of the checkout:

* SGLang's default ``mem_fraction_static`` and chunked prefill for a GPU's memory and tp:
  ``handle_gpu_memory_settings`` (S:sglang/srt/arg_groups/memory_hook.py:47-345) with
  ``reserve_for_graph_mb`` (:357-399) and the graph batch sizes
  (S:sglang/srt/arg_groups/cuda_graph_hook.py:480-530), AST-extracted and run on a namespace of
  the server arguments' fields, the GPU's ``memory.total`` in MiB in place of
  ``get_device_memory_capacity``, a CUDA device, no multimodal model, no data-parallel attention,
  no DeepEP, no post-capture sizing (each stubbed here, as this module says);
* vLLM's batch defaults, ``EngineArgs.get_batch_defaults`` (V:vllm/engine/arg_utils.py:2939-3000),
  with ``current_platform`` answering the GPU's NVML total, name and compute capability, for
  ``vllm serve`` (``UsageContext.OPENAI_API_SERVER``);
* vLLM's requested memory, ``request_memory`` (V:vllm/v1/worker/utils.py:716-723):
  ``ceil(total x utilization)``.

What vLLM profiles (the activation peak, the CUDA graphs, non-torch memory) is not computed by
its code and is not compared: tests/logs/README.md holds those estimates to published logs.
"""

from __future__ import annotations

import ast
import copy
import math
import sys
import types
from pathlib import Path
from typing import Any

_SGLANG_HOOK = "sglang/srt/arg_groups/memory_hook.py"
_SGLANG_GRAPHS = "sglang/srt/arg_groups/cuda_graph_hook.py"
_SGLANG_GRAPH_CONFIG = "sglang/srt/model_executor/cuda_graph_config.py"
_VLLM_ARGS = "vllm/engine/arg_utils.py"
_VLLM_WORKER_UTILS = "vllm/v1/worker/utils.py"


def _functions(path: Path, names: set[str], namespace: dict[str, Any]) -> None:
    """The top-level functions (or methods, undecorated) named ``names`` of ``path``, executed
    into ``namespace``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name in names:
            node.decorator_list = []
            found.append(node)
    module = ast.Module(body=found, type_ignores=[])
    exec(compile(module, str(path), "exec"), namespace)


def _classes(path: Path, names: set[str], namespace: dict[str, Any]) -> None:
    """Top-level classes named ``names`` of ``path`` (dataclasses), into ``namespace``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    body = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name in names]
    exec(compile(ast.Module(body=body, type_ignores=[]), str(path), "exec"), namespace)


class _View(types.SimpleNamespace):
    """Server arguments as the hooks read them (``resolving_view`` returns them as they are)."""


def sglang_fraction(root: Path, gpu_mem_mib: float, tp: int) -> tuple[float, int]:
    """SGLang's default ``mem_fraction_static`` and ``chunked_prefill_size`` for a GPU of
    ``gpu_mem_mib`` MiB at ``tp``, from the wheel's functions."""
    import dataclasses
    import typing

    # The wheel's classes annotate with typing's names; they are handed over as it has them.
    space: dict[str, Any] = {
        "dataclasses": dataclasses,
        "field": dataclasses.field,
        "dataclass": dataclasses.dataclass,
        "Optional": typing.Optional,
        "List": list,
        "Dict": dict,
        "Any": Any,
        "copy": copy,
    }
    _classes(root / _SGLANG_GRAPH_CONFIG, {"Phase", "Backend", "PhaseConfig"}, space)
    space["is_cuda"] = lambda: True
    phase = space["PhaseConfig"]
    prefill = phase(backend=space["Backend"].BREAKABLE)
    decode = phase(backend=space["Backend"].FULL)
    config = types.SimpleNamespace(decode=decode, prefill=prefill)
    args = _View(
        device="cuda",
        cuda_graph_config=config,
        chunked_prefill_size=None,
        max_running_requests=None,
        tp_size=tp,
        pp_size=1,
        mem_fraction_static=None,
        disaggregation_mode="null",
        language_only=False,
        language_model_only=False,
        max_prefill_tokens=16384,
        speculative_algorithm=None,
        speculative_num_draft_tokens=None,
        disable_cuda_graph_padding=False,
        enable_symm_mem=False,
        model_path="model",
        max_total_tokens=None,
        torch_compile_max_bs=None,
        _cuda_graph_config_locked=set(),
        moe_a2a_backend="none",
    )

    def declare(server_args: Any, _hook: str, **values: Any) -> None:
        for key, value in values.items():
            setattr(server_args, key, value)

    space.update(
        resolving_view=lambda view: view,
        resolved_view=lambda view: view,
        declare_resolution=declare,
        get_device_memory_capacity=lambda device=None: gpu_mem_mib,
        model_config_of=lambda view: types.SimpleNamespace(is_multimodal=False),
        post_capture_kv_sizing_planned=lambda view: False,
        reserve_for_deepep_a2a_mb=lambda view: 0,
        attn_dp_enabled_of=lambda view: False,
        use_mla_backend=lambda view: False,
        get_platform=lambda: types.SimpleNamespace(is_xpu=False),
        expand_multimodal_decode_graph_to_running_limit=lambda *a: None,
        _DEFAULT_PP_PREFILL_CUDA_GRAPH_MAX_TOKENS=4096,
    )
    module = types.ModuleType("sglang.srt.arg_groups.cuda_graph_hook")
    _functions(
        root / _SGLANG_GRAPHS,
        {"generate_decode_cuda_graph_batch_sizes", "generate_prefill_cuda_graph_batch_sizes"},
        space,
    )
    module.__dict__.update(
        generate_cpu_graph_batch_sizes=lambda view: [],
        generate_decode_cuda_graph_batch_sizes=space["generate_decode_cuda_graph_batch_sizes"],
        generate_prefill_cuda_graph_batch_sizes=space["generate_prefill_cuda_graph_batch_sizes"],
    )
    qwen = types.ModuleType("sglang.srt.arg_groups.model_overrides.qwen3_vl")
    qwen.expand_multimodal_decode_graph_to_running_limit = lambda *a: None  # type: ignore[attr-defined]
    saved = {name: sys.modules.get(name) for name in (module.__name__, qwen.__name__)}
    sys.modules[module.__name__] = module
    sys.modules[qwen.__name__] = qwen
    try:
        wanted = {"handle_gpu_memory_settings", "reserve_for_graph_mb"}
        _functions(root / _SGLANG_HOOK, wanted, space)
        space["handle_gpu_memory_settings"](args)
    finally:
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old
    return float(args.mem_fraction_static), int(args.chunked_prefill_size)


def vllm_batch_defaults(root: Path, gpu: Any) -> tuple[int, int]:
    """``get_batch_defaults`` for ``vllm serve`` on ``gpu`` (a ``decode_ring.gpus.Gpu``): its
    ``(max_num_seqs, max_num_batched_tokens)``."""
    usage = types.SimpleNamespace(LLM_CLASS="LLM_CLASS", OPENAI_API_SERVER="OPENAI_API_SERVER")
    usage_lib = types.ModuleType("vllm.usage.usage_lib")
    usage_lib.UsageContext = usage  # type: ignore[attr-defined]
    major, minor = int(gpu.gpu_arch[2:-1]), int(gpu.gpu_arch[-1])
    platform = types.SimpleNamespace(
        get_device_total_memory=lambda device_id=0: gpu.memory_bytes,
        get_device_name=lambda device_id=0: gpu.name,
        is_device_capability=lambda capability: capability == (major, minor),
        is_tpu=lambda: False,
        is_cpu=lambda: False,
        is_xpu=lambda: False,
    )
    space: dict[str, Any] = {"current_platform": platform, "GiB_bytes": 1 << 30}
    names = ("vllm", "vllm.usage", "vllm.usage.usage_lib")
    saved = {name: sys.modules.get(name) for name in names}
    sys.modules["vllm"] = types.ModuleType("vllm")
    sys.modules["vllm.usage"] = types.ModuleType("vllm.usage")
    sys.modules["vllm.usage.usage_lib"] = usage_lib
    try:
        _functions(root / _VLLM_ARGS, {"get_batch_defaults"}, space)
        tokens, seqs = space["get_batch_defaults"](None, 1)
    finally:
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old
    return seqs["OPENAI_API_SERVER"], tokens["OPENAI_API_SERVER"]


def vllm_requested(root: Path, total: int, utilization: float) -> int:
    """``request_memory`` for a snapshot of ``total`` bytes."""
    space: dict[str, Any] = {"math": math, "format_gib": lambda b: round(b / (1 << 30), 2)}
    _functions(root / _VLLM_WORKER_UTILS, {"request_memory"}, space)
    snapshot = types.SimpleNamespace(total_memory=total, free_memory=total, device_="cuda:0")
    cache = types.SimpleNamespace(gpu_memory_utilization=utilization)
    return int(space["request_memory"](snapshot, cache))


def compare(wheels: Any, repo: Path) -> list[str]:
    """Every GPU of the checkout's table at tp 1, 2, 4 and 8 (SGLang's fraction), every GPU
    (vLLM's batch defaults) and every GPU at utilizations 0.5, 0.9, 0.92 and 1.0 (vLLM's
    request): the wheels' functions against the checkout's answers. Returns the report's lines;
    the last is the summary."""
    sys.path.insert(0, str(repo))
    from decode_ring.gpus import GPUS
    from decode_ring.servers import sglang_reservation, vllm_reservation

    config = repo / "tests" / "configs" / "qwen3-next-80b-a3b-instruct.json"
    lines, agree, total = [], 0, 0
    for key, gpu in GPUS.items():
        for tp in (1, 2, 4, 8):
            peer = sglang_fraction(wheels.sglang, gpu.memory_bytes / (1 << 20), tp)
            ours = sglang_reservation(config, tp_size=tp, gpu=key, weights_bytes=0)
            mine = (ours.mem_fraction_static, ours.chunked_prefill_size)
            total += 1
            agree += peer == mine
            if peer != mine:
                lines.append(f"sglang {key} tp {tp}: wheel {peer}, decode_ring {mine}")
        seqs, tokens = vllm_batch_defaults(wheels.vllm, gpu)
        held = vllm_reservation(config, gpu=key, kv_cache_memory_bytes=40 << 30)
        total += 1
        if (held.max_num_seqs, held.max_num_batched_tokens) == (seqs, tokens):
            agree += 1
        else:
            lines.append(
                f"vllm {key}: wheel ({seqs}, {tokens}), decode_ring "
                f"({held.max_num_seqs}, {held.max_num_batched_tokens})"
            )
        for utilization in (0.5, 0.9, 0.92, 1.0):
            peer_requested = vllm_requested(wheels.vllm, gpu.runtime_bytes, utilization)
            ours_requested = vllm_reservation(
                config,
                gpu=key,
                gpu_memory_utilization=utilization,
                weights_bytes=0,
                activation_bytes=0,
                cuda_graph_bytes=0,
                non_torch_bytes=0,
            ).requested_memory_bytes
            total += 1
            agree += peer_requested == ours_requested
            if peer_requested != ours_requested:
                lines.append(f"vllm {key} {utilization}: {peer_requested} != {ours_requested}")
    lines.append(f"SUMMARY budget: {agree} of {total} agree")
    return lines
