"""Prefect flows for paperline: one module per paper plus the shared runtime.

Importing this package is cheap; heavy modules (Prefect, MLflow, torch) are
imported only where a flow runs.
"""
