"""``decode-ring``: the depth a server would choose here and now, and its fit.

    decode-ring decide --ssm-layers N [--speculative] [--ssm-decode-ring-slots auto|N] [--json]
    decode-ring fit --example [--json]
    decode-ring fit --ssm-layers N --max-batch-size B --per-seq-state SIZE
                    --reserve-without-ring SIZE --free SIZE
                    [--kv-floor SIZE --headroom SIZE] [--speculative]
                    [--ssm-decode-ring-slots auto|N] [--json]

Exit status: 0 when the chosen depth fits (or, post-load, when the decision is
left to the KV budget stage); 1 when the server would refuse to boot; 2 for a
usage error. Every error is one line on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from . import (
    CORE,
    _selected_core,
    decode_rollback_ring_slots,
    parse_decode_ring_slots,
    published_decode_ring_slots,
    set_decode_ring_slots,
)
from ._facade import (
    DISABLE_WATCHDOGS_VARIABLE,
    RING_OVERRIDE_VARIABLE,
    rust_usize_from_str,
    watchdogs_disabled_from_value,
)
from .preflight import (
    PRE_LOAD,
    RESERVE_RING_FULL_VARIABLE,
    PostLoadKvHeadroom,
    RingFit,
    Yardstick,
    autofit,
    requested_slots,
    slot_bytes,
)
from .units import format_size, parse_size

EXIT_OK, EXIT_REFUSED, EXIT_USAGE = 0, 1, 2
PROGRAM = "decode-ring"

# The worked example: 48 SSM layers, 151.5 MiB of state per sequence, batch
# 32, 7,039 MiB of reserve without the ring, 14.1 GiB free.
EXAMPLE = {
    "ssm_layers": 48,
    "max_batch_size": 32,
    "per_seq_state": 48 * (48 * 128 * 128 * 4 + (16 * 128 * 2 + 48 * 128) * 4 * 4),
    "reserve_without_ring": 7039 * 2**20,
    "free": parse_size("14.1GiB"),
}

_environment = _selected_core.EnvironmentReader(
    (RING_OVERRIDE_VARIABLE, DISABLE_WATCHDOGS_VARIABLE, RESERVE_RING_FULL_VARIABLE)
)


class UsageError(Exception):
    """A user error: one line on stderr, exit status 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def count(text: str) -> int:
    value = rust_usize_from_str(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"not a non-negative integer: {text!r}")
    return value


def size(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def ring_slots_flag(text: str) -> int | None:
    try:
        return parse_decode_ring_slots(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def build_parser() -> Parser:
    parser = Parser(prog=PROGRAM, description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    def common(command: argparse.ArgumentParser, ssm_layers_required: bool) -> None:
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
            help="the server flag: N pins a depth",
        )
        command.add_argument("--json", action="store_true", help="one JSON object on stdout")

    decide = commands.add_parser("decide", help="the depth the runtime would choose here")
    common(decide, ssm_layers_required=True)

    fit = commands.add_parser("fit", help="preflight: request, fit to memory, publish")
    common(fit, ssm_layers_required=False)
    fit.add_argument(
        "--example",
        action="store_true",
        help="the worked example (flags given override it)",
    )
    fit.add_argument("--max-batch-size", type=count, metavar="B")
    fit.add_argument(
        "--per-seq-state",
        type=size,
        metavar="SIZE",
        help="recurrent state of one sequence, all SSM layers",
    )
    fit.add_argument("--reserve-without-ring", type=size, metavar="SIZE")
    fit.add_argument("--free", type=size, metavar="SIZE", help="free memory before load")
    fit.add_argument(
        "--kv-floor",
        type=size,
        metavar="SIZE",
        help="post-load: the KV-cache floor (with --headroom)",
    )
    fit.add_argument(
        "--headroom",
        type=size,
        metavar="SIZE",
        help="post-load: the predicted KV headroom (with --kv-floor)",
    )
    return parser


def environment_values() -> dict[str, str | None]:
    """The variables as the runtime reads them; one that is set but reads as
    unset is not valid Unicode, and says so."""
    values = _environment.read()
    present = _environment.present()
    return {
        name: value if value is not None or not is_set else "<not valid Unicode>"
        for name, value, is_set in zip(_environment.names, values, present, strict=True)
    }


def decision_rule(
    num_ssm_layers: int,
    use_speculative: bool,
    published: int | None,
    ring_override: str | None,
    watchdogs_disabled: bool,
) -> str:
    """Names the reference's rule that decided, in its order."""
    if num_ssm_layers == 0:
        return "no SSM layers"
    if published is not None:
        return "published"
    if ring_override in ("1", "0"):
        return f"{RING_OVERRIDE_VARIABLE}={ring_override}"
    if use_speculative:
        return "speculative decode"
    if watchdogs_disabled:
        return "watchdogs disabled"
    return "default"


def publish_flag(slots: int | None) -> None:
    """Publishes ``--ssm-decode-ring-slots N`` as the server flag would."""
    if slots is not None and set_decode_ring_slots(slots) != slots:
        raise UsageError(f"a ring depth of {published_decode_ring_slots()} is already published")


def run_decide(args: argparse.Namespace) -> tuple[int, dict[str, Any], list[str]]:
    publish_flag(args.ssm_decode_ring_slots)
    published = published_decode_ring_slots()
    ring_override, watchdogs, _ = _environment.read()
    environment = environment_values()
    decision = decode_rollback_ring_slots(args.ssm_layers, args.speculative)
    rule = decision_rule(
        args.ssm_layers,
        args.speculative,
        published,
        ring_override,
        watchdogs_disabled_from_value(watchdogs),
    )
    report = {
        "slots": decision.slots,
        "skip_reason": decision.skip_reason,
        "rule": rule,
        "ssm_layers": args.ssm_layers,
        "speculative": args.speculative,
        "published": published,
        "environment": environment,
        "core": CORE,
    }
    rows = [
        ("ring depth", str(decision.slots)),
        ("rule", rule),
        ("skip reason", decision.skip_reason or "-"),
        ("ssm layers", str(args.ssm_layers)),
        ("speculative", "yes" if args.speculative else "no"),
        ("published", "none" if published is None else str(published)),
        *(
            (name, "(unset)" if value is None else repr(value))
            for name, value in environment.items()
        ),
        ("core", CORE),
    ]
    width = max(len(label) for label, _ in rows)
    lines = [f"{label:<{width}}  {value}" for label, value in rows]
    return EXIT_OK, report, lines


FIT_INPUTS = ("ssm_layers", "max_batch_size", "per_seq_state", "reserve_without_ring", "free")


def fit_inputs(args: argparse.Namespace) -> dict[str, int]:
    given = {name: getattr(args, name) for name in FIT_INPUTS}
    if args.example:
        given = {name: EXAMPLE[name] if value is None else value for name, value in given.items()}
    missing = [f"--{name.replace('_', '-')}" for name, value in given.items() if value is None]
    if missing:
        raise UsageError(f"fit needs {', '.join(missing)} (or --example)")
    if (args.kv_floor is None) != (args.headroom is None):
        raise UsageError("--kv-floor and --headroom go together")
    return given


def refusal(fit: RingFit, inputs: dict[str, int]) -> str:
    return (
        f"refused: the reserve does not fit {fit.yardstick.name} even at ring depth "
        f"{fit.slots}: ring {fit.slots} x batch {inputs['max_batch_size']} x per-sequence "
        f"state {format_size(inputs['per_seq_state'])} = {format_size(fit.ring_bytes)}, "
        f"+ {fit.yardstick.beside_term} {format_size(fit.beside)} = "
        f"{format_size(fit.total)} > {fit.yardstick.limit_term} {format_size(fit.limit)}"
    )


def run_fit(args: argparse.Namespace) -> tuple[int, dict[str, Any], list[str]]:
    inputs = fit_inputs(args)
    publish_flag(args.ssm_decode_ring_slots)
    yardstick: Yardstick = PRE_LOAD
    if args.kv_floor is not None:
        yardstick = PostLoadKvHeadroom(args.kv_floor, args.headroom)
    try:
        one_slot = slot_bytes(inputs["max_batch_size"], inputs["per_seq_state"])
    except OverflowError as error:
        raise UsageError(str(error)) from None
    requested = requested_slots(inputs["ssm_layers"], args.speculative)
    fit = autofit(requested, one_slot, inputs["reserve_without_ring"], inputs["free"], yardstick)
    refused = None
    status = EXIT_OK
    if fit.refused:
        refused = refusal(fit, inputs)
        status = EXIT_REFUSED
    rungs = fit.rungs()
    report = {
        "requested": fit.requested,
        "slots": fit.slots,
        "fits": fit.fits,
        "warning": fit.warning,
        "decision": fit.decision,
        "refused": refused,
        "yardstick": yardstick.name,
        "slot_bytes": fit.slot_bytes,
        "ring_bytes": fit.ring_bytes,
        "beside_bytes": fit.beside,
        "limit_bytes": fit.limit,
        "total_bytes": fit.total,
        "published": published_decode_ring_slots(),
        "inputs": {
            **inputs,
            "speculative": args.speculative,
            "kv_floor": args.kv_floor,
            "headroom": args.headroom,
        },
        "rungs": [
            {
                "slots": rung.slots,
                "ring_bytes": rung.ring_bytes,
                "total_bytes": rung.total_bytes,
                "fits": rung.fits,
            }
            for rung in rungs
        ],
    }

    def sized(label: str, value: int) -> str:
        return f"  {label:<22} {format_size(value):>11}  ({value:,} B)"

    lines = [
        f"decode ring fit against {yardstick.name}",
        f"  {'ssm layers':<22} {inputs['ssm_layers']:>11}",
        f"  {'max batch size':<22} {inputs['max_batch_size']:>11}",
        sized("per-sequence state", inputs["per_seq_state"]),
        sized("one ring slot", one_slot),
        sized(yardstick.beside_term, fit.beside),
        sized(yardstick.limit_term, fit.limit),
        f"  {'requested depth':<22} {fit.requested:>11}",
        "",
        f"  {'depth':>5}  {'ring':>11}  {'total':>11}  fits",
    ]
    for rung in rungs:
        marks = []
        if rung.slots > fit.requested:
            marks.append("above the request")
        if rung.slots == fit.slots:
            marks.append("<- chosen")
        lines.append(
            f"  {rung.slots:>5}  {format_size(rung.ring_bytes):>11}  "
            f"{format_size(rung.total_bytes):>11}  {'yes' if rung.fits else 'no ':<4} "
            f"{' '.join(marks)}".rstrip()
        )
    lines += [
        "",
        f"chosen depth   {fit.slots}",
        f"decision       {fit.decision}",
        f"warning        {fit.warning or '-'}",
    ]
    if not fit.fits and not yardstick.refuses_boot:
        lines.append("note           the KV budget stage decides whether the server boots")
    return status, report, lines


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        runner = run_decide if args.command == "decide" else run_fit
        status, report, lines = runner(args)
        if args.json:
            print(json.dumps(report))
        else:
            print("\n".join(lines))
    except UsageError as error:
        print(f"{PROGRAM}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    if status == EXIT_REFUSED:
        print(f"{PROGRAM}: {report['refused']}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
