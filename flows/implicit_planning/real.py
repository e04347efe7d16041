"""Stage ``real``: the real model (SmolLM2-135M-Instruct by default, offline through the causal-LM loader).

Couplets: for every family pair RF1 -> RF2 of ``steer.real_pairs`` and every sampling seed, the steering vector
from the training first lines, the layer chosen on training prompts by the logit metric (swept over
``steer.real_layers``), and line 2 sampled unsteered / steered / random on the test lines. QA: article flips on the
noun pairs. With ``steer.gemma3`` on, Gemma3-270M (``google/gemma-3-270m``, Gemma terms; a hub id, so online
only) runs the same experiment after SmolLM2, its rows labelled ``gemma3-270m`` (rates in the report, no claim of its
own); every model is loaded before any work, hub ids first, so an offline run stops at once naming the id. With
``data.real`` off (smoke) the stage writes only ``timing.json`` (skipped) and the real-model
claims are reported as not testable.
"""

from __future__ import annotations

import time

from components.implicit_planning import qa as Q
from components.implicit_planning.steering import run_pair, run_qa
from components.implicit_planning.tasks import hf_couplet_task
from components.interp.lm import SteerableLM
from components.io import read_jsonl, write_json, write_jsonl
from components.models.causal_lm import load_causal_lm
from components.training.threads import set_threads
from flows.implicit_planning.params import Params
from flows.implicit_planning.spec import DATA, REAL
from flows.implicit_planning.steer import layer_rows, lines_of
from flows.runtime.stages import StageContext

PRIMARY = "smollm2"  # the label of steer.real_model's rows (the claims read it)
GEMMA3_ID = "google/gemma-3-270m"


def real_models(s) -> list[tuple[str, str]]:
    """(label, loader spec) of every real model of the stage: steer.real_model, then Gemma3-270M behind its flag."""
    return [(PRIMARY, s.real_model)] + ([("gemma3-270m", GEMMA3_ID)] if s.gemma3 else [])


def load_models(models: list[tuple[str, str]], cache_dir, *, offline: bool) -> dict[str, tuple]:
    """Every model loaded before any work; hub ids first (offline they fail at once, naming the id)."""
    order = sorted(models, key=lambda m: m[1] == "smollm2-135m-instruct")
    return {label: load_causal_lm(spec, cache_dir=cache_dir, offline=offline) for label, spec in order}


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    d, s = p.data, p.steer
    out = ctx.output_dir(REAL)
    if not d.real:
        write_json(out / "timing.json", {"skipped": True})
        return {"skipped": True}
    set_threads(p.resources.threads)
    from flows.runtime.settings import online

    loaded = load_models(real_models(s), ctx.paths.cache / "models", offline=not online())
    lines = read_jsonl(ctx.input(f"{DATA}/real_lines.jsonl"))
    nouns = read_jsonl(ctx.input(f"{DATA}/qa.jsonl"))
    rows, layers, qa_rows, timing = [], [], [], {}
    for label, (model, tok) in loaded.items():
        r, ly, q, t = experiment(p, label, model, tok, lines, nouns)
        rows, layers, qa_rows = rows + r, layers + ly, qa_rows + q
        timing |= {f"{label}_{k}" if label != PRIMARY else k: v for k, v in t.items()}
    write_jsonl(out / "generations.jsonl", rows)
    write_jsonl(out / "layers.jsonl", layers)
    write_jsonl(out / "qa.jsonl", qa_rows)
    write_json(out / "timing.json", timing)
    return {"generations": len(rows), "qa": len(qa_rows)}


def experiment(p: Params, label: str, model, tok, lines: list[dict], nouns: list[dict]):
    """Couplets and QA for one real model: (generation rows, layer-sweep rows, QA rows, timing)."""
    d, s = p.data, p.steer
    n_layers = model.config.num_hidden_layers + 1
    bad = [x for x in s.real_layers if x >= n_layers]
    if bad:
        from components.errors import ParamsError

        raise ParamsError(f"steer.real_layers: {bad} beyond {label}'s residual layers 0..{n_layers - 1}")
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    lm = SteerableLM(model, pad_id=pad)
    families = sorted({f for pr in s.real_pairs for f in pr})
    task = hf_couplet_task(tok, families, position=s.position)
    rows, layers, timing = [], [], {}
    t0 = time.time()
    for rf1, rf2 in s.real_pairs:
        train1 = lines_of(lines, rf1, "train")
        chosen, chosen_m = None, s.multiplier
        for seed in d.seeds:
            res = run_pair(
                lm,
                task,
                rf1=rf1,
                rf2=rf2,
                train_from=train1,
                train_to=lines_of(lines, rf2, "train"),
                select_lines=train1[: d.lines_select],
                test_lines=lines_of(lines, rf1, "test"),
                layers=s.real_layers,
                multiplier=chosen_m,
                multipliers=s.multipliers,
                samples=s.samples,
                max_new_tokens=s.max_new_tokens,
                temperature=s.temperature,
                seed=seed,
                batch_size=s.batch_size,
                kl_threshold=s.kl_threshold,
                layer=chosen,
            )
            if chosen is None:  # the logit metric is deterministic: (m, layer) chosen once per pair
                chosen, chosen_m = res.layer, res.multiplier
                layers += layer_rows(label, res, rf1, rf2)
            rows += [{"model": label, **r} for r in res.rows]
    timing["couplets_s"] = time.time() - t0
    t0 = time.time()
    qa_rows, qa_scores, qa_layer = run_qa(
        lm,
        tok,
        nouns,
        layers=s.real_layers,
        multiplier=s.multiplier,
        multipliers=s.multipliers,
        samples=s.qa_samples,
        temperature=s.temperature,
        seeds=d.seeds,
        batch_size=s.batch_size,
        prompt=Q.PROMPT,
    )
    timing["qa_s"] = time.time() - t0
    qa_m = max(qa_scores, key=qa_scores.get)[0]
    layers += [
        {
            "model": f"{label}-qa",
            "rf1": "",
            "rf2": "",
            "multiplier": m,
            "layer": k,
            "score": v,
            "chosen": int(k == qa_layer and m == qa_m),
            "norm": 0.0,
        }
        for (m, k), v in qa_scores.items()
    ]
    return rows, layers, [{"model": label, **r} for r in qa_rows], timing
