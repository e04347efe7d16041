"""Reward-free backdoors through simulator dynamics (Daze) and the reward-poisoning baselines it is compared with.

The threat model is in the types: a :class:`~components.backdoor.simulators.Simulator` is dynamics only
(``reset`` -> observation, ``step(action)`` -> observation, no reward, no termination); the victim's training
code owns the reward and termination (:mod:`components.backdoor.victim`). The Daze wrapper
(:mod:`components.backdoor.daze`) is a Simulator wrapping a Simulator, so it never holds a reward function.
Framework-free: no Prefect, MLflow, DVC or flows imports.
"""
