"""A fixed character vocabulary: id 0 = unknown, then newline and the 95 printable ASCII characters (97 symbols).

Fixed rather than learned from the training text, so every set (Austen, Shakespeare, KJV, Linux docs) is encoded
with the same ids and no OOD character silently shifts the vocabulary. Text is NFKD-normalised and accents are
dropped first (e.g. "é" -> "e"); anything still outside the alphabet maps to id 0.
"""

from __future__ import annotations

import unicodedata

import numpy as np

UNK = 0
ALPHABET = "\n" + "".join(chr(c) for c in range(32, 127))
VOCAB_SIZE = len(ALPHABET) + 1
_TABLE = np.zeros(0x110000, dtype=np.uint8)
for _i, _ch in enumerate(ALPHABET, start=1):
    _TABLE[ord(_ch)] = _i


def normalise(text: str) -> str:
    """NFKD with combining marks dropped; tabs become spaces, CR/LF pairs one newline."""
    text = unicodedata.normalize("NFKD", text.replace("\r\n", "\n").replace("\t", " "))
    return "".join(c for c in text if not unicodedata.combining(c))


def encode(text: str) -> np.ndarray:
    """Character ids (uint8) of ``normalise(text)``."""
    codes = np.frombuffer(normalise(text).encode("utf-32-le"), dtype=np.uint32)
    return _TABLE[codes]


def decode(ids: np.ndarray) -> str:
    """Text of ids (unknown shown as U+FFFD)."""
    return "".join("\ufffd" if i == UNK else ALPHABET[i - 1] for i in np.asarray(ids).tolist())
