"""What the servers' reservations share: the argument checks and the error they raise, the
GPUs a launch names, and the model as a server reads it (``HybridModel``: its config read once,
its state in the server's layout, its family's entry)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol, TypeVar

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
    "HybridModel",
    "ServerArgumentError",
    "check_choice",
    "check_count",
    "check_flag",
    "check_optional_count",
    "check_ratio",
    "fail",
    "hybrid_model",
    "scaled_context_length",
    "within_64_bits",
]

# Tensor sizes are int64 in both servers; a larger count describes no launch.
MAX_COUNT: Final = 2**63 - 1
# The largest --mamba-full-memory-ratio: SGLang's float arithmetic (r / (1 + r) of the budget)
# stays finite below it for any budget, and its share is then 0.999999 of the budget.
MAX_RATIO: Final = 1_000_000.0

# The GPU architectures a launch may name, with the compute capability's major version.
GPU_ARCHS: Final[Mapping[str, str]] = {
    "sm80": "A100 (compute capability 8.0)",
    "sm86": "A10 / RTX 30 (compute capability 8.6)",
    "sm89": "L40S / RTX 40 (compute capability 8.9)",
    "sm90": "H100 / H200 (compute capability 9.0)",
}


def capability_major(gpu_arch: str) -> int:
    """The compute capability's major version of a ``GPU_ARCHS`` key (``sm90``: 9)."""
    return int(gpu_arch[2:-1])


class ServerArgumentError(ModelConfigError):
    """An argument a server would refuse, or one this package does not model. The message is one
    line that names the argument (also in ``field``, as the API spells it; ``worded`` names it
    otherwise, as a command line's flag)."""


def fail(name: str, problem: str) -> ServerArgumentError:
    """The refusal of argument ``name``."""
    refusal = refuse_argument(name, problem, ServerArgumentError)
    assert isinstance(refusal, ServerArgumentError)
    return refusal


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
    ``factor`` (``int(factor * value)``; a factor that is no number is not applied). Raises
    ``ModelConfigError`` naming the field for a value that is not an integer, or that (with its
    factor) makes no count of tokens from 1 to ``MAX_COUNT``: SGLang divides by it."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ModelConfigError(f"field {key!r}: {show(value)} is not an integer", field=key)
    tokens = "a count of tokens from 1 to 2**63 - 1"
    if not 1 <= value <= MAX_COUNT:
        raise ModelConfigError(f"field {key!r}: {show(value)} is not {tokens}", field=key)
    if isinstance(factor, bool) or not isinstance(factor, int | float):
        return value
    field = "rope_scaling.factor"
    if factor <= 0 or (isinstance(factor, float) and not math.isfinite(factor)):
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
