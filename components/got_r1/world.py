"""The world: 4 shapes x 6 colours, GenEval-style prompt templates, each prompt with a JSON spec.

A spec says what the picture must hold, as GenEval's ``evaluation_metadata.jsonl`` does: ``tag`` (the task),
``include`` (groups of ``{"class": shape, "count": n}`` with an optional ``"color"``, and for the position task
``"position": [relation, index of the reference group]`` on the second group). Held-out prompts use
attribute-object combinations (a colour with a shape, or an ordered shape pair) that no training prompt has.
"""

from __future__ import annotations

import itertools

import numpy as np

from components.errors import ParamsError

SHAPES = ("square", "circle", "triangle", "ring")
COLOURS = ("red", "green", "blue", "yellow", "purple", "orange")  # palette index = position + 1; 0 is background
PLURAL = {s: s + "s" for s in SHAPES}
NUMBERS = ("one", "two", "three", "four")
RELATIONS = ("left of", "right of", "above", "below")
TASKS = ("single_object", "two_object", "counting", "colors", "position", "color_attr")
MAX_OBJECTS = 4


def colour_index(name: str) -> int:
    return COLOURS.index(name) + 1


def held_out_combos(seed: int = 0, n_colour: int = 4, n_pair: int = 3) -> dict:
    """Colour-shape pairs and ordered shape pairs no training prompt uses (one colour per shape at most)."""
    rng = np.random.default_rng(seed)
    colours = rng.permutation(len(COLOURS))
    combos = [(COLOURS[int(colours[i])], SHAPES[i]) for i in range(min(n_colour, len(SHAPES)))]
    pairs = [p for p in itertools.permutations(SHAPES, 2)]
    idx = rng.choice(len(pairs), size=n_pair, replace=False)
    return {"colour_shape": sorted(combos), "shape_pairs": sorted(pairs[int(i)] for i in idx)}


def _group(shape: str, count: int = 1, colour: str | None = None) -> dict:
    g = {"class": shape, "count": count}
    if colour is not None:
        g["color"] = colour
    return g


def make_prompt(task: str, rng: np.random.Generator) -> dict:
    """One prompt of ``task``: ``{"prompt": text, "tag": task, "include": [...]}``."""
    s1, s2 = (SHAPES[int(i)] for i in rng.choice(len(SHAPES), 2, replace=False))
    c1, c2 = (COLOURS[int(i)] for i in rng.choice(len(COLOURS), 2, replace=False))
    if task == "single_object":
        return {"prompt": f"a photo of a {s1}", "tag": task, "include": [_group(s1)]}
    if task == "two_object":
        return {"prompt": f"a photo of a {s1} and a {s2}", "tag": task, "include": [_group(s1), _group(s2)]}
    if task == "counting":
        n = int(rng.integers(1, MAX_OBJECTS + 1))
        noun = s1 if n == 1 else PLURAL[s1]
        return {"prompt": f"a photo of {NUMBERS[n - 1]} {noun}", "tag": task, "include": [_group(s1, n)]}
    if task == "colors":
        return {"prompt": f"a photo of a {c1} {s1}", "tag": task, "include": [_group(s1, 1, c1)]}
    if task == "position":
        rel = RELATIONS[int(rng.integers(len(RELATIONS)))]
        second = {**_group(s1), "position": [rel, 0]}  # GenEval: the second group is `rel` the first
        return {"prompt": f"a photo of a {s1} {rel} a {s2}", "tag": task, "include": [_group(s2), second]}
    if task == "color_attr":
        return {
            "prompt": f"a photo of a {c1} {s1} and a {c2} {s2}",
            "tag": task,
            "include": [_group(s1, 1, c1), _group(s2, 1, c2)],
        }
    raise ParamsError(f"task {task!r} is not one of {TASKS}")


def combos_of(spec: dict) -> tuple[set, set]:
    """The colour-shape pairs and the ordered (first-named, second-named) shape pair a prompt mentions."""
    cs = {(g["color"], g["class"]) for g in spec["include"] if "color" in g}
    pairs = set()
    if spec["tag"] == "position":
        pairs.add((spec["include"][1]["class"], spec["include"][0]["class"]))
    elif spec["tag"] in ("two_object", "color_attr"):
        pairs.add((spec["include"][0]["class"], spec["include"][1]["class"]))
    return cs, pairs


def is_held_out(spec: dict, held: dict) -> bool:
    cs, pairs = combos_of(spec)
    return bool(cs & {tuple(c) for c in held["colour_shape"]}) or bool(pairs & {tuple(p) for p in held["shape_pairs"]})


def sample_prompts(
    n: int, seed: int, *, held: dict, split: str, tasks: tuple[str, ...] = TASKS, max_tries: int = 10_000
) -> list[dict]:
    """``n`` prompts, tasks in turn; ``split`` "train" has no held-out combination, "test" only held-out ones
    for the tasks that name a combination (colours, colour attribution, two objects, position)."""
    if split not in ("train", "test"):
        raise ParamsError(f"split {split!r} is not 'train' or 'test'")
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        task = tasks[i % len(tasks)]
        for _ in range(max_tries):
            spec = make_prompt(task, rng)
            held_out = is_held_out(spec, held)
            names_combo = task in ("colors", "color_attr", "two_object", "position")
            if (split == "train" and not held_out) or (split == "test" and (held_out or not names_combo)):
                out.append(spec)
                break
        else:
            raise ParamsError(f"no {split} prompt of task {task!r} found in {max_tries} tries")
    return out
