"""Helpers shared by the tests and the benchmarks."""

from __future__ import annotations

import contextlib
import gc
import importlib
import itertools
import json
import math
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any
from unittest import mock

import pytest
from hypothesis import strategies as st

CORE_MODULES = {"cython": "decode_ring._core", "python": "decode_ring._core_py"}
# Why a torch test skips. Not 'decode_ring[torch]', which resolves to the CUDA build on this
# kind of machine: about 3 GB of wheels (the README says so).
TORCH_MISSING = "torch not installed: pip install torch==2.13.0 (the CPU build)"

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "tests" / "configs"
WRITTEN = CONFIGS / "written"
KiB, MiB, GiB = 2**10, 2**20, 2**30
# The fixtures the tests name most, as paths and as the command line writes them (relative to
# ROOT, where the CLI tests run).
NEMOTRON = CONFIGS / "nemotron-nano-9b-v2.json"
NEMOTRON_ARG = "tests/configs/nemotron-nano-9b-v2.json"
QWEN3_NEXT = CONFIGS / "qwen3-next-80b-a3b-instruct.json"
MAMBA = CONFIGS / "mamba-2.8b-hf.json"
KIMI_LINEAR = CONFIGS / "kimi-linear-48b-a3b-instruct.json"
# The README's worked example: 48 layers, 32 sequences of 151.5 MiB, 7,039 MiB of reserve
# without the ring, 14.1 GiB free.
PER_SEQ = 158_859_264
RESERVE = 7039 * MiB
FREE = 15_139_759_718
SLOT = 32 * PER_SEQ  # 5,083,496,448 B


def compiled_core_may_be_missing() -> bool:
    """Where the compiled core is not meant to be built or imported: the
    switch set to anything but empty or "0" (as the README says), or not
    CPython."""
    switch = os.environ.get("DECODE_RING_NO_EXTENSIONS", "")
    return switch not in ("", "0") or sys.implementation.name != "cpython"


def load_core(name: str) -> ModuleType:
    try:
        return importlib.import_module(CORE_MODULES[name])
    except ImportError as error:
        if name == "cython" and compiled_core_may_be_missing():
            pytest.skip(f"compiled core not built here: {error}")
        raise


RunPython = Callable[..., Any]


CALLS_PER_COUNT = 10_000


def blocks_allocated_by(function: Callable[..., object], *args: object) -> int:
    """Blocks that one call leaves allocated, from runs of ``CALLS_PER_COUNT``
    calls each, with the garbage collector off (so it frees nothing then): a call
    that allocates even one block for good leaves at least 10,000 in a run.

    What the interpreter allocates or frees once during a run (a cache
    warming up, or emptied; a free list trimmed) changes a run's count by a
    few dozen blocks, in either direction, so a run's count is rounded to
    blocks per call: anything short of half a block per call is none. A first
    run warms up and is not counted; of three more, the most is taken: a free
    can then hide a per-call allocation only by freeing 5,000 blocks or more
    in every one of the three runs, and a one-off allocation is taken for one
    per call only if it reaches 5,000 blocks in a single run."""
    counts = []
    collecting = gc.isenabled()
    gc.disable()
    try:
        for _ in range(4):
            before = sys.getallocatedblocks()
            for _ in itertools.repeat(None, CALLS_PER_COUNT):
                function(*args)
            counts.append(sys.getallocatedblocks() - before)
    finally:
        if collecting:
            gc.enable()
    return max(round(count / CALLS_PER_COUNT) for count in counts[1:])


class FakeCell:
    """Stands in for the process's once-cell, which a test may not set: the
    first write wins, as in the real one, and every write is recorded."""

    def __init__(self, value: int | None = None) -> None:
        self.value = value
        self.writes: list[int] = []

    def set(self, slots: int) -> int:
        self.writes.append(slots)
        if self.value is None:
            self.value = slots
        return self.value

    def get(self) -> int | None:
        return self.value


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m decode_ring ARGS`` in a fresh process, with none of the
    ring's variables but those given."""
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("METRALE_")}
    child_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "decode_ring", *args],
        env=child_env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@contextlib.contextmanager
def stand_in_once_cell() -> Iterator[FakeCell]:
    """The package over a ``FakeCell`` wherever it reads or writes the process's once-cell
    (publishing, the published depth, the decision that reads it), for as long as the block
    runs; the decision reads the ring's variables from the environment as the real one does."""
    from decode_ring import _facade, _selector, preflight

    fake = FakeCell()

    def decide(layers: int, speculative: bool) -> Any:
        return _selector.decode_rollback_ring_slots_with(
            layers,
            speculative,
            fake.value,
            os.environ.get("METRALE_SSM_DECODE_RING"),
            _facade.watchdogs_disabled_from_value(os.environ.get("METRALE_DISABLE_WATCHDOGS")),
        )

    with contextlib.ExitStack() as stack:
        stack.enter_context(mock.patch.object(preflight, "set_decode_ring_slots", fake.set))
        stack.enter_context(mock.patch.object(preflight, "published_decode_ring_slots", fake.get))
        stack.enter_context(mock.patch.object(preflight, "decode_rollback_ring_slots", decide))
        stack.enter_context(mock.patch.object(_facade, "published_decode_ring_slots", fake.get))
        yield fake


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``decode-ring ARGS`` through ``cli.main`` in this process: status, stdout, stderr."""
    from decode_ring.cli import main

    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    """``decode-ring ARGS --json``: the status and the one JSON line on stdout, read."""
    status, out, _ = run(capsys, *args, "--json")
    assert out.count("\n") == 1
    return status, json.loads(out)


def usage_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """The one stderr line of a refused command line, which exits 2 and prints nothing."""
    status, out, err = run(capsys, *args)
    assert (status, out) == (2, ""), err
    assert err.startswith("decode-ring: error: ") and err.endswith("\n")
    assert err.count("\n") == 1
    return err[len("decode-ring: error: ") : -1]


def whole(text: str) -> str:
    """A ``pytest.raises(match=...)`` pattern that matches exactly ``text``."""
    return f"^{re.escape(text)}$"


def squeeze(text: str) -> str:
    """``text`` with every run of whitespace made one space (help text wraps to the terminal)."""
    return " ".join(text.split())


# --- the servers' reservations under hostile arguments ---------------------------------------

# Values of every type and edge a launch line's argument may take, for the servers' fuzzers.
HOSTILE_ARGUMENTS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, 1, 2, 4, 8, 3, 4096, 2**63, 2**64, 20 * GiB, 60 * GiB, 10**30]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from(
        ["auto", "float32", "float", "bfloat16", "float16", "no_buffer", "extra_buffer"]
    ),
)
FUZZED_CONFIGS = (
    NEMOTRON,
    QWEN3_NEXT,
    MAMBA,
    CONFIGS / "zaya1-8b-legacy.json",
    KIMI_LINEAR,
)


def answer_or_refusal(call: Callable[..., Any], config: Path, values: dict[str, Any]) -> Any:
    """``call``'s answer, or None where it refused with a documented, typed error whose message
    names what it refuses (an argument, or a config field)."""
    from hypothesis import event

    from decode_ring.models import ModelConfigError

    refusal: Exception | None = None
    try:
        answer = call(config, **values)
        event("answered")
        return answer
    except (ModelConfigError, TypeError, OverflowError) as error:
        refusal = error  # OverflowError: a count past 64 bits (issue 28), named
    assert isinstance(refusal, ValueError | TypeError | OverflowError)
    message = str(refusal)
    assert "\n" not in message
    named = ("argument ", "field ", "config", "beyond the 18446744073709551615")
    assert any(word in message for word in named), message
    return None


# BailingMoeV3 (Ling 3): 12 layers in groups of 6, so layers 5 and 11 are MLA attention and the
# others KDA (SGLang configs/bailing_hybrid.py:80-236; vLLM models/bailing_moe_v3.py:131-157).
BAILING_V3: dict[str, Any] = {
    "model_type": "bailing_hybrid",
    "architectures": ["BailingMoeV3ForCausalLM"],
    "num_hidden_layers": 12,
    "layer_group_size": 6,
    "hidden_size": 2560,
    "num_attention_heads": 32,
    "num_key_value_heads": 32,
    "head_dim": 128,
    "kv_lora_rank": 512,
    "q_lora_rank": None,
    "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128,
    "v_head_dim": 128,
    "short_conv_kernel_size": 4,
    "no_kda_lora": True,
    "torch_dtype": "bfloat16",
    "max_position_embeddings": 32768,
}


def nemotron_with(**fields: object) -> dict[str, Any]:
    """Nemotron-Nano-9B-v2's config without its length keys, with ``fields`` added."""
    config: dict[str, Any] = json.loads(NEMOTRON.read_text())
    config.pop("max_position_embeddings", None)
    config.update(fields)
    return config


# --- the models' tests ---------------------------------------------------------------------------

# vLLM's rule for the SSM state's dtype when it follows the conv state, with its citation.
FOLLOWS_CONV = (
    "as conv state (vLLM: mamba_ssm_cache_dtype auto, "
    "vllm/model_executor/layers/mamba/mamba_utils.py:98-111)"
)


def config(name: str) -> dict[str, Any]:
    """The fixture ``tests/configs/NAME``, read."""
    loaded: dict[str, Any] = json.loads((CONFIGS / name).read_text(encoding="utf-8"))
    return loaded


def written(name: str) -> dict[str, Any]:
    """The written config ``tests/configs/written/NAME``, read."""
    loaded: dict[str, Any] = json.loads((WRITTEN / name).read_text(encoding="utf-8"))
    return loaded


def exported(model_type: str, **fields: Any) -> dict[str, Any]:
    """transformers' own ``AutoConfig.for_model(model_type, **fields).to_dict()``; the test
    skips where transformers cannot be imported."""
    transformers = pytest.importorskip("transformers")
    made: dict[str, Any] = transformers.AutoConfig.for_model(model_type, **fields).to_dict()
    return made


def bailing(**fields: Any) -> dict[str, Any]:
    """transformers' default BailingHybrid: 42 layers in groups of 6, 32 heads of 64, K 4, MLA;
    with no_kda_lora true, which vLLM's BailingMoeV3 KDA layer requires."""
    return exported("bailing_hybrid", **fields) | {"no_kda_lora": True}


def tensors(state: Any) -> list[tuple[str, str, tuple[int, ...], str, int]]:
    """Every state tensor of ``state``: its kind, name, shape, dtype and bytes."""
    return [
        (group.kind, tensor.name, tensor.shape, tensor.dtype, tensor.bytes)
        for group in state.groups
        for tensor in group.tensors
    ]


def refusal(config: Any, **arguments: Any) -> str:
    """The message of the ``ModelConfigError`` that ``ssm_state(config, **arguments)`` raises."""
    from decode_ring.models import ModelConfigError, ssm_state

    with pytest.raises(ModelConfigError) as caught:
        ssm_state(config, **arguments)
    return str(caught.value)


def refused(config: Any, message: str, **arguments: Any) -> Any:
    """The ``ModelConfigError`` that ``ssm_state(config, **arguments)`` raises, whose message is
    exactly ``message``."""
    from decode_ring.models import ModelConfigError, ssm_state

    with pytest.raises(ModelConfigError, match=whole(message)) as caught:
        ssm_state(config, **arguments)
    return caught.value


def fields_of(error: Any) -> tuple[str | None, str | None, str | None]:
    """What a models refusal names: the file, the family and the field."""
    return error.path, error.family, error.field


# Small hand-made configs of each kind, whose refusals and edges the tests spell out.
SMALL_MAMBA2: dict[str, Any] = {
    "model_type": "mamba2",
    "num_heads": 8,
    "head_dim": 16,
    "expand": 2,
    "hidden_size": 64,
    "n_groups": 1,
    "state_size": 16,
    "conv_kernel": 4,
    "num_hidden_layers": 2,
}
SMALL_JAMBA: dict[str, Any] = {
    "model_type": "jamba",
    "attn_layer_period": 2,
    "attn_layer_offset": 0,
    "mamba_expand": 2,
    "hidden_size": 3,
    "mamba_d_state": 16,
    "mamba_d_conv": 4,
    "num_hidden_layers": 4,
    "num_attention_heads": 1,
}
SMALL_NEMOTRON: dict[str, Any] = {
    "model_type": "nemotron_h",
    "mamba_num_heads": 3,
    "mamba_head_dim": 16,
    "n_groups": 1,
    "ssm_state_size": 16,
    "conv_kernel": 4,
    "hybrid_override_pattern": "M*M",
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
}
SMALL_FALCON: dict[str, Any] = {
    "model_type": "falcon_h1",
    "mamba_d_ssm": None,
    "mamba_expand": 2,
    "hidden_size": 64,
    "mamba_n_heads": 8,
    "mamba_d_head": "auto",
    "mamba_n_groups": 3,
    "mamba_d_state": 16,
    "mamba_d_conv": 4,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
}
SMALL_ZAMBA2: dict[str, Any] = {
    "model_type": "zamba2",
    # Issue 27: transformers' Zamba2Config holds layers_block_type to num_hidden_layers (54 by
    # default; validate_layer_type).
    "num_hidden_layers": 2,
    "mamba_expand": 2,
    "hidden_size": 64,
    "n_mamba_heads": 8,
    "mamba_ngroups": 3,
    "mamba_d_state": 16,
    "mamba_d_conv": 4,
    "layers_block_type": ["mamba", "hybrid"],
    "num_attention_heads": 4,
}
SMALL_QWEN3_NEXT: dict[str, Any] = {
    "model_type": "qwen3_next",
    "linear_num_key_heads": 2,
    "linear_num_value_heads": 4,
    "linear_key_head_dim": 8,
    "linear_value_head_dim": 8,
    "linear_conv_kernel_dim": 4,
    "num_hidden_layers": 4,
    "full_attention_interval": 4,
    "num_attention_heads": 4,
    "hidden_size": 64,
}
SMALL_KIMI: dict[str, Any] = {
    "model_type": "kimi_linear",
    "num_hidden_layers": 3,
    "num_attention_heads": 4,
    "kv_lora_rank": 8,
    "qk_rope_head_dim": 2,
    # vLLM builds Kimi's attention as NoPE MLA and asserts these (issue 27,
    # vllm/models/kimi_k3/nvidia/model.py:735-745).
    "qk_nope_head_dim": 8,
    "v_head_dim": 8,
    "mla_use_nope": True,
    "linear_attn_config": {
        "kda_layers": [1, 3],
        "full_attn_layers": [2],
        "num_heads": 2,
        "head_dim": 4,
        "short_conv_kernel_size": 3,
    },
    "dtype": "float16",
}
SMALL_LIGHTNING: dict[str, Any] = {
    "model_type": "bailing_hybrid",
    "num_hidden_layers": 2,
    "layer_group_size": 2,
    "num_attention_heads": 2,
    "head_dim": 4,
}
# The same as vLLM serves it: lightning attention, picked by the architecture
# (bailing_moe_linear.py); transformers 5.20's BailingHybridConfig makes head_dim
# qk_rope_head_dim (issue 27).
VLLM_LIGHTNING: dict[str, Any] = {
    **SMALL_LIGHTNING,
    "qk_rope_head_dim": 4,
    "architectures": ["BailingMoeV2_5ForCausalLM"],
}

# Hostile values for the fields of a config, for the models' fuzzers: any JSON, and the edges.
JSON_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-3, max_value=300)
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.builds(pow, st.just(10), st.just(5000))  # past the digits str() takes
    | st.floats(allow_nan=True)
    | st.sampled_from(["mamba", "attention", "linear_attention", "hybrid", "M-*E", "auto", "bf16"])
    | st.text(max_size=8)
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=6,
)


def assert_one_line(error: Exception) -> None:
    """A refusal is one line of ASCII."""
    assert "\n" not in str(error) and str(error).isascii()


def assert_consistent(state: Any) -> None:
    """What any state ``ssm_state`` returns holds: its totals add up, its shapes are
    non-negative integers, its bytes are their products, and it serialises to JSON."""
    sizes = {"bfloat16": 2, "float16": 2, "float32": 4}
    assert state.ssm_layers == len(state.layer_indices) >= 0
    assert state.layer_indices == tuple(
        sorted(index for group in state.groups for index in group.layer_indices)
    )
    assert state.per_sequence_bytes == sum(group.bytes for group in state.groups)
    for group in state.groups:
        assert group.layer_indices and group.bytes == group.per_layer_bytes * len(
            group.layer_indices
        )
        assert group.per_layer_bytes == sum(tensor.bytes for tensor in group.tensors)
        for tensor in group.tensors:
            assert all(isinstance(size, int) and size >= 0 for size in tensor.shape)
            assert tensor.bytes == math.prod(tensor.shape) * sizes[tensor.dtype]
    if state.conv_shape:
        assert state.per_layer_bytes == state.conv_bytes + state.ssm_bytes
        assert state.conv_bytes == math.prod(state.conv_shape) * sizes[state.conv_dtype]
    assert state.conv_dtype in sizes and state.ssm_dtype in sizes
    json.dumps(state.as_dict())


# Every field the fixtures hold, and the spellings they do not: what the models' fuzzers change.
FIELD_NAMES = sorted(
    {key for path in CONFIGS.glob("*.json") for key in config(path.name)}
    | {
        "layers_block_type",
        "mamba_n_groups",
        "mamba_d_conv",
        "mamba_ssm_dtype",
        "dtype",
        "text_config",
    }
)


# A DFlash drafter for the Qwen3.5/3.6-27B geometry, written out (its published config was not
# found): 5 layers of 32 heads, 8 KV heads of 128, as z-lab's DFlash drafters are shaped; no
# layer_types, so vLLM reads every layer as non-causal.
DFLASH: dict[str, Any] = {
    "architectures": ["DFlashDraftModel"],
    "model_type": "qwen3",
    "hidden_size": 5120,
    "num_hidden_layers": 5,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "torch_dtype": "bfloat16",
    "vocab_size": 248320,
    "max_position_embeddings": 262144,
}
