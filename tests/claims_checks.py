"""Checks every pipeline's smoke test applies to its claims.json (one helper instead of a copy per pipeline)."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from components.errors import DataError
from components.evaluation.claims import VERDICTS, validate_claims_document


def verdict_paths(record: dict, path: tuple = ()) -> Iterator[tuple]:
    """The path of every verdict in a claim: the claim's own, then its parts' and preconditions' (recursively)."""
    yield path
    for key in ("parts", "preconditions"):
        for i, sub in enumerate(record.get(key) or []):
            yield from verdict_paths(sub, (*path, key, i))


def _node(doc: dict, i: int, path: tuple) -> dict:
    node = doc["claims"][i]
    for key in path:
        node = node[key]
    return node


def assert_every_verdict_flip_is_caught(doc: dict) -> int:
    """Flip each verdict anywhere in ``doc`` to each other verdict; validation must reject every flip.

    Returns the number of flips tried (so a caller can assert the document had something to flip).
    """
    validate_claims_document(doc)
    tried = 0
    for i, claim in enumerate(doc["claims"]):
        for path in verdict_paths(claim):
            for new in VERDICTS:
                if _node(doc, i, path)["verdict"] == new:
                    continue
                edited = copy.deepcopy(doc)
                _node(edited, i, path)["verdict"] = new
                edited["summary"] = {v: sum(c["verdict"] == v for c in edited["claims"]) for v in VERDICTS}
                with pytest.raises(DataError, match="verdict"):
                    validate_claims_document(edited)
                tried += 1
    return tried


def check_smoke_claims(path: Path, ids: list[str]) -> dict:
    """The smoke test's claims.json checks shared by every pipeline: schema and verdicts re-derived, the claim ids,
    a reason and a scale note per claim, the smoke profile, and every hand-flipped verdict caught."""
    doc = json.loads(Path(path).read_text())
    validate_claims_document(doc)
    assert doc["profile"] == "smoke"
    assert [c["id"] for c in doc["claims"]] == ids
    for claim in doc["claims"]:
        assert claim["reason"], f"{claim['id']}: no reason in words"
        assert claim["scale_note"], f"{claim['id']}: no scale note"
    assert assert_every_verdict_flip_is_caught(doc) >= 2 * len(ids)
    return doc


def check_smoke_report(project: Path, slug: str, *, section: str = "", plots: dict[str, str] | None = None) -> dict:
    """The report checks shared by every smoke test: the HTML is self-contained (no remote src/href) with its
    figures embedded and the named section, metrics.json holds each claim's verdict, and each DVC plots CSV
    starts with its header. Returns metrics.json."""
    folder = Path(project) / "reports" / slug
    html = (folder / "report.html").read_text()
    assert not re.search(r"""(src|href)=["']https?://""", html), "the report loads something from the network"
    assert "data:image/png;base64," in html, "no embedded figure in the report"
    assert section in html, f"no section {section!r} in the report"
    metrics = json.loads((folder / "metrics.json").read_text())
    claims = json.loads((folder / "claims.json").read_text())["claims"]
    assert metrics["claims"] == {c["id"]: c["verdict"] for c in claims}
    for name, header in (plots or {}).items():
        text = (folder / "plots" / name).read_text()
        assert text.startswith(header) and text.count("\n") >= 2, f"plots/{name}: header or rows missing"
    return metrics


def run_smoke(project: Path, slug: str, *extra: str):
    """``paperline run <slug> --profile smoke`` in the scratch project: it must succeed. Returns the process."""
    from tests.conftest import paperline

    proc = paperline("run", slug, "--profile", "smoke", *extra, cwd=project)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def leaves(claim: dict) -> list[dict]:
    """A claim's records that are decided by a rule of their own: itself, or its parts and preconditions."""
    subs = [*claim.get("preconditions", []), *claim.get("parts", [])]
    return [x for sub in subs for x in leaves(sub)] if subs else [claim]


def assert_one_model_claims_say_so(doc: dict) -> None:
    """One seed (the smoke profiles'): a claim about a trained model is decided for that one model and its reason
    says so (shared/papers/README.md, step 2), or it is inconclusive; never a silent verdict about the method."""
    for claim in doc["claims"]:
        for rec in leaves(claim):
            if rec.get("cluster_unit") and rec["n_seeds"] == 1 and rec["verdict"] != "inconclusive":
                assert "one trained model" in rec["reason"], f"{rec['id']}: {rec['reason']}"
