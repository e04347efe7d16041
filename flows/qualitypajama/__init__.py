"""The qualitypajama pipeline: how dedup, filtering and rewriting move scaling-law parameters.

Stages (see flows/qualitypajama/spec.py): corpus → curate, rewrite → tokenize → train → fit → report.
Each stage module holds a thin ``run(ctx)`` that calls components; no algorithm lives here.
"""
