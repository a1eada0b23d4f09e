"""``decode-ring vllm`` and ``decode-ring sglang``: the flags of a server's launch line, in the
server's own spellings (``server_flags``), and what the server reserves for them.

A flag of the server's that the table does not model is refused in one line that says it is the
server's (not modelled) or nobody's (``refuse_unknown``, against the server's whole flag list,
``known_flags``). The speculative flags combine as the servers combine them.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from ..printable import show
from ..releases import SGLANG, VLLM, Release
from ..servers import sglang_reservation, vllm_reservation
from ..snapshots import CONFIG_HELP, resolve_model
from ..units import ACCEPTED_FORMS
from .known_flags import known_flags
from .parsing import UsageError
from .server_flags import (
    SGLANG_FLAGS,
    SGLANG_SPECULATIVE_ALGORITHMS,
    VLLM_FLAGS,
    ServerFlag,
    add_flags,
    argument_flags,
    keywords,
)

__all__ = ["SGLANG_COMMAND", "VLLM_COMMAND", "ServerCommand"]


@dataclass(frozen=True, slots=True)
class ServerCommand:
    """One server's command: its release, its flag table, whether the server takes ``--a_b``
    for ``--a-b``, how its combined flags become API keywords (with notes for the
    assumptions), and the API call."""

    name: str
    release: Release
    table: tuple[ServerFlag, ...]
    underscores: bool
    combine: Callable[[argparse.Namespace], tuple[dict[str, Any], list[str]]]
    reserve: Callable[..., Any]
    epilog: str

    @property
    def argument_flags(self) -> Mapping[str, str]:
        """Each API argument and the flag that names it in a refusal."""
        return argument_flags(self.table)

    def flags(self, command: argparse.ArgumentParser) -> None:
        """``--config`` and the table's flags."""
        command.add_argument("--config", required=True, metavar="PATH", help=CONFIG_HELP)
        add_flags(command, self.table, underscores=self.underscores)

    def run(self, args: argparse.Namespace) -> Any:
        """The reservation for the flags, the combined flags' notes among its assumptions."""
        combined, notes = self.combine(args)
        reservation = self.reserve(
            resolve_model(args.config).config, **keywords(self.table, args), **combined
        )
        return replace(reservation, assumptions=(*reservation.assumptions, *notes))

    def refuse_unknown(self, extras: Sequence[str]) -> str:
        """One line for flags the command did not take: the first, named, as the server's flag
        that is not modelled, or as a flag the server does not have."""
        first = extras[0]
        name = first.split("=", 1)[0]
        normal = name.replace("_", "-") if name.startswith("--") and self.underscores else name
        if normal in known_flags(self.release):
            return (
                f"{self.release}'s {show(name, limit=40)} is not modelled by decode-ring "
                f"{self.name}; drop it"
            )
        if not name.startswith("-"):
            return f"unexpected argument {show(first, limit=40)}"
        return f"{show(name, limit=40)} is not a {self.release} flag"


def _vllm_speculative(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    """The draft tokens from ``--num-speculative-tokens`` or ``--speculative-config``, which
    vLLM refuses together (vllm/engine/arg_utils.py:2108-2121), and what the config's other keys
    say."""
    config = args.speculative_config
    if config is None:
        return {"num_speculative_tokens": args.num_speculative_tokens or 0}, []
    if args.num_speculative_tokens is not None and "num_speculative_tokens" in config:
        raise UsageError(
            "argument --speculative-config: --spec-tokens and --speculative-config"
            "['num_speculative_tokens'] are mutually exclusive (vLLM)"
        )
    tokens = config.get("num_speculative_tokens", args.num_speculative_tokens or 0)
    notes = [
        f"speculative {key} {config[key]!a}: its drafter's own KV layers are not counted"
        for key in ("method", "model")
        if key in config
    ]
    return {"num_speculative_tokens": tokens}, notes


def _sglang_speculative(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    """The draft tokens, with SGLang's pairing of the speculative flags: an algorithm needs
    its draft tokens given here (SGLang's auto choice is not modelled), and only a linear
    chain (topk 1) is modelled."""
    algorithm, draft = args.speculative_algorithm, args.speculative_num_draft_tokens
    if algorithm is None:
        for name in ("speculative_num_draft_tokens", "speculative_num_steps"):
            if getattr(args, name) is not None:
                raise UsageError(
                    f"argument --{name.replace('_', '-')}: needs --speculative-algorithm"
                )
        return {"speculative_num_draft_tokens": 0}, []
    if algorithm.upper() not in SGLANG_SPECULATIVE_ALGORITHMS:
        raise UsageError(
            f"argument --speculative-algorithm: {show(algorithm, limit=40)} is not modelled; use "
            f"{', '.join(SGLANG_SPECULATIVE_ALGORITHMS)}"
        )
    if args.speculative_eagle_topk not in (None, 1):
        raise UsageError(
            "argument --speculative-eagle-topk: only a linear draft chain (topk 1) is modelled"
        )
    if not draft:
        raise UsageError(
            "argument --speculative-num-draft-tokens: needed with --speculative-algorithm "
            "(SGLang's automatic choice is not modelled)"
        )
    notes = [f"speculative algorithm {algorithm.upper()}"]
    if args.speculative_num_steps is not None:
        notes.append(
            f"speculative num steps {args.speculative_num_steps}: does not change the state pool"
        )
    return {"speculative_num_draft_tokens": draft}, notes


VLLM_COMMAND: Final = ServerCommand(
    "vllm",
    VLLM,
    VLLM_FLAGS,
    True,
    _vllm_speculative,
    vllm_reservation,
    f"Flags are {VLLM}'s own; any other vLLM flag is refused as not modelled. N for "
    "--max-model-len and --kv-cache-memory-bytes: an integer, or with k/m/g/t (powers of 1000) "
    "or K/M/G/T (powers of 1024), as vLLM reads them.",
)
SGLANG_COMMAND: Final = ServerCommand(
    "sglang",
    SGLANG,
    SGLANG_FLAGS,
    False,
    _sglang_speculative,
    sglang_reservation,
    f"Flags are {SGLANG}'s own, plus --available-memory; any other SGLang flag is refused "
    f"as not modelled. SIZE: {ACCEPTED_FORMS}.",
)
