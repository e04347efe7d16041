"""cdra's method and baselines (framework-free: no Prefect, MLflow, DVC or flows imports)."""
