"""C4's cleaning heuristics (Raffel et al. 2020, section 2.2) as one rule.

Page-level: drop pages containing "lorem ipsum" or a curly brace "{" (code).
Line-level: keep only lines that end in terminal punctuation, have at least
``min_words_per_line`` words and do not mention "javascript" (nor, optionally,
cookie/terms-of-use boilerplate); then drop pages with fewer than
``min_sentences`` sentences left. The bad-words list is off (as the brief asks).
When ``edit_text`` is true a kept page carries the line-filtered text, as C4 does.

Sentences are counted with a regex (runs of . ! ? followed by a space, a quote or
the end) rather than nltk's punkt, whose model is not available offline.
Verse and dictionary text often lacks terminal punctuation per line, so this rule
drops much of it; the thresholds are arguments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from components.data.filters.base import Decision, Rule, drop

TERMINAL = (".", "!", "?", '"', "'", "\u201d", "\u2019")
POLICY = ("terms of use", "privacy policy", "cookie policy", "uses cookies", "use of cookies", "use cookies")
_SENTENCE_END = re.compile(r"[.!?]+(?=[\s\"'\u201d\u2019)]|$)")


@dataclass
class C4Quality(Rule):
    """Drop pages that C4's heuristics would discard; optionally return the cleaned text."""

    name: ClassVar[str] = "c4"
    min_words_per_line: int = 3
    min_sentences: int = 5
    drop_lorem_ipsum: bool = True
    drop_curly_brace: bool = True
    drop_javascript_lines: bool = True
    drop_policy_lines: bool = True
    require_terminal_punct: bool = True
    edit_text: bool = True

    def check_text(self, text: str) -> Decision:
        lower = text.lower()
        if self.drop_lorem_ipsum and "lorem ipsum" in lower:
            return drop("lorem_ipsum")
        if self.drop_curly_brace and "{" in text:
            return drop("curly_brace")
        lines = [ln.strip() for ln in text.splitlines()]
        kept = [ln for ln in lines if ln and self._keep_line(ln)]
        n_sentences = sum(len(_SENTENCE_END.findall(ln)) for ln in kept)
        if n_sentences < self.min_sentences:
            return drop("too_few_sentences")
        changed = len(kept) < sum(1 for ln in lines if ln)
        return Decision(True, None, "\n".join(kept) if self.edit_text and changed else None)

    def _keep_line(self, line: str) -> bool:
        lower = line.lower()
        if self.require_terminal_punct and not line.endswith(TERMINAL):
            return False
        if len(line.split()) < self.min_words_per_line:
            return False
        if self.drop_javascript_lines and "javascript" in lower:
            return False
        return not (self.drop_policy_lines and any(p in lower for p in POLICY))
