"""AssoMem (associative memory graph retrieval) as small modules.

clues (extract + merge) -> graph (clue-utterance graph) -> importance (personalised PageRank) ->
temporal (time alignment) -> fusion (quantile bins, conditional-MI weights) -> retriever (candidates + scoring).
"""
