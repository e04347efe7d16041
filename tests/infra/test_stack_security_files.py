"""MLflow basic auth in compose and the native stack, Dask TLS in the Kubernetes manifests: checked on the files.

- compose: MLflow runs its basic-auth app with the committed config (no password in it), the admin password and
  Flask secret key by environment, every client sends the admin's name and the same password; the image's
  ``.[all]`` brings Flask-WTF (what ``mlflow[auth]`` requires).
- native stack: secure (the default) turns the app on, ``--insecure`` off; the password goes by environment.
- Kubernetes: every Dask scheduler/worker container speaks ``tls://`` with the certificate Secret mounted, flow-run
  jobs get the same files, nothing says ``tcp://``, images are pinned, NetworkPolicies cover Dask.
"""

from __future__ import annotations

import configparser
import json
import re
import stat
import tomllib

import pytest
import yaml

from scripts.services import stack_security as sec
from tests.conftest import ROOT

INFRA = ROOT / "infra"
COMPOSE = yaml.safe_load((INFRA / "compose/compose.yml").read_text())
SERVICES = COMPOSE["services"]
CLIENTS = {n for n, s in SERVICES.items() if "PAPERLINE_IMAGE" in str(s.get("image", ""))} - {"dask-certs"}
TLS_SECRET, TLS_CONFIG, TLS_DIR = "paperline-dask-tls", "paperline-dask-tls-config", "/tls"


def _env_var(value: str) -> str:
    """``${NAME:?message}`` -> NAME (the form the compose tests require for every secret)."""
    match = re.fullmatch(r"\$\{([A-Z0-9_]+):\?[^}]*\}", str(value))
    assert match, f"{value!r} does not come from the environment"
    return match.group(1)


# -- MLflow basic auth: compose -----------------------------------------------------------------------------
def test_compose_mlflow_runs_the_basic_auth_app_with_the_committed_config():
    mlflow = SERVICES["mlflow"]
    assert "--app-name basic-auth" in mlflow["command"]
    env = mlflow["environment"]
    target = env["MLFLOW_AUTH_CONFIG_PATH"]
    [source] = [v.split(":")[0] for v in mlflow["volumes"] if v.split(":")[1] == target]
    assert all(v.endswith(":ro") for v in mlflow["volumes"] if v.split(":")[1] in (target, TLS_DIR))
    assert {"shared-results:/shared", "dask-tls:/tls:ro"} <= set(mlflow["volumes"])  # the anchor's, kept
    ini_text = (INFRA / "compose" / source).read_text()
    assert ini_text == sec.mlflow_auth_ini("postgresql+psycopg2://paperline@postgres:5432/mlflow_auth")
    ini = configparser.ConfigParser()
    ini.read_string(ini_text)
    assert "admin_password" not in ini["mlflow"] and "@postgres" in ini["mlflow"]["database_uri"]
    assert "://paperline@" in ini["mlflow"]["database_uri"] and env["PGPASSWORD"].startswith("${POSTGRES_PASSWORD:?")
    assert "CREATE DATABASE mlflow_auth;" in (INFRA / "compose/initdb/10-databases.sql").read_text()
    _env_var(env["MLFLOW_FLASK_SERVER_SECRET_KEY"])  # its CSRF protection refuses to start without a static key
    admin_password = _env_var(env["MLFLOW_AUTH_ADMIN_PASSWORD"])
    for name in CLIENTS:  # prefect-worker, dask-workers, ... log runs and models
        client = SERVICES[name]["environment"]
        assert client["MLFLOW_TRACKING_USERNAME"] == ini["mlflow"]["admin_username"], name
        assert _env_var(client["MLFLOW_TRACKING_PASSWORD"]) == admin_password, name
    example = (INFRA / "compose/.env.example").read_text().splitlines()
    for var in (admin_password, _env_var(env["MLFLOW_FLASK_SERVER_SECRET_KEY"])):
        assert f"{var}=" in example, f".env.example does not list {var}"
    assert "ports" not in SERVICES["postgres"]


def _req_name(req: str) -> str:
    return re.split(r"[<>=!~;\[ ]", req, maxsplit=1)[0].lower().replace("_", "-")


def test_the_image_extras_bring_what_mlflow_auth_requires():
    """compose's paperline image is ``pip install -e .[all]``; the scale extra must cover ``mlflow[auth]``."""
    from importlib.metadata import requires

    auth_reqs = {_req_name(r) for r in requires("mlflow") or [] if re.search(r"""extra\s*==\s*["']auth["']""", r)}
    assert auth_reqs, "mlflow declares no auth extra"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    (all_extra,) = project["all"]
    assert "scale" in re.fullmatch(r"paperline\[(.*)\]", all_extra).group(1).split(",")
    assert auth_reqs <= {_req_name(r) for r in project["scale"]}
    pinned = {_req_name(line) for line in (ROOT / "scripts/constraints.txt").read_text().splitlines() if "==" in line}
    assert auth_reqs | {"wtforms"} <= pinned
    assert "pip install -e .[all]" in (INFRA / "compose/compose.yml").read_text()


# -- MLflow basic auth: native stack ------------------------------------------------------------------------
def test_the_native_stack_turns_mlflow_auth_on_unless_insecure(tmp_path):
    pytest.importorskip("flask_wtf")
    from scripts.services import native_stack

    env, cmd = {}, ["mlflow", "server"]
    assert native_stack.Stack(tmp_path / "open", ROOT, secure=False)._mlflow_auth(env, cmd) == "off: --insecure"
    assert env == {} and cmd == ["mlflow", "server"]

    stack = native_stack.Stack(tmp_path / "secure", ROOT)
    assert stack._mlflow_auth(env, cmd) == "on"
    stack._save()
    password = env["MLFLOW_AUTH_ADMIN_PASSWORD"]
    assert cmd == ["mlflow", "server", "--app-name", "basic-auth"] and not any(password in c for c in cmd)
    assert env["MLFLOW_FLASK_SERVER_SECRET_KEY"] and stack.state["env"]["MLFLOW_TRACKING_PASSWORD"] == password
    assert stack.state["env"]["MLFLOW_TRACKING_USERNAME"] == sec.MLFLOW_ADMIN
    ini = stack.dir / "mlflow-auth.ini"
    assert env["MLFLOW_AUTH_CONFIG_PATH"] == str(ini) and password not in ini.read_text()
    for path in (ini, stack.dir / "stack.env", stack.dir / "stack.json"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path.name
    assert "SECRET_KEY" not in (stack.dir / "stack.env").read_text()  # the server's alone, never the clients'
    argv = (ROOT / "scripts/services/native_stack.py").read_text()
    assert "self.secure" in argv.split("def _mlflow_auth", 1)[1].split("def ", 1)[0]


# -- Kubernetes: Dask TLS -----------------------------------------------------------------------------------
def _k8s_docs():
    for path in sorted((INFRA / "k8s").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                yield path.name, doc


def _pod_specs():
    for name, doc in _k8s_docs():
        if doc["kind"] in ("Deployment", "StatefulSet", "DaemonSet", "Job"):
            yield f"{name} {doc['metadata']['name']}", doc["spec"]["template"]["spec"]
    job = json.loads((INFRA / "k8s/gpu-job-template.json").read_text())
    yield "gpu-job-template.json", job["job_configuration"]["job_manifest"]["spec"]["template"]["spec"]


def _mounts_tls_secret(pod: dict, container: dict) -> bool:
    volumes = {v["name"] for v in pod.get("volumes", []) if v.get("secret", {}).get("secretName") == TLS_SECRET}
    return any(
        m["name"] in volumes and m["mountPath"] == TLS_DIR and m.get("readOnly")
        for m in container.get("volumeMounts", [])
    )


def _gets_tls_config(container: dict) -> bool:
    return {"configMapRef": {"name": TLS_CONFIG}} in container.get("envFrom", [])


def _as_list(value) -> list:
    """A container's command/args: a list, or a Prefect job-template placeholder string."""
    return [] if value is None else value if isinstance(value, list) else [value]


def test_every_k8s_dask_scheduler_and_worker_speaks_tls_with_the_secret_mounted():
    seen = set()
    for where, pod in _pod_specs():
        for c in pod["containers"]:
            argv = [str(a) for key in ("command", "args") for a in _as_list(c.get(key))]
            if argv[:1] != ["dask"]:
                continue
            role = argv[1]
            seen.add(role)
            for opt, value in (
                ("--tls-ca-file", f"{TLS_DIR}/{sec.CA}"),
                ("--tls-cert", f"{TLS_DIR}/{sec.CERT}"),
                ("--tls-key", f"{TLS_DIR}/{sec.KEY}"),
            ):
                assert opt in argv and argv[argv.index(opt) + 1] == value, f"{where}: {opt} {value}"
            if role == "scheduler":
                assert "--protocol" in argv and argv[argv.index("--protocol") + 1] == "tls", (
                    f"{where}: the scheduler must listen on tls"
                )
            else:
                assert role == "worker" and any(a.startswith("tls://") for a in argv), (
                    f"{where}: the worker must dial tls://"
                )
            assert _mounts_tls_secret(pod, c), (
                f"{where}: {c['name']} does not mount the Secret {TLS_SECRET} at {TLS_DIR}"
            )
            assert _gets_tls_config(c), f"{where}: {c['name']} lacks the ConfigMap {TLS_CONFIG}"
    assert seen == {"scheduler", "worker"}


def test_the_k8s_dask_config_requires_tls_with_the_mounted_files():
    [config] = [d for _, d in _k8s_docs() if d["kind"] == "ConfigMap" and d["metadata"]["name"] == TLS_CONFIG]
    files = {"ca": f"{TLS_DIR}/{sec.CA}", "cert": f"{TLS_DIR}/{sec.CERT}", "key": f"{TLS_DIR}/{sec.KEY}"}
    assert config["data"] == sec.dask_tls_env(files)  # what compose and the native stack set
    compose_env = SERVICES["dask-workers"]["environment"]
    assert {k: v for k, v in compose_env.items() if k.startswith("DASK_")} == config["data"]


def test_flow_run_jobs_get_the_dask_tls_files_too():
    job = dict(_pod_specs())["gpu-job-template.json"]
    [container] = job["containers"]
    assert _mounts_tls_secret(job, container) and _gets_tls_config(container)


def test_nothing_in_the_cluster_files_speaks_plain_tcp_to_dask():
    for path in [*(INFRA / "k8s").iterdir(), *(INFRA / "helm").iterdir(), INFRA / "compose/compose.yml"]:
        if path.is_file():
            text = path.read_text()
            assert "tcp://" not in text, f"{path.relative_to(ROOT)} names a plaintext Dask address"
            assert not re.search(r"image:\s*\S+:latest\b|\"image\":\s*\"[^\"]*:latest\"", text), path.name


def test_every_k8s_container_image_is_pinned():
    images = [(where, c["image"]) for where, pod in _pod_specs() for c in pod["containers"]]
    assert len(images) >= 4
    for where, image in images:
        assert ":" in image.rsplit("/", 1)[-1] and not image.endswith(":latest"), f"{where}: {image} is not pinned"


def test_network_policies_cover_the_dask_pods():
    policies = [d for _, d in _k8s_docs() if d["kind"] == "NetworkPolicy"]
    selected = {d["spec"]["podSelector"].get("matchLabels", {}).get("app"): d for d in policies}
    assert any(d["spec"]["podSelector"] == {} and "ingress" not in d["spec"] for d in policies), "no default deny"
    for app in ("dask-scheduler", "dask-workers"):
        assert app in selected and selected[app]["spec"]["policyTypes"] == ["Ingress"], app
    scheduler_ports = {
        p["port"] for rule in selected["dask-scheduler"]["spec"]["ingress"] for p in rule.get("ports", [])
    }
    assert 8786 in scheduler_ports


def test_k8s_mlflow_gets_its_store_uri_by_environment():
    [mlflow] = [d for _, d in _k8s_docs() if d["kind"] == "Deployment" and d["metadata"]["name"] == "mlflow"]
    [c] = mlflow["spec"]["template"]["spec"]["containers"]
    argv = " ".join(c["command"])
    assert "--backend-store-uri" not in argv and "$" not in argv and c["command"][0] != "sh"
    env = {e["name"]: e for e in c["env"]}
    assert env["MLFLOW_BACKEND_STORE_URI"]["valueFrom"]["secretKeyRef"]["name"] == "paperline-mlflow-db"
