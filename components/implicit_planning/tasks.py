"""Couplet tasks: the control language (word tokens) and a Hugging Face tokenizer (real lines, CMU families)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from components.implicit_planning import rhymes
from components.implicit_planning.couplets import NL, CoupletLanguage
from components.implicit_planning.steering import CoupletTask, Line2

PROMPT = "A rhyming couplet:\n{line1}\n"
_WORD = re.compile(r"[A-Za-z]+(?:'[a-z]+)?")


def control_task(lang: CoupletLanguage, position: str = "newline") -> CoupletTask:
    fam = lang.family_of

    def parse(new: list[int]) -> Line2:
        toks = new[: new.index(NL)] if NL in new else list(new)
        words = lang.decode(toks)
        if not words:
            return Line2(toks, "", None, 0, None)
        n_final = len(lang.split(words[-1])) if words[-1] in fam else 1
        article = words[-3] if len(words) >= 3 and words[-3] in ("a", "an") else None
        return Line2(toks, " ".join(words), words[-1], len(toks) - n_final, article, final_tokens=n_final)

    return CoupletTask(
        prompt_ids=lambda line: lang.prompt(line.split()),
        parse=parse,
        family_of=fam.get,
        family_tokens=lambda f: lang.encode(["-" + f]),  # the rime token
        metric_last=True,
        stop_ids=(NL,),
        position=position,
    )


def hf_couplet_task(tokenizer, families: Sequence[str], position: str = "newline") -> CoupletTask:
    """Prompts ``"A rhyming couplet:\\n{line1}\\n"``; a final word's family judged with the CMU dictionary."""
    stops = newline_ids(tokenizer)
    families = tuple(families)

    def prompt_ids(line: str) -> list[int]:
        return list(tokenizer(PROMPT.format(line1=line), add_special_tokens=False)["input_ids"])

    def parse(new: list[int]) -> Line2:
        cut = next((i for i, t in enumerate(new) if t in stops), len(new))
        toks = list(new[:cut])
        text = tokenizer.decode(toks)
        words = list(_WORD.finditer(text))
        if not words:
            return Line2(toks, text, None, 0, None)
        start = words[-1].start()
        first = next((i for i in range(len(toks)) if len(tokenizer.decode(toks[: i + 1])) > start), len(toks) - 1)
        end = next(
            (i for i in range(first, len(toks)) if len(tokenizer.decode(toks[: i + 1])) >= words[-1].end()),
            len(toks) - 1,
        )
        article = words[-2].group().lower() if len(words) >= 2 and words[-2].group().lower() in ("a", "an") else None
        return Line2(toks, text, words[-1].group().lower(), first, article, final_tokens=end - first + 1)

    def family_of(word: str) -> str | None:
        fams = rhymes.families_of(word, families)
        return fams[0] if fams else None

    return CoupletTask(
        prompt_ids=prompt_ids,
        parse=parse,
        family_of=family_of,
        family_tokens=lambda f: family_first_tokens(tokenizer, f),
        stop_ids=tuple(sorted(stops)),
        position=position,
    )


def newline_ids(tokenizer) -> set[int]:
    return _newline_ids(tokenizer)


@lru_cache(maxsize=4)
def _newline_ids(tokenizer) -> frozenset[int]:
    eos = {tokenizer.eos_token_id} if tokenizer.eos_token_id is not None else set()
    return frozenset(i for i in range(len(tokenizer)) if "\n" in tokenizer.decode([i])) | eos


def family_first_tokens(tokenizer, family: str) -> list[int]:
    """Ids of ``" word"`` for words of ``family`` (CMU rhymes of its reference word) that are one token long."""
    import pronouncing

    ref = rhymes.FAMILY_REFERENCE[family]
    out = set()
    for w in [ref, *pronouncing.rhymes(ref)]:
        if not w.isalpha() or not rhymes.in_family(w, family):
            continue
        ids = tokenizer(" " + w, add_special_tokens=False)["input_ids"]
        if len(ids) == 1:
            out.add(ids[0])
    return sorted(out)
