"""NeuralDB's gate: unchanged below the threshold, the stored residual above it, and exact undo."""

from __future__ import annotations

import pytest
import torch

from components.editing.apply import KeyStats, apply_edit
from components.editing.model import compute_keys, edit_site, logits_of
from components.editing.neuraldb import NeuralKVDB
from components.errors import DataError, ParamsError


def _db(gamma=0.9, gate="hard"):
    g = torch.Generator().manual_seed(1)
    keys = torch.randn(5, 16, generator=g)
    res = torch.randn(5, 4, generator=g)
    db = NeuralKVDB(torch.zeros(16), gamma=gamma, gate=gate)
    db.add([f"f{i}" for i in range(5)], keys, res)
    return db, keys, res


def test_delta_is_zero_below_gate_and_the_residual_above():
    db, keys, res = _db()
    assert torch.allclose(db.delta(keys * 3.0), res)  # cos = 1 > gamma: the matching residual
    far = torch.randn(50, 16, generator=torch.Generator().manual_seed(7))
    cos, _, gate = db.retrieve(far)
    assert (cos < 0.9).all() and torch.equal(db.delta(far), torch.zeros(50, 4))


def test_soft_gate_is_between_zero_and_one():
    db, keys, res = _db(gamma=0.5, gate="soft")
    _, _, g = db.retrieve(keys)
    assert ((g > 0.99) & (g <= 1)).all()


def test_add_is_last_wins_and_remove_forgets():
    db, keys, res = _db()
    db.add(["f1"], keys[1:2], res[1:2] * -1)
    assert len(db) == 5 and torch.allclose(db.delta(keys[1:2]), -res[1:2])
    assert db.remove(["f1", "nope"]) == 1 and len(db) == 4
    assert torch.equal(db.delta(keys[1:2])[0], torch.zeros(4)) or db.retrieve(keys[1:2])[1].item() != 1


def test_hook_leaves_layer_output_exact_below_threshold_and_adds_residual_above(tiny_model, encode):
    site = edit_site(tiny_model, 1)
    prompts, subjects = ["Zed Quill was born in", "Amy Rook plays the"], ["Zed Quill", "Amy Rook"]
    keys = compute_keys(tiny_model, site, encode, prompts, subjects)
    ids = torch.tensor([encode("A windy autumn storm.")])
    captured = {}
    h = site.module.register_forward_hook(lambda m, a, o: captured.__setitem__("out", o.detach().clone()))
    logits_of(tiny_model, ids)
    base_other = captured["out"]
    logits_of(tiny_model, torch.tensor([encode(prompts[0])]))
    base_edit = captured["out"]
    stats = KeyStats(torch.eye(64, dtype=torch.float64), torch.zeros(64), torch.eye(64, dtype=torch.float64))
    res = torch.randn(2, 32, generator=torch.Generator().manual_seed(3))
    h.remove()
    edit = apply_edit(tiny_model, site, "neuraldb", ids=["a", "b"], keys=keys, residuals=res, stats=stats, gamma=0.999)
    h = site.module.register_forward_hook(lambda m, a, o: captured.__setitem__("out", o.detach().clone()))
    logits_of(tiny_model, ids)
    new_other = captured["out"]
    logits_of(tiny_model, torch.tensor([encode(prompts[0])]))
    new_edit = captured["out"]
    pos = len(encode("Zed Quill")) - 1
    db = edit.db
    assert db.retrieve(keys[:1])[2].item() == 1.0
    # below the threshold everywhere in the unrelated sentence: identical output, bit for bit
    assert torch.equal(new_other, base_other)
    # at the subject's last token the stored residual is added; other positions of the prompt are unchanged
    assert torch.allclose(new_edit[0, pos], base_edit[0, pos] + res[0], atol=1e-5)
    assert torch.equal(new_edit[0, :pos], base_edit[0, :pos])
    edit.undo()
    logits_of(tiny_model, torch.tensor([encode(prompts[0])]))
    assert torch.equal(captured["out"], base_edit)  # removing the edit restores the original output
    h.remove()


@pytest.mark.parametrize("method", ["memit", "alphaedit"])
def test_undo_restores_weights_exactly(tiny_model, method):
    site = edit_site(tiny_model, 0)
    w = site.weight.clone()
    g = torch.Generator().manual_seed(0)
    k0 = torch.randn(500, 16, generator=g) @ torch.randn(16, 64, generator=g)  # low rank: a null space exists
    stats = KeyStats.from_keys(k0)
    edit = apply_edit(
        tiny_model,
        site,
        method,
        ids=["a"],
        keys=torch.randn(1, 64, generator=g),
        residuals=torch.randn(1, 32, generator=g),
        stats=stats,
        mom2_weight=1.0,
        alpha=1.0,
    )
    assert not torch.equal(site.weight, w)
    edit.undo()
    assert torch.equal(site.weight, w)


def test_bad_inputs_are_clear_errors(tiny_model):
    with pytest.raises(ParamsError, match="layer: 7 is out of range; the model has layers 0..1"):
        edit_site(tiny_model, 7)
    with pytest.raises(DataError, match="unsupported architecture"):
        edit_site(torch.nn.Linear(3, 3), 0)
    with pytest.raises(ParamsError, match="gate"):
        NeuralKVDB(torch.zeros(4), gamma=0.5, gate="fuzzy")
    db = NeuralKVDB(torch.zeros(4), gamma=0.5)
    with pytest.raises(DataError, match="width"):
        db.add(["a"], torch.ones(1, 5), torch.ones(1, 2))


def test_checkpoint_from_another_architecture_is_refused(tiny_model, tmp_path):
    from components.models.tiny_lm import load_model, save_model
    from flows.neuraldb.edit import check_checkpoint

    with pytest.raises(DataError, match="n_layers 2 \\(expected 4\\)"):
        check_checkpoint(tiny_model, vocab_size=128, n_layers=4, d_ff=64)
    check_checkpoint(tiny_model, vocab_size=128, n_layers=2, d_ff=64)  # the matching one passes
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf/config.json").write_text('{"model_type": "gpt2", "n_layer": 48}')
    with pytest.raises(DataError, match="not a paperline-tiny-lm config"):
        load_model(tmp_path / "hf")
    save_model(tiny_model, tmp_path / "ok")
    assert load_model(tmp_path / "ok").config.n_layers == 2


def test_hnsw_index_finds_the_exact_search_match_and_keeps_the_gate():
    pytest.importorskip("faiss")
    g = torch.Generator().manual_seed(3)
    keys, res = torch.randn(3000, 32, generator=g), torch.randn(3000, 8, generator=g)
    exact = NeuralKVDB(torch.zeros(32), gamma=0.9)
    approx = NeuralKVDB(torch.zeros(32), gamma=0.9, index="hnsw")
    for db in (exact, approx):
        db.add([f"f{i}" for i in range(3000)], keys, res)
    queries = keys[:500] + 0.05 * torch.randn(500, 32, generator=g)  # near a stored key: above the gate
    _, j_exact, _ = exact.retrieve(queries)
    _, j_approx, g_approx = approx.retrieve(queries)
    assert (j_exact == j_approx).float().mean() > 0.98 and (g_approx == 1).float().mean() > 0.98
    far = torch.randn(200, 32, generator=g)  # unrelated keys: below the gate, nothing added
    assert torch.equal(approx.delta(far), torch.zeros(200, 8))
    approx.remove(["f0"])  # the graph is rebuilt after the table changes
    _, j, _ = approx.retrieve(keys[:1])
    assert approx.ids[int(j)] != "f0"


def test_unknown_index_is_a_params_error():
    with pytest.raises(ParamsError, match="index"):
        NeuralKVDB(torch.zeros(4), gamma=0.5, index="annoy")
