"""Secrets and exposure of the stack: pinned images, scoped S3 keys, auth and TLS in compose, NetworkPolicy, 0600
files."""

from __future__ import annotations

import json
import os
import re
import ssl
import stat

import pytest
import yaml

from scripts.services import stack_security as sec
from tests.conftest import ROOT

INFRA = ROOT / "infra"
COMPOSE = yaml.safe_load((INFRA / "compose/compose.yml").read_text())
SERVICES = COMPOSE["services"]
PAPERLINE_IMAGE = {n for n, s in SERVICES.items() if "PAPERLINE_IMAGE" in str(s.get("image", ""))}


def _images():
    for name, svc in SERVICES.items():
        yield f"compose {name}", svc["image"]
    for path in sorted((INFRA / "k8s").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            for c in (doc or {}).get("spec", {}).get("template", {}).get("spec", {}).get("containers", []):
                yield f"{path.name} {c['name']}", c["image"]
    job = json.loads((INFRA / "k8s/gpu-job-template.json").read_text())
    for c in job["job_configuration"]["job_manifest"]["spec"]["template"]["spec"]["containers"]:
        yield f"gpu-job-template {c['name']}", c["image"]


def test_every_image_is_pinned_to_a_tag_never_latest():
    images = list(_images())
    assert len(images) >= 10
    for where, image in images:
        image = re.sub(r"\$\{[A-Z_]+:-([^}]+)\}", r"\1", image)  # the default compose uses
        assert ":" in image.rsplit("/", 1)[-1] and not image.endswith(":latest"), (
            f"{where}: image {image} is not pinned"
        )
    for path in (INFRA / "helm").glob("*.yaml"):
        assert ":latest" not in path.read_text()
    assert "prefectTag" in (INFRA / "helm/prefect-server-values.yaml").read_text()


def _env(name: str) -> dict:
    return SERVICES[name].get("environment") or {}


def test_only_minio_and_the_bucket_job_see_the_minio_root_credentials():
    for name, svc in SERVICES.items():
        if "MINIO_ROOT" in json.dumps(svc):
            assert name in ("minio", "create-buckets"), f"{name} gets the MinIO root credentials"
    for name in PAPERLINE_IMAGE - {"dask-certs"}:
        assert _env(name)["AWS_ACCESS_KEY_ID"].startswith("${PAPERLINE_S3_ACCESS_KEY:?"), name
    job = SERVICES["create-buckets"]["command"][0]
    assert "mc admin user add" in job and "mc admin policy attach s3 paperline-buckets" in job
    policy = json.loads(job.split("<<'EOF'\n", 1)[1].split("\nEOF", 1)[0])
    resources = {r for st in policy["Statement"] for r in st["Resource"]}
    assert resources == {"arn:aws:s3:::mlflow", "arn:aws:s3:::dvc", "arn:aws:s3:::mlflow/*", "arn:aws:s3:::dvc/*"}


def test_no_password_is_on_a_command_line():
    secret = re.compile(r"PASSWORD|SECRET_KEY|AUTH_STRING")
    for name, svc in SERVICES.items():
        command = svc.get("command", "")
        lines = command if isinstance(command, list) else [command]
        for line in lines:
            argv_parts = [
                ln for ln in str(line).splitlines() if not ln.lstrip().startswith("printf")
            ]  # printf is a shell builtin
            assert not any(secret.search(part) for part in argv_parts), f"{name}: a secret on the command line"
    assert "--backend-store-uri" not in str(SERVICES["mlflow"]["command"])
    native = (ROOT / "scripts/services/native_stack.py").read_text()
    assert '"--backend-store-uri"' not in native and "MLFLOW_BACKEND_STORE_URI" in native


def test_prefect_needs_basic_auth_and_dask_speaks_tls_only():
    assert _env("prefect-server")["PREFECT_SERVER_API_AUTH_STRING"].startswith("${PREFECT_AUTH_STRING:?")
    for name in PAPERLINE_IMAGE - {"dask-certs"}:
        env = _env(name)
        assert env["PREFECT_API_AUTH_STRING"].startswith("${PREFECT_AUTH_STRING:?"), name
        assert (
            env["PAPERLINE_RUNNER"].startswith("tls://") and env["DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION"] == "True"
        )
    for name in ("dask-scheduler", "dask-workers"):
        assert all(opt in SERVICES[name]["command"] for opt in ("--tls-ca-file", "--tls-cert", "--tls-key")), name
    assert "tls://" in SERVICES["dask-workers"]["command"] and "--protocol tls" in SERVICES["dask-scheduler"]["command"]
    assert SERVICES["dask-certs"]["restart"] == "no"


def test_postgres_is_reached_only_by_its_two_clients():
    assert COMPOSE["networks"]["db"]["internal"] is True and SERVICES["postgres"]["networks"] == ["db"]
    on_db = {name for name, svc in SERVICES.items() if "db" in (svc.get("networks") or [])}
    assert on_db == {"postgres", "prefect-server", "mlflow"}


def test_a_network_policy_denies_ingress_by_default_and_covers_every_app():
    docs = list(yaml.safe_load_all((INFRA / "k8s/network-policy.yaml").read_text()))
    assert all(d["kind"] == "NetworkPolicy" and d["metadata"]["namespace"] == "paperline" for d in docs)
    assert any(
        d["spec"]["podSelector"] == {} and d["spec"]["policyTypes"] == ["Ingress"] and "ingress" not in d["spec"]
        for d in docs
    )
    covered = {d["spec"]["podSelector"].get("matchLabels", {}).get("app") for d in docs}
    for path in (INFRA / "k8s").glob("*.yaml"):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("kind") == "Deployment":
                assert doc["metadata"]["labels"]["app"] in covered, (
                    f"{path.name}: {doc['metadata']['name']} has no policy"
                )


def test_credential_files_are_0600_from_creation(tmp_path, monkeypatch):
    modes = []
    real_open = os.open
    monkeypatch.setattr(
        os, "open", lambda path, flags, mode=0o777: (modes.append((flags, mode)), real_open(path, flags, mode))[1]
    )
    old = os.umask(0)
    try:
        target = tmp_path / "stack.env"
        target.write_text("old")
        target.chmod(0o644)
        sec.write_private(target, "export SECRET=1\n")
    finally:
        os.umask(old)
    assert target.read_text() == "export SECRET=1\n" and stat.S_IMODE(target.stat().st_mode) == 0o600
    assert modes and all(mode == 0o600 and flags & os.O_EXCL for flags, mode in modes)
    assert [p.name for p in tmp_path.iterdir()] == ["stack.env"]


def test_the_dask_tls_material_verifies_and_configures_dask(tmp_path, monkeypatch):
    pytest.importorskip("cryptography")
    files = sec.make_tls(tmp_path / "tls")
    assert stat.S_IMODE(files["key"].stat().st_mode) == 0o600
    ctx = ssl.create_default_context(cafile=str(files["ca"]))
    ctx.load_cert_chain(str(files["cert"]), str(files["key"]))  # the key matches the certificate
    pytest.importorskip("distributed")
    import dask.config
    from distributed.security import Security

    for key, value in sec.dask_tls_env(files).items():  # what a process started with these variables reads
        monkeypatch.setenv(key, value)
    dask.config.refresh()
    try:
        security = Security()
    finally:
        monkeypatch.undo()
        dask.config.refresh()
    assert security.require_encryption and security.tls_ca_file == str(files["ca"])
    assert (security.tls_client_cert, security.tls_client_key) == (str(files["cert"]), str(files["key"]))


def test_mlflow_basic_auth_is_reported_when_it_cannot_run():
    reason = sec.mlflow_auth_available()
    assert reason is None or "Flask-WTF" in reason
