"""assomem: associative memory graph retrieval (AssoMem) vs dense, BM25, recency and topic grouping."""
