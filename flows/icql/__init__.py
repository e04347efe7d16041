"""icql: in-context compositional Q-learning (ICQL) against IQL, TD3+BC and BC on kitchen-lite datasets."""
