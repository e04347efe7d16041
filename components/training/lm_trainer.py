"""A plain PyTorch LM training loop: one warmup-stable run with a cooldown branch per token budget.

Why branches instead of one run per budget: Hägele et al. (2024), "Scaling
Laws and Compute-Optimal Training Beyond Fixed Training Durations", show that a
constant-LR run with a short linear cooldown (~10-20% of steps) matches a
cosine run tuned to that length, so the loss at budget D can be read from one
long stable run forked at 0.9*D and cooled down over the last 0.1*D tokens.
That costs max(D) plus 10% of the smaller budgets instead of their sum. Here a
branch sees exactly the batches a separate run with the same seed would see
(batch ``s`` depends only on ``(seed, s)``); the one approximation is that
warmup is a fraction of the *largest* budget, not of each D.

The loop is plain PyTorch, not Lightning: forking a model *and its optimizer
state* mid-run into several cooldown branches does not fit ``Trainer.fit``
(which owns the optimizer and schedule), and ``benchmarks/trainer_overhead.py``
measures the Trainer's per-token cost against this loop (STACK.md: 11k vs 9.4k
tokens/s on 2 cores). ``lightning_lm.LitLM`` is the path for GPUs and scale-up.
"""

from __future__ import annotations

import copy
import logging
import time
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from tqdm.auto import tqdm

from components.errors import DataError, ParamsError
from components.models.tiny_lm import TinyLM, non_embedding_params
from components.training.schedules import wsd_lr

log = logging.getLogger(__name__)


@dataclass
class TrainResult:
    """Per-budget points, the model cooled down at the largest budget, and the training-loss history."""

    points: list[dict]
    final_model: nn.Module
    history: list[dict] = field(default_factory=list)
    tokens_per_step: int = 0
    non_embedding_params: int = 0
    train_seconds: float = 0.0


@dataclass(frozen=True)
class _Branch:
    budget: int
    steps: int  # total optimizer steps at this budget
    fork_step: int  # first cooldown step


def sample_batch(
    tokens: np.ndarray, *, step: int, seed: int, batch_size: int, seq_len: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Random contiguous windows for optimizer step ``step``: inputs and next-token targets (int64).

    The windows depend only on ``(seed, step)``, so every branch forked from the
    same run reads the same batch at the same step.
    """
    rng = np.random.default_rng([seed, step])
    starts = rng.integers(0, len(tokens) - seq_len, size=batch_size)
    windows = torch.from_numpy(tokens[starts[:, None] + np.arange(seq_len + 1)].astype(np.int64))
    return windows[:, :-1], windows[:, 1:]


def eval_window_starts(n_tokens: int, seq_len: int, max_windows: int | None = None) -> np.ndarray:
    """Start offsets of the fixed evaluation windows: non-overlapping, evenly spread if capped."""
    n = (n_tokens - 1) // seq_len
    if n < 1:
        raise DataError(f"evaluation set has {n_tokens} tokens; need at least seq_len + 1 = {seq_len + 1}")
    idx = np.arange(n)
    if max_windows is not None and n > max_windows:
        idx = np.unique(np.linspace(0, n - 1, max(1, max_windows)).round().astype(np.int64))
    return idx * seq_len


@torch.no_grad()
def evaluate_loss(
    model: nn.Module, tokens: np.ndarray, *, seq_len: int, batch_size: int = 32, max_windows: int | None = None
) -> float:
    """Mean next-token cross-entropy (nats) over a fixed set of windows of ``tokens``."""
    starts = eval_window_starts(len(tokens), seq_len, max_windows)
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    try:
        for i in range(0, len(starts), batch_size):
            s = starts[i : i + batch_size]
            w = torch.from_numpy(tokens[s[:, None] + np.arange(seq_len + 1)].astype(np.int64))
            logits, _ = model(w[:, :-1])
            total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), w[:, 1:].reshape(-1), reduction="sum").item()
            count += w[:, 1:].numel()
    finally:
        model.train(was_training)
    return total / count


def make_optimizer(model: nn.Module, *, lr: float, weight_decay: float) -> torch.optim.AdamW:
    """AdamW (betas 0.9/0.95) with weight decay on matrices only, not on norms or biases."""
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95), eps=1e-8)


def count_non_embedding(model: nn.Module) -> int:
    """Non-embedding parameters: exact for :class:`TinyLM`, else all parameters minus ``nn.Embedding`` ones."""
    if isinstance(model, TinyLM):
        return non_embedding_params(model)
    emb = {id(m.weight) for m in model.modules() if isinstance(m, nn.Embedding)}
    return sum(p.numel() for p in model.parameters() if id(p) not in emb)


def train_step(
    model: nn.Module,
    opt: torch.optim.Optimizer,
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    lr: float,
    grad_clip: float | None,
) -> float:
    """One optimizer step at learning rate ``lr``; returns the batch loss."""
    for group in opt.param_groups:
        group["lr"] = lr
    _, loss = model(x, y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    if grad_clip:
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    opt.step()
    return loss.item()


def _plan(budgets: list[int], tokens_per_step: int, cooldown_frac: float) -> list[_Branch]:
    if not budgets or len(set(budgets)) != len(budgets) or any(int(b) != b or b <= 0 for b in budgets):
        raise ParamsError(f"budgets must be distinct positive token counts, got {budgets}")
    if not 0.0 < cooldown_frac < 1.0:
        raise ParamsError(f"cooldown_frac must be in (0, 1), got {cooldown_frac}")
    branches = []
    for b in sorted(int(b) for b in budgets):
        steps = b // tokens_per_step  # floor: a branch never sees more than its budget
        if steps < 1:
            raise ParamsError(f"budgets: {b} tokens is less than one batch (batch_size * seq_len = {tokens_per_step})")
        if branches and branches[-1].steps == steps:
            raise ParamsError(f"budgets: {branches[-1].budget} and {b} both round down to {steps} steps")
        cooldown = max(1, int(cooldown_frac * steps + 0.5))
        branches.append(_Branch(b, steps, steps - cooldown))
    return sorted(branches, key=lambda br: (br.fork_step, br.steps))


def _check_tokens(name: str, tokens: np.ndarray, seq_len: int, vocab: int | None) -> None:
    if not isinstance(tokens, np.ndarray) or tokens.ndim != 1 or not np.issubdtype(tokens.dtype, np.integer):
        raise DataError(f"{name}: expected a 1-D integer numpy array of token ids")
    if len(tokens) < seq_len + 1:
        raise DataError(f"{name}: {len(tokens)} tokens; need at least seq_len + 1 = {seq_len + 1}")
    if vocab is not None and (int(tokens.max()) >= vocab or int(tokens.min()) < 0):
        raise DataError(f"{name}: token ids outside [0, {vocab}) of the model's vocab_size")


def train_with_cooldowns(
    model: nn.Module,
    train_tokens: np.ndarray,
    *,
    budgets: list[int],
    val_sets: dict[str, np.ndarray],
    batch_size: int = 16,
    seq_len: int = 128,
    peak_lr: float = 3e-3,
    warmup_frac: float = 0.05,
    cooldown_frac: float = 0.1,
    weight_decay: float = 0.1,
    grad_clip: float | None = 1.0,
    seed: int = 0,
    eval_tokens: int | None = None,
    num_threads: int = 2,
    log_every: int = 10,
    progress: bool | str = True,  # True, False, or the bar's label (which model this is)
) -> TrainResult:
    """Train ``model`` in place once to ``max(budgets)`` tokens, cooling down a fork at each budget.

    A budget D is ``D // (batch_size * seq_len)`` steps, so a branch sees
    between D - one batch (exclusive) and D tokens; ``tokens_seen`` reports the
    exact count. Each branch decays linearly to 0 over its last ``cooldown_frac``
    of steps, then is evaluated on every val set (first ``eval_tokens`` tokens'
    worth of evenly spread windows, or all). ``train_loss`` is the mean batch
    loss over the branch's cooldown; ``flops`` is 6 * N_non-embedding * tokens_seen.
    The returned ``final_model`` is ``model`` itself, cooled down at the largest budget.
    """
    if batch_size < 1 or seq_len < 1:
        raise ParamsError(f"batch_size and seq_len must be >= 1, got {batch_size}, {seq_len}")
    if not 0.0 <= warmup_frac < 1.0:
        raise ParamsError(f"warmup_frac must be in [0, 1), got {warmup_frac}")
    tokens_per_step = batch_size * seq_len
    branches = _plan(budgets, tokens_per_step, cooldown_frac)
    vocab = getattr(getattr(model, "config", None), "vocab_size", None)
    for name, toks in {"train_tokens": train_tokens, **{f"val_sets[{k!r}]": v for k, v in val_sets.items()}}.items():
        _check_tokens(name, toks, seq_len, vocab)
    warmup = int(warmup_frac * max(br.steps for br in branches) + 0.5)
    max_windows = None if eval_tokens is None else max(1, eval_tokens // seq_len)
    n_params = count_non_embedding(model)

    prev_threads = torch.get_num_threads()
    torch.set_num_threads(num_threads)
    t0 = time.perf_counter()
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            points, history = _run(
                model,
                train_tokens,
                branches,
                val_sets,
                dict(batch_size=batch_size, seq_len=seq_len, seed=seed),
                peak_lr=peak_lr,
                warmup=warmup,
                weight_decay=weight_decay,
                grad_clip=grad_clip,
                max_windows=max_windows,
                log_every=log_every,
                progress=progress,
            )
    finally:
        torch.set_num_threads(prev_threads)
    for p in points:
        p["non_embedding_params"] = n_params
        p["flops"] = 6 * n_params * p["tokens_seen"]
    points.sort(key=lambda p: p["budget_tokens"])
    return TrainResult(points, model, history, tokens_per_step, n_params, time.perf_counter() - t0)


class _History:
    """Mean training loss every ``every`` steps, kept per branch ("main" or a budget)."""

    def __init__(self, every: int, tokens_per_step: int) -> None:
        self.every, self.tokens_per_step = max(1, every), tokens_per_step
        self.rows: list[dict] = []
        self._windows: dict[object, list[float]] = {}

    def add(self, branch: object, step: int, lr: float, loss: float, *, flush: bool = False) -> None:
        window = self._windows.setdefault(branch, [])
        window.append(loss)
        if len(window) >= self.every or flush:
            self.rows.append(
                {
                    "branch": branch,
                    "step": step + 1,
                    "tokens": (step + 1) * self.tokens_per_step,
                    "lr": lr,
                    "loss": float(np.mean(window)),
                }
            )
            window.clear()


def _run(
    model,
    train_tokens,
    branches,
    val_sets,
    batch_kw,
    *,
    peak_lr,
    warmup,
    weight_decay,
    grad_clip,
    max_windows,
    log_every,
    progress,
):
    """The main stable run and its cooldown branches (see :func:`train_with_cooldowns`)."""
    model.train()
    opt = make_optimizer(model, lr=peak_lr, weight_decay=weight_decay)
    seq_len, tokens_per_step = batch_kw["seq_len"], batch_kw["batch_size"] * batch_kw["seq_len"]
    history, points = _History(log_every, tokens_per_step), []
    total = branches[-1].fork_step + sum(br.steps - br.fork_step for br in branches)
    desc = progress if isinstance(progress, str) else "train"  # a label names the model (one of a grid's)
    bar = tqdm(total=total, disable=None if progress else True, desc=desc, unit="step")

    def step_on(m, o, s, lr):
        loss = train_step(m, o, *sample_batch(train_tokens, step=s, **batch_kw), lr=lr, grad_clip=grad_clip)
        bar.update(1)
        bar.set_postfix(loss=f"{loss:.3f}", refresh=False)
        return loss

    step = 0
    with bar:
        for i, br in enumerate(branches):
            while step < br.fork_step:  # the main run: warmup, then constant peak_lr (it never decays)
                lr = wsd_lr(step, peak_lr=peak_lr, warmup_steps=warmup, decay_start=step + 1, decay_steps=1)
                history.add("main", step, lr, step_on(model, opt, step, lr))
                step += 1
            if br.fork_step < warmup:
                log.warning(
                    "budget %d: cooldown starts at step %d, inside the %d-step warmup", br.budget, br.fork_step, warmup
                )
            # deepcopy of the pair keeps the optimizer bound to the copied parameters
            fmodel, fopt = (model, opt) if i == len(branches) - 1 else copy.deepcopy((model, opt))
            losses = []
            for s in range(br.fork_step, br.steps):
                lr = wsd_lr(
                    s,
                    peak_lr=peak_lr,
                    warmup_steps=warmup,
                    decay_start=br.fork_step,
                    decay_steps=br.steps - br.fork_step,
                )
                losses.append(step_on(fmodel, fopt, s, lr))
                history.add(br.budget, s, lr, losses[-1], flush=s == br.steps - 1)
            val = {
                name: evaluate_loss(
                    fmodel, toks, seq_len=seq_len, batch_size=batch_kw["batch_size"], max_windows=max_windows
                )
                for name, toks in val_sets.items()
            }
            points.append(
                {
                    "budget_tokens": br.budget,
                    "tokens_seen": br.steps * tokens_per_step,
                    "steps": br.steps,
                    "train_loss": float(np.mean(losses)),
                    "val_loss": val,
                }
            )
            log.info("budget %d: train %.4f, val %s", br.budget, points[-1]["train_loss"], val)
            del fmodel, fopt
    return points, history.rows
