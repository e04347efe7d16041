"""Per-question TOFU metrics of one LM on each evaluation split."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from torch import nn

from components.training.qa_lm import answer_nll, greedy
from components.unlearning.metrics import rouge_l_recall, truth_ratio


def evaluate_split(
    model: nn.Module, tokenizer, rows: Sequence[dict], *, eos: int, max_new: int
) -> dict[str, np.ndarray]:
    """``prob`` (exp of minus mean answer NLL), ``rouge`` (greedy answer vs gold) and ``tr`` (truth ratio) per row."""
    qs = [r["question"] for r in rows]
    prob = np.exp(-answer_nll(model, tokenizer, qs, [r["answer"] for r in rows], eos=eos))
    para = answer_nll(model, tokenizer, qs, [r["paraphrased_answer"] for r in rows], eos=eos)
    k = len(rows[0]["perturbed_answer"])
    pert_q = [q for q in qs for _ in range(k)]
    pert_a = [a for r in rows for a in r["perturbed_answer"]]
    pert = answer_nll(model, tokenizer, pert_q, pert_a, eos=eos).reshape(len(rows), k)
    gen = greedy(model, tokenizer, qs, max_new=max_new, eos=eos)
    rouge = np.array([rouge_l_recall(g, r["answer"]) for g, r in zip(gen, rows)])
    return {"prob": prob, "rouge": rouge, "tr": truth_ratio(para, pert)}


def evaluate_model(
    model: nn.Module, tokenizer, splits: dict[str, Sequence[dict]], *, eos: int, max_new: int
) -> dict[str, dict[str, np.ndarray]]:
    return {name: evaluate_split(model, tokenizer, rows, eos=eos, max_new=max_new) for name, rows in splits.items()}
