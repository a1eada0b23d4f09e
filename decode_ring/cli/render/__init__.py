"""The text and JSON forms of what the commands compute, side by side: ``render`` turns a
command's value into a ``Rendered`` (its JSON object, its text lines, and a refusal line when the
server would not boot). Importing this package registers every renderer, one module per kind of
value; a new command's value gets its renderer in a module here."""

from __future__ import annotations

from . import plan, ring, servers, state
from .base import Rendered, render

__all__ = ["Rendered", "plan", "render", "ring", "servers", "state"]
