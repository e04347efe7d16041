"""Graph outlier detection: graphs, outlier injection, weighted GCNs, CER-GOD and its baselines (framework-free)."""
