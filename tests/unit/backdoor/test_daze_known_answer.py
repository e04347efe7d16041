"""Known answer for daze: on a small chain task where Algorithm 1 must work, a learner that only ever sees the
clean reward learns to play a+ on triggered states, and a clean learner does not.

The fixture: positions 0..4, start in the middle, a random drift each step, the ends terminate; the victim's
reward is +1 per surviving step. Tabular n-step Q-learning is the victim (it reads only the VictimEnv's rewards). With
the real DazeSimulator, the greedy action on triggered states is a+ in >= 90% of them on every seed, at least
0.3 above a clean learner's rate (whose triggered states were never trained). Sabotage: flipping the null/daze
decision (a sign) or replacing L_adv by noise (its key signal) must break the same check.
"""

from __future__ import annotations

import functools

import gymnasium as gym
import numpy as np
import pytest

import components.backdoor.daze as daze_mod
from components.backdoor.daze import DazeSimulator
from components.backdoor.simulators import Simulator, with_channel
from components.backdoor.victim import Task, VictimEnv

N, TARGET = 5, 0


class ChainSim(Simulator):
    """Dynamics only: move left/right/stay, then drift one cell with probability 0.3."""

    def __init__(self, seed: int = 0):
        self.action_space = gym.spaces.Discrete(3)
        self.observation_space = gym.spaces.Box(0.0, float(N), (2,), np.float32)
        self.rng, self.pos = np.random.default_rng(seed), N // 2

    def reset(self, seed=None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.pos = N // 2
        return with_channel([self.pos], 0.0)

    def step(self, action):
        self.sim_steps += 1
        self.pos += (-1, 1, 0)[int(action)]
        if self.rng.random() < 0.3:
            self.pos += int(self.rng.choice([-1, 1]))
        self.pos = int(np.clip(self.pos, 0, N - 1))
        return with_channel([self.pos], 0.0)


CHAIN = Task("chain", lambda s, a, s2: 1.0, lambda s2: bool(s2[0] in (0, N - 1)), 40)


def q_learn(env: gym.Env, seed: int, steps: int = 6_000, n: int = 8) -> np.ndarray:
    """Tabular epsilon-greedy n-step Q-learning over (position, trigger channel); small random init breaks ties.

    Multi-step returns matter: phi(s) = s is unmarked, so a daze's cost shows only in the rewards after it (PPO's
    GAE sees them the same way); a one-step learner would credit the random steps to the states they pass.
    """
    rng = np.random.default_rng(seed)
    q = rng.normal(0, 0.01, (N, 2, 3))
    obs, _ = env.reset(seed=seed)
    trace: list[tuple[tuple, int, float]] = []
    for _ in range(steps):
        s = (int(obs[0]), int(obs[1]))
        a = int(rng.integers(3)) if rng.random() < 0.2 else int(q[s].argmax())
        nxt, r, term, trunc, _ = env.step(a)
        trace.append((s, a, r))
        s2 = (int(nxt[0]), int(nxt[1]))
        done = term or trunc
        while trace and (len(trace) >= n or done):
            g = sum(0.95**i * x[2] for i, x in enumerate(trace))
            if not term:
                g += 0.95 ** len(trace) * q[s2].max()
            (s0, a0, _) = trace.pop(0)
            q[s0 + (a0,)] += 0.2 * (g - q[s0 + (a0,)])
            if not done:
                break
        obs = env.reset()[0] if done else nxt
    return q


def asr(q: np.ndarray) -> float:
    """Share of interior triggered states whose greedy action is a+."""
    return float(np.mean([q[pos, 1].argmax() == TARGET for pos in range(1, N - 1)]))


SEEDS = (0, 1, 2)


@functools.lru_cache(maxsize=1)
def clean_rates() -> tuple[float, ...]:
    return tuple(asr(q_learn(VictimEnv(ChainSim(s), CHAIN), s)) for s in SEEDS)


def rates() -> tuple[list[float], list[float]]:
    daze = [
        asr(q_learn(VictimEnv(DazeSimulator(ChainSim(s), beta=0.2, target=TARGET, tau=0.5, k=6, seed=s), CHAIN), s))
        for s in SEEDS
    ]
    return daze, list(clean_rates())


def known_answer_holds(daze: list[float], clean: list[float]) -> bool:
    return min(daze) >= 0.9 and np.mean(daze) - np.mean(clean) >= 0.3


def test_daze_plants_the_backdoor_where_a_clean_learner_has_none():
    daze, clean = rates()
    assert known_answer_holds(daze, clean), (daze, clean)


@pytest.mark.parametrize("sabotage", ["flip the null/daze decision", "L_adv replaced by noise"])
def test_sabotaged_daze_fails_the_known_answer(monkeypatch, sabotage):
    real = daze_mod.l_adv
    noise = np.random.default_rng(5)
    broken = (
        (lambda space, a, t: 1.0 - real(space, a, t))
        if sabotage.startswith("flip")
        else (lambda space, a, t: float(noise.random() < 0.5))
    )
    monkeypatch.setattr(daze_mod, "l_adv", broken)
    daze, clean = rates()
    assert not known_answer_holds(daze, clean), (sabotage, daze, clean)
