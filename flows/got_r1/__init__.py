"""got-r1: GoT-R1: RL for semantic-spatial reasoning in autoregressive image generation.

Rendered by ``paperline new got-r1`` as a working skeleton (a toy estimator claim); replace the toy method,
data and claims with the paper's (card: `../shared/papers/10-got-r1.md`).
"""
