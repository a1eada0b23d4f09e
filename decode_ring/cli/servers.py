"""``decode-ring vllm`` and ``decode-ring sglang``: a server's launch line as a script has it, and
what the server reserves for it.

The package's own flags (``server_flags``, rows marked ``package``) come first; the server's line
follows (``launch``): ``serve MODEL ...``, ``--model-path MODEL ...``, or ``--`` and the whole
command. Each server flag is read as the server reads it and found in the release's class table:
the modelled ones feed the reservation through their row of the table, the ones with no effect
on memory are listed, and the ones that change memory in a way not modelled are refused together
in one line (``--allow-unmodelled`` answers without them, and names them). With the model given
the earlier way, ``--config MODEL``, the package's flags may come anywhere in the line.
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from ..gpus import GpuError, detect_gpu
from ..models import ModelConfigError
from ..printable import show
from ..releases import SGLANG, VLLM, Release, resolve_release
from ..servers import ReleaseComparison, compare_releases, sglang_reservation, vllm_reservation
from ..snapshots import resolve_model
from ..units import ACCEPTED_FORMS
from .known_flags import flag_releases, known_flags
from .launch import Given, LaunchLine, ServerGrammar, grammar, read_launch, strip_program
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

__all__ = ["SERVER_COMMANDS", "SGLANG_COMMAND", "VLLM_COMMAND", "LaunchAnswer", "ServerCommand"]

# Where a namespace keeps the server's part of the command line, and the form it came in.
LAUNCH_TOKENS: Final = "launch_tokens"
LAUNCH_SERVE: Final = "launch_serve"


@dataclass(frozen=True)
class LaunchAnswer:
    """A reservation with what the launch line said beside it: the model as the line named it,
    the flags with no effect on memory, the flags not modelled that ``--allow-unmodelled``
    ignored, the flags given more than once (the last value taken), and the server's own
    warnings about the line."""

    reservation: Any
    server: str
    model: str
    no_effect: tuple[str, ...]
    ignored: tuple[str, ...]
    repeated: tuple[str, ...]
    warnings: tuple[str, ...]
    comparison: ReleaseComparison | None = None

    def as_dict(self) -> dict[str, object]:
        """What the line said, for JSON."""
        return {
            "model": self.model,
            "no_effect": list(self.no_effect),
            "ignored_unmodelled": list(self.ignored),
            "repeated": list(self.repeated),
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True, slots=True)
class ServerCommand:
    """One server's command: its release, its flag table, how its combined flags become API
    keywords (with notes for the assumptions), the API call, and its help's epilog."""

    name: str
    release: Release
    table: tuple[ServerFlag, ...]
    combine: Callable[[argparse.Namespace], tuple[dict[str, Any], list[str]]]
    reserve: Callable[..., Any]
    epilog: str

    @property
    def argument_flags(self) -> Mapping[str, str]:
        """Each API argument and the flag that names it in a refusal."""
        return argument_flags(self.table)

    @property
    def package(self) -> tuple[ServerFlag, ...]:
        """The package's own flags."""
        return tuple(spec for spec in self.table if spec.package)

    def flags(self, command: argparse.ArgumentParser) -> None:
        """The package's flags, which argparse reads; the server's line is read apart."""
        add_flags(command, self.package, underscores=False)

    def split(self, tokens: Sequence[str]) -> tuple[list[str], list[str], bool]:
        """The package's flags, the server's line and whether it is ``vllm serve``'s: the
        package's flags lead; ``serve``, ``--`` or the first other word starts the server's
        line. A line with no ``serve`` or ``--`` that names no model of its own (the model given
        the earlier way, by the package's ``--config``) may have the package's flags anywhere,
        ``--config`` included."""
        takes = {
            spelling: spec.switch is None
            for spec in self.package
            for spelling in spec.spellings(underscores=False)
        }
        package, index = _leading(tokens, takes)
        rest = list(tokens[index:])
        if rest[:1] == ["--"]:
            line, serve = strip_program(self.release, rest[1:])
            return package, line, serve
        if rest[:1] == ["serve"] and self.release == VLLM:
            return package, rest[1:], True
        if self._names_model(rest) or any(_server_config(rest, i) for i in range(len(rest))):
            return package, rest, False
        more, line = _scattered(rest, takes)
        return package + more, line, False

    def _names_model(self, words: Sequence[str]) -> bool:
        """Whether a line names its own model with a flag (``--model-path``, ``--model``, or a
        prefix the server reads as one)."""
        flags = grammar(self.release)
        for word in words:
            if word.startswith("--"):
                try:
                    # As written: SGLang reads no underscore spelling, and vLLM's model
                    # flag (--model) has none to read.
                    entry = flags.entry(word.split("=", 1)[0])
                except UsageError:
                    continue
                if entry is not None and entry.dest in ("model", "model_path"):
                    return True
        return False

    def run(self, args: argparse.Namespace) -> LaunchAnswer:
        """The reservation for the launch line, the combined flags' notes among its
        assumptions, with what the line said."""
        launch = self.read_line(
            getattr(args, LAUNCH_TOKENS), serve=getattr(args, LAUNCH_SERVE), version=args.version
        )
        ignored = self._refuse_unmodelled(launch, args.allow_unmodelled)
        model = self._model(launch, args)
        server = self.server_namespace(launch)
        combined, notes = self.combine(server)
        notes[:0] = launch.unread
        options = {**keywords(self.package, args), **keywords(self.server_rows, server)}
        if options.get("gpu") == "auto":
            try:
                options["gpu"], said = detect_gpu()
            except GpuError as error:
                raise UsageError(str(error)) from None
            notes.append(f"--gpu auto: {said}")
        combined["draft_config"] = _draft_config(combined.pop("draft_model"), notes)
        config = resolve_model(model).config
        reservation = self.reserve(config, **options, **combined)
        reservation = replace(reservation, assumptions=(*reservation.assumptions, *notes))
        comparison = self._compare(config, args, {**options, **combined})
        return LaunchAnswer(
            reservation,
            self.release.server,
            model,
            tuple(launch.by_class("no_effect")),
            ignored,
            launch.repeated,
            launch.warnings,
            comparison,
        )

    def _compare(
        self, config: object, args: argparse.Namespace, options: dict[str, Any]
    ) -> ReleaseComparison | None:
        """With ``--compare``, the launch under that release too, step by step."""
        other = args.compare
        if other is None:
            return None
        version = options.pop("version")
        return compare_releases(
            self.reserve, config, version=version, other=other, options=options, server=self.name
        )

    @property
    def server_rows(self) -> tuple[ServerFlag, ...]:
        """The server's modelled flags."""
        return tuple(spec for spec in self.table if not spec.package)

    def server_namespace(self, launch: LaunchLine) -> argparse.Namespace:
        """Each modelled flag's value, read with its row's grammar (its default when the line
        does not give it)."""
        values = {spec.dest: spec.default for spec in self.server_rows}
        given = {one.entry.reads_as or one.entry.flag: one for one in launch.values.values()}
        for spec in self.server_rows:
            one = given.get(spec.flag) or next(
                (given[alias] for alias in spec.aliases if alias in given), None
            )
            if one is not None and one.entry.flag in launch.json_keys:
                one = replace(one, value=launch.modelled_json(one))
            if one is not None:
                values[spec.dest] = _read(spec, one)
        return argparse.Namespace(**values)

    def read_line(self, tokens: Sequence[str], *, serve: bool, version: object) -> LaunchLine:
        """The launch line as ``version``'s parser reads it (the newest modelled release's
        flags, with those ``version`` has that it dropped: ``launch.grammar``), its flags that
        ``version`` does not define refused in one line."""
        release = resolve_release(self.name, version).release
        flags = grammar(self.release, release)
        launch = read_launch(flags, tokens, serve=serve)
        self._refuse_absent(launch, release, flags)
        return launch

    def _refuse_absent(self, launch: LaunchLine, release: Release, flags: ServerGrammar) -> None:
        """The flags the line gives that ``release`` does not define, refused in one line with
        the releases that do (``known_flags``, generated from each release). A spelling written
        whole is checked as written (vLLM 0.19.1 has ``--enable-log-requests`` but not its
        ``--disable-log-requests``); a prefix, which each release resolves among its own
        flags, by the flag it names."""
        known = known_flags(release)
        written = dict.fromkeys(
            one.spelling if one.spelling in flags.spellings else one.entry.flag
            for one in launch.given
        )
        absent = [spelling for spelling in written if spelling not in known]
        if not absent:
            return
        spans = {
            flag: ", ".join(
                f"{a}-{b}" if a != b else a for a, b in flag_releases(release.server, flag)
            )
            for flag in absent
        }
        # Never empty: the line is read with the newest release's flags and ``release``'s own,
        # so a flag ``release`` lacks is the newest's.
        reasons = "; ".join(f"{flag} (in {spans[flag]})" for flag in absent)
        raise UsageError(f"{release} has no such flag: {reasons}")

    def _refuse_unmodelled(self, launch: LaunchLine, allow: bool) -> tuple[str, ...]:
        """The flags not modelled that change memory: refused in one line naming them all, or,
        with ``--allow-unmodelled``, returned to be named as ignored."""
        unmodelled = launch.by_class("unmodelled")
        if unmodelled and not allow:
            reasons = "; ".join(f"{flag} ({launch.reason(flag)})" for flag in unmodelled)
            raise UsageError(
                f"{launch.release} flags that change memory in a way decode-ring {self.name} does "
                f"not model: {reasons}; drop {'it' if len(unmodelled) == 1 else 'them'}, or "
                "pass --allow-unmodelled to answer without "
                + ("it" if len(unmodelled) == 1 else "them")
            )
        return tuple(unmodelled)

    def _model(self, launch: LaunchLine, args: argparse.Namespace) -> str:
        """The model: the line's, or the package's ``--config``; one of them."""
        if launch.model is not None and args.config is not None:
            raise UsageError(
                f"the model is given twice: --config {show(args.config, limit=40)} and the "
                f"launch line's {show(launch.model, limit=40)}; give one"
            )
        model = launch.model if launch.model is not None else args.config
        if model is None:
            where = "serve MODEL" if self.release == VLLM else "--model-path MODEL"
            raise UsageError(
                f"no model: give the launch line's {where} (or --config MODEL before it)"
                + "".join(f"; {unread}" for unread in launch.unread)
            )
        return str(model)


def _draft_config(model: object, notes: list[str]) -> Any:
    """A separate draft model's config, resolved as a model is (a path, a snapshot, the Hugging
    Face cache); where it cannot be read here, its weights and KV are not counted, and a note
    says so."""
    if model is None:
        return None
    try:
        return resolve_model(str(model)).config
    except ModelConfigError as error:
        notes.append(f"draft model {model!a} not counted: {error}")
        return None


def _leading(tokens: Sequence[str], takes: Mapping[str, bool]) -> tuple[list[str], int]:
    """The package's flags at the head of ``tokens`` (with their values), and where they end."""
    package: list[str] = []
    index = 0
    while index < len(tokens):
        word = tokens[index]
        name = word.split("=", 1)[0]
        if name in ("-h", "--help"):
            package.append(word)
        elif name in takes and not _server_config(tokens, index):
            package.append(word)
            if takes[name] and "=" not in word and index + 1 < len(tokens):
                index += 1
                package.append(tokens[index])
        else:
            break
        index += 1
    return package, index


def _server_config(tokens: Sequence[str], index: int) -> bool:
    """Whether ``tokens[index]`` is the server's ``--config FILE.yaml`` (a YAML of flags, which
    starts the server's line), not the package's ``--config MODEL`` (a model is never YAML)."""
    word = tokens[index]
    if word.split("=", 1)[0] != "--config":
        return False
    value = word.split("=", 1)[1] if "=" in word else "".join(tokens[index + 1 : index + 2])
    return value.lower().endswith((".yaml", ".yml"))


def _scattered(tokens: Sequence[str], takes: Mapping[str, bool]) -> tuple[list[str], list[str]]:
    """The package's flags anywhere in ``tokens`` (the line of a model given by ``--config``),
    and the rest, in order."""
    package: list[str] = []
    rest: list[str] = []
    index = 0
    while index < len(tokens):
        word = tokens[index]
        name = word.split("=", 1)[0]
        if name in takes:
            package.append(word)
            if takes[name] and "=" not in word and index + 1 < len(tokens):
                index += 1
                package.append(tokens[index])
        else:
            rest.append(word)
        index += 1
    return package, rest


def _read(spec: ServerFlag, given: Given) -> Any:
    """A modelled flag's value, read with its row's grammar; a bad value is a ``UsageError``
    naming the flag as the line spelled it."""
    value = given.value
    name = f"argument {given.spelling}"
    if spec.switch is not None:
        return bool(value)
    if spec.many:
        # A list flag (nargs "+", which the line's reader always gives as a list): each value
        # read with the row's grammar, as argparse applies a type to each.
        return [_read_one(spec, one, name) for one in value]
    return _read_one(spec, value, name)


def _read_one(spec: ServerFlag, value: Any, name: str) -> Any:
    """One value of a modelled flag, read with its row's grammar."""
    assert spec.read is not None  # every server flag that takes a value has a grammar
    try:
        return spec.read(value)
    except (argparse.ArgumentTypeError, ValueError) as error:
        raise UsageError(f"{name}: {error}") from None


def _vllm_speculative(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    """The draft tokens and the drafter from ``--spec-tokens``, ``--spec-method``,
    ``--spec-model`` or ``--speculative-config``, which vLLM refuses together
    (vllm/engine/arg_utils.py:2108-2121); and the CUDA graphs from ``--compilation-config``,
    ``--cudagraph-capture-sizes`` and ``--max-cudagraph-capture-size``."""
    config = args.speculative_config or {}
    shorthands = {
        "num_speculative_tokens": args.num_speculative_tokens,
        "method": args.spec_method,
        "model": args.spec_model,
    }
    for key, value in shorthands.items():
        if value is not None and key in config:
            short = {"num_speculative_tokens": "--spec-tokens"}.get(key, f"--spec-{key}")
            raise UsageError(
                f"argument --speculative-config: {short} and --speculative-config"
                f"[{key!r}] are mutually exclusive (vLLM)"
            )
    merged = {**{k: v for k, v in shorthands.items() if v is not None}, **config}
    method = merged.get("method")
    notes = [f"speculative method {method!a}"] if method is not None else []
    graphs = _compilation(args)
    return {
        "num_speculative_tokens": merged.get("num_speculative_tokens", 0),
        "speculative_method": method,
        "draft_model": merged.get("model"),
        **graphs,
    }, notes


def _compilation(args: argparse.Namespace) -> dict[str, Any]:
    """The CUDA graphs a launch asks for: ``--compilation-config``'s keys, which the flags
    ``--cudagraph-capture-sizes`` and ``--max-cudagraph-capture-size`` stand for (vLLM takes the
    shorthand over the key, vllm/engine/arg_utils.py)."""
    config = args.compilation_config or {}
    sizes = args.cudagraph_capture_sizes or config.get("cudagraph_capture_sizes")
    largest = args.max_cudagraph_capture_size or config.get("max_cudagraph_capture_size")
    mode = config.get("cudagraph_mode")
    if mode is not None and not isinstance(mode, str):
        raise UsageError("argument --compilation-config: cudagraph_mode must be a mode's name")
    return {
        "cudagraph_mode": mode.upper() if isinstance(mode, str) else None,
        "cudagraph_capture_sizes": tuple(sizes) if sizes else None,
        "max_cudagraph_capture_size": largest,
    }


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
        return {"speculative_num_draft_tokens": 0, "draft_model": None}, []
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
    return {
        "speculative_num_draft_tokens": draft,
        "draft_model": args.speculative_draft_model_path,
    }, notes


def _modelled(table: tuple[ServerFlag, ...], server: str) -> str:
    """The server flags a command reads, for its help, wrapped."""
    flags = ", ".join(spec.flag for spec in table if not spec.package)
    return textwrap.fill(
        f"modelled {server} flags: {flags}.", 92, break_on_hyphens=False, break_long_words=False
    )


_CLASSES: Final = textwrap.fill(
    "Every other flag of the release is accepted when it has no effect on memory (listed in "
    "the answer) and refused when it changes memory in a way not modelled (all of them in one "
    "line; --allow-unmodelled answers without them and names them). A flag given twice takes "
    "its last value, as the server's parser does.",
    92,
)

VLLM_COMMAND: Final = ServerCommand(
    "vllm",
    VLLM,
    VLLM_FLAGS,
    _vllm_speculative,
    vllm_reservation,
    f"""\
The launch line follows the package's flags, as the script has it: serve MODEL [flags], or --
and the whole command (python -m vllm.entrypoints.openai.api_server --model MODEL ...). Flags
are read as vLLM reads them: underscores, unambiguous prefixes, --config FILE.yaml, dotted
JSON keys (--speculative-config.method mtp).

{_modelled(VLLM_FLAGS, "vLLM")}
{_CLASSES}
N for --max-model-len, --max-num-batched-tokens and --kv-cache-memory-bytes: an integer, or
with k/m/g/t (powers of 1000) or K/M/G/T (powers of 1024), as vLLM reads them.

examples:
  # the Qwen3-Next recipe on four H200s: vLLM's own KV budget and its boot log
  decode-ring vllm --gpu h200 serve Qwen/Qwen3-Next-80B-A3B-Instruct \\
      --tensor-parallel-size 4 --served-model-name qwen3-next --enable-prefix-caching
  # fp8 KV on an L40S (FlashInfer: FlashAttention 2 takes no fp8), the command pasted whole
  decode-ring vllm --gpu "NVIDIA L40S" --allow-unmodelled -- python -m \\
      vllm.entrypoints.openai.api_server --model ORG/NAME --tensor-parallel-size 2 \\
      --kv-cache-dtype fp8 --max-model-len 32768 --disable-custom-all-reduce --port 8001
  # any GPU by its memory, the weights given, the budget vLLM would compute
  decode-ring vllm --gpu-memory 96GiB --gpu-arch sm120 --weights-memory 30GiB serve ORG/NAME""",
)
SGLANG_COMMAND: Final = ServerCommand(
    "sglang",
    SGLANG,
    SGLANG_FLAGS,
    _sglang_speculative,
    sglang_reservation,
    f"""\
The launch line follows the package's flags, as the script has it: --model-path MODEL [flags],
or -- and the whole command (python -m sglang.launch_server --model-path MODEL ...). Flags are
read as SGLang reads them: unambiguous prefixes (--tp for --tp-size), no underscores.

{_modelled(SGLANG_FLAGS, "SGLang")}
{_CLASSES}
SIZE: {ACCEPTED_FORMS}.

examples:
  # SGLang's Qwen3-Next page on four H100s: mem_fraction_static SGLang's default
  decode-ring sglang --gpu "NVIDIA H100 80GB HBM3" -- python3 -m sglang.launch_server \\
      --model Qwen/Qwen3-Next-80B-A3B-Instruct --tp 4
  # two RTX 4090s, the fraction and the context given
  decode-ring sglang --gpu rtx-4090 --model-path ORG/NAME --tp 2 \\
      --mem-fraction-static 0.8 --context-length 262144
  # the budget after the weights given by hand, as before
  decode-ring sglang --available-memory 60GiB --model-path ORG/NAME --max-running-requests 256""",
)


SERVER_COMMANDS: Final[Mapping[str, ServerCommand]] = {
    command.name: command for command in (VLLM_COMMAND, SGLANG_COMMAND)
}
