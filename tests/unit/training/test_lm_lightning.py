"""LitLM: the Lightning path trains the same model on CPU."""

import numpy as np
import pytest
import torch

from components.models.tiny_lm import TinyLM, TinyLMConfig
from components.training.lm_trainer import sample_batch

CFG = TinyLMConfig(vocab_size=64, d_model=32, n_layers=1, n_heads=2, d_ff=96, max_seq_len=16)


@pytest.mark.slow  # `import lightning` alone takes ~11 s
def test_two_training_steps_run_on_cpu():
    import lightning as L

    from components.training.lightning_lm import LitLM, RandomWindows

    tokens = np.random.default_rng(0).integers(0, 64, size=2000).astype(np.uint16)
    model = TinyLM(CFG, seed=0)
    before = model.embed.weight.detach().clone()
    lit = LitLM(model, peak_lr=1e-2, warmup_steps=4, decay_start=10, decay_steps=2)
    data = RandomWindows(tokens, steps=5, batch_size=4, seq_len=16, seed=0)
    x0, _ = next(iter(data))
    assert torch.equal(x0, sample_batch(tokens, step=0, seed=0, batch_size=4, seq_len=16)[0])
    trainer = L.Trainer(
        max_steps=2,
        accelerator="cpu",
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(lit, data.loader())
    assert trainer.global_step == 2
    assert not torch.equal(model.embed.weight, before)  # the wrapped model itself was trained
    assert torch.isfinite(trainer.callback_metrics["train_loss"])
    # the schedule advances per optimizer step: after 2 steps the rate is wsd_lr(2) = 3/4 of the peak
    assert trainer.optimizers[0].param_groups[0]["lr"] == pytest.approx(7.5e-3)
