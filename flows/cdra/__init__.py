"""cdra: CDRA: critique-driven reasoning alignment with a personalised generative PRM.

Rendered by ``paperline new cdra`` as a working skeleton (a toy estimator claim); replace the toy method,
data and claims with the paper's (card: `../shared/papers/09-cdra.md`).
"""
