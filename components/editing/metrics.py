"""CounterFact/ZsRE-style editing metrics, per request so they can be bootstrapped over facts.

- efficacy: share of rewrite prompts with P(new) > P(true) (MEMIT's efficacy score);
- generalisation: the same on paraphrase prompts;
- specificity: share of neighbourhood prompts with P(true) > P(new);
- zsre_acc: top-1 token accuracy of the new target's tokens on the rewrite prompts (ZsRE style);
- fluency: MEMIT's weighted bi/tri-gram entropy of greedy generations;
- perplexity: mean NLL per held-out window (general ability).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import nn

from components.editing.model import (
    Encoder,
    encode_batch,
    inverse,
    length_order,
    logits_at,
    logits_of,
    scores_at_targets,
)

_WORD = re.compile(r"\w+|[^\w\s]")


@torch.no_grad()
def score(
    model: nn.Module, encode: Encoder, prompts: Sequence[str], targets: Sequence[str], batch_size: int = 256
) -> tuple[np.ndarray, np.ndarray]:
    """Summed log P(target | prompt) and top-1 token accuracy of the target, per prompt."""
    lps, accs = [], []
    for i in range(0, len(prompts), batch_size):
        enc = encode_batch(encode, prompts[i : i + batch_size], targets=targets[i : i + batch_size])
        lp, acc = scores_at_targets(model, enc)
        lps.append(lp.numpy())
        accs.append(acc.numpy())
    return (np.concatenate(lps), np.concatenate(accs)) if lps else (np.zeros(0), np.zeros(0))


@torch.no_grad()
def score_pair(
    model: nn.Module,
    encode: Encoder,
    prompts: Sequence[str],
    new: Sequence[str],
    true: Sequence[str],
    batch_size: int = 256,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """log P(new), log P(true) and top-1 accuracy of new, per prompt.

    When every object is one token (the synthetic facts), both come from one forward pass of the prompt alone:
    the next-token distribution at its last position; otherwise each target is scored with its own pass.
    """
    single = all(len(encode(" " + o)) == 1 for o in {*new, *true})
    if not single:
        lp_new, acc = score(model, encode, prompts, new, batch_size)
        return lp_new, score(model, encode, prompts, true, batch_size)[0], acc
    order = length_order(encode, prompts)  # batches of similar length pad less; scattered back below
    prompts, new, true = ([xs[j] for j in order] for xs in (prompts, new, true))
    ln, lt, acc = [], [], []
    for i in range(0, len(prompts), batch_size):
        chunk = prompts[i : i + batch_size]
        enc = encode_batch(encode, chunk)  # the prompts alone: target_start = each prompt's length
        logp = torch.log_softmax(_last_logits(model, enc).float(), -1)
        tn = torch.tensor([encode(" " + o)[0] for o in new[i : i + batch_size]])
        tt = torch.tensor([encode(" " + o)[0] for o in true[i : i + batch_size]])
        r = torch.arange(len(chunk))
        ln.append(logp[r, tn].numpy())
        lt.append(logp[r, tt].numpy())
        acc.append((logp.argmax(-1) == tn).float().numpy())
    back = inverse(order)
    return np.concatenate(ln)[back], np.concatenate(lt)[back], np.concatenate(acc)[back]


def _last_logits(model: nn.Module, enc) -> torch.Tensor:
    """Logits at each row's last prompt position (the one predicting the first target token)."""
    return logits_at(model, enc.ids, torch.arange(enc.ids.shape[0]), enc.target_start - 1)


def _pairs(requests: Sequence[dict], field: str) -> tuple[list[str], list[str], list[str], list[int]]:
    """Prompt rows of one field; neighbourhood prompts may carry their own true objects (``neighborhood_true``)."""
    prompts, new, true, owner = [], [], [], []
    for n, r in enumerate(requests):
        own = r.get("neighborhood_true") if field == "neighborhood_prompts" else None
        for j, p in enumerate(r.get(field, [])):
            prompts.append(p)
            new.append(r["target_new"])
            owner.append(n)
            true.append(own[j] if own else r["target_true"])
    return prompts, new, true, owner


def _per_request(values: np.ndarray, owner: list[int], n: int) -> np.ndarray:
    total, count = np.zeros(n), np.zeros(n)
    np.add.at(total, owner, values)
    np.add.at(count, owner, 1)
    return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def rewrite_quality(
    model: nn.Module, encode: Encoder, requests: Sequence[dict], batch_size: int = 256
) -> dict[str, np.ndarray]:
    """Per-request efficacy, generalisation, specificity and ZsRE accuracy (NaN where a request has no prompts)."""
    out: dict[str, np.ndarray] = {}
    n = len(requests)
    for name, field, want_new in (
        ("efficacy", "prompts", True),
        ("generalisation", "paraphrase_prompts", True),
        ("specificity", "neighborhood_prompts", False),
    ):
        prompts, new, true, owner = _pairs(requests, field)
        if not prompts:
            out[name] = np.full(n, np.nan)
            continue
        lp_new, lp_true, acc_new = score_pair(model, encode, prompts, new, true, batch_size)
        hit = (lp_new > lp_true) if want_new else (lp_true > lp_new)
        out[name] = _per_request(hit.astype(float), owner, n)
        if field == "prompts":
            out["zsre_acc"] = _per_request(acc_new, owner, n)
    return out


def ngram_entropy(text: str, ns: Sequence[int] = (2, 3), weights: Sequence[float] = (2 / 3, 4 / 3)) -> float:
    """MEMIT's fluency score of one text: mean of weighted n-gram entropies (bits)."""
    words = _WORD.findall(text.lower())
    ents = []
    for n in ns:
        counts = Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))
        if not counts:
            ents.append(0.0)
            continue
        f = np.array(list(counts.values()), dtype=float)
        f /= f.sum()
        ents.append(float(-(f * np.log2(f)).sum()))
    return float(np.mean(np.array(ents) * np.array(weights)))


@torch.no_grad()
def greedy_generate(
    model: nn.Module,
    encode: Encoder,
    decode: Callable[[list[int]], str],
    prompts: Sequence[str],
    *,
    max_new_tokens: int = 40,
    max_len: int | None = None,
) -> list[str]:
    """Greedy continuations; prompts of equal token length are batched (no padding, no attention mask needed).

    Each next token is read from the last ``max_len`` tokens (all when None). A model with a key-value cache
    (``prefill``/``step``, the tiny LM) feeds one token per step while the text fits in ``max_len`` and only then
    rereads the sliding window: the same tokens up to float rounding, without recomputing every position per token.
    """
    encoded = [encode(p) for p in prompts]
    out: list[str] = [""] * len(prompts)
    by_len: dict[int, list[int]] = {}
    for i, ids in enumerate(encoded):
        by_len.setdefault(len(ids), []).append(i)
    for n, rows in sorted(by_len.items()):
        ids = torch.tensor([encoded[i] for i in rows], dtype=torch.long)
        ids = _greedy_cached(model, ids, max_new_tokens, max_len)
        while ids.shape[1] < n + max_new_tokens:
            window = ids if max_len is None else ids[:, -max_len:]
            nxt = logits_of(model, window)[:, -1].argmax(-1, keepdim=True)
            ids = torch.cat([ids, nxt], dim=1)
        for k, i in enumerate(rows):
            out[i] = decode(ids[k, len(encoded[i]) :].tolist())
    return out


def _greedy_cached(model: nn.Module, ids: torch.Tensor, max_new_tokens: int, max_len: int | None) -> torch.Tensor:
    """``ids`` extended greedily with a key-value cache while the text fits in ``max_len``; unchanged for a model
    without one (or when the prompt alone fills the window): the caller's full-forward loop does the rest."""
    n = ids.shape[1]
    width = n + max_new_tokens - 1 if max_len is None else min(n + max_new_tokens - 1, max_len)
    limit = getattr(getattr(model, "config", None), "max_seq_len", 0)
    if not hasattr(model, "prefill") or max_new_tokens < 1 or n > width or width > limit:
        return ids
    logits, cache = model.prefill(ids, width)
    ids = torch.cat([ids, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    while ids.shape[1] <= width and ids.shape[1] < n + max_new_tokens:  # the newest token's position fits
        pos = torch.full((ids.shape[0],), ids.shape[1] - 1)
        ids = torch.cat([ids, model.step(ids[:, -1], pos, cache).argmax(-1, keepdim=True)], dim=1)
    return ids


@torch.no_grad()
def window_nll(
    model: nn.Module, tokens: torch.Tensor, *, seq_len: int, n_windows: int, batch_size: int = 32, shift: int = 0
) -> np.ndarray:
    """Mean next-token NLL (nats) of each of ``n_windows`` non-overlapping windows (fixed positions).

    ``shift`` moves every window by that many tokens (wrapping), so several seeds can use disjoint windows.
    """
    n = min(n_windows, (len(tokens) - 1) // seq_len)
    starts = np.linspace(0, len(tokens) - seq_len - 1, n).round().astype(int) if n > 1 else np.zeros(1, int)
    starts = (starts + shift) % (len(tokens) - seq_len)
    out = []
    for i in range(0, len(starts), batch_size):
        w = torch.stack([tokens[s : s + seq_len + 1] for s in starts[i : i + batch_size]]).long()
        logp = torch.log_softmax(logits_of(model, w[:, :-1]).float(), -1)
        nll = -logp.gather(-1, w[:, 1:, None]).squeeze(-1)
        out.append(nll.mean(1).numpy())
    return np.concatenate(out)


def perplexity(nll: np.ndarray) -> float:
    """exp of the mean per-window NLL."""
    return float(math.exp(float(np.mean(nll))))
