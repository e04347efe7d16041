"""Downstream segmentation: the pretrained (or fresh) 3-D ViT encoder with a light UNETR-style decoder built from
MONAI's UNETR blocks, fine-tuned end to end; Dice with MONAI's ``DiceMetric``.

The decoder is MONAI's ``UNETR`` with one resolution level fewer (patch 8 needs three 2x up-samplings, patch 16
four): the last block's tokens (grid^3) go up through ``UnetrUpBlock``s whose skips are ``UnetrPrUpBlock``
projections of the middle and first blocks' tokens and a ``UnetrBasicBlock`` on the input volume, then
``UnetOutBlock``. ``feature_size`` is 8 (UNETR's default is 16) to fit 2 CPU cores.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from components.errors import ParamsError
from components.medgmae.model import Encoder3D, ModelConfig
from components.models import checkpoint


@dataclass
class SegConfig:
    model: dict  # the encoder's ModelConfig as a dict
    n_classes: int = 3
    feature_size: int = 8


class SegUNETR(nn.Module):
    def __init__(self, cfg: ModelConfig, n_classes: int, feature_size: int = 8, encoder: Encoder3D | None = None):
        super().__init__()
        self.config, self.model_config = SegConfig(cfg.to_dict(), n_classes, feature_size), cfg
        from monai.networks.blocks import UnetOutBlock, UnetrBasicBlock, UnetrPrUpBlock, UnetrUpBlock

        if cfg.patch != 8:
            raise ParamsError(f"SegUNETR: patch {cfg.patch}: the light decoder has three 2x levels (patch 8)")
        f, d, norm = feature_size, cfg.dim, "instance"
        self.n_classes = n_classes
        self.encoder = encoder if encoder is not None else Encoder3D(cfg)
        self.enc1 = UnetrBasicBlock(3, 1, f, kernel_size=3, stride=1, norm_name=norm, res_block=True)
        self.enc2 = UnetrPrUpBlock(3, d, 2 * f, 1, 3, 1, 2, norm_name=norm, conv_block=True, res_block=True)
        self.enc3 = UnetrPrUpBlock(3, d, 4 * f, 0, 3, 1, 2, norm_name=norm, conv_block=True, res_block=True)
        self.dec3 = UnetrUpBlock(3, d, 4 * f, kernel_size=3, upsample_kernel_size=2, norm_name=norm, res_block=True)
        self.dec2 = UnetrUpBlock(3, 4 * f, 2 * f, kernel_size=3, upsample_kernel_size=2, norm_name=norm, res_block=True)
        self.dec1 = UnetrUpBlock(3, 2 * f, f, kernel_size=3, upsample_kernel_size=2, norm_name=norm, res_block=True)
        self.out = UnetOutBlock(3, f, n_classes)

    def _grid(self, t: torch.Tensor) -> torch.Tensor:
        g = self.model_config.grid
        return t.transpose(1, 2).reshape(len(t), -1, g, g, g)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z, states = self.encoder(x, hidden=True)
        first, mid = states[0], states[len(states) // 2 - 1] if len(states) > 1 else states[0]
        top = self._grid(z[:, 1:])
        h = self.dec3(top, self.enc3(self._grid(mid)))
        h = self.dec2(h, self.enc2(self._grid(first)))
        return self.out(self.dec1(h, self.enc1(x)))

    @torch.no_grad()
    def pyfunc_predict(self, model_input) -> np.ndarray:
        """Class probabilities (B, C, S, S, S) for float32 volumes (B, 1, S, S, S): what the MLflow model serves."""
        self.eval()
        return F.softmax(self(torch.as_tensor(np.asarray(model_input, np.float32))), 1).numpy()


SEG_TYPE = "paperline-medgmae-unetr"


def save_segmenter(model: SegUNETR, directory) -> Path:
    """``config.json`` (encoder shape, classes, decoder width) + ``model.safetensors``, atomically."""
    return checkpoint.save(model, directory, SEG_TYPE)


def _from_seg_config(c: SegConfig) -> SegUNETR:
    return SegUNETR(ModelConfig(**c.model), c.n_classes, c.feature_size)


def load_segmenter(directory) -> SegUNETR:
    """Rebuild a :class:`SegUNETR` written by :func:`save_segmenter` (eval mode); a wrong folder: DataError."""
    return checkpoint.load(directory, _from_seg_config, SegConfig, SEG_TYPE)


def dice_per_volume(pred: torch.Tensor, label: torch.Tensor, n_classes: int) -> np.ndarray:
    """Foreground Dice per volume and class (B, n_classes - 1) with MONAI's ``DiceMetric`` (NaN: class absent in
    both prediction and label). ``pred`` and ``label``: integer maps (B, 1, S, S, S)."""
    from monai.metrics import DiceMetric

    oh = [F.one_hot(t[:, 0].long(), n_classes).permute(0, 4, 1, 2, 3).float() for t in (pred, label)]
    metric = DiceMetric(include_background=False, reduction="none", ignore_empty=True)
    return metric(oh[0], oh[1]).numpy()


def mean_foreground_dice(per_class: np.ndarray) -> np.ndarray:
    """Per volume, the mean over the foreground classes present (NaN-aware); 0 where every class is NaN."""
    with np.errstate(all="ignore"):
        m = np.nanmean(np.where(np.isnan(per_class), np.nan, per_class), 1)
    return np.nan_to_num(m, nan=0.0)


def fine_tune(
    model: SegUNETR,
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    steps: int,
    batch: int,
    lr: float,
    seed: int,
    progress: bool = False,
) -> list[float]:
    """End-to-end fine-tuning with cross-entropy + MONAI's DiceLoss (softmax, no background), AdamW and cosine
    decay; ``x`` (N, 1, S, S, S) float, ``y`` (N, 1, S, S, S) int labels. Random flips per batch."""
    from monai.losses import DiceCELoss
    from tqdm import tqdm

    if len(x) == 0:
        raise ParamsError("fine_tune: no labelled training volumes")
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    loss_fn = DiceCELoss(to_onehot_y=True, softmax=True, include_background=False)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    model.train()
    losses = []
    for _ in tqdm(range(steps), desc="fine-tune", disable=None if progress else True):
        idx = torch.randint(len(x), (min(batch, len(x)),), generator=g)
        xb, yb = x[idx], y[idx]
        for ax in (2, 3, 4):
            if bool(torch.rand(1, generator=g) < 0.5):
                xb, yb = xb.flip(ax), yb.flip(ax)
        loss = loss_fn(model(xb), yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.item()))
    return losses


@torch.no_grad()
def predict(model: SegUNETR, x: torch.Tensor, batch: int = 8) -> torch.Tensor:
    """Integer label maps (N, 1, S, S, S)."""
    model.eval()
    return torch.cat([model(x[i : i + batch]).argmax(1, keepdim=True) for i in range(0, len(x), batch)])
