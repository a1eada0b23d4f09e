"""``state`` and ``plan``: a model's per-sequence state, and the depth (or, under a server, the
batches) by tensor-parallel size and batch."""

from __future__ import annotations

import argparse
import sys
from typing import Any, Final

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
from ..snapshots import ModelReference, resolve_model, snapshot_weights
from .launch import LaunchLine, names_program, strip_program
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
    release_version,
    size,
    ssm_layers_flag,
    state_options,
)
from .plot import PlotFormatError, plot_plan
from .server_flags import keywords
from .servers import SERVER_COMMANDS, ServerCommand

# Where a namespace keeps the launch line given to plan after "--".
PLAN_LAUNCH = "plan_launch"
PLAN_EXAMPLES = """\
examples:
  # the reference's ring depth against 80 GiB free a rank
  decode-ring plan --config tests/configs/nemotron-nano-9b-v2.json --free 80GiB \\
      --weights 16.5GiB --other 4GiB --max-model-len 8192
  # vLLM's own budget on an H200 at each tp, a launch line's flags after --
  decode-ring plan --server vllm --gpu h200 --config ORG/NAME --max-model-len 32768 \\
      --tp 2,4,8 -- --kv-cache-dtype fp8 --max-num-seqs 256
  # SGLang's on an H100, mem_fraction_static its default for the GPU and tp
  decode-ring plan --server sglang --gpu "NVIDIA H100 80GB HBM3" --config ORG/NAME \\
      --max-model-len 32768 --tp 4,8"""

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
    command.add_argument(
        "--free",
        type=size,
        metavar="SIZE",
        help="per rank (under --server vllm or sglang, --gpu or --gpu-memory instead: the "
        "server's own budget)",
    )
    command.add_argument(
        "--gpu",
        metavar="NAME",
        help="under --server vllm or sglang: the GPU, as decode-ring vllm --gpu takes it",
    )
    command.add_argument(
        "--gpu-memory", type=size, metavar="SIZE", help="under --server: the GPU's total memory"
    )
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
    idle = given(args, "gpu", "gpu_memory") + (["--"] if getattr(args, PLAN_LAUNCH, None) else [])
    if idle:
        raise UsageError(
            f"{', '.join(idle)}: a launch line and its GPU are the servers' (--server vllm or "
            "sglang); drop " + ("it" if len(idle) == 1 else "them")
        )
    if args.free is None:
        raise UsageError("plan needs --free SIZE (or --server vllm|sglang with --gpu)")
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
    command = SERVER_COMMANDS[args.server]
    version = release_version(args, args.server)
    launch, options = plan_launch(command, getattr(args, PLAN_LAUNCH, None) or [], version)
    options["version"] = version
    take_plans_draft_tokens(args, options)
    model = args.config or launch.model
    if model is None:
        raise UsageError(f"plan --server {args.server} needs --config (or the line's model)")
    if args.config is not None and launch.model is not None:
        raise UsageError("the model is given twice: --config and the launch line's; give one")
    reference = resolve_model(str(model))
    gpu = args.gpu
    options["gpu"], options["gpu_memory_bytes"] = gpu, args.gpu_memory
    if args.free is not None and (gpu is not None or args.gpu_memory is not None):
        raise UsageError("--free and --gpu (or --gpu-memory) are two budgets; give one")
    if args.free is None and gpu is None and args.gpu_memory is None:
        raise UsageError(f"plan --server {args.server} needs --free SIZE, or --gpu NAME")
    if args.free is None:
        refuse_other(args)
    else:
        refuse_launch_budget(launch)
    return server_plan(
        args.server,
        reference.config,
        args.free,
        plan_budget_reserve(args, reference),
        args.tp,
        args.max_batch_size,
        args.speculative_tokens,
        {k: v for k, v in options.items() if v is not None},
        None if gpu is None else str(gpu),
    )


def plan_launch(
    command: ServerCommand, tokens: list[str], version: str | None
) -> tuple[LaunchLine, dict[str, Any]]:
    """The launch line after ``--`` (its flags, or the whole command), read as ``version`` of
    the server reads it, and the reservation's keywords it gives; the plan's ``--tp`` list
    replaces its tensor-parallel size."""
    words, serve = tokens, False
    if names_program(tokens):
        words, serve = strip_program(command.release, tokens)
    launch = command.read_line(words, serve=serve, version=version)
    unmodelled = launch.by_class("unmodelled")
    if unmodelled:
        raise UsageError(
            f"{launch.release} flags that change memory in a way the plan does not model: "
            + ", ".join(unmodelled)
        )
    server = command.server_namespace(launch)
    combined, _ = command.combine(server)
    options = {**keywords(command.server_rows, server), **combined}
    for name in ("tensor_parallel_size", "tp_size"):
        options.pop(name, None)
    return launch, options


def take_plans_draft_tokens(args: argparse.Namespace, options: dict[str, Any]) -> None:
    """vLLM's draft tokens: the plan's ``--speculative-tokens`` where the launch line gives
    none (the line's reading says 0 then), the line's otherwise; both is refused."""
    line_tokens = options.pop("num_speculative_tokens", 0)
    if line_tokens and given(args, "speculative_tokens"):
        raise UsageError(
            "--speculative-tokens and the launch line's draft tokens are given both; give one"
        )
    if line_tokens:
        options["num_speculative_tokens"] = line_tokens


# The launch flags that set the server's own budget, which --free replaces.
LAUNCH_BUDGET: Final = ("kv_cache_memory_bytes", "gpu_memory_utilization", "mem_fraction_static")


def refuse_launch_budget(launch: LaunchLine) -> None:
    """Under ``--free``, the launch line's own budget (vLLM's ``--kv-cache-memory-bytes``,
    ``--gpu-memory-utilization``; SGLang's ``--mem-fraction-static``) would be replaced
    without a word: refused. The line's other flags apply."""
    budget = [one.spelling for dest, one in launch.values.items() if dest in LAUNCH_BUDGET]
    if budget:
        raise UsageError(
            f"--free and the launch line's {' and '.join(budget)} are two budgets; give one"
        )


def refuse_other(args: argparse.Namespace) -> None:
    """Under the server's own budget, ``--other`` means nothing: the server's terms replace it."""
    if given(args, "other"):
        raise UsageError(
            "--other is the explicit budget's (--free); under --gpu the server's own terms "
            "(activation, graphs, non-torch) replace it: drop it"
        )


def plan_budget_reserve(args: argparse.Namespace, reference: ModelReference) -> Reserve:
    """The reserve's inputs; under the server's own budget the weights may come from the
    snapshot, which the server reads itself."""
    if args.free is None and args.weights is None:
        return Reserve(0, "the server's own (the snapshot's safetensors)", 0, args.max_model_len)
    return plan_reserve(args, reference)


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
