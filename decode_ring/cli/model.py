"""``state`` and ``plan``: a model's per-sequence state, and the depth (or, under a server, the
batches) by tensor-parallel size and batch."""

from __future__ import annotations

import argparse
import sys

from ..plan import (
    DEFAULT_BATCH_SIZES,
    DEFAULT_TP_SIZES,
    PLAN_SERVERS,
    Plan,
    Reserve,
    plan,
    server_plan,
)
from ..reports import state_report
from ..snapshots import ModelReference, snapshot_weights
from .output import one_line, say
from .parsing import (
    PROGRAM,
    PlotWriteError,
    UsageError,
    config_flag,
    file_path,
    flag,
    given,
    grid_axis,
    json_flag,
    layout_flags,
    model_reference,
    one_tp_flag,
    positive_count,
    refuse_without_config,
    size,
    ssm_layers_flag,
    state_options,
)
from .plot import PlotFormatError, plot_plan

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
    plan_memory_flags(command)
    plan_grid_flags(command)
    json_flag(command)


def plan_memory_flags(command: argparse.ArgumentParser) -> None:
    """What each cell's reserve is made of: the state, free memory, weights, other, length."""
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


def plan_grid_flags(command: argparse.ArgumentParser) -> None:
    """The grid's axes, whose budget it shows, and its picture."""
    command.add_argument(
        "--tp",
        type=grid_axis("tp_sizes"),
        default=DEFAULT_TP_SIZES,
        metavar="N,N,...",
        help="tensor-parallel sizes (default 1,2,4,8)",
    )
    command.add_argument(
        "--max-batch-size",
        type=grid_axis("batch_sizes"),
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
        type=file_path,
        metavar="FILE",
        help="also draw the grid into exactly FILE, in its extension's format "
        "(PNG without one; needs matplotlib)",
    )


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
    say(sys.stderr, f"{PROGRAM}: wrote {one_line(path)}")
