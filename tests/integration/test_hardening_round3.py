"""Hardening, round 3 (issue 55, the stage-input half): a bad environment or a corrupt stage input is one line.

Through the real entry point, on one AssoMem smoke run shared by the module: environment variables and project
folders that cannot work (checked before any work), and corrupt, truncated, empty, pickled or wrong-shape files
planted where a stage reads another stage's output, and memories with impossible values. Each must exit 2 with one
``error:`` line under 300 characters naming the variable or file; nothing in the checkout is lost and nothing
outside it changes. The other pipelines' array readers go through the same guarded reader
(``components/inputs.py``); their cases call the stage loaders in-process on planted files.

Every case's assertion message starts with its outcome (clean / traceback / accepted / lost / other), so a run
against older code counts them.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from components.errors import PaperlineError
from flows.runtime.workspace import set_profile
from tests.conftest import copy_project, paperline

pytestmark = [pytest.mark.slow, pytest.mark.integration]

EMB = "data/assomem/embeddings/seed0.npz"
META = "data/assomem/embeddings/meta.json"
GRAPH = "data/assomem/graphs/seed0-n300.npz"
ADJ = "data/assomem/graphs/seed0-n300.adj.npz"
UTTS = "data/assomem/memories/seed0/utterances.jsonl"
QS = "data/assomem/memories/seed0/questions.jsonl"
UNITS = "data/assomem/memories/units.json"


# ---- the shared run and the case runner ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def smoke(tmp_path_factory, prefect_api, shared_cache) -> tuple[Path, Path]:
    """(checkout with one AssoMem smoke run, a file outside it that no case may change)."""
    base = tmp_path_factory.mktemp("round3")
    root = copy_project(base / "proj")
    set_profile(root, "smoke")
    proc = paperline("run", "assomem", "--no-track", cwd=root, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    outside = base / "outside.txt"
    outside.write_text("outside\n")
    return root, outside


def _digest(root: Path) -> dict[str, str]:
    out = {}
    for folder in ("data", "reports"):
        for p in sorted((root / folder).rglob("*")):
            if p.is_file() and not p.is_symlink():
                out[str(p.relative_to(root))] = hashlib.md5(p.read_bytes()).hexdigest()
    out["params.yaml"] = hashlib.md5((root / "params.yaml").read_bytes()).hexdigest()
    return out


def outcome(proc: subprocess.CompletedProcess, names: tuple[str, ...], lost: list[str]) -> tuple[str, str]:
    """(clean | traceback | accepted | lost | other, the evidence)."""
    out = proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    last = lines[-1] if lines else ""
    if lost:
        return "lost", f"{lost[:3]}"
    if "Traceback" in out:
        return "traceback", out[-1500:]
    if proc.returncode == 0:
        return "accepted", out[-800:]
    ok = proc.returncode == 2 and last.startswith("error: ") and len(last) < 300 and all(n in last for n in names)
    return ("clean" if ok else "other"), f"rc={proc.returncode} {last[:400]}"


def run_case(
    smoke: tuple[Path, Path],
    plant: Callable[[Path], None],
    command: tuple[str, ...],
    names: tuple[str, ...],
    touched: tuple[str, ...] = (),
    env: dict | None = None,
    restore: Callable[[Path], None] | None = None,
) -> None:
    """Plant a fault, run ``paperline *command``, restore the files in ``touched``, assert the outcome is clean."""
    root, outside = smoke
    saved = {rel: (root / rel).read_bytes() for rel in touched}
    before = _digest(root)
    try:
        plant(root)
        proc = paperline(*command, cwd=root, env=env, timeout=300)
    finally:
        if restore is not None:
            restore(root)
        for rel, data in saved.items():
            target = root / rel
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            elif target.exists() or target.is_symlink():
                target.unlink()
            target.write_bytes(data)
    after = _digest(root)
    lost = [rel for rel, h in before.items() if rel not in touched and after.get(rel) != h]
    kind, evidence = outcome(proc, names, lost)
    assert outside.read_text() == "outside\n", "outside file changed"
    assert kind == "clean", f"{kind}: {evidence}"


# ---- environment (checked before any work) -------------------------------------------------------------------

REPORT = ("stage", "assomem", "report", "--force")

ENV_CASES = {
    "prefect-notaurl": ({"PREFECT_API_URL": "notaurl"}, "PREFECT_API_URL"),
    "prefect-ftp": ({"PREFECT_API_URL": "ftp://127.0.0.1/api"}, "PREFECT_API_URL"),
    "prefect-no-host": ({"PREFECT_API_URL": "http://"}, "PREFECT_API_URL"),
    "mlflow-bogus-scheme": ({"MLFLOW_TRACKING_URI": "bogus://x"}, "MLFLOW_TRACKING_URI"),
    "mlflow-sqlite-proc": ({"MLFLOW_TRACKING_URI": "sqlite:////proc/x.db"}, "MLFLOW_TRACKING_URI"),
    "mlflow-http-no-host": ({"MLFLOW_TRACKING_URI": "http://"}, "MLFLOW_TRACKING_URI"),
    "mlflow-registry-bogus": ({"MLFLOW_REGISTRY_URI": "bogus://x"}, "MLFLOW_REGISTRY_URI"),
}


@pytest.mark.parametrize("case", list(ENV_CASES))
def test_bad_environment_is_one_line(smoke, case):
    env, name = ENV_CASES[case]
    run_case(smoke, lambda root: None, REPORT, (name,), env=env)


def test_mlflow_sqlite_in_a_read_only_folder(smoke, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        env = {"MLFLOW_TRACKING_URI": f"sqlite:///{ro}/mlflow.db"}
        run_case(smoke, lambda root: None, REPORT, ("MLFLOW_TRACKING_URI",), env=env)
    finally:
        ro.chmod(0o755)
    assert not (ro / "mlflow.db").exists()


def test_mlflow_sqlite_in_a_missing_folder_creates_nothing(smoke, tmp_path):
    # the old code made the folder and an empty database outside the checkout before failing
    env = {"MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path / 'missing' / 'x.db'}"}
    run_case(smoke, lambda root: None, REPORT, ("MLFLOW_TRACKING_URI",), env=env)
    assert not (tmp_path / "missing").exists(), "created outside the checkout"


def test_mlflow_sqlite_path_is_a_folder(smoke, tmp_path):
    (tmp_path / "db").mkdir()
    run_case(
        smoke,
        lambda root: None,
        REPORT,
        ("MLFLOW_TRACKING_URI",),
        env={"MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path / 'db'}"},
    )


def test_state_folder_that_is_a_file(smoke):
    root = smoke[0]
    aside = root.parent / "state-aside"

    def plant(r: Path) -> None:
        os.replace(r / ".paperline", aside)
        (r / ".paperline").write_text("not a folder\n")

    def restore(r: Path) -> None:
        (r / ".paperline").unlink()
        os.replace(aside, r / ".paperline")

    run_case(smoke, plant, REPORT, (".paperline",), restore=restore)


@pytest.mark.parametrize("folder", ["data", "reports"])
def test_read_only_project_folder(smoke, folder):
    run_case(
        smoke,
        lambda r: (r / folder).chmod(0o555),
        REPORT,
        (folder, "read-only"),
        restore=lambda r: (r / folder).chmod(0o755),
    )


# ---- corrupt stage inputs (AssoMem, through `paperline stage`) -----------------------------------------------


def _npz_bytes(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _arrays(root: Path, rel: str) -> dict:
    with np.load(root / rel, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def _rewrite(rel: str, change: Callable[[dict], dict]) -> Callable[[Path], None]:
    def plant(root: Path) -> None:
        (root / rel).write_bytes(_npz_bytes(**change(_arrays(root, rel))))

    return plant


def _bytes(rel: str, make: Callable[[bytes], bytes]) -> Callable[[Path], None]:
    def plant(root: Path) -> None:
        (root / rel).write_bytes(make((root / rel).read_bytes()))

    return plant


def _pickled(root: Path, rel: str) -> None:
    buf = io.BytesIO()
    np.savez(buf, utterances=np.array([{"a": 1}, None], dtype=object), questions=np.zeros(2), phrases=np.zeros(2))
    (root / rel).write_bytes(buf.getvalue())


def _nan_row(a: dict) -> dict:
    a["utterances"] = a["utterances"].copy()
    a["utterances"][3] = np.nan
    return a


def _inf_value(a: dict) -> dict:
    a["questions"] = a["questions"].copy()
    a["questions"][0, 0] = np.inf
    return a


def _jsonl(rel: str, change: Callable[[list[dict]], list[dict]]) -> Callable[[Path], None]:
    def plant(root: Path) -> None:
        rows = [json.loads(x) for x in (root / rel).read_text().splitlines() if x.strip()]
        (root / rel).write_text("".join(json.dumps(r) + "\n" for r in change(rows)))

    return plant


def _set_first(field: str, value) -> Callable[[list[dict]], list[dict]]:
    def change(rows: list[dict]) -> list[dict]:
        rows[0][field] = value
        return rows

    return change


def _dup_first(rows: list[dict]) -> list[dict]:
    return [*rows, dict(rows[0])]


def _dir_in_place(rel: str) -> Callable[[Path], None]:
    def plant(root: Path) -> None:
        (root / rel).unlink()
        (root / rel).mkdir()
        (root / rel / "x").write_text("x")

    return plant


GRAPH_STAGE = ("stage", "assomem", "graph", "--force")
RETRIEVE_STAGE = ("stage", "assomem", "retrieve", "--force")

STAGE_CASES: dict[str, tuple[Callable[[Path], None], tuple[str, ...], str]] = {
    # the embed stage's arrays, read by graph (and retrieve)
    "emb-truncated": (_bytes(EMB, lambda b: b[: len(b) // 3]), GRAPH_STAGE, EMB),
    "emb-empty": (_bytes(EMB, lambda b: b""), GRAPH_STAGE, EMB),
    "emb-garbage": (_bytes(EMB, lambda b: os.urandom(4096)), GRAPH_STAGE, EMB),
    "emb-pickled-object-array": (lambda r: _pickled(r, EMB), GRAPH_STAGE, EMB),
    "emb-cut-to-7-columns": (_rewrite(EMB, lambda a: {**a, "utterances": a["utterances"][:, :7]}), GRAPH_STAGE, EMB),
    "emb-all-cut-to-1-column": (_rewrite(EMB, lambda a: {k: v[:, :1] for k, v in a.items()}), GRAPH_STAGE, EMB),
    "emb-rows-missing": (_rewrite(EMB, lambda a: {**a, "utterances": a["utterances"][:-5]}), GRAPH_STAGE, EMB),
    "emb-questions-rows-missing": (
        _rewrite(EMB, lambda a: {**a, "questions": a["questions"][:3]}),
        RETRIEVE_STAGE,
        EMB,
    ),
    "emb-nan-row": (_rewrite(EMB, _nan_row), GRAPH_STAGE, EMB),
    "emb-inf-value": (_rewrite(EMB, _inf_value), RETRIEVE_STAGE, EMB),
    "emb-key-missing": (_rewrite(EMB, lambda a: {k: v for k, v in a.items() if k != "phrases"}), GRAPH_STAGE, EMB),
    "emb-1d": (_rewrite(EMB, lambda a: {**a, "utterances": a["utterances"][:, 0]}), GRAPH_STAGE, EMB),
    "emb-strings": (_rewrite(EMB, lambda a: {**a, "phrases": np.array(["a", "b"])}), GRAPH_STAGE, EMB),
    "emb-a-directory": (_dir_in_place(EMB), GRAPH_STAGE, EMB),
    "emb-a-single-npy": (
        lambda r: np.save(open(r / EMB, "wb"), np.zeros((3, 3))),  # noqa: SIM115
        GRAPH_STAGE,
        EMB,
    ),
    "emb-zip-without-arrays": (
        lambda r: zipfile.ZipFile(r / EMB, "w").close(),
        GRAPH_STAGE,
        EMB,
    ),
    # the graph stage's arrays, read by retrieve
    "graph-truncated": (_bytes(GRAPH, lambda b: b[: len(b) // 2]), RETRIEVE_STAGE, GRAPH),
    "graph-empty": (_bytes(GRAPH, lambda b: b""), RETRIEVE_STAGE, GRAPH),
    "graph-phrase-index-out-of-range": (
        _rewrite(GRAPH, lambda a: {**a, "clue_phrase": a["clue_phrase"] + 10_000}),
        RETRIEVE_STAGE,
        GRAPH,
    ),
    "graph-utt-clue-short": (_rewrite(GRAPH, lambda a: {**a, "utt_clue": a["utt_clue"][:4]}), RETRIEVE_STAGE, GRAPH),
    "graph-key-missing": (_rewrite(GRAPH, lambda a: {"utt_index": a["utt_index"]}), RETRIEVE_STAGE, GRAPH),
    "graph-float-indices": (
        _rewrite(GRAPH, lambda a: {**a, "clue_phrase": a["clue_phrase"] + 0.5}),
        RETRIEVE_STAGE,
        GRAPH,
    ),
    "adj-truncated": (_bytes(ADJ, lambda b: b[: len(b) // 2]), RETRIEVE_STAGE, ADJ),
    "adj-garbage": (_bytes(ADJ, lambda b: b"PK\x03\x04" + os.urandom(512)), RETRIEVE_STAGE, ADJ),
    # the generate stage's memories, read by graph and retrieve
    "questions-query-time-impossible": (_jsonl(QS, _set_first("query_time", -1e9)), GRAPH_STAGE, "seed0"),
    "questions-query-time-text": (_jsonl(QS, _set_first("query_time", "soon")), GRAPH_STAGE, "seed0"),
    "questions-gold-missing": (_jsonl(QS, _set_first("gold", ["no-such-utterance"])), GRAPH_STAGE, "seed0"),
    "questions-gold-empty": (_jsonl(QS, _set_first("gold", [])), GRAPH_STAGE, "seed0"),
    "questions-gold-not-a-list": (_jsonl(QS, _set_first("gold", 7)), GRAPH_STAGE, "seed0"),
    "questions-duplicate-ids": (_jsonl(QS, _dup_first), GRAPH_STAGE, "seed0"),
    "questions-field-missing": (
        _jsonl(QS, lambda rows: [{k: v for k, v in rows[0].items() if k != "gold"}, *rows[1:]]),
        GRAPH_STAGE,
        QS,
    ),
    "questions-truncated-line": (_bytes(QS, lambda b: b[: len(b) - 40]), GRAPH_STAGE, QS),
    "questions-utf16": (_bytes(QS, lambda b: b.decode().encode("utf-16")), GRAPH_STAGE, QS),
    "utterances-empty-text": (_jsonl(UTTS, _set_first("text", "   ")), GRAPH_STAGE, "seed0"),
    "utterances-nan-timestamp": (_jsonl(UTTS, _set_first("timestamp", "NaN")), GRAPH_STAGE, "seed0"),
    "utterances-duplicate-ids": (_jsonl(UTTS, _dup_first), GRAPH_STAGE, "seed0"),
    "utterances-binary": (_bytes(UTTS, lambda b: os.urandom(2048)), GRAPH_STAGE, UTTS),
    "units-not-json": (_bytes(UNITS, lambda b: b[: len(b) // 2]), GRAPH_STAGE, UNITS),
    "meta-not-json": (_bytes(META, lambda b: b"{"), GRAPH_STAGE, META),
}
TOUCHED = {
    "emb": (EMB,),
    "graph": (GRAPH,),
    "adj": (ADJ,),
    "questions": (QS,),
    "utterances": (UTTS,),
    "units": (UNITS,),
    "meta": (META,),
}


@pytest.mark.parametrize("case", list(STAGE_CASES))
def test_corrupt_stage_input_is_one_line(smoke, case):
    plant, command, name = STAGE_CASES[case]
    touched = TOUCHED[case.split("-", 1)[0]]
    run_case(smoke, plant, command, (name,), touched=touched)


# ---- the other pipelines' array readers, in-process, on planted files ----------------------------------------


def _good_npz(path: Path, **arrays) -> Path:
    np.savez(path, **arrays)
    return path


def _corrupt(path: Path, how: str) -> None:
    if how == "truncated":
        path.write_bytes(path.read_bytes()[: max(1, path.stat().st_size // 2)])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "garbage":
        path.write_bytes(os.urandom(1024))
    elif how == "pickled":
        if path.suffix == ".npy":
            np.save(path, np.array([{"x": 1}], dtype=object), allow_pickle=True)
        else:
            buf = io.BytesIO()
            np.savez(buf, **{k: np.array([{"x": 1}], dtype=object) for k in ("x", "images", "reward", "name")})
            path.write_bytes(buf.getvalue())
    elif how == "directory":
        path.unlink()
        path.mkdir()


def _transitions(tmp: Path) -> tuple[Path, Callable[[], object]]:
    from components.rl import dataset

    # a valid table: one row per transition, 2-D observations (the reader checks shapes and finiteness too)
    two_d = {"observations", "next_observations", "actions", "next_actions"}
    arrays = {f: np.zeros((4, 2) if f in two_d else 4) for f in dataset.FIELDS}
    path = _good_npz(tmp / "transitions.npz", **arrays)
    return path, lambda: dataset.load(path)


def _graph(tmp: Path) -> tuple[Path, Callable[[], object]]:
    from components.graph.graph import Graph

    path = _good_npz(
        tmp / "g.npz",
        name=np.array("g"),
        x=np.zeros((3, 2)),
        edge_index=np.zeros((2, 2), np.int64),
        kind=np.zeros(3, np.int64),
    )
    return path, lambda: Graph.load(path)


def _graph_source(tmp: Path) -> tuple[Path, Callable[[], object]]:
    from components.graph.sources import _read_tensors

    path = _good_npz(tmp / "src.npz", x=np.zeros((3, 2)))
    return path, lambda: _read_tensors(path)


def _medmnist(tmp: Path) -> tuple[Path, Callable[[], object]]:
    from components.dka.sources import load_medmnist

    arrays = {f"{s}_{k}": np.zeros((2, 4, 4), np.uint8) for s in ("train", "val", "test") for k in ("images",)}
    arrays |= {f"{s}_labels": np.zeros((2, 1), np.uint8) for s in ("train", "val", "test")}
    path = _good_npz(tmp / "medmnist.npz", **arrays)
    return path, lambda: load_medmnist(str(path))


def _forest_set(tmp: Path) -> tuple[Path, Callable[[], object]]:
    from flows.forestpersons.common import load_set

    path = _good_npz(tmp / "val.npz", images=np.zeros((2, 8, 8, 3), np.uint8))
    (tmp / "val.json").write_text(json.dumps({"images": [{"id": 0}, {"id": 1}], "annotations": []}))
    return path, lambda: load_set(tmp, "val")


def _icql_context(tmp: Path) -> tuple[Path, Callable[[], object]]:
    from flows.icql.common import context_for

    path = tmp / "ctx_nearest.npy"
    np.save(path, np.zeros((3, 4), np.int64))
    return path, lambda: context_for("icql", tmp)


def _token_file(tmp: Path) -> tuple[Path, Callable[[], object]]:
    from components.inputs import load_npy

    path = tmp / "tokens.npy"  # ebt, neuraldb and qualitypajama token windows
    np.save(path, np.arange(64, dtype=np.uint16))
    return path, lambda: load_npy(path, mmap_mode="r")


READERS = {
    "daze-icql-transitions": _transitions,
    "cergod-graph": _graph,
    "cergod-graph-source": _graph_source,
    "dka-medmnist": _medmnist,
    "forestpersons-set": _forest_set,
    "icql-context": _icql_context,
    "tokens-npy": _token_file,
}
HOW = ["truncated", "empty", "garbage", "pickled", "directory"]


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("reader", list(READERS))
def test_corrupt_array_file_is_a_data_error(tmp_path, reader, how):
    path, load = READERS[reader](tmp_path)
    load()  # the good file reads
    _corrupt(path, how)
    try:
        load()
    except PaperlineError as exc:
        text = str(exc)
        ok = str(path) in text and "\n" not in text and len(text) < 280
        assert ok, f"other: {text[:400]}"
        return
    except Exception as exc:  # what the old code raised: a traceback at the CLI
        pytest.fail(f"traceback: {type(exc).__name__}: {str(exc)[:300]}")
    pytest.fail("accepted: the corrupt file was read")
