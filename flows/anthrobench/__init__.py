"""anthrobench: AnthroBench: multi-turn evaluation of anthropomorphic LLM behaviours.

Rendered by ``paperline new anthrobench`` as a working skeleton (a toy estimator claim); replace the toy method,
data and claims with the paper's (card: `../shared/papers/07-anthrobench.md`).
"""
