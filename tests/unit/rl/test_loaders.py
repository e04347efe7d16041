"""Paper-scale loaders: the Minari episode layout converts to transitions (offline fixture); offline fails clearly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from components.errors import DataError, OfflineError
from components.rl.checks import validate_transitions
from components.rl.loaders import collect_sac, load_minari, minari_to_transitions

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures/icql/minari_episodes.json"


def test_minari_layout_to_transitions():
    eps = json.loads(FIXTURE.read_text())["episodes"]
    data = minari_to_transitions(eps)
    assert len(data) == 7 and data.obs_dim == 5 and data.act_dim == 2  # desired_goal (2) + observation (3)
    first = eps[0]["observations"]
    assert np.allclose(data.observations[0], first["desired_goal"][0] + first["observation"][0])
    assert np.allclose(data.next_observations[3], first["desired_goal"][4] + first["observation"][4])
    assert data.terminals.tolist() == [False, False, False, True, False, False, False]
    assert data.timeouts.tolist()[-1] is True
    validate_transitions(data, name="minari-fixture")


def test_minari_layout_with_wrong_observation_count():
    eps = json.loads(FIXTURE.read_text())["episodes"]
    eps[1]["observations"]["observation"] = eps[1]["observations"]["observation"][:-1]
    eps[1]["observations"]["desired_goal"] = eps[1]["observations"]["desired_goal"][:-1]
    with pytest.raises(DataError, match="episode 1: observations has 3 rows, expected rewards \\+ 1 = 4"):
        minari_to_transitions(eps)


def test_offline_loaders_refuse_with_the_switch_named():
    with pytest.raises(OfflineError, match="PAPERLINE_ONLINE"):
        load_minari("D4RL/kitchen/complete-v2", online=False)
    with pytest.raises(OfflineError, match="PAPERLINE_ONLINE"):
        collect_sac("HalfCheetah-v5", train_steps=10, episodes=1, seed=0, online=False)
