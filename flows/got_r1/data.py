"""Stage ``data``: GenEval-style prompts with their JSON specs and the planner's chains for SFT.

Splits: ``sft`` (prompts with planner chains), ``rl`` (GRPO prompts), ``dev`` (tuning) and ``test`` (held-out:
colour-shape pairs and ordered shape pairs no other split names). Source ``geneval`` reads a GenEval
``evaluation_metadata.jsonl`` as the test split instead (its classes must be shapes of this world). Great
Expectations checks both tables before any stage reads them: specs well formed, chains in the grammar (one to
four objects, boxes inside the grid with x0 <= x1 and y0 <= y1).
"""

from __future__ import annotations

import json

import numpy as np

from components.data import validate as V
from components.errors import DataError
from components.got_r1 import world as W
from components.got_r1.planner import plan
from components.got_r1.tokens import Vocab, chain_text
from components.io import read_jsonl, write_json, write_jsonl
from flows.got_r1.common import SPLITS
from flows.got_r1.params import Params
from flows.got_r1.spec import DATA
from flows.runtime.stages import StageContext


def read_geneval(path) -> list[dict]:
    """GenEval metadata rows (``prompt``, ``tag``, ``include``) as test specs; every class and colour must be of
    this world and every prompt word in the vocabulary."""
    rows = read_jsonl(path)
    if not rows:
        raise DataError(f"{path}: no GenEval prompts")
    out = []
    for i, r in enumerate(rows):
        if not {"prompt", "tag", "include"} <= set(r):
            raise DataError(f"{path}: row {i} lacks prompt/tag/include (not GenEval's evaluation_metadata format)")
        for g in r["include"]:
            if g.get("class") not in W.SHAPES or g.get("color", "red") not in W.COLOURS:
                raise DataError(
                    f"{path}: row {i}: class {g.get('class')!r} / colour {g.get('color')!r} not in this world"
                )
        out.append({"prompt": r["prompt"], "tag": r["tag"], "include": r["include"]})
    return out


def run(ctx: StageContext[Params]) -> dict:
    d = ctx.params.data
    held = W.held_out_combos(d.seed, d.held_colour, d.held_pairs)
    vocab = Vocab(d.image_size)
    n = {"sft": d.n_sft, "rl": d.n_rl, "dev": d.n_dev, "test": d.n_test}
    specs = {
        s: W.sample_prompts(n[s], d.seed * 10 + k, held=held, split="test" if s == "test" else "train")
        for k, s in enumerate(SPLITS)
    }
    if d.source == "geneval":
        specs["test"] = read_geneval(d.geneval_file)
    rows = []
    for split in SPLITS:
        for i, s in enumerate(specs[split]):
            vocab.encode_prompt(s["prompt"])  # every word in the vocabulary
            rows.append(
                {
                    "id": f"{split}-{i}",
                    "split": split,
                    "prompt": s["prompt"],
                    "tag": s["tag"],
                    "include": s["include"],
                    "held_out": W.is_held_out(s, held),
                }
            )
    rng = np.random.default_rng(d.seed)
    chains = []
    for r in rows:
        if r["split"] == "sft":
            objs = plan(r, d.image_size, rng, held=held, relation_noise=d.relation_noise)
            chains.append(
                {"id": r["id"], "prompt": r["prompt"], "tag": r["tag"], "chain": objs, "text": chain_text(objs)}
            )
    out = ctx.output_dir(DATA)
    table = [
        {
            "id": r["id"],
            "split": r["split"],
            "tag": r["tag"],
            "n_groups": len(r["include"]),
            "count": sum(g["count"] for g in r["include"]),
            "held_out": r["held_out"],
        }
        for r in rows
    ]
    V.validate(
        table,
        [
            V.unique("id"),
            V.in_set("split", SPLITS),
            V.in_set("tag", W.TASKS),
            V.between("n_groups", 1, 2),
            V.between("count", 1, W.MAX_OBJECTS),
        ],
        name="prompts",
        result_path=out / "_checks" / "prompts.json",
    )
    S = d.image_size - 1
    boxes = [
        {
            "id": f"{c['id']}/{k}",
            "n_objects": len(c["chain"]),
            "x0": o["box"][0],
            "y0": o["box"][1],
            "w": o["box"][2] - o["box"][0],
            "h": o["box"][3] - o["box"][1],
            "x1": o["box"][2],
            "y1": o["box"][3],
            "colour": o["colour"],
            "shape": o["shape"],
        }
        for c in chains
        for k, o in enumerate(c["chain"])
    ]
    V.validate(
        boxes,
        [
            V.unique("id"),
            V.between("n_objects", 1, W.MAX_OBJECTS),
            V.between("x0", 0, S),
            V.between("y0", 0, S),
            V.between("x1", 0, S),
            V.between("y1", 0, S),
            V.between("w", 2, S),
            V.between("h", 2, S),
            V.in_set("colour", W.COLOURS),
            V.in_set("shape", W.SHAPES),
        ],
        name="chains",
        result_path=out / "_checks" / "chains.json",
    )
    write_jsonl(out / "prompts.jsonl", rows)
    write_jsonl(out / "sft.jsonl", chains)
    write_json(out / "held_out.json", held)
    info = {s: sum(r["split"] == s for r in rows) for s in SPLITS}
    (out / "summary.json").write_text(json.dumps(info))
    return info
