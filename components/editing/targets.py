"""Target values as in MEMIT: optimise an additive residual at the edited layer until the model emits the new object.

For each request a residual ``delta`` (d_out) is added to the edited projection's output at the subject's last
token of every rewrite prompt, and optimised with Adam on the mean negative log-likelihood of the new object's
tokens plus MEMIT's weight-decay term ``wd * ||delta|| / ||h||^2`` (its ``compute_z``); its norm is clamped to
``clamp * ||h||`` (MEMIT's ``clamp_norm_factor``), where ``h`` is the block's residual-stream output at that
token (MEMIT adds the residual to that hidden state; adding it to the MLP output is the same sum). Since
``v_hat = W k + delta``, the residual ``R = v_hat - W k`` is ``delta`` itself. Many requests are optimised
together in one batch (one residual each), which is what "batched" means here.
MEMIT's essence-preserving KL term is included (``kl_factor``, MEMIT's 0.0625): the residual is also added at
the subject's last token of ``"{subject} is a"`` and the KL divergence of that prompt's next-token distribution
from the unedited model's is penalised, so the residual changes the fact, not what the subject is.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from tqdm.auto import tqdm

from components.editing.model import (
    EditSite,
    Encoder,
    compute_keys,
    encode_batch,
    hidden_norms,
    length_order,
    logits_at,
    scores_at_targets,
)
from components.errors import ParamsError

log = logging.getLogger(__name__)


@dataclass
class EditTargets:
    """Per request: mean key over its rewrite prompts (n, d_in), residual (n, d_out), final target NLL."""

    ids: list[str]
    keys: torch.Tensor
    residuals: torch.Tensor
    final_nll: torch.Tensor


class _AddResidual:
    """Forward hook adding ``delta[row_fact[row]]`` to the site output at ``positions[row]``."""

    def __init__(self, site: EditSite, delta: torch.Tensor, row_fact: torch.Tensor, positions: torch.Tensor):
        self.delta, self.row_fact, self.positions = delta, row_fact, positions
        self.handle = site.module.register_forward_hook(self._hook)

    def _hook(self, module: nn.Module, args: tuple, out: torch.Tensor) -> torch.Tensor:
        add = torch.zeros_like(out)
        add[torch.arange(out.shape[0]), self.positions] = self.delta[self.row_fact].to(out.dtype)
        return out + add


KL_TEMPLATE = "{} is a"  # MEMIT's kl_prompts


def _kl_batch(encode: Encoder, reqs: Sequence[dict]):
    """One ``"{subject} is a"`` prompt per request: where the KL term is measured (its last position)."""
    enc = encode_batch(encode, [KL_TEMPLATE.format(r["subject"]) for r in reqs], [r["subject"] for r in reqs])
    last = torch.tensor([len(encode(KL_TEMPLATE.format(r["subject"]))) - 1 for r in reqs])
    return enc, last


def _kl_log_probs(model: nn.Module, enc, last: torch.Tensor) -> torch.Tensor:
    return torch.log_softmax(logits_at(model, enc.ids, torch.arange(len(last)), last).float(), dim=-1)


LENGTH_BUCKETS = 4  # a chunk's rows run as this many batches of similar length (less padding, same loss)


def _buckets(
    encode: Encoder, prompts: list[str], subjects: list[str], targets: list[str], row_fact: list[int]
) -> list[tuple]:
    """The chunk's rows sorted by length and cut into :data:`LENGTH_BUCKETS` padded batches: (Encoded, row_fact)."""
    order = length_order(encode, [f"{p} {t}" for p, t in zip(prompts, targets)])
    out = []
    for part in np.array_split(order, max(1, min(LENGTH_BUCKETS, len(order)))):
        enc = encode_batch(encode, [prompts[i] for i in part], [subjects[i] for i in part], [targets[i] for i in part])
        out.append((enc, torch.tensor([row_fact[i] for i in part])))
    return out


def _per_fact(values: list[torch.Tensor], facts: list[torch.Tensor], n: int) -> torch.Tensor:
    """Mean over each fact's rows of per-row values given bucket by bucket."""
    rf, v = torch.cat(facts), torch.cat(values)
    total = torch.zeros(n, *v.shape[1:]).index_add_(0, rf, v)
    count = torch.bincount(rf, minlength=n).clamp(min=1).float()
    return total / count.reshape(n, *[1] * (v.dim() - 1))


def _optimise_chunk(
    model: nn.Module,
    site: EditSite,
    encode: Encoder,
    reqs: Sequence[dict],
    *,
    steps: int,
    lr: float,
    weight_decay: float,
    clamp: float,
    kl_factor: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    prompts, subjects, targets, row_fact = [], [], [], []
    for j, r in enumerate(reqs):
        for p in r["prompts"]:
            prompts.append(p)
            subjects.append(r["subject"])
            targets.append(r["target_new"])
            row_fact.append(j)
    buckets = _buckets(encode, prompts, subjects, targets, row_fact)
    facts = [rf for _, rf in buckets]
    if kl_factor > 0:
        kl_enc, kl_last = _kl_batch(encode, reqs)
        with torch.no_grad():
            kl_init = _kl_log_probs(model, kl_enc, kl_last)
    keys_rows = compute_keys(model, site, encode, prompts, subjects, batch_size=len(prompts))
    keys = _per_fact([keys_rows], [torch.tensor(row_fact)], len(reqs))
    # MEMIT's scale: the residual stream at the subject's last token (the block output the residual shifts)
    h_norm = [hidden_norms(model, site, enc.ids, enc.subject_pos) for enc, _ in buckets]
    v_norm = _per_fact(h_norm, facts, len(reqs)).clamp(min=1e-6)
    delta = torch.zeros(len(reqs), site.weight.shape[0], requires_grad=True)
    opt = torch.optim.Adam([delta], lr=lr)
    hook = _AddResidual(site, delta, facts[0], buckets[0][0].subject_pos)

    def bucket_nll(enc, rf) -> torch.Tensor:
        hook.row_fact, hook.positions = rf, enc.subject_pos
        lp, _ = scores_at_targets(model, enc)
        return -(lp / enc.target_len.clamp(min=1))

    try:
        for _ in range(steps):
            nll = sum(bucket_nll(enc, rf).sum() for enc, rf in buckets) / len(prompts)  # the mean over rows
            # MEMIT's regulariser, as in its compute_z: wd * ||delta|| / ||h||^2 (not a squared ratio)
            loss = nll + weight_decay * (delta.norm(dim=1) / v_norm**2).mean()
            if kl_factor > 0:
                hook.row_fact, hook.positions = torch.arange(len(reqs)), kl_enc.subject_pos
                kl = F.kl_div(kl_init, _kl_log_probs(model, kl_enc, kl_last), log_target=True, reduction="batchmean")
                loss = loss + kl_factor * kl
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            with torch.no_grad():  # MEMIT's clamp: ||delta|| <= clamp * ||h||
                scale = (clamp * v_norm / delta.norm(dim=1).clamp(min=1e-12)).clamp(max=1.0)
                delta.mul_(scale[:, None])
        with torch.no_grad():
            nll = _per_fact([bucket_nll(enc, rf) for enc, rf in buckets], facts, len(reqs))
    finally:
        hook.handle.remove()
    return keys, delta.detach(), nll


def compute_targets(
    model: nn.Module,
    site: EditSite,
    encode: Encoder,
    requests: Sequence[dict],
    *,
    steps: int = 20,
    lr: float = 0.5,
    weight_decay: float = 0.5,
    clamp: float = 4.0,
    kl_factor: float = 0.0,
    chunk: int = 128,
    progress: bool = False,
) -> EditTargets:
    """Keys and residuals for every request (the model's weights are left untouched)."""
    if steps < 1 or lr <= 0 or chunk < 1 or clamp <= 0 or weight_decay < 0 or kl_factor < 0:
        raise ParamsError(
            "target optimisation: need steps >= 1, lr > 0, chunk >= 1, clamp > 0, weight_decay >= 0, kl_factor >= 0"
        )
    flags = [p.requires_grad for p in model.parameters()]
    for p in model.parameters():
        p.requires_grad_(False)
    was_training = model.training
    model.eval()
    keys, res, nll = [], [], []
    try:
        for i in tqdm(
            range(0, len(requests), chunk), disable=None if progress else True, desc="target values", unit="chunk"
        ):
            k, d, n = _optimise_chunk(
                model,
                site,
                encode,
                requests[i : i + chunk],
                steps=steps,
                lr=lr,
                weight_decay=weight_decay,
                clamp=clamp,
                kl_factor=kl_factor,
            )
            keys.append(k)
            res.append(d)
            nll.append(n)
    finally:
        for p, f in zip(model.parameters(), flags):
            p.requires_grad_(f)
        model.train(was_training)
    log.info("target values for %d request(s): mean final NLL %.3f", len(requests), torch.cat(nll).mean().item())
    return EditTargets([r["id"] for r in requests], torch.cat(keys), torch.cat(res), torch.cat(nll))


def tune_lr(
    model: nn.Module, site: EditSite, encode: Encoder, requests: Sequence[dict], grid: Sequence[float], **kw
) -> tuple[float, list[dict]]:
    """The target-value learning rate with the lowest mean final NLL of the new object on ``requests`` (ties: the
    smaller rate), and one row per rate. Every method edits with the same targets, so this choice favours none.

    MEMIT's 0.5 is sized for GPT-scale hidden states; a small LM's residual stream can be far larger relative to
    what twenty Adam steps of 0.5 can move (each step moves every coordinate by at most ``lr``).
    """
    if not grid or any(lr <= 0 for lr in grid):
        raise ParamsError(f"learning-rate grid: need at least one rate, each > 0, got {list(grid)}")
    rows = []
    for lr in sorted(set(grid)):
        t = compute_targets(model, site, encode, requests, lr=lr, **kw)
        rows.append(
            {
                "v_lr": float(lr),
                "nll": float(t.final_nll.mean()),
                "residual_norm": float(t.residuals.norm(dim=1).mean()),
            }
        )
    best = min(rows, key=lambda r: (round(r["nll"], 6), r["v_lr"]))
    log.info("target-value lr %g (dev NLL %s)", best["v_lr"], {r["v_lr"]: round(r["nll"], 3) for r in rows})
    return best["v_lr"], rows
