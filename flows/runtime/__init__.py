"""Shared runtime of the flows: settings, params, tracking, stages, Prefect server."""
