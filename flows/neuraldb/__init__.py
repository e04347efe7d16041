"""The neuraldb pipeline: knowledge editing at thousands of facts, MEMIT and AlphaEdit against NeuralDB.

Stages (see flows/neuraldb/spec.py): data → train → edit → report. Each stage module holds a thin
``run(ctx)`` that calls ``components.editing``; no algorithm lives here.
"""
