"""implicit-planning: "What's the plan?": steering-based metrics for implicit planning in LMs.

Rendered by ``paperline new implicit-planning`` as a working skeleton (a toy estimator claim); replace the toy method,
data and claims with the paper's (card: `../shared/papers/18-implicit-planning.md`).
"""
