"""dka: Dual-Kernel Adapter: widening the receptive field for low-data medical adaptation.

Rendered by ``paperline new dka`` as a working skeleton (a toy estimator claim); replace the toy method,
data and claims with the paper's (card: ``../shared/papers/13-dka.md``).
"""
