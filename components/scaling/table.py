"""Load a scaling-law table (one training run per CSV row) into N, D, L arrays.

Tokens come either from a column or from training FLOPs through C = 6 N D.
Every problem is reported as a DataError naming the file, the column and the row,
so a user can fix the CSV rather than read a traceback.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from components.errors import DataError, ParamsError
from components.io import check_input_file
from components.scaling.chinchilla import MIN_POINTS

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ScalingTable:
    """Parameters N, tokens D and final losses L of the kept runs, in file order."""

    N: np.ndarray
    D: np.ndarray
    L: np.ndarray
    source: str
    n_excluded: int = 0

    def __len__(self) -> int:
        return int(self.N.size)


def _read_csv(path: Path) -> pd.DataFrame:
    check_input_file(path)  # missing, a directory, not a regular file
    try:
        return pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise DataError(f"{path}: empty file, expected a CSV with a header row") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: not a readable CSV ({str(exc).splitlines()[0]})") from None


def _column(df: pd.DataFrame, path: Path, name: str) -> np.ndarray:
    """One column as floats > 0, or a DataError naming the first bad row (1 = first data row)."""
    if name not in df.columns:
        raise DataError(f"{path}: no column {name!r} (available: {', '.join(map(str, df.columns))})")
    raw = df[name]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
    not_numeric = np.flatnonzero(np.isnan(values) & raw.notna().to_numpy())
    if not_numeric.size:
        i = int(not_numeric[0])
        raise DataError(f"{path}: column {name!r}, row {i + 1}: {raw.iloc[i]!r} is not a number")
    bad = np.flatnonzero(~np.isfinite(values) | (values <= 0))
    if bad.size:
        i = int(bad[0])
        shown = "empty" if np.isnan(values[i]) else repr(float(values[i]))
        raise DataError(f"{path}: column {name!r}, row {i + 1}: {shown}; values must be finite and > 0")
    return values


def load_scaling_table(
    path: str | os.PathLike,
    *,
    n_column: str,
    loss_column: str,
    d_column: str | None = None,
    flops_column: str | None = None,
    exclude_top_loss: int = 0,
) -> ScalingTable:
    """Read N, D (from ``d_column`` or ``flops_column`` as C / (6 N)) and L from a CSV.

    ``exclude_top_loss=K`` drops the K highest-loss rows (Besiroglu et al. drop 5 on
    Chinchilla's data: runs that look unconverged). At least 6 rows must remain.
    """
    if (d_column is None) == (flops_column is None):
        raise ParamsError("give exactly one of d_column (tokens) or flops_column (training FLOPs)")
    if isinstance(exclude_top_loss, bool) or int(exclude_top_loss) != exclude_top_loss or exclude_top_loss < 0:
        raise ParamsError(f"exclude_top_loss: must be a non-negative integer, got {exclude_top_loss!r}")
    path = Path(path)
    df = _read_csv(path)
    n = _column(df, path, n_column)
    loss = _column(df, path, loss_column)
    if d_column is not None:
        d = _column(df, path, d_column)
    else:
        d = _column(df, path, flops_column) / (6.0 * n)
    k = int(exclude_top_loss)
    if len(df) - k < MIN_POINTS:
        raise DataError(
            f"{path}: {len(df)} rows minus {k} excluded leaves fewer than {MIN_POINTS} "
            "(a 5-parameter fit needs at least 6)"
        )
    keep = np.sort(np.argsort(loss, kind="stable")[: len(df) - k])
    log.info("%s: %d rows, %d highest-loss excluded", path, len(df), k)
    return ScalingTable(N=n[keep], D=d[keep], L=loss[keep], source=str(path), n_excluded=k)
