"""Stage ``edit``: causal trace, generic-key statistics, target values, every method at every m, gamma sweep.

Writes ``data/neuraldb/edits/``: ``runs.jsonl`` (one row per seed, m and method with per-request and
per-window values), ``gamma.json`` (the dev sweep and the chosen gamma, plus the sweep on seed 0's largest
set), ``trace.json`` and ``summary.json``; with ``extended.smollm2`` also ``smollm2.jsonl``.
"""

from __future__ import annotations

import logging
import time

import numpy as np
import pandas as pd
import torch

from components.data import validate as V
from components.editing.apply import KeyStats
from components.editing.experiment import EvalConfig, causal_trace, gamma_sweep, pick_best, pick_gamma, run_grid, sweep
from components.editing.facts import check_requests
from components.editing.model import edit_site, generic_keys
from components.editing.targets import compute_targets
from components.errors import DataError
from components.io import read_jsonl, write_json, write_jsonl
from flows.neuraldb import champion
from flows.neuraldb.params import Params
from flows.neuraldb.spec import DATA, EDITS, MODEL
from flows.runtime.stages import StageContext

log = logging.getLogger("paperline")


def load_base(ctx: StageContext[Params]):
    """(model, encode, decode) of the edited LM: the trained tiny LM, or a Hugging Face model by id."""
    p = ctx.params
    if p.model.base != "tiny":
        from components.models.causal_lm import load_causal_lm

        model, tok = load_causal_lm(p.model.base, cache_dir=ctx.paths.cache / "models")
        return model.eval(), (lambda s: tok(s, add_special_tokens=False)["input_ids"]), tok.decode
    from components.models.tiny_lm import load_model
    from components.training.tokenizer import load_bpe

    tok = load_bpe(ctx.input(DATA) / "tokenizer.json")
    model = load_model(ctx.input(MODEL))
    check_checkpoint(model, vocab_size=tok.get_vocab_size(), n_layers=p.model.n_layers, d_ff=p.model.d_ff)
    return model, (lambda s: tok.encode(s, add_special_tokens=False).ids), tok.decode


def check_checkpoint(model, *, vocab_size: int, n_layers: int, d_ff: int) -> None:
    """A checkpoint from another architecture (or tokenizer) is a DataError naming what differs."""
    want = {"vocab_size": vocab_size, "n_layers": n_layers, "d_ff": d_ff}
    got = {k: getattr(model.config, k, None) for k in want}
    if got != want:
        bad = ", ".join(f"{k} {got[k]} (expected {v})" for k, v in want.items() if got[k] != v)
        raise DataError(f"{MODEL}: checkpoint from another architecture: {bad}; rerun the train stage")


def _tokens(data, name: str, encode, base: str) -> torch.Tensor:
    """Held-out token ids; for a pretrained model the text is decoded and re-encoded with its tokenizer."""
    ids = np.load(data / f"{name}.npy").astype(np.int64)
    if base == "tiny":
        return torch.from_numpy(ids)
    from components.training.tokenizer import load_bpe

    return torch.tensor(encode(load_bpe(data / "tokenizer.json").decode(ids.tolist())), dtype=torch.long)


def trace_requests(requests: list[dict]) -> list[dict]:
    """Facts for the causal trace: the requests' neighbourhood prompts with their true object.

    As in ROME, the trace is run on facts the model knows: the never-edited neighbour subjects are the ones
    the LM was trained on most (``data.neighbour_repeat``); an edited subject's fact may be unknown to it.
    """
    return [{"prompts": [p], "subject": s, "target_true": r["target_true"]}
            for r in requests for p, s in zip(r.get("neighborhood_prompts", []), r.get("neighborhood_subjects", []))]


def fixed_kw(e) -> dict:
    """The methods' settings that are never tuned (the sweeps add the one they tune)."""
    return {"alpha": e.alpha, "gate": e.gate, "temperature": e.temperature}


def method_kw(e, gamma: float, mom2_weight: float) -> dict:
    return {**fixed_kw(e), "gamma": gamma, "mom2_weight": mom2_weight}


def _targets(model, site, encode, reqs, e):
    return compute_targets(model, site, encode, reqs, steps=e.v_steps, lr=e.v_lr, weight_decay=e.v_weight_decay,
                           clamp=e.v_clamp, kl_factor=e.v_kl_factor, chunk=e.v_chunk, progress=True)


def _check_runs(rows: list[dict], result_path) -> None:
    flat = [{"id": f"{r['seed']}/{r['m']}/{r['method']}", "method": r["method"], "m": r["m"],
             "efficacy": float(np.nanmean(r["efficacy"])), "specificity": float(np.nanmean(r["specificity"])),
             "ppl_nll": float(np.mean(r["ppl_nll"]))} for r in rows]
    V.validate(pd.DataFrame(flat), [V.unique("id"), V.between("efficacy", 0, 1), V.between("specificity", 0, 1),
                                    V.finite("ppl_nll"), V.in_set("method", ["unedited", "memit", "alphaedit", "neuraldb"])],
               name="neuraldb/runs", result_path=result_path)


def run(ctx: StageContext[Params]) -> dict:
    p, e = ctx.params, ctx.params.editing
    torch.set_num_threads(p.resources.threads)
    t0 = time.perf_counter()
    model, encode, decode = load_base(ctx)
    data = ctx.input(DATA)
    dev = check_requests(read_jsonl(data / "dev.jsonl"))
    n_layers = len(model.blocks) if hasattr(model, "blocks") else model.config.num_hidden_layers
    trace = causal_trace(model, encode, trace_requests(dev)[: e.trace_prompts], n_layers)
    # the last block's MLP at the subject cannot reach the object's position, so it is never a candidate
    layer = e.layer if e.layer is not None else max(trace[:-1] or trace, key=lambda t: t["effect"])["layer"]
    site = edit_site(model, layer)
    k0_tokens, ppl_tokens = (_tokens(data, name, encode, p.model.base) for name in ("k0_tokens", "ppl_tokens"))
    cfg = EvalConfig(ppl_tokens, p.model.seq_len, e.ppl_windows, e.fluency_prompts, e.gen_tokens, e.batch_size)
    stats = KeyStats.from_keys(generic_keys(model, site, k0_tokens, n_keys=e.k0_tokens, seq_len=p.model.seq_len),
                               null_threshold=e.null_threshold)
    null_dim = int(round(float(torch.trace(stats.projector))))
    dev_t = _targets(model, site, encode, dev, e)
    dev_sweep = gamma_sweep(model, site, encode, dev, dev_t, stats, e.gamma_grid, method_kw=fixed_kw(e),
                            batch_size=e.batch_size)
    gamma = e.gamma if e.gamma is not None else pick_gamma(dev_sweep)
    log.info("neuraldb: gamma = %.3f (%s)", gamma, "fixed" if e.gamma is not None else "tuned on dev")
    mom2_sweep = [] if e.mom2_weight is not None else sweep(
        model, site, encode, dev, dev_t, stats, "memit", "mom2_weight", e.mom2_grid, method_kw=fixed_kw(e),
        batch_size=e.batch_size)
    lam = e.mom2_weight if e.mom2_weight is not None else pick_best(mom2_sweep, "mom2_weight")
    log.info("memit: lambda = %g (%s)", lam, "fixed" if e.mom2_weight is not None else "tuned on dev")
    rows, test_sweep, champ = [], [], None
    for seed in e.seeds:
        reqs = check_requests(read_jsonl(data / f"edits_seed{seed}.jsonl"))[: max(e.m)]
        targets = _targets(model, site, encode, reqs, e)
        for r in run_grid(model, site, encode, decode, reqs, targets, stats, ms=e.m, methods=e.methods, cfg=cfg,
                          method_kw=method_kw(e, gamma, lam), progress=True):
            rows.append({"seed": seed, **r, "target_nll": targets.final_nll[: r["m"]].tolist()})
        if seed == e.seeds[0]:
            champ = (seed, targets)
            test_sweep = gamma_sweep(model, site, encode, reqs, targets, stats, e.gamma_grid,
                                     method_kw=method_kw(e, gamma, lam), batch_size=e.batch_size)
    out = ctx.output(EDITS)
    (out / "_checks").mkdir(parents=True, exist_ok=True)
    _check_runs(rows, out / "_checks" / "runs.json")
    write_jsonl(out / "runs.jsonl", rows)
    write_json(out / "gamma.json", {"gamma": gamma, "tuned": e.gamma is None, "dev": dev_sweep, "test_seed0": test_sweep,
                                    "mom2_weight": lam, "mom2_tuned": e.mom2_weight is None, "mom2_dev": mom2_sweep})
    write_json(out / "trace.json", {"layer": layer, "layer_from_trace": e.layer is None, "trace": trace, "null_space_dim": null_dim,
                                    "key_dim": int(stats.cov.shape[0])})
    if p.extended.smollm2:
        from flows.neuraldb.extended import run_smollm2

        write_jsonl(out / "smollm2.jsonl", run_smollm2(ctx, cfg, method_kw(e, gamma, lam)))
    summary = {"runs": len(rows), "gamma": gamma, "null_space_dim": null_dim, "seconds": round(time.perf_counter() - t0, 1)}
    if ctx.tracker is not None:
        ctx.tracker.log_metrics({f"{r['method']}.m{r['m']}.s{r['seed']}.{k}": float(np.nanmean(r[k]))
                                 for r in rows for k in ("efficacy", "generalisation", "specificity", "ppl_nll")})
    write_json(out / "summary.json", summary)
    if champ is not None and p.model.base == "tiny" and champion.METHOD in e.methods:
        summary["champion"] = _champion(ctx, model, site, stats, champ, method_kw(e, gamma, lam), out)
    return summary


def _champion(ctx: StageContext[Params], model, site, stats, champ, kw: dict, out) -> dict | None:
    """NeuralDB on the first seed's largest edit set, saved with its store (``champion/``), logged, re-evaluated."""
    seed, targets = champ
    m = max(ctx.params.editing.m)
    name = f"{champion.METHOD}-seed{seed}-m{m}"
    folder = champion.save(model, champion.build_store(stats, targets, m, kw), site.layer, out / "champion")
    return champion.candidate(ctx.params, _log_champion(ctx, name, folder), name, folder, seed, m, ctx.paths.root)


def _log_champion(ctx: StageContext[Params], name: str, folder) -> str | None:
    """The champion's MLflow child run with its folder model (the allow-listed NeuralDB loader); its run id."""
    if ctx.tracker is None:
        return None
    from mlflow.models import ModelSignature
    from mlflow.types import Schema, TensorSpec

    sig = ModelSignature(inputs=Schema([TensorSpec(np.dtype("int64"), (-1, -1), "token_ids")]),
                         outputs=Schema([TensorSpec(np.dtype("int64"), (-1,), "next_token")]))
    with ctx.tracker.child(f"edited-{name}", {"method": champion.METHOD}) as rid:
        ctx.tracker.log_state_dict_model(rid, folder, loader=champion.LOADER, signature=sig)
    return rid
