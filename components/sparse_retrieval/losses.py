"""The training objectives, after ``thongnt99/milco`` (``compute_alignment_loss``, ``flops``, ``score_passages``):
the masked SAP MSE, FLOPS and L1 regularisers, LexEcho's matched-token score, in-batch InfoNCE and the KL
distillation from a teacher's scores."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def sap_loss(student: torch.Tensor, teacher: torch.Tensor) -> torch.Tensor:
    """MSE between student and teacher max-logits, only on the dimensions where either is > 0."""
    mask = (student > 0) | (teacher > 0)
    if not bool(mask.any()):
        return student.sum() * 0.0
    return F.mse_loss(student[mask], teacher[mask])


def flops(reps: torch.Tensor) -> torch.Tensor:
    """FLOPS regulariser (Paria et al.): sum over terms of the squared mean absolute weight in the batch."""
    return (reps.abs().mean(dim=0) ** 2).sum()


def l1(reps: torch.Tensor) -> torch.Tensor:
    return reps.abs().sum(dim=1).mean()


def lexecho_pair_scores(
    q_ids: torch.Tensor, q_vals: torch.Tensor, d_ids: torch.Tensor, d_vals: torch.Tensor
) -> torch.Tensor:
    """(Bq, Bd) sum over token pairs (i, j) with q_ids[i] == d_ids[j] of q_vals[i] * d_vals[j] (the official
    ``score_passages`` match mask, written for all query-document pairs)."""
    match = (q_ids[:, None, :, None] == d_ids[None, :, None, :]).to(q_vals.dtype)
    return (q_vals[:, None, :, None] * d_vals[None, :, None, :] * match).sum((-1, -2))


def info_nce(scores: torch.Tensor) -> torch.Tensor:
    """In-batch contrastive loss: row i's positive is column i."""
    return F.cross_entropy(scores, torch.arange(scores.shape[0], device=scores.device))


def kl_distill(student_scores: torch.Tensor, teacher_scores: torch.Tensor, temperature: float) -> torch.Tensor:
    """KL(teacher || student) over each query's in-batch documents (the official ``kl_div`` with batchmean)."""
    return F.kl_div(
        torch.log_softmax(student_scores, -1), torch.softmax(teacher_scores / temperature, -1), reduction="batchmean"
    )
