"""Stage ``data``: the synthetic persona-preference pairs, split into training and held-out pairs; Great
Expectations checks both tables (every user has an explicit and an implicit constraint; every gold item is valid)
before any stage reads them."""

from __future__ import annotations

import numpy as np

from components.cdra import task as T
from components.data import validate as V
from components.errors import ParamsError
from components.io import write_jsonl
from flows.cdra.params import Params
from flows.cdra.spec import DATA
from flows.runtime.stages import StageContext


def checks(n_min: int) -> list:
    return [
        V.row_count_between(n_min, None),
        V.unique("id"),
        V.in_set("topic", T.TOPICS),
        V.in_set("explicit", T.ATTRS),
        V.in_set("value", T.VALUES),
        V.in_set("implicit", T.ATTRS),
        V.in_set("risk", (*T.ATTRS, "none")),
        V.not_null("gold_item"),
        V.between("n_valid", 1, T.N_ITEMS),
        V.between("gold_valid", 1, 1),
        V.between("explicit_is_implied", 0, 0),
    ]


def table(pairs: list[T.Pair]) -> list[dict]:
    rows = []
    for p in pairs:
        r = p.row()
        gold = r["gold_item"]
        r["gold_valid"] = int(gold is not None and T.judge(p, T.gold_chain(p))["pf"])
        r["explicit_is_implied"] = int(p.explicit in {p.implicit, p.risk})
        rows.append(r)
    return rows


def run(ctx: StageContext[Params]) -> dict:
    d = ctx.params.data
    pairs = T.make_pairs(d.per_topic, d.task_seed)
    if d.heldout >= len(pairs):
        raise ParamsError(f"cdra.data.heldout ({d.heldout}) must be below the number of pairs ({len(pairs)})")
    order = np.random.default_rng(d.task_seed + 1).permutation(len(pairs))
    held = [pairs[i] for i in sorted(order[: d.heldout])]
    train = [pairs[i] for i in sorted(order[d.heldout :])]
    out = ctx.output_dir(DATA)
    for name, part in (("train", train), ("heldout", held)):
        rows = table(part)
        V.validate(rows, checks(1), name=f"cdra {name} pairs", result_path=out / "_checks" / f"{name}.json")
        write_jsonl(out / f"{name}.jsonl", rows)
    return {"pairs": len(pairs), "train": len(train), "heldout": len(held)}
