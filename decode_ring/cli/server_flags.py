"""The flags of a server's launch line that ``decode-ring vllm`` and ``decode-ring sglang``
model: one table per server, and the servers' own value grammars.

Each ``ServerFlag`` states, once, a flag's spellings as the server has them (its aliases; vLLM
also takes ``--a_b`` for ``--a-b``, as its ``FlexibleArgumentParser`` rewrites argv, and SGLang
does not), the server's grammar for its
value, its default, the API keyword of ``vllm_reservation`` / ``sglang_reservation`` it feeds,
and whether it changes memory. The argparse options, the flag a refusal names, and the call all
derive from the table. The package's own flags (``--config``, ``--gpu-arch``, ``--json``,
``--available-memory``) are rows too, marked ``package``; its sizes read as every size of the
package does (``parsing.size``).

Grammars, as the servers read their flags: vLLM's ``human_readable_int`` for
``--max-model-len`` and ``--kv-cache-memory-bytes`` (vllm/utils/argparse_utils.py:30-75), JSON
for ``--speculative-config``; non-negative integers and positive finite floats elsewhere (the
servers' ``int`` and ``float``, whose negative values the reservations refuse).
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..gpus import GPUS
from ..printable import show
from ..releases import SGLANG, VLLM, VLLM_RELEASES
from ..releases.sglang import MODELLED as SGLANG_MODELLED
from ..servers import GPU_ARCHS
from ..servers.sglang import MAMBA_RADIX_CACHE_STRATEGIES
from ..snapshots import CONFIG_HELP
from .parsing import size

__all__ = [
    "SGLANG_FLAGS",
    "SGLANG_SPECULATIVE_ALGORITHMS",
    "VLLM_FLAGS",
    "ServerFlag",
    "add_flags",
    "argument_flags",
    "keywords",
]

_HUMAN_INT: Final = re.compile(r"([0-9]+(?:\.[0-9]+)?)([kKmMgGtT])", re.ASCII)
_DECIMAL: Final = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BINARY: Final = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
_DIGITS: Final = re.compile(r"[0-9]+", re.ASCII)
# Longer numbers exceed the int64 the servers hold (and int() of thousands of digits raises).
_MAX_DIGITS: Final = 24
# --speculative-config keys read; "method" and "model" choose the drafter, whose own KV layers
# are not counted (said in the assumptions).
_SPECULATIVE_KEYS: Final = ("num_speculative_tokens", "method", "model")
SGLANG_SPECULATIVE_ALGORITHMS: Final = ("EAGLE", "EAGLE3", "NEXTN", "MTP")


def server_int(text: str) -> int:
    """A non-negative integer in digits (an optional ``+`` and surrounding spaces, as ``int``)."""
    stripped = text.strip()
    stripped = stripped[1:] if stripped.startswith("+") else stripped
    if not _DIGITS.fullmatch(stripped):
        raise argparse.ArgumentTypeError(f"not a non-negative integer: {show(text, limit=40)}")
    if len(stripped) > _MAX_DIGITS:
        raise argparse.ArgumentTypeError(f"more than 2**63 - 1: {show(text, limit=40)}")
    return int(stripped)


def human_readable_int(text: str) -> int:
    """vLLM's ``human_readable_int``: ``25.6k`` is 25,600, ``1K`` 1,024; decimals with a binary
    suffix are refused (vllm/utils/argparse_utils.py:30-75); negative values too."""
    match = _HUMAN_INT.fullmatch(text.strip())
    if match is None:
        if text.strip() in ("-1", "auto"):
            raise argparse.ArgumentTypeError(
                f"{show(text, limit=40)}: vLLM's auto-fit of the length to memory is not modelled"
            )
        return server_int(text)
    number, suffix = match.groups()
    if len(number) > _MAX_DIGITS:
        raise argparse.ArgumentTypeError(f"more than 2**63 - 1: {show(text, limit=40)}")
    if suffix in _DECIMAL:
        return int(float(number) * _DECIMAL[suffix])
    if "." in number:
        raise argparse.ArgumentTypeError(
            f"decimals are not allowed with binary suffixes like {suffix}; did you mean "
            f"{number}{suffix.lower()}?"
        )
    return int(number) * _BINARY[suffix]


def server_float(text: str) -> float:
    """A finite number above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {show(text, limit=40)}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number above 0: {show(text, limit=40)}")
    return value


def server_fraction(text: str) -> float:
    """A float as the server reads it (``float``); its range is the reservation's to check, with
    the server's message."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {show(text, limit=40)}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"not a finite number: {show(text, limit=40)}")
    return value


def server_number(text: str) -> float:
    """A non-negative number (vLLM's ``--cpu-offload-gb``, ``ge=0``)."""
    value = server_fraction(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {show(text, limit=40)}")
    return value


def json_object(text: str) -> dict[str, Any]:
    """A JSON object, as vLLM and SGLang read their dict flags (``json.loads``)."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        raise argparse.ArgumentTypeError(f"not JSON: {show(text, limit=40)}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"must be a JSON object: {show(text, limit=40)}")
    return value


def speculative_config(text: str) -> dict[str, Any]:
    """vLLM's ``--speculative-config`` JSON, the keys this package reads."""
    value = json_object(text)
    for key in value:
        if key not in _SPECULATIVE_KEYS:
            raise argparse.ArgumentTypeError(
                f"key {show(str(key), limit=40)} is not modelled; read are "
                f"{', '.join(_SPECULATIVE_KEYS)}"
            )
    tokens = value.get("num_speculative_tokens", 0)
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 0:
        raise argparse.ArgumentTypeError("num_speculative_tokens must be a non-negative integer")
    for key in ("method", "model"):
        if key in value and not isinstance(value[key], str):
            raise argparse.ArgumentTypeError(f"{key} must be a string")
    return value


@dataclass(frozen=True, slots=True)
class ServerFlag:
    """One modelled flag of a launch line.

    ``flag`` and ``aliases``: its spellings (the server's). ``negations``: the server's other
    spellings that turn a negatable flag off (vLLM's ``--disable-prefix-caching``).
    ``read``: the grammar of its value (``None`` for a ``switch``: ``"store_true"``, or
    ``"negatable"`` for a ``--flag`` / ``--no-flag`` pair). ``default``: the server's default.
    ``keyword``: the API keyword it feeds directly (``None``: the command combines it with
    other flags, as the server does). ``memory``: whether it changes what the server reserves.
    ``package``: the package's own flag, not the server's. ``choices``: the values a package
    flag takes (argparse checks them; no server flag modelled has choices). ``state_argument``:
    the argument of ``ssm_state`` the reservation passes it on as, which a refusal of the state
    names. ``many``: the server's flag takes several values (``nargs='+'``)."""

    flag: str
    keyword: str | None
    read: Callable[[str], Any] | None = None
    switch: str | None = None
    default: object = None
    aliases: tuple[str, ...] = ()
    memory: bool = True
    package: bool = False
    metavar: str | None = None
    help: str | None = None
    choices: tuple[str, ...] | None = None
    state_argument: str | None = None
    negations: tuple[str, ...] = ()
    argument: str | None = None
    many: bool = False

    @property
    def dest(self) -> str:
        """The namespace attribute argparse stores its value in."""
        return (self.keyword or self.argument or self.flag[2:]).replace("-", "_")

    def spellings(self, *, underscores: bool) -> tuple[str, ...]:
        """Every spelling the command takes: the flag, its aliases, and, for a server that takes
        them (``underscores``), the underscore form of the server's own flag."""
        underscored = "--" + self.flag[2:].replace("-", "_")
        extra = (
            () if self.package or not underscores or underscored == self.flag else (underscored,)
        )
        return (self.flag, *self.aliases, *extra)


_CONFIG: Final = ServerFlag(
    "--config",
    None,
    str,
    package=True,
    memory=False,
    metavar="MODEL",
    help="the model the earlier way, before the launch line: " + CONFIG_HELP,
)
_ALLOW_UNMODELLED: Final = ServerFlag(
    "--allow-unmodelled",
    None,
    switch="store_true",
    default=False,
    package=True,
    memory=False,
    help="answer a launch line with flags that change memory in ways not modelled, ignoring "
    "them (and naming them)",
)
_VLLM_VERSION: Final = ServerFlag(
    "--vllm-version",
    "version",
    read=str,
    package=True,
    memory=False,
    metavar="VERSION",
    help=f"the vLLM release whose rules answer: any from {VLLM_RELEASES[0]} (default "
    f"{VLLM.version}, the newest modelled); a patch takes its minor's rules, an rc or dev build "
    "those of the release it precedes",
)
_SGLANG_VERSION: Final = ServerFlag(
    "--sglang-version",
    "version",
    read=str,
    package=True,
    memory=False,
    metavar="VERSION",
    help=f"the SGLang release whose rules answer: any from {SGLANG_MODELLED} (default "
    f"{SGLANG.version}, the newest modelled); an rc or dev build takes those of the release it "
    "precedes",
)
_COMPARE: Final = ServerFlag(
    "--compare",
    None,
    read=str,
    package=True,
    memory=False,
    metavar="VERSION",
    argument="compare",
    help="also answer the launch under another release, and show which rules differ and what "
    "each did to the numbers",
)
_GPU_ARCH: Final = ServerFlag(
    "--gpu-arch",
    "gpu_arch",
    read=str,
    package=True,
    choices=tuple(GPU_ARCHS),
    help="the GPU's architecture, over --gpu's (default sm90: H100/H200, without --gpu)",
)
_GPU: Final = ServerFlag(
    "--gpu",
    "gpu",
    read=str,
    package=True,
    metavar="NAME",
    help="the GPU: one of " + ", ".join(GPUS) + ", the name nvidia-smi prints, or auto (NVML)",
)
_GPU_MEMORY: Final = ServerFlag(
    "--gpu-memory",
    "gpu_memory_bytes",
    read=size,
    package=True,
    metavar="SIZE",
    help="the GPU's total memory, for a GPU the table lacks (or over the table's)",
)


def _estimate(flag: str, keyword: str, what: str) -> ServerFlag:
    return ServerFlag(
        flag, keyword, read=size, package=True, metavar="SIZE", help=f"{what}, per rank"
    )


_WEIGHTS_MEMORY: Final = _estimate(
    "--weights-memory", "weights_bytes", "the weights instead of the snapshot's safetensors'"
)
_VLLM_ESTIMATES: Final = (
    _WEIGHTS_MEMORY,
    _estimate("--activation-memory", "activation_bytes", "the peak activation, not estimated"),
    _estimate("--cuda-graph-memory", "cuda_graph_bytes", "the CUDA graphs, not estimated"),
    _estimate("--non-torch-memory", "non_torch_bytes", "non-torch memory, not estimated"),
)
_JSON: Final = ServerFlag(
    "--json",
    None,
    switch="store_true",
    default=False,
    package=True,
    memory=False,
    help="one JSON object on stdout",
)

VLLM_FLAGS: Final = (
    _CONFIG,
    _ALLOW_UNMODELLED,
    _GPU,
    _GPU_MEMORY,
    _GPU_ARCH,
    *_VLLM_ESTIMATES,
    _JSON,
    _VLLM_VERSION,
    _COMPARE,
    ServerFlag(
        "--tensor-parallel-size",
        "tensor_parallel_size",
        server_int,
        default=1,
        aliases=("-tp",),
        metavar="N",
        state_argument="tp_size",
    ),
    ServerFlag("--max-num-seqs", "max_num_seqs", server_int, metavar="N"),
    ServerFlag("--max-model-len", "max_model_len", human_readable_int, metavar="N"),
    ServerFlag("--block-size", "block_size", server_int, metavar="N"),
    ServerFlag(
        "--enable-prefix-caching",
        "enable_prefix_caching",
        switch="negatable",
        negations=("--disable-prefix-caching",),
        help="default: on for a hybrid model, off for an attention-free one",
    ),
    # vLLM's spelling of speculative_config.num_speculative_tokens (vllm/engine/arg_utils.py:
    # 1866-1873); it has no --num-speculative-tokens.
    ServerFlag(
        "--spec-tokens",
        None,
        server_int,
        metavar="N",
        state_argument="speculative_tokens",
        argument="num_speculative_tokens",
    ),
    ServerFlag("--speculative-config", None, speculative_config, aliases=("-sc",), metavar="JSON"),
    ServerFlag(
        "--mamba-cache-dtype",
        "mamba_cache_dtype",
        str,
        default="auto",
        metavar="D",
        state_argument="conv_dtype",
    ),
    ServerFlag(
        "--mamba-ssm-cache-dtype",
        "mamba_ssm_cache_dtype",
        str,
        default="auto",
        metavar="D",
        state_argument="ssm_dtype",
    ),
    ServerFlag("--kv-cache-dtype", "kv_cache_dtype", str, default="auto", metavar="D"),
    ServerFlag("--kv-cache-memory-bytes", "kv_cache_memory_bytes", human_readable_int, metavar="N"),
    ServerFlag("--use-replayssm", "use_replayssm", switch="negatable", default=False),
    ServerFlag(
        "--replayssm-buffer-len", "replayssm_buffer_len", server_int, default=16, metavar="N"
    ),
    ServerFlag(
        "--gpu-memory-utilization",
        "gpu_memory_utilization",
        server_fraction,
        aliases=("--device-memory-utilization",),
        help="default: the release's (0.9, 0.92 from vLLM 0.20.0)",
    ),
    ServerFlag("--dtype", "dtype", str, default="auto"),
    ServerFlag("--quantization", "quantization", str, aliases=("-q",)),
    ServerFlag("--max-num-batched-tokens", "max_num_batched_tokens", human_readable_int),
    ServerFlag("--enforce-eager", "enforce_eager", switch="negatable", default=False),
    ServerFlag("--cpu-offload-gb", "cpu_offload_gb", server_number, default=0),
    ServerFlag("--hf-overrides", "hf_overrides", json_object),
    ServerFlag("--compilation-config", None, json_object, aliases=("-cc",)),
    ServerFlag("--cudagraph-capture-sizes", None, server_int, many=True),
    ServerFlag("--max-cudagraph-capture-size", None, server_int),
    ServerFlag("--spec-method", None, str),
    ServerFlag("--spec-model", None, str),
)

SGLANG_FLAGS: Final = (
    _CONFIG,
    _ALLOW_UNMODELLED,
    _GPU,
    _GPU_MEMORY,
    _GPU_ARCH,
    _WEIGHTS_MEMORY,
    _JSON,
    _SGLANG_VERSION,
    _COMPARE,
    # SGLang takes --tp as an unambiguous prefix of --tp-size (argparse's allow_abbrev).
    ServerFlag(
        "--tp-size", "tp_size", server_int, default=1, aliases=("--tp", "--tensor-parallel-size")
    ),
    ServerFlag(
        "--available-memory",
        "available_memory",
        size,
        package=True,
        metavar="SIZE",
        help="per rank, after the weights: what _handle_max_mamba_cache divides",
    ),
    ServerFlag("--max-mamba-cache-size", "max_mamba_cache_size", server_int, metavar="N"),
    ServerFlag(
        "--mamba-full-memory-ratio",
        "mamba_full_memory_ratio",
        server_float,
        metavar="R",
        help="default: the release's (0.9; 0.2 in 0.5.3.post2)",
    ),
    ServerFlag(
        "--mamba-radix-cache-strategy",
        "mamba_radix_cache_strategy",
        str,
        default="auto",
        metavar="|".join(MAMBA_RADIX_CACHE_STRATEGIES),
    ),
    ServerFlag("--disable-radix-cache", "disable_radix_cache", switch="store_true", default=False),
    ServerFlag(
        "--disable-overlap-schedule",
        "disable_overlap_schedule",
        switch="store_true",
        default=False,
    ),
    ServerFlag("--max-running-requests", "max_running_requests", server_int, metavar="N"),
    ServerFlag(
        "--speculative-algorithm", None, str, metavar="|".join(SGLANG_SPECULATIVE_ALGORITHMS)
    ),
    ServerFlag("--speculative-num-draft-tokens", None, server_int, metavar="N"),
    ServerFlag("--speculative-num-steps", None, server_int, memory=False, metavar="N"),
    ServerFlag("--speculative-eagle-topk", None, server_int, metavar="N"),
    ServerFlag(
        "--mamba-ssm-dtype", "mamba_ssm_dtype", str, metavar="D", state_argument="ssm_dtype"
    ),
    ServerFlag("--context-length", "context_length", server_int, metavar="N"),
    ServerFlag("--max-total-tokens", "max_total_tokens", server_int, metavar="N"),
    ServerFlag("--mem-fraction-static", "mem_fraction_static", server_fraction),
    ServerFlag("--page-size", "page_size", server_int),
    ServerFlag("--kv-cache-dtype", "kv_cache_dtype", str, default="auto"),
    ServerFlag("--chunked-prefill-size", "chunked_prefill_size", server_int),
    ServerFlag("--json-model-override-args", "json_model_override_args", json_object),
    ServerFlag("--dtype", "dtype", str, default="auto"),
    ServerFlag("--quantization", "quantization", str),
    ServerFlag("--speculative-draft-model-path", None, str, aliases=("--speculative-draft-model",)),
)


def add_flags(
    command: argparse.ArgumentParser, table: Sequence[ServerFlag], *, underscores: bool
) -> None:
    """The argparse options of every flag of ``table`` (with the underscore spellings of the
    server's own flags where the server takes them)."""
    for spec in table:
        options: dict[str, Any] = {"dest": spec.dest, "default": spec.default}
        if spec.switch == "negatable":
            options["action"] = argparse.BooleanOptionalAction
        elif spec.switch == "store_true":
            options["action"] = "store_true"
        else:
            options.update(type=spec.read, metavar=spec.metavar, choices=spec.choices)
        command.add_argument(*spec.spellings(underscores=underscores), help=spec.help, **options)
        if spec.negations:
            command.add_argument(
                *spec.negations, dest=spec.dest, action="store_false", help=argparse.SUPPRESS
            )


def keywords(table: Sequence[ServerFlag], args: argparse.Namespace) -> dict[str, Any]:
    """The API keywords the flags of ``table`` feed directly, from the parsed flags."""
    return {spec.keyword: getattr(args, spec.dest) for spec in table if spec.keyword}


def argument_flags(table: Sequence[ServerFlag]) -> Mapping[str, str]:
    """Each API argument (a keyword, or the argument a combined flag makes) and the flag that
    names it in a refusal."""
    names = {spec.dest: spec.flag for spec in table}
    names.update((spec.state_argument, spec.flag) for spec in table if spec.state_argument)
    return names
