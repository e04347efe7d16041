"""SFT from the rule planner, GRPO with the product reward (``components.rl_text``), and the evaluation.

The GRPO step is ``GroupRLTrainer.step`` unchanged: G completions (chain + image) per prompt, group-normalised
advantages, the clipped ratio and a k3 KL to the frozen SFT reference. The reward function maps each completion
to the spec of *its own* prompt (``make_reward_fn``); scoring a picture against another prompt is the sabotage
``tests/unit/got_r1`` guards against.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from components.errors import ParamsError
from components.got_r1 import checker as C
from components.got_r1 import rewards as R
from components.got_r1.planner import plan
from components.got_r1.render import detect, render
from components.got_r1.tokens import PROMPT_LEN, Vocab
from components.rl_text.sampling import sample
from components.rl_text.trainer import GroupRLTrainer, RLConfig


def examples(specs, vocab: Vocab, *, with_chain: bool, seed: int, held=None, relation_noise: float = 0.0):
    """(prompt ids, completion ids) per spec: a planned chain and the picture rendered from it."""
    rng = np.random.default_rng(seed)
    out = []
    for s in specs:
        objs = plan(s, vocab.size, rng, held=held, relation_noise=relation_noise)
        img = render(objs, vocab.size)
        out.append((vocab.encode_prompt(s["prompt"]), vocab.completion(objs if with_chain else None, img)))
    return out


def sft(model, data, *, steps: int, batch: int, lr: float, seed: int, log_every: int = 0) -> list[dict]:
    """Teacher-forced cross-entropy on the completion tokens only (AdamW, cosine decay to 10%)."""
    if not data:
        raise ParamsError("sft: no training examples")
    x = torch.tensor([p + c for p, c in data])
    y = x.clone()
    y[:, :PROMPT_LEN] = -100
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda t: 0.1 + 0.9 * 0.5 * (1 + np.cos(np.pi * t / max(steps, 1))))
    gen = torch.Generator().manual_seed(seed)
    model.train()
    log = []
    for t in range(steps):
        idx = torch.randint(0, len(x), (batch,), generator=gen)
        _, loss = model(x[idx, :-1], y[idx, 1:])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if log_every and (t % log_every == 0 or t == steps - 1):
            log.append({"step": t, "loss": float(loss.detach())})
    model.eval()
    return log


def make_reward_fn(vocab: Vocab, specs: Sequence[dict], *, kind: str, hps: bool = False, with_chain: bool = True):
    """``reward_fn(i, completion ids)``: the total reward of a completion against prompt i's spec."""

    def reward_fn(i: int, ids: list[int]) -> float:
        d = vocab.decode(ids, with_chain)
        return R.rewards(specs[i], d["objects"], d["image"], kind=kind, hps=hps)["total"]

    return reward_fn


@dataclass
class GRPOSettings:
    kind: str = "full"
    hps: bool = False
    steps: int = 60
    prompts_per_step: int = 8
    group: int = 8
    lr: float = 1e-4
    beta: float = 0.02
    temperature: float = 1.0
    advantage: str = "grpo"
    aggregation: str = "seq_mean"


def grpo(model, vocab: Vocab, specs: Sequence[dict], st: GRPOSettings, *, seed: int) -> list[dict]:
    """GRPO from ``model`` (trained in place) on ``specs``; one log row per step."""
    cfg = RLConfig(
        advantage=st.advantage,
        aggregation=st.aggregation,
        lr=st.lr,
        beta=st.beta,
        temperature=st.temperature,
        max_new=vocab.completion_len(True),
    )
    trainer = GroupRLTrainer(model, cfg, eos=vocab.eos, pad=vocab.pad, seed=seed)
    rng = np.random.default_rng(seed)
    log = []
    for t in range(st.steps):
        batch = [specs[int(i)] for i in rng.choice(len(specs), st.prompts_per_step, replace=False)]
        prompts = [vocab.encode_prompt(s["prompt"]) for s in batch]
        stats = trainer.step(prompts, [st.group] * len(batch), make_reward_fn(vocab, batch, kind=st.kind, hps=st.hps))
        r = stats.rewards.view(len(batch), st.group)
        log.append(
            {
                "step": t,
                "reward": float(r.mean()),
                "zero_var": float((r.std(1) == 0).float().mean()),
                "kl": stats.kl,
                "loss": stats.loss,
            }
        )
    model.eval()
    return log


def generate(model, vocab: Vocab, specs, *, with_chain: bool, temperature: float = 0.0, seed: int = 0, chunk=256):
    """One decoded completion per spec (greedy by default)."""
    prompts = [vocab.encode_prompt(s["prompt"]) for s in specs]
    ro = sample(
        model,
        prompts,
        [1] * len(prompts),
        max_new=vocab.completion_len(with_chain),
        eos=vocab.eos,
        pad=vocab.pad,
        temperature=temperature,
        generator=torch.Generator().manual_seed(seed),
        chunk=chunk,
    )
    return [vocab.decode(c[: int(m.sum())].tolist(), with_chain) for c, m in zip(ro.completions, ro.mask)]


def score_outputs(specs, outputs, *, with_chain: bool) -> list[dict]:
    """Per prompt: GenEval verdict and score, T2I-CompBench-style bindings, chain-image IoU, chain validity."""
    rows = []
    for s, d in zip(specs, outputs):
        det = detect(d["image"])
        chk = C.check(s, det)
        groups = s["include"]
        coloured = [g for g in groups if "color" in g]
        row = {
            "prompt": s["prompt"],
            "tag": s["tag"],
            "correct": float(chk["correct"]),
            "score": chk["score"],
            "colour_binding": float(np.mean([bool(C.matches(g, det)) for g in coloured])) if coloured else None,
            "shape_binding": float(np.mean([bool(C.matches({"class": g["class"]}, det)) for g in groups]))
            if s["tag"] in ("two_object", "color_attr")
            else None,
            "spatial": chk["parts"][-1] if s["tag"] == "position" else None,
            "image_valid": float(d["image_valid"]),
        }
        if with_chain:
            row["chain_valid"] = float(d["chain_valid"])
            row["iou"] = R.r_ri(d["objects"], det)
        rows.append(row)
    return rows


def summary(rows: list[dict]) -> dict:
    """Per-task accuracy, overall (mean of the tasks present), and the means of the other metrics."""
    tags = sorted({r["tag"] for r in rows})
    out = {f"acc_{t}": float(np.mean([r["correct"] for r in rows if r["tag"] == t])) for t in tags}
    out["overall"] = float(np.mean([out[f"acc_{t}"] for t in tags]))
    for k in ("colour_binding", "shape_binding", "spatial", "iou", "chain_valid", "image_valid"):
        vals = [r[k] for r in rows if r.get(k) is not None]
        if vals:
            out[k] = float(np.mean(vals))
    return out
