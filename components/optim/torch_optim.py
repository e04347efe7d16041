"""ODOG as a ``torch.optim.Optimizer`` taking a closure, so a network can be trained with it.

One ``step(closure)`` is one O2NC iteration with the doubly optimistic hint, i.e. the same arithmetic as
``components.optim.o2nc.O2NC(hint="extrapolated")``: the closure (which must zero the grads, compute the loss
and call ``backward``) is evaluated at w_n = x_{n-1} + Delta_n / 2 and at z_n = x_n + Delta_n / 2 (plus once at
x at the start of each episode). The ball ||Delta|| <= D is over all parameters together. After a step the
parameters hold x_n. Gradient queries are counted in ``self.calls``.
"""

from __future__ import annotations

import torch

from components.errors import ParamsError
from components.optim.oracle import Diverged


class ODOG(torch.optim.Optimizer):
    def __init__(
        self,
        params,
        *,
        eta: float,
        radius: float,
        episode: int = 10,
        adaptive: bool = False,
        gamma: float = 1.0,
        alpha: float = 1e-12,
        restart: bool = True,
    ):
        for name, v in (("eta", eta), ("radius", radius), ("gamma", gamma), ("alpha", alpha)):
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not v > 0:
                raise ParamsError(f"{name}: must be a number > 0, got {v!r}")
        if not isinstance(episode, int) or episode < 1:
            raise ParamsError(f"episode: must be an integer >= 1, got {episode!r}")
        super().__init__(
            params,
            dict(eta=eta, radius=radius, episode=episode, adaptive=adaptive, gamma=gamma, alpha=alpha, restart=restart),
        )
        if len(self.param_groups) != 1:
            raise ParamsError("param_groups: ODOG uses one ball over all parameters; pass a single group")
        self.calls = 0
        self._st = None

    # -- helpers over the flat parameter list --------------------------------------------------
    def _params(self):
        return [p for p in self.param_groups[0]["params"]]

    def _set(self, values):
        with torch.no_grad():
            for p, v in zip(self._params(), values):
                p.copy_(v)

    def _grad(self, closure, point):
        self._set(point)
        with torch.enable_grad():
            closure()
        self.calls += 1
        g = [(p.grad.detach().clone() if p.grad is not None else torch.zeros_like(p)) for p in self._params()]
        if not all(torch.isfinite(t).all() for t in g):
            raise Diverged(f"ODOG: gradient is NaN or inf at call {self.calls}; run marked diverged")
        return g

    @staticmethod
    def _axpy(a, xs, ys):  # xs + a * ys
        return [x + a * y for x, y in zip(xs, ys)]

    def _eta(self, st):
        gr = self.param_groups[0]
        if not gr["adaptive"]:
            return gr["eta"]
        return min(gr["eta"], gr["gamma"] * gr["radius"] / (gr["alpha"] + st["sq_sum"]) ** 0.5)

    def _play(self, st, h):
        eta, radius = self._eta(st), self.param_groups[0]["radius"]
        d = [dl - eta * hh - eta * (pg - ph) for dl, hh, pg, ph in zip(st["delta"], h, st["prev_g"], st["prev_h"])]
        norm = torch.sqrt(sum((t * t).sum() for t in d))
        if norm > radius:
            d = [t * (radius / norm) for t in d]
        st["delta"], st["prev_h"] = d, h

    def _reset(self, st):
        zeros = [torch.zeros_like(p) for p in self._params()]
        st.update(
            delta=[z.clone() for z in zeros],
            prev_g=[z.clone() for z in zeros],
            prev_h=[z.clone() for z in zeros],
            sq_sum=0.0,
            w_sum=[z.clone() for z in zeros],
            k=0,
            need_first=True,
        )

    @torch.no_grad()
    def step(self, closure=None):
        if closure is None:
            raise ParamsError("closure: ODOG.step needs a closure that recomputes the loss and its gradients")
        if self._st is None:
            self._st = {"x": [p.detach().clone() for p in self._params()]}
            self._reset(self._st)
        st = self._st
        if st["need_first"]:
            self._play(st, self._grad(closure, st["x"]))  # Delta_1 from the hint at x (z_0 = x + 0/2)
            st["need_first"] = False
        w = self._axpy(0.5, st["x"], st["delta"])
        self._set(w)
        with torch.enable_grad():
            loss = closure()
        self.calls += 1
        g = [(p.grad.detach().clone() if p.grad is not None else torch.zeros_like(p)) for p in self._params()]
        if not all(torch.isfinite(t).all() for t in g):
            raise Diverged(f"ODOG: gradient is NaN or inf at call {self.calls}; run marked diverged")
        st["x"] = self._axpy(1.0, st["x"], st["delta"])
        st["prev_g"] = g
        st["sq_sum"] += float(sum(((a - b) ** 2).sum() for a, b in zip(g, st["prev_h"])))
        self._play(st, self._grad(closure, self._axpy(0.5, st["x"], st["delta"])))
        st["w_sum"] = self._axpy(1.0, st["w_sum"], w)
        st["k"] += 1
        if st["k"] >= self.param_groups[0]["episode"]:
            avg = [s / st["k"] for s in st["w_sum"]]
            st["last_candidate"] = avg
            if self.param_groups[0]["restart"]:
                st["x"] = avg
                self._reset(st)
            else:
                st["w_sum"], st["k"] = [torch.zeros_like(t) for t in avg], 0
        self._set(st["x"])
        return loss
