"""implicit-planning's champion evaluator on the trained positive control (conftest's session model): the saved
folder loads back through the logged loader to the same metrics, twice the same (greedy); the metrics show the
mechanism (the model rhymes in RF1 unsteered, steering flips the article); sabotaged weights score clearly worse;
missing control lines are a DataError naming the file; the settings follow the params."""

from __future__ import annotations

import pytest
import torch

from components.errors import DataError
from components.implicit_planning.couplets import CoupletLanguage
from components.io import write_jsonl
from components.models.tiny_lm import save_model
from flows.implicit_planning import champion
from flows.implicit_planning.data import SPLIT_SEED, control_lines
from flows.implicit_planning.params import PRESETS, Params
from flows.runtime.mlflow_model import ALLOWED_LOADERS, resolve_loader
from flows.runtime.params import resolve


@pytest.fixture(scope="module")
def setup(tmp_path_factory, positive):
    p = resolve(Params, PRESETS, slug="implicit-planning", profile="default")
    settings = {**champion.settings_for(p), "lines_select": 10, "threads": 1}
    root = tmp_path_factory.mktemp("root")
    lang = CoupletLanguage(words_per_family=settings["words_per_family"], n_families=settings["n_families"])
    rows = control_lines(lang, [settings["rf1"], settings["rf2"]], 20, 10, SPLIT_SEED)
    (root / settings["lines"]).parent.mkdir(parents=True)
    write_jsonl(root / settings["lines"], rows)
    return root, save_model(positive, root / "positive-s0"), settings


def test_loader_round_trips_and_the_metrics_show_the_mechanism(setup, positive):
    root, folder, settings = setup
    assert champion.LOADER in ALLOWED_LOADERS
    got = champion.evaluate(resolve_loader(champion.LOADER)(folder), settings, root)
    assert set(got) == set(champion.RULES)
    assert got == champion.evaluate(positive, settings, root)  # the bare model: the same numbers (greedy)
    assert got["rf1_unsteered"] >= 0.8, got  # the positive control rhymes in RF1 when left alone
    assert got["article_steered"] >= 0.8, got  # steering at line 1's end flips the article before the rhyme


def test_sabotaged_weights_score_clearly_worse(setup):
    root, folder, settings = setup
    good = champion.evaluate(resolve_loader(champion.LOADER)(folder), settings, root)
    noisy = resolve_loader(champion.LOADER)(folder)
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for w in noisy.parameters():
            w.copy_(0.02 * torch.randn(w.shape, generator=g))
    bad = champion.evaluate(noisy, settings, root)
    assert bad["rf1_unsteered"] < good["rf1_unsteered"] - 0.5, (bad, good)
    assert bad["article_steered"] < good["article_steered"] - 0.5, (bad, good)


def test_missing_lines_are_a_data_error_naming_the_file(setup):
    _, folder, settings = setup
    with pytest.raises(DataError, match=r"control_lines.jsonl: .*--stage data"):
        champion.evaluate(resolve_loader(champion.LOADER)(folder), settings, folder / "nowhere")


def test_settings_follow_the_params():
    p = resolve(Params, PRESETS, slug="implicit-planning", profile="smoke")
    s = champion.settings_for(p)
    assert champion.choose(p) == ("positive", p.data.seeds[0])
    assert (s["rf1"], s["rf2"]) == tuple(p.control.pairs[0]) and s["position"] == p.steer.control_position
    assert s["multiplier"] == p.steer.multiplier and s["max_new_tokens"] == p.steer.max_new_tokens
    assert not s["lines"].startswith("/")  # relative to the checkout
