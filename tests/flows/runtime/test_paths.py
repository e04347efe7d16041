"""Names from params or data become path parts only when plain; resolved paths never leave the checkout."""

from __future__ import annotations

import json
import sys
import types

import pytest

from components.errors import ParamsError
from flows.qualitypajama.params import PRESETS, Params
from flows.registry import PaperSpec, StageSpec
from flows.runtime.params import Section, resolve
from flows.runtime.paths import UnsafePathError, allowed_roots, check_name, inside, safe_join
from flows.runtime.settings import Paths
from flows.runtime.stages import StageContext

TRAVERSALS = ["../../../../tmp/x/victim", "../victim", "a/b", "/etc/passwd", ".hidden", "..", "", "a\x00b"]


@pytest.mark.parametrize("name", ["austen", "linux_docs", "qa-67", "minhash-0.7", "N20000"])
def test_plain_names_pass(name):
    assert check_name(name, "field") == name


@pytest.mark.parametrize("name", [*TRAVERSALS, 3, None])
def test_names_with_separators_or_dots_are_refused_naming_the_field(name):
    with pytest.raises(UnsafePathError, match=r"^corpus\.heldout: .* is not a plain name"):
        check_name(name, "corpus.heldout")


def test_known_list_is_enforced():
    with pytest.raises(UnsafePathError, match="unknown name 'bible'"):
        check_name("bible", "sources", known=["austen"])


@pytest.mark.parametrize("part", ["../x", "a/../../x", "/etc/passwd", "a/../.."])
def test_safe_join_refuses_parts_that_leave_the_base(tmp_path, part):
    with pytest.raises(UnsafePathError, match="not a relative path inside"):
        safe_join(tmp_path, part)


def test_safe_join_refuses_a_symlink_out_of_the_base(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    base = tmp_path / "base"
    base.mkdir()
    (base / "link").symlink_to(outside)
    with pytest.raises(UnsafePathError, match="outside the checkout"):
        safe_join(base, "link", "victim.jsonl")
    assert safe_join(base, "sub", "ok.jsonl") == base / "sub" / "ok.jsonl"


def test_data_folder_may_point_at_a_data_disk(tmp_path):
    root, disk = tmp_path / "proj", tmp_path / "disk"
    root.mkdir()
    disk.mkdir()
    (root / "data").symlink_to(disk)
    roots = allowed_roots(root)
    assert inside(root / "data" / "x.jsonl", roots, "x") == root / "data" / "x.jsonl"
    with pytest.raises(UnsafePathError, match=r"^x: .* outside the checkout; refused$"):
        inside(root / ".." / "elsewhere.jsonl", roots, "x")


@pytest.mark.parametrize("field", ["sources", "heldout"])
@pytest.mark.parametrize("bad", ["../../../../tmp/x/victim", "austen/../../x", "bible"])
def test_qualitypajama_source_names_are_a_known_list(field, bad):
    with pytest.raises(ParamsError, match=rf"^qualitypajama\.corpus\.{field}: .*unknown source"):
        resolve(Params, PRESETS, slug="qualitypajama", profile="smoke", overrides=[f"corpus.{field}=[austen,{bad}]"])


class _P(Section):
    value: int = 1


def _ctx(tmp_path, run):
    module = types.ModuleType("fake_paths_stage")
    module.run = run
    sys.modules["fake_paths_stage"] = module
    stage = StageSpec("make", "fake_paths_stage", deps=(), params=(), outs=("data/fake/out",))
    return StageContext(PaperSpec("fake", 99, "Fake", None, (stage,)), stage, _P(), "smoke", Paths(tmp_path))


def test_stage_input_outside_the_checkout_is_refused_even_when_it_exists(tmp_path):
    root = tmp_path / "a" / "proj"
    (root / "data" / "sources").mkdir(parents=True)
    victim = tmp_path / "victim.jsonl"
    victim.write_text(json.dumps({"id": "1", "text": "secret"}) + "\n")
    ctx = _ctx(root, lambda ctx: None)
    with pytest.raises(
        UnsafePathError, match=r"^data/sources/\.\./\.\./\.\./\.\./victim\.jsonl: .* outside the checkout"
    ):
        ctx.input("data/sources/../../../../victim.jsonl")


def test_corpus_stage_refuses_a_traversal_name_that_bypassed_validation(tmp_path):
    """Defence in depth: even a params object built without validation cannot write outside."""
    from flows.qualitypajama import corpus

    p = resolve(Params, PRESETS, slug="qualitypajama", profile="smoke")
    p.corpus.__dict__["heldout"] = ["austen", "../../../../victim"]  # bypass validate_assignment
    ctx = _ctx(tmp_path, corpus.run)
    ctx.params = p
    with pytest.raises(UnsafePathError, match=r"^qualitypajama\.corpus\.heldout: '\.\./\.\./\.\./\.\./victim'"):
        corpus.run(ctx)
