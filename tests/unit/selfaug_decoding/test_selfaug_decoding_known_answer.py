"""Known answer for selfaug-decoding: where the hallucination comes from the language prior alone, VCD lowers the
false-yes rate against greedy decoding by at least 30 points; and the sabotages a reviewer would try (an
augmentation that leaves the image unchanged, subtracting the clean logits instead of the augmented ones) lose it.

The fixture: a toy VLM whose "yes" logit is a question prior P (0.5-2.5, from the prompt) plus visual evidence
E = mean(image) * exp(-var(image) / 0.05): a clean image (constant -1 when the object is absent, +1 when present)
gives E = -1 or +1; noise at diffusion step 500 makes the image noisy, so E drops to about 0. Greedy says "yes"
on a negative whenever P > 1 (75% of the priors); VCD's (1 + a) l(v) - a l(v') = P + E + a (E - E') says "yes"
only when P > 2 (25%). Expected margin: 50 points; the test asks for 30.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from components.selfaug_decoding import decoding as D
from components.selfaug_decoding.scenes import VOCAB

YES, NO = VOCAB.index("yes"), VOCAB.index("no")
N = 400


class PriorOnlyVLM:
    """encode: (mean, variance) of the image; forward: "yes" logit = prior[prompt token] + evidence."""

    def __init__(self, priors: torch.Tensor):
        self.priors = priors

    def encode(self, images: torch.Tensor) -> torch.Tensor:
        flat = images.flatten(1)
        return torch.stack([flat.mean(1), flat.var(1)], 1)[:, None]

    def __call__(self, prefix: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        mean, var = prefix[:, 0, 0], prefix[:, 0, 1]
        evidence = mean * torch.exp(-var / 0.05)
        logits = torch.full((tokens.shape[0], tokens.shape[1], len(VOCAB)), -10.0)
        logits[:, -1, NO] = 0.0
        logits[:, -1, YES] = self.priors[tokens[:, -1]] + evidence
        return logits


def _fixture(seed: int = 0):
    rng = np.random.default_rng(seed)
    priors = torch.tensor(rng.uniform(0.5, 2.5, N), dtype=torch.float32)
    present = torch.tensor(rng.random(N) < 0.5)
    images = torch.where(present, 1.0, -1.0)[:, None, None, None].expand(N, 3, 8, 8).clone()
    prompt = torch.arange(N)[:, None]
    return PriorOnlyVLM(priors), images, prompt, present


def false_yes(method: D.Method, seed: int = 0) -> tuple[float, float]:
    """(false-yes rate on negatives, recall on positives) of ``method`` on the fixture."""
    vlm, images, prompt, present = _fixture(seed)
    res = D.generate(vlm.encode, vlm, images, prompt, method, qtypes=["existence"] * N, max_new=1, seed=seed)
    said_yes = torch.tensor([bool(t) and t[0] == YES for t in res.tokens])
    return float(said_yes[~present].float().mean()), float(said_yes[present].float().mean())


def test_vcd_lowers_false_yes_where_the_prior_alone_hallucinates():
    m = D.methods()
    greedy_fy, greedy_rec = false_yes(m["greedy"])
    vcd_fy, vcd_rec = false_yes(m["vcd"])
    assert greedy_fy > 0.6  # the prior alone makes greedy hallucinate
    assert vcd_fy <= greedy_fy - 0.30
    assert vcd_rec >= greedy_rec - 0.01  # and it does not do it by saying "no" to everything
    # SAT-only uses the same noise augmentation: the same known answer
    assert false_yes(m["sat_only"])[0] <= greedy_fy - 0.30


def test_sabotage_identity_augmentation_is_caught():
    greedy_fy, _ = false_yes(D.methods()["greedy"])
    identity = D.Method("identity", "identity", beta=0.1)
    assert false_yes(identity)[0] > greedy_fy - 0.30  # no contrast left: the known answer's margin is lost


def test_sabotage_subtracting_clean_logits_is_caught(monkeypatch):
    greedy_fy, _ = false_yes(D.methods()["greedy"])
    monkeypatch.setattr(D, "contrastive_logits", lambda clean, aug, alpha: (1 + alpha) * clean - alpha * clean)
    assert false_yes(D.methods()["vcd"])[0] > greedy_fy - 0.30


@pytest.mark.parametrize("name", ["vcd", "vacode", "selfaug", "sas_only", "sat_only"])
def test_alpha_zero_is_greedy_on_the_fixture(name):
    vlm, images, prompt, _ = _fixture(1)
    greedy = D.generate(vlm.encode, vlm, images, prompt, D.methods()["greedy"], qtypes=["existence"] * N)
    other = D.generate(vlm.encode, vlm, images, prompt, D.methods(alpha=0.0)[name], qtypes=["existence"] * N)
    assert other.tokens == greedy.tokens
