"""Stage ``report``: claims C1-C4, POPE / CHAIR / MME-style tables per method, the claim CIs, the augmentations
chosen, the training curves, and example scenes with each method's answers and captions (where hallucinations
happen)."""

from __future__ import annotations

import io

import numpy as np

from components.inputs import load_npz
from components.io import read_json, read_jsonl
from components.reporting import Section
from components.reporting.plots import bar_plot, errorbar_plot, line_plot
from components.selfaug_decoding import metrics as MT
from flows.runtime.report_stage import finish_report
from flows.runtime.stages import StageContext
from flows.selfaug_decoding.claims import CLAIMS, all_claims
from flows.selfaug_decoding.params import Params
from flows.selfaug_decoding.spec import DATA, MODELS, RUNS

SPLITS = ("random", "popular", "adversarial")


def pope_table(pope: list[dict], methods: list[str]) -> list[dict]:
    rows = []
    for m in methods:
        for s in SPLITS:
            sub = [r for r in pope if r["method"] == m and r["split"] == s]
            if sub:
                v = MT.pope([r["pred_yes"] for r in sub], [r["label"] == "yes" for r in sub])
                rows.append({"method": m, "split": s, **{k: round(100 * x, 2) for k, x in v.items()}})
    return rows


def chair_table(caps: list[dict], methods: list[str]) -> list[dict]:
    out = []
    for m in methods:
        sub = [r for r in caps if r["method"] == m]
        if sub:
            v = MT.chair([r["caption"].split() for r in sub], [r["truth"] for r in sub])
            betas = [r["mean_beta"] for r in sub if r["mean_beta"] is not None]
            out.append({"method": m, **{k: round(100 * x, 2) for k, x in v.items()},
                        "mean beta": round(float(np.mean(betas)), 3) if betas else None,
                        "mean candidates": round(float(np.mean([r["mean_candidates"] for r in sub])), 2)})  # fmt: skip
    return out


def mme_table(mme: list[dict], methods: list[str]) -> list[dict]:
    out = []
    for m in methods:
        res = MT.mme([r for r in mme if r["method"] == m])
        out.append({"method": m, **{f"{qt} acc": round(100 * v["acc"], 1) for qt, v in res.items()},
                    **{f"{qt} acc+": round(100 * v["acc_plus"], 1) for qt, v in res.items()}})  # fmt: skip
    return out


def _examples_figure(images: np.ndarray, offset: int, ids: list[int]):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(2.0 * len(ids), 2.2))
    for k, i in enumerate(ids):
        ax = fig.add_subplot(1, len(ids), k + 1)
        ax.imshow(images[i - offset], interpolation="nearest")
        ax.set_title(f"scene {i}", fontsize=8)
        ax.axis("off")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    return buf.getvalue()


def examples(pope, caps, methods, seed) -> tuple[list[int], list[dict]]:
    """Adversarial negatives where greedy says yes (the hallucinations), with every method's answer, and the
    same scenes' captions where captioned."""
    adv = [r for r in pope if r["seed"] == seed and r["split"] == "adversarial" and r["label"] == "no"]
    hall = [r for r in adv if r["method"] == "greedy" and r["pred_yes"]][:4]
    by = {(r["method"], r["question_id"]): r for r in adv}
    rows = []
    for h in hall:
        row = {"scene": h["image"], "question": f"is there a {h['shape']}?", "truth": "no"}
        row.update({m: by[(m, h["question_id"])]["answer"] for m in methods if (m, h["question_id"]) in by})
        rows.append(row)
    cap_ids = sorted({r["image"] for r in caps if r["seed"] == seed})[:3]
    for i in cap_ids:
        truth = next(r["truth"] for r in caps if r["image"] == i)
        row = {"scene": i, "question": "describe", "truth": " ".join(truth)}
        row.update({r["method"]: r["caption"] for r in caps if r["image"] == i and r["seed"] == seed})
        rows.append(row)
    return [h["image"] for h in hall] + cap_ids, rows


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    methods = list(p.decoding.methods)
    pope = read_jsonl(ctx.input(f"{RUNS}/pope.jsonl"))
    mme = read_jsonl(ctx.input(f"{RUNS}/mme.jsonl"))
    caps = read_jsonl(ctx.input(f"{RUNS}/captions.jsonl"))
    results = all_claims(p, pope, mme, caps)

    pt = pope_table(pope, methods)
    ct = chair_table(caps, methods)
    mt = mme_table(mme, methods)
    adv = {r["method"]: r["f1"] for r in pt if r["split"] == "adversarial"}
    fig_pope = bar_plot(adv, ylabel="F1 (points)", title="POPE adversarial F1 per method")
    fig_chair = bar_plot({r["method"]: r["chair_i"] for r in ct}, ylabel="CHAIR_i (points)", title="CHAIR_i")
    effects = [(r.id, r) for r in results if r.effect is not None]
    fig_ci = errorbar_plot([i for i, _ in effects], [r.effect for _, r in effects],
                           [r.ci_low for _, r in effects], [r.ci_high for _, r in effects],
                           xlabel="effect (points)", title="Claim effects with 95% CIs")  # fmt: skip
    curves = {f"seed {s}": read_json(ctx.input(f"{MODELS}/seed_{s}.json")) for s in p.model.seeds}
    fig_loss = line_plot({k: ([c[0] for c in v["curve"]], [c[1] for c in v["curve"]]) for k, v in curves.items()},
                         xlabel="step", ylabel="train loss", title="Tiny VLM training")  # fmt: skip
    aug_use = {}
    for m in ("vacode", "selfaug", "sas_only"):
        sub = [r["aug"] for r in pope if r["method"] == m]
        if sub:
            aug_use[m] = {a: sub.count(a) for a in sorted(set(sub))}
    data = load_npz(ctx.input(f"{DATA}/eval_images.npz"), keys=("images", "offset"))
    ids, ex_rows = examples(pope, caps, methods, p.model.seeds[0])
    figs = [("examples", _examples_figure(data["images"], int(data["offset"]), ids), "example scenes")] if ids else []
    per_type = results[1].details.get("mme_accuracy_gain_by_type", {})
    sections = [
        Section("POPE", "Accuracy, precision, recall, F1, yes-ratio and false-yes rate (points) per method and "
                "split. The adversarial negatives ask for the shape that co-occurs most with the present ones "
                "(the designed trap: a circle beside a triangle).", figures=[("pope", fig_pope, "adversarial F1")],
                tables=[pt]),
        Section("CHAIR", "CHAIR_s, CHAIR_i and object recall of the captions (points); SAT's mean beta and mean "
                "candidate-set size per step.", figures=[("chair", fig_chair, "CHAIR_i")], tables=[ct]),
        Section("MME-style accuracy", "Yes/no pairs per category: acc (questions) and acc+ (both questions of a "
                "scene right). C2's per-type gain of SAS-only over VCD (points, paired bootstrap CI): "
                + "; ".join(f"{k} {v['gain']:+.2f} [{v['ci'][0]:+.2f}, {v['ci'][1]:+.2f}]"
                            for k, v in per_type.items()), tables=[mt]),
        Section("Claims", "Effects (method - baseline, points) with their CIs.", figures=[("claims", fig_ci, "CIs")]),
        Section("Augmentations chosen", "How often each augmentation was used on the POPE questions (VACoDe "
                "chooses by the L2 distance of the first-step distributions; SAS by the rule map).",
                tables=[[{"method": m, **v} for m, v in aug_use.items()]]),
        Section("Training", "Loss per seed; the last-quarter relative drop shows the plateau: "
                + ", ".join(f"{k}: {v['last_quarter_drop']:.3f}" for k, v in curves.items()),
                figures=[("loss", fig_loss, "training loss")]),
        Section("Examples", "Adversarial negatives where greedy decoding hallucinates, with every method's "
                "answer, and captions of held-out scenes.", figures=figs, tables=[ex_rows] if ex_rows else []),
    ]  # fmt: skip
    metrics = {"pope_f1": {f"{r['method']}.{r['split']}": r["f1"] for r in pt},
               "chair_i": {r["method"]: r["chair_i"] for r in ct}}  # fmt: skip
    plots = [{"method": r["method"], "split": r["split"], "f1": r["f1"]} for r in pt]
    return finish_report(ctx, CLAIMS, results, metrics=metrics, sections=sections,
                         plots={"pope.csv": (plots, ["method", "split", "f1"])})  # fmt: skip
