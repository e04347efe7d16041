"""Stage ``steer``: steering in the control models. For every seed (its own pair of trained control models and
its sampling seed), every control family pair RF1 -> RF2 and both languages: the vector from training lines, the
layer chosen on training prompts by the logit metric, then line 2 sampled unsteered, steered and with the
equal-norm random vector on the test lines; one row per generation with every metric."""

from __future__ import annotations

from components.implicit_planning.couplets import LANGUAGES, CoupletLanguage
from components.implicit_planning.steering import run_pair
from components.implicit_planning.tasks import control_task
from components.interp.lm import SteerableLM
from components.io import read_jsonl, write_jsonl
from components.models.tiny_lm import load_model
from components.training.threads import set_threads
from flows.implicit_planning.params import Params
from flows.implicit_planning.spec import CONTROLS, DATA, STEER
from flows.runtime.stages import StageContext


def lines_of(rows: list[dict], family: str, split: str) -> list[str]:
    return [r["line"] for r in rows if r["family"] == family and r["split"] == split]


def layer_rows(model: str, res, rf1: str, rf2: str, **extra) -> list[dict]:
    """One row per swept layer of a steering run (``run_pair``'s result): its logit-metric score, whether it
    was chosen, the vector's norm; one row per (m, layer) of the sweep; ``extra`` (the seed) follows the model name."""
    return [
        {
            "model": model,
            **extra,
            "rf1": rf1,
            "rf2": rf2,
            "multiplier": m,
            "layer": k,
            "score": v,
            "chosen": int(k == res.layer and m == res.multiplier),
            "norm": res.norm,
        }
        for (m, k), v in res.grid.items()
    ]


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    c, s = p.control, p.steer
    set_threads(p.resources.threads)
    lang = CoupletLanguage(words_per_family=c.words_per_family, n_families=c.n_families)
    task = control_task(lang, position=s.control_position)
    lines = read_jsonl(ctx.input(f"{DATA}/control_lines.jsonl"))
    rows, layers = [], []
    for seed in p.data.seeds:
        for language in LANGUAGES:
            lm = SteerableLM(load_model(ctx.input(f"{CONTROLS}/{language}-s{seed}")), pad_id=0)
            for rf1, rf2 in c.pairs:
                train1 = lines_of(lines, rf1, "train")
                res = run_pair(
                    lm,
                    task,
                    rf1=rf1,
                    rf2=rf2,
                    train_from=train1,
                    train_to=lines_of(lines, rf2, "train"),
                    select_lines=train1[: p.data.lines_select],
                    test_lines=lines_of(lines, rf1, "test"),
                    layers=range(lm.n_layers),
                    multiplier=s.multiplier,
                    multipliers=s.multipliers,
                    samples=s.samples,
                    max_new_tokens=s.max_new_tokens,
                    temperature=s.temperature,
                    seed=seed,
                    batch_size=s.batch_size,
                    kl_threshold=s.kl_threshold,
                )
                rows += [{"model": f"control-{language}", **r} for r in res.rows]
                layers += layer_rows(f"control-{language}", res, rf1, rf2, seed=seed)
    out = ctx.output_dir(STEER)
    write_jsonl(out / "generations.jsonl", rows)
    write_jsonl(out / "layers.jsonl", layers)
    return {"generations": len(rows)}
