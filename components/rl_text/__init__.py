"""GRPO-family trainer for text policies: variable-size groups, token-level advantages, clipped ratio + KL.

Modules: ``advantages`` (GRPO / Dr.GRPO / RLOO within groups of any size), ``loss`` (the clipped per-token
policy loss with a k3 KL to a frozen reference, TRL-compatible aggregations), ``sampling`` (seeded batched
sampling of variable-length prompts from a causal LM), ``trainer`` (one update step that ties them together).
Framework-free: no Prefect, DVC or MLflow.
"""

ADVANTAGES = ("grpo", "drgrpo", "rloo")  # the kinds ``advantages.group_advantages`` computes (here: no torch import)
