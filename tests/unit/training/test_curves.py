"""The plateau measure the DKA and MILCO reports use to say whether training stopped moving."""

import math

from components.training.curves import plateau


def test_a_flat_tail_is_zero_and_a_falling_one_is_its_relative_drop():
    assert plateau([5.0, 4.0, 3.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0]) == 0.0
    # last 2 of 10 average 1.5, the 2 before 3.5: (3.5 - 1.5) / 3.5
    assert plateau([9, 8, 7, 6, 5, 4, 4, 3, 2, 1]) == (3.5 - 1.5) / 3.5
    assert math.isnan(plateau([1.0]))


def test_stable_plateau_leaves_out_the_cooldown():
    from components.training.curves import stable_plateau

    steps = [10 * (k + 1) for k in range(100)]
    flat = [2.0] * 90 + [1.5] * 10  # flat stable phase, then the cooldown's drop (the last 10%)
    assert stable_plateau(steps, flat, cooldown_frac=0.1) == 0.0
    assert plateau(flat) > 0.1  # counted over the whole curve, the cooldown looks like learning
    # order of the points does not matter (steps sort them)
    assert stable_plateau(steps[::-1], flat[::-1], cooldown_frac=0.1) == 0.0
