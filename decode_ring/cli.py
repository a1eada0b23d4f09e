"""decode-ring: the depth a server would choose here and now, its fit, and a model's state.

Each command has a function for its flags and one that computes its value,
registered in ``COMMANDS``; ``render`` prints the value. Every error is one
line on stderr (and, with ``--json``, a JSON object on stdout).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, NoReturn, TextIO

from . import __version__
from ._facade import (
    DISABLE_WATCHDOGS_VARIABLE,
    RESERVE_RING_FULL_VARIABLE,
    RING_OVERRIDE_VARIABLE,
    parse_decode_ring_slots,
    rust_usize_from_str,
)
from ._usize_py import USIZE_MAX
from .models import LAYOUTS, MAX_LAYERS, ModelConfigError, SsmState
from .preflight import (
    DecodeRingConflict,
    PostLoadKvHeadroom,
    PreLoadFreeMemory,
    RingSlot,
    Yardstick,
    pin_decode_ring_slots,
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
    PLAN_SERVERS,
    WORKED_EXAMPLE,
    WORKED_EXAMPLE_LAYOUT,
    Plan,
    PlotFormatError,
    Reserve,
    explain_decision,
    fit_report,
    plan,
    plot_plan,
    server_plan,
    state_report,
)
from .snapshots import CONFIG_HELP, HUB_EXTRA, ModelReference, resolve_model, snapshot_weights
from .units import ACCEPTED_FORMS, parse_memory_size, quoted

EXIT_OK: Final = 0
EXIT_REFUSED: Final = 1
EXIT_USAGE: Final = 2
EXIT_IO_ERROR: Final = 74  # sysexits.h EX_IOERR
EXIT_BROKEN_PIPE: Final = 128 + 13  # what a shell reports for a writer killed by SIGPIPE
EXIT_INTERRUPTED: Final = 128 + 2
PROGRAM: Final = "decode-ring"

HELP_EPILOG: Final = f"""\
exit status:
  0    the chosen depth fits (fit; post-load, also when the KV budget stage
       decides); some cell of the grid boots (plan); decide, state, vllm, sglang
  1    the server would refuse to boot (fit); no cell of the grid boots (plan)
  2    a usage error, or a config that cannot be read or that the servers refuse
  74   the output (or the --plot file) cannot be written
  130  interrupted
  141  the reader closed the pipe early

environment:
  {RING_OVERRIDE_VARIABLE}        1: the full ring, 0: none (the decision)
  {DISABLE_WATCHDOGS_VARIABLE}      true (any case, trimmed): skip the ring
  {RESERVE_RING_FULL_VARIABLE}  present, any value: fit reserves the full depth
  DECODE_RING_NO_EXTENSIONS      set, not empty or 0: the pure-Python core
  HF_HOME, HF_HUB_CACHE          where --config ORG/NAME is looked up ({HUB_EXTRA})

Run decode-ring COMMAND --help for a command's flags."""

SEE_TOP_HELP: Final = f"Exit statuses and environment variables: {PROGRAM} --help."
SIZES_EPILOG: Final = (
    f"SIZE: {ACCEPTED_FORMS}. So 80G is 80 x 10^9 bytes and 80GiB 80 x 2^30. A bare "
    "number is bytes, and a bare number under 1 MiB (but 0) is refused: write 80GiB, or 80B "
    f"to mean bytes. {SEE_TOP_HELP}"
)
GIVEN: Final = "given_flags"  # the namespace attribute that records the flags given

# The worked example: 48 gated-delta-net layers of 151.5 MiB per sequence, as
# the reference lays them out; batch 32, 7,039 MiB of reserve without the
# ring, 14.1 GiB free.
EXAMPLE: Final = {
    "max_batch_size": 32,
    "reserve_without_ring": 7039 * 2**20,
    "free": parse_memory_size("14.1GiB"),
}


class UsageError(Exception):
    """A user error: one line on stderr, exit status 2."""


class PlotWriteError(Exception):
    """The ``--plot`` file cannot be written: one line on stderr, exit 74."""


class Once(argparse.Action):
    """Stores a flag's value and records that it was given (in the namespace's
    ``GIVEN``); the same flag again with another value is refused."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        self.flag_value = kwargs.pop("flag_value", None)
        if self.flag_value is not None:
            kwargs["nargs"] = 0
        super().__init__(option_strings, dest, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        value = self.flag_value if self.flag_value is not None else values
        given: dict[str, object] = namespace.__dict__.setdefault(GIVEN, {})
        if self.dest in given and given[self.dest] != value:
            raise argparse.ArgumentError(self, "given twice, with different values")
        given[self.dest] = value
        setattr(namespace, self.dest, value)


class Parser(argparse.ArgumentParser):
    """Refuses abbreviated flags (a future flag must not change what an old
    command line means) and a flag given twice with different values, and
    raises ``UsageError`` instead of exiting."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(allow_abbrev=False, **kwargs)
        self.register("action", None, Once)
        self.register("action", "store", Once)

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def given(args: argparse.Namespace, *names: str) -> list[str]:
    """The flags among ``names`` (destinations) that the command line gave."""
    recorded = getattr(args, GIVEN, {})
    return [flag(name) for name in names if name in recorded]


def flag(name: str) -> str:
    return f"--{name.replace('_', '-')}"


# --- value types --------------------------------------------------------------


def count(text: str) -> int:
    value = rust_usize_from_str(text)
    if value is None:
        digits = text.removeprefix("+")
        if digits.isascii() and digits.isdigit():
            raise argparse.ArgumentTypeError(f"too large: {quoted(text)} exceeds {USIZE_MAX}")
        raise argparse.ArgumentTypeError(f"not a non-negative integer: {quoted(text)}")
    return value


def positive_count(text: str) -> int:
    value = count(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def layer_count(text: str) -> int:
    """A count of SSM layers, within the one limit the models apply to any
    layer count."""
    value = count(text)
    if value > MAX_LAYERS:
        raise argparse.ArgumentTypeError(f"{value} layers is implausible (at most {MAX_LAYERS:,})")
    return value


def count_list(text: str) -> tuple[int, ...]:
    values = tuple(positive_count(part) for part in text.split(","))
    if len(set(values)) != len(values):
        raise argparse.ArgumentTypeError(f"a value repeats in {quoted(text)}")
    return values


def size(text: str) -> int:
    try:
        return parse_memory_size(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def ring_slots_flag(text: str) -> int | None:
    try:
        return parse_decode_ring_slots(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


# --- flags that several commands share --------------------------------------


def json_flag(command: argparse.ArgumentParser) -> None:
    command.add_argument("--json", flag_value=True, default=False, help="one JSON object on stdout")


def ssm_layers_flag(command: argparse.ArgumentParser, *, required: bool) -> None:
    command.add_argument(
        "--ssm-layers",
        type=layer_count,
        required=required,
        metavar="N",
        help="SSM layers in the model",
    )


def ring_flags(command: argparse.ArgumentParser, *, ssm_layers_required: bool) -> None:
    """The decision's inputs: SSM layers, speculative decode, a pinned depth."""
    ssm_layers_flag(command, required=ssm_layers_required)
    command.add_argument(
        "--speculative",
        flag_value=True,
        default=False,
        help="speculative decode (or dflash) is on",
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
    command.add_argument("--config", required=required, metavar="PATH", help=CONFIG_HELP)


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


MODEL_SHAPING: Final = ("tp", "layout", "conv_dtype", "ssm_dtype")
ARGUMENT_FLAGS: Final = {
    "tp_size": "--tp",
    "layout": "--layout",
    "conv_dtype": "--conv-dtype",
    "ssm_dtype": "--ssm-dtype",
    "speculative_tokens": "--speculative-tokens",
    "max_model_len": "--max-model-len",
}


def state_options(args: argparse.Namespace) -> dict[str, object]:
    """The ``ssm_state`` options the layout flags give."""
    return {
        "layout": args.layout,
        "conv_dtype": args.conv_dtype,
        "ssm_dtype": args.ssm_dtype,
        "speculative_tokens": args.speculative_tokens,
    }


def refuse_without_config(args: argparse.Namespace, names: Sequence[str]) -> None:
    """Refuses the flags of ``names`` that shape a model's state, given
    without ``--config``: they would do nothing."""
    idle = given(args, *names)
    if idle:
        raise UsageError(
            f"{', '.join(idle)} {'shapes' if len(idle) == 1 else 'shape'} the state read from "
            "--config: give --config, or drop " + ("it" if len(idle) == 1 else "them")
        )


def model_reference(args: argparse.Namespace) -> ModelReference:
    """What ``--config`` names (``snapshots.resolve_model``)."""
    return resolve_model(args.config)


def model_state(args: argparse.Namespace, reference: ModelReference, tp: int = 1) -> SsmState:
    return state_report(reference.config, None, tp_size=tp, **state_options(args)).state


def pin(slots: int | None) -> None:
    """Publishes ``--ssm-decode-ring-slots N`` as the server flag would."""
    if slots is not None:
        try:
            pin_decode_ring_slots(slots)
        except DecodeRingConflict as error:
            raise UsageError(str(error)) from None


def ssm_layers_from(args: argparse.Namespace, command: str) -> int:
    """``--ssm-layers``, or the SSM layers of the ``--config`` model; one of them."""
    if args.config is None:
        if args.ssm_layers is None:
            raise UsageError(f"{command} needs --ssm-layers N (or --config)")
        return int(args.ssm_layers)
    if args.ssm_layers is not None:
        raise UsageError("--config gives the SSM layers: drop --ssm-layers")
    return ssm_state_at_tp_one(args).ssm_layers


def ssm_state_at_tp_one(args: argparse.Namespace) -> SsmState:
    return state_report(model_reference(args).config, None).state


# --- decide -------------------------------------------------------------------


def decide_flags(command: argparse.ArgumentParser) -> None:
    ring_flags(command, ssm_layers_required=False)
    config_flag(command, required=False)


def run_decide(args: argparse.Namespace) -> object:
    layers = ssm_layers_from(args, "decide")
    pin(args.ssm_decode_ring_slots)
    return explain_decision(layers, args.speculative)


# --- fit ----------------------------------------------------------------------


def fit_flags(command: argparse.ArgumentParser) -> None:
    ring_flags(command, ssm_layers_required=False)
    command.add_argument(
        "--example",
        flag_value=True,
        default=False,
        help="the worked example (flags given override it)",
    )
    command.add_argument("--max-batch-size", type=positive_count, metavar="B")
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


def fit_inputs(
    args: argparse.Namespace,
) -> tuple[int, bool, RingSlot, Yardstick, SsmState | None]:
    """The fit's inputs from the flags (``--example`` fills what is not given;
    ``--config`` gives the layers and the state), the speculative flag, the
    yardstick they choose, and the model's state when ``--config`` is given."""
    post_load = args.kv_floor is not None or args.headroom is not None
    if post_load and (args.kv_floor is None or args.headroom is None):
        raise UsageError("--kv-floor and --headroom go together")
    if post_load and (args.reserve_without_ring is not None or args.free is not None):
        raise UsageError(
            "--reserve-without-ring and --free fit pre-load; --kv-floor and --headroom "
            "post-load: give one pair"
        )
    if args.config is None:
        refuse_without_config(args, MODEL_SHAPING)
    elif args.ssm_layers is not None or args.per_seq_state is not None:
        raise UsageError(
            "--config gives the SSM layers and the per-sequence state: "
            "drop --ssm-layers and --per-seq-state"
        )
    elif args.example:
        raise UsageError("--example is the worked example's model and --config another: give one")
    names = ["ssm_layers", "max_batch_size", "per_seq_state"]
    if not post_load:
        names += ["reserve_without_ring", "free"]
    values = {name: getattr(args, name) for name in names}
    state = None
    if args.config is not None:
        state = model_state(args, model_reference(args), args.tp)
        values.update(ssm_layers=state.ssm_layers, per_seq_state=state.per_sequence_bytes)
    if args.example:
        example = {**EXAMPLE, **worked_example_state()}
        values = {name: example[name] if value is None else value for name, value in values.items()}
    missing = [name for name, value in values.items() if value is None]
    if missing:
        raise UsageError(f"fit needs {', '.join(map(flag, missing))}{fit_hint(args, missing)}")
    try:
        slot = RingSlot(values["max_batch_size"], values["per_seq_state"])
    except OverflowError as error:
        raise UsageError(str(error)) from None
    yardstick: Yardstick
    if post_load:
        yardstick = PostLoadKvHeadroom(args.kv_floor, args.headroom)
    else:
        yardstick = PreLoadFreeMemory(values["reserve_without_ring"], values["free"])
    speculative = args.speculative or args.speculative_tokens > 0
    return values["ssm_layers"], speculative, slot, yardstick, state


def fit_hint(args: argparse.Namespace, missing: Sequence[str]) -> str:
    """What else would give the missing flags: ``--config`` gives the layers
    and the state, ``--example`` everything; neither once ``--config`` is given."""
    if args.config is not None:
        return ""
    others = ["--config"] if {"ssm_layers", "per_seq_state"} & set(missing) else []
    others.append("--example")
    return f" (or {', or '.join(others)})"


def run_fit(args: argparse.Namespace) -> object:
    ssm_layers, speculative, slot, yardstick, state = fit_inputs(args)
    pin(args.ssm_decode_ring_slots)
    return fit_report(ssm_layers, speculative, slot, yardstick, state)


# --- state --------------------------------------------------------------------


def state_flags(command: argparse.ArgumentParser) -> None:
    config_flag(command, required=True)
    one_tp_flag(command)
    layout_flags(command)
    command.add_argument(
        "--max-batch-size", type=positive_count, metavar="B", help="also size the ring"
    )
    json_flag(command)


def run_state(args: argparse.Namespace) -> object:
    reference = model_reference(args)
    return state_report(
        reference.config, args.max_batch_size, tp_size=args.tp, **state_options(args)
    )


# --- plan ---------------------------------------------------------------------


def plan_flags(command: argparse.ArgumentParser) -> None:
    config_flag(command, required=False)
    layout_flags(command)
    ssm_layers_flag(command, required=False)
    command.add_argument(
        "--per-seq-state",
        type=size,
        metavar="SIZE",
        help="without --config: one sequence's recurrent state at tp 1 (divided evenly by tp)",
    )
    command.add_argument("--free", type=size, required=True, metavar="SIZE", help="per rank")
    command.add_argument(
        "--weights",
        type=size,
        metavar="SIZE",
        help="the whole checkpoint, divided evenly by tp (default: a snapshot's "
        "model.safetensors.index.json total_size)",
    )
    command.add_argument(
        "--other",
        type=size,
        default=0,
        metavar="SIZE",
        help="per rank, what does not depend on the model: activations, workspace (default 0)",
    )
    command.add_argument(
        "--max-model-len",
        type=positive_count,
        metavar="N",
        help="tokens per sequence that the KV cache holds (needed when the model has attention)",
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
    command.add_argument(
        "--server",
        choices=PLAN_SERVERS,
        default="metrale",
        help="whose budget: metrale (the reference's ring depth, the default), or vllm or "
        "sglang (which batches of --max-model-len tokens each server holds; no ring)",
    )
    command.add_argument(
        "--plot",
        metavar="FILE",
        help="also draw the grid into exactly FILE, in its extension's format "
        "(PNG without one; needs matplotlib)",
    )
    json_flag(command)


def plan_reserve(args: argparse.Namespace, reference: ModelReference | None) -> Reserve:
    """The reserve's inputs: the weights (``--weights``, else the snapshot's
    index), ``--other``, ``--max-model-len``."""
    if args.weights is not None:
        return Reserve(args.weights, "--weights", args.other, args.max_model_len)
    if reference is not None and reference.snapshot is not None:
        total = snapshot_weights(reference.snapshot)
        if total is not None:
            source = "model.safetensors.index.json metadata.total_size"
            return Reserve(total, source, args.other, args.max_model_len)
    where = (
        "the snapshot has no model.safetensors.index.json"
        if reference is not None and reference.snapshot is not None
        else "a snapshot directory's model.safetensors.index.json would give it"
    )
    raise UsageError(f"plan needs --weights SIZE, the whole checkpoint's size ({where})")


def run_plan(args: argparse.Namespace) -> object:
    if args.server != "metrale":
        return run_server_plan(args)
    reference = None
    if args.config is None:
        refuse_without_config(args, ("layout", "conv_dtype", "ssm_dtype", "max_model_len"))
        missing = [
            flag(name) for name in ("ssm_layers", "per_seq_state") if getattr(args, name) is None
        ]
        if missing:
            raise UsageError(f"plan needs --config, or {' and '.join(missing)}")
    elif args.ssm_layers is not None or args.per_seq_state is not None:
        raise UsageError(
            "--config gives the SSM layers and the per-sequence state: "
            "drop --ssm-layers and --per-seq-state"
        )
    else:
        reference = model_reference(args)
    grid = plan(
        None if reference is None else reference.config,
        args.free,
        plan_reserve(args, reference),
        args.tp,
        args.max_batch_size,
        use_speculative=args.speculative_tokens > 0,
        ssm_layers=args.ssm_layers,
        per_seq_state=args.per_seq_state,
        **state_options(args),
    )
    if args.plot is not None:
        draw(grid, args.plot)
    return grid


def run_server_plan(args: argparse.Namespace) -> object:
    """``plan --server vllm|sglang``: which batches each server's own sizing holds."""
    idle = given(args, "layout", "conv_dtype", "ssm_dtype", "ssm_layers", "per_seq_state", "plot")
    if args.server == "sglang":
        idle += given(args, "speculative_tokens")
    if idle:
        raise UsageError(
            f"{', '.join(idle)} {'does' if len(idle) == 1 else 'do'} nothing under --server "
            f"{args.server}: the server lays out its own state and there is no ring to draw; "
            "drop " + ("it" if len(idle) == 1 else "them")
        )
    if args.config is None:
        raise UsageError(f"plan --server {args.server} needs --config")
    reference = model_reference(args)
    return server_plan(
        args.server,
        reference.config,
        args.free,
        plan_reserve(args, reference),
        args.tp,
        args.max_batch_size,
        args.speculative_tokens,
    )


def draw(grid: Plan, path: str) -> None:
    """``plot_plan`` into ``path``, saying so on stderr."""
    try:
        plot_plan(grid, path)
    except ImportError:
        raise UsageError("--plot needs matplotlib: pip install 'decode_ring[plot]'") from None
    except PlotFormatError as error:
        raise UsageError(f"--plot {path!a}: {error}") from None
    except OSError as error:
        raise PlotWriteError(f"cannot write {path!a}: {error.strerror or error}") from None
    write(sys.stderr, f"{PROGRAM}: wrote {one_line(path)}")


# --- the commands ---------------------------------------------------------------


@dataclass(frozen=True)
class Command:
    """One subcommand: its help line, the function that adds its flags, the
    function that computes its value (``render`` prints it), and the text
    under its flags in ``--help``. A new command is one entry in ``COMMANDS``."""

    help: str
    flags: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], object]
    epilog: str = SEE_TOP_HELP
    # The line for flags the command does not take (None: argparse's own).
    unknown: Callable[[list[str]], str] | None = None


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
        f"{VLLM_EPILOG} {SEE_TOP_HELP}",
        lambda extras: refuse_unknown("vllm", extras),
    ),
    "sglang": Command(
        "what SGLang 0.5.23 reserves for the state, from a launch line's flags",
        sglang_flags,
        run_sglang,
        f"{SGLANG_EPILOG} {SEE_TOP_HELP}",
        lambda extras: refuse_unknown("sglang", extras),
    ),
}


def build_parser() -> Parser:
    """The ``decode-ring`` parser: one subparser per entry of ``COMMANDS``."""
    parser = Parser(
        prog=PROGRAM,
        description=__doc__.split("\n\n")[0],
        epilog=HELP_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROGRAM} {__version__}")
    subparsers = parser.add_subparsers(dest="command", parser_class=Parser)
    for name, command in COMMANDS.items():
        command.flags(subparsers.add_parser(name, help=command.help, epilog=command.epilog))
    return parser


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line's flags; a flag that no command takes, or no command,
    is a ``UsageError`` (a server command names the server's flags it does
    not model)."""
    args, extras = build_parser().parse_known_args(argv)
    if extras:
        unknown = COMMANDS[args.command].unknown if args.command else None
        raise UsageError(
            unknown(extras) if unknown else f"unrecognized arguments: {' '.join(extras)}"
        )
    if args.command is None:
        raise UsageError(
            f"no command: give one of {', '.join(COMMANDS)} ({PROGRAM} --help says more)"
        )
    return args


# --- main -----------------------------------------------------------------------


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


def model_error(error: ModelConfigError) -> str:
    """A models error as the command line says it: an argument named as its
    flag (``--ssm-dtype``, not ``ssm_dtype``)."""
    message = str(error)
    field = getattr(error, "field", None)
    if field in ARGUMENT_FLAGS and message.startswith(f"argument {field}:"):
        return f"argument {ARGUMENT_FLAGS[field]}:" + message[len(f"argument {field}:") :]
    return message


def compute(args: argparse.Namespace) -> Any:
    """The command's rendered value; every failure of the input is a ``UsageError``."""
    try:
        return render(COMMANDS[args.command].run(args))
    except ModelConfigError as error:
        raise UsageError(model_error(error)) from None
    except OverflowError as error:
        raise UsageError(str(error)) from None
    except OSError as error:  # an input that cannot be read, wherever it was opened
        name = getattr(error, "filename", None) or args.config or "the input"
        raise UsageError(f"cannot read {str(name)!a}: {error.strerror or error}") from None


def main(argv: Sequence[str] | None = None) -> int:
    """Runs ``decode-ring``; returns the exit status."""
    wants_json = "--json" in (sys.argv[1:] if argv is None else argv)
    try:
        args = parse(argv)
        rendered = compute(args)
        write(sys.stdout, json.dumps(rendered.json) if args.json else "\n".join(rendered.lines))
    except UsageError as error:
        message = one_line(str(error))
        if wants_json:
            write(sys.stdout, json.dumps({"error": message, "status": EXIT_USAGE}))
        write(sys.stderr, f"{PROGRAM}: error: {message}")
        return EXIT_USAGE
    except PlotWriteError as error:
        write(sys.stderr, f"{PROGRAM}: error: {one_line(str(error))}")
        return EXIT_IO_ERROR
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
