"""Interpretability utilities shared by pipelines: residual-stream hooks (read / add at chosen layers and positions)."""
