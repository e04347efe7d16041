"""NeuralDB's champion on a random tiny LM: the saved folder (LM + store) loads back to the same edited model,
the evaluator measures the edit, and a sabotaged store (residuals sign-flipped) or a detached one scores worse."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from components.editing.apply import KeyStats
from components.editing.model import edit_site, generic_keys, logits_of
from components.editing.targets import compute_targets
from components.models.tiny_lm import TinyLM, TinyLMConfig
from components.training.tokenizer import load_bpe, train_bpe
from flows.neuraldb import champion

# Prompts end with the subject and targets are one letter, so the residual at the subject's last token reaches the
# target's logits directly (a random model has no useful attention to carry it further).
NAMES = [("Zed", "Quill"), ("Bo", "Tarn"), ("Amy", "Rook"), ("Cy", "Fenn")]
REQS = [
    {
        "id": f"r{i}",
        "subject": f"{a} {b}",
        "target_true": "R",
        "target_new": "O",
        "prompts": [f"Born in: {a} {b}", f"Home of {a} {b}"],
        "paraphrase_prompts": [f"Long ago lived {a} {b}"],
        "neighborhood_prompts": [f"Born in: Ned Vole{i}"],
    }
    for i, (a, b) in enumerate(NAMES)
]


@pytest.fixture(autouse=True)
def _one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture
def edited(tmp_path):
    """(root with the evaluation data, settings, folder of the saved champion, the in-memory edited model)."""
    data = tmp_path / "data"
    data.mkdir()
    texts = [p for r in REQS for p in (*r["prompts"], *r["paraphrase_prompts"], *r["neighborhood_prompts"])]
    train_bpe(
        [*texts, *[f"{t} {x}" for t in texts for x in ("R", "O")]] * 4, vocab_size=300, out_path=data / "tokenizer.json"
    )
    tok = load_bpe(data / "tokenizer.json")
    (data / "edits_seed0.jsonl").write_text("".join(json.dumps(r) + "\n" for r in REQS))
    ppl = np.random.default_rng(0).integers(1, tok.get_vocab_size(), 2000).astype(np.uint16)
    np.save(data / "ppl_tokens.npy", ppl)
    settings = {
        "edits": "data/edits_seed0.jsonl",
        "tokenizer": "data/tokenizer.json",
        "ppl_tokens": "data/ppl_tokens.npy",
        "seed": 0,
        "m": len(REQS),
        "seq_len": 16,
        "ppl_windows": 8,
        "batch_size": 64,
        "threads": 1,
    }
    cfg = TinyLMConfig(vocab_size=tok.get_vocab_size(), d_model=32, n_layers=2, n_heads=2, d_ff=64, max_seq_len=64)
    model = TinyLM(cfg, seed=0).eval()
    with torch.no_grad():
        model.embed.weight.mul_(50.0)  # confident predictions, as in tests/unit/editing
    encode = lambda s: tok.encode(s, add_special_tokens=False).ids  # noqa: E731
    site = edit_site(model, 0)
    targets = compute_targets(model, site, encode, REQS, steps=20, lr=0.5, weight_decay=0.0, clamp=50.0)
    k0 = generic_keys(model, site, torch.from_numpy(ppl.astype(np.int64)), n_keys=500, seq_len=16)
    stats = KeyStats.from_keys(k0, null_threshold=0.5)
    db = champion.build_store(stats, targets, len(REQS), {"gamma": 0.5, "gate": "hard", "temperature": 0.02})
    folder = champion.save(model, db, site.layer, tmp_path / "champion")
    db.attach(site)
    return tmp_path, settings, folder, model


def test_the_folder_round_trips_the_edited_model_bit_for_bit(edited):
    from components.editing.neuraldb import load_edited

    root, settings, folder, model = edited
    loaded = load_edited(folder)
    ids = torch.randint(1, model.config.vocab_size, (3, 12), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        assert torch.equal(logits_of(loaded, ids), logits_of(model, ids))
    assert torch.equal(loaded.neuraldb.keys, model_db(model).keys)
    assert torch.equal(loaded.neuraldb.residuals, model_db(model).residuals)
    assert loaded.neuraldb.ids == [r["id"] for r in REQS] and loaded.neuraldb.gamma == 0.5
    assert champion.evaluate(loaded, settings, root) == champion.evaluate(model, settings, root)


def model_db(model):
    """The store attached to the in-memory model (its forward hook's owner)."""
    (hook,) = model.blocks[0].mlp.down._forward_hooks.values()
    return hook.__self__


def test_the_evaluator_sees_the_edit_and_a_sabotaged_store_scores_worse(edited):
    from components.editing.neuraldb import load_edited

    root, settings, folder, _ = edited
    good = champion.evaluate(load_edited(folder), settings, root)
    assert set(good) == set(champion.RULES) and good["efficacy"] >= 0.75 and np.isfinite(good["ppl_nll"])
    flipped = load_edited(folder)
    flipped.neuraldb.residuals = -flipped.neuraldb.residuals  # every stored edit pushes the wrong way
    bad = champion.evaluate(flipped, settings, root)
    assert bad["efficacy"] <= good["efficacy"] - 0.5
    unedited = load_edited(folder)
    unedited.neuraldb.detach()
    assert champion.evaluate(unedited, settings, root)["efficacy"] < good["efficacy"]  # the store is what edits


def test_missing_data_and_a_broken_folder_are_one_line_errors(edited, tmp_path):
    from components.editing.neuraldb import STORE_WEIGHTS, load_edited
    from components.errors import DataError

    root, settings, folder, _ = edited
    with pytest.raises(DataError, match="none.npy: NeuralDB's evaluation data not found"):
        champion.evaluate(load_edited(folder), {**settings, "ppl_tokens": "data/none.npy"}, root)
    (folder / STORE_WEIGHTS).write_bytes(b"not safetensors")
    with pytest.raises(DataError, match="not a readable NeuralDB store"):
        load_edited(folder)


def test_the_loader_is_allow_listed():
    from flows.runtime.mlflow_model import resolve_loader

    assert resolve_loader(champion.LOADER).__name__ == "load_edited"
