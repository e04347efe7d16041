"""ebt: Energy-Based Transformers: System 2 thinking from unsupervised learning.

Rendered by ``paperline new ebt`` as a working skeleton (a toy estimator claim); replace the toy method,
data and claims with the paper's (card: ``../shared/papers/05-ebt.md``).
"""
