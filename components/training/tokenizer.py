"""Byte-level BPE tokenizers (HF ``tokenizers``) and corpus encoding to token arrays.

A byte-level BPE never meets an unknown character, so any text round-trips
through encode/decode exactly. The tokenizer is saved as one ``tokenizer.json``
that ``tokenizers``, ``transformers`` (``PreTrainedTokenizerFast``) and this
module all load.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer
from tokenizers.implementations import ByteLevelBPETokenizer
from tqdm.auto import tqdm

from components.errors import DataError, ParamsError
from components.io import atomic_path

log = logging.getLogger(__name__)

EOS = "<|endoftext|>"
_BYTE_ALPHABET = 256


def train_bpe(
    texts: Iterable[str],
    *,
    vocab_size: int = 4096,
    out_path: str | os.PathLike,
    min_frequency: int = 2,
) -> Path:
    """Train a byte-level BPE with the special token ``<|endoftext|>``; write ``out_path`` atomically.

    Training is deterministic for a fixed input (``tokenizers`` breaks count
    ties by pair order), so the same corpus gives the same ``tokenizer.json``.
    """
    if vocab_size < _BYTE_ALPHABET + 1:
        raise ParamsError(f"vocab_size must be >= {_BYTE_ALPHABET + 1} (256 bytes + {EOS}), got {vocab_size}")
    if min_frequency < 1:
        raise ParamsError(f"min_frequency must be >= 1, got {min_frequency}")
    tok = ByteLevelBPETokenizer()
    tok.train_from_iterator(
        texts, vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=[EOS], show_progress=False
    )
    if tok.get_vocab_size() <= _BYTE_ALPHABET + 1:
        raise DataError("train_bpe: texts are empty or too short to learn any merge")
    with atomic_path(out_path) as tmp:
        tok.save(str(tmp))
    log.info("trained byte-level BPE: %d tokens", tok.get_vocab_size())  # out_path may be a staging folder
    return Path(out_path)


def load_bpe(path: str | os.PathLike) -> Tokenizer:
    """Load a ``tokenizer.json`` written by :func:`train_bpe` (it must hold ``<|endoftext|>``)."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: tokenizer file not found")
    try:
        tok = Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises a bare Exception on a corrupt file
        raise DataError(f"{path}: not a valid tokenizer.json ({exc})") from None
    if tok.token_to_id(EOS) is None:
        raise DataError(f"{path}: tokenizer has no {EOS} token")
    return tok


def eos_id(tokenizer: Tokenizer) -> int:
    """Id of ``<|endoftext|>``."""
    idx = tokenizer.token_to_id(EOS)
    if idx is None:
        raise DataError(f"tokenizer has no {EOS} token")
    return idx


def token_dtype(vocab_size: int) -> np.dtype:
    """Smallest unsigned dtype holding every id: uint16 below 65536 tokens, else uint32."""
    return np.dtype(np.uint16) if vocab_size < 2**16 else np.dtype(np.uint32)


def _chunks(texts: Iterable[str], size: int) -> Iterator[list[str]]:
    it = iter(texts)
    while chunk := list(islice(it, size)):
        yield chunk


def encode_docs(
    tokenizer: Tokenizer, texts: Iterable[str], *, eos: bool = True, chunk_size: int = 1000, progress: bool = False
) -> np.ndarray:
    """Encode documents into one flat id array; with ``eos`` each document is followed by ``<|endoftext|>``.

    The array is uint16 when the vocabulary has fewer than 65536 tokens, else
    uint32. Documents are encoded in batches of ``chunk_size`` (in parallel by
    ``tokenizers``; the result does not depend on the batching).
    """
    dtype = token_dtype(tokenizer.get_vocab_size())
    end = [eos_id(tokenizer)] if eos else []
    parts: list[np.ndarray] = []
    for chunk in tqdm(_chunks(texts, chunk_size), disable=None if progress else True, desc="encode", unit="chunk"):
        for enc in tokenizer.encode_batch(chunk, add_special_tokens=False):
            parts.append(np.asarray(enc.ids + end, dtype=dtype))
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


def bytes_per_token(tokenizer: Tokenizer, texts: Iterable[str]) -> float:
    """UTF-8 bytes per token over ``texts`` (no EOS counted): divide nats/token by this and ln 2 for bits/byte."""
    n_bytes = n_tokens = 0
    for chunk in _chunks(texts, 1000):
        n_bytes += sum(len(t.encode("utf-8")) for t in chunk)
        n_tokens += sum(len(e.ids) for e in tokenizer.encode_batch(chunk, add_special_tokens=False))
    if n_tokens == 0:
        raise DataError("bytes_per_token: texts encode to no tokens")
    return n_bytes / n_tokens


def bits_per_byte(loss_nats_per_token: float, bytes_per_tok: float) -> float:
    """Convert a mean cross-entropy in nats/token into bits/byte."""
    return loss_nats_per_token / math.log(2) / bytes_per_tok
