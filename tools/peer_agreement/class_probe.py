"""The servers' config classes, seen from the oracle's process.

``Builder`` runs ``config_classes.py build SERVER`` in an interpreter that has the transformers
the server pins; ``Snapshots`` holds one a server (the oracle's ``--transformers``), and
``rebuild``/``attribute_view`` turn a snapshot back into the attributes the servers' code reads.
``compare`` holds a checkout's ``decode_ring.models.read.class_fields`` against the class's
reading of the same config, field by field (the tables' field lists,
``decode_ring/models/tables/``): the same value, both absent, or both refusing
(``tests/test_models_config_classes.py``).
"""

from __future__ import annotations

import json
import subprocess
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "config_classes.py"
ABSENT = "<absent>"


class Builder:
    """``config_classes.py build SERVER`` running in one interpreter: ``build(config)`` is the
    server class's answer for one config."""

    def __init__(self, python: str, server: str, root: Path) -> None:
        self.process = subprocess.Popen(
            [python, str(SCRIPT), "build", server, str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        ready = json.loads(self.process.stdout.readline())
        self.transformers = ready["ready"]

    def build(self, config: Mapping[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(config) + "\n")
        self.process.stdin.flush()
        answer: dict[str, Any] = json.loads(self.process.stdout.readline())
        return answer

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=60)


class ConfigRefusal(ValueError):
    """The server's config class refused the config (the server fails to load it)."""


def _key(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".") if part.isdigit())


def _requirement_met(version: str, requirement: str) -> bool:
    """Whether ``version`` meets a ``==x`` or ``>=a,<b`` requirement (numeric parts only)."""
    key = _key

    for clause in requirement.split(","):
        clause = clause.strip()
        for operator, test in (
            ("==", lambda a, b: a == b),
            (">=", lambda a, b: a >= b),
            ("<=", lambda a, b: a <= b),
            ("<", lambda a, b: a < b),
            (">", lambda a, b: a > b),
        ):
            if clause.startswith(operator):
                if not test(key(version), key(clause[len(operator) :])):
                    return False
                break
    return True


def wheel_requirement(wheel: Path) -> str:
    """The transformers requirement of a wheel's METADATA (``Requires-Dist: transformers...``),
    read from the wheel file."""
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            if member.endswith(".dist-info/METADATA"):
                text = archive.read(member).decode("utf-8")
                for line in text.splitlines():
                    if line.startswith("Requires-Dist: transformers") and ";" not in line:
                        return line.split("transformers", 1)[1].strip().strip("()")
    return ""


class Snapshots:
    """Each server's config class, built under the transformers it pins: one ``Builder`` a
    server, in the interpreter of ``pythons`` whose transformers meets the wheel's requirement
    (``Requires-Dist``, read from the wheel file), the newest of them where several do."""

    def __init__(
        self, pythons: Sequence[str], roots: Mapping[str, Path], wheels: Mapping[str, Path]
    ) -> None:
        self.builders: dict[str, Builder] = {}
        self.cache: dict[tuple[str, str], dict[str, Any]] = {}
        self.requirements: dict[str, str] = {}
        versions = {python: _version(python) for python in pythons}
        for server, root in roots.items():
            wanted = wheel_requirement(wheels[server])
            self.requirements[server] = wanted
            meeting = [p for p, v in versions.items() if _requirement_met(v, wanted)]
            # The newest in range, as the package models a range (decode_ring.releases).
            python = max(meeting, key=lambda p: _key(versions[p]), default=None)
            if python is None:
                raise SystemExit(
                    f"no --transformers interpreter meets {server}'s transformers{wanted} "
                    f"(found {sorted(set(versions.values()))})"
                )
            self.builders[server] = Builder(python, server, root)

    def answer(self, server: str, config: Mapping[str, Any]) -> dict[str, Any]:
        key = (server, json.dumps(config, sort_keys=True, default=str))
        if key not in self.cache:
            self.cache[key] = self.builders[server].build(config)
        return self.cache[key]

    def versions(self) -> dict[str, str]:
        return {server: builder.transformers for server, builder in self.builders.items()}

    def close(self) -> None:
        for builder in self.builders.values():
            builder.close()


# The snapshots the oracle reads configs through (``__main__`` sets them with
# ``--transformers``); ``None``: the raw file, as before issue 27.
ACTIVE: list[Snapshots] = []


def active() -> Snapshots | None:
    return ACTIVE[0] if ACTIVE else None


def _version(python: str) -> str:
    done = subprocess.run(
        [python, "-c", "import transformers; print(transformers.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip().splitlines()[-1]


def rebuild(snapshot: Any, make: Any) -> Any:
    """A snapshot's values with every nested config snapshot made an object by ``make``."""
    if isinstance(snapshot, Mapping) and "__class__" in snapshot and "attrs" in snapshot:
        return make(snapshot)
    if isinstance(snapshot, Mapping):
        return {key: rebuild(item, make) for key, item in snapshot.items()}
    if isinstance(snapshot, list):
        return [rebuild(item, make) for item in snapshot]
    if snapshot == "Infinity":
        return float("inf")
    return snapshot


def attribute_view(snapshot: Mapping[str, Any]) -> dict[str, Any]:
    """What reading a config object's attributes answers, as plain fields: its instance
    attributes, each property's value (not one that raised) and each alias's."""
    fields = dict(snapshot["attrs"])
    for name, found in snapshot.get("properties", {}).items():
        if not (isinstance(found, Mapping) and "__error__" in found):
            fields[name] = found
    for alias, target in snapshot.get("aliases", {}).items():
        if target in fields:
            fields[alias] = fields[target]
    return fields


def value(snapshot: Mapping[str, Any], name: str) -> Any:
    """Field ``name`` of a config object's snapshot, as reading the attribute answers it."""
    aliases = snapshot.get("aliases", {})
    attrs = snapshot["attrs"]
    properties = snapshot.get("properties", {})
    if name in aliases:
        name = aliases[name]
    if name in properties:
        found = properties[name]
        if isinstance(found, Mapping) and "__error__" in found:
            return ABSENT
        return found
    return attrs.get(name, ABSENT)


def text_snapshot(snapshot: Mapping[str, Any], key: str | None) -> Mapping[str, Any] | None:
    """The text config's snapshot of a wrapper (``key``), the snapshot itself otherwise."""
    if key is None:
        return snapshot
    text = value(snapshot, key)
    if key == "text_config" and text in (ABSENT, None):
        text = value(snapshot, "llm_config")
    return text if isinstance(text, Mapping) and "attrs" in text else None


def plain(value: Any) -> Any:
    """A value as JSON holds it (tuples as lists, a config object as its snapshot)."""
    return json.loads(json.dumps(value, default=str))


def package_fields(config: Mapping[str, Any], layout: str) -> tuple[str, Any]:
    """The checkout's reading: ``("fields", mapping)`` or ``("refusal", message)``."""
    from decode_ring.models.read import class_fields

    try:
        return "fields", plain(dict(class_fields(config, layout=layout)))
    except ValueError as error:
        return "refusal", f"{type(error).__name__}: {error}"


def package_refuses(config: Mapping[str, Any], layout: str) -> bool:
    """Whether the checkout's ``ssm_state`` refuses ``config`` (its reader refuses what the class
    refuses where the class's check is one of the reader's own)."""
    from decode_ring.models import ssm_state

    try:
        ssm_state(config, layout=layout)
    except ValueError:
        return True
    return False


def read_fields(release: Any, model_type: str) -> tuple[str, ...]:
    """The fields decode_ring reads of a model type (its table entries' field lists)."""
    from decode_ring.models.classes import config_class

    found = config_class(release, model_type)
    return tuple(found.fields) if found is not None else ()


def compare(builder: Builder, server: str, config: Mapping[str, Any]) -> list[str]:
    """Where the checkout's reading of ``config`` under ``server`` differs from the class's."""
    from decode_ring.models.families import WRAPPED
    from decode_ring.releases import SGLANG, VLLM

    release = VLLM if server == "vllm" else SGLANG
    peer = builder.build(config)
    kind, ours = package_fields(config, server)
    if "no_class" in peer and kind == "fields":
        return []  # no class: the checkpoint's own code, which the package reads as the file
    if "refusal" in peer or "no_class" in peer:
        if kind == "refusal" or package_refuses(config, server):
            return []
        return [f"class: {peer.get('refusal') or peer.get('no_class')}; package read it"]
    if kind == "refusal":
        if "has no" in ours and "model" in ours:
            return []  # the layout's server does not serve the family: not a class question
        return [f"package: {ours}; class built it"]
    root_type = config.get("model_type")
    key = None
    text_type = root_type
    if root_type in WRAPPED:
        key = "text_config"
        text_type = (config.get("text_config") or {}).get("model_type") or WRAPPED[root_type]
    snapshot = text_snapshot(peer["snapshot"], key)
    if snapshot is None:
        return [f"class built no text config for {root_type!r}"]
    out = []
    for name in read_fields(release, str(text_type)):
        theirs = plain(value(snapshot, name))
        mine = ours.get(name, ABSENT)
        if theirs != mine:
            out.append(f"{name}: class {str(theirs)[:120]}, package {str(mine)[:120]}")
    return out
