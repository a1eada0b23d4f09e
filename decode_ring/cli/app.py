"""decode-ring: the depth a server would choose here and now, its fit, and a model's state.

Each command has a function for its flags and one that computes its value,
registered in ``COMMANDS``; ``render`` prints the value. Every error is one
line on stderr (and, with ``--json``, a JSON object on stdout), and every
exit status is the README's table's, whatever stdout and stderr are: closed,
full, or a pipe the reader closed. An error while saying an error does not
change the status. ``decode_ring.cli.main`` imports this module and runs
``run``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from .. import __version__
from .._facade import (
    DISABLE_WATCHDOGS_VARIABLE,
    RESERVE_RING_FULL_VARIABLE,
    RING_OVERRIDE_VARIABLE,
)
from ..models import ModelConfigError
from ..releases import UnmodelledReleaseError
from ..servers import ServerArgumentError
from ..snapshots import HUB_EXTRA
from .model import PLAN_EXAMPLES, PLAN_LAUNCH, plan_flags, run_plan, run_state, state_flags
from .output import discard_unwritten_output, one_line, say, write
from .parsing import (
    MODEL_ARGUMENT_FLAGS,
    PLAN_ARGUMENT_FLAGS,
    PLAN_SERVER_ARGUMENTS,
    PROGRAM,
    SEE_TOP_HELP,
    SIZES_EPILOG,
    Parser,
    PlotWriteError,
    UsageError,
)
from .render import Rendered, render
from .ring import decide_flags, fit_flags, run_decide, run_fit
from .servers import (
    LAUNCH_SERVE,
    LAUNCH_TOKENS,
    SERVER_COMMANDS,
    SGLANG_COMMAND,
    VLLM_COMMAND,
    ServerCommand,
)

__all__ = [
    "COMMANDS",
    "EXIT_BROKEN_PIPE",
    "EXIT_INTERRUPTED",
    "EXIT_IO_ERROR",
    "EXIT_OK",
    "EXIT_REFUSED",
    "EXIT_USAGE",
    "HELP_EPILOG",
    "Command",
    "build_parser",
    "compute",
    "parse",
    "run",
    "server_command",
]

EXIT_OK: Final = 0
EXIT_REFUSED: Final = 1
EXIT_USAGE: Final = 2
EXIT_IO_ERROR: Final = 74  # sysexits.h EX_IOERR
EXIT_BROKEN_PIPE: Final = 128 + 13  # what a shell reports for a writer killed by SIGPIPE
EXIT_INTERRUPTED: Final = 128 + 2

HELP_EPILOG: Final = f"""\
exit status:
  0    the chosen depth fits (fit; post-load, also when the KV budget stage
       decides); some cell of the grid boots (plan); the server boots (vllm,
       sglang); decide, state
  1    the server would refuse to boot (fit, vllm, sglang: its own refusal on
       stderr); no cell of the grid boots (plan)
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

# --- the commands ---------------------------------------------------------------


@dataclass(frozen=True)
class Command:
    """One subcommand: its help line, the function that adds its flags, the
    function that computes its value (``render`` prints it), the text under
    its flags in ``--help``, and the flag that names each API argument in a
    refusal. A new command is one entry in ``COMMANDS``."""

    help: str
    flags: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], object]
    epilog: str = SEE_TOP_HELP
    argument_flags: Mapping[str, str] = field(default_factory=lambda: MODEL_ARGUMENT_FLAGS)
    # The epilog's lines as written (worked examples), not reflowed.
    raw_epilog: bool = False


def server_command(command: ServerCommand) -> Command:
    """The entry of a server's command."""
    return Command(
        f"what {command.release} reserves for the state, from a launch line's flags",
        command.flags,
        command.run,
        f"{command.epilog}\n\n{SEE_TOP_HELP}",
        command.argument_flags,
        raw_epilog=True,
    )


COMMANDS: Final[dict[str, Command]] = {
    "decide": Command("the depth the runtime would choose here", decide_flags, run_decide),
    "fit": Command("preflight: request, fit to memory, publish", fit_flags, run_fit, SIZES_EPILOG),
    "state": Command("a model's SSM state from its config.json", state_flags, run_state),
    "plan": Command(
        "depth by tensor-parallel size and batch, memory per rank",
        plan_flags,
        run_plan,
        f"{PLAN_EXAMPLES}\n\n{SIZES_EPILOG}",
        argument_flags=PLAN_ARGUMENT_FLAGS,
        raw_epilog=True,
    ),
    "vllm": server_command(VLLM_COMMAND),
    "sglang": server_command(SGLANG_COMMAND),
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
        formatter = (
            argparse.RawDescriptionHelpFormatter if command.raw_epilog else argparse.HelpFormatter
        )
        sub = subparsers.add_parser(
            name, help=command.help, epilog=command.epilog, formatter_class=formatter
        )
        command.flags(sub)
    return parser


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line's flags; a flag that no command takes, or no command,
    is a ``UsageError`` (a server command names the server's flags it does
    not model)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    line: tuple[list[str], bool] | None = None
    plan_line: list[str] | None = None
    if argv and argv[0] in SERVER_COMMANDS:
        package, tokens, serve = SERVER_COMMANDS[argv[0]].split(argv[1:])
        argv, line = [argv[0], *package], (tokens, serve)
    elif argv[:1] == ["plan"] and "--" in argv:
        cut = argv.index("--")
        argv, plan_line = argv[:cut], argv[cut + 1 :]
    args, extras = build_parser().parse_known_args(argv)
    if line is not None:
        setattr(args, LAUNCH_TOKENS, line[0])
        setattr(args, LAUNCH_SERVE, line[1])
    if plan_line is not None:
        setattr(args, PLAN_LAUNCH, plan_line)
    if extras:
        raise UsageError(f"unrecognized arguments: {' '.join(extras)}")
    if args.command is None:
        raise UsageError(
            f"no command: give one of {', '.join(COMMANDS)} ({PROGRAM} --help says more)"
        )
    return args


def compute(args: argparse.Namespace) -> Any:
    """The command's rendered value; every failure of the input is a ``UsageError``."""
    command = COMMANDS[args.command]
    flags = argument_flags(args)
    try:
        return render(command.run(args))
    except ServerArgumentError as error:
        if error.server_refusal is None:
            raise UsageError(error.worded(flags)) from None
        return refused(flags, error)
    except ModelConfigError as error:
        raise UsageError(error.worded(flags)) from None
    except UnmodelledReleaseError as error:  # its argument named as worded() names one
        flag = flags.get(error.argument, error.argument)
        raise UsageError(f"argument {flag}: {error.reason}") from None
    except OverflowError as error:
        raise UsageError(str(error)) from None
    except OSError as error:  # a read no reader named (each names its file), wherever it was
        name = error.filename or args.config
        where = "the model's files" if name is None else ascii(str(name))
        raise UsageError(f"cannot read {where}: {error.strerror or error}") from None


def argument_flags(args: argparse.Namespace) -> Mapping[str, str]:
    """The flag that names each API argument in the command's refusals. Under ``plan --server``
    the launch line's arguments are named as that server's command names them, and those the
    plan's own flags feed (``PLAN_SERVER_ARGUMENTS``) by the plan's flags."""
    command = COMMANDS[args.command]
    if args.command != "plan" or args.server not in SERVER_COMMANDS:
        return command.argument_flags
    own = {name: PLAN_ARGUMENT_FLAGS[name] for name in PLAN_SERVER_ARGUMENTS}
    return {**PLAN_ARGUMENT_FLAGS, **SERVER_COMMANDS[args.server].argument_flags, **own}


def refused(flags: Mapping[str, str], error: ServerArgumentError) -> Rendered:
    """A launch the server would not boot: why, in the package's words (stdout), and the
    server's own refusal (stderr, exit status 1)."""
    reason = error.worded(flags)
    refusal = str(error.server_refusal)
    json_value = {"error": reason, "status": EXIT_REFUSED, "log_lines": [refusal]}
    return Rendered(json_value, [f"the server would not boot: {reason}"], refusal)


def run(argv: Sequence[str] | None = None) -> int:
    """Runs ``decode-ring``; returns the exit status of the README's table."""
    wants_json = "--json" in (sys.argv[1:] if argv is None else argv)
    try:
        args = parse(argv)
        rendered = compute(args)
        write(sys.stdout, json.dumps(rendered.json) if args.json else "\n".join(rendered.lines))
    except UsageError as error:
        message = one_line(str(error))
        if wants_json:
            say(sys.stdout, json.dumps({"error": message, "status": EXIT_USAGE}))
        say(sys.stderr, f"{PROGRAM}: error: {message}")
        return EXIT_USAGE
    except PlotWriteError as error:
        say(sys.stderr, f"{PROGRAM}: error: {one_line(str(error))}")
        return EXIT_IO_ERROR
    except BrokenPipeError:
        discard_unwritten_output(sys.stdout)
        return EXIT_BROKEN_PIPE
    except OSError as error:  # the output (or --help, --version) cannot be written
        discard_unwritten_output(sys.stdout)
        say(sys.stderr, f"{PROGRAM}: error: cannot write the output: {one_line(str(error))}")
        return EXIT_IO_ERROR
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except SystemExit as finished:  # --help and --version: argparse printed and exits
        return finished.code if isinstance(finished.code, int) else EXIT_USAGE
    if rendered.refusal is not None:
        say(sys.stderr, f"{PROGRAM}: {one_line(rendered.refusal)}")
        return EXIT_REFUSED
    return EXIT_OK
