"""What every renderer shares: ``Rendered`` (a command's JSON object, its text lines, and a
refusal line when the server would not boot), the ``render`` dispatcher, and the table helpers.
Text shows every value that came from the user or the environment escaped (as ``ascii()``
writes it), so that any stdout encoding can print it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import singledispatch
from typing import Any

from ...units import format_size

__all__ = ["Rendered", "layout_text", "render", "sized", "source_text", "table"]


@dataclass(frozen=True)
class Rendered:
    """A command's result, ready to print: one JSON object, or text lines;
    ``refusal`` is one line for stderr when the server would refuse to boot."""

    json: dict[str, Any]
    lines: list[str]
    refusal: str | None = None


@singledispatch
def render(value: object) -> Rendered:
    """The ``Rendered`` form of a command's value."""
    raise TypeError(f"no renderer for {type(value).__name__}")


def table(rows: list[tuple[str, str]]) -> list[str]:
    """Label and value rows, the values in one column."""
    width = max(len(label) for label, _ in rows)
    return [f"{label:<{width}}  {value}" for label, value in rows]


def sized(label: str, value: int | None, width: int = 22) -> str:
    """One labelled size line, in binary units and in bytes, the label ``width`` wide."""
    if value is None:
        return f"  {label:<{width}} {'-':>11}"
    return f"  {label:<{width}} {format_size(value):>11}  ({value:,} B)"


def layout_text(layout: str | None, version: str | None) -> str:
    """A layout and the release of its server whose rules laid the state out."""
    servers = {"vllm": "vLLM", "sglang": "SGLang"}
    if layout in servers and version is not None:
        return f"{layout} layout ({servers[layout]} {version})"
    return f"{layout} layout"


def source_text(source: str | None) -> str:
    """Where a config came from: its file, escaped, or ``(mapping)``."""
    return ascii(source) if source else "(mapping)"
