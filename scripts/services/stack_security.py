"""Credentials and TLS material for the multi-machine stack (native and compose), standard library + cryptography.

- :func:`write_private` creates a file mode 0600 *before* anything is written to it
  (``os.open(..., 0o600)`` on a fresh name, then an atomic rename), so a secret is never
  readable by others, not even for a moment.
- :func:`make_tls` writes a private CA and one certificate/key pair for the Dask scheduler,
  workers and clients (Dask checks the certificate against the CA, not the host name).
- :func:`dask_tls_env` is the Dask configuration (as environment variables) that makes every
  Dask process in that environment speak TLS only.
- :func:`mlflow_auth_config` writes the config of MLflow's ``basic-auth`` app.

Also a command for compose's one-shot ``dask-certs`` service::

    python scripts/services/stack_security.py tls /certs
"""

from __future__ import annotations

import datetime as dt
import os
import secrets
import sys
from pathlib import Path

CA, CERT, KEY = "ca.pem", "dask.pem", "dask-key.pem"
MLFLOW_ADMIN = "admin"
# the basic-auth app checks a PBKDF2 hash (1e6 rounds, about 0.25 s of CPU here) on every request unless
# it may cache a verified (user, password) for a while; 60 s bounds how long a changed password still works
MLFLOW_AUTH_CACHE_TTL_S = 60


def write_private(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` (mode 0600 from creation; replaces an existing file atomically)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def token(n: int = 18) -> str:
    """A random URL-safe secret."""
    return secrets.token_urlsafe(n)


def make_tls(
    folder: Path, hosts: tuple[str, ...] = ("127.0.0.1", "localhost", "dask-scheduler"), days: int = 365
) -> dict[str, Path]:
    """A CA and one certificate (SANs ``hosts``) signed by it, in ``folder``; the key files are 0600."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    now = dt.datetime.now(dt.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "paperline stack CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + dt.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    sans = []
    for host in hosts:
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            sans.append(x509.DNSName(host))
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "paperline-dask")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + dt.timedelta(days=days))
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    key_pem = key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    (folder / CA).write_text(ca.public_bytes(pem).decode())
    (folder / CERT).write_text(cert.public_bytes(pem).decode())
    write_private(folder / KEY, key_pem)
    return {"ca": folder / CA, "cert": folder / CERT, "key": folder / KEY}


def dask_tls_args(files: dict[str, Path]) -> list[str]:
    """``dask scheduler`` / ``dask worker`` options for TLS with ``files``."""
    return ["--tls-ca-file", str(files["ca"]), "--tls-cert", str(files["cert"]), "--tls-key", str(files["key"])]


def dask_tls_env(files: dict[str, Path]) -> dict[str, str]:
    """Dask configuration as environment variables: TLS required, the CA, the client's certificate and key."""
    pre = "DASK_DISTRIBUTED__COMM__"
    return {
        f"{pre}REQUIRE_ENCRYPTION": "True",
        f"{pre}DEFAULT_SCHEME": "tls",
        f"{pre}TLS__CA_FILE": str(files["ca"]),
        **{
            f"{pre}TLS__{role}__{part}": str(files[part.lower()])
            for role in ("CLIENT", "SCHEDULER", "WORKER")
            for part in ("CERT", "KEY")
        },
    }


def mlflow_auth_available() -> str | None:
    """None if MLflow's basic-auth app can start here, else why not (it needs Flask-WTF, ``mlflow[auth]``)."""
    try:
        import flask_wtf  # noqa: F401
    except ImportError:
        return (
            "MLflow's basic-auth app needs Flask-WTF (the scale extra: pip install -e '.[scale]'), "
            "which is not installed"
        )
    return None


def mlflow_auth_ini(database_uri: str, admin: str = MLFLOW_ADMIN) -> str:
    """The text of the ``basic-auth`` app's config; no password in it (``MLFLOW_AUTH_ADMIN_PASSWORD`` by
    environment)."""
    return (
        "[mlflow]\ndefault_permission = READ\n"
        f"database_uri = {database_uri}\nadmin_username = {admin}\n"
        "authorization_function = mlflow.server.auth:authenticate_request_basic_auth\n"
        f"auth_cache_ttl_seconds = {MLFLOW_AUTH_CACHE_TTL_S}\n"
    )


def mlflow_auth_config(folder: Path, admin: str = MLFLOW_ADMIN) -> Path:
    """The native stack's ``basic-auth`` config, 0600 in ``folder`` (its SQLite user database beside it)."""
    folder = Path(folder)
    return write_private(folder / "mlflow-auth.ini", mlflow_auth_ini(f"sqlite:///{folder / 'mlflow-auth.db'}", admin))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "tls":
        for name, path in make_tls(Path(sys.argv[2])).items():
            print(f"{name}: {path}")
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
