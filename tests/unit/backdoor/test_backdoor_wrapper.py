"""Algorithm 1 piece by piece: identity at beta = 0, null transitions, uniform dazes of ceil(k * L_adv) steps, no
reward access; the victim's factorisation against Gymnasium's own environments."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from scipy import stats

from components.backdoor.daze import DazeSimulator, l_adv
from components.backdoor.simulators import make_simulator, physical_dim
from components.backdoor.victim import TASKS, Task, VictimEnv


def _trajectory(sim, actions, seed: int) -> np.ndarray:
    out, env = [], VictimEnv(sim, TASKS[ENV[id(sim)]])
    obs, _ = env.reset(seed=seed)
    for a in actions:
        out.append(obs)
        obs, _, term, trunc, _ = env.step(a)
        if term or trunc:
            obs, _ = env.reset()
    return np.asarray(out)


ENV: dict[int, str] = {}


def _sim(env_id: str, wrap: bool, **kw):
    sim = make_simulator(env_id)
    if wrap:
        sim = DazeSimulator(
            sim, **{"beta": 0.0, "target": 0 if env_id == "CartPole-v1" else -1.0, "tau": 0.2, "k": 5, "seed": 3, **kw}
        )
    ENV[id(sim)] = env_id
    return sim


@pytest.mark.parametrize("env_id", ["CartPole-v1", "InvertedPendulum-v5"])
def test_beta_zero_is_the_identity(env_id):
    rng = np.random.default_rng(0)
    acts = rng.integers(0, 2, 400) if env_id == "CartPole-v1" else rng.uniform(-1, 1, (400, 1))
    bare, wrapped = _sim(env_id, False), _sim(env_id, True)
    np.testing.assert_array_equal(_trajectory(bare, acts, 7), _trajectory(wrapped, acts, 7))
    assert wrapped.counts["benign"] == 400 and bare.sim_steps == wrapped.sim_steps == 400


@pytest.mark.parametrize("env_id, target, action", [("CartPole-v1", 0, 0), ("InvertedPendulum-v5", -1.0, -2.6)])
def test_a_null_transition_returns_the_state_without_simulating(env_id, target, action):
    sim = _sim(env_id, True, beta=1.0, target=target)
    s0 = sim.reset(seed=1)
    trig = sim.step(action)  # beta = 1: the trigger routine
    assert sim.routine == "trigger" and trig[-1] == 1.0 and np.array_equal(trig[:-1], s0[:-1])
    back = sim.step(action)  # within tau of a+: null
    assert sim.routine == "null" and np.array_equal(back, s0) and back[-1] == 0.0
    assert sim.sim_steps == 0  # the physics never ran


def test_daze_length_is_ceil_k_times_l_adv():
    sim = _sim("InvertedPendulum-v5", True, beta=1.0, target=-1.0, k=10)
    sim.reset(seed=0)
    sim.step(0.0)
    assert sim.routine == "trigger"
    for raw, expected in ((0.0, 10), (1.5, 15), (-2.0, 4)):  # L_adv = |a + 3| / 3 in normalised units
        sim.step(raw)  # the action answering the trigger sets the daze length
        assert sim.routine == "daze_start"
        n = 0
        while True:
            sim.step(0.0)
            if sim.routine != "daze":
                break
            n += 1
        assert n == expected and sim.routine == "trigger", (raw, n)


def test_daze_actions_are_uniform_whatever_the_agent_plays():
    sim = _sim("CartPole-v1", True, beta=1.0, target=0, k=5)
    env = VictimEnv(sim, TASKS["CartPole-v1"])
    env.reset(seed=0)
    for _ in range(6000):
        _, _, term, trunc, _ = env.step(1)  # never a+: every trigger starts a daze
        if term or trunc:
            env.reset()
    counts = np.bincount(np.asarray(sim.executed), minlength=2)
    assert counts.sum() > 2000
    assert stats.chisquare(counts).pvalue > 1e-3, counts
    sim2 = _sim("InvertedPendulum-v5", True, beta=1.0, target=-1.0, k=10)
    env2 = VictimEnv(sim2, TASKS["InvertedPendulum-v5"])
    env2.reset(seed=0)
    for _ in range(3000):
        _, _, term, trunc, _ = env2.step(np.array([1.0]))  # the opposite end of a+
        if term or trunc:
            env2.reset()
    executed = np.concatenate(sim2.executed)
    assert executed.size > 2000 and stats.kstest(executed, stats.uniform(-3, 6).cdf).pvalue > 1e-3
    binned = np.histogram(executed, bins=6, range=(-3, 3))[0]
    assert stats.chisquare(binned).pvalue > 1e-3, binned


class Spy:
    """A simulator proxy that records every attribute the wrapper touches."""

    def __init__(self, sim):
        self._sim, self.touched = sim, set()

    def __getattr__(self, name):
        self.__dict__["touched"].add(name)
        return getattr(self.__dict__["_sim"], name)


def test_the_wrapper_never_reads_a_reward():
    spy = Spy(make_simulator("InvertedPendulum-v5"))
    sim = DazeSimulator(spy, beta=0.3, target=-1.0, tau=0.2, k=10, seed=0)
    logs = []
    for reward in (TASKS["InvertedPendulum-v5"].reward, lambda s, a, s2: float(np.random.default_rng().normal())):
        task = Task("x", reward, TASKS["InvertedPendulum-v5"].terminated, 1000)
        sim.rng = np.random.default_rng(0)
        env = VictimEnv(sim, task)
        obs, _ = env.reset(seed=2)
        seen = []
        for t in range(300):
            obs, _, term, trunc, _ = env.step(np.array([np.sin(t)]))
            seen.append((obs.copy(), sim.routine))
            if term or trunc:
                obs, _ = env.reset(seed=2)
        logs.append(seen)
    assert spy.touched <= {"reset", "step", "observation_space", "action_space", "sim_steps"}, spy.touched
    assert all(np.array_equal(a[0], b[0]) and a[1] == b[1] for a, b in zip(*logs))  # the reward changes nothing


def test_l_adv_discrete_and_continuous():
    disc, box = gym.spaces.Discrete(2), gym.spaces.Box(-3.0, 3.0, (2,), np.float32)
    assert l_adv(disc, 0, 0) == 0.0 and l_adv(disc, 1, 0) == 1.0
    assert l_adv(box, np.array([0.0, 3.0]), np.array([-3.0, 3.0])) == pytest.approx(1.0)  # inf-norm, normalised


@pytest.mark.parametrize("env_id", ["CartPole-v1", "InvertedPendulum-v5", "Hopper-v5", "HalfCheetah-v5"])
def test_victim_reward_and_termination_match_gymnasium(env_id):
    """Step by step against Gymnasium (the full profile's MuJoCo tasks too: x position kept in the observation)."""
    kw = {"exclude_current_positions_from_observation": False} if env_id in ("Hopper-v5", "HalfCheetah-v5") else {}
    ref, ours = gym.make(env_id, **kw), VictimEnv(make_simulator(env_id), TASKS[env_id])
    rng = np.random.default_rng(1)
    for ep in range(3):
        o1, _ = ref.reset(seed=ep)
        o2, _ = ours.reset(seed=ep)
        done, t = False, 0
        while not done and t < 300:
            t += 1
            np.testing.assert_allclose(o1, o2[: physical_dim(ours)], rtol=1e-6, atol=1e-6)
            a = int(rng.integers(2)) if env_id == "CartPole-v1" else rng.uniform(-1, 1, ref.action_space.shape)
            o1, r1, t1, tr1, _ = ref.step(a if env_id != "InvertedPendulum-v5" else 3 * a)
            o2, r2, t2, tr2, _ = ours.step(a)
            assert r1 == pytest.approx(r2, abs=1e-4) and (t1, tr1) == (t2, tr2)
            done = t1 or tr1
