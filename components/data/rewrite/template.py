"""Deterministic, non-LLM stand-in for the paper's LLM rewrites.

This is NOT an LLM rewrite: it only reshapes the passage's own sentences, so
its outputs carry ``rewriter: "template"`` wherever they are used. It gives the
default profile a synthetic-style dataset (Q/A pairs, clean prose, a textbook
layout) in about a millisecond per document.

- ``qa``: gloss blocks ("term: definition", "term - definition", dictionary
  headwords ``Word \\pron\\, n. [etym.]`` and their numbered senses) become
  ``Q: What is the meaning of term? A: definition``; other paragraphs become a
  fill-in-the-blank question on their first sentence.
- ``hq``: markup-ish lines (rule lines, ``[1913 Webster]``, directives, tags)
  are dropped, inline markup is stripped, whitespace is normalised and each
  paragraph is re-flowed as one line of sentences.
- ``textbook``: a heading, an introductory line, then the passage's sentences
  as a numbered explanation list.
"""

from __future__ import annotations

import re

from components.data.rewrite.prompts import check_style

TEMPLATE_NAME = "template"

# Sentence and markup rules are hand-written: the usual sentence splitters need
# model data (nltk's punkt) that is not available offline, and these
# approximations are enough for a labelled stand-in.
_SENT_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
_ENUM_ONLY = re.compile(r"^(?:\d{1,2}\.|\([a-z]\))$")
_ABBREV_END = re.compile(r"(?:^|[\s(\-])(?:[A-Z][a-z]{0,2}|[a-z]|e\.g|i\.e|etc|cf|vs|viz|fr|ib|ibid|obs)\.$")
_MARKUP_LINE = re.compile(
    r"^\s*(?:[=\-~^*#+_`:.]{3,}\s*|\[\d{4} [A-Z][\w ]*\]\s*|\.\. |::\s*$|<[^>]+>\s*$|[|+][-=+|]+[|+]\s*$)$|^\s*\.\. "
)
_BLOCK_START = re.compile(
    r"^(?:\d{1,2}\.\s|\([a-z]\)\s|[A-Z][\w'\-]*(?: [\w'\-]+){0,3} \\"
    r"|[A-Za-z][\w'\- ]{0,40}?(?::|\s[-\u2013\u2014])\s+\S)"
)
_INLINE_MARKUP = [
    (re.compile(r"\s*\\[^\\\n]{1,60}\\,?"), ","),  # GCIDE headword \pro*nun"ci*a`tion\, -> ","
    (re.compile(r"<[^>]{1,80}>"), ""),  # html tags
    (re.compile(r":\w+:`([^`]+)`"), r"\1"),  # rst roles
    (re.compile(r"`+([^`]+)`+_?"), r"\1"),  # rst literals / links
    (re.compile(r"\{([^{}]{1,80})\}"), r"\1"),  # GCIDE {cross refs}
    (re.compile(r"\*\*?(?=\S)([^*\n]{1,80}?)(?<=\S)\*\*?"), r"\1"),  # emphasis
    (re.compile(r"\[\d{4} [A-Z][\w ]*\]"), ""),  # [1913 Webster]
]
_GLOSS = re.compile(r"^([A-Za-z][\w'\- ]{0,40}?)\s*(?::|\s[-\u2013\u2014])\s+(\S.{8,})$")
_HEADWORD = re.compile(r"^([A-Z][\w'\-]*(?: [\w'\-]+){0,3}), ((?:n|v|a|adj|adv|prep|conj|interj|pron)\.\s.*)$")
_NUMBERED = re.compile(r"^(?:\d{1,2}\.|\([a-z]\))\s+(\S.*)$")
_POS_ETYM = re.compile(r"^(?:(?:n|v|a|adj|adv|prep|conj|interj|pron|p\. p|imp|t|i|pl)\.\s*[,;]?\s*)*(?:\[[^\]]*\]\s*)?")
_CITATION = re.compile(r"\s*--\s*[A-Z][\w.' ]*$")
_NOT_TERMS = frozenset({"syn", "note", "notes", "usage", "see", "example", "examples", "warning", "tip"})
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]{3,}")
_STOP = frozenset(
    [
        "this",
        "that",
        "with",
        "from",
        "they",
        "them",
        "their",
        "there",
        "these",
        "those",
        "which",
        "what",
        "when",
        "where",
        "have",
        "been",
        "were",
        "will",
        "would",
        "shall",
        "should",
        "could",
        "into",
        "upon",
        "unto",
        "also",
        "than",
        "then",
        "thou",
        "thee",
        "thy",
        "your",
        "unto",
        "said",
    ]
)


def template_rewrite(doc: dict, style: str) -> str:
    """Rewrite ``doc["text"]`` in ``style`` without a model; same input, same output."""
    check_style(style)
    text = str(doc.get("text", ""))
    blocks = clean_paragraphs(text)
    if style == "hq":
        out = "\n\n".join(blocks)
    elif style == "qa":
        out = "\n\n".join(_qa_pairs(blocks))
    else:
        out = _textbook(blocks, doc)
    return out.strip() or _normalise(text)


def split_sentences(text: str) -> list[str]:
    """Split after ., ! or ? before a capital or digit, keeping enumerators and abbreviations attached."""
    out: list[str] = []
    glue = False
    for piece in (p.strip() for p in _SENT_END.split(_normalise(text))):
        if not piece:
            continue
        if glue and out:
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
        glue = bool(_ENUM_ONLY.match(out[-1]) or _ABBREV_END.search(out[-1]))
    return out


def clean_paragraphs(text: str) -> list[str]:
    """Blocks of prose with markup lines dropped, inline markup stripped and whitespace re-flowed.

    A block ends at a blank line, and a new one starts at a line that opens a
    gloss, a dictionary headword or a numbered sense, so one-gloss-per-line
    text keeps one block per gloss.
    """
    blocks: list[list[str]] = [[]]
    for line in text.replace("\r", "").split("\n"):
        stripped = line.strip()
        if not stripped:
            blocks.append([])
        elif not _MARKUP_LINE.match(line):
            if _BLOCK_START.match(stripped) and blocks[-1]:
                blocks.append([])
            blocks[-1].append(stripped)
    out = []
    for lines in filter(None, blocks):
        flowed = _strip_inline(" ".join(lines))
        if sum(c.isalpha() for c in flowed) >= 3:
            out.append(" ".join(split_sentences(flowed)))
    return out


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _strip_inline(text: str) -> str:
    for pattern, repl in _INLINE_MARKUP:
        text = pattern.sub(repl, text)
    return _normalise(text)


def _qa_pairs(blocks: list[str]) -> list[str]:
    """One Q/A pair per block; numbered senses after a headword become "another meaning" pairs."""
    pairs: list[str] = []
    term, n_senses = None, 0
    for block in blocks:
        gloss, sense = _gloss(block), _NUMBERED.match(block)
        definition = ""
        if gloss:
            (term, definition), n_senses = gloss, 0
        elif term and sense:  # a numbered sense of the last headword; quotations in between keep the term
            definition = _first_sentence(sense.group(1))
        if term and definition:
            kind = "another meaning of" if n_senses else "the meaning of"
            pairs.append(f"Q: What is {kind} {term}?\nA: {_capitalise(definition)}")
            n_senses += 1
        elif not gloss:
            cloze = _cloze(_first_sentence(block))
            if cloze:
                pairs.append(cloze)
    return pairs


def _first_sentence(text: str) -> str:
    sentences = split_sentences(text)
    return sentences[0] if sentences else ""


def _gloss(block: str) -> tuple[str, str] | None:
    """``(term, definition)`` for a dictionary-style block (definition may be empty), else None."""
    head = _HEADWORD.match(block)
    if head:
        rest = _POS_ETYM.sub("", head.group(2)).strip()
        sense = _NUMBERED.match(rest)
        definition = _first_sentence(sense.group(1) if sense else rest)
        return head.group(1).lower(), definition if len(definition) > 8 else ""
    gloss = _GLOSS.match(block)
    if gloss and len(gloss.group(1).split()) <= 5 and gloss.group(1).strip().lower() not in _NOT_TERMS:
        return gloss.group(1).strip(), gloss.group(2).strip()
    return None


def _cloze(sentence: str) -> str:
    """A fill-in-the-blank pair on ``sentence``'s last content word; empty for short sentences."""
    sentence = _CITATION.sub("", _NUMBERED.sub(r"\1", sentence))
    words = [m for m in _WORD.finditer(sentence) if m.group().lower() not in _STOP]
    if len(sentence.split()) < 6 or not words:
        return ""
    last = words[-1]
    question = sentence[: last.start()] + "____" + sentence[last.end() :]
    return f"Q: Fill in the blank: {question}\nA: {last.group()}"


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]


def _textbook(blocks: list[str], doc: dict) -> str:
    sentences = [_NUMBERED.sub(r"\1", s) for block in blocks for s in split_sentences(block)]
    if not sentences:
        return ""
    gloss = _gloss(blocks[0])
    topic = str(doc.get("title") or (gloss[0] if gloss else " ".join(sentences[0].split()[:6]))).strip()
    lines = [f"# {_capitalise(topic)}", "", "This section explains the passage step by step.", ""]
    lines += [f"{i}. {s}" for i, s in enumerate(sentences, 1)]
    return "\n".join(lines)
