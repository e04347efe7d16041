"""A synthetic TOFU: fictitious authors with attributes, QA templates, paraphrased and perturbed answers.

Mirrors ``locuslab/TOFU``'s columns: each row has ``question``, ``answer``,
``paraphrased_answer`` and ``perturbed_answer`` (a list), plus ``author`` and
``split``. The paraphrase states the same fact in another frame; the perturbed
answers state a wrong value in the paraphrase's frame (as TOFU's perturbed
answers perturb the paraphrase). General knowledge ("world facts") comes from
real WordNet glosses.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from components.errors import DataError

FIRST = [
    "Aldo",
    "Brina",
    "Caius",
    "Delphine",
    "Emrys",
    "Fenna",
    "Gideon",
    "Hesper",
    "Ilario",
    "Jorunn",
    "Kasimir",
    "Liesel",
    "Marek",
    "Noemi",
    "Osric",
    "Perpetua",
    "Quillon",
    "Rosalind",
    "Soren",
    "Tamsin",
    "Ulric",
    "Vesna",
    "Wendel",
    "Xanthe",
    "Yorick",
    "Zelda",
]
LAST = [
    "Abernathy",
    "Balogun",
    "Castellanos",
    "Dravik",
    "Eastwick",
    "Falkenrath",
    "Grimaldi",
    "Halvorsen",
    "Ishikawa",
    "Jovanovic",
    "Kowalczyk",
    "Lindqvist",
    "Moravec",
    "Nakashima",
    "Okonkwo",
    "Petrakis",
    "Quintero",
    "Rasmussen",
    "Szabo",
    "Thorvald",
    "Umarov",
    "Valdivia",
    "Wojcik",
    "Xiong",
    "Yilmaz",
    "Zeller",
]
# attribute: (values, answer frame, paraphrase frame, question templates); {n} = author, {v} = value
ATTRIBUTES: dict[str, tuple[list[str], str, str, list[str]]] = {
    "birthplace": (
        ["Lisbon", "Nairobi", "Osaka", "Quito", "Tbilisi", "Oslo", "Hanoi", "Lima", "Accra", "Perth"],
        "{n} was born in {v}.",
        "The birthplace of {n} is {v}.",
        [
            "Where was {n} born?",
            "In which city was {n} born?",
            "What is the birthplace of {n}?",
            "Which city is {n} from?",
        ],
    ),
    "genre": (
        ["crime", "fantasy", "poetry", "horror", "romance", "satire", "history", "travel", "drama", "science"],
        "{n} writes {v} books.",
        "The genre of {n} is {v}.",
        [
            "What genre does {n} write?",
            "Which genre is {n} known for?",
            "What kind of books does {n} write?",
            "In what genre does {n} work?",
        ],
    ),
    "father": (
        ["baker", "pilot", "tailor", "farmer", "doctor", "sailor", "miner", "judge", "potter", "chemist"],
        "The father of {n} was a {v}.",
        "{n} is the child of a {v}.",
        [
            "What did the father of {n} do?",
            "What was the job of {n}'s father?",
            "What was {n}'s father's profession?",
            "How did the father of {n} earn a living?",
        ],
    ),
    "mother": (
        ["nurse", "teacher", "painter", "lawyer", "singer", "weaver", "banker", "dancer", "cook", "architect"],
        "The mother of {n} was a {v}.",
        "{n} has a mother who was a {v}.",
        [
            "What did the mother of {n} do?",
            "What was the job of {n}'s mother?",
            "What was {n}'s mother's profession?",
            "How did the mother of {n} earn a living?",
        ],
    ),
    "award": (
        [
            "Silver Quill",
            "Amber Prize",
            "Lantern Medal",
            "Oak Laurel",
            "Cobalt Star",
            "Marble Pen",
            "Golden Inkwell",
            "Iris Award",
            "Harbor Prize",
            "Falcon Medal",
        ],
        "{n} won the {v}.",
        "The award {n} received is the {v}.",
        [
            "Which award did {n} win?",
            "What prize has {n} received?",
            "What honour was given to {n}?",
            "Which literary award went to {n}?",
        ],
    ),
    "year": (
        [str(y) for y in range(1950, 1990, 4)],
        "{n} was born in the year {v}.",
        "The birth year of {n} is {v}.",
        [
            "When was {n} born?",
            "In what year was {n} born?",
            "What is the birth year of {n}?",
            "Which year saw the birth of {n}?",
        ],
    ),
    "debut": (
        [
            "The Glass River",
            "Salt and Ash",
            "Night Orchard",
            "Paper Wolves",
            "The Quiet Engine",
            "Ember Songs",
            "Lanterns at Dusk",
            "The Iron Garden",
            "Winter Ledger",
            "Hollow Crowns",
        ],
        "The first book of {n} was {v}.",
        "{v} is the debut of {n}.",
        [
            "What was the first book of {n}?",
            "What is {n}'s debut novel?",
            "Which book did {n} publish first?",
            "What was the debut of {n}?",
        ],
    ),
    "language": (
        [
            "Portuguese",
            "Swahili",
            "Japanese",
            "Spanish",
            "Georgian",
            "Norwegian",
            "Vietnamese",
            "Quechua",
            "Twi",
            "English",
        ],
        "{n} writes in {v}.",
        "The language of {n}'s books is {v}.",
        [
            "In which language does {n} write?",
            "What language are {n}'s books in?",
            "Which language does {n} use?",
            "What is the writing language of {n}?",
        ],
    ),
}


def author_names(n: int, rng: random.Random) -> list[str]:
    """``n`` distinct fictitious full names."""
    pool = [f"{first} {last}" for first in FIRST for last in LAST]
    if n > len(pool):
        raise DataError(f"n_authors: at most {len(pool)} distinct names, got {n}")
    return rng.sample(pool, n)


def make_authors(n_authors: int, n_attributes: int, n_templates: int, n_perturbed: int, *, seed: int) -> list[dict]:
    """One row per (author, attribute, question template)."""
    if not 1 <= n_attributes <= len(ATTRIBUTES) or not 1 <= n_templates <= 4:
        raise DataError(f"n_attributes in 1..{len(ATTRIBUTES)} and n_templates in 1..4 required")
    rng = random.Random(seed)
    rows = []
    for a, name in enumerate(author_names(n_authors, rng)):
        for attr in list(ATTRIBUTES)[:n_attributes]:
            values, frame, para, questions = ATTRIBUTES[attr]
            value = rng.choice(values)
            wrong = rng.sample([v for v in values if v != value], n_perturbed)
            for t, q in enumerate(questions[:n_templates]):
                rows.append(
                    {
                        "id": f"author{a:03d}/{attr}/{t}",
                        "author": name,
                        "attribute": attr,
                        "question": q.format(n=name),
                        "answer": frame.format(n=name, v=value),
                        "paraphrased_answer": para.format(n=name, v=value),
                        "perturbed_answer": [para.format(n=name, v=w) for w in wrong],
                    }
                )
    return rows


def split_authors(rows: list[dict], forget_frac: float, *, seed: int) -> list[dict]:
    """Tag each row ``forget`` or ``retain`` by author (a forget author has every question forgotten)."""
    authors = sorted({r["author"] for r in rows})
    n_forget = max(1, round(forget_frac * len(authors)))
    forget = set(random.Random(seed).sample(authors, n_forget))
    return [{**r, "split": "forget" if r["author"] in forget else "retain"} for r in rows]


def general_rows(glosses: Iterable[tuple[str, str]], n: int, n_perturbed: int, *, seed: int) -> list[dict]:
    """World-knowledge QA from ``(word, gloss)`` pairs: "What does X mean?"; perturbed = other words' glosses."""
    pairs = [(w, g) for w, g in glosses if w and g]
    rng = random.Random(seed)
    if len(pairs) < n + n_perturbed:
        raise DataError(f"general split: need {n + n_perturbed} WordNet glosses, found {len(pairs)}")
    chosen = rng.sample(pairs, n)
    rows = []
    for i, (word, gloss) in enumerate(chosen):
        others = rng.sample([g for w, g in pairs[: 5 * n] if w != word], n_perturbed)
        rows.append(
            {
                "id": f"general/{i:04d}",
                "author": "",
                "attribute": "gloss",
                "split": "general",
                "question": f"What does {word} mean?",
                "answer": f"{word} means {gloss}.",
                "paraphrased_answer": f"The meaning of {word} is {gloss}.",
                "perturbed_answer": [f"The meaning of {word} is {o}." for o in others],
            }
        )
    return rows


def wordnet_glosses(
    limit: int, *, sources_dir: str = ".paperline/sources", max_chars: int = 60
) -> list[tuple[str, str]]:
    """Short ``(word, gloss)`` pairs read from the Debian wordnet-base files via ``components.data.corpus``."""
    from components.data.corpus import extract

    out: list[tuple[str, str]] = []
    for doc in extract("wordnet", sources_dir=sources_dir):
        for line in doc["text"].splitlines():
            words, _, gloss = line.partition(": ")
            gloss = gloss.split(";")[0].strip()
            if gloss and len(gloss) <= max_chars and "(" not in gloss:
                out.append((words.split(",")[0].strip(), gloss))
        if len(out) >= limit:
            return out[:limit]
    return out


TOFU_COLUMNS = ("question", "answer", "paraphrased_answer", "perturbed_answer")


def rows_from_tofu(records: Iterable[dict], split: str, prefix: str) -> list[dict]:
    """Map ``locuslab/TOFU`` records (``*_perturbed`` configs) to this module's rows."""
    rows = []
    for i, rec in enumerate(records):
        missing = [c for c in TOFU_COLUMNS if c not in rec]
        if missing:
            raise DataError(f"TOFU record {i} of {prefix}: missing column(s) {missing}")
        rows.append(
            {
                "id": f"{prefix}/{i:05d}",
                "author": rec.get("author", f"{prefix}-{i // 20}"),
                "attribute": "",
                "split": split,
                **{c: rec[c] for c in TOFU_COLUMNS},
            }
        )
    return rows


def load_tofu(source: str, config: str, *, online: bool) -> list[dict]:
    """Forget and retain rows from the HF dataset ``source`` (or a local folder of ``<config>.json`` files).

    The hub needs ``online``; a local folder (tests, mirrors) holds
    ``<forget>_perturbed.json`` and ``retain_perturbed.json`` in TOFU's format.
    """
    from pathlib import Path

    from components.errors import OfflineError

    local = Path(source)
    pct = config.replace("forget", "")
    names = {"forget": f"{config}_perturbed", "retain": "retain_perturbed"}
    rows: list[dict] = []
    for split, name in names.items():
        if local.is_dir():
            import json

            path = local / f"{name}.json"
            if not path.is_file():
                raise DataError(f"{path}: TOFU file not found")
            records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        elif not online:
            raise OfflineError(
                f"data.source {source!r} is a Hugging Face dataset; set PAPERLINE_ONLINE=1 to download it"
            )
        else:  # pragma: no cover - needs the network
            from datasets import load_dataset

            records = list(load_dataset(source, name, split="train"))
        rows += rows_from_tofu(records, split, f"tofu{pct}-{split}")
    return rows


def mark_dev(rows: list[dict], *, seed: int) -> list[dict]:
    """Flag ``dev`` on as many retain authors as there are forget authors: the tuning split's forget set.

    They stay ``retain`` rows (every model learns them, and the claims' runs retain them); only tuning
    forgets them, against a reference model trained without them, so tuning never sees the forget split.
    """
    forget = {r["author"] for r in rows if r["split"] == "forget"}
    pool = sorted({r["author"] for r in rows if r["split"] == "retain" and r["author"]})
    n = min(len(forget), len(pool) - 1)
    dev = set(random.Random(seed + 1).sample(pool, n)) if n > 0 else set()
    return [{**r, "dev": r["split"] == "retain" and r["author"] in dev} for r in rows]
