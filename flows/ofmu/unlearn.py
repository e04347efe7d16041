"""Stage ``unlearn``: every LM method at the matched gradient-evaluation budget, per seed, and its TOFU metrics.

Writes under ``data/ofmu/unlearn/``: ``items.jsonl`` (per model, seed, split and
question: prob, rouge, tr), ``runs.jsonl`` (evaluations spent, steps, seconds),
``history.jsonl`` (per step: losses and cos(g_f, g_r)) and GX results in ``_checks/``.
The seed drives the batch order; base and Retrain models are shared by all seeds.
"""

from __future__ import annotations

import copy

import pandas as pd
import torch

from components.data import validate as V
from components.io import read_jsonl, write_json, write_jsonl
from components.models.tiny_lm import load_model, save_model
from components.training.tokenizer import eos_id, load_bpe
from components.unlearning import make_config, run_method
from components.unlearning.lm import batch_stream, check_vocab, encode_pairs, nll_per_example, pair_stream
from components.unlearning.lm_eval import evaluate_model
from flows.ofmu import champion
from flows.ofmu.common import eval_splits, lm_signature, log, set_threads
from flows.ofmu.params import Params
from flows.ofmu.spec import DATA, MODELS, UNLEARN
from flows.runtime.stages import StageContext

RUN_SUITE = [V.columns_present(["method", "seed", "budget", "used"]), V.in_set("spent_exactly", [True]),
             V.between("steps", min_value=0)]
ITEM_SUITE = [V.not_null("prob"), V.between("prob", 0, 1), V.between("rouge", 0, 1), V.between("tr", min_value=0),
              V.finite("tr")]


def item_rows(model_name: str, seed: int, metrics: dict, splits: dict) -> list[dict]:
    rows = []
    for split, vals in metrics.items():
        for i, r in enumerate(splits[split]):
            rows.append({"model": model_name, "seed": seed, "split": split, "item": r["id"],
                         **{k: float(vals[k][i]) for k in ("prob", "rouge", "tr")}})
    return rows


def _streams(tok, rows, bs: int, seed: int):
    eos = eos_id(tok)
    def enc(split):
        sel = [r for r in rows if r["split"] == split]
        return encode_pairs(tok, [r["question"] for r in sel], [r["answer"] for r in sel], eos)
    return pair_stream(batch_stream(enc("forget"), bs, 0, seed=2 * seed + 1), batch_stream(enc("retain"), bs, 0, seed=2 * seed + 2))


def run_one(p, tok, rows, base, name: str, spec, seed: int, splits) -> tuple[dict, list[dict], list[dict], tuple]:
    """One method on one seed: its run record, step history, item rows, and (model, metrics)."""
    model = copy.deepcopy(base)
    torch.manual_seed(seed)
    res = run_method(spec.kind, model, cfg=make_config(spec.kind, spec.options), forget_loss=nll_per_example,
                     retain_loss=nll_per_example, batches=_streams(tok, rows, p.unlearn.batch_size, seed),
                     budget=p.unlearn.budget, ref_model=base)
    metrics = evaluate_model(model, tok, splits, eos=eos_id(tok), max_new=p.unlearn.max_new)
    run = {**res.to_dict(), "method": name, "kind": spec.kind, "seed": seed, "spent_exactly": res.used == res.budget}
    hist = [{"method": name, "seed": seed, **h} for h in res.history]
    log.info("ofmu unlearn %s seed %d: %d steps, %d evals, %.1fs", name, seed, res.steps, res.used, res.seconds)
    return run, hist, item_rows(name, seed, metrics, splits), (model, metrics)


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    set_threads(p.resources.threads)
    rows = read_jsonl(ctx.input(f"{DATA}/qa.jsonl"))
    tok = load_bpe(ctx.input(f"{DATA}/tokenizer.json"))
    base, retain = load_model(ctx.input(f"{MODELS}/base")), load_model(ctx.input(f"{MODELS}/retain"))
    check_vocab(base, tok)
    check_vocab(retain, tok)
    splits = eval_splits(rows, p.data.n_eval_retain)
    items, runs, hist = [], [], []
    for name, model in (("base", base), ("retain", retain)):
        items += item_rows(name, -1, evaluate_model(model, tok, splits, eos=eos_id(tok), max_new=p.unlearn.max_new), splits)
    out = ctx.output(UNLEARN)
    out.mkdir(parents=True, exist_ok=True)
    chosen = None
    for seed in p.unlearn.seeds:
        for name, spec in p.unlearn.methods.items():
            r, h, it, (model, metrics) = run_one(p, tok, rows, base, name, spec, seed, splits)
            runs.append(r); hist += h; items += it
            if ctx.tracker is not None:
                ctx.tracker.log_metrics({f"lm/{name}/seed{seed}/seconds": r["seconds"], f"lm/{name}/seed{seed}/steps": r["steps"]})
            if name == champion.METHOD and chosen is None:
                chosen = (f"{name}-seed{seed}", save_model(model, out / "champion"), metrics)
    V.validate(pd.DataFrame(runs), RUN_SUITE, name="ofmu/runs", result_path=out / "_checks" / "runs.json", id_column=None)
    V.validate(pd.DataFrame(items), ITEM_SUITE, name="ofmu/items", result_path=out / "_checks" / "items.json", id_column="item")
    write_jsonl(out / "items.jsonl", items)
    write_jsonl(out / "runs.jsonl", runs)
    write_jsonl(out / "history.jsonl", hist)
    summary = {"runs": len(runs), "items": len(items), "seconds": round(sum(r["seconds"] for r in runs), 1)}
    write_json(out / "summary.json", summary)
    if chosen is not None:
        name, folder, metrics = chosen
        settings = {"qa": f"{DATA}/qa.jsonl", "tokenizer": f"{DATA}/tokenizer.json",
                    "n_eval_retain": p.data.n_eval_retain, "max_new": p.unlearn.max_new}
        summary = {**summary, "champion": champion.candidate(_log_champion(ctx, name, folder), name, metrics, settings)}
    return summary


def _log_champion(ctx: StageContext, name: str, folder) -> str | None:
    """The champion's MLflow child run with its model (the allow-listed TinyLM loader); its run id."""
    if ctx.tracker is None:
        return None
    with ctx.tracker.child(f"lm-{name}", {"method": champion.METHOD}) as rid:
        ctx.tracker.log_state_dict_model(rid, folder, loader="components.models.tiny_lm:load_model", signature=lm_signature())
    return rid
