"""daze: Daze: reward-free backdoors implanted through malicious simulator dynamics.

Rendered by ``paperline new daze`` as a working skeleton (a toy estimator claim); replace the toy method,
data and claims with the paper's (card: ``../shared/papers/15-daze.md``).
"""
