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
from components.errors import DataError
from components.io import read_jsonl, write_json, write_jsonl
from components.models.tiny_lm import load_model, save_model
from components.training.qa_lm import batch_stream, check_vocab, collate, encode_pairs, nll_per_example, pair_stream
from components.training.threads import set_threads
from components.training.tokenizer import eos_id, load_bpe
from components.unlearning import make_config, run_method
from components.unlearning.lm_eval import evaluate_model
from components.unlearning.metrics import forget_quality, model_utility
from flows.ofmu import champion
from flows.ofmu import tune as T
from flows.ofmu.common import eval_splits, log
from flows.ofmu.params import Params
from flows.ofmu.spec import DATA, MODELS, UNLEARN
from flows.runtime.stages import StageContext
from flows.runtime.tracking import LM_LOADER, NEXT_TOKEN, TOKEN_IDS

RUN_SUITE = [
    V.columns_present(["method", "seed", "budget", "used"]),
    V.in_set("spent_exactly", [True]),
    V.between("steps", min_value=0),
]
ITEM_SUITE = [
    V.not_null("prob"),
    V.between("prob", 0, 1),
    V.between("rouge", 0, 1),
    V.between("tr", min_value=0),
    V.finite("tr"),
]


def item_rows(model_name: str, seed: int, metrics: dict, splits: dict) -> list[dict]:
    rows = []
    for split, vals in metrics.items():
        for i, r in enumerate(splits[split]):
            rows.append(
                {
                    "model": model_name,
                    "seed": seed,
                    "split": split,
                    "item": r["id"],
                    **{k: float(vals[k][i]) for k in ("prob", "rouge", "tr")},
                }
            )
    return rows


def _enc(tok, rows):
    return encode_pairs(tok, [r["question"] for r in rows], [r["answer"] for r in rows], eos_id(tok))


def _streams(tok, forget_rows, retain_rows, bs: int, seed: int):
    return pair_stream(
        batch_stream(_enc(tok, forget_rows), bs, 0, seed=2 * seed + 1),
        batch_stream(_enc(tok, retain_rows), bs, 0, seed=2 * seed + 2),
    )


def forget_loss_of(model, tok, forget_rows) -> float:
    """Mean answer NLL of ``model`` on the forget rows: GA's early-stop threshold when ``model`` is Retrain."""
    with torch.no_grad():
        nll = [
            nll_per_example(model.eval(), collate(_enc(tok, forget_rows)[i : i + 64], pad=0))
            for i in range(0, len(forget_rows), 64)
        ]
    return float(torch.cat(nll).mean())


def options_for(p, spec, ga_stop: float | None) -> dict:
    """The method's options, with GA's early-stop threshold filled in when ``unlearn.ga_stop`` asks for it."""
    if spec.kind == "ga" and p.unlearn.ga_stop == "retrain" and spec.options.get("stop_loss_f") is None:
        return {**spec.options, "stop_loss_f": ga_stop}
    return dict(spec.options)


def run_one(
    p, tok, base, name: str, spec, seed: int, splits, forget_rows, retain_rows, ga_stop: float | None = None
) -> tuple[dict, list[dict], list[dict], tuple]:
    """One method on one seed: its run record, step history, item rows, and (model, metrics)."""
    model = copy.deepcopy(base)
    torch.manual_seed(seed)
    opts = options_for(p, spec, ga_stop)
    res = run_method(
        spec.kind,
        model,
        cfg=make_config(spec.kind, opts),
        forget_loss=nll_per_example,
        retain_loss=nll_per_example,
        batches=_streams(tok, forget_rows, retain_rows, p.unlearn.batch_size, seed),
        budget=p.unlearn.budget,
        ref_model=base,
    )
    metrics = evaluate_model(model, tok, splits, eos=eos_id(tok), max_new=p.unlearn.max_new)
    run = {
        **res.to_dict(),
        "method": name,
        "kind": spec.kind,
        "seed": seed,
        "options": opts,
        "spent_exactly": res.used == res.budget or res.stopped,
    }
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
    forget_rows = [r for r in rows if r["split"] == "forget"]
    retain_rows = [r for r in rows if r["split"] == "retain"]
    ga_stop = forget_loss_of(retain, tok, forget_rows)
    out = ctx.output_dir(UNLEARN)
    methods = p.unlearn.methods
    if p.unlearn.tune:
        methods = tune_lm(p, tok, rows, base, out)
    items, runs, hist = [], [], []
    for name, model in (("base", base), ("retain", retain)):
        items += item_rows(
            name, -1, evaluate_model(model, tok, splits, eos=eos_id(tok), max_new=p.unlearn.max_new), splits
        )
    chosen = None
    for seed in p.unlearn.seeds:
        for name, spec in methods.items():
            r, h, it, (model, metrics) = run_one(
                p, tok, base, name, spec, seed, splits, forget_rows, retain_rows, ga_stop
            )
            runs.append(r)
            hist += h
            items += it
            if ctx.tracker is not None:
                ctx.tracker.log_metrics(
                    {f"lm/{name}/seed{seed}/seconds": r["seconds"], f"lm/{name}/seed{seed}/steps": r["steps"]}
                )
            if name == champion.METHOD and chosen is None:
                chosen = (f"{name}-seed{seed}", save_model(model, out / "champion"), metrics)
    V.validate(
        pd.DataFrame(runs), RUN_SUITE, name="ofmu/runs", result_path=out / "_checks" / "runs.json", id_column=None
    )
    V.validate(
        pd.DataFrame(items), ITEM_SUITE, name="ofmu/items", result_path=out / "_checks" / "items.json", id_column="item"
    )
    write_jsonl(out / "items.jsonl", items)
    write_jsonl(out / "runs.jsonl", runs)
    write_jsonl(out / "history.jsonl", hist)
    summary = {
        "runs": len(runs),
        "items": len(items),
        "seconds": round(sum(r["seconds"] for r in runs), 1),
        "ga_stop_loss_f": ga_stop,
        "ga_stopped": sum(r["stopped"] for r in runs if r["kind"] == "ga"),
    }
    write_json(out / "summary.json", summary)
    if chosen is not None:
        name, folder, metrics = chosen
        settings = {
            "qa": f"{DATA}/qa.jsonl",
            "tokenizer": f"{DATA}/tokenizer.json",
            "n_eval_retain": p.data.n_eval_retain,
            "max_new": p.unlearn.max_new,
        }
        summary = {**summary, "champion": champion.candidate(_log_champion(ctx, name, folder), name, metrics, settings)}
    return summary


def tune_lm(p, tok, rows, base, out) -> dict:
    """The dev sweep (``unlearn.tune``): a reference model without the dev authors, every setting of every tuned
    method on the tune seeds, the rule of :mod:`flows.ofmu.tune`; writes ``tune.jsonl``; the methods as picked."""
    from flows.ofmu.train import train_one

    dev_forget = [r for r in rows if r.get("dev")]
    if not dev_forget:
        raise DataError("unlearn.tune: qa.jsonl has no dev authors (rerun the data stage)")
    dev_retain = [r for r in rows if r["split"] == "retain" and not r.get("dev")]
    ref, _ = train_one(p, tok, [r for r in rows if not r.get("dev")], "dev-reference")
    splits = {
        "forget": dev_forget,
        "retain": dev_retain[-p.data.n_eval_retain :],
        "general": [r for r in rows if r["split"] == "general"],
    }
    ref_tr = evaluate_model(ref, tok, {"forget": dev_forget}, eos=eos_id(tok), max_new=p.unlearn.max_new)["forget"][
        "tr"
    ]
    ga_stop = forget_loss_of(ref, tok, dev_forget)

    def one(name, spec, seed) -> dict:
        run, _, _, (_, m) = run_one(p, tok, base, name, spec, seed, splits, dev_forget, dev_retain, ga_stop)
        return {
            "seed": seed,
            "mu": model_utility({s: m[s] for s in ("retain", "general")}),
            "fq": forget_quality(m["forget"]["tr"], ref_tr),
            "stopped": run["stopped"],
        }

    chosen, recs = T.sweep(
        p.unlearn.tune,
        p.unlearn.methods,
        p.unlearn.tune_seeds,
        one,
        T.aggregate_lm,
        lambda rs: T.pick_lm(rs, p.unlearn.tune_fq_min),
    )
    write_jsonl(out / "tune.jsonl", recs)
    log.info("ofmu tune (dev authors): %s", chosen)
    return T.apply(p.unlearn.methods, chosen)


def _log_champion(ctx: StageContext, name: str, folder) -> str | None:
    """The champion's MLflow child run with its model (the allow-listed TinyLM loader); its run id."""
    return ctx.log_model(
        f"lm-{name}", {"method": champion.METHOD}, folder, loader=LM_LOADER, inputs=TOKEN_IDS, outputs=NEXT_TOKEN
    )
