"""daze: Daze, reward-free backdoors implanted through malicious simulator dynamics (card 15).

Stages: train (PPO agents per env, method and seed: clean, Daze, TrojDRL-style) -> evaluate (benign return and
attack success, clean and perturbed simulators) -> report (claims 1-4). Methods live in ``components.backdoor``.
"""
