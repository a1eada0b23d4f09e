"""``plan --plot``'s figure as matplotlib objects, not pixels (``decode_ring.cli.plot``): the
mesh's cell edges and its aliased drawing, the Agg canvas it is drawn on, the bound of
``LABELLED_CELLS`` cells labelled (a 16 x 16 grid labelled, a 16 x 17 one not), the rows' labels
with their state, the tight layout of a labelled grid and the fixed margins of a larger one, the
resolution at and past ``MAX_PIXELS`` a side, and the format of a path without an extension.

Plans come from the library (``decode_ring.plan.plan``) without a config: 48 SSM layers, the
given state per sequence at tp 1 divided evenly by each tensor-parallel size, no weights and no
KV cache, so the full ring of 8 fits every cell of these grids. A figure is ``1.0`` inch a batch
size and ``5.5`` more wide, ``0.6`` inch a tensor-parallel size and ``2.4`` more tall, at
``DPI`` (110) dots an inch unless that would pass ``MAX_PIXELS`` (4,096) a side.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy
import pytest
from matplotlib.backend_bases import GraphicsContextBase, RendererBase
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import QuadMesh
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox, Transform

from decode_ring.cli.plot import DPI, LABELLED_CELLS, MAX_PIXELS, plan_figure, plot_dpi, plot_format
from decode_ring.plan import Plan, Reserve, plan

from .support import GiB, MiB

pytestmark = pytest.mark.usefixtures("cell")

NO_WEIGHTS = Reserve(0, "--weights", 0, None)


def grid(tp_sizes: Sequence[int], batch_sizes: Sequence[int], state: int = 16 * MiB) -> Plan:
    """The plan of 48 SSM layers of ``state`` per sequence at tp 1 on 40 GiB per rank."""
    return plan(
        None, 40 * GiB, NO_WEIGHTS, tp_sizes, batch_sizes, ssm_layers=48, per_seq_state=state
    )


def sizes(count: int) -> tuple[int, ...]:
    """``count`` sizes: 1, 2, ..., ``count``."""
    return tuple(range(1, count + 1))


def the_mesh(figure: Figure) -> QuadMesh:
    (axes,) = figure.axes
    (mesh,) = axes.collections
    assert isinstance(mesh, QuadMesh)
    return mesh


def extents(figure: Figure) -> dict[str, Bbox]:
    """Where the figure draws the grid with its labels and title, and the legend, in pixels."""
    assert isinstance(figure.canvas, FigureCanvasAgg)
    renderer = figure.canvas.get_renderer()  # type: ignore[no-untyped-call]
    (axes,) = figure.axes
    (legend,) = figure.legends
    grid_box = axes.get_tightbbox(renderer)
    assert grid_box is not None
    return {"grid": grid_box, "legend": legend.get_window_extent(renderer)}


# --- the mesh ----------------------------------------------------------------------------------


def test_each_cell_is_one_quad_centred_on_its_row_and_column() -> None:
    figure = plan_figure(grid((1, 2), (8, 16, 32)))
    coordinates = numpy.asarray(the_mesh(figure).get_coordinates())
    # 2 rows of 3 cells: 3 x 4 corners, each cell one unit wide, centred on its indices (the
    # ticks and the cells' labels sit at 0, 1, 2 across and 0, 1 down).
    assert coordinates.shape == (3, 4, 2)
    assert coordinates[..., 0].tolist() == [[-0.5, 0.5, 1.5, 2.5]] * 3
    assert coordinates[..., 1].tolist() == [[-0.5] * 4, [0.5] * 4, [1.5] * 4]
    (axes,) = figure.axes
    # The first tensor-parallel size on top.
    assert axes.get_ylim() == (1.5, -0.5)
    assert [tick.get_text() for tick in axes.get_xticklabels()] == ["8", "16", "32"]


class MeshRecorder(RendererBase):
    """A renderer that records how it is asked to draw a quad mesh, and draws nothing."""

    def __init__(self) -> None:
        super().__init__()
        self.antialiased: list[object] = []

    def draw_quad_mesh(
        self,
        gc: GraphicsContextBase,
        master_transform: Transform,
        meshWidth: Any,  # matplotlib's names
        meshHeight: Any,
        coordinates: Any,
        offsets: Any,
        offsetTrans: Transform,
        facecolors: Any,
        antialiased: bool,
        edgecolors: Any,
    ) -> None:
        self.antialiased.append(antialiased)


def test_the_mesh_is_drawn_without_antialiasing() -> None:
    # Antialiased edges would blend each cell's colour into its neighbours': the renderer is
    # asked for an aliased mesh. (QuadMesh draws with its own flag; Collection's
    # get_antialiased() answers the rcParams default, which the mesh does not draw with.)
    recorder = MeshRecorder()
    the_mesh(plan_figure(grid((1, 2), (8, 16, 32)))).draw(recorder)
    assert recorder.antialiased == [False]
    assert recorder.antialiased[0] is False


def test_the_figure_is_drawn_on_an_agg_canvas_of_its_own() -> None:
    figure = plan_figure(grid((1,), (8,)))
    assert isinstance(figure.canvas, FigureCanvasAgg)
    assert figure.canvas.figure is figure
    # Laid out once, with no layout engine left: saving draws the figure once.
    assert figure.get_layout_engine() is None


# --- the bound of labelled cells ---------------------------------------------------------------


def test_a_grid_of_256_cells_labels_each_cell_and_its_rows_sizes() -> None:
    assert LABELLED_CELLS == 256
    figure = plan_figure(grid(sizes(16), sizes(16)))
    (axes,) = figure.axes
    texts = [(text.get_position(), text.get_text()) for text in axes.texts]
    # 16 x 16 = 256 cells, each labelled with its depth, then the row's full depth; and the
    # column's heading: 16 x 17 + 1 texts.
    assert len(texts) == 273
    assert texts[:17] == [*(((x, 0), "8") for x in range(16)), ((15.7, 0), "  284")]
    assert texts[-1] == ((15.7, -0.75), "  full depth\n  up to batch")
    # 16 MiB a sequence at tp 1, divided by each tensor-parallel size, rounded to 2 decimals.
    states = ["16.00", "8.00", "5.33", "4.00", "3.20", "2.67", "2.29", "2.00"]
    states += ["1.78", "1.60", "1.45", "1.33", "1.23", "1.14", "1.07", "1.00"]
    assert [label.get_text() for label in axes.get_yticklabels()] == [
        f"tp {tp}\nstate {state} MiB" for tp, state in zip(sizes(16), states, strict=True)
    ]
    # The tight layout: left of the legend, nothing cut off.
    assert figure.get_layout_engine() is None
    drawn = extents(figure)
    width, height = 21.5 * 110, 12.0 * 110
    assert 0 <= drawn["grid"].x0 < drawn["grid"].x1 < drawn["legend"].x0 <= width
    assert 0 <= drawn["grid"].y0 < drawn["grid"].y1 <= height


def test_a_grid_of_272_cells_shows_depth_by_colour_and_rows_by_tp_alone() -> None:
    figure = plan_figure(grid(sizes(16), sizes(17)))
    (axes,) = figure.axes
    texts = [(text.get_position(), text.get_text()) for text in axes.texts]
    # No cell labelled: the rows' full depth and the column's heading alone.
    assert len(texts) == 17
    assert texts[:2] == [((16.7, 0), "  284"), ((16.7, 1), "  568")]
    assert texts[-1] == ((16.7, -0.75), "  full depth\n  up to batch")
    assert [label.get_text() for label in axes.get_yticklabels()] == [
        f"tp {tp}" for tp in sizes(16)
    ]
    # Fixed margins: 17 + 5.5 = 22.5 inches wide, 0.6 x 16 + 2.4 = 12 tall; 0.8 inch left of
    # the grid, 1 inch right of it and 0.15 inch more before the legend as drawn, 0.7 inch
    # below and above.
    assert tuple(figure.get_size_inches()) == (22.5, 12.0)
    drawn = extents(figure)
    width, height = 22.5 * 110, 12.0 * 110
    right = drawn["legend"].x0 / width - (1.0 + 0.15) / 22.5
    margins = figure.subplotpars
    assert margins.left == pytest.approx(0.8 / 22.5)
    assert margins.right == pytest.approx(right)
    assert margins.bottom == pytest.approx(0.7 / 12.0)
    assert margins.top == pytest.approx(1 - 0.7 / 12.0)
    box = axes.get_position()
    assert (box.x0, box.x1, box.y0, box.y1) == pytest.approx(
        (0.8 / 22.5, right, 0.7 / 12.0, 1 - 0.7 / 12.0)
    )
    assert figure.get_layout_engine() is None
    # The margins hold what the tight layout would: the rows' labels, the full depth column
    # and the title, inside the figure and left of the legend.
    assert 0 <= drawn["grid"].x0 < drawn["grid"].x1 < drawn["legend"].x0 <= width
    assert 0 <= drawn["grid"].y0 < drawn["grid"].y1 <= height


@pytest.mark.parametrize(
    ("tp_sizes", "batch_sizes"),
    [((1, 2), (8, 16)), (sizes(64), (1, 2, 3, 4, 5))],
)
def test_the_full_depth_column_stays_left_of_the_legend_in_a_narrow_grid(
    tp_sizes: tuple[int, ...], batch_sizes: tuple[int, ...]
) -> None:
    # 7.5 and 10.5 inches wide, the legend about 1.7 of them: with 128 KiB a sequence the full
    # depth column's numbers have 5 and 6 digits (72817 and 145635 at tp 1 and 2), and were
    # drawn across the legend's swatches when the grid kept left of 0.86 of the width.
    figure = plan_figure(grid(tp_sizes, batch_sizes, state=128 * 1024))
    (axes,) = figure.axes
    assert any(len(text.get_text().strip()) >= 5 for text in axes.texts)
    drawn = extents(figure)
    assert 0 <= drawn["grid"].x0 < drawn["grid"].x1 < drawn["legend"].x0


def test_a_small_labelled_grid_keeps_its_labels_inside_the_figure() -> None:
    # A grid of 2 x 3 cells, 8.5 x 3.6 inches: the rows' labels ("state 16.00 MiB") are wider
    # than the 0.8 inch a larger grid leaves them, and the tight layout makes room.
    figure = plan_figure(grid((1, 2), (8, 16, 32)))
    drawn = extents(figure)
    width, height = 8.5 * 110, 3.6 * 110
    assert 0 <= drawn["grid"].x0 < drawn["grid"].x1 < drawn["legend"].x0 <= width
    assert 0 <= drawn["grid"].y0 < drawn["grid"].y1 <= height
    assert figure.subplotpars.left > 0.8 / 8.5


# --- the resolution ----------------------------------------------------------------------------


def test_the_resolution_stays_at_110_dpi_within_4096_pixels_a_side() -> None:
    assert (DPI, MAX_PIXELS) == (110, 4096)
    assert plot_dpi(9.5, 4.2) == 110
    # 36.5 x 110 = 4,015 and 37.2 x 110 = 4,092 pixels: within the bound.
    assert plot_dpi(36.5, 37.2) == 110
    assert plot_dpi(37.2, 36.5) == 110


@pytest.mark.parametrize(
    ("width", "height", "dpi"),
    [
        # 37.5 x 110 = 4,125 pixels: a hundredth of a pixel under 4,096 over 37.5 inches.
        (37.5, 4.2, 4095.99 / 37.5),
        (4.2, 37.5, 4095.99 / 37.5),
        # The larger side sets it.
        (69.5, 40.8, 4095.99 / 69.5),
        (40.8, 69.5, 4095.99 / 69.5),
    ],
    ids=["wide", "tall", "wider", "taller"],
)
def test_a_figure_past_4096_pixels_a_side_is_drawn_at_a_lower_resolution(
    width: float, height: float, dpi: float
) -> None:
    assert plot_dpi(width, height) == pytest.approx(dpi, rel=1e-12)
    assert max(width, height) * plot_dpi(width, height) < 4096


@pytest.mark.parametrize(
    ("tp_count", "batch_count", "inches", "dpi"),
    [
        # 31 batch sizes: 36.5 inches wide, 4,015 pixels at 110 dpi.
        (17, 31, (36.5, 12.6), 110),
        # 32 batch sizes: 37.5 inches, past 4,096 pixels at 110 dpi.
        (17, 32, (37.5, 12.6), 4095.99 / 37.5),
        # 58 tensor-parallel sizes: 37.2 inches tall, 4,092 pixels at 110 dpi.
        (58, 5, (10.5, 37.2), 110),
        # 59: 37.8 inches.
        (59, 5, (10.5, 37.8), 4095.99 / 37.8),
        # The largest plan, 64 x 64: 69.5 x 40.8 inches.
        (64, 64, (69.5, 40.8), 4095.99 / 69.5),
    ],
    ids=["31-batches", "32-batches", "58-tp-sizes", "59-tp-sizes", "64-x-64"],
)
def test_the_figures_resolution_at_and_past_the_bound(
    tp_count: int, batch_count: int, inches: tuple[float, float], dpi: float
) -> None:
    figure = plan_figure(grid(sizes(tp_count), sizes(batch_count)))
    assert tuple(figure.get_size_inches()) == pytest.approx(inches)
    assert figure.dpi == pytest.approx(dpi, rel=1e-12)
    assert figure.bbox.width <= 4096 and figure.bbox.height <= 4096


# --- the format and the rows' labels -----------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "fmt"), [("grid", "png"), ("grid.", "png"), ("grid.SVG", "svg"), ("a.b/grid", "png")]
)
def test_the_format_is_the_extensions_in_lower_case_png_without_one(path: str, fmt: str) -> None:
    assert plot_format(path) == fmt


def test_a_rows_label_names_its_state_unless_told_not_to() -> None:
    from decode_ring.cli.plot import row_label

    row = grid((2,), (8,)).rows[0]
    # 16 MiB at tp 1 over 2 ranks; no KV cache without a config, so no "kv" line.
    assert row_label(row) == "tp 2\nstate 8.00 MiB"
    assert row_label(row, True) == "tp 2\nstate 8.00 MiB"
    assert row_label(row, False) == "tp 2"
