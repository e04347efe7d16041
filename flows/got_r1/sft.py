"""Stage ``sft``: GoT-SFT (prompt -> chain -> picture) and the direct baseline (prompt -> picture), both trained
once on the planner's chains and the pictures rendered from them, then scored on the held-out test prompts."""

from __future__ import annotations

import numpy as np

from components.data import validate as V
from components.errors import DataError
from components.got_r1 import model as M
from components.got_r1 import train as T
from components.got_r1.render import render
from components.got_r1.tokens import Vocab, chain_text
from components.io import read_json, read_jsonl, write_json, write_jsonl
from components.training.threads import set_threads
from flows.got_r1.common import load_prompts, log
from flows.got_r1.params import Params
from flows.got_r1.spec import DATA, SFT
from flows.runtime.stages import StageContext
from flows.runtime.tracking import TOKEN_IDS, Tensor

LOADER = "components.got_r1.model:load_model"
ARMS = {"got-sft": True, "direct": False}  # arm -> writes a chain first


def check_model_source(m) -> None:
    """The full profile names Janus-Pro; that path is not built here, so it stops at once naming the id."""
    if m.janus_id:
        raise DataError(
            f"got-r1.model.janus_id {m.janus_id!r}: the Janus-Pro path is not built at this scale (see the README's "
            "known gaps); nothing is downloaded"
        )


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    m = p.model
    check_model_source(m)
    set_threads(p.resources.threads)
    vocab = Vocab(p.data.image_size)
    chains = read_jsonl(ctx.input(f"{DATA}/sft.jsonl"))
    test = load_prompts(ctx.input(f"{DATA}/prompts.jsonl"), "test")
    held = read_json(ctx.input(f"{DATA}/held_out.json"))
    out = ctx.output_dir(SFT)
    rows, info = [], {}
    for arm, with_chain in ARMS.items():
        data = [
            (
                vocab.encode_prompt(c["prompt"]),
                vocab.completion(c["chain"] if with_chain else None, render(c["chain"], vocab.size)),
            )
            for c in chains
        ]
        model = M.build(
            len(vocab),
            vocab.seq_len(with_chain),
            d_model=m.d_model,
            n_layers=m.n_layers,
            n_heads=m.n_heads,
            seed=m.seed,
        )
        losses = T.sft(
            model,
            data,
            steps=m.sft_steps,
            batch=m.batch_size,
            lr=m.lr,
            seed=m.seed,
            log_every=max(1, m.sft_steps // 50),
        )
        outputs = T.generate(model, vocab, test, with_chain=with_chain)
        scored = T.score_outputs(test, outputs, with_chain=with_chain)
        for s, o, r in zip(test, outputs, scored):
            rows.append(
                {
                    **r,
                    "id": s["id"],
                    "method": arm,
                    "seed": -1,
                    "chain": chain_text(o["objects"]) if with_chain else "",
                    "image": o["image"].tolist(),
                }
            )
        summ = T.summary(scored)
        M.save_model(model, out / arm)
        info[arm] = {"summary": summ, "final_loss": float(np.mean([x["loss"] for x in losses[-3:]])), "losses": losses}
        ctx.log_model(
            arm,
            {"model": m.model_dump(), "with_chain": with_chain},
            out / arm,
            loader=LOADER,
            inputs=TOKEN_IDS,
            outputs=Tensor("logits", "float32", (-1, -1, len(vocab))),
            metrics={k: v for k, v in summ.items()},
            curves={"sft_loss": [(x["step"], x["loss"]) for x in losses]},
        )
        log.info("got-r1 sft %s: loss %.3f, test overall %.3f", arm, info[arm]["final_loss"], summ["overall"])
    V.validate(
        [{k: r.get(k) for k in ("id", "method", "seed", "correct", "score", "image_valid")} for r in rows],
        [V.not_null("id"), V.between("correct", 0, 1), V.between("score", 0, 1), V.between("image_valid", 0, 1)],
        name="sft_eval",
        result_path=out / "_checks" / "eval.json",
        id_column=None,
    )
    write_jsonl(out / "eval.jsonl", rows)
    write_json(out / "sft.json", {**info, "held_out": held, "examples": len(chains)})
    return {f"{a}_overall": info[a]["summary"]["overall"] for a in ARMS}
