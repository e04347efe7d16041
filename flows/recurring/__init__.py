"""Recurring evaluation: re-evaluate each paper's ``@champion`` model on a schedule and catch regressions."""
