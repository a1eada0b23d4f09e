"""``decide`` and ``fit``: the depth the runtime would choose here and now, and the preflight
that fits it to memory."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Final

from ..models import SsmState
from ..preflight import PostLoadKvHeadroom, PreLoadFreeMemory, RingSlot, Yardstick
from ..reports import (
    WORKED_EXAMPLE,
    WORKED_EXAMPLE_LAYOUT,
    explain_decision,
    fit_report,
    state_report,
)
from ..units import parse_memory_size
from .parsing import (
    MODEL_SHAPING,
    UsageError,
    config_flag,
    flag,
    layout_flags,
    model_reference,
    model_state,
    one_tp_flag,
    pin,
    positive_count,
    refuse_without_config,
    ring_flags,
    size,
    ssm_layers_from,
)

# The worked example: 48 gated-delta-net layers of 151.5 MiB per sequence, as
# the reference lays them out; batch 32, 7,039 MiB of reserve without the
# ring, 14.1 GiB free.
EXAMPLE: Final = {
    "max_batch_size": 32,
    "reserve_without_ring": 7039 * 2**20,
    "free": parse_memory_size("14.1GiB"),
}

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
