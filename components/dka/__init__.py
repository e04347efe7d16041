"""DKA (dual-kernel adapter) and its baselines on a tiny ViT, the MNI152 lesion task, the ERF tool
(framework-free: no Prefect, MLflow, DVC or flows imports)."""
