"""What the servers' reservations share: the argument checks and the error they raise, the
GPUs a launch names, and the model as a server reads it (``HybridModel``: its config read once,
its state in the server's layout, its family's entry)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol, TypeVar

from ..gpus import GPU_ARCHS, Gpu, GpuError, capability_major, gpu
from ..models import (
    REGISTRY,
    ConfigSource,
    Family,
    LoadedConfig,
    ModelConfigError,
    SsmState,
    load_config,
    ssm_state,
    text_config,
)
from ..models.errors import check_within_64_bits, refuse_argument
from ..printable import show, type_name
from ..releases import Release

__all__ = [
    "GPU_ARCHS",
    "MAX_COUNT",
    "MAX_RATIO",
    "Device",
    "HybridModel",
    "ServerArgumentError",
    "capability_major",
    "check_choice",
    "check_count",
    "check_dtype",
    "check_flag",
    "check_optional_count",
    "check_ratio",
    "device",
    "fail",
    "gib",
    "hybrid_model",
    "multiple",
    "overridden",
    "scaled_context_length",
    "within_64_bits",
]

# Tensor sizes are int64 in both servers; a larger count describes no launch.
MAX_COUNT: Final = 2**63 - 1
# The largest --mamba-full-memory-ratio: SGLang's float arithmetic (r / (1 + r) of the budget)
# stays finite below it for any budget, and its share is then 0.999999 of the budget.
MAX_RATIO: Final = 1_000_000.0


class ServerArgumentError(ModelConfigError):
    """An argument a server would refuse, or one this package does not model. The message is one
    line that names the argument (also in ``field``, as the API spells it; ``worded`` names it
    otherwise, as a command line's flag). ``server_refusal``: where the server would not boot,
    what it says then, in its own words."""

    server_refusal: str | None = None


def fail(name: str, problem: str, server_refusal: str | None = None) -> ServerArgumentError:
    """The refusal of argument ``name``; ``server_refusal``: the server's own words, where the
    launch would not boot."""
    refusal = refuse_argument(name, problem, ServerArgumentError)
    assert isinstance(refusal, ServerArgumentError)
    refusal.server_refusal = server_refusal
    return refusal


def multiple(held: int, naive: int) -> float:
    """How many times the naive figure (sequences x per-sequence state) the server holds:
    ``held / naive``, and 1.0 where the naive figure is 0 (nothing asked, nothing held)."""
    return held / naive if naive else 1.0


def gib(value: int | float) -> str:
    """A size as both servers log it: GiB (2**30 B) rounded to two places, as Python prints the
    float (vLLM's ``format_gib``, vllm/utils/mem_utils.py:30-31; SGLang's ``GB = 1024**3``,
    sglang/srt/mem_cache/memory_pool.py:116, printed ``%.2f``)."""
    return str(round(value / (1 << 30), 2))


def check_count(name: str, value: object, minimum: int) -> int:
    """``value`` when it is an ``int`` (not ``bool``) from ``minimum`` to ``MAX_COUNT``; raises
    ``TypeError`` for another type and ``ServerArgumentError`` for another value."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"argument {name}: must be an int, not {type_name(value)}")
    if not minimum <= value <= MAX_COUNT:
        raise fail(name, f"must be from {minimum} to 2**63 - 1, got {show(value)}")
    return value


def check_optional_count(name: str, value: object, minimum: int) -> int | None:
    """``check_count`` for an argument whose ``None`` means the server's default."""
    return None if value is None else check_count(name, value, minimum)


def check_flag(name: str, value: object) -> bool:
    """``value`` when it is a ``bool``; ``TypeError`` otherwise."""
    if not isinstance(value, bool):
        raise TypeError(f"argument {name}: must be a bool, not {type_name(value)}")
    return value


def check_choice(name: str, value: object, choices: Mapping[str, Any] | tuple[str, ...]) -> str:
    """``value`` when it is one of ``choices`` (the server's own spellings)."""
    if not isinstance(value, str):
        raise TypeError(f"argument {name}: must be a str, not {type_name(value)}")
    if value not in choices:
        raise fail(name, f"unknown value {show(value)}; use {', '.join(choices)}")
    return value


# --dtype values for float32 activations, which vLLM (ModelConfig.dtype) and SGLang (--dtype's
# choices) both accept and this package does not model.
_FLOAT32_DTYPES: Final = ("float", "float32")


def check_dtype(value: object, modelled: tuple[str, ...], server: str) -> str:
    """``--dtype`` ``value`` when it is one of ``modelled``; float32 (``float``, ``float32``),
    which ``server`` runs with, refused as not modelled rather than as unknown."""
    if value in _FLOAT32_DTYPES:
        raise fail(
            "dtype",
            f"{value} is not modelled: float32 activations widen the auto KV and state cache "
            f"dtypes and change the attention backends {server} can pick; use "
            f"{', '.join(modelled)}",
        )
    return check_choice("dtype", value, modelled)


def check_ratio(name: str, value: object) -> float:
    """``value`` as a finite float above 0 and at most ``MAX_RATIO`` (an ``int`` is accepted, a
    ``bool`` is not)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"argument {name}: must be a float, not {type_name(value)}")
    # An int past float's range is as infinite as a ratio.
    ratio = float(value) if not isinstance(value, int) or value.bit_length() < 1024 else math.inf
    if not math.isfinite(ratio) or not 0 < ratio <= MAX_RATIO:
        raise fail(
            name,
            f"must be a finite number above 0 and at most {MAX_RATIO:,.0f}, got {show(ratio)}",
        )
    return ratio


def scaled_context_length(key: str, value: object, factor: object) -> int:
    """A context length as SGLang reads it from the config field ``key`` and a RoPE scaling
    ``factor`` (``int(factor * value)``, common.py:690-693, which fails on a factor that is no
    number or multiplies a string by it). Raises
    ``ModelConfigError`` naming the field for a value that is not an integer, or that (with its
    factor) makes no count of tokens from 1 to ``MAX_COUNT``: SGLang divides by it."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ModelConfigError(f"field {key!r}: {show(value)} is not an integer", field=key)
    tokens = "a count of tokens from 1 to 2**63 - 1"
    if not 1 <= value <= MAX_COUNT:
        raise ModelConfigError(f"field {key!r}: {show(value)} is not {tokens}", field=key)
    field = "rope_scaling.factor"
    if (
        isinstance(factor, bool)
        or not isinstance(factor, int | float)
        or factor <= 0
        or (isinstance(factor, float) and not math.isfinite(factor))
    ):
        raise ModelConfigError(
            f"field {field!r}: {show(factor)} is not a finite factor above 0", field=field
        )
    try:
        scaled: int | None = int(factor * value)
    except OverflowError:  # a float product past float's range
        scaled = None
    if scaled is None or not 1 <= scaled <= MAX_COUNT:
        shown = "more than 2**1024" if scaled is None else show(scaled)
        raise ModelConfigError(
            f"field {field!r}: {value} x {show(factor)} is {shown} tokens, not {tokens}",
            field=field,
        )
    return scaled


class _Result(Protocol):
    def as_dict(self) -> dict[str, object]: ...


R = TypeVar("R", bound=_Result)


def within_64_bits(result: R) -> R:
    """``result`` when every count it carries fits 64 bits; ``OverflowError`` naming the first
    that does not (a launch whose figures no GPU holds, ``block_size=2**62``)."""
    check_within_64_bits(result.as_dict())
    return result


@dataclass(frozen=True, slots=True)
class HybridModel:
    """A model as a server reads it: the config read once, its text config, its recurrent
    state in the server's layout, and its family's entry in the registry."""

    config: LoadedConfig
    text: Mapping[str, Any]
    state: SsmState
    family: Family


def hybrid_model(
    config: ConfigSource, server: Release, layout: str, keeps: str, **state_options: Any
) -> HybridModel:
    """``config`` read once and sized as ``server`` lays it out (``ssm_state``). Raises as
    ``ssm_state`` does, and ``ModelConfigError`` for a model with no recurrent layer, for which
    the server ``keeps`` nothing (what it would keep: ``"reserves no state"``)."""
    loaded = load_config(config)
    state = ssm_state(loaded, layout=layout, **state_options)
    if state.ssm_layers == 0:
        raise ModelConfigError(
            f"{state.model_type}: no recurrent layer, so {server.server} {keeps} for it",
            family=state.family,
            field="model_type",
        )
    return HybridModel(loaded, text_config(loaded), state, REGISTRY[state.family])


@dataclass(frozen=True, slots=True)
class Device:
    """The GPU a launch runs on: its name (``None``: only its memory was given), NVML's total
    and the runtime's (``cudaMemGetInfo``) in bytes, its compute capability (``None``: not
    known), and where the totals come from."""

    name: str | None
    memory_bytes: int
    runtime_bytes: int
    gpu_arch: str | None
    rule: str


def device(named: object, memory: object) -> Device | None:
    """The GPU of ``gpu`` (a ``decode_ring.gpus`` key or ``nvidia-smi`` name, or a ``Gpu``) and
    ``gpu_memory_bytes`` (its total; it overrides the table's); ``None`` without either."""
    check_optional_count("gpu_memory_bytes", memory, 1)
    if named is None and memory is None:
        return None
    row: Gpu | None
    if named is None or isinstance(named, Gpu):
        row = named
    else:
        if not isinstance(named, str):
            raise TypeError(f"argument gpu: must be a str, not {type_name(named)}")
        try:
            row = gpu(named)
        except GpuError as error:
            raise fail("gpu", str(error)) from None
    if isinstance(memory, int):
        arch = row.gpu_arch if row is not None else None
        name = row.name if row is not None else None
        return Device(name, memory, memory, arch, f"--gpu-memory {memory:,} B")
    assert row is not None
    rule = f"{row.key}: memory.total {row.memory_mib} MiB ({row.citation}); {row.runtime_rule}"
    return Device(row.name, row.memory_bytes, row.runtime_bytes, row.gpu_arch, rule)


def overridden(config: ConfigSource, overrides: Mapping[str, Any]) -> LoadedConfig:
    """``config`` with ``overrides`` applied to it as the servers apply ``--hf-overrides`` and
    ``--json-model-override-args``: each key of the config replaced (a mapping merged into a
    mapping, so a wrapper's ``text_config`` takes its own keys)."""
    loaded = load_config(config)
    return LoadedConfig(_merged(loaded.mapping, overrides), loaded.path)


def _merged(base: Mapping[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in update.items():
        old = merged.get(key)
        if isinstance(value, Mapping) and isinstance(old, Mapping):
            merged[key] = _merged(old, value)
        else:
            merged[key] = value
    return merged
