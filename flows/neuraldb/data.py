"""Stage ``data``: synthetic facts, edit requests per seed and a dev split, Austen filler, tokenizer, tokens.

Writes ``data/neuraldb/data/``: ``facts.jsonl``, ``edits_seed<s>.jsonl`` (requests for the largest m; a
smaller m takes the first m), ``dev.jsonl`` (gamma tuning), ``tokenizer.json``, token arrays
(``fact_tokens.npy``, ``filler_tokens.npy`` for training; ``k0_tokens.npy``, ``ppl_tokens.npy`` held out),
and the Great Expectations results under ``_checks/``.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from components.data import validate as V
from components.editing.facts import (
    RELATIONS,
    add_subject_tokens,
    build_edit_requests,
    check_requests,
    crossed_neighbours,
    disjoint_orders,
    fact_sentences,
    generate_facts,
)
from components.editing.loaders import load_counterfact, load_zsre
from components.errors import DataError
from components.io import read_jsonl, write_json, write_jsonl
from components.training.tokenizer import encode_docs, load_bpe, train_bpe
from flows.neuraldb.params import Params
from flows.neuraldb.spec import DATA, SOURCES
from flows.runtime.stages import StageContext

log = logging.getLogger("paperline")
AUSTEN = f"{SOURCES}/austen.jsonl"


def austen_split(rows: list[dict], filler_chars: int, heldout_chars: int) -> tuple[list[str], list[str], list[str]]:
    """Training filler from the first chunks, held-out text from the last ones (halved into K0 and perplexity)."""
    texts = [r["text"] for r in sorted(rows, key=lambda r: r["id"])]
    if sum(map(len, texts)) < filler_chars + heldout_chars:
        raise DataError(
            f"{AUSTEN}: {sum(map(len, texts))} characters, need filler_chars + heldout_chars = "
            f"{filler_chars + heldout_chars}"
        )
    train, n = [], 0
    while n < filler_chars:
        train.append(texts.pop(0))
        n += len(train[-1])
    held, n = [], 0
    while n < heldout_chars:
        held.append(texts.pop())
        n += len(held[-1])
    return train, held[0::2], held[1::2]


def request_frame(requests: list[dict], edited: set[str]) -> pd.DataFrame:
    """One row per request with the row-level rules as boolean columns for the GX suite."""
    rows = []
    for r in requests:
        spec = RELATIONS.get(r["relation"], {})
        rows.append(
            {
                "id": r["id"],
                "subject": r["subject"],
                "target_true": r["target_true"],
                "target_new": r["target_new"],
                "new_differs": r["target_new"] != r["target_true"],
                "neighbours_disjoint": not set(r.get("neighborhood_subjects", [])) & edited,
                "template_leak": bool(set(spec.get("rewrite", [])) & set(spec.get("paraphrase", [])))
                or bool(set(r["prompts"]) & set(r.get("paraphrase_prompts", []))),
                "n_neighbours": len(r.get("neighborhood_prompts", [])),
                "n_paraphrases": len(r.get("paraphrase_prompts", [])),
            }
        )
    return pd.DataFrame(rows)


def check_requests_gx(requests: list[dict], name: str, result_path) -> None:
    """GX: unique ids and subjects, new != true, edit and neighbour subjects disjoint, no template leaks."""
    df = request_frame(requests, {r["subject"] for r in requests})
    suite = [
        V.columns_present(["id", "subject", "target_true", "target_new"]),
        V.unique("id"),
        V.unique("subject"),
        V.non_empty_text("target_new"),
        V.in_set("new_differs", [True]),
        V.in_set("neighbours_disjoint", [True]),
        V.in_set("template_leak", [False]),
        V.between("n_paraphrases", min_value=0),
    ]
    V.validate(df, suite, name=name, result_path=result_path)


def _synthetic(p, out) -> dict[str, list[dict]]:
    d, e = p.data, p.editing
    facts = generate_facts(d.n_subjects, p.seed, d.relations, d.last_names)
    V.validate(
        pd.DataFrame(facts),
        [V.unique("id"), V.non_empty_text("subject"), V.non_empty_text("object"), V.in_set("relation", d.relations)],
        name="neuraldb/facts",
        result_path=out / "_checks" / "facts.json",
    )
    write_jsonl(out / "facts.jsonl", facts)
    subjects = list(dict.fromkeys(f["subject"] for f in facts))
    order = np.random.default_rng([p.seed, 7]).permutation(len(subjects))
    if d.neighbours == "crossed":
        neighbours = crossed_neighbours(subjects, d.neighbour_pool, p.seed)
        known = set(neighbours)
        editable = [subjects[i] for i in order if subjects[i] not in known]
    else:
        neighbours = [subjects[i] for i in order[: d.neighbour_pool]]
        editable = [subjects[i] for i in order[d.neighbour_pool :]]
    sets = {}
    orders = disjoint_orders(len(editable), e.seeds, max(e.m), p.seed)
    orders["dev"] = np.random.default_rng([p.seed, 11, 10_000]).permutation(len(editable))[: e.dev_edits].tolist()
    for s in [*e.seeds, "dev"]:
        picked = [editable[i] for i in orders[str(s)]]
        sets[str(s)] = build_edit_requests(
            facts,
            edit_subjects=picked,
            neighbour_subjects=neighbours,
            seed=p.seed * 1000 + (999 if s == "dev" else int(s)),
            n_neighbours=d.n_neighbours,
        )
    known = set(neighbours)
    train = [f for f in facts if f["subject"] not in known] + [
        f for f in facts if f["subject"] in known
    ] * d.neighbour_repeat
    return {"facts": train, **sets}


def _external(p) -> dict[str, list[dict]]:
    """CounterFact/ZsRE (full profile): seeds take disjoint subsets where the pool allows; dev = the tail."""
    d, e = p.data, p.editing
    if not d.dataset_path:
        raise DataError(f"data.dataset_path: required for dataset {d.dataset!r}")
    rows = (load_counterfact if d.dataset == "counterfact" else load_zsre)(d.dataset_path)
    rows = check_requests(rows, duplicates="last-wins")
    sets = {"dev": rows[-e.dev_edits :]}
    for s, idx in disjoint_orders(len(rows) - e.dev_edits, e.seeds, max(e.m), p.seed).items():
        sets[s] = [rows[i] for i in idx]
    return {"facts": [], **sets}


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    out = ctx.output(DATA)
    (out / "_checks").mkdir(parents=True, exist_ok=True)
    sets = _synthetic(p, out) if p.data.dataset == "synthetic" else _external(p)
    for name, reqs in sets.items():
        if name == "facts":
            continue
        check_requests(reqs)
        check_requests_gx(reqs, f"neuraldb/edits-{name}", out / "_checks" / f"edits_{name}.json")
        write_jsonl(out / ("dev.jsonl" if name == "dev" else f"edits_seed{name}.jsonl"), reqs)
    austen = read_jsonl(ctx.input(AUSTEN))
    filler, k0_text, ppl_text = austen_split(austen, p.data.filler_chars, p.data.heldout_chars)
    sentences = fact_sentences(sets["facts"])
    rng = np.random.default_rng([p.seed, 3])
    shuffled = [sentences[i] for i in rng.permutation(len(sentences))]
    fact_docs = [" ".join(shuffled[i : i + 16]) for i in range(0, len(shuffled), 16)]
    train_bpe([*fact_docs, *filler], vocab_size=p.data.vocab_size, out_path=out / "tokenizer.json")
    tok = load_bpe(out / "tokenizer.json")
    if p.data.subject_tokens != "bpe" and sets["facts"]:
        add_subject_tokens(
            tok, [r["subject"] for reqs in sets.values() for r in reqs if "subject" in r], p.data.subject_tokens
        )
        tok.save(str(out / "tokenizer.json"))
    arrays = {"fact_tokens": fact_docs, "filler_tokens": filler, "k0_tokens": k0_text, "ppl_tokens": ppl_text}
    sizes = {}
    for name, docs in arrays.items():
        arr = encode_docs(tok, docs) if docs else np.zeros(0, dtype=np.uint16)
        np.save(out / f"{name}.npy", arr)
        sizes[name] = int(arr.size)
    V.validate(
        pd.DataFrame([{"array": k, "tokens": v} for k, v in sizes.items() if k != "fact_tokens" or sentences]),
        [V.between("tokens", min_value=p.model.seq_len + 1)],
        name="neuraldb/tokens",
        id_column="array",
        result_path=out / "_checks" / "tokens.json",
    )
    summary = {
        "training_fact_rows": len(sets["facts"]),
        "edit_sets": len(sets) - 1,
        "vocab": tok.get_vocab_size(),
        **sizes,
    }
    write_json(out / "summary.json", summary)
    return summary
