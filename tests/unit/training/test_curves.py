"""The plateau measure the DKA and MILCO reports use to say whether training stopped moving."""

import math

from components.training.curves import plateau


def test_a_flat_tail_is_zero_and_a_falling_one_is_its_relative_drop():
    assert plateau([5.0, 4.0, 3.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0]) == 0.0
    # last 2 of 10 average 1.5, the 2 before 3.5: (3.5 - 1.5) / 3.5
    assert plateau([9, 8, 7, 6, 5, 4, 4, 3, 2, 1]) == (3.5 - 1.5) / 3.5
    assert math.isnan(plateau([1.0]))
