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
from components.editing.experiment import (
    EvalConfig,
    causal_trace,
    gamma_sweep,
    key_retrieval,
    pick_best,
    pick_gamma,
    pick_layer,
    run_grid,
    sweep,
    sweep_grid,
)
from components.editing.facts import check_requests
from components.editing.model import cached_encoder, edit_site, generic_keys
from components.editing.targets import compute_targets, tune_lr
from components.errors import DataError
from components.inputs import load_npy
from components.io import read_jsonl, write_json, write_jsonl
from components.training.threads import set_threads
from flows.neuraldb import champion
from flows.neuraldb.params import Params
from flows.neuraldb.spec import DATA, EDITS, MODEL
from flows.runtime.stages import StageContext
from flows.runtime.tracking import NEXT_TOKEN, TOKEN_IDS

log = logging.getLogger("paperline")


def load_base(ctx: StageContext[Params]):
    """(model, encode, decode) of the edited LM: the trained tiny LM, or a Hugging Face model by id."""
    p = ctx.params
    if p.model.base != "tiny":
        from components.models.causal_lm import load_causal_lm

        model, tok = load_causal_lm(p.model.base, cache_dir=ctx.paths.cache / "models")
        return model.eval(), cached_encoder(lambda s: tok(s, add_special_tokens=False)["input_ids"]), tok.decode
    from components.models.tiny_lm import load_model
    from components.training.tokenizer import load_bpe

    tok = load_bpe(ctx.input(DATA) / "tokenizer.json")
    model = load_model(ctx.input(MODEL))
    check_checkpoint(model, vocab_size=tok.get_vocab_size(), n_layers=p.model.n_layers, d_ff=p.model.d_ff)
    return model, cached_encoder(lambda s: tok.encode(s, add_special_tokens=False).ids), tok.decode


def check_checkpoint(model, *, vocab_size: int, n_layers: int, d_ff: int) -> None:
    """A checkpoint from another architecture (or tokenizer) is a DataError naming what differs."""
    want = {"vocab_size": vocab_size, "n_layers": n_layers, "d_ff": d_ff}
    got = {k: getattr(model.config, k, None) for k in want}
    if got != want:
        bad = ", ".join(f"{k} {got[k]} (expected {v})" for k, v in want.items() if got[k] != v)
        raise DataError(f"{MODEL}: checkpoint from another architecture: {bad}; rerun the train stage")


def _tokens(data, name: str, encode, base: str) -> torch.Tensor:
    """Held-out token ids; for a pretrained model the text is decoded and re-encoded with its tokenizer."""
    ids = load_npy(data / f"{name}.npy").astype(np.int64)
    if base == "tiny":
        return torch.from_numpy(ids)
    from components.training.tokenizer import load_bpe

    return torch.tensor(encode(load_bpe(data / "tokenizer.json").decode(ids.tolist())), dtype=torch.long)


def trace_requests(requests: list[dict]) -> list[dict]:
    """Facts for the causal trace: the requests' neighbourhood prompts with their true object.

    As in ROME, the trace is run on facts the model knows: the never-edited neighbour subjects are the ones
    the LM was trained on most (``data.neighbour_repeat``); an edited subject's fact may be unknown to it.
    """
    return [
        {"prompts": [p], "subject": s, "target_true": r["target_true"]}
        for r in requests
        for p, s in zip(r.get("neighborhood_prompts", []), r.get("neighborhood_subjects", []))
    ]


def fixed_kw(e) -> dict:
    """The methods' settings that are never tuned (the sweeps add the ones they tune)."""
    return {"gate": e.gate, "temperature": e.temperature}


def tune(model, site, encode, dev, dev_t, stats, e) -> tuple[dict, dict]:
    """Every method's free settings, each fixed in params or tuned on the dev split by the same rule (the best mean
    of efficacy, paraphrase efficacy and specificity; ties: larger values): NeuralDB's gamma, MEMIT's lambda,
    AlphaEdit's null-space threshold and L2 term (jointly). Returns (settings, the sweeps' rows)."""
    kw = dict(
        model=model,
        site=site,
        encode=encode,
        requests=dev,
        targets=dev_t,
        stats=stats,
        method_kw=fixed_kw(e),
        batch_size=e.batch_size,
    )
    sweeps = {"dev": gamma_sweep(grid=e.gamma_grid, **kw)}
    tuned = {"gamma": e.gamma if e.gamma is not None else pick_gamma(sweeps["dev"])}
    sweeps["mom2_dev"] = (
        [] if e.mom2_weight is not None else sweep(method="memit", param="mom2_weight", grid=e.mom2_grid, **kw)
    )
    tuned["mom2_weight"] = e.mom2_weight if e.mom2_weight is not None else pick_best(sweeps["mom2_dev"], "mom2_weight")
    alphas = [e.alpha] if e.alpha is not None else e.alpha_grid
    nulls = [e.null_threshold] if e.null_threshold is not None else e.null_grid
    grid = [{"null_threshold": t, "alpha": a} for t in nulls for a in alphas]
    sweeps["alphaedit_dev"] = (
        []
        if len(grid) == 1
        else [
            dict(r, **{f"null_{k}": v for k, v in stats.null_space(r["null_threshold"]).items()})
            for r in sweep_grid(method="alphaedit", grid=grid, **kw)
        ]
    )
    tuned.update(grid[0] if len(grid) == 1 else pick_best(sweeps["alphaedit_dev"], ("null_threshold", "alpha")))
    for name, fixed in (
        ("gamma", e.gamma),
        ("mom2_weight", e.mom2_weight),
        ("null_threshold", e.null_threshold),
        ("alpha", e.alpha),
    ):
        log.info("%s = %g (%s)", name, tuned[name], "fixed" if fixed is not None else "tuned on dev")
    return tuned, sweeps


def method_kw(e, tuned: dict) -> dict:
    return {**fixed_kw(e), **tuned}


def choose_layer(model, encode, dev, k0_tokens, p, n_layers) -> tuple[int, list[dict]]:
    """The edited layer (``editing.layer``, or the causal trace's pick with the retrieval check) and the trace rows."""
    e = p.editing
    trace = causal_trace(model, encode, trace_requests(dev)[: e.trace_prompts], n_layers)
    if e.layer is None and e.min_retrieval > 0:
        for t in trace:
            s = edit_site(model, t["layer"])
            mu = generic_keys(model, s, k0_tokens, n_keys=e.k0_tokens, seq_len=p.model.seq_len).mean(0)
            t["retrieval"] = key_retrieval(model, s, encode, dev, mu)
    layer = e.layer if e.layer is not None else pick_layer(trace, min_retrieval=e.min_retrieval)
    return layer, trace


def _target_kw(e) -> dict:
    return dict(
        steps=e.v_steps, weight_decay=e.v_weight_decay, clamp=e.v_clamp, kl_factor=e.v_kl_factor, chunk=e.v_chunk
    )


def choose_v_lr(model, site, encode, dev, e) -> tuple[float, list[dict]]:
    """``editing.v_lr``, or the rate of ``v_lr_grid`` whose dev targets converge best (rows of the sweep)."""
    if e.v_lr is not None:
        return e.v_lr, []
    return tune_lr(model, site, encode, dev[: e.v_lr_facts], e.v_lr_grid, **_target_kw(e))


def _targets(model, site, encode, reqs, e, lr: float):
    return compute_targets(model, site, encode, reqs, lr=lr, progress=True, **_target_kw(e))


def _check_runs(rows: list[dict], result_path) -> None:
    flat = [
        {
            "id": f"{r['seed']}/{r['m']}/{r['method']}",
            "method": r["method"],
            "m": r["m"],
            "efficacy": float(np.nanmean(r["efficacy"])),
            "specificity": float(np.nanmean(r["specificity"])),
            "ppl_nll": float(np.mean(r["ppl_nll"])),
        }
        for r in rows
    ]
    V.validate(
        pd.DataFrame(flat),
        [
            V.unique("id"),
            V.between("efficacy", 0, 1),
            V.between("specificity", 0, 1),
            V.finite("ppl_nll"),
            V.in_set("method", ["unedited", "memit", "alphaedit", "neuraldb"]),
        ],
        name="neuraldb/runs",
        result_path=result_path,
    )


def run(ctx: StageContext[Params]) -> dict:
    p, e = ctx.params, ctx.params.editing
    set_threads(p.resources.threads)
    t0 = time.perf_counter()
    model, encode, decode = load_base(ctx)
    data = ctx.input(DATA)
    dev = check_requests(read_jsonl(data / "dev.jsonl"))
    n_layers = len(model.blocks) if hasattr(model, "blocks") else model.config.num_hidden_layers
    k0_tokens, ppl_tokens = (_tokens(data, name, encode, p.model.base) for name in ("k0_tokens", "ppl_tokens"))
    layer, trace = choose_layer(model, encode, dev, k0_tokens, p, n_layers)
    site = edit_site(model, layer)
    stats = KeyStats.from_keys(
        generic_keys(model, site, k0_tokens, n_keys=e.k0_tokens, seq_len=p.model.seq_len),
        null_threshold=e.null_threshold or 1e-2,
    )
    v_lr, v_lr_rows = choose_v_lr(model, site, encode, dev, e)
    dev_t = _targets(model, site, encode, dev, e, v_lr)
    tuned, sweeps = tune(model, site, encode, dev, dev_t, stats, e)
    kw = method_kw(e, tuned)
    rows, test_sweep, champ = [], [], None
    for i, seed in enumerate(e.seeds):
        reqs = check_requests(read_jsonl(data / f"edits_seed{seed}.jsonl"))[: max(e.m)]
        targets = _targets(model, site, encode, reqs, e, v_lr)
        cfg = EvalConfig(
            ppl_tokens,
            p.model.seq_len,
            e.ppl_windows,
            e.fluency_prompts,
            e.gen_tokens,
            e.batch_size,
            window_shift=i * p.model.seq_len,
        )  # each seed its own held-out windows
        for r in run_grid(
            model,
            site,
            encode,
            decode,
            reqs,
            targets,
            stats,
            ms=e.m,
            methods=e.methods,
            cfg=cfg,
            method_kw=kw,
            progress=True,
            small_batches=e.small_batches,
        ):
            n = len(r["efficacy"])
            rows.append({"seed": seed, **r, "target_nll": targets.final_nll[:n].tolist()})
        if seed == e.seeds[0]:
            champ = (seed, targets)
            k = min(e.sweep_facts or max(e.m), len(reqs))
            test_sweep = gamma_sweep(
                model, site, encode, reqs[:k], targets, stats, e.gamma_grid, method_kw=kw, batch_size=e.batch_size
            )
    out = ctx.output(EDITS)
    (out / "_checks").mkdir(parents=True, exist_ok=True)
    _check_runs(rows, out / "_checks" / "runs.json")
    write_jsonl(out / "runs.jsonl", rows)
    write_json(
        out / "gamma.json",
        {
            **tuned,
            "v_lr": v_lr,
            "v_lr_tuned": e.v_lr is None,
            "v_lr_dev": v_lr_rows,
            "tuned": e.gamma is None,
            "mom2_tuned": e.mom2_weight is None,
            "alphaedit_tuned": e.null_threshold is None or e.alpha is None,
            **sweeps,
            "test_seed0": test_sweep,
            "test_seed0_facts": k,
        },
    )
    null = stats.null_space(tuned["null_threshold"])
    write_json(
        out / "trace.json",
        {
            "layer": layer,
            "layer_from_trace": e.layer is None,
            "trace": trace,
            "min_retrieval": e.min_retrieval,
            "null_space_dim": null["dim"],
            "null_space_energy": null["energy_share"],
            "key_dim": null["key_dim"],
        },
    )
    if p.extended.smollm2:
        from flows.neuraldb.extended import run_smollm2

        write_jsonl(out / "smollm2.jsonl", run_smollm2(ctx, cfg, kw))
    summary = {
        "runs": len(rows),
        **tuned,
        "v_lr": v_lr,
        "null_space_dim": null["dim"],
        "seconds": round(time.perf_counter() - t0, 1),
    }
    if ctx.tracker is not None:
        ctx.tracker.log_metrics(
            {
                f"{r['method']}.m{r['m']}.s{r['seed']}.{k}": float(np.nanmean(r[k]))
                for r in rows
                for k in ("efficacy", "generalisation", "specificity", "ppl_nll")
            }
        )
    write_json(out / "summary.json", summary)
    if champ is not None and p.model.base == "tiny" and champion.METHOD in e.methods:
        summary["champion"] = _champion(ctx, model, site, stats, champ, kw, out)
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
    return ctx.log_model(
        f"edited-{name}",
        {"method": champion.METHOD},
        folder,
        loader=champion.LOADER,
        inputs=TOKEN_IDS,
        outputs=NEXT_TOKEN,
    )
