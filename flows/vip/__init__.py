"""vip: VIP: variance-informed predictive rollout allocation for group RL.

Rendered by ``paperline new vip`` as a working skeleton (a toy estimator claim); replace the toy method,
data and claims with the paper's (card: ``../shared/papers/14-vip.md``).
"""
