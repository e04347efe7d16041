"""Question-answer language modelling: QA rows as padded token batches, answer-only NLL, training, greedy generation.

Shared by OFMU (the unlearning track) and VIP (its SFT stage).

The model sees ``Question: q\nAnswer: a<eos>``; the loss is on the answer
tokens only (as TOFU fine-tuning does). Targets outside the answer are -100,
which TinyLM's cross-entropy ignores, so the trainer's ``train_step`` is reused.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterator, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from tqdm.auto import tqdm

from components.errors import DataError

log = logging.getLogger(__name__)
IGNORE = -100


def prompt(question: str) -> str:
    return f"Question: {question}\nAnswer:"


def check_vocab(model: nn.Module, tokenizer) -> None:
    """A checkpoint must match the tokenizer's vocabulary, or ids would index the wrong embeddings."""
    n_model, n_tok = model.config.vocab_size, tokenizer.get_vocab_size()  # TinyLM and HF configs both have it
    if n_model != n_tok:
        raise DataError(f"model checkpoint vocab_size {n_model} does not match the tokenizer's {n_tok} tokens")


def encode_pairs(tokenizer, questions: Sequence[str], answers: Sequence[str], eos: int) -> list[tuple[list[int], int]]:
    """Token ids of prompt + " " + answer + eos, and where the answer starts."""
    prompts = tokenizer.encode_batch([prompt(q) for q in questions], add_special_tokens=False)
    full = tokenizer.encode_batch([prompt(q) + " " + a for q, a in zip(questions, answers)], add_special_tokens=False)
    out = []
    for p, f in zip(prompts, full):
        start = len(p.ids)
        if f.ids[:start] != p.ids:  # BPE merged across the boundary: fall back to encoding the answer alone
            start = len(f.ids) - len(tokenizer.encode(" " + answers[len(out)], add_special_tokens=False).ids)
        out.append((f.ids + [eos], start))
    return out


def collate(items: Sequence[tuple[list[int], int]], pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded inputs and answer-only targets (``-100`` elsewhere)."""
    t = max(len(ids) for ids, _ in items) - 1
    x = torch.full((len(items), t), pad, dtype=torch.long)
    y = torch.full((len(items), t), IGNORE, dtype=torch.long)
    for i, (ids, start) in enumerate(items):
        ids_t = torch.tensor(ids, dtype=torch.long)
        x[i, : len(ids) - 1] = ids_t[:-1]
        y[i, start - 1 : len(ids) - 1] = ids_t[start:]
    return x, y


def logits_of(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Logits of a TinyLM (returns a tuple) or a Hugging Face causal LM (returns an output object)."""
    out = model(x)
    return out[0] if isinstance(out, tuple) else out.logits


def nll_per_example(model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """Mean answer-token NLL per example, shape (B,): the loss every unlearning method differentiates."""
    x, y = batch
    logits = logits_of(model, x)
    tok = F.cross_entropy(logits.transpose(1, 2), y, ignore_index=IGNORE, reduction="none")
    mask = (y != IGNORE).float()
    return (tok * mask).sum(1) / mask.sum(1).clamp(min=1)


def batch_stream(items: Sequence[tuple[list[int], int]], batch_size: int, pad: int, *, seed: int) -> Iterator:
    """Endless shuffled batches (reshuffled every epoch, seeded)."""
    if not items:
        raise DataError("batch_stream: no examples (an empty forget or retain set?)")
    rng = random.Random(seed)
    order = list(range(len(items)))
    while True:
        rng.shuffle(order)
        for i in range(0, len(order), batch_size):
            chunk = order[i : i + batch_size]
            if len(chunk) < batch_size and len(order) >= batch_size:
                continue
            yield collate([items[j] for j in chunk], pad)


def pair_stream(forget: Iterator, retain: Iterator) -> Iterator:
    while True:
        yield next(forget), next(retain)


def train_lm(
    model: nn.Module,
    items: Sequence[tuple[list[int], int]],
    *,
    steps: int,
    batch_size: int,
    lr: float,
    seed: int,
    warmup: int = 20,
    progress: bool = False,
) -> list[float]:
    """Fine-tune on answer tokens with the shared trainer's AdamW and warmup-cosine schedule."""
    from components.training.lm_trainer import make_optimizer, train_step
    from components.training.schedules import cosine_lr

    torch.manual_seed(seed)
    opt = make_optimizer(model, lr=lr, weight_decay=0.01)
    stream = batch_stream(items, batch_size, pad=0, seed=seed)
    model.train()
    losses = []
    for s in tqdm(range(steps), desc="train-lm", disable=None if progress else True):
        x, y = next(stream)
        lr_s = cosine_lr(s, peak_lr=lr, warmup_steps=min(warmup, steps // 5), total_steps=steps)
        losses.append(train_step(model, opt, x, y, lr=lr_s, grad_clip=1.0))
    model.eval()
    return losses


@torch.no_grad()
def greedy(
    model: nn.Module, tokenizer, questions: Sequence[str], *, max_new: int, eos: int, batch: int = 64
) -> list[str]:
    """Greedy answers, batching prompts of equal token length (TinyLM has no attention mask)."""
    model.eval()
    enc = [tokenizer.encode(prompt(q), add_special_tokens=False).ids for q in questions]
    by_len: dict[int, list[int]] = {}
    for i, ids in enumerate(enc):
        by_len.setdefault(len(ids), []).append(i)
    out = [""] * len(questions)
    for idx_all in by_len.values():
        for k in range(0, len(idx_all), batch):
            idx = idx_all[k : k + batch]
            x = torch.tensor([enc[i] for i in idx], dtype=torch.long)
            done = torch.zeros(len(idx), dtype=torch.bool)
            gen = []
            for _ in range(max_new):
                nxt = logits_of(model, x)[:, -1].argmax(-1)
                gen.append(nxt)
                done |= nxt == eos
                x = torch.cat([x, nxt[:, None]], 1)
                if bool(done.all()):
                    break
            g = torch.stack(gen, 1).tolist()
            for j, i in enumerate(idx):
                ids = g[j][: g[j].index(eos)] if eos in g[j] else g[j]
                out[i] = tokenizer.decode(ids).strip()
    return out


@torch.no_grad()
def answer_nll(
    model: nn.Module, tokenizer, questions: Sequence[str], answers: Sequence[str], *, eos: int, batch: int = 64
) -> np.ndarray:
    """Mean answer-token NLL of each (question, answer) pair (for probabilities and truth ratios)."""
    model.eval()
    items = encode_pairs(tokenizer, questions, answers, eos)
    out = []
    for i in range(0, len(items), batch):
        out.append(nll_per_example(model, collate(items[i : i + batch], pad=0)).numpy())
    return np.concatenate(out) if out else np.zeros(0)
