"""The O2NC conversion (CMO23) with its online learners, the CMO23 deterministic fixed-point method and ODOG.

Every method has ``start(x0, oracle)`` and ``step(oracle)``; ``step`` runs one outer iteration and returns
the output candidate when an episode ends (the average of the w_n of that episode), else None. Methods see
only the :class:`~components.optim.oracle.GradientOracle`, so every gradient they use is counted.

Iteration n (CMO23): w_n = x_{n-1} + Delta_n / 2, g_n = grad(w_n), x_n = x_{n-1} + Delta_n, then the learner
picks Delta_{n+1} from the linear loss <g_n, .> (and a hint for the optimistic learners):

* ``o2nc-ogd``   plain OGD (CMO23's stochastic instance), 1 query/iteration;
* ``naive-hint`` optimistic OGD with h_{n+1} = g_n, 1 query/iteration (ablation);
* ``cmo23``      optimistic OGD whose hint solves Delta = Pi(Delta_n - eta grad(x_n + Delta/2) - eta (g_n - h_n))
                 by K fixed-point iterations, K + 1 queries/iteration. The card's baseline takes K from eps
                 (:func:`log_inner_steps`, K ~ log(1/eps): the log factor ODOG removes); ``cmo23-k2`` is the
                 named variant with a fixed K = ``inner_steps`` (2);
* ``odog``       the doubly optimistic hint h_{n+1} = grad(z_n), z_n = x_n + Delta_n / 2 (one fixed-point step
                 started at Delta_n), 2 queries/iteration; ``adaptive=True`` gives the adaptive-step variant.
"""

from __future__ import annotations

import math

import numpy as np

from components.errors import ParamsError
from components.optim.learners import OGD, OptimisticOGD, check_positive
from components.optim.oracle import GradientOracle

HINTS = ("none", "naive", "fixed-point", "extrapolated")
KINDS = {
    "o2nc-ogd": "none",
    "naive-hint": "naive",
    "cmo23": "fixed-point",
    "cmo23-k2": "fixed-point",
    "odog": "extrapolated",
    "odog-adaptive": "extrapolated",
}


def log_inner_steps(eps_rel: float, eta_mult: float) -> int:
    """CMO23's inner-loop length K for a target eps (relative to ||grad F(x0)||) and a step eta = eta_mult / L1.

    The fixed-point map Delta -> Pi(Delta_n - eta grad(x_n + Delta / 2) - eta (g_n - h_n)) is a contraction with
    factor q = eta L1 / 2 = eta_mult / 2 (the projection is non-expansive, grad is L1-Lipschitz, Delta enters
    halved). K iterations shrink the fixed-point error by q^K, so K = ceil(log(1/eps_rel) / log(1/q)) is the
    fewest that shrink it by eps_rel: K grows like log(1/eps), the factor in CMO23's O(eps^-1.75 log(1/eps)).
    With the frozen eta_mult = 1 (q = 1/2) this is K = ceil(log2(1/eps_rel)): 4 at eps 0.1, 7 at 0.01, 10 at 1e-3.
    The constant in front of the log is not given by the card (theorem constants unverified): this is our choice.
    """
    eps_rel = check_positive("eps_rel", eps_rel)
    q = check_positive("eta", eta_mult) / 2.0
    if q >= 1.0:
        raise ParamsError(f"eta: cmo23's fixed-point loop needs eta < 2 / L1 to contract (got {eta_mult} / L1)")
    if eps_rel >= 1.0:
        return 1
    return max(1, math.ceil(math.log(1.0 / eps_rel) / math.log(1.0 / q) - 1e-12))


class O2NC:
    """Online-to-nonconvex conversion around an online learner, with episodes of ``episode`` iterations.

    ``restart``: at each episode end, move x to the episode average and reset the learner (our choice, the
    card leaves it open); with ``restart=False`` the iterates run on and only the candidate is reported.
    """

    def __init__(
        self,
        *,
        radius: float,
        eta: float,
        episode: int,
        hint: str = "extrapolated",
        inner_steps: int = 3,
        adaptive: bool = False,
        gamma: float = 1.0,
        restart: bool = True,
        name: str | None = None,
    ):
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
        self.name = (
            name
            or {
                "none": "o2nc-ogd",
                "naive": "naive-hint",
                "fixed-point": "cmo23",
                "extrapolated": "odog-adaptive" if adaptive else "odog",
            }[hint]
        )

    @property
    def calls_per_iteration(self) -> int:
        """Counted gradient queries of one outer iteration (the first hint of an episode costs one more hint)."""
        return {"none": 1, "naive": 1, "extrapolated": 2, "fixed-point": self.inner_steps + 1}[self.hint]

    # -- state ---------------------------------------------------------------------------------
    def start(self, x0: np.ndarray, oracle: GradientOracle) -> None:
        self.x = np.array(x0, dtype=np.float64)
        dim = self.x.size
        if self.hint == "none":
            self.learner = OGD(dim, radius=self.radius, eta=self.eta)
        else:
            self.learner = OptimisticOGD(
                dim, radius=self.radius, eta=self.eta, adaptive=self.adaptive, gamma=self.gamma
            )
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
    if kind not in KINDS:
        raise ParamsError(f"method: unknown O2NC method {kind!r}; use one of {', '.join(KINDS)}")
    return O2NC(hint=KINDS[kind], adaptive=kind == "odog-adaptive", name=kind, **kw)
