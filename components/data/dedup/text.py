"""Document checks, text normalisation and shingling shared by the dedup methods.

Normalisation (used by both exact and MinHash dedup, so "the same text" means the
same thing everywhere):

1. Unicode NFKC (compatibility forms fold: full-width letters, ligatures, nbsp);
2. lowercase (``str.lower``);
3. every character that is not alphanumeric (``str.isalnum``) -- punctuation,
   symbols, ``_``, controls -- becomes a space, as datatrove's ``simplify_text``
   does (so "well-known" -> "well known");
4. runs of whitespace collapse to one space; leading/trailing space is stripped.

Numbers, weekdays and month names are *not* normalised (datatrove can); diacritics
are kept.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from components.errors import DataError, ParamsError

SHINGLE_UNITS = ("word", "char")
# ASCII bytes: letters lowercased, digits kept, everything else a space; bytes >= 128 kept.
_BYTE_TABLE = bytes(ord(chr(c).lower()) if chr(c).isalnum() else 32 for c in range(128)) + bytes(range(128, 256))
_ASCII = bytes(range(128))


def clean_bytes(text: str) -> bytes:
    """UTF-8 of the normalised text before whitespace is collapsed (every separator is a space).

    ASCII text (which NFKC leaves unchanged) goes through one byte table. Otherwise the
    distinct non-ASCII characters are read off the UTF-8 with its ASCII bytes deleted (a
    C-speed ``bytes.translate``, several times cheaper than ``set(text)`` or a regex over
    the text); ``str.lower`` runs only when one of them changes under it (ASCII letters
    are lowercased by the table, and only non-ASCII characters -- final sigma among them
    -- lower differently in context), and each non-alphanumeric one is replaced by a
    space with ``bytes.replace`` (UTF-8 is self-synchronising, so a character's encoding
    matches only that character).
    """
    if text.isascii():
        return text.encode("ascii").translate(_BYTE_TABLE)
    text = unicodedata.normalize("NFKC", text)
    data = text.encode("utf-8")
    chars = set(data.translate(None, _ASCII).decode("utf-8"))
    if any(ch.lower() != ch for ch in chars):
        data = text.lower().encode("utf-8")
        chars = set(data.translate(None, _ASCII).decode("utf-8"))
    for ch in chars:
        if not ch.isalnum():
            data = data.replace(ch.encode("utf-8"), b" ")
    return data.translate(_BYTE_TABLE)


def normalize_text(text: str) -> str:
    """Return ``text`` normalised for duplicate detection (see the module docstring)."""
    return " ".join(clean_bytes(text).decode("utf-8").split())


def doc_texts(docs: Sequence[dict], text_field: str = "text") -> list[str]:
    """Return each document's text, checking ids and the text field first.

    Raises :class:`DataError` naming the document (by id, or by position when the id is
    missing) and the field when a document is not a dict, lacks ``id`` or ``text_field``,
    has a non-string text, or repeats an id (clusters and removals are reported by id).
    """
    texts: list[str] = []
    seen: set[str] = set()
    for i, doc in enumerate(docs):
        texts.append(doc_text(doc, text_field, i))
        if doc["id"] in seen:
            raise DataError(f"document {doc['id']!r}: duplicate id (ids must be unique)")
        seen.add(doc["id"])
    return texts


def doc_text(doc: dict, text_field: str, index: int) -> str:
    """Return ``doc[text_field]``; raise :class:`DataError` naming the document and field."""
    if not isinstance(doc, dict):
        raise DataError(f"document #{index}: expected a dict, got {type(doc).__name__}")
    if "id" not in doc:
        raise DataError(f"document #{index}: missing field 'id'")
    if text_field not in doc:
        raise DataError(f"document {doc['id']!r}: missing text field {text_field!r}")
    text = doc[text_field]
    if not isinstance(text, str):
        raise DataError(f"document {doc['id']!r}: field {text_field!r} must be a string, got {type(text).__name__}")
    return text


def tokens(normalised: str, unit: str) -> list[str]:
    """Split normalised text into words, or into characters for ``unit="char"``."""
    if unit == "word":
        return normalised.split()
    if unit == "char":
        return list(normalised)
    raise ParamsError(f"shingle_unit: expected one of {SHINGLE_UNITS}, got {unit!r}")


def shingle_strings(toks: list[str], k: int, unit: str) -> list[str]:
    """The distinct k-token shingles as strings (a text shorter than k is one shingle).

    Word shingles join with a space, character shingles with nothing; this is what the
    datasketch backend hashes.
    """
    sep = " " if unit == "word" else ""
    if not toks:
        return []
    if len(toks) < k:
        return [sep.join(toks)]
    return list(dict.fromkeys(sep.join(toks[i : i + k]) for i in range(len(toks) - k + 1)))
