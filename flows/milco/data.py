"""Stage ``data``: LibreOffice help EN-ES paragraph pairs (aligned by file and HTML id) and SWORD verse pairs, the
splits (SAP training, dev, benchmark, Bible benchmark), a Spanish query per pair, the entity flag of each query,
the shared EN+ES BPE and the English lexical space; Great Expectations checks the pairs and queries before any
stage reads them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from components.data import validate as V
from components.errors import DataError
from components.io import write_json, write_jsonl
from components.sparse_retrieval.external import check_models, check_source, load_miracl, load_mkqa
from components.sparse_retrieval.lexicon import EnglishSpace, train_bpe
from components.sparse_retrieval.parallel import bible_pairs, entity_tokens, iter_split, libreoffice_pairs, make_query
from flows.milco.common import ENGLISH, EXTERNAL, PAIRS, QUERIES, SPLITS, TOKENIZER, log
from flows.milco.params import Params
from flows.milco.spec import DATA
from flows.runtime.stages import StageContext

QUERY_SPLITS = ("train", "dev", "bench", "bible")


def unique_sides(pairs: list[dict]) -> list[dict]:
    """Keep the first pair of every English and every Spanish text, so no text sits in two splits."""
    en, es, out = set(), set(), []
    for p in pairs:
        if p["en"] in en or p["es"] in es:
            continue
        en.add(p["en"])
        es.add(p["es"])
        out.append(p)
    return out


def split_pairs(d, lo: list[dict], bible: list[dict]) -> list[dict]:
    rng = np.random.default_rng(d.seed)
    by_id = {p["id"]: p for p in lo}
    plan = {"bench": d.bench_pairs, "dev": d.dev_pairs, "sap": min(d.sap_pairs, len(lo) - d.bench_pairs - d.dev_pairs)}
    if plan["sap"] < d.contrastive_pairs:
        raise DataError(
            f"LibreOffice gave {len(lo)} pairs: too few for bench_pairs + dev_pairs + "
            f"contrastive_pairs ({d.bench_pairs} + {d.dev_pairs} + {d.contrastive_pairs}); lower them or "
            "raise data.max_files"
        )
    out = [{**by_id[i], "split": s} for i, s in iter_split(list(by_id), plan, rng)]
    b_ids = [p["id"] for p in bible]
    n_b = min(d.bible_pairs, len(bible))
    b_by_id = {p["id"]: p for p in bible}
    out += [
        {**b_by_id[i], "split": "bible" if s == "bench" else "sap"}
        for i, s in iter_split(b_ids, {"bench": n_b, "rest": len(bible) - n_b}, rng)
    ]
    sap = [i for i, p in enumerate(out) if p["split"] == "sap" and p["source"] == "libreoffice"]
    for i in rng.permutation(sap)[: d.contrastive_pairs]:
        out[i]["train2"] = True
    return out


def make_queries(d, pairs: list[dict], english: set[str]) -> list[dict]:
    rng = np.random.default_rng(d.seed + 1)
    lo, hi = d.query_words
    rows = []
    for p in pairs:
        split = "train" if p.get("train2") else p["split"]
        if split not in QUERY_SPLITS:
            continue
        text = make_query(p["es"], rng, min_words=lo, max_words=hi)
        ents = entity_tokens(text, english)
        rows.append(
            {
                "qid": f"q:{p['id']}",
                "pair_id": p["id"],
                "split": split,
                "text": text,
                "entity": bool(ents),
                "entities": ents,
            }
        )
    return rows


def check(pairs: list[dict], queries: list[dict], out: Path) -> None:
    V.validate(
        [{k: p[k] for k in ("id", "split", "source", "en", "es")} for p in pairs],
        [
            V.unique("id"),
            V.non_empty_text("en"),
            V.non_empty_text("es"),
            V.unique("en"),
            V.unique("es"),
            V.in_set("split", ["sap", "dev", "bench", "bible"]),
            V.in_set("source", ["libreoffice", "bible"]),
        ],
        name="pairs",
        result_path=out / "_checks" / "pairs.json",
    )
    split_of = {p["id"]: p["split"] for p in pairs}
    table = [
        {
            "id": q["qid"],
            "split": q["split"],
            "text": q["text"],
            "doc_exists": q["pair_id"] in split_of,  # the qrel points at an existing document
            "doc_split": split_of.get(q["pair_id"], "missing"),
        }
        for q in queries
    ]
    held_out = [t for t in table if t["split"] != "train"]
    V.validate(
        table,
        [
            V.unique("id"),
            V.non_empty_text("text"),
            V.in_set("doc_exists", [True]),
            V.in_set("split", list(QUERY_SPLITS)),
        ],
        name="queries",
        result_path=out / "_checks" / "queries.json",
    )
    # no benchmark/dev query's pair is a SAP pair (ids are unique across splits; this checks the qrels' side)
    V.validate(
        held_out,
        [V.in_set("doc_split", ["dev", "bench", "bible"]), V.row_count_between(1, None)],
        name="held-out queries",
        result_path=out / "_checks" / "leakage.json",
    )


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    d = p.data
    check_models(p.full)  # full profile: the model ids fail here, at once, when offline
    for field in ("miracl", "miracl_corpus", "mkqa"):
        check_source(field, getattr(p.full, field))
    lo = unique_sides(libreoffice_pairs(Path(d.lo_en), Path(d.lo_es), max_files=d.max_files))
    bible = unique_sides(bible_pairs(Path(d.sword), d.bible_books))
    pairs = unique_sides(split_pairs(d, lo, bible))
    sap = [x for x in pairs if x["split"] == "sap"]
    space = EnglishSpace.build([x["en"] for x in sap], d.english_vocab)
    queries = make_queries(d, pairs, set(space.terms))
    out = ctx.output_dir(DATA)
    check(pairs, queries, out)
    tok = train_bpe([x["en"] for x in sap] + [x["es"] for x in sap], d.bpe_vocab)
    tok.save(str(out / TOKENIZER))
    space.save(out / ENGLISH)
    write_jsonl(out / PAIRS, pairs)
    write_jsonl(out / QUERIES, queries)
    counts = {s: sum(x["split"] == s for x in pairs) for s in ("sap", "dev", "bench", "bible")}
    qcounts = {s: sum(q["split"] == s for q in queries) for s in QUERY_SPLITS}
    entity = {s: sum(q["entity"] for q in queries if q["split"] == s) for s in QUERY_SPLITS}
    external = {}
    if p.full.miracl:
        miracl = load_miracl(p.full.miracl, p.full.miracl_corpus, p.full.language)
        V.validate(
            [{"id": q["qid"], "text": q["text"], "n_pos": len(q["positives"])} for q in miracl["queries"]],
            [V.unique("id"), V.non_empty_text("text"), V.between("n_pos", 1, None)],
            name="miracl queries",
            result_path=out / "_checks" / "miracl.json",
        )
        write_jsonl(
            out / EXTERNAL,
            [{"kind": "query", **q} for q in miracl["queries"]] + [{"kind": "doc", **x} for x in miracl["docs"]],
        )
        external["miracl"] = len(miracl["queries"])
    if p.full.mkqa:
        external["mkqa"] = len(load_mkqa(p.full.mkqa, p.full.language))
    summary = {
        "pairs": counts,
        "queries": qcounts,
        "entity_queries": entity,
        "english_terms": len(space),
        "bpe": tok.get_vocab_size(),
        "libreoffice_pairs": len(lo),
        "bible_verses": len(bible),
        "external": external,
    }
    write_json(out / SPLITS, summary)
    log.info("milco data: %s", summary)
    return summary
