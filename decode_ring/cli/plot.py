"""``plan --plot``: a plan grid drawn as a heat map with matplotlib (``pip install
'decode_ring[plot]'``), an optional dependency imported only when a picture is drawn."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Final

from .._selector import DECODE_RING_FIT_LADDER
from ..plan import Plan, PlanRow
from ..printable import show
from ..units import format_size
from .output import write_atomically

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "LABELLED_CELLS",
    "MAX_PIXELS",
    "PlotFormatError",
    "plan_figure",
    "plot_format",
    "plot_plan",
]


class PlotFormatError(ValueError):
    """``plot_plan`` was given a path whose extension names a format
    matplotlib cannot write."""


REFUSED_COLOUR: Final = "#8c1c13"
UNSPLIT_COLOUR: Final = "#d9d9d9"
# The largest picture, in pixels a side: a grid whose figure at DPI would be wider or taller is
# drawn at a lower resolution, so a plan within its bound (64 x 64 cells) is drawn whole.
MAX_PIXELS: Final = 4096
DPI: Final = 110
# Grids of more cells show each cell's depth by its colour alone: a label a cell is the cost
# of drawing a large grid (4,096 labels: seconds and hundreds of MB).
LABELLED_CELLS: Final = 256
# Inches between the grid's texts and the legend.
LEGEND_GAP: Final = 0.15


def plot_format(path: str) -> str:
    """The format ``plot_plan`` writes ``path`` in: its extension's (``png``
    without one). Raises ``PlotFormatError`` for one matplotlib cannot
    write and ``ImportError`` without matplotlib."""
    from matplotlib.backend_bases import FigureCanvasBase

    extension = os.path.splitext(path)[1].lstrip(".").lower()
    formats = FigureCanvasBase.get_supported_filetypes()
    if extension and extension not in formats:
        raise PlotFormatError(
            f"matplotlib cannot write {show(extension, limit=40)} files; use one of "
            f"{', '.join(sorted(formats))}"
        )
    return extension or "png"


def plot_title(plan: Plan) -> str:
    """The plot's title: the model and every input behind the grid."""
    reserve = plan.reserve
    length = "" if reserve.max_model_len is None else f", max model len {reserve.max_model_len:,}"
    layout = f" ({plan.layout})" if plan.layout else ""
    return (
        f"decode ring depth per rank: {plan.model}{layout}, requested depth {plan.requested}\n"
        f"free {format_size(plan.free)}, weights {format_size(reserve.weights)} / tp, "
        f"other {format_size(reserve.other)}{length}"
    )


def plot_plan(plan: Plan, path: str) -> None:
    """Draws ``plan`` (``plan_figure``) into exactly ``path``, in the format
    its extension names (PNG without one), at most ``MAX_PIXELS`` a side, atomically
    (``write_atomically``: a failed write leaves the old file). Needs matplotlib
    (``pip install 'decode_ring[plot]'``): raises ``ImportError`` without it,
    ``PlotFormatError`` for a format it cannot write, and ``OSError`` when
    the file cannot be written."""
    fmt = plot_format(path)
    figure = plan_figure(plan)
    write_atomically(path, lambda target: figure.savefig(target, format=fmt))


def plot_dpi(width: float, height: float) -> float:
    """The resolution of a figure of ``width`` x ``height`` inches: ``DPI``, or less where that
    would make it more than ``MAX_PIXELS`` a side (a hundredth below: matplotlib rounds)."""
    return min(DPI, (MAX_PIXELS - 0.01) / width, (MAX_PIXELS - 0.01) / height)


def plan_figure(plan: Plan) -> Figure:
    """``plan`` as a heat map: one discrete colour per depth, "refused" and
    "cannot split" in the legend, the inputs in the title, and the table's
    columns (state and KV cache per sequence beside each row, the largest
    batch at full depth after it)."""
    # A figure of its own on an Agg canvas, not pyplot's: no global figure to close, and a
    # tenth of a second less to import.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import BoundaryNorm, ListedColormap
    from matplotlib.figure import Figure

    ladder = sorted(DECODE_RING_FIT_LADDER)
    depth_colours = _depth_colours(len(ladder))
    colours = ListedColormap([*depth_colours, REFUSED_COLOUR, UNSPLIT_COLOUR])
    refused, unsplit = len(ladder), len(ladder) + 1
    norm = BoundaryNorm([i - 0.5 for i in range(len(ladder) + 3)], colours.N)
    grid = [
        [refused if cell.depth is None else ladder.index(cell.depth) for cell in row.cells]
        if row.problem is None
        else [unsplit] * len(plan.batch_sizes)
        for row in plan.rows
    ]
    width, height = 1.0 * len(plan.batch_sizes) + 5.5, 0.6 * len(plan.rows) + 2.4
    figure = Figure(figsize=(width, height), dpi=plot_dpi(width, height))
    FigureCanvasAgg(figure)
    axes = figure.subplots()
    # A mesh of one quad a cell, drawn as vectors: an image would be resampled to the
    # picture's pixels in float arrays of its size (hundreds of MB at 4,096 pixels a side).
    columns = [x - 0.5 for x in range(len(plan.batch_sizes) + 1)]
    rows = [y - 0.5 for y in range(len(plan.rows) + 1)]
    axes.pcolormesh(columns, rows, grid, cmap=colours, norm=norm, antialiased=False)
    axes.invert_yaxis()
    axes.set_xticks(range(len(plan.batch_sizes)), [str(batch) for batch in plan.batch_sizes])
    labelled = len(plan.rows) * len(plan.batch_sizes) <= LABELLED_CELLS
    axes.set_yticks(range(len(plan.rows)), [row_label(row, labelled) for row in plan.rows])
    axes.set_xlabel("max batch size")
    _label_cells(axes, plan, ladder)
    axes.set_title(plot_title(plan), fontsize=9)
    legend = figure.legend(
        handles=_legend(ladder, depth_colours), loc="center right", fontsize=8, frameon=False
    )
    # The grid and its texts keep left of the legend as drawn: its width is its labels', the
    # same in inches whatever the figure's width.
    legend_left = legend.get_window_extent().x0 / figure.bbox.width  # the figure's renderer
    _lay_out(figure, width, height, labelled, legend_left - LEGEND_GAP / width)
    return figure


def _lay_out(figure: Figure, width: float, height: float, labelled: bool, right: float) -> None:
    """The margins left of ``right`` (a fraction of the width): matplotlib's tight layout for a
    grid of labelled cells; for a larger one (whose labels are its rows' tp sizes) fixed margins,
    in inches, that hold the same: the tight layout measures every label twice, a third of the
    drawing's time."""
    if labelled:
        figure.tight_layout(rect=(0, 0, right, 1))
        # Laid out once: no layout engine left, so saving draws the figure once, not twice.
        figure.set_layout_engine(None)
        return
    figure.subplots_adjust(
        left=0.8 / width, right=right - 1.0 / width, bottom=0.7 / height, top=1 - 0.7 / height
    )


def _depth_colours(count: int) -> list[str]:
    """``count`` colours of viridis, one per depth of the ladder, shallowest first."""
    import matplotlib
    from matplotlib.colors import to_hex

    viridis = matplotlib.colormaps["viridis"]
    return [to_hex(viridis(i / (count - 1))) for i in range(count)]


def _label_cells(axes: Any, plan: Plan, ladder: list[int]) -> None:
    """Each cell's depth (or "refused") up to ``LABELLED_CELLS`` cells, "cannot split" across
    an unsplit row, and the largest batch at full depth after each row."""
    labelled = len(plan.rows) * len(plan.batch_sizes) <= LABELLED_CELLS
    for y, row in enumerate(plan.rows):
        for x, cell in enumerate(row.cells if labelled else ()):
            label = "refused" if cell.depth is None else str(cell.depth)
            dark = cell.depth is None or ladder.index(cell.depth) < len(ladder) - 2
            axes.text(x, y, label, ha="center", va="center", color="white" if dark else "black")
        if row.problem is not None:
            axes.text((len(plan.batch_sizes) - 1) / 2, y, "cannot split", ha="center", va="center")
        axes.text(len(plan.batch_sizes) - 0.3, y, f"  {row.full_depth}", va="center")
    axes.text(
        len(plan.batch_sizes) - 0.3, -0.75, "  full depth\n  up to batch", va="bottom", fontsize=8
    )


def _legend(ladder: list[int], depth_colours: list[str]) -> list[Any]:
    """A patch per depth, and the refused and unsplit colours."""
    from matplotlib.patches import Patch

    legend = [
        Patch(color=colour, label=f"depth {depth}")
        for depth, colour in zip(ladder, depth_colours, strict=True)
    ]
    return [
        *legend,
        Patch(color=REFUSED_COLOUR, label="refused (does not boot)"),
        Patch(color=UNSPLIT_COLOUR, label="cannot split over tp"),
    ]


def row_label(row: PlanRow, sizes: bool = True) -> str:
    """A row's label: its tensor-parallel size and, as the table shows them (where ``sizes``:
    a grid of cells labelled), the state and KV cache per sequence on one rank."""
    if row.per_sequence_bytes is None or not sizes:
        return f"tp {row.tp_size}"
    kv = "" if not row.kv_per_sequence_bytes else f"\nkv {format_size(row.kv_per_sequence_bytes)}"
    return f"tp {row.tp_size}\nstate {format_size(row.per_sequence_bytes)}{kv}"
