"""Tuning on the dev split: every contrastive method gets the same number of settings (alpha x beta for a fixed
cut-off, alpha x tau for SAT), the card's setting first; the chosen one has the highest dev F1 and only the dev
files are read (the test split is absent here)."""

from __future__ import annotations

import numpy as np
import torch

from components.io import write_jsonl
from components.selfaug_decoding import scenes as S
from flows.runtime.params import resolve
from flows.selfaug_decoding.decode import DecodeJob, grid, tune
from flows.selfaug_decoding.params import PRESETS, Params

METHODS = ("vcd", "vacode", "selfaug", "sas_only", "sat_only")


def test_every_contrastive_method_gets_the_same_grid_with_the_card_first():
    dec = resolve(Params, PRESETS, slug="selfaug-decoding", profile="default").decoding.model_dump()
    grids = {m: grid(m, dec) for m in METHODS}
    assert {len(g) for g in grids.values()} == {9} and grid("greedy", dec) == [{}]
    assert grids["vcd"][0] == {"alpha": 1.0, "beta": 0.1} and grids["selfaug"][0] == {"alpha": 1.0, "tau": 0.5}
    assert all("tau" in c for c in grids["sat_only"]) and all("beta" in c for c in grids["vacode"])


def test_tune_picks_the_best_dev_f1_from_the_dev_files_only(tmp_path):
    rng = np.random.default_rng(0)
    rows, imgs = [], []
    for i in range(12):
        img, objs = S.make_scene(rng)
        imgs.append(np.round(img * 255).astype(np.uint8))
        rows.append({"id": 100 + i, "shapes": [o.shape for o in objs]})
    cooc = S.cooccurrence([r["shapes"] for r in rows])
    qs = [q for split in ("random", "adversarial") for q in S.pope_questions(rng, rows, split, 8, cooc)]
    np.savez(tmp_path / "dev_images.npz", images=np.stack(imgs), offset=np.int64(100))
    write_jsonl(tmp_path / "pope_dev.jsonl", qs)
    dec = resolve(Params, PRESETS, slug="selfaug-decoding", profile="smoke").decoding.model_dump()
    dec["alpha_grid"], dec["beta_grid"] = [0.0, 0.5, 3.0], [0.05, 0.5]
    job = DecodeJob(0, "vcd", str(tmp_path), "unused", dec, 1)
    chosen, tried = tune(MeanVLM(), job)
    f1 = {(t["alpha"], t["beta"]): t["dev_f1"] for t in tried}
    assert len(f1) == 6 and len(set(f1.values())) > 1, f1  # the settings differ on dev
    assert f1[(chosen["alpha"], chosen["beta"])] == max(f1.values()), (chosen, f1)


class MeanVLM:
    """ "yes" logit = 2.3 + 2 x (mean of the normalised image, about -1): noise moves it, so alpha and beta matter."""

    def encode(self, images):
        return images.mean((1, 2, 3))[:, None, None]

    def __call__(self, prefix, tokens):
        out = torch.full((tokens.shape[0], tokens.shape[1], len(S.VOCAB)), -5.0)
        out[:, :, S.VOCAB.index("no")] = 0.0
        out[:, :, S.VOCAB.index("yes")] = 2.3 + 2 * prefix[:, :, 0]
        return out
