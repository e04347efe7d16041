"""The tiny VLM: a 4-layer CNN encoder to 64 visual tokens, and a small transformer decoder that reads them as a
prefix (prefix-LM mask: the visual tokens see each other, text tokens see the prefix and the text before them).

Saved as ``config.json`` + ``model.safetensors`` (``components.models.checkpoint``), trained by :func:`train`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from components.models import checkpoint
from components.selfaug_decoding.augment import normalise
from components.selfaug_decoding.scenes import BOS, EOS, PAD, SEP, VOCAB, encode

MODEL_TYPE = "selfaug-tiny-vlm"


@dataclass
class VLMConfig:
    vocab: int = len(VOCAB)
    d: int = 128
    n_layers: int = 2
    n_heads: int = 4
    d_ff: int = 256
    img: int = 64
    max_text: int = 32
    channels: tuple[int, ...] = (16, 32, 64)
    dropout: float = 0.0
    encoder_norm: bool = False  # GroupNorm(8) after each strided conv
    emb_std: float = 1.0  # init std of the word embeddings (torch's default: 1)


class TinyVLM(nn.Module):
    def __init__(self, config: VLMConfig):
        super().__init__()
        self.config = c = config
        chans = [3, *c.channels]
        convs: list[nn.Module] = []
        for a, b in zip(chans, chans[1:]):
            convs += [nn.Conv2d(a, b, 3, stride=2, padding=1), *([nn.GroupNorm(8, b)] if c.encoder_norm else []),
                      nn.GELU()]  # fmt: skip
        convs += [nn.Conv2d(chans[-1], c.d, 3, padding=1)]  # the 4th layer: 8 x 8 = 64 tokens of width d
        self.encoder = nn.Sequential(*convs)
        side = c.img // 2 ** len(c.channels)
        self.n_visual = side * side
        self.vis_pos = nn.Parameter(torch.zeros(1, self.n_visual, c.d))
        self.tok = nn.Embedding(c.vocab, c.d)
        self.pos = nn.Parameter(torch.zeros(1, c.max_text, c.d))
        layer = nn.TransformerEncoderLayer(c.d, c.n_heads, c.d_ff, c.dropout, activation="gelu", batch_first=True,
                                           norm_first=True)  # fmt: skip
        self.blocks = nn.TransformerEncoder(layer, c.n_layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(c.d)
        self.head = nn.Linear(c.d, c.vocab)
        nn.init.normal_(self.vis_pos, std=0.02)
        nn.init.normal_(self.pos, std=0.02)
        nn.init.normal_(self.tok.weight, std=c.emb_std)

    def encode(self, images: torch.Tensor) -> torch.Tensor:
        """Normalised images (B, 3, H, W) -> the visual prefix (B, 64, d)."""
        f = self.encoder(images)
        return f.flatten(2).transpose(1, 2) + self.vis_pos

    def _mask(self, t: int) -> torch.Tensor:
        n = self.n_visual + t
        m = torch.zeros(n, n, dtype=torch.bool)  # True: blocked
        m[: self.n_visual, self.n_visual :] = True
        m[self.n_visual :, self.n_visual :] = torch.triu(torch.ones(t, t, dtype=torch.bool), 1)
        return m

    def forward(self, prefix: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        """Logits (B, T, V) of the text positions, given the visual prefix and the text so far."""
        t = tokens.shape[1]
        if t > self.config.max_text:
            tokens, t = tokens[:, -self.config.max_text :], self.config.max_text
        x = torch.cat([prefix, self.tok(tokens) + self.pos[:, :t]], 1)
        h = self.blocks(x, mask=self._mask(t))
        return self.head(self.norm(h[:, self.n_visual :]))


def save_model(model: TinyVLM, directory: str | os.PathLike):
    return checkpoint.save(model, directory, MODEL_TYPE)


def load_model(directory: str | os.PathLike) -> TinyVLM:
    """Rebuild a :class:`TinyVLM` written by :func:`save_model` (eval mode); a wrong folder is a DataError."""
    return checkpoint.load(directory, TinyVLM, VLMConfig, MODEL_TYPE)


def to_tensor(images_u8: np.ndarray) -> torch.Tensor:
    """uint8 (N, H, W, 3) -> normalised float (N, 3, H, W)."""
    return normalise(torch.from_numpy(images_u8).permute(0, 3, 1, 2).float() / 255.0)


def prompt_ids(q: Sequence[str]) -> list[int]:
    return [BOS, *encode(q), SEP]


def batch_examples(rows: Sequence[dict]) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded input ids and targets (-100 outside the answer and its EOS)."""
    seqs, tgts = [], []
    for r in rows:
        p, a = prompt_ids(r["q"]), [*encode(r["a"]), EOS]
        s = p + a
        seqs.append(s[:-1])
        tgts.append([-100] * (len(p) - 1) + a)
    n = max(map(len, seqs))
    x = torch.full((len(rows), n), PAD, dtype=torch.long)
    y = torch.full((len(rows), n), -100, dtype=torch.long)
    for i, (s, t) in enumerate(zip(seqs, tgts)):
        x[i, : len(s)] = torch.tensor(s)
        y[i, : len(t)] = torch.tensor(t)
    return x, y


def train(
    images_u8: np.ndarray,
    examples: Sequence[dict],
    config: VLMConfig,
    *,
    steps: int,
    batch: int,
    lr: float,
    seed: int,
    log_every: int = 25,
    yesno_share: float = 0.0,
    loss_per: str = "token",
) -> tuple[TinyVLM, list[tuple[int, float]]]:
    """Next-token cross-entropy on the answers; AdamW with warmup and cosine decay. ``examples`` rows carry
    ``scene`` (the row of ``images_u8``), ``q`` and ``a``. ``yesno_share``: the share of each batch drawn from
    the yes/no questions (half "yes", half "no"; 0: uniform over all examples); ``loss_per``: "token" (the mean
    over answer tokens: long captions weigh most) or "example" (each example's mean first: a one-word answer
    weighs as much as a caption). Returns the model (eval mode) and the loss curve."""
    if loss_per not in ("token", "example"):
        raise ValueError(f"loss_per must be 'token' or 'example', got {loss_per!r}")
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    yes_idx = np.asarray([i for i, e in enumerate(examples) if list(e["a"]) == ["yes"]], dtype=np.int64)
    no_idx = np.asarray([i for i, e in enumerate(examples) if list(e["a"]) == ["no"]], dtype=np.int64)
    n_yn = int(round(yesno_share * batch)) if len(yes_idx) and len(no_idx) else 0
    model = TinyVLM(config)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    warm = max(1, steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * 0.5 * (1 + math.cos(math.pi * min(1.0, s / steps)))
    )
    curve, run = [], []
    model.train()
    for step in range(steps):
        idx = rng.integers(0, len(examples), batch - n_yn)
        if n_yn:
            idx = np.concatenate([rng.choice(yes_idx, n_yn // 2), rng.choice(no_idx, n_yn - n_yn // 2), idx])
        rows = [examples[i] for i in idx]
        x, y = batch_examples(rows)
        imgs = to_tensor(images_u8[[r["scene"] for r in rows]])
        logits = model(model.encode(imgs), x)
        if loss_per == "token":
            loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), ignore_index=-100)
        else:
            tok = nn.functional.cross_entropy(logits.transpose(1, 2), y, ignore_index=-100, reduction="none")
            loss = (tok.sum(1) / (y != -100).sum(1).clamp(min=1)).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        run.append(float(loss.detach()))
        if (step + 1) % log_every == 0 or step == steps - 1:
            curve.append((step + 1, float(np.mean(run))))
            run = []
    model.eval()
    return model, curve
