"""medgmae: MedGMAE: masked autoencoding that reconstructs 3D Gaussians instead of voxels.

Rendered by ``paperline new medgmae`` as a working skeleton (a toy estimator claim); replace the toy method,
data and claims with the paper's (card: `../shared/papers/16-medgmae.md`).
"""
