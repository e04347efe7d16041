"""Stage ``controls``: the positive and negative control transformers (4 layers, d = 128 by default), one pair per
seed, trained on the synthetic couplet languages; loss curves kept, each model logged in its own MLflow child run.

The stage returns the champion (``champion.py``: the positive control of the first seed with its greedy steering
metrics) for the recurring evaluation. Training is shown at a plateau in the report: the mean loss of the last 10%
of steps against the 10% before.
"""

from __future__ import annotations

import time

import numpy as np

from components.implicit_planning.couplets import LANGUAGES, CoupletLanguage, train_control
from components.io import write_json, write_jsonl
from components.models.tiny_lm import save_model
from components.training.threads import set_threads
from flows.implicit_planning import champion
from flows.implicit_planning.params import Params
from flows.implicit_planning.spec import CONTROLS
from flows.runtime.stages import StageContext
from flows.runtime.tracking import LM_LOADER, TOKEN_IDS, Tensor


def plateau(losses: list[float]) -> dict:
    """Mean loss over the last tenth of the steps and over the tenth before it."""
    k = max(1, len(losses) // 10)
    last, prev = float(np.mean(losses[-k:])), float(np.mean(losses[-2 * k : -k] or losses[-k:]))
    return {"loss_last": last, "loss_prev": prev, "rel_change": (prev - last) / max(abs(prev), 1e-9)}


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    c = p.control
    set_threads(p.resources.threads)
    lang = CoupletLanguage(words_per_family=c.words_per_family, n_families=c.n_families)
    out = ctx.output_dir(CONTROLS)
    rows, curves, run_ids = [], [], {}
    for seed in p.data.seeds:
        for language in LANGUAGES:
            t0, c0 = time.time(), time.process_time()
            model, losses = train_control(
                lang,
                language,
                seed=seed,
                steps=c.steps,
                batch_size=c.batch_size,
                lr=c.lr,
                n_sequences=c.n_sequences,
                d_model=c.d_model,
                n_layers=c.n_layers,
            )
            name = f"{language}-s{seed}"
            save_model(model, out / name)
            info = {
                "model": name,
                "language": language,
                "seed": seed,
                "steps": c.steps,
                "seconds": time.time() - t0,
                "cpu_seconds": time.process_time() - c0,
                **plateau(losses),
            }
            rows.append(info)
            every = max(1, len(losses) // 100)
            curves += [{"model": name, "step": i, "loss": losses[i]} for i in range(0, len(losses), every)]
            run_ids[name] = ctx.log_model(
                name,
                {"language": language, "seed": seed, **c.model_dump(exclude={"pairs"})},
                out / name,
                loader=LM_LOADER,
                inputs=TOKEN_IDS,
                outputs=Tensor("logits", "float32", (-1, -1, len(lang.vocab))),
                metrics={k: info[k] for k in ("loss_last", "rel_change", "seconds")},
                curves={"train_loss": [(i, losses[i]) for i in range(0, len(losses), every)]},
            )
    write_jsonl(out / "models.jsonl", rows)
    write_jsonl(out / "curves.jsonl", curves)
    write_json(out / "language.json", {"vocab": list(lang.vocab), "families": list(lang.families)})
    language, seed = champion.choose(p)  # the positive control of the first seed, re-evaluated greedily
    name = f"{language}-s{seed}"
    return {"models": len(rows), "champion": champion.candidate(p, run_ids.get(name), out / name, ctx.paths.root)}
