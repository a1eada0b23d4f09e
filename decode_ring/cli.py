"""decode-ring: the depth a server would choose here and now, its fit, and a model's state.

Exit status: 0 when the chosen depth fits (or, post-load, when the decision is
left to the KV budget stage); 1 when the server would refuse to boot; 2 for a
usage error; 74 when the output cannot be written; 141 when its reader closed
the pipe early. Every error is one line on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, NoReturn, TextIO

from . import __version__
from ._facade import (
    explain_decode_rollback_ring_slots,
    parse_decode_ring_slots,
    rust_usize_from_str,
)
from .models import LAYOUTS, ModelConfigError
from .preflight import (
    DecodeRingConflict,
    PostLoadKvHeadroom,
    PreLoadFreeMemory,
    RingSlot,
    Yardstick,
    pin_decode_ring_slots,
    preflight,
)
from .render import render
from .servers.commands import (
    SGLANG_EPILOG,
    VLLM_EPILOG,
    refuse_unknown,
    run_sglang,
    run_vllm,
    sglang_flags,
    vllm_flags,
)
from .sizing import (
    DEFAULT_BATCH_SIZES,
    DEFAULT_TP_SIZES,
    WORKED_EXAMPLE,
    WORKED_EXAMPLE_LAYOUT,
    plan,
    plot_plan,
    state_report,
)
from .units import ACCEPTED_FORMS, parse_size, quoted

EXIT_OK: Final = 0
EXIT_REFUSED: Final = 1
EXIT_USAGE: Final = 2
EXIT_IO_ERROR: Final = 74  # sysexits.h EX_IOERR
EXIT_BROKEN_PIPE: Final = 128 + 13  # what a shell reports for a writer killed by SIGPIPE
EXIT_INTERRUPTED: Final = 128 + 2
PROGRAM: Final = "decode-ring"

# The worked example: 48 gated-delta-net layers of 151.5 MiB per sequence, as
# the reference lays them out; batch 32, 7,039 MiB of reserve without the
# ring, 14.1 GiB free.
EXAMPLE: Final = {
    "max_batch_size": 32,
    "reserve_without_ring": 7039 * 2**20,
    "free": parse_size("14.1GiB"),
}


class UsageError(Exception):
    """A user error: one line on stderr, exit status 2."""


class Parser(argparse.ArgumentParser):
    """Refuses abbreviated flags (a future flag must not change what an old
    command line means) and raises ``UsageError`` instead of exiting."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(allow_abbrev=False, **kwargs)  # type: ignore[arg-type]

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def count(text: str) -> int:
    value = rust_usize_from_str(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"not a non-negative integer: {quoted(text)}")
    return value


def size(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def positive_count(text: str) -> int:
    value = count(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def count_list(text: str) -> tuple[int, ...]:
    values = tuple(positive_count(part) for part in text.split(","))
    if len(set(values)) != len(values):
        raise argparse.ArgumentTypeError(f"a value repeats in {quoted(text)}")
    return values


def ring_slots_flag(text: str) -> int | None:
    try:
        return parse_decode_ring_slots(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


# --- flags that several commands share --------------------------------------


def json_flag(command: argparse.ArgumentParser) -> None:
    command.add_argument("--json", action="store_true", help="one JSON object on stdout")


def ring_flags(command: argparse.ArgumentParser, *, ssm_layers_required: bool) -> None:
    """The decision's inputs: SSM layers, speculative decode, a pinned depth."""
    command.add_argument(
        "--ssm-layers",
        type=count,
        required=ssm_layers_required,
        metavar="N",
        help="SSM layers in the model",
    )
    command.add_argument(
        "--speculative", action="store_true", help="speculative decode (or dflash) is on"
    )
    command.add_argument(
        "--ssm-decode-ring-slots",
        type=ring_slots_flag,
        default=None,
        metavar="auto|N",
        help="the server flag: N (0 to 8) pins a depth",
    )
    json_flag(command)


def config_flag(command: argparse.ArgumentParser, *, required: bool) -> None:
    command.add_argument(
        "--config",
        required=required,
        metavar="PATH",
        help="the model's config.json, or the directory holding it",
    )


def one_tp_flag(command: argparse.ArgumentParser) -> None:
    command.add_argument("--tp", type=positive_count, default=1, metavar="N")


def layout_flags(command: argparse.ArgumentParser) -> None:
    """How the model's state is laid out: whose layout, dtypes, draft tokens."""
    command.add_argument("--layout", choices=LAYOUTS, default="vllm", help="whose layout")
    command.add_argument("--conv-dtype", metavar="D", help="bfloat16, float16 or float32")
    command.add_argument("--ssm-dtype", metavar="D", help="bfloat16, float16 or float32")
    command.add_argument(
        "--speculative-tokens",
        type=count,
        default=0,
        metavar="N",
        help="draft tokens per step (vLLM widens the conv window)",
    )


def state_options(args: argparse.Namespace) -> dict[str, object]:
    """The ``ssm_state`` options the layout flags give."""
    return {
        "layout": args.layout,
        "conv_dtype": args.conv_dtype,
        "ssm_dtype": args.ssm_dtype,
        "speculative_tokens": args.speculative_tokens,
    }


def pin(slots: int | None) -> None:
    """Publishes ``--ssm-decode-ring-slots N`` as the server flag would."""
    if slots is not None:
        try:
            pin_decode_ring_slots(slots)
        except DecodeRingConflict as error:
            raise UsageError(str(error)) from None


def flag(name: str) -> str:
    return f"--{name.replace('_', '-')}"


# --- decide -------------------------------------------------------------------


def decide_flags(command: argparse.ArgumentParser) -> None:
    ring_flags(command, ssm_layers_required=True)


def run_decide(args: argparse.Namespace) -> object:
    pin(args.ssm_decode_ring_slots)
    return explain_decode_rollback_ring_slots(args.ssm_layers, args.speculative)


# --- fit ----------------------------------------------------------------------


def fit_flags(command: argparse.ArgumentParser) -> None:
    ring_flags(command, ssm_layers_required=False)
    command.add_argument(
        "--example",
        action="store_true",
        help="the worked example (flags given override it)",
    )
    command.add_argument("--max-batch-size", type=count, metavar="B")
    command.add_argument(
        "--per-seq-state",
        type=size,
        metavar="SIZE",
        help="recurrent state of one sequence, all SSM layers",
    )
    command.add_argument(
        "--reserve-without-ring",
        type=size,
        metavar="SIZE",
        help="pre-load: the rest of the reserve",
    )
    command.add_argument("--free", type=size, metavar="SIZE", help="pre-load: free memory")
    command.add_argument(
        "--kv-floor",
        type=size,
        metavar="SIZE",
        help="post-load: the KV-cache floor (with --headroom)",
    )
    command.add_argument(
        "--headroom",
        type=size,
        metavar="SIZE",
        help="post-load: the predicted KV headroom (with --kv-floor)",
    )
    config_flag(command, required=False)
    one_tp_flag(command)
    layout_flags(command)


def worked_example_state() -> dict[str, int]:
    """The worked example's SSM layers and per-sequence state, from its config."""
    state = state_report(WORKED_EXAMPLE, None, layout=WORKED_EXAMPLE_LAYOUT).state
    return {"ssm_layers": state.ssm_layers, "per_seq_state": state.per_sequence_bytes}


def fit_inputs(args: argparse.Namespace) -> tuple[int, bool, RingSlot, Yardstick]:
    """The fit's inputs from the flags (``--example`` fills what is not given;
    ``--config`` gives the layers and the state), the speculative flag, and
    the yardstick they choose."""
    post_load = args.kv_floor is not None or args.headroom is not None
    if post_load and (args.kv_floor is None or args.headroom is None):
        raise UsageError("--kv-floor and --headroom go together")
    if post_load and (args.reserve_without_ring is not None or args.free is not None):
        raise UsageError(
            "--reserve-without-ring and --free fit pre-load; --kv-floor and --headroom "
            "post-load: give one pair"
        )
    if args.config is not None and (args.ssm_layers is not None or args.per_seq_state is not None):
        raise UsageError(
            "--config gives the SSM layers and the per-sequence state: "
            "drop --ssm-layers and --per-seq-state"
        )
    names = ["ssm_layers", "max_batch_size", "per_seq_state"]
    if not post_load:
        names += ["reserve_without_ring", "free"]
    given = {name: getattr(args, name) for name in names}
    if args.config is not None:
        state = state_report(args.config, None, tp_size=args.tp, **state_options(args)).state
        given.update(ssm_layers=state.ssm_layers, per_seq_state=state.per_sequence_bytes)
    if args.example:
        example = {**EXAMPLE, **worked_example_state()}
        given = {name: example[name] if value is None else value for name, value in given.items()}
    missing = [flag(name) for name, value in given.items() if value is None]
    if missing:
        raise UsageError(f"fit needs {', '.join(missing)} (or --config, or --example)")
    try:
        slot = RingSlot(given["max_batch_size"], given["per_seq_state"])
    except OverflowError as error:
        raise UsageError(str(error)) from None
    yardstick: Yardstick
    if post_load:
        yardstick = PostLoadKvHeadroom(args.kv_floor, args.headroom)
    else:
        yardstick = PreLoadFreeMemory(given["reserve_without_ring"], given["free"])
    speculative = args.speculative or args.speculative_tokens > 0
    return given["ssm_layers"], speculative, slot, yardstick


def run_fit(args: argparse.Namespace) -> object:
    ssm_layers, speculative, slot, yardstick = fit_inputs(args)
    pin(args.ssm_decode_ring_slots)
    return preflight(ssm_layers, speculative, slot, yardstick)


# --- state --------------------------------------------------------------------


def state_flags(command: argparse.ArgumentParser) -> None:
    config_flag(command, required=True)
    one_tp_flag(command)
    layout_flags(command)
    command.add_argument("--max-batch-size", type=count, metavar="B", help="also size the ring")
    json_flag(command)


def run_state(args: argparse.Namespace) -> object:
    return state_report(args.config, args.max_batch_size, tp_size=args.tp, **state_options(args))


# --- plan ---------------------------------------------------------------------


def plan_flags(command: argparse.ArgumentParser) -> None:
    config_flag(command, required=True)
    layout_flags(command)
    command.add_argument("--free", type=size, required=True, metavar="SIZE", help="per rank")
    command.add_argument(
        "--reserve-without-ring", type=size, required=True, metavar="SIZE", help="per rank"
    )
    command.add_argument(
        "--tp",
        type=count_list,
        default=DEFAULT_TP_SIZES,
        metavar="N,N,...",
        help="tensor-parallel sizes (default 1,2,4,8)",
    )
    command.add_argument(
        "--max-batch-size",
        type=count_list,
        default=DEFAULT_BATCH_SIZES,
        metavar="B,B,...",
        help="batch sizes (default 8,16,32,64,128,256,512)",
    )
    command.add_argument("--plot", metavar="FILE.png", help="also draw the grid (needs matplotlib)")
    json_flag(command)


def run_plan(args: argparse.Namespace) -> object:
    grid = plan(
        args.config,
        args.free,
        args.reserve_without_ring,
        args.tp,
        args.max_batch_size,
        use_speculative=args.speculative_tokens > 0,
        **state_options(args),
    )
    if args.plot is not None:
        try:
            plot_plan(grid, args.plot)
        except ImportError:
            raise UsageError("--plot needs matplotlib: pip install 'decode_ring[plot]'") from None
    return grid


# --- the commands ---------------------------------------------------------------


@dataclass(frozen=True)
class Command:
    """One subcommand: its help line, the function that adds its flags, the
    function that computes its value (``render`` prints it), and the text
    under its flags in ``--help``. A new command is one entry in ``COMMANDS``."""

    help: str
    flags: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], object]
    epilog: str | None = None
    # The line for flags the command does not take (None: argparse's own).
    unknown: Callable[[list[str]], str] | None = None


SIZES_EPILOG: Final = f"SIZE: {ACCEPTED_FORMS}."
COMMANDS: Final[dict[str, Command]] = {
    "decide": Command("the depth the runtime would choose here", decide_flags, run_decide),
    "fit": Command("preflight: request, fit to memory, publish", fit_flags, run_fit, SIZES_EPILOG),
    "state": Command("a model's SSM state from its config.json", state_flags, run_state),
    "plan": Command(
        "depth by tensor-parallel size and batch, memory per rank",
        plan_flags,
        run_plan,
        SIZES_EPILOG,
    ),
    "vllm": Command(
        "what vLLM 0.33.0 reserves for the state, from a launch line's flags",
        vllm_flags,
        run_vllm,
        VLLM_EPILOG,
        lambda extras: refuse_unknown("vllm", extras),
    ),
    "sglang": Command(
        "what SGLang 0.5.23 reserves for the state, from a launch line's flags",
        sglang_flags,
        run_sglang,
        SGLANG_EPILOG,
        lambda extras: refuse_unknown("sglang", extras),
    ),
}


def build_parser() -> Parser:
    """The ``decode-ring`` parser: one subparser per entry of ``COMMANDS``."""
    parser = Parser(prog=PROGRAM, description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=f"{PROGRAM} {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for name, command in COMMANDS.items():
        command.flags(subparsers.add_parser(name, help=command.help, epilog=command.epilog))
    return parser


def one_line(text: str) -> str:
    """``text`` with every character that is not printable escaped, so that
    an error is one line whatever value it quotes."""
    return "".join(char if char.isprintable() else ascii(char)[1:-1] for char in text)


def write(stream: TextIO, text: str) -> None:
    """Writes ``text`` and a newline, escaping what the stream cannot encode."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    stream.write(text.encode(encoding, "backslashreplace").decode(encoding) + "\n")
    stream.flush()


def discard_unwritten_output() -> None:
    """Points stdout at nothing: the interpreter flushes it again at exit, and
    a second failure would end the command with a traceback and status 120."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def main(argv: Sequence[str] | None = None) -> int:
    """Runs ``decode-ring``; returns the exit status."""
    try:
        args, extras = build_parser().parse_known_args(argv)
        if extras:
            unknown = COMMANDS[args.command].unknown
            raise UsageError(
                unknown(extras) if unknown else f"unrecognized arguments: {' '.join(extras)}"
            )
        try:
            rendered = render(COMMANDS[args.command].run(args))
        except (ModelConfigError, OverflowError) as error:
            raise UsageError(str(error)) from None
        write(sys.stdout, json.dumps(rendered.json) if args.json else "\n".join(rendered.lines))
    except UsageError as error:
        write(sys.stderr, f"{PROGRAM}: error: {one_line(str(error))}")
        return EXIT_USAGE
    except BrokenPipeError:
        discard_unwritten_output()
        return EXIT_BROKEN_PIPE
    except OSError as error:
        discard_unwritten_output()
        write(sys.stderr, f"{PROGRAM}: error: cannot write the output: {one_line(str(error))}")
        return EXIT_IO_ERROR
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except SystemExit as finished:  # --help and --version: argparse printed and exits
        return finished.code if isinstance(finished.code, int) else EXIT_USAGE
    if rendered.refusal is not None:
        write(sys.stderr, f"{PROGRAM}: {one_line(rendered.refusal)}")
        return EXIT_REFUSED
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
