"""load_scaling_table: good CSVs load (tokens or FLOPs), every bad input is a DataError
or ParamsError naming the file, column and row."""

from pathlib import Path

import numpy as np
import pytest

from components.errors import DataError, ParamsError
from components.scaling.table import load_scaling_table

REFERENCE_CSV = Path(__file__).parents[3].parent / "shared" / "reference" / "chinchilla_svg_extracted_data.csv"
HEADER = "params,tokens,flops,loss\n"
ROWS = [(1e7 * (i + 1), 2e9 * (i + 1), 6 * 1e7 * (i + 1) * 2e9 * (i + 1), 3.0 - 0.1 * i) for i in range(8)]


def write(tmp_path: Path, rows=ROWS, header: str = HEADER, name: str = "runs.csv") -> Path:
    path = tmp_path / name
    path.write_text(header + "".join(",".join(str(v) for v in row) + "\n" for row in rows))
    return path


def test_loads_tokens_column(tmp_path):
    table = load_scaling_table(write(tmp_path), n_column="params", loss_column="loss", d_column="tokens")
    assert len(table) == 8
    np.testing.assert_allclose(table.N, [r[0] for r in ROWS])
    np.testing.assert_allclose(table.D, [r[1] for r in ROWS])
    np.testing.assert_allclose(table.L, [r[3] for r in ROWS])


def test_flops_column_gives_tokens_by_c_over_6n(tmp_path):
    table = load_scaling_table(write(tmp_path), n_column="params", loss_column="loss", flops_column="flops")
    np.testing.assert_allclose(table.D, [r[1] for r in ROWS], rtol=1e-12)


def test_exclude_top_loss_drops_the_highest_losses_keeping_order(tmp_path):
    table = load_scaling_table(
        write(tmp_path), n_column="params", loss_column="loss", d_column="tokens", exclude_top_loss=2
    )
    np.testing.assert_allclose(table.L, [r[3] for r in ROWS[2:]])
    assert table.n_excluded == 2


def test_reference_csv_top5_exclusion_leaves_240_rows():
    if not REFERENCE_CSV.is_file():
        pytest.skip(f"reference data not found at {REFERENCE_CSV} (the ../shared checkout beside the repo)")
    table = load_scaling_table(
        REFERENCE_CSV, n_column="Model Size", loss_column="loss", flops_column="Training FLOP", exclude_top_loss=5
    )
    assert len(table) == 240
    assert table.L.max() < 3.5  # the five excluded rows are the runs with losses 3.4-5.0


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="nope.csv: file not found"):
        load_scaling_table(tmp_path / "nope.csv", n_column="params", loss_column="loss", d_column="tokens")


def test_missing_column_lists_available_columns(tmp_path):
    with pytest.raises(DataError, match=r"runs.csv: no column 'tokenz' \(available: params, tokens, flops, loss\)"):
        load_scaling_table(write(tmp_path), n_column="params", loss_column="loss", d_column="tokenz")


def test_non_numeric_value_names_column_and_row(tmp_path):
    rows = list(ROWS)
    rows[3] = (rows[3][0], "lots", rows[3][2], rows[3][3])
    with pytest.raises(DataError, match=r"runs.csv: column 'tokens', row 4: 'lots' is not a number"):
        load_scaling_table(write(tmp_path, rows), n_column="params", loss_column="loss", d_column="tokens")


@pytest.mark.parametrize(("value", "shown"), [(0.0, "0.0"), (-2.5, "-2.5"), ("inf", "inf"), ("", "empty")])
def test_non_positive_or_non_finite_value_names_column_and_row(tmp_path, value, shown):
    rows = list(ROWS)
    rows[5] = (rows[5][0], rows[5][1], rows[5][2], value)
    with pytest.raises(DataError, match=rf"column 'loss', row 6: {shown}; values must be finite and > 0"):
        load_scaling_table(write(tmp_path, rows), n_column="params", loss_column="loss", d_column="tokens")


def test_too_few_rows_after_exclusion(tmp_path):
    with pytest.raises(DataError, match="8 rows minus 3 excluded leaves fewer than 6"):
        load_scaling_table(
            write(tmp_path), n_column="params", loss_column="loss", d_column="tokens", exclude_top_loss=3
        )
    with pytest.raises(DataError, match="fewer than 6"):
        load_scaling_table(write(tmp_path, ROWS[:5]), n_column="params", loss_column="loss", d_column="tokens")


def test_empty_file(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("")
    with pytest.raises(DataError, match="empty.csv: empty file"):
        load_scaling_table(path, n_column="params", loss_column="loss", d_column="tokens")


@pytest.mark.parametrize("columns", [{}, {"d_column": "tokens", "flops_column": "flops"}])
def test_exactly_one_of_tokens_or_flops(tmp_path, columns):
    with pytest.raises(ParamsError, match="exactly one of d_column"):
        load_scaling_table(write(tmp_path), n_column="params", loss_column="loss", **columns)


@pytest.mark.parametrize("bad", [-1, 1.5, True])
def test_bad_exclude_top_loss(tmp_path, bad):
    with pytest.raises(ParamsError, match="exclude_top_loss"):
        load_scaling_table(
            write(tmp_path), n_column="params", loss_column="loss", d_column="tokens", exclude_top_loss=bad
        )
