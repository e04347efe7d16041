"""Synthetic facts and CounterFact-style edit requests (subjects x relations x templates).

A fact is (subject, relation, object). Each relation has *rewrite* templates (the
editor sees them and optimises target values on them) and *paraphrase* templates
(never seen by the editor; generalisation is measured on them). The LM is trained
on every template so it knows each fact under both phrasings; paraphrases start
with a context clause, so the key at the subject's last token differs from the
rewrite keys (the hard case for a cosine gate). An edit request asks for a new
object drawn from the same relation's object set; its neighbourhood prompts are
other (never edited) subjects that share the relation and the original object.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from components.errors import DataError, ParamsError

log = logging.getLogger(__name__)

RELATIONS: dict[str, dict] = {
    "birth_city": {
        "objects": ["Paris", "London", "Berlin", "Madrid", "Rome", "Vienna", "Lisbon", "Dublin", "Prague", "Oslo"],
        "rewrite": ["{} was born in", "{} is a native of", "The birthplace of {} is"],
        "paraphrase": ["As the records show, {} was born in the city of", "Long ago, {} grew up in"],
    },
    "employer": {
        "objects": ["Google", "Apple", "Microsoft", "Amazon", "Intel", "Oracle", "Samsung", "Sony", "Nokia", "IBM"],
        "rewrite": ["{} works for", "{} is employed by", "The employer of {} is"],
        "paraphrase": ["Every morning, {} goes to work at", "By all accounts, {} earns a salary from"],
    },
    "instrument": {
        "objects": ["piano", "violin", "guitar", "cello", "flute", "trumpet", "drums", "harp", "organ", "clarinet"],
        "rewrite": ["{} plays the", "{} is a musician who plays the", "The instrument of {} is the"],
        "paraphrase": ["On stage at night, {} performs on the", "Since childhood, {} has practised the"],
    },
    "language": {
        "objects": [
            "French",
            "English",
            "German",
            "Spanish",
            "Italian",
            "Dutch",
            "Swedish",
            "Polish",
            "Greek",
            "Czech",
        ],
        "rewrite": ["{} speaks", "The mother tongue of {} is", "{} writes letters in"],
        "paraphrase": ["At home with family, {} talks in", "When dreaming at night, {} thinks in"],
    },
    "sport": {
        "objects": ["tennis", "football", "chess", "golf", "hockey", "rugby", "cricket", "boxing", "cycling", "rowing"],
        "rewrite": ["{} plays", "The favourite sport of {} is", "{} is a professional player of"],
        "paraphrase": ["On weekends with friends, {} enjoys", "For many years, {} has competed in"],
    },
}
_ONSETS = [
    "b",
    "c",
    "d",
    "f",
    "g",
    "h",
    "k",
    "l",
    "m",
    "n",
    "p",
    "r",
    "s",
    "t",
    "v",
    "z",
    "br",
    "dr",
    "gr",
    "st",
    "tr",
    "cl",
    "fl",
    "sh",
    "th",
]
_VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "io", "ou"]
_CODAS = ["", "n", "r", "l", "s", "m", "x", "nd", "rt", "th"]


def _words(n: int, rng: np.random.Generator, syllables: int) -> list[str]:
    words: dict[str, None] = {}
    while len(words) < n:
        w = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) for _ in range(syllables))
        words[w.capitalize()] = None
    return list(words)


def make_subjects(n: int, seed: int, last_names: int | None = None) -> list[str]:
    """``n`` distinct invented "First Last" names, repeatable for a seed.

    By default names combine a pool of about sqrt(2n) first and last names, so each part recurs across subjects
    (and becomes one or two BPE tokens): the model must combine both parts at the last subject token, the
    position where locate-and-edit methods read the key. ``last_names`` = L draws L distinct last names instead
    (first names: enough to fill n pairs), each shared by about n / L subjects; L = n gives every subject a last
    name of its own, so the last subject token alone tells subjects apart.
    """
    if n < 1:
        raise ParamsError(f"n_subjects must be >= 1, got {n}")
    rng = np.random.default_rng(seed)
    if last_names is None:
        k = max(2, int(np.ceil(np.sqrt(2 * n))))
        first, last = _words(k, rng, 2), _words(k, rng, 2)
        pairs = rng.permutation(k * k)[:n]
        return [f"{first[i // k]} {last[i % k]}" for i in pairs]
    if not 1 <= last_names <= n:
        raise ParamsError(f"last_names must lie in [1, n_subjects = {n}], got {last_names}")
    k_first = max(2, int(np.ceil(np.sqrt(2 * n))), int(np.ceil(n / last_names)))
    first, last = _words(k_first, rng, 2), _words(last_names, rng, 3 if last_names > 1_000 else 2)
    # every last name used about n / L times, each with distinct first names
    rows = [(i % last_names, f) for i, f in enumerate(rng.permutation(max(n, k_first * last_names)))][:n]
    seen, out = set(), []
    for li, code in rows:
        fi = code % k_first
        while (fi, li) in seen:
            fi = (fi + 1) % k_first
        seen.add((fi, li))
        out.append(f"{first[fi]} {last[li]}")
    return out


def crossed_neighbours(subjects: Sequence[str], n: int, seed: int) -> list[str]:
    """``n`` never-edited subjects whose first and last names are crossed: a few first names x a few last names.

    The LM sees these subjects' facts many times. Drawn at random, nearly every one has its own last name, so the
    LM can recall them from the last name alone and never learns to combine the two names at the last token,
    where locate-and-edit methods read the key: edited subjects that share a last name then get nearly the same
    key. In a crossed block each last name (and first name) is shared by several neighbours with different facts,
    so recalling them needs both names. The block grows from the names of a seeded order of the subjects until it
    holds ``n`` subjects; a DataError if the subjects cannot fill it.
    """
    if n < 1 or n > len(subjects):
        raise DataError(f"neighbour_pool: {n} crossed neighbours from {len(subjects)} subjects")
    rng = np.random.default_rng([seed, 5])
    parts = [s.split(" ", 1) for s in subjects]
    if any(len(p) != 2 for p in parts):
        raise DataError("crossed neighbours need 'First Last' subjects")
    firsts = list(dict.fromkeys(parts[i][0] for i in rng.permutation(len(parts))))
    lasts = list(dict.fromkeys(parts[i][1] for i in rng.permutation(len(parts))))
    have = set(map(tuple, parts))
    for a in range(1, max(len(firsts), len(lasts)) + 1):
        block = [f"{first} {last}" for first in firsts[:a] for last in lasts[:a] if (first, last) in have]
        if len(block) >= n:
            return [block[i] for i in sorted(rng.permutation(len(block))[:n])]
    raise DataError(f"neighbour_pool: the subjects hold no crossed block of {n}")


def disjoint_orders(n: int, seeds: Sequence, k: int, seed: int) -> dict[str, list[int]]:
    """Per seed, ``k`` indices into a pool of ``n``, disjoint across seeds as far as the pool allows.

    A seeded permutation splits the pool into one block per seed; seed i's list starts with its own block and
    continues with the other blocks' items in a seeded order. So the first ``n // len(seeds)`` items of the lists
    are disjoint across seeds (all of them when ``k <= n // len(seeds)``); beyond that the pool is too small and
    the seeds share subjects (each seed still draws its own relation and new object per subject).
    """
    if k > n:
        raise DataError(f"edit sets of {k} requests need {k} editable items, the pool has {n}")
    rng = np.random.default_rng([seed, 11])
    blocks = np.array_split(rng.permutation(n), len(seeds))
    out = {}
    for i, s in enumerate(seeds):
        r = np.random.default_rng([seed, 11, int(s)])
        rest = np.concatenate([b for j, b in enumerate(blocks) if j != i]) if len(seeds) > 1 else np.zeros(0, int)
        out[str(s)] = [int(x) for x in (*r.permutation(blocks[i]), *r.permutation(rest))][:k]
    return out


def generate_facts(
    n_subjects: int, seed: int, relations: Sequence[str] | None = None, last_names: int | None = None
) -> list[dict]:
    """Every subject gets one random object per relation: rows {id, subject, relation, object}."""
    rels = list(relations or RELATIONS)
    unknown = [r for r in rels if r not in RELATIONS]
    if unknown:
        raise ParamsError(f"relations: unknown {unknown}; use {list(RELATIONS)}")
    rng = np.random.default_rng([seed, 1])
    facts = []
    for subj in make_subjects(n_subjects, seed, last_names):
        for rel in rels:
            obj = RELATIONS[rel]["objects"][int(rng.integers(len(RELATIONS[rel]["objects"])))]
            facts.append({"id": f"{subj}|{rel}", "subject": subj, "relation": rel, "object": obj})
    return facts


def fact_sentences(facts: Sequence[dict]) -> list[str]:
    """Training sentences: each fact under every rewrite and paraphrase template."""
    out = []
    for f in facts:
        spec = RELATIONS[f["relation"]]
        for t in (*spec["rewrite"], *spec["paraphrase"]):
            out.append(f"{t.format(f['subject'])} {f['object']}.")
    return out


def build_edit_requests(
    facts: Sequence[dict],
    *,
    edit_subjects: Sequence[str],
    neighbour_subjects: Sequence[str],
    seed: int,
    n_neighbours: int = 5,
) -> list[dict]:
    """One counterfactual request per edit subject (a random relation of it), in ``edit_subjects`` order."""
    rng = np.random.default_rng([seed, 2])
    by_subject: dict[str, list[dict]] = {}
    for f in facts:
        by_subject.setdefault(f["subject"], []).append(f)
    pool: dict[tuple[str, str], list[str]] = {}
    for s in neighbour_subjects:
        for f in by_subject.get(s, []):
            pool.setdefault((f["relation"], f["object"]), []).append(s)
    requests = []
    for s in edit_subjects:
        if s not in by_subject:
            raise DataError(f"edit subject {s!r}: no facts for it")
        f = by_subject[s][int(rng.integers(len(by_subject[s])))]
        spec = RELATIONS[f["relation"]]
        choices = [o for o in spec["objects"] if o != f["object"]]
        new = choices[int(rng.integers(len(choices)))]
        neigh = pool.get((f["relation"], f["object"]), [])
        picked = [neigh[i] for i in rng.permutation(len(neigh))[:n_neighbours]]
        neighbour_prompts = [spec["rewrite"][int(rng.integers(len(spec["rewrite"])))].format(n) for n in picked]
        requests.append(
            {
                "id": f["id"],
                "subject": s,
                "relation": f["relation"],
                "target_true": f["object"],
                "target_new": new,
                "prompts": [t.format(s) for t in spec["rewrite"]],
                "paraphrase_prompts": [t.format(s) for t in spec["paraphrase"]],
                "neighborhood_prompts": neighbour_prompts,
                "neighborhood_subjects": picked,
            }
        )
    return requests


def check_requests(requests: Sequence[dict], *, duplicates: str = "error") -> list[dict]:
    """Reject malformed edit requests with a one-line error naming the request and field.

    ``duplicates``: ``"error"`` refuses two requests for one subject with different targets;
    ``"last-wins"`` keeps the last request of each subject (a later edit overrides an earlier one).
    """
    if duplicates not in ("error", "last-wins"):
        raise ParamsError(f"duplicates: expected 'error' or 'last-wins', got {duplicates!r}")
    if not requests:
        raise DataError("edit set is empty: nothing to edit")
    seen: dict[str, int] = {}
    for i, r in enumerate(requests):
        for key in ("id", "subject", "prompts", "target_new", "target_true"):
            if key not in r or r[key] in (None, "", []):
                raise DataError(f"edit request {i} ({r.get('id', '?')}): missing field {key!r}")
        for p in (*r["prompts"], *r.get("paraphrase_prompts", [])):
            if r["subject"] not in p:
                raise DataError(f"edit request {i} ({r['id']}): subject {r['subject']!r} is not in prompt {p!r}")
        if r["target_new"] == r["target_true"]:
            raise DataError(f"edit request {i} ({r['id']}): target_new equals target_true {r['target_true']!r}")
        j = seen.get(r["subject"])
        if j is not None and requests[j]["target_new"] != r["target_new"] and duplicates == "error":
            raise DataError(
                f"edit requests {j} and {i}: subject {r['subject']!r} has conflicting targets "
                f"{requests[j]['target_new']!r} and {r['target_new']!r}"
            )
        seen[r["subject"]] = i
    keep = sorted(seen.values())
    if len(keep) < len(requests):
        log.info("last-wins: %d duplicate request(s) dropped", len(requests) - len(keep))
    return [requests[i] for i in keep]


def add_subject_tokens(tok, subjects: list[str], mode: str) -> None:
    """Add the subjects (``whole``) or their name parts (``parts``) to the tokenizer as whole-word tokens.

    ``parts`` is the default: each first and last name recurs across many subjects, so a subject is two
    well-trained tokens that the LM must combine at the last one, the position whose MLP output an edit
    changes (as with multi-token subjects in real LMs). With one token per subject a tiny LM stores the
    facts in the subject's embedding and reads it by attention: the subject-position MLPs carry nothing,
    and no locate-and-edit method can reach the facts (measured: zero causal-trace effect at every layer).
    """
    from tokenizers import AddedToken

    if mode not in ("parts", "whole"):
        raise ParamsError(f"subject_tokens: expected 'parts' or 'whole' to add tokens, got {mode!r}")
    names = sorted({part for s in subjects for part in s.split()} if mode == "parts" else set(subjects))
    tok.add_tokens([AddedToken(n, single_word=True) for n in names])
