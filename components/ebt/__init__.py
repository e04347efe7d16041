"""Energy-Based Transformers (Gladstone et al., ICLR 2026) for character-level language modelling.

One module per piece, framework-free (no Prefect, MLflow, DVC or flows imports):
- ``energy_model``: the energy transformer E(x, y_hat) with predicted embeddings Linear(softmax(y_hat));
- ``optimise``: prediction as gradient descent on y_hat with a learnable step size (second order in training);
- ``tricks``: the System-2 training tricks (randomised step size and count, Langevin noise, replay buffer);
- ``training``: the EBT training loop (the Transformer++ baseline trains with ``components.training.lm_trainer``);
- ``inference``: thinking longer (more steps than training) and best-of-N minimum-energy self-verification;
- ``chars``: the fixed character vocabulary; ``flops``: FLOPs per token of both models (torch's FlopCounterMode).
"""
