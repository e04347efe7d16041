"""icql params: every profile validates; bad values fail before any work with the key named."""

from __future__ import annotations

import pytest

from components.errors import ParamsError
from flows.icql.common import external_grid, grid
from flows.icql.params import PRESETS, Params
from flows.runtime.params import resolve


def _resolve(profile="smoke", *overrides):
    return resolve(Params, PRESETS, slug="icql", profile=profile, overrides=overrides)


@pytest.mark.parametrize("profile", ["smoke", "default", "full"])
def test_profiles_validate(profile):
    p = _resolve(profile)
    runs = grid(p)
    assert {"icql", "iql"} <= {r["method"] for r in runs}
    assert len({r["name"] for r in runs}) == len(runs)
    ext = external_grid(p)
    assert len({r["name"] for r in ext}) == len(ext) and not {r["name"] for r in ext} & {r["name"] for r in runs}
    if profile == "full":  # 6 external datasets x 4 methods x 5 seeds
        assert len(ext) == 6 * 4 * 5 and {r["method"] for r in ext} == {"bc", "td3bc", "iql", "icql"}


@pytest.mark.parametrize(
    "override, key",
    [
        ("train.runs={'4': ['cql']}", "icql.train.runs"),
        ("data.tasks=[5]", "icql.data.tasks"),
        ("agent.init=zeros", "icql.agent.init"),
        ("retrieval.k=0", "icql.retrieval.k"),
        ("agent.expectile=0.3", "icql.agent.expectile"),
        ("data.mode_probs={'ordered': 0.5}", "icql.data.mode_probs"),
        ("train.runs={'2': ['iql']}", "icql"),
        ("bogus=1", "icql.bogus"),
        ("train.external_methods=['cql']", "icql.train.external_methods"),
        (
            "data.external=[{'source': 'sac', 'id': 'Hopper-v5'}, {'source': 'minari', 'id': 'Hopper-v5'}]",
            "icql.data.external",
        ),
    ],
)
def test_bad_values_name_the_key(override, key):
    with pytest.raises(ParamsError, match=key.replace(".", r"\.")):
        _resolve("smoke", override)


@pytest.mark.parametrize(
    "override, key",
    [
        (
            "train.dev_seed=10005",
            "train.dev_seed",
        ),  # (a model-level check) dev rollouts would reuse the evaluate stage's test seeds
        ("data.compensation=1.5", "icql.data.compensation"),
        ("data.drift=-1", "icql.data.drift"),
        ("data.radius=0", "icql.data.radius"),
        ("train.curve_points=0", "icql.train.curve_points"),
    ],
)
def test_new_settings_are_validated(override, key):
    with pytest.raises(ParamsError, match=key.replace(".", r"\.")):
        _resolve("default", override)


def test_default_is_the_harder_kitchen_lite_at_a_plateau_scale():
    """Issue 19: the default trains past the 1k-step transient with learning curves, on data that does not
    average to the expert (sub-controllers cancel only part of a stronger drift)."""
    p = _resolve("default")
    assert p.train.steps >= 6000 and p.train.dev_episodes >= 1 and p.train.curve_points >= 10
    assert p.data.compensation < 1 and p.data.drift > 0.4
    assert p.agent.actor_schedule == "cosine"  # IQL's reference schedule: the policy settles by the run's end
    assert p.claims.n_resamples == 10_000  # C1-C4 (C4's two-stage Spearman bootstrap included)
