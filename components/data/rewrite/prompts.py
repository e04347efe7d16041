"""Chat prompts for the paper's three LLM rewrite styles (HQ, QA, textbook).

Written after the styles of "Rephrasing the Web" (Maini et al., 2024), which
the QualityPajama rewrites follow: Wikipedia-like prose, question-answer
conversations, and textbook-like explanations. Each prompt is a system message
plus a user turn holding the passage and the instruction, rendered through
the tokenizer's own chat template.
"""

from __future__ import annotations

import hashlib
import json

from components.errors import ParamsError

STYLES = ("hq", "qa", "textbook")

# The passage comes first and the instruction after it: SmolLM2-135M follows a
# short instruction next to the answer better than one placed before a long
# passage. ``response_prefix`` is put at the start of the assistant turn (and
# kept in the output) to lock the format; without it the QA style mostly came
# back as prose in our trials.
PROMPTS: dict[str, dict[str, str]] = {
    "hq": {
        "system": "You rewrite texts as clear, high-quality encyclopedic prose. You never invent facts.",
        "instruction": (
            "Rewrite the text above as clear, high-quality encyclopedic prose, like a Wikipedia article. "
            "Keep every fact, name and number; fix formatting; do not add new information."
        ),
        "response_prefix": "",
    },
    "qa": {
        "system": "You write question-answer pairs about texts. You never invent facts.",
        "instruction": (
            "Write question-answer pairs that cover the text above, using only its facts. "
            "Use the format:\nQuestion: ...\nAnswer: ..."
        ),
        "response_prefix": "Question:",
    },
    "textbook": {
        "system": "You write textbook sections that teach a text to students. You never invent facts.",
        "instruction": (
            "Rewrite the text above as a short textbook section: a title line, then an explanation "
            "that teaches its ideas step by step to a student. Use only facts from the text."
        ),
        "response_prefix": "",
    },
}


def check_style(style: str) -> str:
    """Return ``style`` or raise :class:`ParamsError` naming the allowed styles."""
    if style not in PROMPTS:
        raise ParamsError(f"rewrite style {style!r} is unknown; use one of {', '.join(STYLES)}")
    return style


def build_messages(passage: str, style: str) -> list[dict[str, str]]:
    """The chat messages asking for ``style`` applied to ``passage``."""
    prompt = PROMPTS[check_style(style)]
    return [
        {"role": "system", "content": prompt["system"]},
        {"role": "user", "content": f"Text:\n{passage}\n\n{prompt['instruction']}"},
    ]


def prompt_hash(style: str, settings: dict | None = None) -> str:
    """Short hash of the prompt for ``style`` plus generation ``settings``: part of the rewrite cache key."""
    payload = json.dumps({"prompt": PROMPTS[check_style(style)], "settings": settings or {}}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]
