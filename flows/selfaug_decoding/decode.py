"""Stage ``decode``: every decoding method on every trained VLM, with no further training: POPE (three splits),
MME-style yes/no pairs and captions (CHAIR). One grid job per (seed, method) through the kit's
``run_grid``: a killed stage resumes from the jobs that finished, and ``--runner`` fans the jobs out.

Every method sees the same random draws (crop / mask positions, noise) for the same question: the augmentation
generator is seeded by (VLM seed, batch), not by method."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from components.inputs import load_npz
from components.io import read_jsonl, write_json, write_jsonl
from components.selfaug_decoding import decoding as D
from components.selfaug_decoding import model as M
from components.selfaug_decoding.metrics import mentions
from components.selfaug_decoding.scenes import VOCAB, decode
from components.training.threads import threads
from flows.runtime.grid import run_grid
from flows.runtime.stages import StageContext
from flows.selfaug_decoding.params import Params
from flows.selfaug_decoding.spec import DATA, MODELS, RUNS


@dataclass(frozen=True)
class DecodeJob:
    """One grid job: a trained VLM (by seed) and one decoding method, with the files and settings it reads."""

    seed: int
    method: str
    data_dir: str
    model_dir: str
    decoding: dict
    threads: int


@dataclass
class DecodeResult:
    seed: int
    method: str
    pope: list[dict]
    mme: list[dict]
    captions: list[dict]
    tuning: dict


CARD = {"alpha": 1.0, "beta": 0.1, "tau": 0.5}


def grid(method: str, dec: dict) -> list[dict]:
    """The settings tried on the dev split for one method, the card's first: alpha x beta for a fixed cut-off
    (VCD, VACoDe, SAS-only), alpha x tau for SAT (Self-Aug, SAT-only): the same number for every contrastive
    method; greedy has none."""
    if method == "greedy":
        return [{}]
    second = "tau" if D.methods()[method].tau is not None else "beta"
    out = [{"alpha": a, second: v} for a in dec["alpha_grid"] for v in dec[f"{second}_grid"]]
    return sorted(out, key=lambda c: sum(abs(c[k] - CARD[k]) / CARD[k] for k in c))  # the card's setting first


def pope_f1(rows: list[dict]) -> float:
    from components.selfaug_decoding.metrics import pope

    return 100 * pope([r["pred_yes"] for r in rows], [r["label"] == "yes" for r in rows])["f1"]


def tune(model, job: DecodeJob) -> tuple[dict, list[dict]]:
    """Each setting of :func:`grid` on the dev POPE questions (three splits pooled); the highest dev F1 wins
    (a tie keeps the setting nearer the card's). Never reads the test split."""
    dec = job.decoding
    dev = load_npz(f"{job.data_dir}/dev_images.npz", keys=("images", "offset"), finite=True)
    q = [{**r, "qtype": "existence"} for r in read_jsonl(f"{job.data_dir}/pope_dev.jsonl")]
    tried, best = [], None
    for cfg in grid(job.method, dec):
        meth = D.methods(**{**CARD, **cfg})[job.method]
        rows = [
            {"label": r["label"], "pred_yes": bool(toks) and VOCAB[toks[0]] == "yes"}
            for r, toks, *_ in _run(model, dev["images"], int(dev["offset"]), q, meth, dec, 1, job.seed, 3)
        ]
        f1 = pope_f1(rows)
        tried.append({**cfg, "dev_f1": round(f1, 3)})
        if best is None or f1 > best[1] + 1e-9:
            best = (cfg, f1)
    return {**CARD, **best[0]}, tried


def _batches(rows: list[dict], size: int):
    """Rows grouped by prompt length (equal-length prompts decode together), in chunks of ``size``."""
    by_len: dict[int, list[dict]] = defaultdict(list)
    for r in rows:
        by_len[len(r["q"])].append(r)
    k = 0
    for n in sorted(by_len):
        group = by_len[n]
        for i in range(0, len(group), size):
            yield k, group[i : i + size]
            k += 1


def _run(model, images, offset, rows, method, dec, max_new, seed, set_id):
    import torch

    out = []
    aug_kw = {"crop_ratio": dec["crop_ratio"], "mask_ratio": dec["mask_ratio"], "noise_step": dec["noise_step"]}
    for k, chunk in _batches(rows, dec["batch"]):
        x = M.to_tensor(images[[r["image"] - offset for r in chunk]])
        prompt = torch.tensor([M.prompt_ids(r["q"]) for r in chunk])
        res = D.generate(model.encode, model, x, prompt, method, qtypes=[r["qtype"] for r in chunk],
                         max_new=max_new, seed=seed * 1_000_003 + set_id * 10_007 + k, aug_kw=aug_kw,
                         sas_rules=dec["sas_rules"])  # fmt: skip
        for i, r in enumerate(chunk):
            out.append((r, res.tokens[i], res.augs[i], res.betas[i], res.n_plausible[i]))
    return out


def decode_job(job: DecodeJob) -> DecodeResult:
    """One (seed, method): POPE answers, MME-style answers and captions (module level: process runners pickle it)."""
    dec = job.decoding
    model = M.load_model(job.model_dir)
    data = load_npz(f"{job.data_dir}/eval_images.npz", keys=("images", "offset"), finite=True)
    images, offset = data["images"], int(data["offset"])
    with threads(job.threads):
        chosen, tried = tune(model, job)
        meth = D.methods(**chosen)[job.method]
        pope_q = [{**q, "qtype": "existence"} for q in read_jsonl(f"{job.data_dir}/pope.jsonl")]
        pope = []
        for r, toks, aug, betas, sizes in _run(model, images, offset, pope_q, meth, dec, 1, job.seed, 0):
            ans = VOCAB[toks[0]] if toks else ""
            pope.append({"seed": job.seed, "method": job.method, "question_id": r["question_id"], "split": r["split"],
                         "image": r["image"], "shape": r["shape"], "label": r["label"], "answer": ans,
                         "pred_yes": ans == "yes", "aug": aug, "beta": betas[0] if betas else None,
                         "n_plausible": sizes[0] if sizes else None})  # fmt: skip
        mme = []
        for r, toks, aug, _, _ in _run(model, images, offset, read_jsonl(f"{job.data_dir}/mme.jsonl"), meth, dec, 1,
                                       job.seed, 1):  # fmt: skip
            ans = VOCAB[toks[0]] if toks else ""
            mme.append({"seed": job.seed, "method": job.method, "question_id": r["question_id"], "qtype": r["qtype"],
                        "image": r["image"], "label": r["label"], "answer": ans, "aug": aug,
                        "correct": ans == r["label"]})  # fmt: skip
        cap_q = [{**c, "q": ["describe"], "qtype": "caption"} for c in read_jsonl(f"{job.data_dir}/captions.jsonl")]
        caps = []
        for r, toks, aug, betas, sizes in _run(model, images, offset, cap_q, meth, dec, dec["max_new"], job.seed, 2):
            words = decode(toks)
            m = mentions(words)
            caps.append({"seed": job.seed, "method": job.method, "image": r["image"], "caption": " ".join(words),
                         "truth": r["shapes"], "n_mentions": len(m),
                         "n_hallucinated": sum(w not in r["shapes"] for w in m), "aug": aug,
                         "mean_beta": float(np.nanmean(betas)) if betas and not np.isnan(betas).all() else None,
                         "mean_candidates": float(np.mean(sizes)) if sizes else None})  # fmt: skip
    setting = {k: v for k, v in chosen.items() if job.method != "greedy" and (k == "alpha" or (k == "tau") ==
               (meth.tau is not None))}  # fmt: skip
    return DecodeResult(job.seed, job.method, pope, mme, caps, {"chosen": setting, "dev_grid": tried})


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    data_dir = str(ctx.input(DATA))
    jobs = [DecodeJob(s, m, data_dir, str(ctx.input(f"{MODELS}/seed_{s}")), p.decoding.model_dump(),
                      p.resources.threads) for s in p.model.seeds for m in p.decoding.methods]  # fmt: skip
    results = run_grid(ctx, decode_job, jobs, desc="selfaug-decoding seeds x methods", result=DecodeResult,
                       workers=p.resources.workers, progress=p.progress)  # fmt: skip
    out = ctx.output_dir(RUNS)
    for part in ("pope", "mme", "captions"):
        write_jsonl(out / f"{part}.jsonl", [row for r in results for row in getattr(r, part)])
    tuning = {f"seed_{r.seed}": {} for r in results}
    for r in results:
        tuning[f"seed_{r.seed}"][r.method] = r.tuning
    write_json(out / "tuning.json", tuning)
    return {"jobs": len(results), "pope_answers": sum(len(r.pope) for r in results),
            **{f"{r.method}.seed_{r.seed}.{k}": v for r in results for k, v in r.tuning["chosen"].items()}}  # fmt: skip
