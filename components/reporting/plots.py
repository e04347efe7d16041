"""Report figures drawn with matplotlib's Agg canvas, without pyplot.

Figures are built from :class:`matplotlib.figure.Figure` and attached to an Agg
canvas explicitly, so nothing here changes the global pyplot backend or state
of the code that imports it. :func:`figure_to_png` strips the timestamped
metadata so the same input gives the same PNG bytes.
"""

from __future__ import annotations

import functools
import io
import math
from collections.abc import Callable, Mapping, Sequence

import matplotlib
from matplotlib import ticker
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

Series = tuple[Sequence[float], Sequence[float]]

DEFAULT_DPI = 110
# Colour-blind-safe qualitative palette (matplotlib's "tab10").
PALETTE: tuple = tuple(matplotlib.colormaps["tab10"].colors)
VERDICT_COLOURS = {"reproduced": "#1a7f37", "not reproduced": "#cf222e", "inconclusive": "#9a6700"}
_STYLE = {
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "font.size": 10,
    "axes.titlesize": 11,
    "legend.frameon": False,
}


def new_figure(width: float = 6.4, height: float = 4.0) -> Figure:
    """A Figure on its own Agg canvas (no pyplot, no global backend change)."""
    fig = Figure(figsize=(width, height), dpi=DEFAULT_DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _styled(func: Callable) -> Callable:
    """Draw inside a temporary rc context: the report style, restored afterwards."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with matplotlib.rc_context(_STYLE):
            return func(*args, **kwargs)

    return wrapper


class _PlainLogFormatter(ticker.LogFormatterSciNotation):
    """Log-axis labels as plain numbers (6, 10, 0.5) in a readable range, 10^k outside it.

    Matplotlib still decides which (minor) ticks get a label; only the text changes.
    """

    def __call__(self, x: float, pos: int | None = None) -> str:
        label = super().__call__(x, pos)
        if label and 1e-3 <= abs(x) < 1e4:
            return f"{x:g}"
        return label


def _set_log(ax, logx: bool, logy: bool) -> None:
    for on, axis, set_scale in ((logx, ax.xaxis, ax.set_xscale), (logy, ax.yaxis, ax.set_yscale)):
        if on:
            set_scale("log")
            axis.set_major_formatter(_PlainLogFormatter())
            axis.set_minor_formatter(_PlainLogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))


def _fmt_value(v: float) -> str:
    return f"{int(v):,}" if float(v).is_integer() and abs(v) < 1e15 else f"{v:,.6g}"


def _axes(fig: Figure, *, xlabel: str, ylabel: str, title: str):
    ax = fig.add_subplot()
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    return ax


@_styled
def line_plot(
    series: Mapping[str, Series],
    *,
    xlabel: str = "",
    ylabel: str = "",
    title: str = "",
    logx: bool = False,
    logy: bool = False,
    fits: Mapping[str, Series] | None = None,
) -> Figure:
    """Measured points per label, with an optional fitted curve per label in the same colour.

    Used for scaling curves: markers are observations, lines are fits.
    """
    fig = new_figure()
    ax = _axes(fig, xlabel=xlabel, ylabel=ylabel, title=title)
    fits = dict(fits or {})
    labels = list(series) + [k for k in fits if k not in series]
    for i, label in enumerate(labels):
        colour = PALETTE[i % len(PALETTE)]
        if label in series:
            x, y = series[label]
            ax.plot(list(x), list(y), "o", color=colour, markersize=4.5, label=str(label))
        if label in fits:
            fx, fy = fits[label]
            ax.plot(
                list(fx),
                list(fy),
                "-",
                color=colour,
                linewidth=1.4,
                label=None if label in series else f"{label} (fit)",
            )
    _set_log(ax, logx, logy)
    if labels:
        ax.legend(fontsize=8)
    return fig


def _is_missing(v: float | None) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


@_styled
def errorbar_plot(
    names: Sequence[str],
    values: Sequence[float | None],
    lo: Sequence[float | None],
    hi: Sequence[float | None],
    *,
    xlabel: str = "",
    title: str = "",
    reference: float | None = 0.0,
    colours: Sequence[str] | None = None,
) -> Figure:
    """Estimates with interval bars, one row per name (top to bottom in order).

    ``lo``/``hi`` are interval bounds, not half-widths. Missing estimates are
    labelled ``n/a`` rather than dropped, so every name stays visible. A dashed
    line marks ``reference`` (the no-effect value) unless it is None.
    """
    if not len(names) == len(values) == len(lo) == len(hi):
        raise ValueError("errorbar_plot: names, values, lo and hi must have the same length")
    fig = new_figure(6.4, max(1.6, 0.45 * len(names) + 1.0))
    ax = _axes(fig, xlabel=xlabel, ylabel="", title=title)
    ys = list(range(len(names)))[::-1]
    for i, (y, v, a, b) in enumerate(zip(ys, values, lo, hi)):
        colour = colours[i] if colours else PALETTE[0]
        if _is_missing(v):
            ax.annotate(
                "n/a",
                (0.5, y),
                xycoords=("axes fraction", "data"),
                ha="center",
                va="center",
                color="#666666",
                fontsize=8,
            )
            continue
        if not _is_missing(a) and not _is_missing(b):
            ax.errorbar(
                [v], [y], xerr=[[max(v - a, 0.0)], [max(b - v, 0.0)]], fmt="o", color=colour, capsize=3, markersize=5
            )
        else:
            ax.plot([v], [y], "o", color=colour, markersize=5)
    if reference is not None:
        ax.axvline(reference, color="#555555", linestyle="--", linewidth=0.9)
    ax.set_yticks(ys, [str(n) for n in names])
    ax.set_ylim(-0.7, len(names) - 0.3)
    ax.grid(axis="y", visible=False)
    return fig


@_styled
def bar_plot(
    counts: Mapping[str, float],
    *,
    xlabel: str = "",
    ylabel: str = "",
    title: str = "",
    colours: Sequence[str] | None = None,
) -> Figure:
    """Vertical bars with their values written on top (e.g. documents kept per filter)."""
    fig = new_figure(max(4.0, 0.7 * len(counts) + 2.0), 3.6)
    ax = _axes(fig, xlabel=xlabel, ylabel=ylabel, title=title)
    labels = [str(k) for k in counts]
    heights = [float(v) for v in counts.values()]
    bars = ax.bar(labels, heights, color=list(colours) if colours else PALETTE[0], width=0.6)
    ax.bar_label(bars, labels=[_fmt_value(h) for h in heights], fontsize=8, padding=2)
    ax.grid(axis="x", visible=False)
    if len(labels) > 5:
        ax.tick_params(axis="x", labelrotation=30)
    return fig


def figure_to_png(fig: Figure, *, dpi: int = DEFAULT_DPI) -> bytes:
    """Render ``fig`` to PNG bytes; identical input gives identical bytes.

    Agg rendering is deterministic; the only varying content matplotlib writes
    is the "Software" text chunk, which is dropped here.
    """
    if fig.canvas is None or not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    return buf.getvalue()
