"""The O2NC conversion (CMO23) with its online learners, the CMO23 deterministic fixed-point method and ODOG.

Every method has ``start(x0, oracle)`` and ``step(oracle)``; ``step`` runs one outer iteration and returns
the output candidate when an episode ends (the average of the w_n of that episode), else None. Methods see
only the :class:`~components.optim.oracle.GradientOracle`, so every gradient they use is counted.

Iteration n (CMO23): w_n = x_{n-1} + Delta_n / 2, g_n = grad(w_n), x_n = x_{n-1} + Delta_n, then the learner
picks Delta_{n+1} from the linear loss <g_n, .> (and a hint for the optimistic learners):

* ``o2nc-ogd``   plain OGD (CMO23's stochastic instance), 1 query/iteration;
* ``naive-hint`` optimistic OGD with h_{n+1} = g_n, 1 query/iteration (ablation);
* ``cmo23``      optimistic OGD whose hint solves Delta = Pi(Delta_n - eta grad(x_n + Delta/2) - eta (g_n - h_n))
                 by ``inner_steps`` fixed-point iterations, inner_steps + 1 queries/iteration;
* ``odog``       the doubly optimistic hint h_{n+1} = grad(z_n), z_n = x_n + Delta_n / 2 (one fixed-point step
                 started at Delta_n), 2 queries/iteration; ``adaptive=True`` gives the adaptive-step variant.
"""

from __future__ import annotations

import numpy as np

from components.errors import ParamsError
from components.optim.learners import OGD, OptimisticOGD, check_positive
from components.optim.oracle import GradientOracle

HINTS = ("none", "naive", "fixed-point", "extrapolated")


class O2NC:
    """Online-to-nonconvex conversion around an online learner, with episodes of ``episode`` iterations.

    ``restart``: at each episode end, move x to the episode average and reset the learner (our choice, the
    card leaves it open); with ``restart=False`` the iterates run on and only the candidate is reported.
    """

    def __init__(self, *, radius: float, eta: float, episode: int, hint: str = "extrapolated", inner_steps: int = 3,
                 adaptive: bool = False, gamma: float = 1.0, restart: bool = True, name: str | None = None):
        if hint not in HINTS:
            raise ParamsError(f"hint: expected one of {HINTS}, got {hint!r}")
        if not isinstance(episode, int) or episode < 1:
            raise ParamsError(f"episode: must be an integer >= 1, got {episode!r}")
        if not isinstance(inner_steps, int) or inner_steps < 1:
            raise ParamsError(f"inner_steps: must be an integer >= 1, got {inner_steps!r}")
        self.radius = check_positive("radius", radius)
        self.eta = check_positive("eta", eta)
        self.gamma = check_positive("gamma", gamma)
        self.episode, self.hint, self.inner_steps = episode, hint, inner_steps
        self.adaptive, self.restart = adaptive, restart
        self.name = name or {"none": "o2nc-ogd", "naive": "naive-hint", "fixed-point": "cmo23",
                             "extrapolated": "odog-adaptive" if adaptive else "odog"}[hint]

    # -- state ---------------------------------------------------------------------------------
    def start(self, x0: np.ndarray, oracle: GradientOracle) -> None:
        self.x = np.array(x0, dtype=np.float64)
        dim = self.x.size
        if self.hint == "none":
            self.learner = OGD(dim, radius=self.radius, eta=self.eta)
        else:
            self.learner = OptimisticOGD(dim, radius=self.radius, eta=self.eta, adaptive=self.adaptive, gamma=self.gamma)
        self._new_episode()

    def _new_episode(self) -> None:
        self.learner.reset()
        self._w_sum = np.zeros_like(self.x)
        self._k = 0
        self._need_first = self.hint != "none"

    def _first_hint(self, oracle: GradientOracle) -> None:
        """Delta_1 of an episode: the hint at the current point (none for the naive hint, which has no g_0)."""
        if self.hint == "naive":
            self.learner.play(np.zeros_like(self.x))
        else:
            self._play_hint(oracle, np.zeros_like(self.x), reuse=False)
        self._need_first = False

    def _play_hint(self, oracle: GradientOracle, delta_start: np.ndarray, *, reuse: bool) -> None:
        steps = 1 if self.hint == "extrapolated" else self.inner_steps
        d = delta_start
        for _ in range(steps):
            h = oracle.grad(self.x + 0.5 * d, reuse_noise=reuse)
            d = self.learner.propose(h)
        self.learner.play(h)

    # -- one outer iteration ---------------------------------------------------------------------
    def step(self, oracle: GradientOracle) -> np.ndarray | None:
        if self._need_first:
            self._first_hint(oracle)
        delta = self.learner.play() if self.hint == "none" else self.learner.delta
        w = self.x + 0.5 * delta
        g = oracle.grad(w)
        self.x = self.x + delta
        self.learner.update(g)
        if self.hint == "naive":
            self.learner.play(g)
        elif self.hint != "none":
            # ODOG: z_n = x_n + Delta_n / 2; CMO23: fixed point started from Delta_n
            self._play_hint(oracle, self.learner.delta, reuse=True)
        self._w_sum += w
        self._k += 1
        if self._k < self.episode:
            return None
        avg = self._w_sum / self._k
        if self.restart:
            self.x = avg.copy()
            self._new_episode()
        else:  # keep x and the learner running across episodes
            self._w_sum = np.zeros_like(self.x)
            self._k = 0
        return avg


def make_o2nc(kind: str, **kw) -> O2NC:
    hint = {"o2nc-ogd": "none", "naive-hint": "naive", "cmo23": "fixed-point", "odog": "extrapolated",
            "odog-adaptive": "extrapolated"}[kind]
    return O2NC(hint=hint, adaptive=kind == "odog-adaptive", **kw)
