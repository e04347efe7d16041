"""Schema-only database templates (flows/runtime/db_templates.py): a new store gets a migrated copy, an existing
one is never touched, a broken template is rebuilt, and anything but the default SQLite stores is left alone."""

from __future__ import annotations

import sqlite3
from contextlib import closing

import pytest

from flows.runtime import db_templates as D


@pytest.fixture
def templates(tmp_path, monkeypatch):
    folder = tmp_path / "templates"
    monkeypatch.setenv("PAPERLINE_TEMPLATE_DIR", str(folder))
    return folder


def _tables(db) -> set[str]:
    with closing(sqlite3.connect(db)) as con:
        return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_a_new_mlflow_store_gets_migrated_tables_that_mlflow_uses(templates, tmp_path):
    from mlflow.tracking import MlflowClient

    db = tmp_path / "state" / "mlflow.db"
    assert D.seed_mlflow(f"sqlite:///{db}")
    assert {"experiments", "runs", "alembic_version"} <= _tables(db)
    client = MlflowClient(f"sqlite:///{db}")
    eid = client.create_experiment("seeded")
    assert client.get_experiment(eid).name == "seeded"
    assert [p.name for p in templates.iterdir()] == [D._template("mlflow").name]  # one file, no journal beside it


def test_an_existing_store_is_never_replaced(templates, tmp_path):
    db = tmp_path / "mlflow.db"
    db.write_bytes(b"the user's runs")
    assert not D.seed_mlflow(f"sqlite:///{db}")
    assert db.read_bytes() == b"the user's runs"


def test_a_broken_template_is_rebuilt_not_copied(templates, tmp_path):
    templates.mkdir()
    D._template("mlflow").write_bytes(b"not a database")
    db = tmp_path / "mlflow.db"
    assert D.seed_mlflow(f"sqlite:///{db}")
    assert "runs" in _tables(db) and D._migrated(D._template("mlflow"))


def test_other_stores_are_left_alone(templates, tmp_path, monkeypatch):
    assert not D.seed_mlflow("http://127.0.0.1:5000")
    monkeypatch.setenv("PREFECT_API_DATABASE_CONNECTION_URL", "postgresql+asyncpg://u@h/db")
    assert not D.seed_prefect(tmp_path / "home")
    assert not (tmp_path / "home").exists() and not templates.exists()


def test_a_new_prefect_home_gets_the_migrated_database(templates, tmp_path, monkeypatch):
    monkeypatch.delenv("PREFECT_API_DATABASE_CONNECTION_URL", raising=False)
    home = tmp_path / "home"
    assert D.seed_prefect(home)
    db = home / D.PREFECT_DB
    assert D._migrated(db) and {"flow_run", "deployment"} <= _tables(db)
    assert not D.seed_prefect(home)  # second call: the database exists
    other = tmp_path / "other"
    assert D.seed_prefect(other)  # from the kept template, no rebuild
    assert (other / D.PREFECT_DB).read_bytes() == D._template("prefect").read_bytes()
