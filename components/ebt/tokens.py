"""Text <-> ids for the pipeline: the fixed character vocabulary by default, a Hugging Face tokenizer in ``full``.

The paper trains on RedPajama-V2 with the ``EleutherAI/gpt-neox-20b`` tokenizer (``EBT_NLP.__init__`` loads it);
that id sits behind config. A hub id is refused at once when offline (``HF_HUB_OFFLINE=1``) with an error naming
it; a local tokenizer folder (``save_pretrained`` output) loads offline, which is how the tests exercise the path.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from components.data.corpus.hf import is_offline
from components.ebt import chars
from components.errors import DataError, OfflineError


@dataclass
class Codec:
    """``encode(text) -> int array``, ``decode(ids) -> text``, ``vocab_size``; ``name`` says which."""

    name: str
    vocab_size: int
    _tok: Any = None

    def encode(self, text: str) -> np.ndarray:
        if self._tok is None:
            return chars.encode(text)
        dtype = np.uint16 if self.vocab_size <= 65_536 else np.int32
        return np.asarray(self._tok(text, add_special_tokens=False)["input_ids"], dtype=dtype)

    def decode(self, ids: np.ndarray) -> str:
        if self._tok is None:
            return chars.decode(ids)
        return self._tok.decode(np.asarray(ids).tolist())


def char_codec() -> Codec:
    return Codec("chars", chars.VOCAB_SIZE)


def hf_codec(tokenizer_id: str) -> Codec:
    """A Hugging Face tokenizer by hub id or local folder; offline + hub id fails at once naming the id."""
    if is_offline() and not Path(tokenizer_id).exists():
        raise OfflineError(
            f"{tokenizer_id}: a Hugging Face Hub tokenizer, but running offline (HF_HUB_OFFLINE=1); "
            "unset it with network access, or use the character vocabulary (default profile)"
        )
    from transformers import AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(tokenizer_id, clean_up_tokenization_spaces=False)
    except (OSError, ValueError) as exc:
        raise DataError(f"{tokenizer_id}: cannot load the tokenizer ({str(exc).splitlines()[0]})") from None
    return Codec(f"hf:{tokenizer_id}", len(tok), tok)  # len(): the repo uses len(tokenizer), not vocab_size


def codec_for(tokenizer_id: str | None) -> Codec:
    return char_codec() if not tokenizer_id else hf_codec(tokenizer_id)
