"""The joint vocabulary (text words, quantised coordinates, palette indices) and the sequence layout.

A sequence is the prompt, left-padded to a fixed length and opened by ``<bos>``; then, for a chain model, the
chain as :data:`~components.got_r1.world.MAX_OBJECTS` slots of six tokens (colour, shape, x0, y0, x1, y1; an
unused slot is six ``<none>``); then ``<img>``, the S x S palette tokens row by row, and ``<eos>``. The fixed
layout puts every image cell at a fixed position, which the decoder's absolute position embedding reads.
The chain's text form is the card's: ``red square (2,3,7,8); blue circle (9,3,14,8)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from components.errors import ParamsError
from components.got_r1.world import COLOURS, MAX_OBJECTS, NUMBERS, PLURAL, RELATIONS, SHAPES

SPECIALS = ("<pad>", "<bos>", "<img>", "<eos>", "<none>")
SLOT = 6
PROMPT_LEN = 12  # <bos> + the longest template (10 words), padded


def _words() -> list[str]:
    words = ["a", "photo", "of", "and", *NUMBERS, *COLOURS, *SHAPES, *PLURAL.values()]
    for r in RELATIONS:
        words += r.split()
    return list(dict.fromkeys(words))


@dataclass(frozen=True)
class Vocab:
    size: int  # image side S (coordinates 0..S-1)

    def __post_init__(self) -> None:
        if not 8 <= self.size <= 32:
            raise ParamsError(f"image size must be in [8, 32], got {self.size}")

    @cached_property
    def tokens(self) -> list[str]:
        return [*SPECIALS, *_words(), *(f"c{i}" for i in range(self.size)), *(f"p{i}" for i in range(len(COLOURS) + 1))]

    @cached_property
    def index(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self.tokens)}

    def __len__(self) -> int:
        return len(self.tokens)

    def id(self, tok: str) -> int:
        return self.index[tok]

    @property
    def pad(self) -> int:
        return 0

    @property
    def eos(self) -> int:
        return self.id("<eos>")

    def chain_len(self, with_chain: bool) -> int:
        return MAX_OBJECTS * SLOT if with_chain else 0

    def completion_len(self, with_chain: bool) -> int:
        return self.chain_len(with_chain) + 2 + self.size * self.size

    def seq_len(self, with_chain: bool) -> int:
        return PROMPT_LEN + self.completion_len(with_chain)

    def encode_prompt(self, text: str) -> list[int]:
        words = text.split()
        unknown = [w for w in words if w not in self.index]
        if unknown:
            raise ParamsError(f"prompt {text!r}: unknown words {unknown}")
        if len(words) + 1 > PROMPT_LEN:
            raise ParamsError(f"prompt {text!r} is longer than {PROMPT_LEN - 1} words")
        return [self.pad] * (PROMPT_LEN - 1 - len(words)) + [self.id("<bos>")] + [self.id(w) for w in words]

    def encode_chain(self, objects: list[dict]) -> list[int]:
        if len(objects) > MAX_OBJECTS:
            raise ParamsError(f"a chain holds at most {MAX_OBJECTS} objects, got {len(objects)}")
        ids = []
        for o in objects:
            ids += [self.id(o["colour"]), self.id(o["shape"]), *(self.id(f"c{int(v)}") for v in o["box"])]
        return ids + [self.id("<none>")] * (SLOT * (MAX_OBJECTS - len(objects)))

    def encode_image(self, img: np.ndarray) -> list[int]:
        if img.shape != (self.size, self.size):
            raise ParamsError(f"image shape {img.shape} is not ({self.size}, {self.size})")
        return [self.id("<img>"), *(self.id(f"p{int(v)}") for v in img.reshape(-1)), self.eos]

    def completion(self, objects: list[dict] | None, img: np.ndarray) -> list[int]:
        return (self.encode_chain(objects) if objects is not None else []) + self.encode_image(img)

    def decode(self, ids: list[int], with_chain: bool) -> dict:
        """Parse a completion: ``objects`` (None if the chain breaks the grammar), ``image`` (cells that are not
        palette tokens read as background), ``chain_valid`` and ``image_valid``."""
        toks = [self.tokens[i] if 0 <= i < len(self) else "<pad>" for i in ids]
        objects, chain_valid = None, not with_chain
        if with_chain:
            objects, chain_valid = parse_chain(toks[: self.chain_len(True)], self.size)
            toks = toks[self.chain_len(True) :]
        cells = toks[1 : 1 + self.size * self.size]
        image_valid = (
            len(toks) >= 2 + self.size * self.size
            and toks[0] == "<img>"
            and all(t.startswith("p") and t[1:].isdigit() for t in cells)
            and toks[1 + self.size * self.size] == "<eos>"
        )
        vals = [int(t[1:]) if t.startswith("p") and t[1:].isdigit() else 0 for t in cells]
        vals += [0] * (self.size * self.size - len(vals))
        img = np.asarray(vals, np.int64).reshape(self.size, self.size)
        return {"objects": objects, "image": img, "chain_valid": chain_valid, "image_valid": image_valid}


def _coord(t: str, size: int) -> int | None:
    if t.startswith("c") and t[1:].isdigit() and int(t[1:]) < size:
        return int(t[1:])
    return None


def parse_chain(toks: list[str], size: int) -> tuple[list[dict] | None, bool]:
    """Slots of six tokens: a colour, a shape and a box with x0 <= x1, y0 <= y1; or six ``<none>``; at least
    one object and no object after an empty slot."""
    if len(toks) != MAX_OBJECTS * SLOT:
        return None, False
    objects, ended = [], False
    for k in range(MAX_OBJECTS):
        s = toks[k * SLOT : (k + 1) * SLOT]
        if all(t == "<none>" for t in s):
            ended = True
            continue
        box = [_coord(t, size) for t in s[2:]]
        if ended or s[0] not in COLOURS or s[1] not in SHAPES or None in box or box[0] > box[2] or box[1] > box[3]:
            return None, False
        objects.append({"colour": s[0], "shape": s[1], "box": tuple(box)})
    return (objects, True) if objects else (None, False)


def chain_text(objects: list[dict] | None) -> str:
    if not objects:
        return "(invalid chain)"
    return "; ".join(f"{o['colour']} {o['shape']} ({','.join(str(v) for v in o['box'])})" for o in objects)
