"""Offline RL building blocks: the kitchen-lite environment, offline datasets, BC / TD3+BC / IQL and ICQL.

Framework-free (no Prefect, DVC or MLflow). BC, TD3+BC and IQL are compact
implementations rather than d3rlpy: d3rlpy 2.8.1 pins ``gymnasium==1.0.0`` (this
project uses 1.4.0) and pulls the legacy ``gym``, and ICQL needs to swap IQL's
critic for an in-context one, which d3rlpy's algorithm classes do not expose.
"""
