"""Conversational memory retrieval: embedders, the meeting-memory generator, baselines, AssoMem, IR metrics.

Framework-free (no Prefect, DVC or MLflow). ``components.retrieval.assomem`` holds the paper's method;
``baselines`` the dense flat, BM25, recency and topic-grouping retrievers it is compared with.
"""
