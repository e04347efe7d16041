"""One RL run of one allocation strategy: per step, Q prompts, an allocation of C rollouts, a GRPO-family update
on the shared trainer, predictor updates, and held-out evaluation at fixed cumulative-rollout checkpoints.

Every predictor (the method's own and the shadow ones scored for claim 3) sees the same outcomes; none of them
touches the sampling generator, so a strategy that allocates uniformly reproduces uniform Dr.GRPO exactly.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np
import torch

from components.rl_text.trainer import GroupRLTrainer, RLConfig
from components.vip import evaluation as E
from components.vip import strategies as S
from components.vip.codec import CHAR, Codec


@dataclass(frozen=True)
class LoopConfig:
    steps: int = 80
    q: int = 16
    budget_per_step: int = 128
    lo: int = 2
    hi: int = 24
    lr: float = 1e-4
    beta: float = 0.0
    max_new: int = 7
    eval_k: int = 8
    n_evals: int = 4
    dapo_max_rounds: int = 3
    gp: dict = field(default_factory=lambda: {"window": 256, "amplitude": 2.0})
    shadow: tuple[tuple[str, str], ...] = (("gp", "minilm"), ("gp", "hashed"), ("beta", "minilm"), ("global", "minilm"))
    grad_repeats: int = 8
    grad_dirs: int = 8

    @property
    def total_budget(self) -> int:
        return self.steps * self.budget_per_step


def _reward_fn(rows, codec: Codec = CHAR):
    def fn(i: int, ids: list[int]) -> float:
        return codec.reward(rows[i]["target"], codec.decode(ids))

    return fn


def _counts(rewards: np.ndarray, index: np.ndarray, q: int) -> tuple[np.ndarray, np.ndarray]:
    return np.bincount(index, weights=rewards, minlength=q), np.bincount(index, minlength=q).astype(float)


def run(
    policy,
    method: S.Method,
    cfg: LoopConfig,
    train: list[dict],
    feats: dict[str, np.ndarray],
    heldout: list[dict],
    seed: int,
    progress=None,
    codec: Codec = CHAR,
) -> dict:
    """Train a copy of ``policy``; return curves, per-step logs, predictor records, final counts, the model.
    ``codec`` reads and scores the policy's text (the char task's by default; a tokenizer's for a HF policy)."""
    policy = copy.deepcopy(policy)
    torch.manual_seed(seed)
    trainer = GroupRLTrainer(
        policy,
        RLConfig(advantage=method.advantage, lr=cfg.lr, beta=cfg.beta, max_new=cfg.max_new),
        eos=codec.eos,
        pad=codec.pad,
        seed=seed,
    )
    n = len(train)
    own = S.make_predictor(method.predictor, n, feats, method.features, cfg.gp) if method.predictor else None
    shadows = {f"{k}-{f}": S.make_predictor(k, n, feats, f, cfg.gp) for k, f in cfg.shadow if k != "gp" or f in feats}
    prompt_rng = np.random.default_rng(seed)
    seen = np.zeros(n, int)
    checkpoints = [round(cfg.total_budget * j / cfg.n_evals) for j in range(cfg.n_evals + 1)]
    curve, steps, pred_rows = [], [], []
    used, step = 0, 0

    def evaluate(at: int) -> None:
        counts = E.correct_counts(
            trainer.policy, heldout, cfg.eval_k, max_new=cfg.max_new, seed=10_000 + seed, codec=codec
        )
        curve.append({"rollouts": at, "step": step, **E.accuracy(counts, cfg.eval_k), "counts": counts.tolist()})

    evaluate(0)
    next_ck = 1
    while used < cfg.total_budget:
        ids = prompt_rng.choice(n, size=cfg.q, replace=False)
        p_hat = own.predict(ids) if own is not None else None
        sizes = S.group_sizes(method, p_hat, cfg.q, cfg.budget_per_step, cfg.lo, cfg.hi)
        sizes = _fit_budget(sizes, cfg.total_budget - used)
        preds = {name: m.predict(ids) for name, m in shadows.items()}
        rows = [train[i] for i in ids]
        ro = trainer.rollout([codec.encode(r["prompt"]) for r in rows], sizes.tolist())
        rewards = trainer.score(ro, _reward_fn(rows, codec)).numpy()
        index = ro.prompt_index.numpy()
        used += int(sizes.sum())
        zvf = E.zero_variance_fraction(rewards, index)
        succ, tri = _counts(rewards, index, cfg.q)
        batch_ids, keep_ro, keep_r = ids, ro, rewards
        if method.allocation == "dapo":
            batch_ids, keep_ro, keep_r, extra_used, extra_obs = _dapo_fill(
                trainer, method, cfg, train, prompt_rng, ids, ro, rewards, used, codec
            )
            used += extra_used
        for m in [own, *shadows.values()]:
            if m is not None:
                m.update(ids, succ, tri)
        if method.allocation == "dapo":
            for xi, xs, xt in extra_obs:
                for m in [own, *shadows.values()]:
                    if m is not None:
                        m.update(xi, xs, xt)
        for j, i in enumerate(ids):
            pred_rows.append(
                {
                    "step": step,
                    "prompt": int(i),
                    "seen_before": int(seen[i]),
                    "n": int(tri[j]),
                    "observed": float(succ[j] / max(tri[j], 1)),
                    **({} if p_hat is None else {S.USED: float(p_hat[j])}),  # the p the allocator was given
                    **{f"p_{k}": float(v[j]) for k, v in preds.items()},
                }
            )
        seen[ids] += 1
        if keep_ro is not None:
            st = trainer.train_on(keep_ro, None, rewards=torch.tensor(keep_r, dtype=torch.float32))
            loss = st.loss
        else:
            loss = float("nan")  # DAPO found no informative group within its rounds: no update
        steps.append(
            {
                "step": step,
                "rollouts": used,
                "zero_var_frac": zvf,
                "reward": float(rewards.mean()),
                "loss": loss,
                "sizes": sizes.tolist(),
                "p_hat": None if p_hat is None else p_hat.tolist(),
            }
        )
        step += 1
        while next_ck < len(checkpoints) and used >= checkpoints[next_ck]:
            evaluate(checkpoints[next_ck])
            next_ck += 1
        if progress is not None:
            progress(step)
    gv_ids = np.random.default_rng(777).choice(n, size=cfg.q, replace=False)
    gv_rows = [train[i] for i in gv_ids]
    gv_sizes = S.group_sizes(
        method, own.predict(gv_ids) if own is not None else None, cfg.q, cfg.budget_per_step, cfg.lo, cfg.hi
    )
    trainer.gen.manual_seed(99_000 + seed)
    grad_var = E.projected_gradient_variance(
        trainer,
        [codec.encode(r["prompt"]) for r in gv_rows],
        gv_sizes.tolist(),
        _reward_fn(gv_rows, codec),
        repeats=cfg.grad_repeats,
        n_dirs=cfg.grad_dirs,
        seed=4242,
    )
    return {
        "method": method.name,
        "seed": seed,
        "curve": curve,
        "steps": steps,
        "predictions": pred_rows,
        "grad_var": grad_var,
        "updates": sum(1 for s in steps if s["loss"] == s["loss"]),
        "model": trainer.policy,
    }


def _fit_budget(sizes: np.ndarray, left: int) -> np.ndarray:
    """The last step may have fewer rollouts left than C: scale down proportionally (at least 2 each)."""
    if sizes.sum() <= left:
        return sizes
    out = np.maximum(2, np.floor(sizes * left / sizes.sum())).astype(int)
    while out.sum() > left and out.max() > 2:
        out[int(np.argmax(out))] -= 1
    return out


def _dapo_fill(trainer, method, cfg, train, prompt_rng, ids, ro, rewards, used, codec: Codec = CHAR):
    """DAPO's dynamic sampling: keep groups with reward variance; redraw prompts (charged) until Q are kept."""
    from components.rl_text.sampling import Rollouts

    kept = []  # (prompt row, rewards, completions, masks)
    extra, extra_obs = 0, []

    def collect(rows_, ro_, r_):
        idx = ro_.prompt_index.numpy()
        for j in range(len(rows_)):
            sel = np.where(idx == j)[0]
            if np.ptp(r_[sel]) > 0 and len(kept) < cfg.q:
                kept.append((rows_[j], r_[sel], ro_.completions[sel], ro_.mask[sel]))

    collect([train[i] for i in ids], ro, rewards)
    for _ in range(cfg.dapo_max_rounds):
        left = cfg.total_budget - used - extra
        if len(kept) >= cfg.q or left < cfg.budget_per_step:
            break
        new = prompt_rng.choice(len(train), size=cfg.q, replace=False)
        rows_ = [train[i] for i in new]
        sizes = [cfg.budget_per_step // cfg.q] * cfg.q
        ro_ = trainer.rollout([codec.encode(r["prompt"]) for r in rows_], sizes)
        r_ = trainer.score(ro_, _reward_fn(rows_, codec)).numpy()
        extra += sum(sizes)
        s_, t_ = _counts(r_, ro_.prompt_index.numpy(), cfg.q)
        extra_obs.append((new, s_, t_))
        collect(rows_, ro_, r_)
    if not kept:
        return ids, None, None, extra, extra_obs
    prompts = [codec.encode(k[0]["prompt"]) for k in kept for _ in range(len(k[1]))]
    index = torch.tensor([j for j, k in enumerate(kept) for _ in range(len(k[1]))])
    width = max(k[2].shape[1] for k in kept)
    comp = torch.cat([torch.nn.functional.pad(k[2], (0, width - k[2].shape[1])) for k in kept])
    mask = torch.cat([torch.nn.functional.pad(k[3], (0, width - k[3].shape[1])) for k in kept])
    new_ro = Rollouts(prompts=prompts, prompt_index=index, completions=comp, mask=mask, max_new=ro.max_new)
    return ids, new_ro, np.concatenate([k[1] for k in kept]), extra, extra_obs
