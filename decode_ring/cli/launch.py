"""A server's launch line as a deployment script has it, read as the server's own argument parser
reads it.

``decode-ring vllm`` and ``decode-ring sglang`` take the package's flags first, then the server's
line: ``serve MODEL ...`` (vLLM), ``--model-path MODEL ...`` or any server flag (SGLang), or ``--``
and the whole command (``python -m vllm.entrypoints.openai.api_server ...``, ``vllm serve ...``,
``python -m sglang.launch_server ...``, ``sglang serve ...``). ``split`` finds where the server's
part starts; ``read_launch`` reads it as the server's parser would:

* every flag the release defines (``flags/<server>-<version>.json``, engine and front end), by
  its spellings or, as argparse's ``allow_abbrev`` allows, an unambiguous prefix;
* a flag given twice takes the last value, as argparse stores it;
* vLLM's ``FlexibleArgumentParser`` (vllm/utils/argparse_utils.py:324-500): ``--model`` moved
  to the positional model, ``--config FILE.yaml`` expanded after it (:516-673), ``_`` read as
  ``-`` in a flag's name, ``-O3`` as ``--optimization-level 3``, dotted JSON keys
  (``--speculative-config.method mtp``) merged into one JSON value placed last, and its warning
  for exact repeats ("Found duplicate keys");
* SGLang's plain ``argparse`` (sglang/srt/server_args.py:668-720): no underscore spelling, and a
  ``--config`` YAML placed before the command line (server_args_config_parser.py:75-106).

Each flag given is then found in the release's class table (``flag_classes/``): ``modelled``
(the command reads it), ``no_effect`` (accepted and listed), or ``unmodelled`` (it changes memory
in a way the package does not model: refused, all of them in one line, unless
``--allow-unmodelled``). A flag the release does not define is refused.

The flags are listed in full for the newest modelled release. A line written for an older one
(``--vllm-version``, ``--sglang-version``) is read with the newest release's parser plus the
flags the older release has that the newest dropped, each parsed as the older release's own
parser parses it (``known_flags.older_flags``) and classed in
``flag_classes/<server>-older.json``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import PurePath
from typing import Any, Final

from ..printable import show
from ..releases import SGLANG, VLLM, Release
from .known_flags import older_flags
from .parsing import UsageError
from .server_flags import SGLANG_FLAGS, VLLM_FLAGS, human_readable_int

__all__ = [
    "CLASSES",
    "FlagEntry",
    "Given",
    "LaunchLine",
    "ServerGrammar",
    "grammar",
    "read_launch",
]

CLASSES: Final = ("modelled", "no_effect", "unmodelled")
_NEGATIVE_NUMBER: Final = re.compile(r"^-\d+$|^-\d*\.\d+$")
# The part of a vLLM flag between "--" and the first "." (argparse_utils.py:374-394).
_FLAG_NAME: Final = re.compile(r"(?<=--)[^.]*")


@dataclass(frozen=True, slots=True)
class FlagEntry:
    """One flag of a release, as its parser registers it: the flag, its other spellings, where
    argparse stores it, whether and how many values it takes, its default, and its class in the
    release's table with the one-line reason; ``reads_as``, for a flag an older release spells
    otherwise, the newest release's flag the command reads it as."""

    flag: str
    aliases: tuple[str, ...]
    dest: str
    takes_value: bool
    negatable: bool
    nargs: int | str | None
    default: Any
    group: str
    klass: str
    reason: str
    reads_as: str | None = None

    def negated(self, spelling: str) -> bool:
        """Whether ``spelling`` turns this flag off: ``--no-x``, and vLLM's ``--disable-x`` for
        ``--enable-x`` (``EnableDisableAction``, argparse_utils.py:120-145) and the reverse."""
        if not self.negatable or spelling == self.flag:
            return False
        flag = self.flag
        return (
            spelling.startswith("--no-")
            or (flag.startswith("--enable-") and spelling.startswith("--disable-"))
            or (flag.startswith("--disable-") and spelling.startswith("--enable-"))
        )


@dataclass(frozen=True, slots=True)
class ServerGrammar:
    """A release's parser: its flags by every spelling, whether it abbreviates, whether it reads
    ``_`` as ``-`` and dotted JSON keys (vLLM), where a ``--config`` YAML goes, and the effective
    defaults the class table states where the parser's own is ``None``."""

    release: Release
    entries: tuple[FlagEntry, ...]
    spellings: Mapping[str, FlagEntry]
    allow_abbrev: bool
    flexible: bool
    defaults: Mapping[str, Any]
    json_keys: Mapping[str, Mapping[str, tuple[str, str]]]

    def entry(self, spelling: str) -> FlagEntry | None:
        """The flag ``spelling`` names: exactly, or as the one long flag it begins."""
        found = self.spellings.get(spelling)
        if found is not None or not self.allow_abbrev or not spelling.startswith("-"):
            return found
        matches = sorted(known for known in self.spellings if known.startswith(spelling))
        if len(matches) > 1:
            raise UsageError(
                f"{self.release}: ambiguous option: {show(spelling, limit=40)} could match "
                + ", ".join(matches[:6])
            )
        return self.spellings[matches[0]] if matches else None


def _data(folder: str, release: Release) -> dict[str, Any]:
    name = f"{release.server.lower()}-{release.version}.json"
    text = resources.files(__package__).joinpath(folder).joinpath(name).read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@cache
def grammar(release: Release, spoken: Release | None = None) -> ServerGrammar:
    """The parser of ``release`` (a release whose flags are listed in full, with a class
    table: the newest modelled), from its generated flags and its class table. With
    ``spoken``, an older release of the server: the parser of a line written for it, which is
    ``release``'s with the flags ``spoken`` has that ``release`` dropped (``_older_entries``);
    its messages name ``spoken``. A flag ``spoken`` does not have is still read here, and
    refused by the command (``known_flags``), which names the releases that have it."""
    flags = _data("flags", release)
    table = _data("flag_classes", release)
    classes = table["classes"]
    entries = []
    for raw in flags["flags"]:
        klass, reason = classes[raw["flag"]]
        entries.append(
            FlagEntry(
                raw["flag"],
                tuple(raw["aliases"]),
                raw["dest"],
                raw["takes_value"],
                raw["negatable"],
                raw["nargs"],
                raw["default"],
                raw["group"],
                klass,
                reason,
            )
        )
    spellings = {name: entry for entry in entries for name in (entry.flag, *entry.aliases)}
    if spoken is not None and spoken != release:
        for entry in _older_entries(release, spoken, spellings):
            entries.append(entry)
            spellings.update({name: entry for name in (entry.flag, *entry.aliases)})
    flexible = release.server == "vLLM"
    return ServerGrammar(
        spoken or release,
        tuple(entries),
        spellings,
        bool(flags["allow_abbrev"]),
        flexible,
        table.get("defaults", {}),
        {
            flag: {key: (klass, reason) for key, (klass, reason) in keys.items()}
            for flag, keys in table.get("json_keys", {}).items()
        },
    )


def _older_entries(
    release: Release, spoken: Release, current: Mapping[str, FlagEntry]
) -> list[FlagEntry]:
    """The flags ``spoken`` has and ``release`` dropped, each read as ``spoken``'s own parser
    reads it (``older_flags``, generated from each release's parser) and classed by
    ``flag_classes/<server>-older.json``; a flag it does not class is ``unmodelled``; one the
    table says ``release`` renamed (a third item: its flag there) is stored where that flag is,
    and read as it. A dropped spelling of a flag ``release`` still has (``--no-X`` of a flag no
    longer negatable) is a switch of its own, stored apart from that flag."""
    classes: Mapping[str, list[str]] = _older_classes(release.server)
    shapes = older_flags(spoken)
    grouped: dict[str, list[str]] = {}
    for spelling, shape in shapes.items():
        if spelling not in current:
            flag = spelling if shape["flag"] in current else shape["flag"]
            grouped.setdefault(flag, []).append(spelling)
    entries = []
    for flag, spellings in sorted(grouped.items()):
        shape = shapes[spellings[0]]
        unclassed = f"a {spoken} flag that {release} dropped, not classed by the package"
        klass, reason, *renamed = classes.get(flag, ("unmodelled", unclassed))
        if shape["flag"] in current:  # a spelling of its own
            dest, takes, negatable, nargs, default = flag, False, False, 0, None
        else:
            dest, takes, negatable = shape["dest"], shape["takes_value"], shape["negatable"]
            nargs, default = shape["nargs"], shape["default"]
        reads_as = renamed[0] if renamed else None
        if reads_as is not None:
            dest = current[reads_as].dest
        aliases = tuple(sorted(one for one in spellings if one != flag))
        entries.append(
            FlagEntry(
                flag,
                aliases,
                dest,
                takes,
                negatable,
                nargs,
                default,
                "older",
                klass,
                reason,
                reads_as,
            )
        )
    return entries


@cache
def _older_classes(server: str) -> dict[str, list[str]]:
    """``flag_classes/<server>-older.json``: the class and reason of flags the newest release
    dropped."""
    name = f"{server.lower()}-older.json"
    entry = resources.files(__package__).joinpath("flag_classes").joinpath(name)
    if not entry.is_file():
        return {}
    classes: dict[str, list[str]] = json.loads(entry.read_text("utf-8"))["classes"]
    return classes


@dataclass(frozen=True, slots=True)
class Given:
    """One flag as the line gives it: the spelling written, the flag it names, and its value (a
    string, a list of strings for ``nargs``, or a bool for a switch)."""

    spelling: str
    entry: FlagEntry
    value: Any


@dataclass(frozen=True)
class LaunchLine:
    """A launch line read as the server reads it: the model it names (``None``: none), every
    flag given in order, the last value of each flag, the flags given more than once, what
    the server would log about the line (vLLM's duplicate-key warning), and what the server
    takes silently that an operator would miss (``unread``: a file of flags it does not read)."""

    release: Release
    model: str | None
    given: tuple[Given, ...]
    values: Mapping[str, Given]
    repeated: tuple[str, ...]
    warnings: tuple[str, ...]
    config_file: str | None
    defaults: Mapping[str, Any]
    json_keys: Mapping[str, Mapping[str, tuple[str, str]]]
    unread: tuple[str, ...] = ()

    def klass(self, given: Given) -> str:
        """The class of a flag as given: its table's, but ``no_effect`` for a flag the package
        does not model given at the server's own default (``--enable-chunked-prefill``, which
        is on for a generative model; ``--load-format auto``), which changes nothing."""
        entry = given.entry
        default = self.defaults.get(entry.flag, entry.default)
        at_default = default is not None and (
            given.value == default or (isinstance(given.value, str) and given.value == str(default))
        )
        return "no_effect" if entry.klass == "unmodelled" and at_default else entry.klass

    def by_class(self, klass: str) -> list[str]:
        """The flags of one class that the line gives (the last value of each), in order; for
        a JSON flag whose keys the table classifies, its keys of that class (``--flag.key``)."""
        found = []
        for one in self.values.values():
            keys = self.json_keys.get(one.entry.flag)
            if keys is None:
                if self.klass(one) == klass:
                    found.append(one.entry.flag)
                continue
            found += [
                f"{one.entry.flag}.{key}" for key in self.json_value(one) if keys[key][0] == klass
            ]
        return found

    def json_value(self, given: Given) -> dict[str, Any]:
        """A JSON flag's object, its keys checked against the table: a key the server's config
        class does not have is refused, as the server refuses it."""
        name = f"argument {given.entry.flag}"
        try:
            value = json.loads(given.value)
        except (ValueError, TypeError, RecursionError):
            raise UsageError(f"{name}: not JSON: {show(given.value, limit=40)}") from None
        if not isinstance(value, dict):
            raise UsageError(f"{name}: must be a JSON object: {show(given.value, limit=40)}")
        keys = self.json_keys[given.entry.flag]
        for key in value:
            if key not in keys:
                raise UsageError(
                    f"{name}: {show(str(key), limit=40)} is not a key of {self.release}'s "
                    f"{given.entry.flag}"
                )
        return value

    def modelled_json(self, given: Given) -> str:
        """A JSON flag's value with only its modelled keys, as the command reads it."""
        keys = self.json_keys[given.entry.flag]
        return json.dumps(
            {key: v for key, v in self.json_value(given).items() if keys[key][0] == "modelled"}
        )

    def reason(self, flag: str) -> str:
        """The table's reason for a flag (or a JSON flag's key, ``--flag.key``)."""
        name, _, key = flag.partition(".")
        if key:
            return self.json_keys[name][key][1]
        return next(one.entry.reason for one in self.values.values() if one.entry.flag == flag)


# --- the split ---------------------------------------------------------------------------------

# What a pasted command starts with, before its flags: the program and the module it runs.
_PROGRAMS: Final[Mapping[str, tuple[tuple[str, ...], ...]]] = {
    "vLLM": (
        ("-m", "vllm.entrypoints.openai.api_server"),
        ("-m", "vllm.entrypoints.cli.main", "serve"),
        ("vllm", "serve"),
    ),
    "SGLang": (
        ("-m", "sglang.launch_server"),
        ("sglang", "serve"),
        ("-m", "sglang.launch_server", "serve"),
    ),
}


def names_program(line: Sequence[str]) -> bool:
    """Whether a pasted line is a whole command (``vllm serve ...``, ``uv run ...``, a path to
    a program, ``-m MODULE``) rather than the server's flags alone: its first word is no flag,
    or Python's ``-m`` (no server has a ``-m`` flag, and its flags come before any positional)."""
    return bool(line) and (not line[0].startswith("-") or line[0] == "-m")


def strip_program(release: Release, command: Sequence[str]) -> tuple[list[str], bool]:
    """The flags of a pasted command, without its program (``python``, ``python3``, a path to
    one, ``uv run`` ...) and module; and whether it is ``vllm serve`` (whose first positional
    is the model). Raises ``UsageError`` for a command of another program."""
    words = list(command)
    for start in range(min(len(words), 4)):
        for program in _PROGRAMS[release.server]:
            tail = words[start : start + len(program)]
            last = os.path.basename(tail[0]) if tail else ""
            if tail and (tail == list(program) or (last, *tail[1:]) == program):
                return words[start + len(program) :], program[-1] == "serve"
    raise UsageError(
        f"after --, give the {release.server} command: "
        + " or ".join(
            " ".join(("python", *p) if p[0] == "-m" else p) for p in _PROGRAMS[release.server]
        )
        + f"; got {show(' '.join(words[:4]), limit=60)}"
    )


# --- reading the line --------------------------------------------------------------------------


def read_launch(
    grammar: ServerGrammar, tokens: Sequence[str], *, serve: bool = False
) -> LaunchLine:
    """The launch line ``tokens`` (the server's part, without its program) read as the server's
    parser reads it. ``serve``: the line is ``vllm serve``'s (the model may be its first
    positional, ``--model`` is moved there). Raises ``UsageError`` for what the server's parser
    refuses (an unknown flag, a missing value, an ambiguous prefix, a second model)."""
    words = list(tokens)
    config_file = _config_file(grammar, words)
    if config_file is not None:
        words = _expand_config(grammar, words, config_file, serve=serve)
    warnings: list[str] = []
    if grammar.flexible:
        words, duplicates = _flexible(words)
        if duplicates:
            warnings.append(f"Found duplicate keys {', '.join(sorted(duplicates))}")
    positional, given = _parse(grammar, words, serve=serve)
    values: dict[str, Given] = {}
    counts: dict[str, int] = {}
    for one in given:
        values.pop(one.entry.dest, None)
        values[one.entry.dest] = one
        counts[one.entry.dest] = counts.get(one.entry.dest, 0) + 1
    repeated = tuple(values[dest].entry.flag for dest, count in counts.items() if count > 1)
    model = _model(grammar, positional, values.get("model_path") or values.get("model"), serve)
    unread = tuple(_unread_config(grammar, one) for one in given if one.entry.flag == "--config")
    return LaunchLine(
        grammar.release,
        model,
        tuple(given),
        values,
        repeated,
        tuple(warnings),
        config_file,
        grammar.defaults,
        grammar.json_keys,
        unread,
    )


def _model(
    grammar: ServerGrammar, positional: str | None, named: Given | None, serve: bool
) -> str | None:
    """The model the line serves: ``vllm serve``'s positional, or its ``--model`` moved there
    (argparse_utils.py:324-356; both at once is an argparse error); the api_server's and
    SGLang's ``--model`` / ``--model-path``."""
    if positional is not None and not serve:
        raise UsageError(
            f"{grammar.release}: unexpected argument {show(positional, limit=40)} (this entry "
            "point reads the model from --model)"
        )
    if positional is not None and named is not None:
        raise UsageError(
            f"{grammar.release}: the model is given twice, {show(positional, limit=40)} and "
            f"{named.spelling} {show(named.value, limit=40)}: vLLM refuses that"
        )
    if positional is not None:
        return positional
    return None if named is None else str(named.value)


def _config_file(grammar: ServerGrammar, words: list[str]) -> str | None:
    """The ``--config FILE`` the line gives (the servers look for that exact word), or None."""
    if "--config" not in words:
        return None
    if words.count("--config") > 1:
        raise UsageError(f"{grammar.release}: more than one --config file given")
    index = words.index("--config")
    if index == len(words) - 1:
        raise UsageError(f"{grammar.release}: --config needs a YAML file")
    return words[index + 1]


# Where each server expands a file of flags: only for the word ``--config`` itself.
_CONFIG_WORD: Final[Mapping[str, str]] = {
    "vLLM": "vllm/utils/argparse_utils.py:371-372",
    "SGLang": "sglang/srt/server_args.py:683-689",
}


def _unread_config(grammar: ServerGrammar, given: Given) -> str:
    """A ``--config`` the server's parser takes but never reads: the servers expand a file of
    flags only where the line holds the word ``--config`` (which ``_config_file`` has already
    expanded), so ``--config=FILE`` or a prefix (``--conf FILE``) is stored and its flags never
    apply."""
    server = grammar.release.server
    # A path is shown whole (up to PATH_MAX): cut short, it would not say which file.
    written = show(f"{given.spelling}={given.value}", limit=4096)
    return (
        f"{written} is not read: {server} reads a file of flags only from the word --config "
        f"and the file after it ({_CONFIG_WORD[server]}), so its flags do not apply"
    )


def _vllm_yaml_name(path: str) -> bool:
    """Whether vLLM takes ``path`` as a file of flags: the text after its last dot, as written
    (vllm/utils/argparse_utils.py:633-637), so not ``SERVE.YAML``."""
    return path.rsplit(".", 1)[-1] in ("yaml", "yml")


def _sglang_yaml_name(path: str) -> bool:
    """Whether SGLang takes ``path`` as a file of flags: its file name's suffix, in any case
    (sglang/srt/utils/server_args_config_parser.py:155-159)."""
    return PurePath(path).suffix.lower() in (".yaml", ".yml")


# Each server's test of a file of flags' name, and its refusal.
_YAML_NAMES: Final[Mapping[str, tuple[Callable[[str], bool], str]]] = {
    VLLM.server: (_vllm_yaml_name, "vLLM reads only .yaml or .yml, in lower case"),
    SGLANG.server: (_sglang_yaml_name, "SGLang reads only .yaml or .yml"),
}


def _load_yaml(path: str, server: str) -> dict[str, Any]:
    """A ``--config`` file, as ``server`` reads it: ``yaml.safe_load`` of a file its name says
    is YAML (``_YAML_NAMES``), a mapping at its root."""
    is_yaml, rule = _YAML_NAMES[server]
    if not is_yaml(path):
        raise UsageError(f"--config {show(path, limit=60)}: {rule}")
    try:
        import yaml
    except ImportError:
        raise UsageError(
            "--config FILE.yaml needs PyYAML, which the servers read it with: "
            "pip install 'decode_ring[yaml]'"
        ) from None
    try:
        with open(path, encoding="utf-8") as stream:
            loaded = yaml.safe_load(stream)
    except OSError as error:
        raise UsageError(f"cannot read {path!a}: {error.strerror or error}") from None
    except yaml.YAMLError as error:
        raise UsageError(f"--config {path!a}: not YAML: {str(error).splitlines()[0]}") from None
    if loaded is None:
        loaded = {}
    if not isinstance(loaded, dict):
        raise UsageError(f"--config {path!a}: the file must hold a mapping of flags")
    return loaded


# SGLang cannot take a YAML key of a flag with a --no- form (BooleanOptionalAction): from 0.5.8
# it refuses the key, before it passed it on as "--KEY true", a word its parser refuses.
_SGLANG_NEGATABLE_KEY: Final = (
    'SGLang refuses the key %r, a flag with a --no- form ("Unsupported config option ... with '
    "action 'BooleanOptionalAction'\", sglang/srt/utils/server_args_config_parser.py:168-173)"
)


def _expand_config(
    grammar: ServerGrammar, words: list[str], path: str, *, serve: bool
) -> list[str]:
    """The line with the ``--config`` file's flags in it: vLLM puts them after the model of
    ``vllm serve`` (or first), so that the line's own flags win (argparse_utils.py:516-604,
    load_config_file :606-673); SGLang puts them before the whole line
    (server_args_config_parser.py:75-106, :164-214)."""
    loaded = _load_yaml(path, grammar.release.server)
    index = words.index("--config")
    rest = words[:index] + words[index + 2 :]
    expanded: list[str] = []
    for key, value in loaded.items():
        flag = f"--{key}"
        entry = grammar.spellings.get(flag)
        if not grammar.flexible and entry is not None and entry.negatable:
            raise UsageError(f"--config {show(path, limit=60)}: {_SGLANG_NEGATABLE_KEY % key}")
        if isinstance(value, bool):
            if grammar.flexible or entry is None or not entry.takes_value:
                if value:
                    expanded.append(flag)
                elif grammar.flexible and f"--no-{key}" in grammar.spellings:
                    expanded.append(f"--no-{key}")
            else:
                expanded += [flag, str(value).lower()]
        elif isinstance(value, list):
            if value:
                expanded += [flag, *(str(item) for item in value)]
        elif isinstance(value, dict):
            expanded += [flag, json.dumps(value)]
        else:
            expanded += [flag, str(value)]
    if not grammar.flexible:
        return expanded + rest
    at = 1 if serve and rest and not rest[0].startswith("-") else 0
    return rest[:at] + expanded + rest[at:]


def _flexible(words: list[str]) -> tuple[list[str], set[str]]:
    """vLLM's ``FlexibleArgumentParser.parse_args`` before argparse (argparse_utils.py:374-500):
    ``_`` as ``-`` in a flag's name, ``-O3`` as ``--optimization-level 3``, dotted keys merged
    into one JSON value per flag, placed last, and the exact repeats it warns about."""
    processed: list[str] = []
    for index, word in enumerate(words):
        if word.startswith("--"):
            key, eq, after = word.partition("=")
            key = _FLAG_NAME.sub(lambda m: m.group(0).replace("_", "-"), key, count=1)
            processed.append(key + eq + after)
        elif word.startswith("-O") and word != "-O":
            processed += ["--optimization-level", word[3:] if word[2:3] == "=" else word[2:]]
        elif word == "-O" and index + 1 < len(words) and words[index + 1] in ("0", "1", "2", "3"):
            processed.append("--optimization-level")
        else:
            processed.append(word)
    skip: set[int] = set()
    dotted: dict[str, dict[str, Any]] = {}
    duplicates: set[str] = set()
    seen: set[str] = set()
    for index, word in enumerate(processed):
        if index in skip:
            continue
        if word.startswith("--") and "." not in word:
            name = word.split("=", 1)[0]
            (duplicates if name in seen else seen).add(name)
            continue
        if word.startswith("-") and "." in word:
            name, eq, text = word.partition("=")
            if eq and "." not in name:
                continue
            if not eq:
                if index + 1 >= len(processed):
                    raise UsageError(f"argument {show(name, limit=40)}: expected one argument")
                text = processed[index + 1]
                skip.add(index + 1)
            key, *path = name.removesuffix("+").split(".")
            value: Any = json.dumps(text.split(",")) if name.endswith("+") else text
            _merge(dotted.setdefault(key, {}), path, _json_value(value), key, duplicates)
            skip.add(index)
    kept = [word for index, word in enumerate(processed) if index not in skip]
    for key, merged in dotted.items():
        kept += [key, json.dumps(merged)]
    return kept, duplicates


def _json_value(text: str) -> Any:
    """A dotted key's value as vLLM reads it: JSON, else a human-readable integer, else the
    string (argparse_utils.py:470-480)."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return human_readable_int(text)
    except Exception:
        return text


def _merge(
    target: dict[str, Any], path: list[str], value: Any, key: str, duplicates: set[str]
) -> None:
    """``recursive_dict_update`` of one dotted key (argparse_utils.py:421-439): lists append,
    and a key set again is a duplicate, also where a value is replaced by a nested one."""
    for depth, part in enumerate(path[:-1], 1):
        nested = target.get(part)
        if not isinstance(nested, dict):
            if part in target:
                duplicates.add(f"{key}.{'.'.join(path[:depth])}")
            nested = target[part] = {}
        target = nested
    last = path[-1] if path else ""
    if isinstance(value, list) and isinstance(target.get(last), list):
        target[last] += value
        return
    if last in target:
        duplicates.add(f"{key}.{'.'.join(path)}")
    target[last] = value


def _looks_like_value(grammar: ServerGrammar, word: str) -> bool:
    """Whether argparse takes ``word`` as a value, not an option: it does not start with ``-``,
    or is a negative number, or holds a space and names no flag before an ``=`` (argparse's
    ``_parse_optional`` finds the flag first: ``--speculative-config={"method": "mtp"}`` is
    the flag and its value)."""
    if not word.startswith("-") or _NEGATIVE_NUMBER.match(word):
        return True
    if " " not in word:
        return False
    try:
        return grammar.entry(word.split("=", 1)[0]) is None
    except UsageError:  # an ambiguous prefix: an option, which argparse then refuses
        return False


def _parse(
    grammar: ServerGrammar, words: list[str], *, serve: bool
) -> tuple[str | None, list[Given]]:
    """argparse over the flags of ``grammar``: each option with its values, and the positional
    model (``vllm serve``'s, and the api_server's ``model_tag``)."""
    given: list[Given] = []
    model: str | None = None
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word == "--" or _looks_like_value(grammar, word):
            if grammar.flexible and model is None and word != "--":
                model = word
                continue
            raise UsageError(f"{grammar.release}: unexpected argument {show(word, limit=40)}")
        spelling, eq, attached = word.partition("=") if "=" in word else (word, "", "")
        entry = grammar.entry(spelling)
        if entry is None:
            raise UsageError(_unknown(grammar, spelling))
        values, index = _values(grammar, entry, spelling, eq and attached, bool(eq), words, index)
        given.append(Given(spelling, entry, values))
    return model, given


def _values(
    grammar: ServerGrammar,
    entry: FlagEntry,
    spelling: str,
    attached: str,
    has_attached: bool,
    words: list[str],
    index: int,
) -> tuple[Any, int]:
    """The value(s) ``entry`` takes from the line, as its ``nargs`` says, and where the line
    goes on."""
    name = show(spelling, limit=40)
    if not entry.takes_value:
        if has_attached:
            raise UsageError(f"argument {name}: ignored explicit argument {show(attached)}")
        if entry.negatable:
            return not entry.negated(spelling), index
        return (not entry.default) if isinstance(entry.default, bool) else True, index
    if has_attached:
        return ([attached] if entry.nargs in ("+", "*") else attached), index
    taken: list[str] = []
    wanted = entry.nargs
    while index < len(words) and _looks_like_value(grammar, words[index]) and words[index] != "--":
        taken.append(words[index])
        index += 1
        if wanted in (None, "?") or (isinstance(wanted, int) and len(taken) == wanted):
            break
    if wanted is None and not taken:
        raise UsageError(f"argument {name}: expected one argument")
    if wanted == "+" and not taken:
        raise UsageError(f"argument {name}: expected at least one argument")
    if wanted is None or wanted == "?":
        return (taken[0] if taken else entry.default), index
    return taken, index


def _unknown(grammar: ServerGrammar, spelling: str) -> str:
    """One line for a flag the release does not define, with the spelling it has where the
    line wrote the other (SGLang does not read ``_`` as ``-``)."""
    release = grammar.release
    line = f"{show(spelling, limit=40)} is not a {release} flag"
    dashed = spelling[:2] + spelling[2:].replace("_", "-")
    table = VLLM_FLAGS if release.server == VLLM.server else SGLANG_FLAGS
    own = {one for spec in table if spec.package for one in spec.spellings(underscores=False)}
    if spelling.split("=", 1)[0] in own:
        line += " (it is decode-ring's own: give it before the launch line)"
    elif dashed != spelling and dashed in grammar.spellings:
        line += f" ({release.server} spells it {dashed}: it reads no underscores)"
    return line
