"""Framework-free building blocks shared by the paperline pipelines.

Nothing in this package imports Prefect, DVC or MLflow: a method here can be
imported and used on its own by anyone reproducing a paper.
"""
