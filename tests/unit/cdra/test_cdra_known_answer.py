"""Known answer for cdra's method, and the sabotage a reviewer would try.

On samples whose outliers are a known share, a trimmed mean that cuts at least that share recovers the centre
while the sample mean is pulled by about share x shift; with the trimming switched off (the method replaced by
its baseline) the same check must fail.
"""

from __future__ import annotations

import numpy as np
import pytest

from components.cdra.method import baseline, method


def _contaminated(seed: int, n: int = 400, share: float = 0.1, shift: float = 8.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.normal(0.0, 1.0, n)
    x[: int(share * n)] += shift
    return x


def _recovers_centre(estimate) -> bool:
    return all(abs(estimate(_contaminated(s))) < 0.3 for s in range(5))


def test_method_recovers_the_centre_where_the_mean_cannot():
    assert _recovers_centre(lambda x: method(x, 0.2))
    assert not _recovers_centre(baseline)
    assert abs(baseline(_contaminated(0)) - 0.8) < 0.3  # the mean is pulled by share x shift


def test_sabotage_without_trimming_is_caught():
    sabotaged = lambda x: method(x, 0.0)  # noqa: E731 - the method with its mechanism switched off
    assert sabotaged(_contaminated(1)) == pytest.approx(baseline(_contaminated(1)))
    assert not _recovers_centre(sabotaged)
