"""selfaug-decoding: Self-Aug: query-aligned visual contrastive decoding with entropy-adaptive thresholding.

Rendered by ``paperline new selfaug-decoding`` as a working skeleton (a toy estimator claim); replace the toy method,
data and claims with the paper's (card: `../shared/papers/17-selfaug-decoding.md`).
"""
