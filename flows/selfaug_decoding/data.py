"""Stage ``data``: shape scenes with the designed co-occurrence bias, training QA and captions, and the held-out
evaluation sets (POPE random / popular / adversarial, MME-style yes/no pairs, caption scenes). Great
Expectations checks every table before it is written: POPE's yes/no balance per split, the co-occurrence rate
as designed (in the training and the held-out scenes), the question vocabulary and the object counts."""

from __future__ import annotations

import numpy as np

from components.data import validate as V
from components.io import write_jsonl
from components.selfaug_decoding import scenes as S
from flows.runtime.stages import StageContext
from flows.selfaug_decoding.params import Params
from flows.selfaug_decoding.spec import DATA

SPLITS = ("random", "popular", "adversarial")


def _scenes(rng, n: int, d, offset: int) -> tuple[np.ndarray, list[dict]]:
    imgs, rows = [], []
    for i in range(n):
        img, objs = S.make_scene(rng, size=d.size, trigger=d.trigger, partner=d.partner, cooc=d.cooc,
                                 r_range=tuple(d.radius), texture_contrast=d.texture_contrast)  # fmt: skip
        imgs.append(np.round(img * 255).astype(np.uint8))
        rows.append({"id": offset + i, "shapes": [o.shape for o in objs], "n_objects": len(objs),
                     "objects": [{"shape": o.shape, "colour": o.colour, "x": round(o.x, 2), "y": round(o.y, 2),
                                  "r": round(o.r, 2)} for o in objs]})  # fmt: skip
    return np.stack(imgs), rows


def _cooc_check(rows: list[dict], d, name: str, out) -> dict:
    with_t = [r for r in rows if d.trigger in r["shapes"]]
    rate = float(np.mean([d.partner in r["shapes"] for r in with_t])) if with_t else float("nan")
    table = [{"id": name, "pair": f"{d.trigger}->{d.partner}", "rate": rate, "n_trigger": len(with_t)}]
    V.validate(table, [V.between("rate", d.cooc - d.cooc_tolerance, d.cooc + d.cooc_tolerance),
                       V.between("n_trigger", 10, None)],
               name=f"cooccurrence-{name}", result_path=out / "_checks" / f"cooccurrence_{name}.json")  # fmt: skip
    return {"rate": rate, "n_trigger": len(with_t)}


def run(ctx: StageContext[Params]) -> dict:
    d = ctx.params.data
    if ctx.params.paper_scale.model_id is not None:  # the paper-scale model must be here before any work
        from components.selfaug_decoding.hf import require

        require(ctx.params.paper_scale.model_id)
    out = ctx.output_dir(DATA)
    rng = np.random.default_rng(d.seed)
    train_imgs, train_rows = _scenes(rng, d.n_train_scenes, d, 0)
    eval_imgs, eval_rows = _scenes(rng, d.n_eval_scenes, d, d.n_train_scenes)
    scene_suite = [V.unique("id"), V.between("n_objects", 1, 5)]
    V.validate(train_rows + eval_rows, scene_suite, name="scenes", result_path=out / "_checks" / "scenes.json")
    cooc = {"train": _cooc_check(train_rows, d, "train", out), "eval": _cooc_check(eval_rows, d, "eval", out)}

    examples = []
    for r in train_rows:
        objs = [S.Obj(**o) for o in r["objects"]]
        for k, e in enumerate(S.qa_examples(rng, objs)):
            examples.append({"id": f"{r['id']}-{k}", "scene": r["id"], **e})
    V.validate([{"id": e["id"], "qtype": e["qtype"], "text": " ".join(e["q"] + e["a"])} for e in examples],
               [V.unique("id"), V.in_set("qtype", (*S.QTYPES, "caption")), V.non_empty_text("text")],
               name="train-qa", result_path=out / "_checks" / "train_qa.json")  # fmt: skip

    stats = S.cooccurrence([r["shapes"] for r in train_rows])
    pope = []
    for split in SPLITS:
        qs = S.pope_questions(np.random.default_rng([d.seed, SPLITS.index(split)]), eval_rows, split, d.pope_n, stats)
        V.validate([{"id": q["question_id"], "yes": int(q["label"] == "yes"), "shape": q["shape"]} for q in qs],
                   [V.unique("id"), V.mean_between("yes", 0.5 - 0.5 / len(qs), 0.5 + 0.5 / len(qs)),
                    V.in_set("shape", S.SHAPES), V.row_count_between(d.pope_n, d.pope_n)],
                   name=f"pope-{split}", result_path=out / "_checks" / f"pope_{split}.json")  # fmt: skip
        pope += qs
    adv_trap = sum(q["label"] == "no" and q["shape"] == d.partner and d.trigger in eval_rows[q["image"] -
                   d.n_train_scenes]["shapes"] for q in pope if q["split"] == "adversarial")  # fmt: skip

    mme = []
    for r in eval_rows[: d.n_mme_scenes]:
        objs = [S.Obj(**o) for o in r["objects"]]
        for k, q in enumerate(S.mme_pairs(rng, objs)):
            mme.append({"question_id": f"mme-{r['id']}-{k}", "image": r["id"], **q})
    V.validate([{"id": q["question_id"], "qtype": q["qtype"], "yes": int(q["label"] == "yes")} for q in mme],
               [V.unique("id"), V.in_set("qtype", S.QTYPES), V.mean_between("yes", 0.5, 0.5)],
               name="mme", result_path=out / "_checks" / "mme.json")  # fmt: skip
    captions = [{"image": r["id"], "shapes": r["shapes"]} for r in eval_rows[-d.n_captions :]]

    # the dev split: its own scenes (own generator, ids after the held-out ones) and its POPE questions,
    # for the blindness check after training and the tuning of alpha / beta / tau (the test split never is)
    dev_rng = np.random.default_rng([d.seed, 17])
    dev_imgs, dev_rows = _scenes(dev_rng, d.n_dev_scenes, d, d.n_train_scenes + d.n_eval_scenes)
    V.validate(dev_rows, scene_suite, name="dev-scenes", result_path=out / "_checks" / "dev_scenes.json")
    pope_dev = []
    for split in SPLITS:
        qs = S.pope_questions(np.random.default_rng([d.seed, 17, SPLITS.index(split)]), dev_rows, split,
                              d.dev_pope_n, stats)  # fmt: skip
        pope_dev += [{**q, "question_id": f"dev-{q['question_id']}"} for q in qs]
    V.validate([{"id": q["question_id"], "yes": int(q["label"] == "yes"), "split": q["split"]} for q in pope_dev],
               [V.unique("id"), V.mean_between("yes", 0.5 - 1.5 / len(pope_dev), 0.5 + 1.5 / len(pope_dev)),
                V.in_set("split", SPLITS), V.row_count_between(3 * d.dev_pope_n, 3 * d.dev_pope_n)],
               name="pope-dev", result_path=out / "_checks" / "pope_dev.json")  # fmt: skip

    np.savez_compressed(out / "train_images.npz", images=train_imgs)
    np.savez_compressed(out / "eval_images.npz", images=eval_imgs, offset=np.int64(d.n_train_scenes))
    write_jsonl(out / "scenes.jsonl", train_rows + eval_rows)
    write_jsonl(out / "train.jsonl", examples)
    write_jsonl(out / "pope.jsonl", pope)
    write_jsonl(out / "mme.jsonl", mme)
    write_jsonl(out / "captions.jsonl", captions)
    np.savez_compressed(out / "dev_images.npz", images=dev_imgs, offset=np.int64(d.n_train_scenes + d.n_eval_scenes))
    write_jsonl(out / "pope_dev.jsonl", pope_dev)
    return {"train_scenes": len(train_rows), "train_examples": len(examples), "pope": len(pope), "mme": len(mme),
            "captions": len(captions), "pope_dev": len(pope_dev), "cooc_train": cooc["train"]["rate"],
            "cooc_eval": cooc["eval"]["rate"],
            "adversarial_trap_negatives": int(adv_trap)}  # fmt: skip
