"""A tiny CenterNet (Zhou et al., "Objects as Points"): a stride-4 centre heatmap trained with the penalty-reduced
focal loss on Gaussian targets, plus box size and sub-cell offset heads; decoding keeps 3x3 heatmap peaks.

About 0.15M parameters (width 32): a 4x4 patch stem to stride 4, a stride-8 trunk with dilated convolutions (large
people span ~18 cells) upsampled back to stride 4 and fused with the stem's features. Sizes are regressed as
log(w), log(h) in pixels (a choice; the paper's CenterNet regresses raw sizes with weight 0.1) so 4 px aerial
figures and 70 px people share one scale.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from components.detection.augment import AugmentConfig, augment
from components.errors import DataError

STRIDE = 4


@dataclass(frozen=True)
class CenterNetConfig:
    width: int = 32
    size_weight: float = 1.0
    offset_weight: float = 1.0


def _block(cin, cout, stride=1, dilation=1):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride, padding=dilation, dilation=dilation, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    )


class TinyCenterNet(nn.Module):
    def __init__(self, cfg: CenterNetConfig = CenterNetConfig()):
        super().__init__()
        w = cfg.width
        self.cfg = cfg
        # a 4x4 stride-4 patch stem keeps the CPU cost low (~60M MACs per 128 px image)
        self.stem = nn.Sequential(
            nn.Conv2d(3, w // 2, 4, 4, bias=False), nn.BatchNorm2d(w // 2), nn.ReLU(inplace=True), _block(w // 2, w)
        )
        self.s8 = nn.Sequential(_block(w, 2 * w, 2), _block(2 * w, 2 * w, dilation=2), _block(2 * w, 2 * w, dilation=4))
        self.lat = nn.Conv2d(w, 2 * w, 1)
        self.fuse = nn.Sequential(nn.Conv2d(2 * w, w, 1), nn.ReLU(inplace=True), _block(w, w))
        self.head = _block(w, w)
        self.heat = nn.Conv2d(w, 1, 1)
        self.size = nn.Conv2d(w, 2, 1)
        self.offset = nn.Conv2d(w, 2, 1)
        nn.init.constant_(self.heat.bias, -2.19)  # prior 0.1, as CenterNet initialises its heatmap head

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """x: (B, 3, H, W) in [0, 1] -> heat logits (B, 1, H/4, W/4), log-size (B, 2, ..), offset (B, 2, ..)."""
        f4 = self.stem(x - 0.5)
        f8 = self.s8(f4)
        f = self.head(self.fuse(F.interpolate(f8, size=f4.shape[-2:], mode="nearest") + self.lat(f4)))
        return self.heat(f), self.size(f), self.offset(f)

    def pyfunc_predict(self, model_input) -> np.ndarray:
        """MLflow pyfunc entry (flows.runtime.mlflow_model): images (B, H, W, 3) uint8 -> heatmap peaks
        (B, 100, 5) as [x, y, w, h, score]."""
        dets = detect(self, np.asarray(model_input, np.uint8), top_k=100, min_score=0.0)
        return np.stack([np.c_[b, s] for b, s in dets]).astype(np.float32)


def n_params(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def gaussian_radius(w: float, h: float) -> float:
    """Std of the centre Gaussian in stride-4 cells: a sixth of the box diagonal, at least 0.5 (a choice close to
    CenterNet's IoU-0.7 radius for small boxes)."""
    return max(0.5, float(np.hypot(w, h)) / STRIDE / 6.0)


def targets(boxes: list[np.ndarray], size: int) -> dict[str, torch.Tensor]:
    """Heatmap, size, offset and mask targets for a batch: boxes[i] = (n, 4) [x, y, w, h] in pixels."""
    S = size // STRIDE
    heat = np.zeros((len(boxes), 1, S, S), np.float32)
    reg = np.zeros((len(boxes), 4, S, S), np.float32)
    mask = np.zeros((len(boxes), 1, S, S), np.float32)
    yy, xx = np.mgrid[0:S, 0:S]
    for i, bs in enumerate(boxes):
        for x, y, w, h in np.asarray(bs, float).reshape(-1, 4):
            cx, cy = (x + w / 2) / STRIDE, (y + h / 2) / STRIDE
            ix, iy = min(int(cx), S - 1), min(int(cy), S - 1)
            sig = gaussian_radius(w, h)
            g = np.exp(-((xx - ix) ** 2 + (yy - iy) ** 2) / (2 * sig * sig))
            heat[i, 0] = np.maximum(heat[i, 0], g)
            reg[i, :, iy, ix] = (np.log(max(w, 1.0)), np.log(max(h, 1.0)), cx - ix, cy - iy)
            mask[i, 0, iy, ix] = 1.0
    return {"heat": torch.from_numpy(heat), "reg": torch.from_numpy(reg), "mask": torch.from_numpy(mask)}


def focal_loss(logits: torch.Tensor, target: torch.Tensor, alpha: float = 2.0, beta: float = 4.0) -> torch.Tensor:
    """CenterNet's penalty-reduced pixel-wise focal loss, normalised by the number of centres."""
    p = torch.sigmoid(logits).clamp(1e-4, 1 - 1e-4)
    pos = target.eq(1).float()
    pos_loss = torch.log(p) * (1 - p) ** alpha * pos
    neg_loss = torch.log(1 - p) * p**alpha * (1 - target) ** beta * (1 - pos)
    return -(pos_loss.sum() + neg_loss.sum()) / pos.sum().clamp(min=1.0)


def loss(model: TinyCenterNet, images: torch.Tensor, tgt: dict[str, torch.Tensor]) -> torch.Tensor:
    heat, size, off = model(images)
    m = tgt["mask"]
    n = m.sum().clamp(min=1.0)
    l_size = (F.l1_loss(size, tgt["reg"][:, :2], reduction="none") * m).sum() / n
    l_off = (F.l1_loss(off, tgt["reg"][:, 2:], reduction="none") * m).sum() / n
    cfg = model.cfg
    return focal_loss(heat, tgt["heat"]) + cfg.size_weight * l_size + cfg.offset_weight * l_off


@dataclass(frozen=True)
class TrainConfig:
    epochs: int = 3
    batch_size: int = 32
    lr: float = 3e-3
    weight_decay: float = 1e-4
    augment: AugmentConfig | None = AugmentConfig()  # None: no augmentation at all (not even flips)


def _to_tensor(images: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(images)).permute(0, 3, 1, 2).float() / 255.0


def train(
    images: np.ndarray,
    boxes: list[np.ndarray],
    *,
    cfg: TrainConfig,
    model_cfg: CenterNetConfig,
    seed: int,
    on_epoch: Callable[[TinyCenterNet, int], float] | None = None,
) -> tuple[TinyCenterNet, dict]:
    """Train on uint8 images (N, H, W, 3) with full-body boxes per image; AdamW with a one-cycle schedule and
    CenterNet's augmentation (:mod:`components.detection.augment`). ``on_epoch(model, epoch)`` (e.g. a dev AP)
    is recorded after every epoch. Returns the model and a history (loss per epoch and per step, images seen,
    seconds, steps, the ``on_epoch`` values)."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = TinyCenterNet(model_cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    steps = cfg.epochs * int(np.ceil(len(images) / cfg.batch_size))
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=cfg.lr, total_steps=max(steps, 1), pct_start=0.15)
    size = images.shape[1]
    history, step_loss, monitor, seen, start = [], [], [], 0, time.perf_counter()
    for epoch in range(cfg.epochs):
        model.train()
        order, total, nb = rng.permutation(len(images)), 0.0, 0
        for i in range(0, len(order), cfg.batch_size):
            idx = order[i : i + cfg.batch_size]
            x, bx = images[idx], [np.asarray(boxes[j], float).reshape(-1, 4) for j in idx]
            if cfg.augment is not None:
                x, bx = augment(rng, x, bx, cfg.augment)
            lval = loss(model, _to_tensor(x), targets(bx, size))
            opt.zero_grad()
            lval.backward()
            opt.step()
            sched.step()
            step_loss.append(float(lval.detach()))
            total, nb, seen = total + step_loss[-1], nb + 1, seen + len(idx)
        history.append(total / max(nb, 1))
        if on_epoch is not None:
            monitor.append(float(on_epoch(model, epoch)))
    secs = time.perf_counter() - start
    model.eval()
    return model, {
        "loss": history,
        "step_loss": step_loss,
        "monitor": monitor,
        "images_seen": seen,
        "seconds": secs,
        "steps": steps,
        "steps_per_s": steps / max(secs, 1e-9),
    }


@torch.no_grad()
def detect(
    model: TinyCenterNet, images: np.ndarray, *, top_k: int = 50, min_score: float = 0.01, batch_size: int = 64
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per image (boxes [x, y, w, h] in pixels, scores): 3x3 heatmap peaks, the top ``top_k`` above
    ``min_score``."""
    model.eval()
    out = []
    for i in range(0, len(images), batch_size):
        heat, size, off = model(_to_tensor(images[i : i + batch_size]))
        p = torch.sigmoid(heat)
        peaks = p * (F.max_pool2d(p, 3, 1, 1) == p).float()
        B, _, S, _ = p.shape
        k = min(top_k, S * S)
        scores, idx = peaks.view(B, -1).topk(k)
        ys, xs = (idx // S).float(), (idx % S).float()
        sz = size.view(B, 2, -1).gather(2, idx[:, None].expand(B, 2, k)).exp()
        of = off.view(B, 2, -1).gather(2, idx[:, None].expand(B, 2, k))
        cx, cy = (xs + of[:, 0]) * STRIDE, (ys + of[:, 1]) * STRIDE
        boxes = torch.stack([cx - sz[:, 0] / 2, cy - sz[:, 1] / 2, sz[:, 0], sz[:, 1]], -1)
        for b in range(B):
            keep = scores[b] >= min_score
            out.append((boxes[b][keep].numpy().astype(np.float64), scores[b][keep].numpy().astype(np.float64)))
    return out


def save_model(model: TinyCenterNet, folder: Path) -> Path:
    """config.json + model.safetensors (no pickle)."""
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(asdict(model.cfg)))
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(folder / "model.safetensors"))
    return folder


def load_model(folder: str | Path) -> TinyCenterNet:
    from components.inputs import load_safetensors, load_state_into
    from components.io import read_json

    folder = Path(folder)
    cfg_path, w_path = folder / "config.json", folder / "model.safetensors"
    try:
        model = TinyCenterNet(CenterNetConfig(**read_json(cfg_path, kind=dict)))
    except (TypeError, ValueError) as exc:
        raise DataError(f"{cfg_path}: not a CenterNet config ({type(exc).__name__}: {str(exc)[:80]})") from None
    load_state_into(model, load_safetensors(w_path), w_path, cfg_path)
    return model.eval()
