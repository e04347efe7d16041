"""The trained control models shared by the implicit-planning unit tests (trained once per process:
``tests/implicit_planning_models.py``)."""

from __future__ import annotations

import pytest

from tests import implicit_planning_models as models


@pytest.fixture(scope="session")
def positive():
    return models.positive()


@pytest.fixture(scope="session")
def negative():
    return models.negative()
