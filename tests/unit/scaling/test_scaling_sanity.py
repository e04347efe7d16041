"""Degenerate scaling-law fits are flagged, sensible ones are not."""

import pytest

from components.scaling.sanity import fit_flags

CHINCHILLA = {"A": 406.4, "B": 410.7, "E": 1.69, "alpha": 0.34, "beta": 0.28}


def test_a_published_law_has_no_flags():
    assert fit_flags("raw", CHINCHILLA) == []


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        ({"alpha": 101.0, "A": 1e229}, ["alpha = 101", "A = 1e+229"]),
        ({"E": 0.0}, ["E = 0 at its lower bound"]),
        ({"beta": -0.1}, ["beta = -0.1"]),
        ({"B": float("inf")}, ["B is not finite"]),
    ],
)
def test_degenerate_fits_are_flagged_with_the_value(edit, words):
    flags = fit_flags("dedup", {**CHINCHILLA, **edit})
    assert len(flags) == len(words)
    for w in words:
        assert any(w in f and f.startswith("dedup:") for f in flags), (w, flags)
