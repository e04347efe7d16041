"""Specification of components.data.validate: the GX-backed validate() and its Expect builders."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from components.data import validate as V
from components.errors import DataError, ParamsError, ValidationFailed


@pytest.fixture(scope="module", autouse=True)
def gx_loaded():
    """Import Great Expectations once for the module (the import takes seconds)."""
    return V._gx()


@pytest.fixture
def corpus() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id": [f"a/{i}" for i in range(6)],
            "text": ["alpha", "beta", "gamma", "delta", "eps", "zeta"],
            "tokens": [5, 4, 5, 5, 3, 4],
            "loss": [1.0, 2.0, 3.0, 2.5, 1.5, 2.0],
            "is_dup": [False, False, False, False, False, True],
            "source": ["gcide", "wordnet", "gcide", "austen", "austen", "gcide"],
        }
    )


def full_suite() -> list[V.Expect]:
    return [
        V.columns_present(["id", "text", "tokens"]),
        V.not_null("id"),
        V.unique("id"),
        V.non_empty_text("text"),
        V.between("tokens", 1, 10),
        V.mean_between("loss", 1.0, 3.0),
        V.in_set("source", ["gcide", "wordnet", "austen"]),
        V.row_count_between(1, 100),
        V.proportion_where("is_dup", True, 0.2),
        V.finite("loss"),
    ]


def test_passing_suite_reports_success_for_every_expectation(corpus):
    report = V.validate(corpus, full_suite(), name="qp/corpus")
    assert report.success
    assert report.failures == []
    # one result per GX expectation: columns_present(3) + non_empty_text(2) + finite(2) + 7 single ones
    assert len(report.results) == 14
    assert {r["check"] for r in report.results} == {
        "columns_present",
        "not_null",
        "unique",
        "non_empty_text",
        "between",
        "mean_between",
        "in_set",
        "row_count_between",
        "proportion_where",
        "finite",
    }


def test_records_list_is_accepted_like_a_dataframe(corpus):
    report = V.validate(corpus.to_dict("records"), full_suite(), name="qp/records")
    assert report.success and report.n_rows == 6


def _failure(df: pd.DataFrame, spec: V.Expect) -> str:
    with pytest.raises(ValidationFailed) as info:
        V.validate(df, [spec], name="qp/corpus")
    return str(info.value)


@pytest.mark.parametrize(
    ("mutate", "spec", "expectation", "column", "sample"),
    [
        (
            lambda d: d.assign(id=[None, *d.id[1:]]),
            V.not_null("id"),
            "expect_column_values_to_not_be_null",
            "id",
            "row 0",
        ),
        (
            lambda d: d.assign(id=["a/0", "a/0", *d.id[2:]]),
            V.unique("id"),
            "expect_column_values_to_be_unique",
            "id",
            "id='a/0'",
        ),
        (
            lambda d: d.assign(text=["ok", "   ", *d.text[2:]]),
            V.non_empty_text("text"),
            "expect_column_values_to_match_regex",
            "text",
            "id='a/1' text='   '",
        ),
        (
            lambda d: d.assign(text=["ok", None, *d.text[2:]]),
            V.non_empty_text("text"),
            "expect_column_values_to_not_be_null",
            "text",
            "id='a/1'",
        ),
        (
            lambda d: d.assign(tokens=[5, 4, 50, 5, 3, 4]),
            V.between("tokens", 1, 10),
            "expect_column_values_to_be_between",
            "tokens",
            "id='a/2' tokens=50",
        ),
        (
            lambda d: d.assign(source=["gcide", "junk", *d.source[2:]]),
            V.in_set("source", ["gcide", "wordnet", "austen"]),
            "expect_column_values_to_be_in_set",
            "source",
            "id='a/1' source='junk'",
        ),
        (
            lambda d: d.assign(is_dup=[True, True, False, False, False, True]),
            V.proportion_where("is_dup", True, 0.2),
            "expect_column_values_to_not_be_in_set",
            "is_dup",
            "id='a/0' is_dup=True",
        ),
        (
            lambda d: d.assign(loss=[1.0, np.inf, 3.0, 2.5, 1.5, 2.0]),
            V.finite("loss"),
            "expect_column_values_to_be_between",
            "loss",
            "id='a/1' loss=inf",
        ),
        (
            lambda d: d.assign(loss=[1.0, np.nan, 3.0, 2.5, 1.5, 2.0]),
            V.finite("loss"),
            "expect_column_values_to_not_be_null",
            "loss",
            "id='a/1' loss=nan",
        ),
    ],
)
def test_row_level_failure_names_expectation_column_and_sample_row(corpus, mutate, spec, expectation, column, sample):
    first = _failure(mutate(corpus), spec).splitlines()[0]
    assert first.startswith("dataset 'qp/corpus' failed " + expectation)
    assert f"on column '{column}'" in first
    assert "of 6 rows unexpected" in first
    assert sample in first


def test_aggregate_failures_name_the_observed_value(corpus):
    first = _failure(corpus, V.mean_between("loss", 5.0, 6.0)).splitlines()[0]
    assert "expect_column_mean_to_be_between on column 'loss': observed 2.0" in first
    first = _failure(corpus, V.row_count_between(10)).splitlines()[0]
    assert "expect_table_row_count_to_be_between on the table: observed 6" in first


def test_proportion_at_the_limit_passes_and_just_above_fails(corpus):
    two_of_six = corpus.assign(is_dup=[True, True, False, False, False, False])
    assert V.validate(two_of_six, [V.proportion_where("is_dup", True, 2 / 6)], name="d").success
    with pytest.raises(ValidationFailed, match="2 of 6 rows unexpected"):
        V.validate(two_of_six, [V.proportion_where("is_dup", True, 0.3)], name="d")


def test_missing_column_fails_with_a_clear_message_not_a_traceback(corpus):
    msg = _failure(corpus.drop(columns=["tokens"]), V.between("tokens", 1, 10))
    assert msg.splitlines()[0].startswith(
        "dataset 'qp/corpus' failed expect_column_values_to_be_between on "
        "column 'tokens': column missing (columns present: id, text, loss"
    )
    assert "Traceback" not in msg
    msg = _failure(corpus, V.columns_present(["id", "label"]))
    assert "expect_column_to_exist on column 'label': column missing" in msg


def test_several_failures_are_all_listed_first_one_on_the_first_line(corpus):
    bad = corpus.assign(tokens=[0, 4, 5, 5, 3, 4], id=["x"] * 6)
    with pytest.raises(ValidationFailed) as info:
        V.validate(bad, [V.unique("id"), V.between("tokens", 1, 10)], name="qp/corpus")
    lines = str(info.value).splitlines()
    assert "expect_column_values_to_be_unique" in lines[0] and "+1 more failure" in lines[0]
    assert "expect_column_values_to_be_between on column 'tokens'" in lines[1]


def test_result_json_is_written_on_success(tmp_path, corpus):
    out = tmp_path / "gx" / "corpus.json"
    V.validate(corpus, full_suite(), name="qp/corpus", result_path=out)
    doc = json.loads(out.read_text())
    assert doc["dataset"] == "qp/corpus" and doc["success"] is True and doc["n_rows"] == 6
    assert len(doc["results"]) == 14
    assert {"expectation", "column", "success", "observed", "unexpected_count", "sample"} <= set(doc["results"][0])


def test_failing_validation_still_writes_its_report_replacing_the_old_one(tmp_path, corpus):
    out = tmp_path / "corpus.json"
    out.write_text('{"stale": true}')
    with pytest.raises(ValidationFailed):
        V.validate(corpus.assign(loss=[np.inf] * 6), [V.finite("loss")], name="qp/corpus", result_path=out)
    doc = json.loads(out.read_text())  # valid JSON: inf became a string
    assert doc["success"] is False
    bad = [r for r in doc["results"] if not r["success"]]
    assert bad[0]["unexpected_count"] == 6 and bad[0]["sample"][0] == {"row": 0, "id": "a/0", "loss": "inf"}
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]


def test_raise_on_failure_false_returns_the_report(corpus):
    report = V.validate(corpus, [V.row_count_between(100)], name="d", raise_on_failure=False)
    assert not report.success
    assert report.to_dict()["results"][0]["observed"] == 6


def test_samples_use_row_numbers_when_there_is_no_id_column():
    df = pd.DataFrame({"x": [1, 2, 3, 99]}, index=[10, 11, 12, 13])
    msg = str(pytest.raises(ValidationFailed, V.validate, df, [V.between("x", 0, 10)], name="d").value)
    assert "(sample rows: row 3 x=99)" in msg


def test_bad_inputs_and_specs_raise_our_errors():
    with pytest.raises(DataError, match="expected a DataFrame or a list of records"):
        V.validate("not data", [V.not_null("a")], name="d")
    with pytest.raises(ParamsError, match="non-empty list of Expect"):
        V.validate([{"a": 1}], [], name="d")
    with pytest.raises(ParamsError, match="min_value 5 > max_value 1"):
        V.between("a", 5, 1)
    with pytest.raises(ParamsError, match="max_frac"):
        V.proportion_where("a", True, 1.5)
    with pytest.raises(ParamsError, match="give min_value, max_value or both"):
        V.row_count_between()


def test_every_builder_maps_to_a_real_gx_expectation_class():
    gx = V._gx()
    specs = full_suite()
    for spec in specs:
        for gx_type, kwargs in spec.parts:
            assert issubclass(getattr(gx.expectations, gx_type), gx.expectations.Expectation), gx_type
            getattr(gx.expectations, gx_type)(**kwargs)  # GX accepts the arguments we build


def test_references_fail_on_a_dangling_id_and_pass_on_existing_ones():
    docs = [{"id": "a", "dup_of": None}, {"id": "b", "dup_of": "a"}]
    V.validate(docs, [V.references("dup_of", [d["id"] for d in docs], "the pool")], name="pool")
    docs.append({"id": "c", "dup_of": "zz"})
    with pytest.raises(
        ValidationFailed, match=r"dup_of.*ids that exist in the pool|ids that exist in the pool.*dup_of"
    ):
        V.validate(docs, [V.references("dup_of", [d["id"] for d in docs], "the pool")], name="pool")


def test_list_valued_references_are_exploded_one_row_per_id():
    questions = [{"id": "q1", "gold": ["u1", "u2"]}, {"id": "q2", "gold": ["u9"]}]
    frame = V.explode_refs(questions, "gold")
    assert frame.to_dict("records") == [
        {"id": "q1", "gold": "u1"},
        {"id": "q1", "gold": "u2"},
        {"id": "q2", "gold": "u9"},
    ]
    report = V.validate(frame, [V.references("gold", ["u1", "u2"], "the memory")], name="gold", raise_on_failure=False)
    assert not report.success
