"""Bad input across the CLI (hardening, part 6): one line ``error: ...`` naming the field or file, exit 2,
and nothing previously written changed.

Each case runs ``flows.cli:main`` (the ``paperline`` entry point) in this process, so a case costs
milliseconds rather than a subprocess's seconds. The file-system cases use a tiny tmpfs (full) and a
read-only mount where this machine allows mounting, and a simulated ENOSPC / EROFS everywhere.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import http.server
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import ROOT, paperline

pytestmark = pytest.mark.integration


def cli(*args: str, cwd: Path, env: dict | None = None) -> tuple[int, str, str]:
    """``paperline ARGS`` in-process from ``cwd``: (exit code, stdout, stderr); the environment is restored after."""
    from flows.cli import main

    saved_env, saved_cwd, saved_argv = dict(os.environ), os.getcwd(), sys.argv
    out, err = io.StringIO(), io.StringIO()
    code = 0
    try:
        os.environ.update(env or {})
        os.chdir(cwd)
        sys.argv = ["paperline", *args]
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main()
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return code, out.getvalue(), err.getvalue()


def error_line(result: tuple[int, str, str]) -> str:
    code, out, err = result
    assert code == 2, (code, out[-2000:], err[-2000:])
    assert "Traceback" not in err, err[-3000:]
    lines = err.strip().splitlines()
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0], err[-3000:]
    return errors[0]


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (hidden staging files included) with its md5."""
    return {
        str(p.relative_to(folder)): hashlib.md5(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        for p in sorted(folder.rglob("*"))
    }


# --------------------------------------------------------------------------------------- params ---

PARAMS_CASES = [
    (
        "qualitypajama",
        "grid.sizes=[1000000000000, 2000000000000]",
        "qualitypajama.grid.sizes.0: Input should be less than or equal to 1000000000",
    ),
    (
        "qualitypajama",
        "corpus.edit_rate=[-1, 5]",
        "qualitypajama.corpus.edit_rate: Value error, expected (min, max) fractions with 0 <= min <= max <= 1",
    ),
    ("qualitypajama", "corpus.edit_rate=[0.5, 0.1]", "qualitypajama.corpus.edit_rate: Value error"),
    ("qualitypajama", "grid.seeds=[-5]", "qualitypajama.grid.seeds.0: Input should be greater than or equal to 0"),
    ("qualitypajama", "seed=4294967296", "qualitypajama.seed: Input should be less than or equal to 4294967295"),
    (
        "qualitypajama",
        "training.eval_windows=1000000000",
        "qualitypajama.training.eval_windows: Input should be less than or equal to 100000",
    ),
    (
        "qualitypajama",
        "claims.projection_multiplier=inf",
        "qualitypajama.claims.projection_multiplier: Input should be a finite number",
    ),
    ("qualitypajama", "training.lr=.nan", "qualitypajama.training.lr: Input should be a finite number"),
    (
        "qualitypajama",
        "grid.budgets=[8192, 10000000000]",
        "qualitypajama.grid.budgets.1: Input should be less than or equal to 1000000000",
    ),
    (
        "ofmu",
        "model.train_steps=10000000000",
        "ofmu.model.train_steps: Input should be less than or equal to 1000000000",
    ),
    (
        "ofmu",
        "unlearn.methods.ga.options.lr=.inf",
        "ofmu.unlearn.methods.ga: Value error, options ['lr']: must be finite numbers",
    ),
    ("assomem", "data.sizes=[100000000000]", "assomem.data.sizes.0: Input should be less than or equal to 10000000"),
    ("assomem", "claims.k_accuracy=0", "assomem.claims.k_accuracy: Input should be greater than or equal to 1"),
    ("icql", "train.steps=1000000000000", "icql.train.steps: Input should be less than or equal to 1000000000"),
    ("icql", "eval.seed=-3", "icql.eval.seed: Input should be greater than or equal to 0"),
    (
        "icql",
        "data.external=[{source: minari, id: ../../../tmp/victim}]",
        "icql.data.external.0.id: Value error, '.._.._.._tmp_victim' is not a plain name",
    ),
    ("cer-god", "graphs=[{name: ../../victim, kind: sbm}]", "cer-god.graphs.0.name: String should match pattern"),
    (
        "optimistic-o2nc",
        "grid.stoch_budget=1000000000000",
        "optimistic-o2nc.grid.stoch_budget: Input should be less than or equal to 1000000000",
    ),
    (
        "optimistic-o2nc",
        "functions.synthetic_m=1000000",
        "optimistic-o2nc.functions: Value error, synthetic_m * synthetic_d",
    ),
    ("cer-god", "run.seeds=[0, 4294967296]", "cer-god.run.seeds.1: Input should be less than or equal to 4294967295"),
    (
        "neuraldb",
        "editing.ppl_windows=1000000000",
        "neuraldb.editing.ppl_windows: Input should be less than or equal to 100000",
    ),
    (
        "neuraldb",
        "data.n_subjects=100000000000",
        "neuraldb.data.n_subjects: Input should be less than or equal to 10000000",
    ),
    ("neuraldb", "editing.mom2_weight=.nan", "neuraldb.editing.mom2_weight: Input should be a finite number"),
]


@pytest.mark.parametrize(
    "paper, override, expected", PARAMS_CASES, ids=[f"{p}:{o.split('=')[0]}" for p, o, _ in PARAMS_CASES]
)
def test_out_of_bound_params_fail_before_any_work(tmp_path, paper, override, expected):
    root = _checkout(tmp_path, (ROOT / "params.yaml").read_bytes())
    before = snapshot(root)
    line = error_line(cli("run", paper, "--set", override, cwd=root, env={"PAPERLINE_ROOT": str(root)}))
    assert expected in line
    assert {k: v for k, v in snapshot(root).items() if not k.startswith(".paperline")} == before
    assert not (root / "data").exists()


def _checkout(tmp_path: Path, params: bytes | None) -> Path:
    root = tmp_path / "checkout"
    root.mkdir()
    shutil.copy(ROOT / "dvc.yaml", root / "dvc.yaml")
    if params is None:
        (root / "params.yaml").mkdir()
    else:
        (root / "params.yaml").write_bytes(params)
    return root


_RANDOM = bytes(np.random.default_rng(0).integers(0, 256, 512, dtype=np.uint8))
PARAMS_FILE_CASES = {
    "random-bytes": (_RANDOM, "params.yaml: contains NUL bytes (a binary or UTF-16 file); expected UTF-8 YAML"),
    "latin-1": (
        "profile: smoke\nqualitypajama: {seed: 0}  # caf\xe9\n".encode("latin-1"),
        "params.yaml:2: not UTF-8 text (byte 0xe9)",
    ),
    "utf-16": ("profile: smoke\n".encode("utf-16"), "params.yaml: contains NUL bytes"),
    "broken-yaml": (b"profile: smoke\nqualitypajama: {grid: [1, 2\n", "params.yaml: not valid YAML ("),
    "not-a-mapping": (b"- profile\n- smoke\n", "params.yaml: expected a mapping at the top level, got list"),
    "float-sizes": (
        b"profile: smoke\nqualitypajama:\n  grid: {sizes: [1.0e+12, 2.0e+12]}\n",
        "qualitypajama.grid.sizes.0: Input should be less than or equal to 1000000000",
    ),
    "directory": (None, "params.yaml: is a directory, expected the params YAML file"),
}


@pytest.mark.parametrize("case", list(PARAMS_FILE_CASES))
def test_corrupt_params_yaml_is_one_line_and_unchanged(tmp_path, case):
    content, expected = PARAMS_FILE_CASES[case]
    root = _checkout(tmp_path, content)
    before = snapshot(root)
    line = error_line(cli("run", "qualitypajama", cwd=root, env={"PAPERLINE_ROOT": str(root)}))
    assert expected in line
    after = snapshot(root)
    assert {k: v for k, v in after.items() if not k.startswith(".paperline")} == before
    assert not (root / "data").exists()


# --------------------------------------------------------------------------------------- curate ---

DOCS = [
    {"id": f"d{i}", "text": f"the quick brown fox number {i // 2} jumps over the lazy dog again and again"}
    for i in range(40)
]


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    return path


def _prior_outputs(tmp_path: Path, *names: str) -> dict[str, str]:
    """Outputs of an earlier run (so a failing run can be checked to leave them as they were)."""
    for name in names:
        (tmp_path / name).write_text(f'{{"id": "old-{name}", "text": "previous output"}}\n')
    return snapshot(tmp_path)


def _binary(tmp_path):
    p = tmp_path / "bin.jsonl"
    p.write_bytes(_RANDOM)
    return p


def _utf16(tmp_path):
    p = tmp_path / "u16.jsonl"
    p.write_bytes("".join(json.dumps(d) + "\n" for d in DOCS[:4]).encode("utf-16"))
    return p


def _latin1(tmp_path):
    p = tmp_path / "l1.jsonl"
    p.write_bytes(b'{"id": "a", "text": "caf\xe9 au lait"}\n')
    return p


def _dir(tmp_path):
    p = tmp_path / "indir"
    p.mkdir()
    return p


INPUT_CASES = [
    ("binary", _binary, "bin.jsonl:1: not UTF-8 text (byte 0x82 at column 2; a binary file or another encoding)"),
    ("utf-16", _utf16, "u16.jsonl: the file is UTF-16 (little-endian byte-order mark); convert it to UTF-8"),
    ("latin-1", _latin1, "l1.jsonl:1: not UTF-8 text (byte 0xe9 at column 25"),
    ("directory", _dir, "indir: is a directory, expected a file"),
]


@pytest.mark.parametrize("name, make, expected", INPUT_CASES, ids=[c[0] for c in INPUT_CASES])
@pytest.mark.parametrize("command", ["dedup", "filter"])
def test_curate_rejects_undecodable_inputs(tmp_path, name, make, expected, command):
    bad = make(tmp_path)
    before = _prior_outputs(tmp_path, "out.jsonl")
    assert expected in error_line(cli("curate", command, str(bad), "out.jsonl", cwd=tmp_path))
    assert snapshot(tmp_path) == before


# (command, extra args, expected) with prior outputs out.jsonl and side.jsonl; `OUTDIR` is a directory
OPTION_CASES = [
    (["dedup", "in.jsonl", "OUTDIR"], "OUTDIR: is a directory; give a file path for this output"),
    (["filter", "in.jsonl", "OUTDIR"], "OUTDIR: is a directory; give a file path for this output"),
    (["dedup", "in.jsonl", "out.jsonl", "--clusters", "OUTDIR"], "OUTDIR: is a directory; give a file path"),
    (["filter", "in.jsonl", "out.jsonl", "--dropped", "OUTDIR"], "OUTDIR: is a directory; give a file path"),
    (["dedup", "in.jsonl", "out.jsonl", "--clusters", "out.jsonl"], "--clusters out.jsonl: the same file as OUTPUT"),
    (["filter", "in.jsonl", "out.jsonl", "--dropped", "./out.jsonl"], "--dropped out.jsonl: the same file as OUTPUT"),
    (["dedup", "in.jsonl", "side.jsonl/out.jsonl"], "side.jsonl/out.jsonl: side.jsonl is not a folder"),
    (
        ["filter", "in.jsonl", "out.jsonl", "--rules", ","],
        "--rules ',': no rule given; choose from aesthetic, c4, gopher",
    ),
    (["filter", "in.jsonl", "out.jsonl", "--rules", " "], "--rules ' ': no rule given"),
    (["filter", "in.jsonl", "out.jsonl", "--rules", "gopher,bogus"], "filters: unknown rule 'bogus'"),
    (["filter", "in.jsonl", "out.jsonl", "--text-field", ""], "--text-field: must not be empty"),
    (["dedup", "in.jsonl", "out.jsonl", "--num-perm", "1000000000"], "num_perm: 1000000000 is above the limit of 4096"),
    (["dedup", "in.jsonl", "out.jsonl", "--shingle-size", "100000"], "shingle_size: 100000 is above the limit of 1000"),
    (["dedup", "in.jsonl", "out.jsonl", "--seed", "-1"], "seed: expected an integer in [0, 2**32), got -1"),
    (["dedup", "in.jsonl", "out.jsonl", "--seed", "4294967296"], "seed: expected an integer in [0, 2**32)"),
    (["dedup", "in.jsonl", "out.jsonl", "--threshold", "nan"], "threshold: expected a number in (0, 1], got nan"),
    (["dedup", "in.jsonl", "out.jsonl", "--threshold", "1.5"], "threshold: expected a number in (0, 1], got 1.5"),
    (["dedup", "in.jsonl", "out.jsonl", "--method", "fuzzy"], "--method 'fuzzy': choose exact or minhash"),
    (["dedup", "in.jsonl", "out.jsonl", "--text-field", "id2"], "in.jsonl:1: missing field(s) 'id2'"),
]


@pytest.mark.parametrize("args, expected", OPTION_CASES, ids=[" ".join(a[3:] or a[:3]) for a, _ in OPTION_CASES])
def test_curate_bad_paths_and_options_leave_previous_outputs(tmp_path, corpus, args, expected):
    (tmp_path / "OUTDIR").mkdir()
    before = _prior_outputs(tmp_path, "out.jsonl", "side.jsonl")
    assert expected in error_line(cli("curate", *args, cwd=tmp_path))
    assert snapshot(tmp_path) == before


def test_curate_text_that_is_not_a_string(tmp_path):
    (tmp_path / "in.jsonl").write_text('{"id": "a", "text": 12}\n')
    for command in ("dedup", "filter"):
        line = error_line(cli("curate", command, "in.jsonl", "out.jsonl", cwd=tmp_path))
        assert "document 'a': field 'text' must be a string, got int" in line
    assert not (tmp_path / "out.jsonl").exists()


class _FullFile(io.StringIO):
    """A file whose writes fail as on a full disk."""

    def write(self, _s):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("command, side", [("dedup", "--clusters"), ("filter", "--dropped")])
def test_simulated_full_disk_leaves_every_previous_output(tmp_path, corpus, monkeypatch, command, side):
    import components.io as cio

    before = _prior_outputs(tmp_path, "out.jsonl", "side.jsonl")
    real_open = open
    monkeypatch.setattr(
        cio,
        "open",
        lambda f, mode="r", *a, **k: _FullFile() if "w" in mode else real_open(f, mode, *a, **k),
        raising=False,
    )
    line = error_line(
        cli(
            "curate",
            command,
            "in.jsonl",
            "out.jsonl",
            side,
            "side.jsonl",
            "--method" if command == "dedup" else "--rules",
            "exact" if command == "dedup" else "c4",
            cwd=tmp_path,
        )
    )
    assert "cannot write (No space left on device)" in line and "out.jsonl" in line
    assert snapshot(tmp_path) == before  # no staging file left either


def test_simulated_read_only_file_system(tmp_path, corpus, monkeypatch):
    import components.io as cio

    before = _prior_outputs(tmp_path, "out.jsonl")

    def read_only(*_a, **_k):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(cio.tempfile, "mkstemp", read_only)
    line = error_line(cli("curate", "dedup", "in.jsonl", "out.jsonl", cwd=tmp_path))
    assert "out.jsonl: cannot write in" in line and "Read-only file system" in line
    assert snapshot(tmp_path) == before


@contextlib.contextmanager
def _tmpfs(folder: Path, size: str):
    """A tmpfs of ``size`` at ``folder``, or pytest.skip where this machine does not allow mounting."""
    folder.mkdir()
    if (
        not shutil.which("mount")
        or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True
        ).returncode
    ):
        pytest.skip("cannot mount a tmpfs here (the simulated ENOSPC/EROFS tests cover this)")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


@pytest.mark.parametrize("command, side", [("dedup", "--clusters"), ("filter", "--dropped")])
def test_real_full_tmpfs_leaves_every_previous_output(tmp_path, command, side):
    big = tmp_path / "big.jsonl"
    big.write_text(
        "".join(
            json.dumps({"id": str(i), "text": f"document {i} has words of its own, number {i * 7}"}) + "\n"
            for i in range(3000)
        )
    )
    with _tmpfs(tmp_path / "tiny", "64k") as tiny:
        before = _prior_outputs(tiny, "out.jsonl", "side.jsonl")
        args = ["--method", "exact"] if command == "dedup" else ["--rules", "c4"]
        line = error_line(
            cli(
                "curate",
                command,
                str(big),
                str(tiny / "out.jsonl"),
                side,
                str(tiny / "side.jsonl"),
                *args,
                cwd=tmp_path,
            )
        )
        assert "cannot write (No space left on device)" in line
        assert snapshot(tiny) == before


def test_real_read_only_mount_leaves_previous_output(tmp_path, corpus):
    with _tmpfs(tmp_path / "ro", "64k") as ro:
        before = _prior_outputs(ro, "out.jsonl")
        if subprocess.run(["mount", "-o", "remount,ro", str(ro)], capture_output=True).returncode:
            pytest.skip("cannot remount read-only here")
        line = error_line(cli("curate", "dedup", str(corpus), str(ro / "out.jsonl"), cwd=tmp_path))
        assert "out.jsonl: cannot write in" in line and "Read-only file system" in line
        assert snapshot(ro) == before


def test_curate_success_writes_every_output_and_no_staging_file(tmp_path, corpus):
    code, out, err = cli(
        "curate", "dedup", "in.jsonl", "out.jsonl", "--clusters", "c.json", "--method", "exact", cwd=tmp_path
    )
    assert code == 0, err
    assert json.loads(out)["n_kept"] == 20
    assert json.loads((tmp_path / "c.json").read_text())["stats"]["n_clusters"] == 20
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json", "in.jsonl", "out.jsonl"]


# ---------------------------------------------------------------------------------- scaling-fit ---


def _law_csv(path: Path, loss=None, n_values=None) -> Path:
    n = np.repeat(np.geomspace(1e7, 1e9, 4), 3) if n_values is None else np.asarray(n_values, dtype=float)
    d = np.tile(np.geomspace(1e9, 1e11, 3), 4)[: n.size]
    law = 1.7 + 400 / n**0.34 + 1500 / d**0.3
    loss = law if loss is None else np.broadcast_to(loss, n.shape)
    path.write_text("N,D,L\n" + "".join(f"{a},{b},{c}\n" for a, b, c in zip(n, d, loss)))
    return path


FIT = ["--n-column", "N", "--d-column", "D", "--loss-column", "L", "--json"]


def test_scaling_fit_constant_loss_is_degenerate_unless_allowed(tmp_path):
    csv = _law_csv(tmp_path / "const.csv", loss=3.0)
    line = error_line(cli("scaling-fit", str(csv), *FIT, cwd=tmp_path))
    assert "const.csv: degenerate fit: the loss is constant (3)" in line and "--allow-degenerate" in line
    code, out, err = cli("scaling-fit", str(csv), *FIT, "--allow-degenerate", cwd=tmp_path)
    assert code == 0, err
    assert any("loss is constant" in r for r in json.loads(out)["degenerate"])
    assert "warning: degenerate fit" in err


def test_scaling_fit_one_distinct_n_is_degenerate(tmp_path):
    csv = _law_csv(tmp_path / "one_n.csv", n_values=[1e8] * 12)
    assert "only 1 distinct N: its exponent is not identified" in error_line(
        cli("scaling-fit", str(csv), *FIT, cwd=tmp_path)
    )


def test_scaling_fit_a_real_law_is_not_flagged(tmp_path):
    code, out, err = cli("scaling-fit", str(_law_csv(tmp_path / "law.csv")), *FIT, cwd=tmp_path)
    assert code == 0, err
    assert "degenerate" not in json.loads(out)


def _rows200(tmp_path, n):
    d = np.tile(np.geomspace(1e9, 1e11, 10), 20)
    path = tmp_path / "t200.csv"
    path.write_text("N,D,L\n" + "".join(f"{a},{b},{1.7 + 400 / a**0.34 + 1500 / b**0.3}\n" for a, b in zip(n, d)))
    return path


SCALING_CASES = [
    (["--bootstrap", "1000000000"], "law", "--bootstrap: 1000000000 resamples is above the limit of 1,000,000"),
    (["--bootstrap", "600000"], "rows200", "--bootstrap: 600000 resamples of 200 rows is 120,000,000 cells"),
    (["--seed", "-1", "--bootstrap", "10"], "law", "--seed: must be in [0, 2**32), got -1"),
    (["--seed", "4294967296", "--bootstrap", "10"], "law", "--seed: must be in [0, 2**32)"),
    (["--bootstrap", "-5"], "law", "--bootstrap and --exclude-top-loss must be >= 0"),
    (["--exclude-top-loss", "10"], "law", "12 rows minus 10 excluded leaves fewer than 6"),
]


@pytest.mark.parametrize("extra, table, expected", SCALING_CASES, ids=[" ".join(c[0]) for c in SCALING_CASES])
def test_scaling_fit_bounds(tmp_path, extra, table, expected):
    csv = (
        _law_csv(tmp_path / "law.csv")
        if table == "law"
        else _rows200(tmp_path, np.repeat(np.geomspace(1e7, 1e9, 20), 10))
    )
    assert expected in error_line(cli("scaling-fit", str(csv), *FIT, *extra, cwd=tmp_path))


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda p: p.write_bytes("N,D,L\n1,2,3\n".encode("utf-16")), "not a readable CSV"),
        (lambda p: p.write_bytes(_RANDOM), "t.csv"),
        (lambda p: p.mkdir(), "t.csv: is a directory, expected a file"),
    ],
    ids=["utf-16", "binary", "directory"],
)
def test_scaling_fit_unreadable_tables(tmp_path, make, expected):
    make(tmp_path / "t.csv")
    assert expected in error_line(cli("scaling-fit", str(tmp_path / "t.csv"), *FIT, cwd=tmp_path))


# ------------------------------------------------------------------------------ server, checkout ---


@contextlib.contextmanager
def _other_program_on_a_port():
    """An HTTP server that is not Prefect (every path answers 404) on a free loopback port."""

    class NotPrefect(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_error(404)

        def log_message(self, *_a):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), NotPrefect)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_prefect_api_url_on_a_port_taken_by_another_program(tmp_path):
    with _other_program_on_a_port() as port:
        url = f"http://127.0.0.1:{port}/api"
        line = error_line(cli("run", "qualitypajama", "--profile", "smoke", cwd=ROOT, env={"PREFECT_API_URL": url}))
    assert f"PREFECT_API_URL={url}: no Prefect server answers" in line


def test_server_start_on_a_taken_port(tmp_path):
    from components.errors import PaperlineError
    from flows.runtime import prefect_server
    from flows.runtime.settings import Paths

    paths = Paths(tmp_path)
    paths.state.mkdir()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(PaperlineError, match=f"port {port} on 127.0.0.1 is already taken"):
            prefect_server.start(paths, port=port)
    assert not (paths.state / "prefect-server.json").exists()


@pytest.mark.parametrize("args", [["stage", "qualitypajama", "curate"], ["run", "qualitypajama"], ["list"]])
def test_commands_outside_a_checkout_create_nothing(tmp_path, args):
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    line = error_line(cli(*args, cwd=folder))
    assert "not inside a paperline checkout" in line
    assert list(folder.iterdir()) == []


def test_entry_point_prints_one_error_line(tmp_path):
    """The real console script, once: the in-process cases above go through the same ``main``."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    proc = paperline("stage", "qualitypajama", "curate", cwd=folder, env={"PAPERLINE_ROOT": ""}, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert (
        proc.stderr.strip().splitlines()[-1].startswith("error: ") and "not inside a paperline checkout" in proc.stderr
    )
    assert list(folder.iterdir()) == []
