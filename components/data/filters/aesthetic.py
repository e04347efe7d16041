"""The QualityPajama card's "aesthetic" filter: lorem ipsum, inline code, alphanumeric ratio.

The paper's exact rules are unpublished (the card marks them unverified); this is
the stated intent with explicit thresholds:

* ``lorem_ipsum``: the text contains "lorem ipsum" (any case);
* ``inline_code``: more than ``max_code_spans`` backtick spans (`x`, ``x``) or more
  than ``max_code_line_frac`` of lines that look like code (end in ``;``/``{``/``}``,
  start with a keyword such as ``def``/``import``/``#include``, or hold ``==``/``=>``/``->``/``();``);
* ``alnum_ratio``: letters and digits are at most ``min_alnum_ratio`` of the
  non-whitespace characters (ordinary English prose is about 0.95).

Technical documentation quotes code inline, so this rule drops much of it by design.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from components.data.filters.base import KEEP, Decision, Rule, drop

_CODE_SPAN = re.compile(r"`[^`\n]+`")
_CODE_LINE = re.compile(
    r"[;{}]\s*$|^\s*(def |class \w+[:(]|import \w|from [\w.]+ import|#include|return\b|var |const |let |function\b)"
    r"|==|=>|->|\(\);"
)


@dataclass
class Aesthetic(Rule):
    """Drop lorem ipsum, documents with inline code, and documents low in letters and digits."""

    name: ClassVar[str] = "aesthetic"
    max_code_spans: int = 0
    max_code_line_frac: float = 0.1
    min_alnum_ratio: float = 0.8

    def check_text(self, text: str) -> Decision:
        if "lorem ipsum" in text.lower():
            return drop("lorem_ipsum")
        if len(_CODE_SPAN.findall(text)) > self.max_code_spans:
            return drop("inline_code")
        lines = [ln for ln in text.splitlines() if ln.strip()]
        if lines and sum(bool(_CODE_LINE.search(ln)) for ln in lines) / len(lines) > self.max_code_line_frac:
            return drop("inline_code")
        chars = "".join(text.split())
        if chars and sum(c.isalnum() for c in chars) / len(chars) <= self.min_alnum_ratio:
            return drop("alnum_ratio")
        return KEEP
