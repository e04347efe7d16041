"""Adapter modules, one class each: the Dual-Kernel Adapter (DKA), the bottleneck adapter and Convpass.

DKA follows the official ``misswayguy/DKA`` ViT adapter (``peft_model/adapter/vit_adapter.py``), read, not
copied: ``Down`` (no bias) then GELU on every token; the patch tokens are laid out on the grid and pass
through a large and a small depthwise convolution (no bias, "same" padding) whose outputs are summed; the CLS
token skips the convolutions; GELU, dropout 0.1, ``Up`` (no bias) and a residual: ``y = x + Up(...)``. One
adapter follows each transformer block (the script's ``selected_layers=range(0, 12)``). Default PyTorch
initialisation, as in the code (``Up`` is not zero-initialised there).

The bottleneck adapter is the same file's earlier ``Adapter`` (``Down -> ReLU -> Up``, no bias, residual)
at the same place, so DKA differs from it only by the two depthwise convolutions. Convpass (Jie & Deng 2022)
runs a 3x3 full convolution in the bottleneck, in parallel to MHSA and MLP with scale ``s``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from components.errors import ParamsError

BRANCHES = ("both", "large", "small")


def _grid(n_patches: int) -> int:
    side = int(round(n_patches**0.5))
    if side * side != n_patches:
        raise ParamsError(f"adapter: {n_patches} patch tokens do not form a square grid")
    return side


def to_grid(z: torch.Tensor) -> torch.Tensor:
    """(B, H*W, C) patch tokens -> (B, C, H, W)."""
    b, n, c = z.shape
    side = _grid(n)
    return z.reshape(b, side, side, c).permute(0, 3, 1, 2)


def from_grid(z: torch.Tensor) -> torch.Tensor:
    b, c, h, w = z.shape
    return z.permute(0, 2, 3, 1).reshape(b, h * w, c)


class DKA(nn.Module):
    """Dual-Kernel Adapter on tokens (B, 1 + H*W, dim); ``branches`` selects the ablations (large/small only)."""

    def __init__(
        self, dim: int, mid: int, k_large: int = 15, k_small: int = 3, branches: str = "both", dropout: float = 0.1
    ):
        super().__init__()
        if branches not in BRANCHES:
            raise ParamsError(f"DKA branches {branches!r}: use one of {BRANCHES}")
        for name, k in (("k_large", k_large), ("k_small", k_small)):
            if k < 1 or k % 2 == 0:
                raise ParamsError(f"DKA {name} = {k}: must be an odd kernel size >= 1")
        self.branches = branches
        self.adapter_down = nn.Linear(dim, mid, bias=False)
        self.adapter_up = nn.Linear(mid, dim, bias=False)
        self.conv_large = (
            nn.Conv2d(mid, mid, k_large, padding=k_large // 2, groups=mid, bias=False)
            if branches in ("both", "large")
            else None
        )
        self.conv_small = (
            nn.Conv2d(mid, mid, k_small, padding=k_small // 2, groups=mid, bias=False)
            if branches in ("both", "small")
            else None
        )
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = F.gelu(self.adapter_down(x))
        grid = to_grid(z[:, 1:])
        mixed = sum(conv(grid) for conv in (self.conv_large, self.conv_small) if conv is not None)
        z = torch.cat([z[:, :1], from_grid(mixed)], 1)
        return x + self.adapter_up(self.dropout(F.gelu(z)))


class Bottleneck(nn.Module):
    """``x + Up(ReLU(Down(x)))`` on every token (no bias), the official code's plain ``Adapter``."""

    def __init__(self, dim: int, mid: int):
        super().__init__()
        self.adapter_down = nn.Linear(dim, mid, bias=False)
        self.adapter_up = nn.Linear(mid, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.adapter_up(F.relu(self.adapter_down(x)))


class Convpass(nn.Module):
    """Convpass branch (returns the update only; the block adds ``s * convpass(norm(x))``).

    Down (xavier) -> QuickGELU -> 3x3 conv on the patch grid (the CLS token as a 1x1 map through the same conv)
    -> QuickGELU -> dropout -> Up (zero-initialised, so the branch starts at 0), as in Jie & Deng's code.
    """

    def __init__(self, dim: int, mid: int = 8, kernel: int = 3, dropout: float = 0.1):
        super().__init__()
        self.adapter_down = nn.Linear(dim, mid)
        self.adapter_conv = nn.Conv2d(mid, mid, kernel, padding=kernel // 2)
        self.adapter_up = nn.Linear(mid, dim)
        nn.init.xavier_uniform_(self.adapter_down.weight)
        nn.init.zeros_(self.adapter_down.bias)
        nn.init.xavier_uniform_(self.adapter_conv.weight)
        nn.init.zeros_(self.adapter_conv.bias)
        nn.init.zeros_(self.adapter_up.weight)
        nn.init.zeros_(self.adapter_up.bias)
        self.dropout = nn.Dropout(dropout)

    @staticmethod
    def act(x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(1.702 * x)  # QuickGELU

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.act(self.adapter_down(x))
        patches = from_grid(self.adapter_conv(to_grid(z[:, 1:])))
        b, _, c = z.shape
        cls = self.adapter_conv(z[:, :1].reshape(b, c, 1, 1)).reshape(b, 1, c)
        z = self.dropout(self.act(torch.cat([cls, patches], 1)))
        return self.adapter_up(z)


def dka_params(dim: int, mid: int, k_large: int, k_small: int, branches: str = "both") -> int:
    """Closed-form parameter count of one DKA block."""
    conv = {"both": k_large**2 + k_small**2, "large": k_large**2, "small": k_small**2}[branches]
    return 2 * dim * mid + mid * conv


def matched_mid(dim: int, mid: int, k_large: int, k_small: int) -> int:
    """Bottleneck width whose adapter has (about) as many parameters as one DKA block (2 * dim * m = DKA)."""
    return max(1, round(dka_params(dim, mid, k_large, k_small) / (2 * dim)))
