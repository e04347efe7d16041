"""Critique-Driven Policy Alignment (CDPA) and its baselines on the shared GRPO trainer (``components.rl_text``).

Per RL step: G completions per prompt are sampled; each is split into its "Step k:" segments; every token of
step k gets that step's PRM score (tokens outside any step get 0, as past the end); advantages are normalised
per token position within the group (``rl_text.advantages.position_group_advantages``); the trainer's clipped
loss (``seq_mean``, TRL's "grpo" loss the official trainer uses) plus beta KL to the SFT reference updates the
policy. Arms: ``cdra`` (Pers-GenPRM scores), ``prm_score_only`` (the same loop with the score-only PRM),
``grpo_outcome`` (one scalar per completion: the rule judge's Acc_PF, GRPO advantages), and ``oracle`` (the loop
with the rule critic as PRM: the known-answer arm).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from components.cdra import prm as P
from components.cdra import task as T
from components.errors import ParamsError
from components.models.tiny_lm import TinyLM, TinyLMConfig
from components.rl_text.advantages import position_group_advantages
from components.rl_text.sampling import Rollouts, sample
from components.rl_text.trainer import GroupRLTrainer, RLConfig
from components.training.qa_lm import train_lm

MAX_NEW = 20  # a well-formed response is 17 tokens + eos
ARMS = ("sft", "grpo_outcome", "prm_score_only", "cdra", "oracle")
PROCESS_ARMS = ("prm_score_only", "cdra", "oracle")


def new_policy(d_model: int, n_layers: int, seed: int) -> TinyLM:
    heads = 4 if d_model % 8 == 0 else 2
    cfg = TinyLMConfig(
        vocab_size=T.VOCAB,
        d_model=d_model,
        n_layers=n_layers,
        n_heads=heads,
        d_ff=int(2.75 * d_model),
        max_seq_len=8 + MAX_NEW + 4,
    )
    return TinyLM(cfg, seed=seed)


def sft_policy(
    pairs: Sequence[T.Pair], *, noise: float, d_model: int, n_layers: int, steps: int, batch: int, lr: float, seed: int
) -> tuple[TinyLM, list[float]]:
    """The RFT stand-in: SFT on one noisy gold chain per pair (answer-only loss)."""
    rng = np.random.default_rng(seed)
    items = []
    for p in pairs:
        prompt = p.prompt()
        items.append((prompt + T.noisy_chain(p, rng, noise), len(prompt)))
    model = new_policy(d_model, n_layers, seed)
    losses = train_lm(model, items, steps=steps, batch_size=batch, lr=lr, seed=seed)
    return model, losses


def completions(ro: Rollouts) -> list[list[int]]:
    return [c[: int(m.sum())].tolist() for c, m in zip(ro.completions, ro.mask)]


def token_rewards(spans: Sequence[Sequence[tuple[int, int]]], scores: Sequence[Sequence[float]], shape) -> torch.Tensor:
    """(B, T) rewards: every token of step k of row b carries that step's score; everything else 0."""
    out = torch.zeros(shape)
    for b, (sp, sc) in enumerate(zip(spans, scores)):
        if len(sp) != len(sc):
            raise ParamsError(f"row {b}: {len(sp)} step spans but {len(sc)} step scores")
        for (s, e), v in zip(sp, sc):
            out[b, s:e] = float(v)
    return out


def zero_spread(values: torch.Tensor, groups: torch.Tensor) -> float:
    """Share of groups whose rewards (B,) or token rewards (B, T) are identical across members (no signal)."""
    v = values if values.dim() == 2 else values.unsqueeze(1)
    flags = []
    for g in torch.unique(groups):
        rows = v[groups == g]
        flags.append(bool((rows.max(0).values - rows.min(0).values).abs().max() < 1e-9))
    return float(np.mean(flags))


@dataclass(frozen=True)
class ArmConfig:
    steps: int = 120
    prompts_per_step: int = 8
    group_size: int = 5
    lr: float = 3e-4
    beta: float = 0.04
    temperature: float = 1.0


@dataclass
class History:
    reward: list[float] = field(default_factory=list)  # mean outcome Acc_PF of the sampled completions per step
    zero_spread_process: list[float] = field(default_factory=list)
    zero_spread_outcome: list[float] = field(default_factory=list)
    kl: list[float] = field(default_factory=list)
    curve: list[dict] = field(default_factory=list)  # held-out evaluations during training (plateau check)
    seconds: dict = field(default_factory=lambda: {"sampling": 0.0, "scoring": 0.0, "update": 0.0})


def rl_train(
    policy: TinyLM,
    pairs: Sequence[T.Pair],
    arm: str,
    cfg: ArmConfig,
    *,
    seed: int,
    scorer: P.Scorer | None = None,
    eval_pairs: Sequence[T.Pair] = (),
    eval_every: int = 0,
) -> tuple[TinyLM, History]:
    """Train a copy of ``policy`` with one arm; the SFT policy itself is the frozen KL reference."""
    import time

    if arm not in ("grpo_outcome", *PROCESS_ARMS):
        raise ParamsError(f"cdra arm {arm!r} is not an RL arm ({('grpo_outcome', *PROCESS_ARMS)})")
    if arm == "oracle":
        scorer = P.rule_scores
    if arm in PROCESS_ARMS and scorer is None:
        raise ParamsError(f"cdra arm {arm!r} needs a PRM scorer")
    rl_cfg = RLConfig(
        advantage="grpo", aggregation="seq_mean", lr=cfg.lr, beta=cfg.beta, max_new=MAX_NEW, temperature=cfg.temperature
    )
    model = copy.deepcopy(policy)
    trainer = GroupRLTrainer(model, rl_cfg, eos=T.EOS, pad=T.PAD, seed=seed, reference=copy.deepcopy(policy))
    rng = np.random.default_rng(seed)
    hist = History()
    for step in range(cfg.steps):
        if eval_pairs and eval_every and step % eval_every == 0:
            hist.curve.append({"step": step, **summary(evaluate(model, eval_pairs))})
        t0 = time.perf_counter()
        batch = [pairs[i] for i in rng.choice(len(pairs), cfg.prompts_per_step, replace=False)]
        ro = trainer.rollout([p.prompt() for p in batch], [cfg.group_size] * len(batch))
        comps = completions(ro)
        t1 = time.perf_counter()
        row_pairs = [batch[int(i)] for i in ro.prompt_index]
        outcome = torch.tensor([float(T.judge(p, c)["pf"]) for p, c in zip(row_pairs, comps)])
        queries = [P.queries_of(p, c) for p, c in zip(row_pairs, comps)]
        if scorer is not None:
            flat = [q for qs in queries for q in qs]
            flat_scores = scorer(flat) if flat else []
            scores, k = [], 0
            for qs in queries:
                scores.append(flat_scores[k : k + len(qs)])
                k += len(qs)
        else:  # the outcome arm: the rule critic's step scores only to count zero-spread groups
            scores = [[T.critic(q.pair, list(q.ids), q.step, q.span).score for q in qs] for qs in queries]
        tok = token_rewards([[q.span for q in qs] for qs in queries], scores, ro.completions.shape)
        t2 = time.perf_counter()
        if arm == "grpo_outcome":
            st = trainer.train_on(ro, None, rewards=outcome)
            kl = st.kl
        else:
            adv = position_group_advantages(tok, ro.prompt_index) * ro.mask
            kl = trainer.update(ro, adv)["kl"]
        t3 = time.perf_counter()
        hist.reward.append(float(outcome.mean()))
        hist.zero_spread_process.append(zero_spread(tok * ro.mask, ro.prompt_index))
        hist.zero_spread_outcome.append(zero_spread(outcome, ro.prompt_index))
        hist.kl.append(float(kl))
        for key, dt in zip(("sampling", "scoring", "update"), (t1 - t0, t2 - t1, t3 - t2)):
            hist.seconds[key] += dt
    if eval_pairs and eval_every:
        hist.curve.append({"step": cfg.steps, **summary(evaluate(model, eval_pairs))})
    return model, hist


METRICS = ("valid", "explicit", "implicit", "pf", "da", "implicit_step", "risk_step")


def summary(rows: Sequence[dict]) -> dict:
    return {k: float(np.mean([r[k] for r in rows])) for k in METRICS}


@torch.no_grad()
def evaluate(policy, pairs: Sequence[T.Pair]) -> list[dict]:
    """Greedy response per held-out pair, judged exactly (explicit, implicit, valid, pf, da)."""
    ro = sample(
        policy, [p.prompt() for p in pairs], [1] * len(pairs), max_new=MAX_NEW, eos=T.EOS, pad=T.PAD, temperature=0.0
    )
    return [{"id": p.id, **T.judge(p, c)} for p, c in zip(pairs, completions(ro))]


def policy_steps(policy, pairs: Sequence[T.Pair], *, seed: int, k: int = 1, corrupted: int = 0) -> list[P.StepQuery]:
    """Steps of ``k`` sampled responses per pair (errors the policy really makes), plus ``corrupted`` damaged
    copies (:func:`task.corrupt`) of the first of them per pair."""
    gen = torch.Generator().manual_seed(seed)
    ro = sample(
        policy, [p.prompt() for p in pairs], [k] * len(pairs), max_new=MAX_NEW, eos=T.EOS, pad=T.PAD, generator=gen
    )
    rows = [pairs[int(i)] for i in ro.prompt_index]
    comps = completions(ro)
    rng = np.random.default_rng(seed)
    extra = [(rows[j * k], T.corrupt(comps[j * k], rng)) for j in range(len(pairs)) for _ in range(corrupted)]
    return [q for p, c in [*zip(rows, comps), *extra] for q in P.queries_of(p, c)]
