"""Start the compose stack's services natively on 127.0.0.1 (no Docker): for tests, CI and trying it out.

Same services as ``infra/compose/compose.yml``: PostgreSQL (databases ``prefect`` and
``mlflow``), an S3 server (moto, standing in for MinIO), a Prefect server on
Postgres with a process work pool and worker, an MLflow server on Postgres with
artifacts on S3, and a Dask scheduler with two worker processes. Every port is
picked free at start; the database password is random and lives only in the
stack folder (mode 0600). ``start`` writes ``<dir>/stack.json`` (URLs, pids) and
``<dir>/stack.env`` (variables to export); ``stop`` ends every process it started.

    python scripts/services/native_stack.py start --dir /tmp/stack [--root .]
    source /tmp/stack/stack.env
    python scripts/services/native_stack.py stop --dir /tmp/stack
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

BIN = Path(sys.executable).parent
PG_BIN_DIRS = sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
POOL = "paperline"
S3_KEY = ("paperline-test", "paperline-test-secret")  # moto accepts any key; a real store reads them from env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pg_binary(name: str) -> str | None:
    """A PostgreSQL server binary (initdb, pg_ctl): on PATH or in Debian's versioned folder."""
    found = shutil.which(name)
    if found:
        return found
    for folder in PG_BIN_DIRS:
        if (folder / name).is_file():
            return str(folder / name)
    return None


def missing_binaries() -> list[str]:
    """What the stack needs and this machine lacks (the tests skip naming these)."""
    missing = [n for n in ("initdb", "pg_ctl") if pg_binary(n) is None]
    missing += [n for n in ("prefect", "mlflow", "dask", "moto_server") if not (BIN / n).exists()]
    return missing


def _wait(check, what: str, timeout: float, proc: subprocess.Popen | None = None, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        if proc is not None and proc.poll() is not None:
            tail = log.read_text()[-2000:] if log and log.exists() else ""
            raise RuntimeError(f"{what} exited with code {proc.returncode}:\n{tail}")
        time.sleep(0.5)
    raise RuntimeError(f"{what} did not become healthy within {timeout:.0f} s; see {log}")


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return resp.status < 500
    except OSError:
        return False


class Stack:
    """The running services of one stack folder; ``state`` is what ``stack.json`` holds."""

    def __init__(self, folder: Path, root: Path):
        self.dir = folder.resolve()
        self.root = root.resolve()
        self.dir.mkdir(parents=True, exist_ok=True)
        results = self.dir / "results"  # shared result storage: every worker process sees this path
        self.state: dict = {"pids": {}, "env": {
            "PREFECT_LOCAL_STORAGE_PATH": str(results / "prefect"),
            "PREFECT_RESULTS_PERSIST_BY_DEFAULT": "true",
            "PAPERLINE_SHARED_DIR": str(results / "shared"),
        }}

    # -- helpers -------------------------------------------------------------------------------
    def _spawn(self, name: str, cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> subprocess.Popen:
        log = open(self.dir / f"{name}.log", "ab")
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=cwd or self.root, start_new_session=True)
        self.state["pids"][name] = proc.pid
        self._save()
        return proc

    def _save(self) -> None:
        (self.dir / "stack.json").write_text(json.dumps(self.state, indent=1))
        lines = [f"export {k}={json.dumps(v)}" for k, v in self.state["env"].items()]
        env_file = self.dir / "stack.env"
        env_file.write_text("\n".join(lines) + "\n")
        env_file.chmod(0o600)

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
        pwfile = pg / "pwfile"
        pwfile.write_text(password + "\n")
        run_as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if run_as:
            shutil.chown(pg, "postgres")
            shutil.chown(pwfile, "postgres")
        pwfile.chmod(0o600)
        subprocess.run([*run_as, pg_binary("initdb"), "-D", str(data), "-U", "paperline", f"--pwfile={pwfile}",
                        "--auth=scram-sha-256", "-E", "UTF8"], check=True, capture_output=True)
        opts = f"-p {port} -c listen_addresses=127.0.0.1 -k {pg} -c fsync=off"
        subprocess.run([*run_as, pg_binary("pg_ctl"), "-D", str(data), "-l", str(pg / "postgres.log"), "-o", opts, "-w", "start"],
                       check=True, capture_output=True)
        self.state.update(pg_dir=str(pg), pg_data=str(data), pg_port=port, pg_as_postgres=bool(run_as))
        (self.dir / "pg-password").write_text(password)
        (self.dir / "pg-password").chmod(0o600)
        env = {**os.environ, "PGPASSWORD": password}
        for db in ("prefect", "mlflow"):
            subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(port), "-U", "paperline", "-d", "postgres", "-qc",
                            f"CREATE DATABASE {db}"], check=True, capture_output=True, env=env)
        self.state["pg_url"] = f"paperline:{password}@127.0.0.1:{port}"
        self._save()

    def s3(self) -> None:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        proc = self._spawn("s3", [str(BIN / "moto_server"), "-H", "127.0.0.1", "-p", str(port)], self.base_env())
        _wait(lambda: _http_ok(f"{url}/moto-api/"), "moto S3 server", 60, proc, self.dir / "s3.log")
        self.state["env"].update({
            "AWS_ACCESS_KEY_ID": S3_KEY[0], "AWS_SECRET_ACCESS_KEY": S3_KEY[1], "AWS_DEFAULT_REGION": "us-east-1",
            "MLFLOW_S3_ENDPOINT_URL": url, "PAPERLINE_S3_ENDPOINT": url,
        })
        import boto3

        client = boto3.client("s3", endpoint_url=url, aws_access_key_id=S3_KEY[0], aws_secret_access_key=S3_KEY[1], region_name="us-east-1")
        for bucket in ("mlflow", "dvc"):  # what compose's one-shot bucket creator makes
            client.create_bucket(Bucket=bucket)
        self._save()

    def prefect(self) -> subprocess.Popen:
        port = free_port()
        url = f"http://127.0.0.1:{port}/api"
        env = self.base_env()
        env["PREFECT_API_DATABASE_CONNECTION_URL"] = f"postgresql+asyncpg://{self.state['pg_url']}/prefect"
        env["PREFECT_HOME"] = str(self.dir / "prefect-server-home")
        cmd = [str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port", str(port)]
        proc = self._spawn("prefect-server", cmd, env)
        self.state["env"].update({"PREFECT_API_URL": url, "PREFECT_SERVER_ANALYTICS_ENABLED": "false"})
        self._save()
        return proc

    def mlflow(self) -> subprocess.Popen:
        port = free_port()
        env = self.base_env()
        env["MLFLOW_SERVER_ENABLE_JOB_EXECUTION"] = "false"
        cmd = [str(BIN / "mlflow"), "server", "--host", "127.0.0.1", "--port", str(port), "--workers", "2",
               "--backend-store-uri", f"postgresql+psycopg2://{self.state['pg_url']}/mlflow",
               "--artifacts-destination", "s3://mlflow/artifacts"]
        proc = self._spawn("mlflow", cmd, env)
        self.state["env"]["MLFLOW_TRACKING_URI"] = f"http://127.0.0.1:{port}"
        self._save()
        return proc

    def dask(self, workers: int = 2) -> None:
        port = free_port()
        address = f"tcp://127.0.0.1:{port}"
        env = self.base_env()
        sched = self._spawn("dask-scheduler", [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                                               "--no-dashboard"], env)
        _wait(lambda: _port_open(port), "dask scheduler", 60, sched, self.dir / "dask-scheduler.log")
        self._spawn("dask-workers", [str(BIN / "dask"), "worker", address, "--nworkers", str(workers), "--nthreads", "1",
                                     "--host", "127.0.0.1", "--no-dashboard", "--local-directory", str(self.dir / "dask")], env)
        self.state["env"].update({"PAPERLINE_DASK_ADDRESS": address, "PAPERLINE_RUNNER": address})
        self.state["dask_workers"] = workers
        self._save()

    def worker(self) -> None:
        env = self.base_env()
        subprocess.run([str(BIN / "prefect"), "work-pool", "create", POOL, "--type", "process", "--overwrite"],
                       check=True, capture_output=True, env=env, timeout=120)
        self._spawn("prefect-worker", [str(BIN / "prefect"), "worker", "start", "--pool", POOL, "--type", "process",
                                       "--limit", "4"], env)
        self.state["pool"] = POOL
        self._save()

    def wait_dask_workers(self, timeout: float = 90) -> None:
        from distributed import Client

        with Client(self.state["env"]["PAPERLINE_DASK_ADDRESS"], timeout=timeout) as client:
            client.wait_for_workers(self.state["dask_workers"], timeout=timeout)


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _world_traversable_tmp(prefix: str) -> Path:
    """A fresh folder under /tmp that the ``postgres`` user may enter (pytest's tmp folders are 0700)."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix=prefix))
    folder.chmod(0o755)
    return folder


def start(folder: Path, root: Path, *, dask_workers: int = 2, timeout: float = 180) -> Stack:
    """Start every service (slow ones overlap), wait until each is healthy, return the stack."""
    stack = Stack(folder, root)
    try:
        stack.postgres()
        stack.s3()
        prefect = stack.prefect()
        mlflow = stack.mlflow()
        stack.dask(dask_workers)
        env = stack.state["env"]
        _wait(lambda: _http_ok(f"{env['PREFECT_API_URL']}/health"), "prefect server", timeout, prefect, stack.dir / "prefect-server.log")
        _wait(lambda: _http_ok(f"{env['MLFLOW_TRACKING_URI']}/health"), "mlflow server", timeout, mlflow, stack.dir / "mlflow.log")
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
    for name, pid in reversed(list(state.get("pids", {}).items())):
        _kill_group(pid)
    if state.get("pg_data"):
        run_as = ["runuser", "-u", "postgres", "--"] if state.get("pg_as_postgres") else []
        subprocess.run([*run_as, pg_binary("pg_ctl"), "-D", state["pg_data"], "-m", "immediate", "-w", "stop"], capture_output=True)
        shutil.rmtree(state["pg_dir"], ignore_errors=True)
    record.unlink()


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    for _ in range(40):
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.25)
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("start", "stop", "check"))
    parser.add_argument("--dir", type=Path, default=Path(".paperline/stack"), help="stack folder (logs, stack.json, stack.env)")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="paperline checkout the workers run")
    parser.add_argument("--dask-workers", type=int, default=2)
    args = parser.parse_args()
    if args.action == "check":
        missing = missing_binaries()
        print("missing: " + ", ".join(missing) if missing else "all binaries present")
        sys.exit(1 if missing else 0)
    if args.action == "stop":
        stop(args.dir)
        print("stopped")
        return
    stack = start(args.dir, args.root, dask_workers=args.dask_workers)
    print(f"stack up; variables in {stack.dir / 'stack.env'}")
    for key, value in stack.state["env"].items():
        if "SECRET" not in key:
            print(f"  {key}={value}")


if __name__ == "__main__":
    main()
