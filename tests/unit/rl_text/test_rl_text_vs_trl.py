"""Our per-token GRPO loss against TRL's own ``GRPOTrainer._compute_loss`` on one batch, for each aggregation;
group advantages against TRL's formula and closed forms; sampling is seeded and respects eos."""

from __future__ import annotations

from collections import defaultdict
from types import SimpleNamespace

import pytest
import torch

from components.rl_text import advantages as A
from components.rl_text import loss as L


class _Acc:  # a single-process stand-in for accelerate's Accelerator (gather/reduce are identities there)
    num_processes = 1
    sync_gradients = True

    def gather(self, x):
        return x

    gather_for_metrics = gather

    def reduce(self, x, reduction="sum"):
        return x


def _trl_loss(loss_type, logps, old, ref, adv, mask, beta, eps_low, eps_high, max_len):
    trl = pytest.importorskip("trl.trainer.grpo_trainer")
    t = trl.GRPOTrainer.__new__(trl.GRPOTrainer)
    t.__dict__.update(
        dict(
            loss_type=loss_type,
            beta=beta,
            epsilon_low=eps_low,
            epsilon_high=eps_high,
            top_entropy_quantile=1.0,
            off_policy_mask_threshold=None,
            importance_sampling_level="token",
            use_vllm=False,
            aux_loss_enabled=False,
            _entropy_bonus_enabled=False,
            max_completion_length=max_len,
            current_gradient_accumulation_steps=1,
            accelerator=_Acc(),
            _metrics={"train": defaultdict(list)},
            model=SimpleNamespace(training=True),
            args=SimpleNamespace(delta=None, use_bias_correction_kl=False, vllm_importance_sampling_correction=False),
        )
    )
    t._get_per_token_logps_and_entropies = lambda *a, **k: (logps, torch.zeros_like(logps), None)
    b, tt = mask.shape
    inputs = {
        "prompt_ids": torch.zeros(b, 3, dtype=torch.long),
        "prompt_mask": torch.ones(b, 3),
        "completion_ids": torch.zeros(b, tt, dtype=torch.long),
        "completion_mask": mask,
        "advantages": adv,
        "old_per_token_logps": old,
        "ref_per_token_logps": ref,
        "num_items_in_batch": mask.sum(),
    }
    return t._compute_loss(None, inputs)


@pytest.mark.parametrize(
    "how,trl_type", [("seq_mean", "grpo"), ("token_mean", "bnpo"), ("constant", "dr_grpo"), ("prompt_mean", "dr_grpo")]
)
@pytest.mark.parametrize("beta", [0.0, 0.04])
def test_loss_matches_trl(how, trl_type, beta):
    g = torch.Generator().manual_seed(0)
    b, t = 12, 7
    logps = (-torch.rand(b, t, generator=g) * 3).requires_grad_(True)
    old = logps.detach() + 0.3 * torch.randn(b, t, generator=g)  # ratios off 1 so that the clip bites
    ref = logps.detach() + 0.2 * torch.randn(b, t, generator=g)
    mask = (torch.arange(t).unsqueeze(0) < torch.randint(1, t + 1, (b, 1), generator=g)).float()
    adv = torch.randn(b, generator=g)
    groups = torch.arange(b) // 4  # equal groups: prompt_mean must equal dr_grpo
    ours = L.aggregate(
        L.per_token_loss(logps, old, ref, adv, eps_low=0.2, eps_high=0.28, beta=beta)[0],
        mask,
        how=how,
        max_len=t,
        groups=groups,
    )
    theirs = _trl_loss(trl_type, logps, old, ref, adv, mask, beta, 0.2, 0.28, t)
    assert torch.allclose(ours, theirs, atol=1e-6), (float(ours), float(theirs))
    (g1,) = torch.autograd.grad(ours, logps, retain_graph=True)
    (g2,) = torch.autograd.grad(theirs, logps)
    assert torch.allclose(g1, g2, atol=1e-7)


def test_grpo_advantages_match_trl_formula_and_closed_forms():
    g = torch.Generator().manual_seed(1)
    r = torch.randint(0, 2, (4, 6), generator=g).double()
    trl_adv = (r - r.mean(1, keepdim=True)) / (r.std(1, keepdim=True) + 1e-4)  # TRL: nanstd is Bessel-corrected
    groups = torch.arange(4).repeat_interleave(6)
    assert torch.allclose(A.group_advantages(r.flatten(), groups, "grpo").double(), trl_adv.flatten(), atol=1e-5)
    # variable sizes, shuffled membership: closed forms per group
    rewards = torch.tensor([1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 5.0])
    grp = torch.tensor([0, 0, 1, 0, 1, 1, 2])  # sizes 3, 3, 1
    dr = A.group_advantages(rewards, grp, "drgrpo")
    assert torch.allclose(dr, torch.tensor([1 / 3, -2 / 3, -1 / 3, 1 / 3, 2 / 3, -1 / 3, 0.0]), atol=1e-6)
    rloo = A.group_advantages(rewards, grp, "rloo")
    assert torch.allclose(rloo, torch.tensor([0.5, -1.0, -0.5, 0.5, 1.0, -0.5, 0.0]), atol=1e-6)
    assert torch.allclose(rloo[:6], dr[:6] * 3 / 2, atol=1e-6)  # RLOO = n/(n-1) * Dr.GRPO


def test_prompt_mean_weights_prompts_equally_with_variable_groups():
    loss = torch.tensor([[1.0], [1.0], [1.0], [4.0]])
    mask = torch.ones(4, 1)
    groups = torch.tensor([0, 0, 0, 1])
    assert float(L.aggregate(loss, mask, how="prompt_mean", max_len=1, groups=groups)) == pytest.approx(2.5)
    assert float(L.aggregate(loss, mask, how="constant", max_len=1)) == pytest.approx(7 / 4)


def test_sampling_is_seeded_and_masks_after_eos():
    from components.models.tiny_lm import TinyLM, TinyLMConfig
    from components.rl_text.sampling import completion_logps, sample

    model = TinyLM(TinyLMConfig(vocab_size=6, d_model=16, n_layers=1, n_heads=2, d_ff=32, max_seq_len=32), seed=0)
    prompts = [[1, 2], [3, 4, 5, 1]]  # different lengths in one batch
    a = sample(model, prompts, [3, 2], max_new=6, eos=5, generator=torch.Generator().manual_seed(7))
    b = sample(model, prompts, [3, 2], max_new=6, eos=5, generator=torch.Generator().manual_seed(7))
    assert torch.equal(a.completions, b.completions) and a.prompt_index.tolist() == [0, 0, 0, 1, 1]
    for c, m in zip(a.completions, a.mask):
        n = int(m.sum())
        assert (c[: n - 1] != 5).all() and (m[:n] == 1).all() and (m[n:] == 0).all()
    # log-probs from the batched right-padded forward equal a one-row forward
    lp = completion_logps(model, a)
    row = 4
    x = torch.tensor([prompts[1] + a.completions[row].tolist()])
    ref = torch.log_softmax(model(x)[0][0, len(prompts[1]) - 1 : -1], -1).gather(1, a.completions[row : row + 1].T)
    n = int(a.mask[row].sum())
    assert torch.allclose(lp[row, :n], ref[:n, 0], atol=1e-5)


def test_cached_sampling_draws_the_same_completions_as_rereading_the_buffer():
    """TinyLM samples through its key-value cache; a model without one rereads the whole buffer each step.
    Same seed, same prompts of different lengths: the same completions and masks."""
    from components.models.tiny_lm import TinyLM, TinyLMConfig
    from components.rl_text.sampling import sample

    model = TinyLM(
        TinyLMConfig(vocab_size=12, d_model=32, n_layers=2, n_heads=2, d_ff=64, max_seq_len=32), seed=3
    ).eval()

    class NoCache(torch.nn.Module):  # the same weights, seen as a model without prefill/step
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return self.inner(x)

    prompts = [[1, 2, 3], [4, 5, 6, 7, 8, 9], [3], [2, 2, 2, 2]]
    for temperature in (1.0, 0.0):
        a, b = (
            sample(
                m,
                prompts,
                [3, 2, 4, 1],
                max_new=10,
                eos=11,
                temperature=temperature,
                generator=torch.Generator().manual_seed(5),
            )
            for m in (model, NoCache(model))
        )
        assert torch.equal(a.completions, b.completions) and torch.equal(a.mask, b.mask)
