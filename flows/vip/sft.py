"""Stage ``sft``: the char-level tiny LM, SFT'd on mostly easy worked examples to heterogeneous partial
competence; the held-out success per tier (greedy and sampled) is measured and written beside the model."""

from __future__ import annotations

import dataclasses

import numpy as np

from components.errors import ParamsError
from components.io import read_jsonl, write_json
from components.models.tiny_lm import TinyLM, TinyLMConfig, save_model
from components.training.qa_lm import train_lm
from components.training.threads import set_threads
from components.vip import evaluation as E
from components.vip import task as T
from components.vip.codec import CHAR, Codec, hf_codec
from flows.runtime.stages import StageContext
from flows.runtime.tracking import LM_LOADER, TOKEN_IDS, Tensor, signature
from flows.vip.common import log
from flows.vip.params import Params
from flows.vip.spec import DATA, SFT


def competence(model, rows: list[dict], k: int, max_new: int, seed: int, codec: Codec = CHAR) -> dict:
    counts = E.correct_counts(model, rows, k, max_new=max_new, seed=seed, codec=codec)
    tiers = sorted({r["tier"] for r in rows})
    per = {t: float(np.mean([counts[i] / k for i, r in enumerate(rows) if r["tier"] == t])) for t in tiers}
    return {
        "overall": float(np.mean(counts / k)),
        "per_tier": per,
        "tier_spread": float(max(per.values()) - min(per.values())),
    }


def _log(ctx, info: dict, model_dir) -> None:
    if ctx.tracker is None:
        return
    sig = signature(TOKEN_IDS, Tensor("logits", "float32", (-1, -1, T.VOCAB)))
    with ctx.tracker.child("sft", {"model": ctx.params.model.model_dump()}) as rid:
        losses = info["losses"]
        ctx.tracker.log_metrics(
            {
                "sft_success": info["competence"]["overall"],
                **{f"success/{t}": v for t, v in info["competence"]["per_tier"].items()},
            },
            run_id=rid,
        )
        for i in range(0, len(losses), max(1, len(losses) // 50)):
            ctx.tracker.log_metrics({"train_loss": losses[i]}, step=i, run_id=rid)
        ctx.tracker.log_state_dict_model(rid, model_dir, loader=LM_LOADER, signature=sig)


def _base_policy(ctx: StageContext[Params], model_id: str) -> dict:
    """The full profile: RL starts from the pretrained causal LM itself (as the paper's does; no SFT here). It is
    loaded (offline: from a local folder or the HF cache, else a one-line error naming the id), measured on the
    held-out prompts as the SFT policy is, and saved as the rl stage's starting policy."""
    from components.vip.policy import load_hf, save_policy
    from flows.runtime.settings import online

    p = ctx.params
    model, tok = load_hf(model_id, online=online(), cache_dir=ctx.paths.cache / "models")
    held = read_jsonl(ctx.input(f"{DATA}/heldout.jsonl"))
    comp = competence(model, held, p.rl.eval_k, p.rl.max_new, seed=p.model.seed + 1, codec=hf_codec(tok))
    out = ctx.output(SFT)
    save_policy(model, out / "model", tok)
    info = {"examples": 0, "base_model": model_id, "competence": comp}
    write_json(out / "sft.json", info)
    log.info("vip: base policy %s, held-out success %.3f", model_id, comp["overall"])
    if ctx.tracker is not None:
        with ctx.tracker.child("sft", {"base_model": model_id}) as rid:
            ctx.tracker.log_metrics({"sft_success": comp["overall"]}, run_id=rid)
            ctx.tracker.log_artifact(out / "model", artifact_path="model", run_id=rid)
    return {"final_loss": None, "success": comp["overall"], "tier_spread": comp["tier_spread"]}


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    m = p.model
    set_threads(p.resources.threads)
    if m.hf_model:
        return _base_policy(ctx, m.hf_model)
    sft_rows = read_jsonl(ctx.input(f"{DATA}/sft.jsonl"))
    held = read_jsonl(ctx.input(f"{DATA}/heldout.jsonl"))
    if not sft_rows:
        raise ParamsError("vip.data.n_sft: the SFT set is empty (source 'dapo' has no worked examples offline)")
    items = T.sft_items(sft_rows)
    cfg = TinyLMConfig(
        vocab_size=T.VOCAB,
        d_model=m.d_model,
        n_layers=m.n_layers,
        n_heads=m.n_heads,
        d_ff=m.d_ff,
        max_seq_len=max(len(i[0]) for i in items) + p.rl.max_new + 2,
    )
    model = TinyLM(cfg, seed=m.seed)
    losses = train_lm(
        model, items, steps=m.sft_steps, batch_size=m.batch_size, lr=m.lr, seed=m.seed, progress=p.progress
    )
    comp = competence(model, held, p.rl.eval_k, p.rl.max_new, seed=m.seed + 1)
    out = ctx.output(SFT)
    save_model(model, out / "model")
    info = {
        "examples": len(items),
        "slipped_answers": sum(bool(r.get("corrupted")) for r in sft_rows),
        "final_loss": float(np.mean(losses[-20:])),
        "competence": comp,
        "config": dataclasses.asdict(cfg),
    }
    write_json(out / "sft.json", info)
    log.info(
        "vip sft: loss %.3f, held-out success %.3f, tier spread %.3f",
        info["final_loss"],
        comp["overall"],
        comp["tier_spread"],
    )
    _log(ctx, {**info, "losses": losses}, out / "model")
    return {"final_loss": info["final_loss"], "success": comp["overall"], "tier_spread": comp["tier_spread"]}
