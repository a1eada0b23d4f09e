"""The refusals of ``decode_ring.models``: a config it cannot size, a split it cannot make."""

from __future__ import annotations

__all__ = ["ModelConfigError", "TensorParallelSplitError"]


class ModelConfigError(ValueError):
    """A config (or an argument) ``ssm_state`` cannot size. The message is one line naming the
    file (when there is one), the family and the field; the same are in ``path``, ``family`` and
    ``field`` (``None`` where they do not apply)."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        family: str | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.family = family
        self.field = field


class TensorParallelSplitError(ModelConfigError):
    """The model cannot be split over ``tp_size`` ranks: a head or channel
    count that the servers shard evenly does not divide by it."""
