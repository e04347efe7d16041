"""Train the tiny LM that gets edited: facts and filler windows mixed in every batch.

Reuses the QualityPajama trainer's pieces (``sample_batch``, ``train_step``, ``make_optimizer``) and the
cosine schedule; the only new thing is the two-source batch (a fixed share of windows from the fact text,
the rest from Austen filler), so the model learns the facts while keeping a general-text ability to measure.
"""

from __future__ import annotations

import logging
import time

import numpy as np
import torch
from tqdm.auto import tqdm

from components.errors import DataError, ParamsError
from components.models.tiny_lm import TinyLM, TinyLMConfig
from components.training.lm_trainer import evaluate_loss, make_optimizer, sample_batch, train_step
from components.training.schedules import cosine_lr

log = logging.getLogger(__name__)


def train_fact_lm(
    config: TinyLMConfig,
    fact_tokens: np.ndarray,
    filler_tokens: np.ndarray,
    *,
    steps: int,
    batch_size: int,
    seq_len: int,
    lr: float,
    warmup_frac: float,
    weight_decay: float,
    fact_frac: float,
    seed: int,
    threads: int = 2,
    progress: bool = False,
) -> tuple[TinyLM, dict]:
    """Train a TinyLM from scratch; returns the model (eval mode) and a summary with losses per source."""
    if not 0 < fact_frac <= 1:
        raise ParamsError(f"fact_frac: must be in (0, 1], got {fact_frac}")
    for name, arr in (("fact_tokens", fact_tokens), ("filler_tokens", filler_tokens)):
        if len(arr) <= seq_len + 1 and (name == "fact_tokens" or fact_frac < 1):
            raise DataError(f"{name}: {len(arr)} tokens, need more than seq_len + 1 = {seq_len + 1}")
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    model = TinyLM(config, seed=seed)
    model.train()
    opt = make_optimizer(model, lr=lr, weight_decay=weight_decay)
    n_fact = max(1, round(batch_size * fact_frac))
    warm = max(1, int(warmup_frac * steps)) if steps > 1 else 0
    t0, losses = time.perf_counter(), []
    for step in tqdm(range(steps), disable=None if progress else True, desc="train LM", unit="step"):
        x, y = sample_batch(fact_tokens, step=step, seed=seed, batch_size=n_fact, seq_len=seq_len)
        if n_fact < batch_size:
            xf, yf = sample_batch(
                filler_tokens, step=step, seed=seed + 1, batch_size=batch_size - n_fact, seq_len=seq_len
            )
            x, y = torch.cat([x, xf]), torch.cat([y, yf])
        rate = cosine_lr(step, peak_lr=lr, warmup_steps=warm, total_steps=max(steps, warm + 1), min_lr_frac=0.1)
        losses.append(train_step(model, opt, x, y, lr=rate, grad_clip=1.0))
    model.eval()
    summary = {
        "steps": steps,
        "train_seconds": round(time.perf_counter() - t0, 2),
        "final_train_loss": float(np.mean(losses[-20:])),
        "fact_loss": evaluate_loss(model, fact_tokens, seq_len=seq_len, max_windows=64),
        "tokens_seen": steps * batch_size * seq_len,
    }
    if len(filler_tokens) > seq_len + 1:
        summary["filler_loss"] = evaluate_loss(model, filler_tokens, seq_len=seq_len, max_windows=64)
    log.info("trained fact LM: %s", summary)
    return model, summary
