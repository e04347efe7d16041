"""Knowledge editing at one MLP layer: MEMIT, AlphaEdit and NeuralDB, plus the CounterFact-style harness.

Modules: ``facts`` (synthetic fact generator, edit sets, CounterFact/ZsRE loaders), ``model`` (locating the
edited projection, keys, log-probabilities), ``targets`` (MEMIT-style target values by optimising a residual),
``memit``, ``alphaedit``, ``neuraldb`` (one module per method), ``apply`` (one entry point per method),
``metrics`` (efficacy, generalisation, specificity, fluency, perplexity).
"""
