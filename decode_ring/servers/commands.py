"""``decode-ring vllm`` and ``decode-ring sglang``: the flags of a server's launch line, in the
server's own spellings, and what the server reserves for them.

Each command reads the flags it models under the server's names (``--max-num-seqs``,
``--max_num_seqs`` too, as vLLM's ``FlexibleArgumentParser`` normalises; SGLang's
``--tp-size`` / ``--tp``); ``refuse_unknown`` turns any other flag into one line naming it and
saying whether it is the server's (not modelled) or nobody's. Values are read as the servers
read them: vLLM's ``human_readable_int`` for ``--max-model-len`` and
``--kv-cache-memory-bytes`` (vllm/utils/argparse_utils.py:30-75), JSON for
``--speculative-config``; SGLang's ints and floats, and the package's sizes for
``--available-memory`` (SGLang has no such flag: it is the budget left after the weights).
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Final, TypeVar

from ..snapshots import CONFIG_HELP, resolve_model
from ..units import ACCEPTED_FORMS, parse_size, quoted
from . import render as _render  # noqa: F401  (registers the renderers)
from .common import GPU_ARCHS, ServerArgumentError
from ._flags import SGLANG_FLAGS, VLLM_FLAGS
from .sglang import MAMBA_RADIX_CACHE_STRATEGIES, SglangReservation, sglang_reservation
from .vllm import VllmReservation, vllm_reservation

__all__ = [
    "SGLANG_EPILOG",
    "VLLM_EPILOG",
    "refuse_unknown",
    "run_sglang",
    "run_vllm",
    "sglang_flags",
    "vllm_flags",
]

VLLM_EPILOG: Final = (
    "Flags are vLLM 0.33.0's own; any other vLLM flag is refused as not modelled. N for "
    "--max-model-len and --kv-cache-memory-bytes: an integer, or with k/m/g/t (powers of 1000) "
    "or K/M/G/T (powers of 1024), as vLLM reads them."
)
SGLANG_EPILOG: Final = (
    "Flags are SGLang 0.5.23's own, plus --available-memory; any other SGLang flag is refused "
    f"as not modelled. SIZE: {ACCEPTED_FORMS}."
)
_HUMAN_INT: Final = re.compile(r"([0-9]+(?:\.[0-9]+)?)([kKmMgGtT])", re.ASCII)
_DECIMAL: Final = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BINARY: Final = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
_DIGITS: Final = re.compile(r"[0-9]+", re.ASCII)
# Longer numbers exceed the int64 the servers hold (and int() of thousands of digits raises).
_MAX_DIGITS: Final = 24
# --speculative-config keys read; "method" and "model" choose the drafter, whose own KV layers
# are not counted (said in the assumptions).
_SPECULATIVE_KEYS: Final = ("num_speculative_tokens", "method", "model")
_SGLANG_SPECULATIVE_ALGORITHMS: Final = ("EAGLE", "EAGLE3", "NEXTN", "MTP")


def _integer(text: str) -> int:
    """A non-negative integer in digits (an optional ``+`` and surrounding spaces, as ``int``)."""
    stripped = text.strip()
    stripped = stripped[1:] if stripped.startswith("+") else stripped
    if not _DIGITS.fullmatch(stripped):
        raise argparse.ArgumentTypeError(f"not a non-negative integer: {quoted(text)}")
    if len(stripped) > _MAX_DIGITS:
        raise argparse.ArgumentTypeError(f"more than 2**63 - 1: {quoted(text)}")
    return int(stripped)


def _human_int(text: str) -> int:
    """vLLM's ``human_readable_int``: ``25.6k`` is 25,600, ``1K`` 1,024; decimals with a binary
    suffix are refused (vllm/utils/argparse_utils.py:30-75); negative values too."""
    match = _HUMAN_INT.fullmatch(text.strip())
    if match is None:
        if text.strip() in ("-1", "auto"):
            raise argparse.ArgumentTypeError(
                f"{quoted(text)}: vLLM's auto-fit of the length to memory is not modelled"
            )
        return _integer(text)
    number, suffix = match.groups()
    if len(number) > _MAX_DIGITS:
        raise argparse.ArgumentTypeError(f"more than 2**63 - 1: {quoted(text)}")
    if suffix in _DECIMAL:
        return int(float(number) * _DECIMAL[suffix])
    if "." in number:
        raise argparse.ArgumentTypeError(
            f"decimals are not allowed with binary suffixes like {suffix}; did you mean "
            f"{number}{suffix.lower()}?"
        )
    return int(number) * _BINARY[suffix]


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _ratio(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {quoted(text)}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number above 0: {quoted(text)}")
    return value


def _speculative_config(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        raise argparse.ArgumentTypeError(f"not JSON: {quoted(text)}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"must be a JSON object: {quoted(text)}")
    for key in value:
        if key not in _SPECULATIVE_KEYS:
            raise argparse.ArgumentTypeError(
                f"key {quoted(str(key))} is not modelled; read are {', '.join(_SPECULATIVE_KEYS)}"
            )
    tokens = value.get("num_speculative_tokens", 0)
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 0:
        raise argparse.ArgumentTypeError("num_speculative_tokens must be a non-negative integer")
    for key in ("method", "model"):
        if key in value and not isinstance(value[key], str):
            raise argparse.ArgumentTypeError(f"{key} must be a string")
    return value


def _add(command: argparse.ArgumentParser, flag: str, *aliases: str, **options: Any) -> None:
    """``flag`` with its aliases and its underscore spelling, which the servers accept too."""
    names = [flag, *aliases]
    underscored = "--" + flag[2:].replace("-", "_")
    if underscored != flag:
        names.append(underscored)
    command.add_argument(*names, **options)


def _common(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--config",
        required=True,
        metavar="PATH",
        help=CONFIG_HELP,
    )
    command.add_argument(
        "--gpu-arch",
        choices=tuple(GPU_ARCHS),
        default="sm90",
        help="the GPU the server runs on (default sm90: H100/H200)",
    )
    command.add_argument("--json", action="store_true", help="one JSON object on stdout")


# --- vllm -----------------------------------------------------------------------------------


def vllm_flags(command: argparse.ArgumentParser) -> None:
    """vLLM's flags that change what it reserves for recurrent state."""
    _common(command)
    _add(command, "--tensor-parallel-size", "-tp", type=_integer, default=1, metavar="N")
    _add(command, "--max-num-seqs", type=_integer, default=256, metavar="N")
    _add(command, "--max-model-len", type=_human_int, metavar="N")
    _add(command, "--block-size", type=_integer, metavar="N")
    _add(
        command,
        "--enable-prefix-caching",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="default: on for a hybrid model, off for an attention-free one",
    )
    _add(command, "--num-speculative-tokens", "--spec-tokens", type=_integer, metavar="N")
    _add(command, "--speculative-config", "-sc", type=_speculative_config, metavar="JSON")
    _add(command, "--mamba-cache-dtype", default="auto", metavar="D")
    _add(command, "--mamba-ssm-cache-dtype", default="auto", metavar="D")
    _add(command, "--kv-cache-dtype", default="auto", metavar="D")
    _add(command, "--kv-cache-memory-bytes", type=_human_int, metavar="N")
    _add(command, "--use-replayssm", action=argparse.BooleanOptionalAction, default=False)
    _add(command, "--replayssm-buffer-len", type=_integer, default=16, metavar="N")


_VLLM_FLAG_OF: Final = {
    "tensor_parallel_size": "--tensor-parallel-size",
    "max_num_seqs": "--max-num-seqs",
    "max_model_len": "--max-model-len",
    "block_size": "--block-size",
    "num_speculative_tokens": "--num-speculative-tokens",
    "mamba_cache_dtype": "--mamba-cache-dtype",
    "mamba_ssm_cache_dtype": "--mamba-ssm-cache-dtype",
    "kv_cache_dtype": "--kv-cache-dtype",
    "kv_cache_memory_bytes": "--kv-cache-memory-bytes",
    "use_replayssm": "--use-replayssm",
    "replayssm_buffer_len": "--replayssm-buffer-len",
    "gpu_arch": "--gpu-arch",
}


def _speculative_tokens(args: argparse.Namespace) -> tuple[int, list[str]]:
    """The draft tokens from ``--num-speculative-tokens`` or ``--speculative-config``, which
    vLLM refuses together (vllm/engine/arg_utils.py:2108-2121), and what the config's other keys
    say."""
    config = args.speculative_config
    if config is None:
        return args.num_speculative_tokens or 0, []
    if args.num_speculative_tokens is not None and "num_speculative_tokens" in config:
        raise ServerArgumentError(
            "argument --speculative-config: --spec-tokens and --speculative-config"
            "['num_speculative_tokens'] are mutually exclusive (vLLM)",
            field="speculative_config",
        )
    tokens = config.get("num_speculative_tokens", args.num_speculative_tokens or 0)
    notes = [
        f"speculative {key} {config[key]!a}: its drafter's own KV layers are not counted"
        for key in ("method", "model")
        if key in config
    ]
    return tokens, notes


def run_vllm(args: argparse.Namespace) -> VllmReservation:
    """``vllm_reservation`` for the flags; a refusal names the flag."""
    tokens, notes = _speculative_tokens(args)
    return _noted(
        _VLLM_FLAG_OF,
        notes,
        lambda: vllm_reservation(
            resolve_model(args.config).config,
            tensor_parallel_size=args.tensor_parallel_size,
            max_num_seqs=args.max_num_seqs,
            max_model_len=args.max_model_len,
            block_size=args.block_size,
            enable_prefix_caching=args.enable_prefix_caching,
            num_speculative_tokens=tokens,
            mamba_cache_dtype=args.mamba_cache_dtype,
            mamba_ssm_cache_dtype=args.mamba_ssm_cache_dtype,
            kv_cache_dtype=args.kv_cache_dtype,
            kv_cache_memory_bytes=args.kv_cache_memory_bytes,
            use_replayssm=args.use_replayssm,
            replayssm_buffer_len=args.replayssm_buffer_len,
            gpu_arch=args.gpu_arch,
        ),
    )


# --- sglang ---------------------------------------------------------------------------------


def sglang_flags(command: argparse.ArgumentParser) -> None:
    """SGLang's flags that change its state pool, and the budget left after the weights."""
    _common(command)
    _add(command, "--tp-size", "--tp", "--tensor-parallel-size", type=_integer, default=1)
    command.add_argument(
        "--available-memory",
        type=_size,
        metavar="SIZE",
        help="per rank, after the weights: what _handle_max_mamba_cache divides",
    )
    _add(command, "--max-mamba-cache-size", type=_integer, metavar="N")
    _add(command, "--mamba-full-memory-ratio", type=_ratio, default=0.9, metavar="R")
    _add(
        command,
        "--mamba-radix-cache-strategy",
        default="auto",
        metavar="|".join(MAMBA_RADIX_CACHE_STRATEGIES),
    )
    _add(command, "--disable-radix-cache", action="store_true")
    _add(command, "--max-running-requests", type=_integer, metavar="N")
    _add(command, "--speculative-algorithm", metavar="|".join(_SGLANG_SPECULATIVE_ALGORITHMS))
    _add(command, "--speculative-num-draft-tokens", type=_integer, metavar="N")
    _add(command, "--speculative-num-steps", type=_integer, metavar="N")
    _add(command, "--speculative-eagle-topk", type=_integer, metavar="N")
    _add(command, "--mamba-ssm-dtype", metavar="D")
    _add(command, "--context-length", type=_integer, metavar="N")
    _add(command, "--max-total-tokens", type=_integer, metavar="N")


_SGLANG_FLAG_OF: Final = {
    "tp_size": "--tp-size",
    "available_memory": "--available-memory",
    "max_mamba_cache_size": "--max-mamba-cache-size",
    "mamba_full_memory_ratio": "--mamba-full-memory-ratio",
    "mamba_radix_cache_strategy": "--mamba-radix-cache-strategy",
    "disable_radix_cache": "--disable-radix-cache",
    "max_running_requests": "--max-running-requests",
    "speculative_num_draft_tokens": "--speculative-num-draft-tokens",
    "mamba_ssm_dtype": "--mamba-ssm-dtype",
    "context_length": "--context-length",
    "max_total_tokens": "--max-total-tokens",
    "gpu_arch": "--gpu-arch",
}


def _sglang_draft_tokens(args: argparse.Namespace) -> tuple[int, list[str]]:
    """The draft tokens, with SGLang's pairing of the speculative flags: an algorithm needs
    its draft tokens given here (SGLang's auto choice is not modelled), and only a linear
    chain (topk 1) is modelled."""
    algorithm, draft = args.speculative_algorithm, args.speculative_num_draft_tokens
    if algorithm is None:
        for name in ("speculative_num_draft_tokens", "speculative_num_steps"):
            if getattr(args, name) is not None:
                raise ServerArgumentError(
                    f"argument --{name.replace('_', '-')}: needs --speculative-algorithm",
                    field=name,
                )
        return 0, []
    if algorithm.upper() not in _SGLANG_SPECULATIVE_ALGORITHMS:
        raise ServerArgumentError(
            f"argument --speculative-algorithm: {quoted(algorithm)} is not modelled; use "
            f"{', '.join(_SGLANG_SPECULATIVE_ALGORITHMS)}",
            field="speculative_algorithm",
        )
    if args.speculative_eagle_topk not in (None, 1):
        raise ServerArgumentError(
            "argument --speculative-eagle-topk: only a linear draft chain (topk 1) is modelled",
            field="speculative_eagle_topk",
        )
    if not draft:
        raise ServerArgumentError(
            "argument --speculative-num-draft-tokens: needed with --speculative-algorithm "
            "(SGLang's automatic choice is not modelled)",
            field="speculative_num_draft_tokens",
        )
    steps = args.speculative_num_steps
    notes = [f"speculative algorithm {algorithm.upper()}"]
    if steps is not None:
        notes.append(f"speculative num steps {steps}: does not change the state pool")
    return draft, notes


def run_sglang(args: argparse.Namespace) -> SglangReservation:
    """``sglang_reservation`` for the flags; a refusal names the flag."""
    draft, notes = _sglang_draft_tokens(args)
    return _noted(
        _SGLANG_FLAG_OF,
        notes,
        lambda: sglang_reservation(
            resolve_model(args.config).config,
            tp_size=args.tp_size,
            available_memory=args.available_memory,
            max_mamba_cache_size=args.max_mamba_cache_size,
            mamba_full_memory_ratio=args.mamba_full_memory_ratio,
            mamba_radix_cache_strategy=args.mamba_radix_cache_strategy,
            disable_radix_cache=args.disable_radix_cache,
            max_running_requests=args.max_running_requests,
            speculative_num_draft_tokens=draft,
            mamba_ssm_dtype=args.mamba_ssm_dtype,
            context_length=args.context_length,
            max_total_tokens=args.max_total_tokens,
            gpu_arch=args.gpu_arch,
        ),
    )


# --- both -----------------------------------------------------------------------------------

Reservation = TypeVar("Reservation", VllmReservation, SglangReservation)


def _noted(
    flags: dict[str, str], notes: list[str], compute: Callable[[], Reservation]
) -> Reservation:
    """``compute()`` with ``notes`` added to its assumptions, its refusals naming the
    command-line flag instead of the argument."""
    try:
        reservation: Reservation = compute()
    except ServerArgumentError as error:
        field = error.field or ""
        message = str(error)
        if field in flags and message.startswith(f"argument {field}:"):
            message = f"argument {flags[field]}:" + message[len(f"argument {field}:") :]
        raise ServerArgumentError(message, field=error.field) from None
    return replace(reservation, assumptions=(*reservation.assumptions, *notes))


def refuse_unknown(server: str, extras: Sequence[str]) -> str:
    """One line for flags the command did not take: the first, named, as the server's flag that
    is not modelled, or as a flag the server does not have."""
    first = extras[0]
    name = first.split("=", 1)[0]
    known = VLLM_FLAGS if server == "vllm" else SGLANG_FLAGS
    label = "vLLM 0.33.0" if server == "vllm" else "SGLang 0.5.23"
    normal = name.replace("_", "-") if name.startswith("--") else name
    if normal.startswith("--no-") and "--" + normal[5:] in known:
        normal = "--" + normal[5:]
    if normal in known:
        return f"{label}'s {quoted(name)} is not modelled by decode-ring {server}; drop it"
    if not name.startswith("-"):
        return f"unexpected argument {quoted(first)}"
    return f"{quoted(name)} is not a {label} flag"
