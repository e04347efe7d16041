"""Visual contrastive decoding: greedy, VCD, VACoDe, Self-Aug (SAS + SAT) and the SAS-only / SAT-only ablations.

The next-token arithmetic follows the official ``eunwooim/selfaug`` ``src/utils/vcd_sample.py`` (VCD's
``sample`` patch):

- ``threshold = log(beta) + max(logits)`` and ``cd = (1 + alpha) * logits - alpha * logits_cd``, then
  ``cd.masked_fill(logits < threshold, -inf)`` (:func:`contrastive_logits`, :func:`plausible`);
- SAT: with ``cd_tau > 0``, ``beta = sigmoid(tau * sum p log2 p) = sigmoid(-tau * H2(p))`` of the clean
  distribution (``utils.sigmoid_decayed_entropy``; :func:`sat_beta`);
- VACoDe: for each augmentation of the menu, the L2 distance between the clean and augmented first-step
  softmax; the largest wins (``llava_model.py``, mode ``vacode``);
- one augmented image v' per query, used at every decoding step.

We decode greedily (argmax of the masked contrastive logits) where the official scripts sample; the mask,
arithmetic and beta are the same.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import torch

from components.errors import ParamsError
from components.selfaug_decoding.augment import MENU, augment
from components.selfaug_decoding.scenes import EOS

# SAS stand-in: the oracle-prior rule map from question type to augmentation (the paper asks the LVLM itself)
SAS_RULES = {
    "position": "horizontal_flip",
    "colour": "color_inversion",
    "existence": "random_mask",
    "count": "random_mask",
    "caption": "random_mask",
}


def entropy_bits(logits: torch.Tensor) -> torch.Tensor:
    """Shannon entropy in bits of softmax(logits) over the last axis (0 log 0 = 0)."""
    p = torch.softmax(logits.double(), dim=-1)
    logp = torch.where(p > 0, torch.log2(torch.where(p > 0, p, torch.ones_like(p))), torch.zeros_like(p))
    return -(p * logp).sum(-1).to(logits.dtype)


def sat_beta(logits: torch.Tensor, tau: float) -> torch.Tensor:
    """SAT's plausibility cut-off: sigmoid(-tau * H2(p)), one per row."""
    return torch.sigmoid(-tau * entropy_bits(logits))


def plausible(logits: torch.Tensor, beta: torch.Tensor | float) -> torch.Tensor:
    """The adaptive plausibility mask: tokens with ``logit >= log(beta) + max logit`` (per row)."""
    beta_t = torch.as_tensor(beta, dtype=logits.dtype)
    if beta_t.ndim == 1:
        beta_t = beta_t[:, None]
    return logits >= torch.log(beta_t) + logits.max(dim=-1, keepdim=True).values


def contrastive_logits(clean: torch.Tensor, augmented: torch.Tensor, alpha: float) -> torch.Tensor:
    """(1 + alpha) * logits(y | v, x) - alpha * logits(y | v', x)."""
    return (1 + alpha) * clean - alpha * augmented


def cd_step(clean: torch.Tensor, augmented: torch.Tensor, alpha: float, beta) -> torch.Tensor:
    """Masked contrastive logits: -inf outside the clean distribution's plausible set."""
    return contrastive_logits(clean, augmented, alpha).masked_fill(~plausible(clean, beta), -math.inf)


@dataclass(frozen=True)
class Method:
    """A decoding method: which augmented image (None: greedy), which cut-off (fixed beta, or SAT with tau)."""

    name: str
    aug: str | None  # None | "noise" | "sas" | "vacode" | a fixed menu name (or "identity" in tests)
    beta: float = 0.1
    tau: float | None = None
    alpha: float = 1.0


def methods(*, alpha: float = 1.0, beta: float = 0.1, tau: float = 0.5) -> dict[str, Method]:
    """The card's methods and ablations at one setting of alpha, beta (VCD's fixed cut-off) and tau (SAT's)."""
    return {
        "greedy": Method("greedy", None, beta, None, alpha),
        "vcd": Method("vcd", "noise", beta, None, alpha),
        "vacode": Method("vacode", "vacode", beta, None, alpha),
        "selfaug": Method("selfaug", "sas", beta, tau, alpha),
        "sas_only": Method("sas_only", "sas", beta, None, alpha),
        "sat_only": Method("sat_only", "noise", beta, tau, alpha),
    }


@dataclass
class Decoded:
    tokens: list[list[int]]  # generated ids per row (EOS excluded)
    augs: list[str | None]
    betas: list[list[float]] = field(default_factory=list)  # per row, per step
    n_plausible: list[list[int]] = field(default_factory=list)  # candidate-set size per row, per step
    first_logits: torch.Tensor | None = None  # the decision logits of step 1 (B, V)


Model = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]  # (prefix, tokens) -> logits (B, T, V)


def choose_vacode(
    encode: Callable[[torch.Tensor], torch.Tensor], model: Model, images, prompt, g, aug_kw, menu=MENU
) -> tuple[list[str], torch.Tensor]:
    """VACoDe: per row, the menu augmentation whose first-step softmax is furthest (L2) from the clean one."""
    clean = torch.softmax(model(encode(images), prompt)[:, -1], -1)
    best = torch.full((images.shape[0],), -1.0)
    chosen: list[str] = [menu[0]] * images.shape[0]
    aug_images = images.clone()
    for name in menu:
        xa = augment(name, images, g, **aug_kw)
        d = torch.linalg.vector_norm(clean - torch.softmax(model(encode(xa), prompt)[:, -1], -1), dim=-1)
        for i in torch.nonzero(d > best).flatten().tolist():
            chosen[i], best[i] = name, d[i]
            aug_images[i] = xa[i]
    return chosen, aug_images


@torch.no_grad()
def generate(
    encode: Callable[[torch.Tensor], torch.Tensor],
    model: Model,
    images: torch.Tensor,
    prompt: torch.Tensor,
    method: Method,
    *,
    qtypes: Sequence[str] | None = None,
    max_new: int = 1,
    seed: int = 0,
    aug_kw: Mapping | None = None,
    sas_rules: Mapping[str, str] = SAS_RULES,
) -> Decoded:
    """Decode ``max_new`` tokens for equal-length ``prompt`` rows (B, T) on ``images`` (B, 3, H, W).

    ``encode`` maps images to the visual prefix once; ``model(prefix, tokens)`` gives next-token logits.
    """
    aug_kw = dict(aug_kw or {})
    g = torch.Generator().manual_seed(seed)
    b = images.shape[0]
    prefix = encode(images)
    augs: list[str | None]
    if method.aug is None:
        aug_prefix, augs = None, [None] * b
    elif method.aug == "vacode":
        augs_v, xa = choose_vacode(encode, model, images, prompt, g, aug_kw)
        aug_prefix, augs = encode(xa), list(augs_v)
    elif method.aug == "sas":
        if qtypes is None:
            raise ParamsError("SAS needs each row's question type (qtypes)")
        unknown = sorted(set(qtypes) - set(sas_rules))
        if unknown:
            raise ParamsError(f"sas_rules: no augmentation for question type(s) {unknown}")
        augs = [sas_rules[q] for q in qtypes]
        xa = images.clone()
        for name in sorted(set(augs)):
            rows = [i for i, a in enumerate(augs) if a == name]
            xa[rows] = augment(name, images[rows], g, **aug_kw)
        aug_prefix = encode(xa)
    else:
        aug_prefix, augs = encode(augment(method.aug, images, g, **aug_kw)), [method.aug] * b
    tokens = prompt.clone()
    out: list[list[int]] = [[] for _ in range(b)]
    done = torch.zeros(b, dtype=torch.bool)
    betas: list[list[float]] = [[] for _ in range(b)]
    sizes: list[list[int]] = [[] for _ in range(b)]
    first = None
    for _ in range(max_new):
        clean = model(prefix, tokens)[:, -1]
        if aug_prefix is None:
            scores = clean
            beta = torch.full((b,), float("nan"))
            n_ok = torch.ones(b, dtype=torch.long)
        else:
            beta = sat_beta(clean, method.tau) if method.tau is not None else torch.full((b,), method.beta)
            scores = cd_step(clean, model(aug_prefix, tokens)[:, -1], method.alpha, beta)
            n_ok = plausible(clean, beta).sum(-1)
        if first is None:
            first = scores.clone()
        nxt = scores.argmax(-1)
        for i in range(b):
            if not done[i]:
                betas[i].append(float(beta[i]))
                sizes[i].append(int(n_ok[i]))
                if int(nxt[i]) == EOS:
                    done[i] = True
                else:
                    out[i].append(int(nxt[i]))
        if bool(done.all()):
            break
        tokens = torch.cat([tokens, nxt[:, None]], 1)
    return Decoded(out, augs, betas, sizes, first)
