"""Stage ``data``: the first lines of every family, split into disjoint train / select / test sets; QA nouns.

- **control**: lines of the synthetic couplet language per family of each control pair (RF1: train, select and
  test lines; RF2: train lines), drawn once from a fixed seed, so every control model sees the same prompts.
- **real** (``data.real``): lines of Shakespeare, Austen and the KJV (the shared ``sources`` stage) whose last
  word rhymes, by the CMU dictionary, with exactly one of the card's families; the per-family counts are logged
  (``summary.json``). Each family's lines are shuffled with a fixed seed and split into train / test.
- **qa**: noun pairs with their clue questions (built in, or ``data.qa_file`` in the paper's JSON form).

Great Expectations checks every table: known families, each real line re-judged in its family by the CMU
dictionary, and no line in two splits (a line is unique across the union of the splits).
"""

from __future__ import annotations

import logging
import random
from pathlib import Path

from components.data import validate as V
from components.errors import DataError
from components.implicit_planning import qa as Q
from components.implicit_planning import rhymes as R
from components.implicit_planning.couplets import CoupletLanguage
from components.io import read_jsonl, write_json, write_jsonl
from flows.implicit_planning.params import Params
from flows.implicit_planning.spec import DATA
from flows.runtime.stages import StageContext

SPLIT_SEED = 12345
log = logging.getLogger(__name__)


def _read_docs(path: Path) -> list[dict]:
    """A source's JSONL documents (components.io's reader: one error naming the file and line), text a string."""
    docs = read_jsonl(path, required=("text",))
    for n, doc in enumerate(docs, 1):
        if not isinstance(doc["text"], str):
            raise DataError(f"{path}: document {n}: 'text' is not a string")
    return docs


def _interleave(lists: list[list[dict]]) -> list[dict]:
    out, n = [], max((len(x) for x in lists), default=0)
    for i in range(n):
        out += [x[i] for x in lists if i < len(x)]
    return out


def split_lines(by_family: dict[str, list[str]], n_train: int, n_test: int, seed: int) -> list[dict]:
    """Each family's lines shuffled and split: the first ``n_test`` are test lines, the next ``n_train`` train."""
    rows = []
    for fam, lines in by_family.items():
        lines = sorted(set(lines))
        random.Random(f"{seed}-{fam}").shuffle(lines)
        if len(lines) < n_test + 2:
            raise DataError(f"family {fam!r}: only {len(lines)} first lines, need at least {n_test + 2}")
        rows += [{"family": fam, "split": "test", "line": x} for x in lines[:n_test]]
        rows += [{"family": fam, "split": "train", "line": x} for x in lines[n_test : n_test + n_train]]
    return rows


def control_lines(lang: CoupletLanguage, families: list[str], n_train: int, n_test: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    rows, used = [], set()
    for fam in families:
        test = lang.first_lines(fam, n_test, rng, exclude=used)
        used |= set(test)
        train = lang.first_lines(fam, n_train, rng, exclude=used)
        used |= set(train)
        rows += [{"family": fam, "split": "test", "line": x} for x in test]
        rows += [{"family": fam, "split": "train", "line": x} for x in train]
    return rows


def _checks(name: str, rows: list[dict], families: list[str], out: Path, *, judge: bool) -> None:
    table = [{**r, "judged": int(R.in_family(R.last_word(r["line"]) or "", r["family"])) if judge else 1} for r in rows]
    V.validate(
        table,
        [
            V.columns_present(["family", "split", "line"]),
            V.in_set("family", families),
            V.in_set("split", ["train", "test"]),
            V.non_empty_text("line"),
            V.unique("line"),
            V.between("judged", 1, 1),
        ],
        name=f"implicit-planning/{name}",
        result_path=out / "_checks" / f"{name}.json",
    )


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    d, c = p.data, p.control
    out = ctx.output_dir(DATA)
    lang = CoupletLanguage(words_per_family=c.words_per_family, n_families=c.n_families)
    fams = sorted({f for pair in c.pairs for f in pair})
    ctrl = control_lines(lang, fams, d.lines_train, d.lines_test, SPLIT_SEED)
    _checks("control_lines", ctrl, list(lang.families), out, judge=False)
    write_jsonl(out / "control_lines.jsonl", ctrl)
    summary: dict = {"control_lines": len(ctrl)}
    if d.real:
        need = sorted({f for pair in p.steer.real_pairs for f in pair})
        if d.rhyme_file:  # the paper's rhyme-family file (full profile); each line re-judged by GX below
            found = R.load_rhyme_file(d.rhyme_file, need)
            summary["rhyme_file"] = d.rhyme_file
        else:
            per_source = {s: _read_docs(ctx.input(f"data/sources/{s}.jsonl")) for s in d.sources}
            found = R.first_lines_by_family(
                _interleave(list(per_source.values())), d.families, per_family=d.lines_train + d.lines_test
            )
        summary["family_counts"] = {f: len(v) for f, v in found.items()}
        summary["source_counts"] = {s: sum(r["source"] == s for v in found.values() for r in v) for s in d.sources}
        real = split_lines({f: [r["line"] for r in found[f]] for f in need}, d.lines_train, d.lines_test, SPLIT_SEED)
        _checks("real_lines", real, d.families, out, judge=True)
        write_jsonl(out / "real_lines.jsonl", real)
        pairs = Q.load_pairs(d.qa_file) if d.qa_file else Q.pairs()
        qa = [
            {"pair": i, "noun": n["noun"], "article": n["article"], "questions": n["questions"]}
            for i, pr in enumerate(pairs[: d.qa_pairs])
            for n in pr
        ]
        V.validate(
            [
                {"noun": r["noun"], "article": r["article"], "n_questions": len(r["questions"]), "pair": r["pair"]}
                for r in qa
            ],
            [V.unique("noun"), V.in_set("article", ["a", "an"]), V.between("n_questions", 2, None)],
            name="implicit-planning/qa",
            result_path=out / "_checks" / "qa.json",
        )
        for i in range(len(qa) // 2):
            if qa[2 * i]["article"] == qa[2 * i + 1]["article"]:
                raise DataError(f"QA pair {i}: {qa[2 * i]['noun']!r} and {qa[2 * i + 1]['noun']!r} share an article")
        write_jsonl(out / "qa.jsonl", qa)
        summary |= {"real_lines": len(real), "qa_nouns": len(qa)}
    write_json(out / "summary.json", summary)
    log.info(f"first lines per family: {summary.get('family_counts', 'real lines off')}")
    return summary
