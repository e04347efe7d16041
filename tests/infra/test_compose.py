"""infra/compose/compose.yml: the services the issue names, health checks, loopback binds, no committed secrets."""

from __future__ import annotations

import re

import pytest
import yaml

from tests.conftest import ROOT

COMPOSE = ROOT / "infra/compose/compose.yml"
SERVICES = {
    "postgres",
    "minio",
    "create-buckets",
    "dask-certs",
    "prefect-server",
    "prefect-worker",
    "mlflow",
    "dask-scheduler",
    "dask-workers",
}
ONE_SHOT = {"create-buckets", "dask-certs"}
SECRET_KEYS = re.compile(r"(PASSWORD|SECRET|TOKEN|ACCESS_KEY|AUTH_STRING)", re.I)


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def test_every_service_of_the_stack_is_declared(compose):
    assert set(compose["services"]) >= SERVICES


def test_long_running_services_have_health_checks(compose):
    for name, svc in compose["services"].items():
        if name in ONE_SHOT:
            assert svc.get("restart") == "no"  # one-shot
            continue
        assert "healthcheck" in svc and svc["healthcheck"]["test"], f"{name} has no health check"


def test_published_ports_bind_to_loopback_unless_told_otherwise(compose):
    published = 0
    for name, svc in compose["services"].items():
        for port in svc.get("ports", []):
            published += 1
            assert str(port).startswith("${PAPERLINE_BIND:-127.0.0.1}:"), f"{name} publishes {port} on every interface"
    assert published >= 4
    assert "ports" not in compose["services"]["postgres"], "PostgreSQL must stay on the compose network"


def _env_items(svc: dict):
    env = svc.get("environment") or {}
    return env.items() if isinstance(env, dict) else (item.split("=", 1) for item in env)


def test_no_secret_value_is_committed(compose):
    for name, svc in compose["services"].items():
        for key, value in _env_items(svc):
            if SECRET_KEYS.search(key):
                assert re.fullmatch(r"\$\{[A-Z0-9_]+:\?[^}]*\}", str(value)), (
                    f"{name}.{key} must come from the environment"
                )
        for text in (str(svc.get("command", "")), *(str(v) for _, v in _env_items(svc))):
            for url_password in re.findall(r"://[^:/@\s]+:([^@\s]+)@", text):
                assert url_password.startswith("${"), f"{name}: a password is written into a URL"
    example = (ROOT / "infra/compose/.env.example").read_text()
    assert all(line.split("=", 1)[1] == "" for line in example.splitlines() if line and not line.startswith("#"))


def test_compose_documents_every_published_port(compose):
    header = COMPOSE.read_text().split("name: paperline")[0]
    for svc in compose["services"].values():
        for port in svc.get("ports", []):
            assert re.search(rf"#\s+{port.rsplit(':', 1)[1]}\s", header), f"port {port} is not explained at the top"
