"""selfaug-decoding's champion evaluator and loader, without a pipeline run.

Held-out POPE questions in the data stage's format (``eval_images.npz`` with its id offset, ``pope.jsonl``) are
answered by ``flows.selfaug_decoding.champion.evaluate``: a VLM that always says "yes" must score greedy accuracy
0.5 and F1 2/3 exactly (half the questions are "yes"), one that always says "no" F1 0; the allow-listed loader
must round-trip a saved tiny VLM to the same metrics; missing data names the file; no tracked run, no champion.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from components.errors import DataError
from components.io import write_jsonl
from components.selfaug_decoding import model as M
from components.selfaug_decoding import scenes as S
from flows.runtime.mlflow_model import ALLOWED_LOADERS, resolve_loader
from flows.runtime.params import resolve
from flows.selfaug_decoding import champion
from flows.selfaug_decoding.params import PRESETS, Params


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    rng = np.random.default_rng(0)
    root = tmp_path_factory.mktemp("selfaug-root")
    data = root / "data/selfaug-decoding/data"
    data.mkdir(parents=True)
    imgs, rows = [], []
    for i in range(16):
        img, objs = S.make_scene(rng)
        imgs.append(np.round(img * 255).astype(np.uint8))
        rows.append({"id": 50 + i, "shapes": [o.shape for o in objs]})
    qs = S.pope_questions(rng, rows, "adversarial", 12, S.cooccurrence([r["shapes"] for r in rows]))
    np.savez_compressed(data / "eval_images.npz", images=np.stack(imgs), offset=np.int64(50))
    write_jsonl(data / "pope.jsonl", qs)
    return root


def settings():
    p = resolve(Params, PRESETS, slug="selfaug-decoding", profile="smoke")
    return champion.settings_for(p, 0)


class Constant(torch.nn.Module):
    """A VLM that answers one word whatever the image and question."""

    def __init__(self, word: str):
        super().__init__()
        self.word = S.VOCAB.index(word)

    def encode(self, images):
        return images.mean((1, 2, 3))[:, None, None]

    def forward(self, prefix, tokens):
        out = torch.zeros(tokens.shape[0], tokens.shape[1], len(S.VOCAB))
        out[:, :, self.word] = 5.0
        return out


def test_known_answers_of_the_evaluator(root):
    yes = champion.evaluate(Constant("yes"), settings(), root)
    assert set(yes) == set(champion.RULES)
    assert yes["greedy_accuracy"] == 0.5 and yes["greedy_f1"] == pytest.approx(2 / 3) == yes["selfaug_f1"]
    no = champion.evaluate(Constant("no"), settings(), root)
    assert no["greedy_accuracy"] == 0.5 and no["greedy_f1"] == 0.0


def test_the_loader_round_trips_a_saved_vlm(root, tmp_path):
    assert champion.LOADER in ALLOWED_LOADERS
    torch.manual_seed(0)
    vlm = M.TinyVLM(M.VLMConfig(d=32, d_ff=64, channels=(8, 8, 16), encoder_norm=True, emb_std=0.02)).eval()
    M.save_model(vlm, tmp_path / "seed_0")
    back = resolve_loader(champion.LOADER)(tmp_path / "seed_0")
    assert champion.evaluate(back, settings(), root) == champion.evaluate(vlm, settings(), root)


def test_missing_data_names_the_file(tmp_path):
    with pytest.raises(DataError, match=r"eval_images\.npz.*paperline run selfaug-decoding --stage data"):
        champion.evaluate(Constant("yes"), settings(), tmp_path)


def test_no_tracked_run_proposes_no_champion(tmp_path):
    p = resolve(Params, PRESETS, slug="selfaug-decoding", profile="smoke")
    assert champion.candidate(p, None, "tiny-vlm-seed0", tmp_path, tmp_path, 0) is None
