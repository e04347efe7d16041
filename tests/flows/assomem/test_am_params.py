"""assomem params: every preset validates, bad values name the key."""

import pytest

from components.errors import ParamsError
from flows.assomem.params import PRESETS, Params
from flows.runtime.params import resolve


@pytest.mark.parametrize("profile", ["smoke", "default", "full"])
def test_presets_validate(profile):
    p = resolve(Params, PRESETS, slug="assomem", profile=profile)
    assert p.data.sizes == sorted(p.data.sizes)


def test_bad_values_name_the_key():
    with pytest.raises(ParamsError, match=r"assomem\.graph\.clue_pooling"):
        resolve(Params, PRESETS, slug="assomem", profile="smoke", overrides=["graph.clue_pooling=median"])
    with pytest.raises(ParamsError, match=r"assomem\.methods"):
        resolve(Params, PRESETS, slug="assomem", profile="smoke", overrides=["methods=[dense]"])
    with pytest.raises(ParamsError, match=r"assomem\.data\.sizes"):
        resolve(Params, PRESETS, slug="assomem", profile="smoke", overrides=["data.sizes=[5]"])


def test_unknown_embedding_model_offline_fails_at_params_validation(monkeypatch):
    monkeypatch.delenv("PAPERLINE_ONLINE", raising=False)
    with pytest.raises(ParamsError, match=r"assomem\.embedding\.model.*PAPERLINE_ONLINE"):
        resolve(Params, PRESETS, slug="assomem", profile="smoke", overrides=["embedding.model=nobody/nothing"])
