"""Known answer and sabotage check for NeuralDB's gated key-value store (components/editing).

Fixture: the random TinyLM of ``conftest`` (d 32, 2 layers, SwiGLU 64, 50x tied embedding, char tokens), 10
counterfactual edits at layer 0 and 20 neighbourhood prompts (other subjects, same template). In a random
model the key at a token is mostly a function of that token, so every subject ends in its own character
(digits and capitals that occur nowhere else in any prompt): edited keys are then distinct from all unrelated
keys, the situation in which the gate must separate them (neighbour cosines <= 0.53, gamma 0.8). Generic
keys K0 come from 600 prompts about other subjects. The neighbourhood's true object is the unedited model's
top-1 token, so the unedited model has specificity 1.

Known answer: NeuralDB makes every rewrite prompt emit the new object (efficacy 1, top-1 accuracy >= 0.95),
leaves the logits of every neighbourhood prompt unchanged bit for bit, and its specificity beats MEMIT's
best (over lambda in {1, 10, 100}, where MEMIT also edits: efficacy >= 0.9) by >= 0.2
(measured: NeuralDB 1.0, MEMIT 0.65 at every lambda).

Sabotage: the gate inverted (fires below the threshold), no gate (always fires: a linear store), the stored
keys replaced by noise; each must make the known-answer check fail.
"""

from __future__ import annotations

import random
import string

import numpy as np
import pytest
import torch

from components.editing import neuraldb
from components.editing.apply import KeyStats, apply_edit
from components.editing.metrics import rewrite_quality
from components.editing.model import compute_keys, edit_site, encode_batch, logits_of
from components.editing.targets import compute_targets
from components.models.tiny_lm import TinyLM, TinyLMConfig

N_EDITS, N_NEIGHBOURS = 10, 2
T_REWRITE, T_HOME, T_PARA = "Born in: {}", "Home of {}", "Long ago lived {}"
GAMMA, MARGIN = 0.8, 0.2


def encode(text: str) -> list[int]:
    """conftest's toy tokenizer: one token per character (ids 1..127), leading spaces dropped."""
    return [min(ord(c), 127) for c in text.lstrip()]


def _model() -> TinyLM:
    cfg = TinyLMConfig(vocab_size=128, d_model=32, n_layers=2, n_heads=2, d_ff=64, max_seq_len=128)
    model = TinyLM(cfg, seed=0).eval()
    with torch.no_grad():
        model.embed.weight.mul_(50.0)
    return model


@torch.no_grad()
def last_logits(model, prompts):
    enc = encode_batch(encode, prompts)
    last = torch.tensor([len(encode(p)) - 1 for p in prompts])
    return logits_of(model, enc.ids)[torch.arange(len(prompts)), last]


@pytest.fixture(scope="module")
def setup():
    torch.set_num_threads(1)
    model, rng = _model(), random.Random(0)
    lower = string.ascii_lowercase

    def name() -> str:
        return "".join(rng.choice(lower) for _ in range(4)) + " " + "".join(rng.choice(lower) for _ in range(5))

    ends = [c for c in string.ascii_uppercase + string.digits if c not in "BHL"]  # not in any template
    rng.shuffle(ends)
    subjects = [name() + ends[i] for i in range(N_EDITS * (1 + N_NEIGHBOURS))]
    edited, others = subjects[:N_EDITS], subjects[N_EDITS:]
    requests = []
    for i, s in enumerate(edited):
        neigh = [T_REWRITE.format(o) for o in others[i * N_NEIGHBOURS : (i + 1) * N_NEIGHBOURS]]
        true = chr(int(last_logits(model, [T_REWRITE.format(s)]).argmax()))
        new = rng.choice([c for c in lower if c != true])
        requests.append(
            {
                "id": f"e{i}",
                "subject": s,
                "target_true": true,
                "target_new": new,
                "prompts": [T_REWRITE.format(s), T_HOME.format(s)],
                "paraphrase_prompts": [T_PARA.format(s)],
                "neighborhood_prompts": neigh,
                "neighborhood_true": [chr(int(c)) for c in last_logits(model, neigh).argmax(-1)],
            }
        )
    site = edit_site(model, 0)
    targets = compute_targets(model, site, encode, requests, steps=20, lr=0.5, weight_decay=0.0, clamp=50.0)
    background = [name() for _ in range(600)]
    k0 = compute_keys(
        model, site, encode, [rng.choice([T_REWRITE, T_HOME, T_PARA]).format(b) for b in background], background
    )
    stats = KeyStats.from_keys(k0, null_threshold=0.5)
    neigh_prompts = [p for r in requests for p in r["neighborhood_prompts"]]
    base = {
        "model": model,
        "site": site,
        "requests": requests,
        "targets": targets,
        "stats": stats,
        "neigh_prompts": neigh_prompts,
        "neigh_logits": last_logits(model, neigh_prompts),
    }
    base["memit"] = [evaluate(base, "memit", mom2_weight=lam) for lam in (1.0, 10.0, 100.0)]
    return base


def evaluate(s: dict, method: str, **kw) -> dict:
    t = s["targets"]
    edit = apply_edit(
        s["model"], s["site"], method, ids=t.ids, keys=t.keys, residuals=t.residuals, stats=s["stats"], **kw
    )
    try:
        q = {k: float(np.nanmean(v)) for k, v in rewrite_quality(s["model"], encode, s["requests"]).items()}
        same = last_logits(s["model"], s["neigh_prompts"]) == s["neigh_logits"]
        q["unchanged"] = float(same.all(-1).float().mean())
    finally:
        edit.undo()
    return q


def known_answer(s: dict) -> tuple[bool, str]:
    ndb = evaluate(s, "neuraldb", gamma=GAMMA)
    editing = [m for m in s["memit"] if m["efficacy"] >= 0.9]
    best_memit = max(m["specificity"] for m in editing) if editing else float("nan")
    ok = (
        ndb["efficacy"] == 1.0
        and ndb["zsre_acc"] >= 0.95
        and ndb["unchanged"] == 1.0
        and bool(editing)
        and ndb["specificity"] >= best_memit + MARGIN
    )
    return ok, f"neuraldb {ndb}; memit {s['memit']}"


def test_neuraldb_edits_take_unrelated_prompts_stay_exact_and_specificity_beats_memit(setup):
    ok, msg = known_answer(setup)
    assert ok, msg


def _gate(kind: str):
    original = neuraldb.NeuralKVDB.retrieve

    def patched(self, k):
        b, j, g = original(self, k)
        return b, j, (1.0 - g) if kind == "inverted" else torch.ones_like(g)

    return patched


def _noise_keys(self, ids, keys, residuals, _original=neuraldb.NeuralKVDB.add):
    noise = torch.randn(keys.shape, generator=torch.Generator().manual_seed(0)) * keys.std() + keys.mean()
    return _original(self, ids, noise, residuals)


@pytest.mark.parametrize(
    "attr,fake",
    [("retrieve", _gate("inverted")), ("retrieve", _gate("always")), ("add", _noise_keys)],
    ids=["inverted-gate", "no-gate", "noise-keys"],
)
def test_sabotaged_store_fails_the_known_answer(setup, monkeypatch, attr, fake):
    monkeypatch.setattr(neuraldb.NeuralKVDB, attr, fake)
    ok, msg = known_answer(setup)
    assert not ok, f"sabotage went unnoticed: {msg}"
