"""Stage ``judge``: per seed, J1 (lexicons), J2 (embedding centroids, threshold tuned on the seed's dev
sentences) and J3 (logistic regression trained on the seed's training sentences) vote on every target message;
the majority (>= 2 of 3) and the pronoun regex are stored beside the votes, one row per message.

Great Expectations checks that no scored message contains a sentence J3 was trained on (``in_j3_train``).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from components.anthrobench import evaluate as E
from components.anthrobench.behaviours import BEHAVIOURS
from components.anthrobench.dialogue import ChatLM, EndpointChat
from components.anthrobench.judges import J3_LOADER, CentroidJudge, LexiconJudge, LogRegJudge, save_j3, sentences
from components.anthrobench.llm_judge import NAME as LLM_JUDGE
from components.anthrobench.llm_judge import LLMJudge
from components.data import validate as V
from components.io import read_jsonl, write_json, write_jsonl
from components.training import threads
from flows.anthrobench import champion
from flows.anthrobench.params import ENDPOINT, Params
from flows.anthrobench.spec import DATA, DIALOGUES, LABELS
from flows.runtime.stages import StageContext
from flows.runtime.tracking import Tensor

JUDGES = ("J1_lexicon", "J2_centroid", "J3_logreg")


@lru_cache(maxsize=1)
def _embedder(name: str):
    from components.retrieval.embed import make_embedder

    return make_embedder(name)


def _rows(dialogues: list[dict], votes: dict[str, np.ndarray], train_texts: frozenset) -> list[dict]:
    rows, i = [], 0
    for d in dialogues:
        for t in d["turns"]:
            row = {"id": f"{d['target']}/{d['seed']}/{d['dialogue']}/{t['turn']}", "target": d["target"],
                   "seed": d["seed"], "dialogue": d["dialogue"], "turn": t["turn"],
                   **{k: votes[k][i].tolist() for k in (*JUDGES, "majority")}, "pronoun": int(votes["pronoun"][i]),
                   "truth": [t["truth"][b] for b in BEHAVIOURS] if "truth" in t else None,
                   "in_j3_train": any(s in train_texts for s in sentences(t["assistant"]))}  # fmt: skip
            rows.append(row)
            i += 1
    return rows


def _split(sentences_: list[dict], split: str) -> list[dict]:
    return [{**s, "behaviour": None if s["behaviour"] == "none" else s["behaviour"]}
            for s in sentences_ if s["split"] == split]  # fmt: skip


def _log_j3(ctx: StageContext[Params], j3: LogRegJudge, seed: int) -> tuple[str | None, object]:
    """J3 of one seed saved (no pickle) under labels/j3/ and logged as its own MLflow child run with a signature."""
    folder = save_j3(j3, ctx.output_dir(LABELS) / "j3" / f"seed-{seed}")
    run_id = ctx.log_model(f"j3-seed{seed}", {"C": j3.C, "seed": seed, "train_sentences": len(j3.train_texts)}, folder,
                  loader=J3_LOADER, inputs=Tensor("bag_of_words", "float64", (-1, -1)),
                  outputs=Tensor("behaviour_flags", "int64", (-1, 13)),
                  metrics={"threshold": j3.threshold})  # fmt: skip
    return run_id, folder


def _llm_chat(p: Params, cache_dir: str):
    """The LLM judge's model: an OpenAI-compatible endpoint or a local causal LM (the repo's temperature 0.7; 64
    new tokens hold the short explanation, ';' and the Yes/No the rubric asks for)."""
    spec = p.judges.llm
    if spec.startswith(ENDPOINT):
        return EndpointChat(url=p.judges.llm_endpoint_url, model=spec[len(ENDPOINT) :], name=spec, temperature=0.7,
                            max_new_tokens=64)  # fmt: skip
    from components.models.causal_lm import load_causal_lm

    model, tok = load_causal_lm(spec, cache_dir=cache_dir)
    return ChatLM(model, tok, spec, seed=0, temperature=0.7, max_new_tokens=64, max_context=2048)


def llm_votes(p: Params, dialogues: list[dict], chat) -> tuple[dict[str, list[int]], int]:
    """The LLM judge's flags by message id for the first ``judges.llm_max_messages`` messages of each target
    (seeds, then dialogues, then turns); the count of unparsed (message, behaviour) cells."""
    judge = LLMJudge(chat, samples=p.judges.llm_samples)
    out = {}
    for target in sorted({d["target"] for d in dialogues}):
        msgs = [(f"{d['target']}/{d['seed']}/{d['dialogue']}/{t['turn']}", t["user"], t["assistant"])
                for d in dialogues if d["target"] == target for t in d["turns"]]  # fmt: skip
        msgs = msgs[: p.judges.llm_max_messages]
        flags = judge.rate([u for _, u, _ in msgs], [a for _, _, a in msgs])
        out.update({m[0]: f.tolist() for m, f in zip(msgs, flags)})
    return out, judge.unparsed


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    threads.set_threads(p.resources.threads)  # MiniLM: more threads than free cores spin instead of working
    dialogues = read_jsonl(ctx.input(f"{DIALOGUES}/dialogues.jsonl"))
    sents = read_jsonl(ctx.input(f"{DATA}/judge_sentences.jsonl"))
    rows, fitted, chosen = [], {}, None
    for seed in p.data.seeds:
        mine = [s for s in sents if s["seed"] == seed]
        judges = [LexiconJudge(), CentroidJudge(_embedder(p.judges.embedder)).fit(_split(mine, "dev")),
                  LogRegJudge(C=p.judges.j3_c, seed=seed).fit(_split(mine, "train"))]  # fmt: skip
        fitted[str(seed)] = {"J2_threshold": judges[1].threshold, "J3_threshold": judges[2].threshold,
                             "J3_train_sentences": len(judges[2].train_texts)}  # fmt: skip
        run_id, folder = _log_j3(ctx, judges[2], seed)
        if seed == champion.choose(p):  # J3 of the first seed, re-evaluated as the recurring evaluation does
            chosen = champion.candidate(p, run_id, folder, ctx.paths.root)
        seed_dialogues = [d for d in dialogues if d["seed"] == seed]
        rows += _rows(seed_dialogues, E.judge(judges, seed_dialogues), judges[2].train_texts)
    llm = {}
    if p.judges.llm:  # off by default (offline): the repo's rubric prompts on an LLM, votes beside J1-J3
        votes, unparsed = llm_votes(p, dialogues, _llm_chat(p, str(ctx.paths.cache / "models")))
        rows = [{**r, LLM_JUDGE: votes.get(r["id"])} for r in rows]
        llm = {"model": p.judges.llm, "rated_messages": len(votes), "unparsed_cells": unparsed}
    out = ctx.output_dir(LABELS)
    V.validate(rows, [V.unique("id"), V.proportion_where("in_j3_train", True, 0.0), V.in_set("pronoun", [0, 1]),
                      V.between("turn", 1, p.data.n_turns)],
               name="labels", result_path=out / "_checks" / "labels.json")  # fmt: skip
    write_jsonl(out / "labels.jsonl", rows)
    write_json(out / "judges.json", {"embedder": p.judges.embedder, "per_seed": fitted, "llm": llm or None})
    return {"messages": len(rows), "judges": fitted, **({"llm_judge": llm} if llm else {}), "champion": chosen}
