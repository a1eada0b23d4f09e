"""What every command's flags share: the parser (no abbreviations, a flag given twice with
another value refused, ``UsageError`` instead of an exit), the value types (counts, sizes, the
ring flag), the flags several commands take, and reading ``--config`` once."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, NoReturn

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

from .._facade import parse_decode_ring_slots, rust_usize_from_str
from .._usize_py import USIZE_MAX
from ..models import LAYOUTS, MAX_LAYERS, SsmState
from ..plan import grid_refusal
from ..preflight import DecodeRingConflict, pin_decode_ring_slots
from ..printable import show
from ..releases import resolve_release
from ..reports import state_report
from ..snapshots import CONFIG_HELP, ModelReference, resolve_model
from ..units import ACCEPTED_FORMS, parse_memory_size
from .output import write

PROGRAM: Final = "decode-ring"
GIVEN: Final = "given_flags"  # the namespace attribute that records the flags given
MODEL_SHAPING: Final = ("tp", "layout", "conv_dtype", "ssm_dtype")
# The API's arguments of the models and the plan, as their flags name them.
MODEL_ARGUMENT_FLAGS: Final[Mapping[str, str]] = {
    "tp_size": "--tp",
    "layout": "--layout",
    "conv_dtype": "--conv-dtype",
    "ssm_dtype": "--ssm-dtype",
    "speculative_tokens": "--speculative-tokens",
    "max_model_len": "--max-model-len",
    "vllm_version": "--vllm-version",
    "sglang_version": "--sglang-version",
}
# The servers' arguments ``plan --server`` passes its own flags on as; the launch line's
# others are named as the server's command names them (``plan_argument_flags``).
PLAN_ARGUMENT_FLAGS: Final[Mapping[str, str]] = {
    **MODEL_ARGUMENT_FLAGS,
    "tensor_parallel_size": "--tp",
    "num_speculative_tokens": "--speculative-tokens",
    "context_length": "--max-model-len",
    "weights_bytes": "--weights",
}
PLAN_SERVER_ARGUMENTS: Final = (
    "tensor_parallel_size",
    "tp_size",
    "max_model_len",
    "context_length",
    "weights_bytes",
)

SEE_TOP_HELP: Final = f"Exit statuses and environment variables: {PROGRAM} --help."
SIZES_EPILOG: Final = (
    f"SIZE: {ACCEPTED_FORMS}. So 80G is 80 x 10^9 bytes and 80GiB 80 x 2^30. A bare "
    "number is bytes, and a bare number under 1 MiB (but 0) is refused: write 80GiB, or 80B "
    f"to mean bytes. {SEE_TOP_HELP}"
)


# The worked example: 48 gated-delta-net layers of 151.5 MiB per sequence, as
# the reference lays them out; batch 32, 7,039 MiB of reserve without the
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

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        # argparse's own swallows a write that fails, and writes to stderr when stdout is
        # closed: --help and --version to a full disk would exit 0, having said nothing. Its
        # callers here (help, usage, version) print to stdout; a failure raises OSError.
        if message:
            write(sys.stdout if file is None else file, message, end="")  # type: ignore[arg-type]


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
            raise argparse.ArgumentTypeError(
                f"too large: {show(text, limit=40)} exceeds {USIZE_MAX}"
            )
        raise argparse.ArgumentTypeError(f"not a non-negative integer: {show(text, limit=40)}")
    return value


def positive_count(text: str) -> int:
    value = count(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def layer_count(text: str) -> int:
    """A count of SSM layers, within the one limit the models apply to any
    layer count, however many digits it has."""
    digits = text.removeprefix("+")
    if digits.isascii() and digits.isdigit() and len(digits.lstrip("0")) > len(str(MAX_LAYERS)):
        digits = digits.lstrip("0")
        value_text = digits if len(digits) <= 40 else f"{digits[:40]}... ({len(digits)} digits)"
        raise argparse.ArgumentTypeError(
            f"{value_text} layers is implausible (at most {MAX_LAYERS:,})"
        )
    value = count(text)
    if value > MAX_LAYERS:
        raise argparse.ArgumentTypeError(f"{value} layers is implausible (at most {MAX_LAYERS:,})")
    return value


def file_path(text: str) -> str:
    """A file to write: any path but the empty one (``--config ''`` is refused alike)."""
    if not text:
        raise argparse.ArgumentTypeError("empty path; give the file to draw into")
    return text


def count_list(text: str) -> tuple[int, ...]:
    values = tuple(positive_count(part) for part in text.split(","))
    if len(set(values)) != len(values):
        raise argparse.ArgumentTypeError(f"a value repeats in {show(text, limit=40)}")
    return values


def grid_axis(axis: str) -> Callable[[str], tuple[int, ...]]:
    """The value type of a plan's axis (``tp_sizes`` or ``batch_sizes``): a ``count_list`` of
    at most ``MAX_GRID_SIDE`` values, counted before any is read."""

    def axis_values(text: str) -> tuple[int, ...]:
        refusal = grid_refusal(axis, text.count(",") + 1)
        if refusal is not None:
            raise argparse.ArgumentTypeError(refusal)
        return count_list(text)

    return axis_values


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
    release_flags(command)


def release_flags(command: argparse.ArgumentParser) -> None:
    """Which release of the layout's server lays the state out (the newest modelled without)."""
    command.add_argument(
        "--vllm-version", metavar="VERSION", help="the vLLM release whose rules answer"
    )
    command.add_argument(
        "--sglang-version", metavar="VERSION", help="the SGLang release whose rules answer"
    )


def release_version(args: argparse.Namespace, server: str) -> str | None:
    """The version given for ``server`` (``vllm``, ``sglang``, ``metrale``), a release the
    package models (``UnmodelledReleaseError`` naming ``vllm_version`` or ``sglang_version``,
    whose flags ``MODEL_ARGUMENT_FLAGS`` gives); refuses the other server's flag, which would
    do nothing."""
    versions = {"vllm": args.vllm_version, "sglang": args.sglang_version}
    idle = [f"--{name}-version" for name, value in versions.items() if value and name != server]
    if idle:
        raise UsageError(
            f"{' and '.join(idle)} {'does' if len(idle) == 1 else 'do'} nothing here: the state "
            f"is laid out as {server} lays it out; drop {'it' if len(idle) == 1 else 'them'}"
        )
    version = versions.get(server)
    if version is not None:
        resolve_release(server, version, argument=f"{server}_version")
    return version


def state_options(args: argparse.Namespace) -> dict[str, object]:
    """The ``ssm_state`` options the layout flags give."""
    return {
        "layout": args.layout,
        "conv_dtype": args.conv_dtype,
        "ssm_dtype": args.ssm_dtype,
        "speculative_tokens": args.speculative_tokens,
        "version": release_version(args, args.layout),
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
