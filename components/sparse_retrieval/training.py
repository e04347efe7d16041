"""Training loops: Sparse Alignment Pretraining (stage 1) and contrastive training with FLOPS regularisation and
optional KL distillation (stage 2); the dense bi-encoder is trained by the same stage-2 loop.

Arrays in, a trained model and its loss history out (plain numpy/torch; no framework imports).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from components.sparse_retrieval.losses import flops, info_nce, kl_distill, l1, sap_loss
from components.sparse_retrieval.model import MilcoEncoder, echo_bags


@dataclass(frozen=True)
class Stage2Config:
    steps: int = 200
    batch: int = 64
    lr: float = 1e-3
    lambda_q: float = 1e-3
    lambda_d: float = 1e-3
    reg: str = "flops"  # flops | l1
    kl_weight: float = 0.0  # 0: InfoNCE only
    kl_temperature: float = 0.05
    dense_temperature: float = 0.05
    seed: int = 0


def _opt(model: torch.nn.Module, lr: float, steps: int):
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr, weight_decay=0.01)
    warm = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warm) * max(0.05, 1 - s / steps))
    return opt, sched


def teacher_rows(teacher, idx: np.ndarray, floor: float = 0.0) -> torch.Tensor:
    """Dense teacher max-logits of rows ``idx`` (a dense array or scipy CSR matrix), the absent terms at ``floor``."""
    rows = teacher[idx]
    rows = np.asarray(rows.toarray() if hasattr(rows, "toarray") else rows, np.float32)
    return torch.as_tensor(np.where(rows > 0, rows, np.float32(floor)) if floor else rows)


def sap_pretrain(
    model: MilcoEncoder,
    foreign: tuple[np.ndarray, np.ndarray],
    english: tuple[np.ndarray, np.ndarray],
    teacher,
    *,
    steps: int,
    batch: int,
    lr: float,
    seed: int,
    floor: float = 0.0,
) -> list[float]:
    """Stage 1: the student's max-logits of the foreign text and (separately) of its English side are pulled
    towards the frozen lexical teacher's weights of the English side (masked MSE, both terms summed).

    ``teacher`` is (n, V), dense or scipy CSR; its absent terms take the value ``floor``. SPLADE's raw max-logits
    are negative for the terms it does not switch on; a stand-in teacher that gives them 0 lets the masked *mean*
    fall by switching on many terms at ~0+ (each adds a near-zero error to the mask): measured, 600-1,000 active
    terms per text with the same tiny weight. A negative floor (-1) removes that shortcut."""
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    opt, sched = _opt(model, lr, steps)
    f_ids, f_mask = map(torch.as_tensor, foreign)
    e_ids, e_mask = map(torch.as_tensor, english)
    n = teacher.shape[0]
    losses = []
    model.train()
    for _ in range(steps):
        idx_np = rng.choice(n, size=min(batch, n), replace=False)
        idx = torch.as_tensor(idx_np)
        target = teacher_rows(teacher, idx_np, floor)
        raw_f = model(f_ids[idx], f_mask[idx])["raw"]
        raw_e = model(e_ids[idx], e_mask[idx])["raw"]
        loss = sap_loss(raw_f, target) + sap_loss(raw_e, target)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    return losses


def pair_scores(model: MilcoEncoder, q: dict, d: dict, dense_temperature: float = 0.05) -> torch.Tensor:
    """(Bq, Bd) retrieval scores: pivot dot product plus LexEcho's matched-token term, or dense cosine / T."""
    if model.cfg.kind == "dense":
        return q["dense"] @ d["dense"].T / dense_temperature
    s = q["pivot"] @ d["pivot"].T
    if model.cfg.echo:
        v = model.cfg.vocab_in
        s = s + echo_bags(q["ids"], q["echo"], v) @ echo_bags(d["ids"], d["echo"], v).T
    return s


def encode(model: MilcoEncoder, ids: torch.Tensor, mask: torch.Tensor) -> dict:
    out = model(ids, mask)
    out["ids"] = ids
    return out


def contrastive_train(
    model: MilcoEncoder,
    queries: tuple[np.ndarray, np.ndarray],
    doc_sets: list[tuple[np.ndarray, np.ndarray]],
    cfg: Stage2Config,
    teacher: list[tuple[np.ndarray, np.ndarray]] | None = None,
) -> list[dict]:
    """Stage 2: in-batch InfoNCE between query i and its document i (the document sets alternate step by step:
    English, then Spanish paragraphs), + kl_weight * KL to the teacher's in-batch cosine scores, + lambda_q R(q) +
    lambda_d R(d) on the pivot vectors (FLOPS or L1). ``teacher[k]`` = (query embeddings, document embeddings)."""
    rng = np.random.default_rng(cfg.seed)
    torch.manual_seed(cfg.seed)
    opt, sched = _opt(model, cfg.lr, cfg.steps)
    q_ids, q_mask = map(torch.as_tensor, queries)
    docs = [tuple(map(torch.as_tensor, d)) for d in doc_sets]
    reg = flops if cfg.reg == "flops" else l1
    history = []
    model.train()
    for step in range(cfg.steps):
        k = step % len(docs)
        idx_np = rng.choice(len(q_ids), size=min(cfg.batch, len(q_ids)), replace=False)
        idx = torch.as_tensor(idx_np)
        q = encode(model, q_ids[idx], q_mask[idx])
        d = encode(model, docs[k][0][idx], docs[k][1][idx])
        scores = pair_scores(model, q, d, cfg.dense_temperature)
        nce = info_nce(scores)
        loss = nce
        rec = {"step": step, "nce": float(nce.detach())}
        if cfg.kl_weight > 0 and teacher is not None:
            tq, td = teacher[k]
            t_scores = torch.as_tensor(tq[idx_np] @ td[idx_np].T)
            kl = kl_distill(scores, t_scores, cfg.kl_temperature)
            loss = loss + cfg.kl_weight * kl
            rec["kl"] = float(kl.detach())
        if model.cfg.kind == "sparse":
            r = cfg.lambda_q * reg(q["pivot"]) + cfg.lambda_d * reg(d["pivot"])
            loss = loss + r
            rec.update(
                reg=float(r.detach()),
                q_len=float((q["pivot"] > 0).sum(1).float().mean()),
                d_len=float((d["pivot"] > 0).sum(1).float().mean()),
            )
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        rec["loss"] = float(loss.detach())
        history.append(rec)
    return history


@torch.no_grad()
def encode_all(model: MilcoEncoder, ids: np.ndarray, mask: np.ndarray, batch: int = 256) -> dict[str, np.ndarray]:
    """Inference over many texts: ``dense`` (n, d) or ``pivot`` (n, V) and ``echo`` (n, L) with ``ids``."""
    model.eval()
    parts: dict[str, list] = {}
    for s in range(0, len(ids), batch):
        out = model(torch.as_tensor(ids[s : s + batch]), torch.as_tensor(mask[s : s + batch]))
        for k in ("dense", "pivot", "echo"):
            if k in out:
                parts.setdefault(k, []).append(out[k].numpy())
    res = {k: np.concatenate(v) for k, v in parts.items()}
    res["ids"] = np.asarray(ids)
    return res
