"""Start the compose stack's services natively on 127.0.0.1 (no Docker): for tests, CI and trying it out.

Same services as ``infra/compose/compose.yml``: PostgreSQL (databases ``prefect`` and
``mlflow``), an S3 server (moto, standing in for MinIO), a Prefect server on
Postgres with a process work pool and worker, an MLflow server on Postgres with
artifacts on S3, and a Dask scheduler with two worker processes. Every port is
picked free at start. ``start`` writes ``<dir>/stack.json`` (URLs, pids) and
``<dir>/stack.env`` (variables to export); ``stop`` ends every process it started.

Secured by default: Prefect's API needs basic auth (``PREFECT_API_AUTH_STRING``), MLflow
runs its ``basic-auth`` app (clients send ``MLFLOW_TRACKING_USERNAME``/``MLFLOW_TRACKING_PASSWORD``;
Flask-WTF comes with the ``scale`` extra), Dask speaks TLS only (a private CA in ``<dir>/tls``),
passwords are random, travel by environment or file (never on a command line) and every
credential file is created mode 0600. ``--insecure`` turns all three off.

    python scripts/services/native_stack.py start --dir /tmp/stack [--root .] [--insecure]
    source /tmp/stack/stack.env
    python scripts/services/native_stack.py stop --dir /tmp/stack
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

# run as a script (its folder is on sys.path) or loaded from the checkout (tests: the root is on sys.path)
try:
    import stack_security as sec
except ImportError:
    from scripts.services import stack_security as sec

try:
    from stack_procs import (
        BIN,
        _http_ok,
        _kill_group,
        _port_open,
        _wait,
        _world_traversable_tmp,
        free_port,
        missing_binaries,
        pg_binary,
        why_not_startable,
    )
except ImportError:
    from scripts.services.stack_procs import (
        BIN,
        _http_ok,
        _kill_group,
        _port_open,
        _wait,
        _world_traversable_tmp,
        free_port,
        missing_binaries,
        pg_binary,
        why_not_startable,  # noqa: F401  (re-exported: the stack tests call native_stack.why_not_startable())
    )

POOL = "paperline"
S3_KEY = ("paperline-test", "paperline-test-secret")  # moto accepts any key; a real store reads them from env


class Stack:
    """The running services of one stack folder; ``state`` is what ``stack.json`` holds."""

    def __init__(self, folder: Path, root: Path, *, secure: bool = True):
        self.dir = folder.resolve()
        self.root = root.resolve()
        self.dir.mkdir(parents=True, exist_ok=True)
        self.dir.chmod(0o700)
        self.secure, self.pg_password = secure, ""
        results = self.dir / "results"  # shared result storage: every worker process sees this path
        self.state: dict = {
            "pids": {},
            "env": {
                "PREFECT_LOCAL_STORAGE_PATH": str(results / "prefect"),
                "PREFECT_RESULTS_PERSIST_BY_DEFAULT": "true",
                "PAPERLINE_SHARED_DIR": str(results / "shared"),
            },
        }

    # -- helpers -------------------------------------------------------------------------------
    def _spawn(self, name: str, cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> subprocess.Popen:
        with open(self.dir / f"{name}.log", "ab") as log:  # the child keeps its own copy; ours was left open
            proc = subprocess.Popen(
                cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=cwd or self.root, start_new_session=True
            )
        self.state["pids"][name] = proc.pid
        self._save()
        return proc

    def _save(self) -> None:
        sec.write_private(self.dir / "stack.json", json.dumps(self.state, indent=1))
        lines = [f"export {k}={json.dumps(v)}" for k, v in self.state["env"].items()]
        sec.write_private(self.dir / "stack.env", "\n".join(lines) + "\n")

    def base_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("PREFECT_API_URL", "MLFLOW_TRACKING_URI")}
        env.update(self.state["env"])
        env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
        env["PYTHONPATH"] = str(self.root)
        return env

    # -- services ------------------------------------------------------------------------------
    def postgres(self) -> None:
        """initdb + pg_ctl as the ``postgres`` user when root (postgres refuses root), password auth."""
        pg = Path(os.environ.get("PAPERLINE_PG_DIR") or _world_traversable_tmp("paperline-pg-"))
        data, port, password = pg / "data", free_port(), secrets.token_urlsafe(16)
        pwfile = sec.write_private(pg / "pwfile", password + "\n")
        run_as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if run_as:
            shutil.chown(pg, "postgres")
            shutil.chown(pwfile, "postgres")
        subprocess.run(
            [
                *run_as,
                pg_binary("initdb"),
                "-D",
                str(data),
                "-U",
                "paperline",
                f"--pwfile={pwfile}",
                "--auth=scram-sha-256",
                "-E",
                "UTF8",
            ],
            check=True,
            capture_output=True,
        )
        opts = f"-p {port} -c listen_addresses=127.0.0.1 -k {pg} -c fsync=off"
        subprocess.run(
            [*run_as, pg_binary("pg_ctl"), "-D", str(data), "-l", str(pg / "postgres.log"), "-o", opts, "-w", "start"],
            check=True,
            capture_output=True,
        )
        self.state.update(pg_dir=str(pg), pg_data=str(data), pg_port=port, pg_as_postgres=bool(run_as))
        sec.write_private(self.dir / "pg-password", password)
        self.pg_password = password  # in memory and the 0600 file only; processes get it by environment
        env = {**os.environ, "PGPASSWORD": password}
        for db in ("prefect", "mlflow"):
            subprocess.run(
                [
                    "psql",
                    "-h",
                    "127.0.0.1",
                    "-p",
                    str(port),
                    "-U",
                    "paperline",
                    "-d",
                    "postgres",
                    "-qc",
                    f"CREATE DATABASE {db}",
                ],
                check=True,
                capture_output=True,
                env=env,
            )
        self._save()

    def s3(self) -> None:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        proc = self._spawn("s3", [str(BIN / "moto_server"), "-H", "127.0.0.1", "-p", str(port)], self.base_env())
        _wait(lambda: _http_ok(f"{url}/moto-api/"), "moto S3 server", 60, proc, self.dir / "s3.log")
        self.state["env"].update(
            {
                "AWS_ACCESS_KEY_ID": S3_KEY[0],
                "AWS_SECRET_ACCESS_KEY": S3_KEY[1],
                "AWS_DEFAULT_REGION": "us-east-1",
                "MLFLOW_S3_ENDPOINT_URL": url,
                "PAPERLINE_S3_ENDPOINT": url,
            }
        )
        import boto3

        client = boto3.client(
            "s3",
            endpoint_url=url,
            aws_access_key_id=S3_KEY[0],
            aws_secret_access_key=S3_KEY[1],
            region_name="us-east-1",
        )
        for bucket in ("mlflow", "dvc"):  # what compose's one-shot bucket creator makes
            client.create_bucket(Bucket=bucket)
        self._save()

    def prefect(self) -> subprocess.Popen:
        port = free_port()
        url = f"http://127.0.0.1:{port}/api"
        if self.secure:  # clients (this stack's env) send it; the server requires it on every route but /health
            self.state["env"]["PREFECT_API_AUTH_STRING"] = f"paperline:{sec.token()}"
        env = self.base_env()
        env["PREFECT_API_DATABASE_CONNECTION_URL"] = (
            f"postgresql+asyncpg://paperline:{self.pg_password}@127.0.0.1:{self.state['pg_port']}/prefect"
        )
        env["PREFECT_HOME"] = str(self.dir / "prefect-server-home")
        if self.secure:
            env["PREFECT_SERVER_API_AUTH_STRING"] = self.state["env"]["PREFECT_API_AUTH_STRING"]
        cmd = [str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port", str(port)]
        proc = self._spawn("prefect-server", cmd, env)
        self.state["env"].update({"PREFECT_API_URL": url, "PREFECT_SERVER_ANALYTICS_ENABLED": "false"})
        self.state["prefect_auth"] = self.secure
        self._save()
        return proc

    def mlflow(self) -> subprocess.Popen:
        port = free_port()
        env = self.base_env()
        env["MLFLOW_SERVER_ENABLE_JOB_EXECUTION"] = "false"
        # by environment, not on the command line (visible in `ps`): the store URI holds the password
        env["MLFLOW_BACKEND_STORE_URI"] = (
            f"postgresql+psycopg2://paperline:{self.pg_password}@127.0.0.1:{self.state['pg_port']}/mlflow"
        )
        cmd = [
            str(BIN / "mlflow"),
            "server",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            "2",
            "--artifacts-destination",
            "s3://mlflow/artifacts",
        ]
        self.state["mlflow_auth"] = self._mlflow_auth(env, cmd)
        proc = self._spawn("mlflow", cmd, env)
        self.state["env"]["MLFLOW_TRACKING_URI"] = f"http://127.0.0.1:{port}"
        self._save()
        return proc

    def _mlflow_auth(self, env: dict[str, str], cmd: list[str]) -> str:
        """MLflow's basic-auth app unless insecure; returns what was done ("on" or "off: why").

        The admin password and the Flask secret key reach the server by environment; clients get
        MLFLOW_TRACKING_USERNAME/PASSWORD from the stack's env (``stack.env``, 0600), as Prefect's auth string.
        """
        if not self.secure:
            return "off: --insecure"
        missing = sec.mlflow_auth_available()
        if missing:
            raise RuntimeError(f"MLflow basic auth: {missing}; or start with --insecure")
        password = sec.token()
        # the app's CSRF protection needs a static Flask secret key (it refuses to start without one)
        env.update(
            MLFLOW_AUTH_CONFIG_PATH=str(sec.mlflow_auth_config(self.dir)),
            MLFLOW_AUTH_ADMIN_PASSWORD=password,
            MLFLOW_FLASK_SERVER_SECRET_KEY=sec.token(24),
        )
        cmd += ["--app-name", "basic-auth"]
        self.state["env"].update(MLFLOW_TRACKING_USERNAME=sec.MLFLOW_ADMIN, MLFLOW_TRACKING_PASSWORD=password)
        return "on"

    def dask(self, workers: int = 2) -> None:
        port = free_port()
        tls: list[str] = []
        if self.secure:  # TLS only: a private CA; clients get the CA and a client certificate by Dask config
            files = sec.make_tls(self.dir / "tls")
            tls = sec.dask_tls_args(files)
            self.state["env"].update(sec.dask_tls_env(files))
        address = f"{'tls' if self.secure else 'tcp'}://127.0.0.1:{port}"
        env = self.base_env()
        sched = self._spawn(
            "dask-scheduler",
            [
                str(BIN / "dask"),
                "scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--protocol",
                address.split(":")[0],
                "--no-dashboard",
                *tls,
            ],
            env,
        )
        _wait(lambda: _port_open(port), "dask scheduler", 60, sched, self.dir / "dask-scheduler.log")
        self._spawn(
            "dask-workers",
            [
                str(BIN / "dask"),
                "worker",
                address,
                "--nworkers",
                str(workers),
                "--nthreads",
                "1",
                "--host",
                "127.0.0.1",
                "--no-dashboard",
                "--local-directory",
                str(self.dir / "dask"),
                *tls,
            ],
            env,
        )
        self.state["env"].update({"PAPERLINE_DASK_ADDRESS": address, "PAPERLINE_RUNNER": address})
        self.state["dask_workers"] = workers
        self._save()

    def dask_security(self):
        """The client Security of this stack's Dask (TLS with the stack's CA), or None without TLS."""
        from distributed.security import Security

        env = self.state["env"]
        if "DASK_DISTRIBUTED__COMM__TLS__CA_FILE" not in env:
            return None
        return Security(
            tls_ca_file=env["DASK_DISTRIBUTED__COMM__TLS__CA_FILE"],
            require_encryption=True,
            tls_client_cert=env["DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT"],
            tls_client_key=env["DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY"],
        )

    def worker(self) -> None:
        env = self.base_env()
        subprocess.run(
            [str(BIN / "prefect"), "work-pool", "create", POOL, "--type", "process", "--overwrite"],
            check=True,
            capture_output=True,
            env=env,
            timeout=120,
        )
        self._spawn(
            "prefect-worker",
            [str(BIN / "prefect"), "worker", "start", "--pool", POOL, "--type", "process", "--limit", "4"],
            env,
        )
        self.state["pool"] = POOL
        self._save()

    def wait_dask_workers(self, timeout: float = 90) -> None:
        from distributed import Client

        with Client(
            self.state["env"]["PAPERLINE_DASK_ADDRESS"], timeout=timeout, security=self.dask_security()
        ) as client:
            client.wait_for_workers(self.state["dask_workers"], timeout=timeout)


def start(folder: Path, root: Path, *, dask_workers: int = 2, timeout: float = 180, secure: bool = True) -> Stack:
    """Start every service (slow ones overlap), wait until each is healthy, return the stack.

    ``secure`` (the default) turns on Prefect basic auth, MLflow's basic-auth app and Dask TLS.
    """
    stack = Stack(folder, root, secure=secure)
    try:
        stack.postgres()
        stack.s3()
        prefect = stack.prefect()
        mlflow = stack.mlflow()
        stack.dask(dask_workers)
        env = stack.state["env"]
        _wait(
            lambda: _http_ok(f"{env['PREFECT_API_URL']}/health"),
            "prefect server",
            timeout,
            prefect,
            stack.dir / "prefect-server.log",
        )
        _wait(
            lambda: _http_ok(f"{env['MLFLOW_TRACKING_URI']}/health"),
            "mlflow server",
            timeout,
            mlflow,
            stack.dir / "mlflow.log",
        )
        stack.worker()
        stack.wait_dask_workers()
    except BaseException:
        stop(folder)
        raise
    return stack


def stop(folder: Path) -> None:
    """Stop every process recorded in ``<folder>/stack.json`` (process groups), then PostgreSQL."""
    record = folder / "stack.json"
    if not record.is_file():
        return
    state = json.loads(record.read_text())
    for pid in reversed(list(state.get("pids", {}).values())):
        _kill_group(pid)
    if state.get("pg_data"):
        run_as = ["runuser", "-u", "postgres", "--"] if state.get("pg_as_postgres") else []
        subprocess.run(
            [*run_as, pg_binary("pg_ctl"), "-D", state["pg_data"], "-m", "immediate", "-w", "stop"], capture_output=True
        )
        shutil.rmtree(state["pg_dir"], ignore_errors=True)
    record.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("start", "stop", "check"))
    parser.add_argument(
        "--dir", type=Path, default=Path(".paperline/stack"), help="stack folder (logs, stack.json, stack.env)"
    )
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="paperline checkout the workers run")
    parser.add_argument("--dask-workers", type=int, default=2)
    parser.add_argument(
        "--insecure", action="store_true", help="no Prefect auth, no MLflow auth, no Dask TLS (a throwaway local stack)"
    )
    parser.add_argument(
        "--mlflow-auth", action="store_true", help="ignored: MLflow's basic-auth app is on unless --insecure"
    )
    args = parser.parse_args()
    if args.action == "check":
        missing = missing_binaries()
        print("missing: " + ", ".join(missing) if missing else "all binaries present")
        sys.exit(1 if missing else 0)
    if args.action == "stop":
        stop(args.dir)
        print("stopped")
        return
    stack = start(args.dir, args.root, dask_workers=args.dask_workers, secure=not args.insecure)
    print(f"stack up; variables in {stack.dir / 'stack.env'}")
    for key, value in stack.state["env"].items():
        if not any(word in key for word in ("SECRET", "PASSWORD", "AUTH_STRING")):
            print(f"  {key}={value}")


if __name__ == "__main__":
    main()
