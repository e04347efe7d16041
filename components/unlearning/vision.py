"""The vision track: sklearn digits, an MLP (64-128-10), forget scenarios, UA/RA/TA and MIA.

UA = 1 - accuracy on the forget set, RA = retain accuracy, TA = test accuracy,
MIA = fraction of forget samples a loss-threshold attack calls non-members.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from components.errors import DataError
from components.unlearning.metrics import mia_efficacy


def load_digits_split(test_frac: float, *, seed: int) -> dict[str, np.ndarray]:
    """Digits scaled to [0, 1], split into train and test (stratified, seeded)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    d = load_digits()
    xtr, xte, ytr, yte = train_test_split(
        d.data / 16.0, d.target, test_size=test_frac, random_state=seed, stratify=d.target
    )
    return {"x_train": xtr.astype(np.float32), "y_train": ytr, "x_test": xte.astype(np.float32), "y_test": yte}


def forget_mask(y_train: np.ndarray, scenario: str, *, seed: int, frac: float = 0.1) -> np.ndarray:
    """``class-K`` forgets every training sample of class K; ``random`` forgets a random ``frac``."""
    if scenario.startswith("class-"):
        mask = y_train == int(scenario.split("-", 1)[1])
    elif scenario == "random":
        rng = np.random.default_rng(seed)
        mask = np.zeros(len(y_train), dtype=bool)
        mask[rng.choice(len(y_train), size=max(1, int(frac * len(y_train))), replace=False)] = True
    else:
        raise DataError(f"vision scenario: expected 'class-K' or 'random', got {scenario!r}")
    if not mask.any():
        raise DataError(f"vision scenario {scenario!r}: the forget set is empty")
    return mask


def mlp(hidden: int = 128, *, seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(64, hidden), nn.ReLU(), nn.Linear(hidden, 10))


def ce_per_example(model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    x, y = batch
    return F.cross_entropy(model(x), y, reduction="none")


def train_classifier(
    model: nn.Module, x: np.ndarray, y: np.ndarray, *, epochs: int, lr: float, batch: int, seed: int
) -> nn.Module:
    gen = torch.Generator().manual_seed(seed)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y).long()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    for _ in range(epochs):
        for idx in torch.randperm(len(xt), generator=gen).split(batch):
            loss = ce_per_example(model, (xt[idx], yt[idx])).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    return model.eval()


@torch.no_grad()
def per_example(model: nn.Module, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(correct 0/1, loss) per example."""
    model.eval()
    xt, yt = torch.from_numpy(x), torch.from_numpy(y).long()
    logits = model(xt)
    return (logits.argmax(1) == yt).numpy().astype(float), F.cross_entropy(logits, yt, reduction="none").numpy()


def vision_metrics(model: nn.Module, data: dict[str, np.ndarray], mask: np.ndarray) -> dict:
    """UA, RA, TA, MIA and the per-test-item correctness (for paired CIs)."""
    xf, yf = data["x_train"][mask], data["y_train"][mask]
    xr, yr = data["x_train"][~mask], data["y_train"][~mask]
    cf, lf = per_example(model, xf, yf)
    cr, lr = per_example(model, xr, yr)
    ct, lt = per_example(model, data["x_test"], data["y_test"])
    return {
        "UA": 1.0 - cf.mean(),
        "RA": cr.mean(),
        "TA": ct.mean(),
        "MIA": mia_efficacy(lr, lt, lf),
        "test_correct": ct,
    }


def batches(x: np.ndarray, y: np.ndarray, batch: int, *, seed: int):
    """Endless shuffled (x, y) tensor batches."""
    gen = torch.Generator().manual_seed(seed)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y).long()
    while True:
        for idx in torch.randperm(len(xt), generator=gen).split(batch):
            yield xt[idx], yt[idx]
