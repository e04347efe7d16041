"""The test tree mirrors the code, and this file keeps it that way.

- ``tests/unit/<X>/...`` tests ``components/<X>/...``. Every folder names a components package, and every
  folder below it names a subpackage (``tests/unit/data/corpus/`` is for ``components/data/corpus/``). A file
  directly in ``tests/unit/`` tests a top-level module (``tests/unit/test_io.py`` is for
  ``components/io.py``). A test file goes in the folder of the package it tests: the subpackage when it
  tests one, the parent when it spans several (``tests/unit/data/test_qualitypajama_known_answer.py``). A
  unit test imports no ``flows`` module at module level. Pipeline and runtime tests go under ``tests/flows/``.
- ``tests/flows/<P>/`` tests ``flows/<P>/``: a pipeline's claims, params, stages and smoke run, plus
  ``flows/runtime`` and ``flows/recurring``. Files directly in ``tests/flows/`` test the modules directly in
  ``flows/`` (cli, deployments, registry, dvcgen) and the repo-wide rules (conformance and layering, no
  pickle, README verdicts, this layout).
- ``tests/infra/`` tests ``infra/`` and the stack scripts in ``scripts/services/`` (compose, the stack's
  secrets, the DVC plots template).
- ``tests/integration/`` runs the real entry points across pipelines (CLI, ``dvc repro``, faults, locks, bad
  input, fan-out, the native stack) and the ``benchmarks/`` scripts that time them. A pipeline's own smoke run
  goes in ``tests/flows/<pipeline>/``.
- ``tests/fixtures/`` holds data files only.

Test folders have no ``__init__.py``, so pytest (rootdir import mode "prepend") needs every test file's
basename to be unique across ``tests/``. That is checked here too.
"""

from __future__ import annotations

import ast
import warnings
from collections import defaultdict
from pathlib import Path

from tests.conftest import ROOT

TOP_LEVEL = {"unit", "flows", "infra", "integration", "fixtures"}

# Pipeline tests that are still in the wrong place while other changes move them. Each key is the old path
# (it is let through only at that path) and each value is where the file goes. TEMPORARY: the lead empties this
# list once the moves have landed. Do not add entries; move the file instead. An entry whose file is no longer at
# the old path gives a warning asking for the entry to be removed.
PENDING_MOVES: dict[str, str] = {}  # every planned move is done; a file put back at an old path fails


def _has_files(folder: Path) -> bool:
    """Whether a folder holds a file outside ``__pycache__``. A folder left with only caches is not in git."""
    return any(p.is_file() and "__pycache__" not in p.parts for p in folder.rglob("*"))


def _folders(base: Path) -> list[Path]:
    return sorted(
        p
        for p in base.rglob("*")
        if p.is_dir()
        and "__pycache__" not in p.relative_to(base).parts
        and not any(part.startswith(".") for part in p.relative_to(base).parts)
        and _has_files(p)
    )


def _is_package(folder: Path) -> bool:
    return (folder / "__init__.py").is_file()


def _imports_flows_at_module_level(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in tree.body:
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "flows" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "flows":
            return True
    return False


def layout_problems(root: Path, pending: dict[str, str] | None = None) -> list[str]:
    """One line per file or folder of ``root/tests`` that does not mirror the code (see the module doc)."""
    pending = PENDING_MOVES if pending is None else pending
    tests, problems = root / "tests", []

    def rel(p: Path) -> str:
        return p.relative_to(root).as_posix()

    for top in sorted(
        p
        for p in tests.iterdir()
        if p.is_dir() and p.name != "__pycache__" and not p.name.startswith(".") and _has_files(p)
    ):
        if top.name not in TOP_LEVEL:
            problems.append(f"{rel(top)}/: not a known test folder ({', '.join(sorted(TOP_LEVEL))})")

    unit = tests / "unit"
    if unit.is_dir():
        for folder in _folders(unit):
            code = root / "components" / folder.relative_to(unit)
            if not _is_package(code):
                problems.append(f"{rel(folder)}/: no package {rel(code)}/ (tests/unit/ mirrors components/)")
        for f in sorted(unit.glob("*.py")):
            if f.name in ("conftest.py", "__init__.py"):
                continue
            module = f.name.removeprefix("test_")
            if not f.name.startswith("test_") or not (root / "components" / module).is_file():
                problems.append(
                    f"{rel(f)}: a file directly in tests/unit/ tests components/<module>.py "
                    f"(test_<module>.py); no components/{module}"
                )
        for f in sorted(unit.rglob("*.py")):
            if "__pycache__" not in f.parts and rel(f) not in pending and _imports_flows_at_module_level(f):
                problems.append(
                    f"{rel(f)}: imports flows at module level; a pipeline's or the runtime's tests "
                    "belong under tests/flows/"
                )

    flows = tests / "flows"
    if flows.is_dir():
        for folder in _folders(flows):
            code = root / "flows" / folder.relative_to(flows)
            if not _is_package(code):
                problems.append(f"{rel(folder)}/: no package {rel(code)}/ (tests/flows/ mirrors flows/)")

    integration = tests / "integration"
    if integration.is_dir():
        for f in sorted(integration.rglob("*smoke*.py")):
            if "__pycache__" not in f.parts and rel(f) not in pending:
                problems.append(f"{rel(f)}: a pipeline's smoke run belongs in tests/flows/<pipeline>/")

    seen = defaultdict(list)
    for f in tests.rglob("test_*.py"):
        if "__pycache__" not in f.parts:
            seen[f.name].append(rel(f))
    problems += [
        f"{name}: one basename, several files ({', '.join(sorted(paths))}); pytest cannot import both"
        for name, paths in sorted(seen.items())
        if len(paths) > 1
    ]
    return problems


def test_the_test_tree_mirrors_the_code():
    assert layout_problems(ROOT) == []


def test_pending_moves_name_their_destination():
    """PENDING_MOVES only lets files through; an entry whose file has moved should be dropped (a warning)."""
    for old, new in PENDING_MOVES.items():
        assert old.startswith("tests/") and new, (old, new)
        if not (ROOT / old).exists():
            warnings.warn(f"PENDING_MOVES: {old} has moved (to {new}); remove its entry", UserWarning, stacklevel=1)


def _plant(root: Path, *files: str, text: str = "") -> None:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_a_planted_misplaced_test_is_caught(tmp_path):
    _plant(
        tmp_path,
        "components/__init__.py",
        "components/io.py",
        "components/data/__init__.py",
        "components/data/corpus/__init__.py",
        "flows/__init__.py",
        "flows/ofmu/__init__.py",
        "flows/runtime/__init__.py",
    )
    good = [
        "tests/unit/data/corpus/test_a.py",
        "tests/unit/data/test_b.py",
        "tests/unit/test_io.py",
        "tests/unit/conftest.py",
        "tests/flows/ofmu/test_c.py",
        "tests/flows/runtime/test_d.py",
        "tests/flows/test_e.py",
        "tests/infra/test_f.py",
        "tests/integration/test_g.py",
        "tests/fixtures/x.json",
    ]
    _plant(tmp_path, *good)
    _plant(
        tmp_path,
        "tests/unit/data/test_h.py",
        text="import numpy\nfrom components.data import corpus\n\ndef test():\n    from flows.ofmu import params\n",
    )  # an import inside a test is allowed
    _plant(tmp_path, "tests/unit/lm/__pycache__/test_old.cpython-311.pyc")  # a moved folder's leftover cache
    assert layout_problems(tmp_path, pending={}) == []

    _plant(
        tmp_path,
        "tests/unit/foo/test_foo.py",
        "tests/unit/data/nope/test_n.py",
        "tests/unit/test_bar.py",
        "tests/flows/nopipe/test_p.py",
        "tests/flows/ofmu/sub/test_s.py",
        "tests/integration/test_ofmu_smoke.py",
        "tests/misc/test_m.py",
        "tests/flows/ofmu/test_a.py",
    )
    _plant(tmp_path, "tests/unit/data/test_flows.py", text="from flows.ofmu.params import Params\n")
    problems = "\n".join(layout_problems(tmp_path, pending={}))
    for culprit in (
        "tests/unit/foo/",
        "tests/unit/data/nope/",
        "tests/unit/test_bar.py",
        "tests/flows/nopipe/",
        "tests/flows/ofmu/sub/",
        "tests/integration/test_ofmu_smoke.py",
        "tests/misc/",
        "tests/unit/data/test_flows.py",
        "test_a.py: one basename",
    ):
        assert culprit in problems, (culprit, problems)
    assert len(problems.splitlines()) == 9, problems

    allowed = {"tests/integration/test_ofmu_smoke.py": "tests/flows/ofmu/", "tests/unit/data/test_flows.py": "x"}
    assert len(layout_problems(tmp_path, pending=allowed)) == 7


def _files_taking(fixture: str) -> set[str]:
    """Test files with a function (test or fixture) that takes ``fixture`` as a parameter."""
    found = set()
    for path in (ROOT / "tests").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and any(a.arg == fixture for a in node.args.args):
                found.add(path.relative_to(ROOT).as_posix())
    return found - {"tests/conftest.py"}


def test_the_files_that_share_the_smoke_run_are_scheduled_on_one_worker():
    from tests.conftest import SMOKE_RUN_FILES

    assert _files_taking("smoke_run") == SMOKE_RUN_FILES
