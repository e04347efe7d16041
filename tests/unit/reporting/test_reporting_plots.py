"""Plots: deterministic PNG bytes, matching colours, no global matplotlib side effects."""

import matplotlib
import numpy as np
import pytest

from components.reporting.plots import bar_plot, errorbar_plot, figure_to_png, line_plot

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _line(scale: float = 1.0):
    x = np.array([1e4, 3e4, 1e5, 3e5])
    return line_plot(
        {"raw": (x, scale * 3.0 * x**-0.1), "dedup": (x, scale * 2.8 * x**-0.1)},
        fits={"raw": (x, 3.0 * x**-0.1), "dedup": (x, 2.8 * x**-0.1)},
        xlabel="tokens",
        ylabel="loss",
        title="fit",
        logx=True,
        logy=True,
    )


def test_same_input_gives_identical_png_bytes():
    a, b = figure_to_png(_line()), figure_to_png(_line())
    assert a.startswith(PNG_SIGNATURE)
    assert a == b


def test_different_input_gives_different_png_bytes():
    assert figure_to_png(_line(1.0)) != figure_to_png(_line(1.1))


def test_png_has_no_software_or_timestamp_metadata():
    png = figure_to_png(_line())
    assert b"Software" not in png
    assert b"tIME" not in png


def test_fitted_curve_uses_the_colour_of_its_points():
    ax = _line().axes[0]
    colours = {}
    for line in ax.lines:
        colours.setdefault(line.get_linestyle(), []).append(line.get_color())
    assert colours["None"] == colours["-"]  # markers (no line) and fits, per label in order
    assert len(set(colours["-"])) == 2


def test_fit_without_points_is_labelled_as_a_fit():
    fig = line_plot({}, fits={"projection": ([1, 2], [3, 4])})
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["projection (fit)"]


def test_errorbar_plot_keeps_every_name_even_without_an_estimate():
    fig = errorbar_plot(["C1", "C2", "C3"], [0.1, None, -0.2], [0.0, None, None], [0.2, None, None])
    ticks = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert ticks == ["C1", "C2", "C3"]
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "n/a" in texts
    assert figure_to_png(fig).startswith(PNG_SIGNATURE)


def test_errorbar_plot_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="same length"):
        errorbar_plot(["a", "b"], [1.0], [0.5], [1.5])


def test_bar_plot_writes_values_on_bars():
    fig = bar_plot({"raw": 12000, "dedup": 9372.5}, ylabel="docs")
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert texts == ["12,000", "9,372.5"]


def test_plots_leave_global_matplotlib_state_alone():
    backend = matplotlib.get_backend()
    grid = matplotlib.rcParams["axes.grid"]
    figure_to_png(bar_plot({"a": 1}))
    assert matplotlib.get_backend() == backend
    assert matplotlib.rcParams["axes.grid"] == grid
