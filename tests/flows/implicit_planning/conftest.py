"""The positive control model the champion test re-evaluates (the unit tests' model:
``tests/implicit_planning_models.py``)."""

from __future__ import annotations

import pytest

from tests import implicit_planning_models as models


@pytest.fixture(scope="session")
def positive():
    return models.positive()
