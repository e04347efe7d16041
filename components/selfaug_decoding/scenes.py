"""Shape scenes with a designed co-occurrence bias, their questions (QA, POPE, MME-style) and captions.

A scene is a ``size`` x ``size`` RGB image on a scikit-image texture (``components.scenes.textures``) with 1-5
objects, each a distinct shape from :data:`SHAPES` in a colour from :data:`COLOURS`. The bias: when the
``trigger`` shape (triangle) is in a scene, the ``partner`` shape (circle) is in it with probability ``cooc``
(0.85) instead of the unbiased rate, so a model that learns the prior says "circle" next to a triangle whether or
not a circle is there; POPE's adversarial split asks exactly those questions.

Text is word-level: every question and answer is a short sequence of words from :data:`VOCAB`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from skimage.transform import resize

from components.errors import DataError
from components.scenes.textures import TEXTURES, TINTS, _gray

SHAPES = ("circle", "square", "triangle", "diamond", "cross")
COLOURS = {
    "red": (0.9, 0.1, 0.1),
    "green": (0.1, 0.8, 0.1),
    "blue": (0.15, 0.25, 0.95),
    "yellow": (0.95, 0.9, 0.1),
    "purple": (0.6, 0.1, 0.8),
    "white": (0.97, 0.97, 0.97),
}
COUNT_WORDS = ("one", "two", "three", "four", "five")
QTYPES = ("existence", "colour", "position", "count")
SPECIAL = ("<pad>", "<bos>", "<eos>", "<sep>")
WORDS = (
    "is", "there", "a", "what", "colour", "the", "left", "of", "how", "many", "objects", "are", "describe",
    "yes", "no", "and",
)  # fmt: skip
VOCAB = SPECIAL + WORDS + SHAPES + tuple(COLOURS) + COUNT_WORDS
PAD, BOS, EOS, SEP = range(4)


@dataclass(frozen=True)
class Obj:
    shape: str
    colour: str
    x: float  # centre, pixels
    y: float
    r: float  # half size, pixels


def encode(words: Sequence[str]) -> list[int]:
    """Word ids; an unknown word is a DataError naming it."""
    index = {w: i for i, w in enumerate(VOCAB)}
    try:
        return [index[w] for w in words]
    except KeyError as exc:
        raise DataError(f"text: unknown word {exc.args[0]!r} (the scene vocabulary has {len(VOCAB)} words)") from None


def decode(ids: Sequence[int]) -> list[str]:
    return [VOCAB[i] for i in ids if i not in (PAD, BOS, SEP) and i != EOS]


def _layout(rng: np.random.Generator, shapes: list[str], size: int, r_range: tuple[float, float]) -> list[Obj]:
    """Place objects without overlap (rejection sampling); colours drawn uniformly."""
    objs: list[Obj] = []
    for s in shapes:
        for _ in range(200):
            r = float(rng.uniform(*r_range))
            x, y = (float(v) for v in rng.uniform(r + 1, size - r - 1, 2))
            if all(np.hypot(x - o.x, y - o.y) > r + o.r + 2 and abs(x - o.x) > 3 for o in objs):
                break
        else:
            raise DataError(f"scene: could not place {len(shapes)} objects of radius {r_range} on {size} px")
        objs.append(Obj(s, str(rng.choice(list(COLOURS))), x, y, r))
    return objs


def shape_mask(shape: str, x: float, y: float, r: float, size: int) -> np.ndarray:
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32) + 0.5
    dx, dy = xx - x, yy - y
    if shape == "circle":
        return dx**2 + dy**2 <= r**2
    if shape == "square":
        return (np.abs(dx) <= 0.8 * r) & (np.abs(dy) <= 0.8 * r)
    if shape == "triangle":  # apex up
        return (dy <= r) & (dy >= -r) & (np.abs(dx) <= (dy + r) / 2)
    if shape == "diamond":
        return np.abs(dx) + np.abs(dy) <= r
    if shape == "cross":
        arm = 0.33 * r
        return ((np.abs(dx) <= arm) & (np.abs(dy) <= r)) | ((np.abs(dy) <= arm) & (np.abs(dx) <= r))
    raise DataError(f"scene: unknown shape {shape!r}; use one of {SHAPES}")


@functools.cache
def _texture(name: str, side: int) -> np.ndarray:
    """A scikit-image texture (``components.scenes.textures``), standardised, downsampled once to ``side``."""
    return resize(_gray(name), (side, side), order=1, anti_aliasing=True).astype(np.float32)


def background(rng: np.random.Generator, size: int, contrast: float) -> np.ndarray:
    """A random ``size`` crop of a tinted texture (grass, gravel, brick), darkened so the objects stand out."""
    name = str(rng.choice(TEXTURES))
    g = _texture(name, 3 * size)
    y, x = (int(v) for v in rng.integers(0, 2 * size + 1, 2))
    tint = np.clip(np.asarray(TINTS[name]) + rng.normal(0, 0.05, 3), 0.05, 0.95)
    return np.clip(0.6 * tint[None, None, :] * (1.0 + contrast * g[y : y + size, x : x + size, None]), 0, 1)


def draw(rng: np.random.Generator, objs: Sequence[Obj], size: int, texture_contrast: float) -> np.ndarray:
    """The RGB image (float32, H x W x 3 in [0, 1]) of ``objs`` on a random texture."""
    img = background(rng, size, texture_contrast).astype(np.float32)
    for o in objs:
        m = shape_mask(o.shape, o.x, o.y, o.r, size)
        img[m] = np.asarray(COLOURS[o.colour], np.float32)
    return np.clip(img, 0, 1).astype(np.float32)


def sample_shapes(rng: np.random.Generator, trigger: str, partner: str, cooc: float) -> list[str]:
    """1-5 distinct shapes; with ``trigger`` present, ``partner`` is present with probability ``cooc``."""
    n = int(rng.integers(1, 6))
    shapes = [str(s) for s in rng.choice(SHAPES, n, replace=False)]
    if trigger in shapes:
        want = bool(rng.random() < cooc)
        if want and partner not in shapes:
            if len(shapes) == 5:  # cannot happen with 5 distinct shapes out of 5, kept for clarity
                shapes.remove(next(s for s in shapes if s not in (trigger, partner)))
            shapes.append(partner)
        elif not want and partner in shapes:
            shapes.remove(partner)
    order = rng.permutation(len(shapes))
    return [shapes[i] for i in order]


def make_scene(
    rng: np.random.Generator,
    *,
    size: int = 64,
    trigger: str = "triangle",
    partner: str = "circle",
    cooc: float = 0.85,
    r_range: tuple[float, float] = (4.0, 8.0),
    texture_contrast: float = 0.35,
) -> tuple[np.ndarray, list[Obj]]:
    shapes = sample_shapes(rng, trigger, partner, cooc)
    objs = _layout(rng, shapes, size, r_range)
    return draw(rng, objs, size, texture_contrast), objs


# ---------------------------------------------------------------- questions and captions


def caption(objs: Sequence[Obj]) -> list[str]:
    """The objects left to right: "a red circle and a blue square"."""
    words: list[str] = []
    for i, o in enumerate(sorted(objs, key=lambda o: o.x)):
        words += (["and"] if i else []) + ["a", o.colour, o.shape]
    return words


def existence_q(shape: str) -> list[str]:
    return ["is", "there", "a", shape]


def qa_examples(rng: np.random.Generator, objs: Sequence[Obj]) -> list[dict]:
    """Training QA for one scene: an existence yes/no, a colour, a left/right, a count question and a caption."""
    present = {o.shape for o in objs}
    absent = [s for s in SHAPES if s not in present]
    out = []
    if absent and rng.random() < 0.5:
        s = str(rng.choice(absent))
        out.append({"qtype": "existence", "q": existence_q(s), "a": ["no"]})
    else:
        s = str(rng.choice(sorted(present)))
        out.append({"qtype": "existence", "q": existence_q(s), "a": ["yes"]})
    o = objs[int(rng.integers(len(objs)))]
    if rng.random() < 0.5:
        out.append({"qtype": "colour", "q": ["what", "colour", "is", "the", o.shape], "a": [o.colour]})
    else:
        c = o.colour if rng.random() < 0.5 else str(rng.choice([c for c in COLOURS if c != o.colour]))
        out.append({"qtype": "colour", "q": ["is", "the", o.shape, c], "a": ["yes" if c == o.colour else "no"]})
    if len(objs) >= 2:
        a, b = (objs[i] for i in rng.choice(len(objs), 2, replace=False))
        out.append({"qtype": "position", "q": ["is", "the", a.shape, "left", "of", "the", b.shape],
                    "a": ["yes" if a.x < b.x else "no"]})  # fmt: skip
    n = len(objs)
    if rng.random() < 0.5:
        out.append({"qtype": "count", "q": ["how", "many", "objects"], "a": [COUNT_WORDS[n - 1]]})
    else:
        k = n if rng.random() < 0.5 else int(rng.choice([m for m in range(1, 6) if m != n]))
        out.append({"qtype": "count", "q": ["are", "there", COUNT_WORDS[k - 1], "objects"],
                    "a": ["yes" if k == n else "no"]})  # fmt: skip
    out.append({"qtype": "caption", "q": ["describe"], "a": caption(objs)})
    return out


def mme_pairs(rng: np.random.Generator, objs: Sequence[Obj]) -> list[dict]:
    """MME-style yes/no pairs, one yes and one no per category where the scene allows: existence, count,
    position, colour (MME's acc and acc+ are computed over these pairs)."""
    present = sorted({o.shape for o in objs})
    absent = [s for s in SHAPES if s not in present]
    out = []
    if absent:
        out += [{"qtype": "existence", "q": existence_q(str(rng.choice(present))), "label": "yes"},
                {"qtype": "existence", "q": existence_q(str(rng.choice(absent))), "label": "no"}]  # fmt: skip
    n = len(objs)
    k = int(rng.choice([m for m in range(1, 6) if m != n]))
    out += [{"qtype": "count", "q": ["are", "there", COUNT_WORDS[n - 1], "objects"], "label": "yes"},
            {"qtype": "count", "q": ["are", "there", COUNT_WORDS[k - 1], "objects"], "label": "no"}]  # fmt: skip
    if n >= 2:
        a, b = (objs[i] for i in rng.choice(n, 2, replace=False))
        left, right = (a, b) if a.x < b.x else (b, a)
        ask = lambda u, v: ["is", "the", u.shape, "left", "of", "the", v.shape]  # noqa: E731
        out += [{"qtype": "position", "q": ask(left, right), "label": "yes"},
                {"qtype": "position", "q": ask(right, left), "label": "no"}]  # fmt: skip
    o = objs[int(rng.integers(n))]
    c = str(rng.choice([c for c in COLOURS if c != o.colour]))
    out += [{"qtype": "colour", "q": ["is", "the", o.shape, o.colour], "label": "yes"},
            {"qtype": "colour", "q": ["is", "the", o.shape, c], "label": "no"}]  # fmt: skip
    return out


def cooccurrence(scenes: Sequence[Sequence[str]]) -> dict[str, dict[str, float]]:
    """P(b present | a present) over scenes given as shape lists."""
    out: dict[str, dict[str, float]] = {}
    for a in SHAPES:
        with_a = [set(s) for s in scenes if a in s]
        out[a] = {b: (float(np.mean([b in s for s in with_a])) if with_a else 0.0) for b in SHAPES if b != a}
    return out


def pope_questions(
    rng: np.random.Generator, scenes: Sequence[dict], split: str, n: int, cooc: dict[str, dict[str, float]]
) -> list[dict]:
    """POPE-style yes/no existence questions, half yes and half no.

    Negatives (absent shapes): ``random`` draws one uniformly; ``popular`` takes the absent shape most frequent
    in the training scenes; ``adversarial`` takes the absent shape that co-occurs most with the present ones
    (with the designed bias: "circle" beside a triangle). ``scenes`` rows carry ``id`` and ``shapes``.
    """
    if split not in ("random", "popular", "adversarial"):
        raise DataError(f"pope split {split!r}: use random, popular or adversarial")
    freq = {s: sum(s in sc["shapes"] for sc in scenes) for s in SHAPES}
    negs, poss = [], []
    for sc in scenes:
        present = set(sc["shapes"])
        absent = [s for s in SHAPES if s not in present]
        poss.append((sc["id"], str(rng.choice(sorted(present)))))
        if not absent:
            continue
        if split == "random":
            neg = str(rng.choice(absent))
        elif split == "popular":
            neg = max(absent, key=lambda s: (freq[s], s))
        else:
            neg = max(absent, key=lambda s: (max(cooc[p][s] for p in present), s))
        negs.append((sc["id"], neg))
    if split == "adversarial":  # the most co-occurring negatives first: the questions the prior gets wrong
        score = {sc["id"]: sc["shapes"] for sc in scenes}
        negs.sort(key=lambda t: -max(cooc[p][t[1]] for p in score[t[0]]))
        negs = negs[: n // 2]
        negs = [negs[i] for i in rng.permutation(len(negs))]
    else:
        negs = [negs[i] for i in rng.permutation(len(negs))]
    poss = [poss[i] for i in rng.permutation(len(poss))]
    half = n // 2
    if len(negs) < half or len(poss) < n - half:
        raise DataError(f"pope {split}: {len(negs)} negatives and {len(poss)} positives for {n} questions")
    rows = [{"image": i, "shape": s, "label": "yes"} for i, s in poss[: n - half]]
    rows += [{"image": i, "shape": s, "label": "no"} for i, s in negs[:half]]
    order = rng.permutation(len(rows))
    return [{"question_id": f"{split}-{k}", "split": split, **rows[j], "q": existence_q(rows[j]["shape"])}
            for k, j in enumerate(order)]  # fmt: skip
