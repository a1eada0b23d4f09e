"""The refusals of ``decode_ring.models``: a config it cannot size, a split it cannot make, an
argument it refuses."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Final

from ..printable import show

__all__ = [
    "MAX_RESULT",
    "ModelConfigError",
    "NotModelledError",
    "TensorParallelSplitError",
    "check_within_64_bits",
    "refuse_argument",
]

# The largest count a result carries (bytes, blocks, slots, tokens): a 64-bit unsigned count.
# Past it the config or the launch describes nothing a GPU holds.
MAX_RESULT: Final = 2**64 - 1


class ModelConfigError(ValueError):
    """A config (or an argument) ``ssm_state`` cannot size. The message is one line naming the
    file (when there is one), the family and the field; the same are in ``path``, ``family`` and
    ``field`` (``None`` where they do not apply). A refused argument's message is ``argument
    NAME: PROBLEM``, with ``field`` the argument's name and ``problem`` the rest, so that a
    command line can name its own flag instead (``worded``)."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        family: str | None = None,
        field: str | None = None,
        problem: str | None = None,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.family = family
        self.field = field
        self.problem = problem

    def worded(self, names: Mapping[str, str]) -> str:
        """The message with the refused argument named as ``names`` names it (a command line's
        flag for each API argument), else by its own name; the message as it is for a refusal
        of anything but an argument."""
        if self.problem is None:
            return str(self)
        assert self.field is not None  # refuse_argument gives both
        return f"argument {names.get(self.field, self.field)}: {self.problem}"


class TensorParallelSplitError(ModelConfigError):
    """The model cannot be split over ``tp_size`` ranks: a head or channel
    count that the servers shard evenly does not divide by it."""


class NotModelledError(ModelConfigError):
    """The servers serve the model, but its state is of a shape this package does not model yet
    (several KV-cache specs per model: Qwen4-Exp, Inkling); the message says what is missing."""


def refuse_argument(
    name: str,
    problem: str,
    error: type[ModelConfigError] = ModelConfigError,
    *,
    path: str | None = None,
    family: str | None = None,
) -> ModelConfigError:
    """The refusal of argument ``name`` (an ``error``): ``argument NAME: PROBLEM``."""
    return error(
        f"argument {name}: {problem}", path=path, family=family, field=name, problem=problem
    )


def check_within_64_bits(counts: Mapping[str, object], what: str = "") -> None:
    """Raises ``OverflowError`` naming the first of ``counts`` (a result's fields, by name) that
    is an ``int`` past ``MAX_RESULT`` or a ``float`` that is not finite: ``[what: ]FIELD would
    be VALUE, beyond the 18446744073709551615 a 64-bit count holds``."""
    for field, value in counts.items():
        beyond = (isinstance(value, int) and value > MAX_RESULT) or (
            isinstance(value, float) and not math.isfinite(value)
        )
        if beyond:
            where = f"{what}: " if what else ""
            raise OverflowError(
                f"{where}{field} would be {show(value)}, beyond the {MAX_RESULT} a 64-bit "
                "count holds"
            )
