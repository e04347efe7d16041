"""Data validation: the one place paperline calls Great Expectations (GX 1.x).

Pipelines describe checks with the small ``Expect`` builders below (``not_null``,
``between``, ``proportion_where``...) and call :func:`validate`; they never import
GX, so the GX major version is pinned here alone. Each builder maps to one or two
real GX expectation classes. GX is imported lazily (the import takes seconds) and
runs in an ephemeral context with progress bars off.

A failing suite raises :class:`ValidationFailed` whose first line names the
dataset, the GX expectation, the column, what was observed and up to three
sample rows. When ``result_path`` is given the JSON summary is written first,
also on failure, because the report of what failed is what a user needs.
"""

from __future__ import annotations

import functools
import logging
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from components.errors import DataError, ParamsError, ValidationFailed
from components.io import write_json

log = logging.getLogger(__name__)

SAMPLE_ROWS = 3
_MAX_REPR = 60


@dataclass(frozen=True)
class Expect:
    """One declarative check: our name for it, its column and the GX expectations it runs."""

    check: str
    column: str | None
    parts: tuple[tuple[str, dict], ...]  # (GX class name, kwargs) pairs
    expected: str  # human-readable expectation, used in messages


def _col(column: str) -> str:
    if not isinstance(column, str) or not column:
        raise ParamsError(f"validation: column name must be a non-empty string, got {column!r}")
    return column


def _one(check: str, column: str | None, gx_type: str, expected: str, **kwargs: Any) -> Expect:
    kw = {"column": _col(column)} if column is not None else {}
    return Expect(check, column, ((gx_type, {**kw, **kwargs}),), expected)


def not_null(column: str) -> Expect:
    """No missing values (None/NaN) in ``column``."""
    return _one("not_null", column, "ExpectColumnValuesToNotBeNull", "no nulls")


def non_empty_text(column: str) -> Expect:
    """Every value is present and has a non-whitespace character (length >= 1 after strip).

    GX map expectations skip nulls, so this pairs NotBeNull with a ``\\S`` regex.
    """
    parts = (
        ("ExpectColumnValuesToNotBeNull", {"column": _col(column)}),
        ("ExpectColumnValuesToMatchRegex", {"column": column, "regex": r"\S"}),
    )
    return Expect("non_empty_text", column, parts, "non-empty text")


def unique(column: str) -> Expect:
    """No value of ``column`` occurs twice (nulls are ignored by GX)."""
    return _one("unique", column, "ExpectColumnValuesToBeUnique", "unique values")


def _bounds(where: str, min_value: float | None, max_value: float | None) -> str:
    """Check a [min, max] pair (either may be None) and describe it."""
    if min_value is None and max_value is None:
        raise ParamsError(f"{where}: give min_value, max_value or both")
    if min_value is not None and max_value is not None and min_value > max_value:
        raise ParamsError(f"{where}: min_value {min_value} > max_value {max_value}")
    if min_value is None:
        return f"<= {max_value}"
    return f">= {min_value}" if max_value is None else f"between {min_value} and {max_value}"


def between(column: str, min_value: float | None = None, max_value: float | None = None) -> Expect:
    """Every non-null value lies in [min_value, max_value] (either bound may be None)."""
    text = _bounds(f"between({column!r})", min_value, max_value)
    return _one(
        "between", column, "ExpectColumnValuesToBeBetween", "values " + text, min_value=min_value, max_value=max_value
    )


def mean_between(column: str, min_value: float | None = None, max_value: float | None = None) -> Expect:
    """The column mean lies in [min_value, max_value]."""
    text = _bounds(f"mean_between({column!r})", min_value, max_value)
    return _one(
        "mean_between", column, "ExpectColumnMeanToBeBetween", "mean " + text, min_value=min_value, max_value=max_value
    )


def in_set(column: str, values: Iterable[Any]) -> Expect:
    """Every non-null value is one of ``values``."""
    values = list(values)
    if not values:
        raise ParamsError(f"in_set({column!r}): values must not be empty")
    return _one("in_set", column, "ExpectColumnValuesToBeInSet", f"values in {values!r}", value_set=values)


def references(column: str, ids: Iterable[Any], what: str) -> Expect:
    """Referential integrity: every non-null value of ``column`` is one of ``ids``, the ids of ``what`` (another
    table: gold ids that exist, a duplicate's original, a run's graph). A list-valued reference is checked by
    exploding it into its own frame first (:func:`explode_refs`)."""
    ids = sorted({i for i in ids if i is not None}, key=str)
    if not ids:
        raise ParamsError(f"references({column!r}): {what} has no ids")
    return _one("references", column, "ExpectColumnValuesToBeInSet", f"ids that exist in {what}", value_set=ids)


def explode_refs(rows: Iterable[Mapping], column: str, id_column: str = "id") -> pd.DataFrame:
    """One row per (record, referenced id) of a list-valued ``column``: the frame :func:`references` checks."""
    pairs = [
        {id_column: r.get(id_column), column: ref}
        for r in rows
        for ref in (r.get(column) if isinstance(r.get(column), (list, tuple)) else [r.get(column)])
    ]
    return pd.DataFrame(pairs, columns=[id_column, column])


def row_count_between(min_value: int | None = None, max_value: int | None = None) -> Expect:
    """The number of rows lies in [min_value, max_value]."""
    text = _bounds("row_count_between", min_value, max_value)
    return _one(
        "row_count_between",
        None,
        "ExpectTableRowCountToBeBetween",
        "row count " + text,
        min_value=min_value,
        max_value=max_value,
    )


def proportion_where(column: str, value: Any, max_frac: float) -> Expect:
    """At most ``max_frac`` of the non-null values of ``column`` equal ``value`` (or one of a list).

    For rates such as "duplicates <= 5%": GX's ExpectColumnValuesToNotBeInSet with
    ``mostly = 1 - max_frac`` (GX takes the fraction over non-null values).
    """
    if not 0.0 <= max_frac <= 1.0:
        raise ParamsError(f"proportion_where({column!r}): max_frac must be in [0, 1], got {max_frac}")
    values = list(value) if isinstance(value, (list, tuple, set)) else [value]
    mostly = max(0.0, 1.0 - max_frac - 1e-12)  # slack so a rate exactly at max_frac passes despite rounding
    return _one(
        "proportion_where",
        column,
        "ExpectColumnValuesToNotBeInSet",
        f"at most {max_frac:.4g} of rows in {values!r}",
        value_set=values,
        mostly=mostly,
    )


def columns_present(columns: Sequence[str]) -> Expect:
    """Each named column exists (one ExpectColumnToExist per column)."""
    columns = [_col(c) for c in columns]
    if not columns:
        raise ParamsError("columns_present: give at least one column")
    return Expect(
        "columns_present", None, tuple(("ExpectColumnToExist", {"column": c}) for c in columns), "column exists"
    )


def finite(column: str) -> Expect:
    """Every value is a finite number: not null/NaN and not +-inf.

    GX has no finiteness expectation and skips NaN as missing, so this pairs
    NotBeNull with a between check at the float64 limits (inf falls outside).
    """
    big = 1.7976931348623157e308
    parts = (
        ("ExpectColumnValuesToNotBeNull", {"column": _col(column)}),
        ("ExpectColumnValuesToBeBetween", {"column": column, "min_value": -big, "max_value": big}),
    )
    return Expect("finite", column, parts, "finite numbers")


@dataclass
class ValidationReport:
    """Outcome of one suite on one dataset; ``results`` has one dict per GX expectation."""

    name: str
    n_rows: int
    columns: list[str]
    results: list[dict] = field(default_factory=list)

    @property
    def success(self) -> bool:
        return all(r["success"] for r in self.results)

    @property
    def failures(self) -> list[dict]:
        return [r for r in self.results if not r["success"]]

    def to_dict(self) -> dict:
        """A JSON-safe summary (non-finite floats become strings)."""
        return _json_safe(
            {
                "dataset": self.name,
                "success": self.success,
                "n_rows": self.n_rows,
                "columns": self.columns,
                "gx_version": str(_gx().__version__),
                "results": self.results,
            }
        )

    def message(self) -> str:
        """Failure text: the first line names the first failure; later lines list the rest."""
        fails = self.failures
        if not fails:
            return f"dataset {self.name!r} passed {len(self.results)} expectation(s)"
        lines = [f"dataset {self.name!r} failed {_describe(fails[0])}"]
        if len(fails) > 1:
            lines[0] += f" (+{len(fails) - 1} more failure(s) below)"
            lines += [f"  also failed {_describe(r)}" for r in fails[1:]]
        return "\n".join(lines)


@functools.cache
def _gx() -> Any:
    # GX's INFO lines are internal chatter; one of its modules sets its own level to INFO on import.
    logging.getLogger("great_expectations").setLevel(logging.WARNING)
    import great_expectations as gx

    logging.getLogger("great_expectations.data_context.types.base").setLevel(logging.WARNING)
    return gx


def validate(
    data: pd.DataFrame | Iterable[Mapping],
    suite: Sequence[Expect],
    *,
    name: str,
    result_path: str | os.PathLike | None = None,
    id_column: str | None = "id",
    raise_on_failure: bool = True,
) -> ValidationReport:
    """Run ``suite`` on ``data`` with an ephemeral GX context and return the report.

    ``id_column`` (when present in the data) is shown beside row numbers in samples.
    Writes the JSON summary to ``result_path`` (pass or fail), then raises
    :class:`ValidationFailed` on any failure unless ``raise_on_failure`` is False.
    """
    df = _as_frame(data, name)
    specs = list(suite)
    if not specs or not all(isinstance(s, Expect) for s in specs):
        raise ParamsError(f"validate({name!r}): suite must be a non-empty list of Expect")
    report = ValidationReport(name=name, n_rows=len(df), columns=[str(c) for c in df.columns])
    runnable: list[tuple[int, Expect, str, dict]] = []
    slots: list[dict | None] = []
    for spec in specs:
        for gx_type, kwargs in spec.parts:
            col = kwargs.get("column")
            if col is not None and gx_type != "ExpectColumnToExist" and col not in df.columns:
                slots.append(_result(spec, gx_type, col, False, observed=_missing(df)))
            else:
                runnable.append((len(slots), spec, gx_type, kwargs))
                slots.append(None)
    for i, result in _run_gx(df, runnable, id_column).items():
        slots[i] = result
    report.results = [r for r in slots if r is not None]
    if result_path is not None:
        write_json(result_path, report.to_dict())
    if report.success:
        log.info("dataset %r passed %d expectation(s)", name, len(report.results))
    elif raise_on_failure:
        raise ValidationFailed(report.message())
    return report


def _as_frame(data: Any, name: str) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        df = data
    elif isinstance(data, (str, bytes, Mapping)) or not isinstance(data, Iterable):
        raise DataError(f"dataset {name!r}: expected a DataFrame or a list of records, got {type(data).__name__}")
    else:
        df = pd.DataFrame.from_records(list(data))
    if not isinstance(df.index, pd.RangeIndex) or not df.index.is_unique:
        df = df.reset_index(drop=True)  # sample rows are reported by position
    return df


def _missing(df: pd.DataFrame) -> str:
    present = [str(c) for c in df.columns]
    shown = ", ".join(present[:20]) + (", ..." if len(present) > 20 else "")
    return f"column missing (columns present: {shown or 'none'})"


def _result(
    spec: Expect,
    gx_type: str,
    column: str | None,
    success: bool,
    *,
    observed: Any = None,
    unexpected_count: int | None = None,
    element_count: int | None = None,
    sample: list | None = None,
) -> dict:
    snake = "".join("_" + c.lower() if c.isupper() else c for c in gx_type).lstrip("_")
    return {
        "check": spec.check,
        "expectation": snake,
        "column": column,
        "success": bool(success),
        "expected": spec.expected,
        "observed": observed,
        "unexpected_count": unexpected_count,
        "element_count": element_count,
        "sample": sample or [],
    }


def _run_gx(df: pd.DataFrame, runnable: list[tuple[int, Expect, str, dict]], id_column: str | None) -> dict:
    """Run the GX expectations; return {slot index: result dict}."""
    if not runnable:
        return {}
    gx = _gx()
    from great_expectations.data_context.types.base import ProgressBarsConfig

    ctx = gx.get_context(mode="ephemeral")
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False)
    batch = (
        ctx.data_sources.add_pandas("paperline")
        .add_dataframe_asset("frame")
        .add_batch_definition_whole_dataframe("whole")
        .get_batch(batch_parameters={"dataframe": df})
    )
    exps = [getattr(gx.expectations, gx_type)(**kwargs, meta={"slot": slot}) for slot, _, gx_type, kwargs in runnable]
    suite = gx.ExpectationSuite(name="paperline", expectations=exps)
    res = batch.validate(suite, result_format={"result_format": "SUMMARY", "partial_unexpected_count": SAMPLE_ROWS})
    by_slot = {slot: (spec, gx_type, kwargs) for slot, spec, gx_type, kwargs in runnable}
    out: dict[int, dict] = {}
    for r in res.results:
        slot = r.expectation_config.meta["slot"]
        spec, gx_type, kwargs = by_slot[slot]
        out[slot] = _from_gx(r, spec, gx_type, kwargs.get("column"), df, id_column)
    return out


def _from_gx(r: Any, spec: Expect, gx_type: str, column: str | None, df: pd.DataFrame, id_column: str | None) -> dict:
    info = r.exception_info or {}
    if not isinstance(info.get("raised_exception"), bool):  # keyed by metric id when a metric failed
        info = next(iter(info.values()), {}) if info else {}
    if info.get("raised_exception"):
        msg = str(info.get("exception_message") or "error").splitlines()[0]
        return _result(spec, gx_type, column, False, observed=f"GX could not evaluate it: {msg}")
    res = dict(r.result or {})
    if gx_type == "ExpectColumnToExist" and not r.success:
        return _result(spec, gx_type, column, False, observed=_missing(df))
    if "unexpected_count" in res:
        rows = list(res.get("partial_unexpected_index_list") or [])[:SAMPLE_ROWS]
        n = res.get("element_count")
        return _result(
            spec,
            gx_type,
            column,
            r.success,
            observed=res.get("unexpected_percent", 0.0) / 100.0,
            unexpected_count=int(res["unexpected_count"]),
            element_count=n,
            sample=[_sample_row(df, i, column, id_column) for i in rows],
        )
    return _result(spec, gx_type, column, r.success, observed=res.get("observed_value"))


def _sample_row(df: pd.DataFrame, index: Any, column: str | None, id_column: str | None) -> dict:
    row: dict[str, Any] = {"row": index}
    if id_column is not None and id_column in df.columns and id_column != column:
        row[id_column] = df.at[index, id_column]
    if column is not None:
        row[column] = df.at[index, column]
    return row


def _short(value: Any) -> str:
    text = repr(value.item() if hasattr(value, "item") else value)
    return text if len(text) <= _MAX_REPR else text[: _MAX_REPR - 3] + "..."


def _describe(r: dict) -> str:
    where = f"on column {r['column']!r}" if r["column"] is not None else "on the table"
    head = f"{r['expectation']} {where}"
    if r["unexpected_count"] is not None:
        text = f"{head}: {r['unexpected_count']} of {r['element_count']} rows unexpected (expected {r['expected']})"
        if r["sample"]:
            rows = ", ".join(
                " ".join(f"{k}={_short(v)}" if k != "row" else f"row {v}" for k, v in s.items()) for s in r["sample"]
            )
            text += f" (sample rows: {rows})"
        return text
    observed = r["observed"] if isinstance(r["observed"], str) else f"observed {_short(r['observed'])}"
    return f"{head}: {observed} (expected {r['expected']})"


def _json_safe(obj: Any) -> Any:
    """Plain JSON types; numpy scalars unwrapped, NaN/inf as strings, pandas NA as null."""
    if isinstance(obj, Mapping):
        return {str(k): _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    if obj is pd.NA or obj is pd.NaT:
        return None
    if hasattr(obj, "item") and not isinstance(obj, (str, bytes)):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    return obj if obj is None or isinstance(obj, (bool, int, float, str)) else str(obj)
