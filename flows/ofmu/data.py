"""Stage ``data``: the synthetic TOFU (or TOFU itself), WordNet world facts, the tokenizer, and their GX checks.

Writes ``data/ofmu/data/{qa.jsonl, tokenizer.json, summary.json, _checks/qa.json}``.
"""

from __future__ import annotations

import pandas as pd

from components.data import validate as V
from components.errors import DataError
from components.io import write_json, write_jsonl
from components.training.qa_lm import prompt
from components.training.tokenizer import train_bpe
from components.unlearning import tofu
from flows.ofmu.common import log
from flows.ofmu.params import Params
from flows.ofmu.spec import DATA
from flows.runtime.settings import online
from flows.runtime.stages import StageContext

SUITE = [
    V.columns_present(["id", "split", "question", "answer", "paraphrased_answer"]),
    V.unique("id"),
    V.non_empty_text("question"),
    V.non_empty_text("answer"),
    V.non_empty_text("paraphrased_answer"),
    V.in_set("split", ["forget", "retain", "general"]),
    V.in_set("in_both_splits", [False]),
    V.between("n_perturbed", min_value=1),
    V.in_set("dev_off_retain", [False]),
]


def check_rows(rows: list[dict], result_path=None) -> None:
    """GX suite, plus the rules it cannot express on one column: non-empty forget/retain, no overlap."""
    df = pd.DataFrame(rows)
    for split in ("forget", "retain"):
        if not (df["split"] == split).any():
            raise DataError(f"qa.jsonl: the {split} set is empty")
    key = df["question"].str.strip().str.lower() + "\x00" + df["answer"].str.strip().str.lower()
    forget_keys = set(key[df["split"] == "forget"])
    retain_keys = set(key[df["split"] == "retain"])
    df["in_both_splits"] = key.isin(forget_keys & retain_keys)
    df["n_perturbed"] = df["perturbed_answer"].map(len)
    df["dev_off_retain"] = df.get("dev", False) & (df["split"] != "retain")  # tuning forgets retain authors only
    V.validate(df.drop(columns=["perturbed_answer"]), SUITE, name="ofmu/qa", result_path=result_path)


def build_rows(p) -> list[dict]:
    d = p.data
    if d.source == "synthetic":
        rows = tofu.make_authors(d.n_authors, d.n_attributes, d.n_templates, d.n_perturbed, seed=d.seed)
        rows = tofu.split_authors(rows, d.forget_frac, seed=d.seed)
    else:
        rows = tofu.load_tofu(d.source, d.tofu_config, online=online())
    glosses = tofu.wordnet_glosses(max(10 * d.n_general, 500), sources_dir=d.sources_dir)
    return tofu.mark_dev(rows + tofu.general_rows(glosses, d.n_general, d.n_perturbed, seed=d.seed), seed=d.seed)


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    rows = build_rows(p)
    out = ctx.output_dir(DATA)
    check_rows(rows, result_path=out / "_checks" / "qa.json")
    write_jsonl(out / "qa.jsonl", rows)
    texts = [
        prompt(r["question"]) + " " + a
        for r in rows
        for a in (r["answer"], r["paraphrased_answer"], *r["perturbed_answer"])
    ]
    train_bpe(texts, vocab_size=p.data.vocab_size, out_path=out / "tokenizer.json")
    summary = {s: sum(r["split"] == s for r in rows) for s in ("forget", "retain", "general")}
    summary["authors_forget"] = len({r["author"] for r in rows if r["split"] == "forget"})
    summary["authors_dev"] = len({r["author"] for r in rows if r.get("dev")})
    write_json(out / "summary.json", summary)
    log.info("ofmu data: %s", summary)
    return summary
