"""Training an adapted model (Adam, separate adapter and head learning rates) and scoring it with scikit-learn.

The linear probe trains its head on features computed once, for the images its steps draw (at 100% of the labels
a short run draws only part of the pool): the backbone is frozen and has no dropout, so this is the same
optimisation as a forward pass per step, only cheaper.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.metrics import accuracy_score, f1_score, roc_auc_score

from components.dka.methods import Built


def _batches(n: int, batch: int, steps: int, rng: np.random.Generator):
    order: list[int] = []
    for _ in range(steps):
        while len(order) < batch:
            order += rng.permutation(n).tolist()
        yield np.asarray(order[:batch])
        order = order[batch:]


def fit(
    built: Built,
    x: np.ndarray,
    y: np.ndarray,
    *,
    steps: int,
    batch: int,
    lr_adapter: float,
    lr_head: float,
    seed: int,
    linear_probe: bool = False,
) -> list[float]:
    """Train ``built`` on (x, y); returns the training loss of every step."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = built.model
    groups = [{"params": built.groups["head"], "lr": lr_head}]
    if "adapter" in built.groups:
        groups.append({"params": built.groups["adapter"], "lr": lr_adapter})
    opt = torch.optim.Adam(groups)
    xt, yt = torch.as_tensor(x), torch.as_tensor(y, dtype=torch.long)
    batch = min(batch, len(xt))
    order = list(_batches(len(xt), batch, steps, rng))
    if linear_probe:  # features of the images the steps draw, once (not of the whole labelled set)
        model.eval()
        used = np.unique(np.concatenate(order)) if order else np.zeros(0, np.int64)
        where = np.zeros(len(xt), np.int64)
        where[used] = np.arange(len(used))
        with torch.no_grad():
            feats = [model.features(xt[torch.as_tensor(used[i : i + 256])]) for i in range(0, len(used), 256)]
        xt = torch.cat(feats) if feats else xt[:0]
        yt = yt[torch.as_tensor(used)]  # features and labels both in the order of ``used``
        order = [where[idx] for idx in order]
        forward = model.head
    else:
        model.train()
        forward = model
    losses = []
    for idx in order:
        i = torch.as_tensor(idx)
        loss = F.cross_entropy(forward(xt[i]), yt[i])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    return losses


@torch.no_grad()
def predict_proba(model, x: np.ndarray, batch: int = 250) -> np.ndarray:
    model.eval()
    xt = torch.as_tensor(x)
    return torch.cat([F.softmax(model(xt[i : i + batch]), -1) for i in range(0, len(xt), batch)]).numpy()


def scores(y: np.ndarray, proba: np.ndarray) -> dict[str, float]:
    """Accuracy, macro-F1 and one-vs-rest macro AUC (scikit-learn)."""
    pred = proba.argmax(1)
    labels = list(range(proba.shape[1]))
    out = {
        "acc": float(accuracy_score(y, pred)),
        "macro_f1": float(f1_score(y, pred, average="macro", labels=labels, zero_division=0)),
    }
    try:
        out["auc"] = float(roc_auc_score(y, proba, multi_class="ovr", labels=labels))
    except ValueError:  # a class absent from y
        out["auc"] = float("nan")
    return out
