"""The Kubernetes Dask manifests' own commands and TLS ConfigMap, run here: a worker joins over TLS, a plain client
is refused.

infra/k8s/dask.yaml's scheduler and worker commands and its ConfigMap (Dask config as environment variables)
are run as written, with only what the cluster supplies replaced: the Secret's mount /tls by a folder with
certificates from scripts/services/stack_security.py, the Service name and ports by 127.0.0.1 and free ports.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml

from scripts.services import stack_procs
from scripts.services import stack_security as sec
from tests.conftest import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def _manifests() -> tuple[dict, dict[str, list[str]]]:
    docs = [d for d in yaml.safe_load_all((ROOT / "infra/k8s/dask.yaml").read_text()) if d]
    [config] = [d["data"] for d in docs if d["kind"] == "ConfigMap"]
    commands = {
        d["metadata"]["name"]: d["spec"]["template"]["spec"]["containers"][0]["command"]
        for d in docs
        if d["kind"] == "Deployment"
    }
    return config, commands


def test_the_k8s_dask_commands_run_over_tls_and_refuse_plain_tcp(tmp_path, monkeypatch):
    pytest.importorskip("cryptography")
    pytest.importorskip("distributed")
    if not (stack_procs.BIN / "dask").exists():
        pytest.skip("no dask command in this environment")
    config, commands = _manifests()
    tls = tmp_path / "tls"
    sec.make_tls(tls)
    port, dash = stack_procs.free_port(), stack_procs.free_port()

    def local(argv: list[str]) -> list[str]:
        out = []
        for arg in argv:
            arg = arg.replace("/tls/", f"{tls}/").replace("tls://dask-scheduler:8786", f"tls://127.0.0.1:{port}")
            out.append({"0.0.0.0": "127.0.0.1", "8786": str(port), ":8787": f"127.0.0.1:{dash}"}.get(arg, arg))
        return [str(stack_procs.BIN / out[0]), *out[1:]]

    env = {**os.environ, **{k: v.replace("/tls/", f"{tls}/") for k, v in config.items()}}
    procs = []
    try:
        with open(tmp_path / "scheduler.log", "wb") as log:  # the child keeps its own copy of the handle
            scheduler = local(commands["dask-scheduler"])
            procs.append(
                subprocess.Popen(scheduler, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=log)
            )
        stack_procs._wait(
            lambda: stack_procs._port_open(port), "dask scheduler", 90, procs[0], tmp_path / "scheduler.log"
        )
        worker = local(commands["dask-workers"]) + [
            "--host",
            "127.0.0.1",
            "--no-dashboard",
            "--local-directory",
            str(tmp_path / "w"),
        ]
        with open(tmp_path / "worker.log", "wb") as log:  # the child keeps its own copy of the handle
            procs.append(
                subprocess.Popen(worker, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=log)
            )
        probe = (
            "import sys\n"
            "from distributed import Client\n"
            "from distributed.security import Security\n"
            "address = sys.argv[1]\n"
            "try:\n"
            "    Client(address.replace('tls://', 'tcp://'), timeout=5, security=Security(require_encryption=False))\n"
            "    sys.exit('a plain-TCP client got in')\n"
            "except (OSError, TimeoutError):\n"
            "    pass\n"
            "with Client(address, timeout=60) as c:\n"  # TLS from the ConfigMap's variables only
            "    c.wait_for_workers(1, timeout=90)\n"
            "    assert c.submit(sum, [1, 2]).result() == 3\n"
            "    print('ok', list(c.scheduler_info()['workers'])[0].split('://')[0])\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", probe, f"tls://127.0.0.1:{port}"],
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert done.returncode == 0, done.stderr[-2000:] + (tmp_path / "worker.log").read_text()[-2000:]
        assert done.stdout.split() == ["ok", "tls"]  # the worker listens on TLS too
    finally:
        for proc in reversed(procs):
            stack_procs._kill_group(proc.pid)
