"""A family's fields, read the way the servers need them: present, integers, bounded, and named
(with the file and the family) in every refusal."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from ..printable import show, type_name
from .errors import ModelConfigError, TensorParallelSplitError

# No checkpoint comes near this; it keeps a hostile config from building a huge layer tuple.
MAX_LAYERS: Final = 100_000
# Tensor sizes are int64 in every server; a larger field describes no model.
MAX_FIELD: Final = 2**63 - 1


class Fields:
    """One family's fields (``fields``, the text config of a wrapper, as the server's config
    class holds them), the whole config (``root``), what the file itself gives (``given``: the
    fields before the class filled in its defaults), and what an error message names: file,
    family, field."""

    __slots__ = ("family", "fields", "given", "path", "prefix", "root")

    def __init__(
        self,
        fields: Mapping[str, Any],
        root: Mapping[str, Any],
        family: str,
        path: str | None,
        prefix: str = "",
        given: Mapping[str, Any] | None = None,
    ) -> None:
        self.fields = fields
        self.root = root
        self.family = family
        self.path = path
        self.prefix = prefix
        self.given = fields if given is None else given

    def nested(self, *keys: str) -> Fields:
        """The fields of the mapping at ``keys`` (``linear_attn_config``), named in refusals with
        their path (``linear_attn_config.num_heads``); refused when one is not a mapping."""
        fields: Fields = self
        for key in keys:
            value = fields.fields.get(key)
            if not isinstance(value, Mapping):
                problem = "missing" if value is None else f"must be a mapping, got {show(value)}"
                raise fields.fail(key, problem)
            fields = Fields(value, self.root, self.family, self.path, f"{fields.prefix}{key}.")
        return fields

    def fail(
        self, field: str, problem: str, error: type[ModelConfigError] = ModelConfigError
    ) -> ModelConfigError:
        """The refusal of ``field``: ``<file>: <family> config: field '<field>': <problem>``."""
        where = f"{self.path!a}: " if self.path is not None else ""
        name = self.prefix + field
        return error(
            f"{where}{self.family} config: field {name!a}: {problem}",
            path=self.path,
            family=self.family,
            field=name,
        )

    def has(self, field: str) -> bool:
        """Whether ``field`` is given and not ``null``."""
        return self.fields.get(field) is not None

    def int_(self, field: str, *, minimum: int = 1) -> int:
        """``field``, an ``int`` from ``minimum`` to 2**63 - 1; refused when missing."""
        if field not in self.fields:
            raise self.fail(field, "missing")
        return self._checked(field, self.fields[field], minimum)

    def opt_int(self, field: str, *, minimum: int = 1) -> int | None:
        """``field`` as ``int_`` reads it, or ``None`` when missing or ``null``."""
        value = self.fields.get(field)
        return None if value is None else self._checked(field, value, minimum)

    def number(self, field: str) -> float:
        """``field``, a positive finite ``int`` or ``float``; refused when missing."""
        if field not in self.fields:
            raise self.fail(field, "missing")
        value = self.fields[field]
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise self.fail(field, f"must be a number, got {show(value)} ({type_name(value)})")
        if not 0 < value <= MAX_FIELD:
            raise self.fail(field, f"must be positive and at most 2**63 - 1, got {show(value)}")
        return value

    def int_or_auto(self, field: str, auto: Callable[[], int]) -> int:
        """``field``, or ``auto()`` where it says ``"auto"`` (transformers resolves it,
        ``FalconH1Config`` / ``GraniteMoeHybridConfig.__post_init__``)."""
        return auto() if self.fields.get(field) == "auto" else self.int_(field)

    def either_int(self, field: str, legacy: str) -> int:
        """``field``, or its legacy spelling, which transformers 5 prefers when both are given
        (``NemotronHConfig.__post_init__``); two disagreeing spellings are refused."""
        if field in self.fields and legacy in self.fields:
            new, old = self.int_(field), self.int_(legacy)
            if new != old:
                raise self.fail(legacy, f"is {show(old)} but {field} is {show(new)}")
            return new
        return self.int_(legacy if legacy in self.fields else field)

    def num_layers(self) -> int:
        """``num_hidden_layers``, from 0 to ``MAX_LAYERS``: one limit, worded one way, however
        large the count (not ``MAX_FIELD``'s "at most 2**63 - 1")."""
        value = self.fields.get("num_hidden_layers")
        if isinstance(value, int) and not isinstance(value, bool) and value > MAX_LAYERS:
            raise self.fail("num_hidden_layers", f"{show(value)} layers is implausible")
        return self.int_("num_hidden_layers", minimum=0)

    def entries(self, field: str, length: int | None, *, pattern: bool = False) -> Any:
        """List ``field`` (a string when ``pattern``), at most ``MAX_LAYERS`` long and
        ``length`` long when that is given; refused when missing."""
        if field not in self.fields:
            raise self.fail(field, "missing")
        value = self.fields[field]
        if pattern and not isinstance(value, str):
            raise self.fail(field, f"must be a string, got {show(value)}")
        if not pattern and not isinstance(value, list | tuple):
            raise self.fail(field, f"must be a list of layer types, got {show(value)}")
        if len(value) > MAX_LAYERS:
            raise self.fail(field, f"{len(value)} layers is implausible")
        if length is not None and len(value) != length:
            raise self.fail(field, f"has {len(value)} entries but num_hidden_layers is {length}")
        return value

    def layer_kinds(
        self, field: str, vocabulary: frozenset[str], length: int | None, note: str = ""
    ) -> tuple[str, ...]:
        """List ``field``, every entry in ``vocabulary`` (else the refusal ends with ``note``),
        ``length`` long when that is given."""
        value = self.entries(field, length)
        for index, entry in enumerate(value):
            if not isinstance(entry, str) or entry not in vocabulary:
                expected = ", ".join(sorted(vocabulary))
                raise self.fail(field, f"entry {index} is {show(entry)}; expected {expected}{note}")
        return tuple(value)

    def layer_list(
        self,
        field: str,
        ssm: frozenset[str],
        other: frozenset[str],
        length: int | None,
        note: str = "",
    ) -> tuple[int, ...]:
        """Indices of the entries of list ``field`` that are in ``ssm``; every entry must be in
        ``ssm`` or ``other`` (else the refusal ends with ``note``), and there must be ``length``
        of them when ``length`` is given."""
        return positions(self.layer_kinds(field, ssm | other, length, note), ssm)

    def _checked(self, field: str, value: object, minimum: int) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.fail(field, f"must be an integer, got {show(value)} ({type_name(value)})")
        if value < minimum:
            raise self.fail(field, f"must be at least {minimum}, got {show(value)}")
        if value > MAX_FIELD:
            raise self.fail(field, f"must be at most 2**63 - 1, got {show(value)}")
        return value


def positions(kinds: tuple[str, ...] | str, names: frozenset[str] | str) -> tuple[int, ...]:
    """The indices of the entries of ``kinds`` (a list, or a pattern string) in ``names``."""
    return tuple(index for index, kind in enumerate(kinds) if kind in names)


def divide(cfg: Fields, field: str, value: int, tp: int, terms: str = "") -> int:
    """``value // tp``, refused with ``TensorParallelSplitError`` naming ``field`` when ``tp``
    does not divide ``value``; ``terms`` spells the fields ``value`` is made of, where it is not
    ``field`` alone (``"mamba_expand * hidden_size"``)."""
    if value % tp:
        what = f"{show(value)} ({terms})" if terms else show(value)
        raise cfg.fail(
            field,
            f"tp_size {show(tp)} does not divide {what}; the servers shard it evenly",
            TensorParallelSplitError,
        )
    return value // tp
