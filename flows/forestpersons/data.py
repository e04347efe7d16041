"""Stage ``data``: per seed, samples of ``n_draws`` observations around a known centre (0), a share of them shifted
far away; Great Expectations checks the table before any stage reads it."""

from __future__ import annotations

import numpy as np

from components.data import validate as V
from components.io import write_jsonl
from flows.forestpersons.params import Params
from flows.forestpersons.spec import DATA
from flows.runtime.stages import StageContext


def run(ctx: StageContext[Params]) -> dict:
    d = ctx.params.data
    out = ctx.output_dir(DATA)
    rows = []
    for seed in d.seeds:
        rng = np.random.default_rng(seed)
        for i in range(d.n_samples):
            x = rng.normal(0.0, 1.0, d.n_draws)
            x[rng.random(d.n_draws) < d.outlier_frac] += d.outlier_shift
            rows.append({"id": f"{seed}-{i}", "seed": seed, "sample": i, "centre": 0.0, "values": x.tolist()})
    table = [
        {"id": r["id"], "seed": r["seed"], "n": len(r["values"]), "mean": float(np.mean(r["values"]))} for r in rows
    ]
    V.validate(
        table,
        [V.unique("id"), V.not_null("seed"), V.between("n", d.n_draws, d.n_draws), V.finite("mean")],
        name="samples",
        result_path=out / "_checks" / "samples.json",
    )
    write_jsonl(out / "samples.jsonl", rows)
    return {"samples": len(rows), "seeds": len(d.seeds)}
