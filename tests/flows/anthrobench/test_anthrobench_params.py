"""anthrobench params: every preset validates; bad values fail naming the key."""

from __future__ import annotations

import pytest

from components.errors import ParamsError
from flows.anthrobench.params import PRESETS, Params
from flows.runtime.params import resolve


@pytest.mark.parametrize("profile", list(PRESETS))
def test_presets_validate(profile):
    p = resolve(Params, PRESETS, slug="anthrobench", profile=profile)
    assert p.data.n_turns == 5 and p.claims.target in ("simulator", *p.targets.models)


@pytest.mark.parametrize(
    "override, key",
    [
        ("data.seeds=[]", "anthrobench.data.seeds"),  # an empty set
        ("data.n_turns=1", "anthrobench.data.n_turns"),  # out of range: no turn 2 means no late onset
        ("hazards.a={telepathy: 1.0}", "anthrobench.hazards.a: .*unknown behaviour"),  # an unknown name
        ("hazards.a={empathy: 50.0}", "anthrobench.hazards.a: .*intercepts"),  # out of range
        ("targets.temperature=0", "anthrobench.targets.temperature"),
        ("targets.models=[endpoint:my-model]", "anthrobench.targets: .*endpoint_url"),  # a mismatched pair
        ("claims.target=gpt-4o", "anthrobench: .*claims.target"),  # not a target of this run
        ("claims.late_count=15", "anthrobench.claims.late_count"),  # more than 14 behaviours
        ("data.first_turns=data/first_turns.csv", "anthrobench.data.first_turns: .*flows/anthrobench/inputs"),
        ("judges.llm=endpoint:judge", "anthrobench.judges: .*llm_endpoint_url"),  # an endpoint judge needs its URL
    ],
)
def test_bad_values_name_the_key(override, key):
    with pytest.raises(ParamsError, match=key):
        resolve(Params, PRESETS, slug="anthrobench", profile="smoke", overrides=[override])


def test_the_first_turns_file_is_a_dependency_of_the_data_stage(tmp_path):
    """The only place data.first_turns may name is a declared dependency of the stage that reads it, and that
    folder exists in every checkout (git keeps its README), so DVC and the stage cache see an edited CSV."""
    import subprocess

    from components.io import path_md5
    from flows.anthrobench.spec import INPUTS, STAGES
    from flows.runtime.settings import find_root

    data = next(s for s in STAGES if s.name == "data")
    assert INPUTS in data.deps and all(INPUTS not in s.deps for s in STAGES if s.name != "data")
    root = find_root()
    assert subprocess.run(["git", "ls-files", INPUTS], cwd=root, capture_output=True, text=True).stdout.strip()
    p = resolve(Params, PRESETS, slug="anthrobench", profile="smoke",
                overrides=[f"data.first_turns={INPUTS}/first_turns.csv"])  # fmt: skip
    assert p.data.first_turns == f"{INPUTS}/first_turns.csv"
    folder = tmp_path / "inputs"  # the folder's hash (what the stage cache and DVC compare) follows its CSV
    folder.mkdir()
    (folder / "first_turns.csv").write_text("use_domain\n", encoding="utf-8")
    before = path_md5(folder)
    (folder / "first_turns.csv").write_text("use_domain\nedited\n", encoding="utf-8")
    assert path_md5(folder) != before
