"""Nothing in the package loads code from stored artifacts: a grep over components/, flows/ and scripts/.

Python files are scanned as code: comments and docstrings are dropped (they may say "never
pickle"), string literals are kept (``import_module("pickle")`` counts). Other files are scanned
line by line, comment lines dropped. Each allowed hit is listed with its reason.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import ROOT

SCANNED = ("components", "flows", "scripts")
SUFFIXES = {".py", ".sh", ".txt", ".toml", ".yaml", ".yml", ".cfg", ".json"}
PATTERNS = {
    "pickle module": re.compile(r"\b(cloud)?pickle\b|\bdill\b|\bjoblib\.load\b|\bshelve\b|\bmarshal\.loads?\b"),
    "torch.load(weights_only=False)": re.compile(r"weights_only\s*=\s*False"),
    "np.load(allow_pickle=True)": re.compile(r"allow_pickle\s*=\s*True"),
    "yaml.load (use yaml.safe_load)": re.compile(r"\byaml\s*\.\s*(load|unsafe_load|full_load|load_all)\s*\("),
    "pandas.read_pickle": re.compile(r"\bread_pickle\b|\bto_pickle\b"),
}
# (path, pattern name) -> why this hit is not code loaded from an artifact.
ALLOWED = {
    (
        "scripts/constraints.txt",
        "pickle module",
    ): "pins cloudpickle, a dependency of Prefect, MLflow and Dask; pinning a version loads nothing",
}


def _code_text(path: Path) -> str:
    """A Python file's code with comments and docstrings (string statements) blanked out."""
    out, prev = [], tokenize.NEWLINE
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
    for tok in tokens:
        docstring = tok.type == tokenize.STRING and prev in (
            tokenize.NEWLINE,
            tokenize.INDENT,
            tokenize.DEDENT,
            tokenize.NL,
        )
        if tok.type not in (tokenize.COMMENT, tokenize.NL) and not docstring:
            out.append(tok.string)
        if tok.type not in (tokenize.COMMENT, tokenize.NL):
            prev = tok.type
    return " ".join(out)


def _text(path: Path) -> str:
    if path.suffix == ".py":
        return _code_text(path)
    return "\n".join(
        line for line in path.read_text(errors="replace").splitlines() if not line.lstrip().startswith("#")
    )


def _files():
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*")):
            if path.is_file() and path.suffix in SUFFIXES and "__pycache__" not in path.parts:
                yield path


def _hits() -> set[tuple[str, str]]:
    found = set()
    for path in _files():
        text = _text(path)
        for name, pattern in PATTERNS.items():
            if pattern.search(text):
                found.add((path.relative_to(ROOT).as_posix(), name))
    return found


def test_no_code_loading_from_artifacts_outside_the_allow_list():
    unexpected = sorted(_hits() - set(ALLOWED))
    assert not unexpected, (
        "code from stored artifacts (add a safe format, or an ALLOWED entry with its reason): "
        + "; ".join(f"{p}: {n}" for p, n in unexpected)
    )


def test_every_allow_list_entry_still_matches_and_has_a_reason():
    stale = sorted(set(ALLOWED) - _hits())
    assert not stale, f"allow-list entries that no longer match anything (remove them): {stale}"
    assert all(len(reason) > 20 for reason in ALLOWED.values())


def _call_args(text: str, start: int) -> str:
    """The argument text of a call whose opening parenthesis ends at ``start`` (balanced parentheses)."""
    depth = 1
    for i in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return text[start:i]
    return text[start:]


def test_every_torch_load_says_weights_only_true():
    for path in _files():
        if path.suffix == ".py":
            for call in re.finditer(r"torch\s*\.\s*load\s*\(", text := _code_text(path)):
                args = _call_args(text, call.end())
                assert re.search(r"weights_only\s*=\s*True", args), (
                    f"{path.relative_to(ROOT)}: torch.load without weights_only=True"
                )


def test_the_scan_sees_code_but_not_comments_or_docstrings(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('"""We never pickle."""\nimport json  # not pickle\nx = __import__("pickle")\n')
    text = _code_text(bad)
    assert "never" not in text and "not pickle" not in text and PATTERNS["pickle module"].search(text)


class PickledGraph:
    """Stands in for a pickled PyG ``Data`` object: loading it would run the pickle machinery."""

    def __init__(self, x, edge_index, y):
        self.x, self.edge_index, self.y = x, edge_index, y


def test_graph_files_load_from_npz_and_a_pickled_object_is_refused(tmp_path):
    torch = pytest.importorskip("torch")
    from components.errors import DataError
    from components.graph.sources import load_pyg_file, save_graph_npz

    x, ei, y = np.eye(3, dtype=np.float32), np.array([[0, 1, 2], [1, 2, 0]]), np.array([0, 1, 2])
    g = load_pyg_file(save_graph_npz(tmp_path / "g.npz", x, ei, y))
    assert g.n == 3 and g.name == "g"

    torch.save(PickledGraph(torch.tensor(x), torch.tensor(ei), torch.tensor(y)), tmp_path / "data.pt")
    with pytest.raises(DataError, match="data.pt: not a readable torch file.*save_graph_npz"):
        load_pyg_file(tmp_path / "data.pt")


def test_a_loader_outside_the_allow_list_is_refused():
    pytest.importorskip("mlflow")
    from components.errors import ParamsError
    from flows.runtime.mlflow_model import resolve_loader

    assert resolve_loader("components.models.tiny_lm:load_model").__name__ == "load_model"
    with pytest.raises(ParamsError, match="model loader 'os:system'"):
        resolve_loader("os:system")


def test_grid_task_results_are_persisted_as_json_not_pickle():
    pytest.importorskip("prefect")
    from flows.runtime.grid import _task

    serializer = _task("qualitypajama grid").result_serializer
    assert serializer.type == "json" and serializer.object_decoder is None
    with pytest.raises(TypeError):
        serializer.dumps({"model": object()})  # not plain JSON: fails at write time
