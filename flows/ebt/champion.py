"""EBT's champion: the Energy-Based Transformer of the first width and first seed (``ebt-d<w>-s<seed>``).

It is the train stage's EBT as logged (the allow-listed ``components.ebt.predictor:load_predictor``: config.json +
model.safetensors, no pickle), re-evaluated on the in-distribution test windows (``data/ebt/data/sets/id.npy``,
the evaluate stage's first batch of them) exactly as the evaluate stage measures them: the mean per-window
next-token NLL (nats) after M_train steps of the inner optimisation (``id_nll``), after M_inf = ``claims.think_m``
steps ("thinking", claim 1, ``id_nll_think``), and of best-of-N minimum-energy selection at N = ``claims.best_n``
(claim 3, ``id_nll_best_of``). The initial logits come from the evaluate stage's generators (seeded by model seed
and set index, per batch), the inner updates are plain gradient steps with no randomised step size at evaluation,
so an unchanged model in an unchanged torch gives the same numbers (the means of the evaluate stage's ``ebt_m<M>``
and ``bon_<N>`` over those windows).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from components.inputs import load_npy
from components.training.threads import threads
from flows.runtime.champions import Rule, evaluated_candidate

SLUG = "ebt"
LOADER = "components.ebt.predictor:load_predictor"
LIBRARIES = ("safetensors",)
# NLLs in nats, lower is better; 0.02 nats either way is 2% perplexity, the claims' no-effect band (log 1.02)
RULES = {
    "id_nll": Rule(higher_is_better=False, tolerance=0.02, relative=False),  # at M_train steps (the served model)
    "id_nll_think": Rule(higher_is_better=False, tolerance=0.02, relative=False),  # at M_inf = claims.think_m
    "id_nll_best_of": Rule(higher_is_better=False, tolerance=0.02, relative=False),  # best of claims.best_n
}


def choose(p) -> tuple[int, int]:
    """(width, seed) of the champion: the first width and the first seed."""
    return p.model.widths[0], p.training.seeds[0]


def settings_for(p, seed: int) -> dict[str, Any]:
    """What :func:`evaluate` needs besides the model: the ID windows and the evaluate stage's own settings."""
    from flows.ebt.common import ID_SET, set_names
    from flows.ebt.spec import DATA

    set_index = set_names(p).index(ID_SET)
    return {
        "windows": f"{DATA}/sets/{ID_SET}.npy",
        "eval_seed": seed * 100 + set_index,  # evaluate_job's seeds
        # the stage's first batch of windows (its initial logits are drawn per batch, so they are the stage's
        # own): a few seconds instead of the whole set's sweep (default: 64 of ~600 windows; smoke: all 62)
        "max_windows": p.eval.batch_size,
        "m_train": p.energy.mcmc_steps,
        "think_m": p.claims.think_m,
        "best_of": list(p.eval.best_of),
        "best_n": p.claims.best_n,
        "best_of_noise": p.eval.best_of_noise,
        "batch_size": p.eval.batch_size,
        "init_scale": p.energy.init_scale,
        "threads": p.resources.threads,
    }


def evaluate(model: Any, settings: dict, root: Path) -> dict[str, float]:
    """The three ID NLLs of ``model`` (a served ``Predictor`` or a bare ``EnergyTransformer``)."""
    import numpy as np
    import torch

    from components.ebt.inference import best_of_n, think_curve
    from components.errors import DataError

    s = settings
    path = Path(root) / s["windows"]
    if not path.is_file():
        raise DataError(
            f"{path}: EBT's evaluation windows not found (run `paperline run ebt --stage data` or `dvc pull`)"
        )
    ebt = getattr(model, "model", model)  # the Predictor wraps the EnergyTransformer
    win = torch.from_numpy(load_npy(path).astype(np.int64))[: int(s["max_windows"])]
    with threads(int(s["threads"])):  # the stage's thread count: the same reductions
        nll, _ = think_curve(
            ebt,
            win,
            max_steps=max(int(s["m_train"]), int(s["think_m"])),
            seed=int(s["eval_seed"]),
            batch_size=int(s["batch_size"]),
            init_scale=float(s["init_scale"]),
        )
        # every N of the stage's sweep: the candidates' initial logits depend on the largest N
        bon = best_of_n(
            ebt,
            win,
            ns=[int(n) for n in s["best_of"]],
            steps=int(s["m_train"]),
            seed=int(s["eval_seed"]) + 50,
            noise_std=float(s["best_of_noise"]),
            batch_size=int(s["batch_size"]),
            init_scale=float(s["init_scale"]),
        )
    mean = lambda v: float(np.mean(v, dtype=np.float64))  # noqa: E731 - per-window NLLs are float32
    return {
        "id_nll": mean(nll[:, int(s["m_train"])]),
        "id_nll_think": mean(nll[:, int(s["think_m"])]),
        "id_nll_best_of": mean(bon[int(s["best_n"])]),
    }


def candidate(p, run_id: str | None, name: str, folder: Path, root: Path, seed: int) -> dict | None:
    """The champion entry of the train stage's summary (metrics on the model loaded back from ``folder``)."""
    return evaluated_candidate(SLUG, run_id, name, folder, LOADER, evaluate, RULES, settings_for(p, seed), root)
