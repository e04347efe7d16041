"""Stage ``data``: SFT examples, RL training prompts and held-out prompts in difficulty tiers (or DAPO-format
prompts in ``full``), and the prompt features of the training prompts (MiniLM, hashed). GX checks every table."""

from __future__ import annotations

import numpy as np

from components.data import validate as V
from components.errors import ParamsError
from components.io import write_json, write_jsonl
from components.vip import dapo_format, features, task
from flows.runtime.stages import StageContext
from flows.vip.params import Params
from flows.vip.spec import DATA


def _suite(rows: list[dict], name: str, n: int, out, tiers) -> None:
    sft = [V.not_null("answer"), V.in_set("corrupted", [True, False])] if name == "sft" else []
    V.validate(
        rows,
        [
            V.unique("id"),
            V.non_empty_text("prompt"),
            V.not_null("target"),
            V.in_set("tier", tiers),
            V.row_count_between(n, n),
            *sft,
        ],
        name=name,
        result_path=out / "_checks" / f"{name}.json",
    )


def _problems(p) -> dict[str, list[dict]]:
    d = p.data
    rng = np.random.default_rng(d.seed)
    if d.source == "dapo":
        rows = (
            dapo_format.load_local(d.local_file)
            if d.local_file
            else dapo_format.load_hub(d.hf_dataset or "", d.n_train + d.n_heldout)
        )
        if len(rows) < d.n_train + d.n_heldout:
            raise ParamsError(
                f"vip.data.n_train + n_heldout = {d.n_train + d.n_heldout} exceeds the "
                f"{len(rows)} prompts of {d.local_file or d.hf_dataset}"
            )
        return {"train": rows[: d.n_train], "heldout": rows[d.n_train : d.n_train + d.n_heldout], "sft": []}
    make = lambda n, mix, pre: [x.row() for x in task.make_problems(n, mix, rng, pre)]  # noqa: E731
    sets = {
        "sft": make(d.n_sft, d.sft_mix, "s"),
        "train": make(d.n_train, d.rl_mix, "t"),
        "heldout": make(d.n_heldout, d.rl_mix, "h"),
    }
    # the slips draw from their own stream, so sft_noise changes no problem, only which answers slip
    sets["sft"] = task.noisy_answers(sets["sft"], d.sft_noise, np.random.default_rng([d.seed, 1]))
    return sets


def run(ctx: StageContext[Params]) -> dict:
    d = ctx.params.data
    out = ctx.output_dir(DATA)
    sets = _problems(ctx.params)
    tiers = sorted({r["tier"] for rows in sets.values() for r in rows})
    sizes = {"sft": d.n_sft if d.source == "arithmetic" else 0, "train": d.n_train, "heldout": d.n_heldout}
    for name, rows in sets.items():
        if rows:
            _suite(rows, name, sizes[name], out, tiers)
        write_jsonl(out / f"{name}.jsonl", rows)
    prompts = [r["prompt"] for r in sets["train"]]
    feats = {}
    if "hashed" in d.features:
        # DAPO prompts are free text: words hashed (a 256-d space), not the arithmetic operator/digit features
        feats["hashed"] = features.hashed(prompts, 256, kind="text") if d.source == "dapo" else features.hashed(prompts)
    if "minilm" in d.features:
        feats["minilm"] = features.minilm([" ".join(s.split()) for s in prompts], model_path=d.embedder)
    table = [
        {"id": r["id"], **{f"{k}_norm": float(np.linalg.norm(v[i])) for k, v in feats.items()}}
        for i, r in enumerate(sets["train"])
    ]
    V.validate(
        table,
        [V.unique("id"), *[V.finite(f"{k}_norm") for k in feats], *[V.between(f"{k}_norm", 1e-6, None) for k in feats]],
        name="features",
        result_path=out / "_checks" / "features.json",
    )
    np.savez(out / "features.npz", **feats)
    summary = {k: len(v) for k, v in sets.items()} | {
        "features": {k: list(v.shape) for k, v in feats.items()},
        "sft_corrupted": sum(r["corrupted"] for r in sets["sft"]),
    }
    write_json(out / "summary.json", summary)
    return summary
