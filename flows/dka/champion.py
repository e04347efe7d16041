"""DKA's champion: the ViT adapted with the Dual-Kernel Adapter at the claims' low label fraction, first seed.

That is the model the paper's claims are about (C2, C4: DKA at very few labels), saved by the adapt stage as
``data/dka/adapt/models/dka-f<low fraction>/`` (config.json + model.safetensors) and logged as the MLflow model
of its child run ``dka-f<fraction>-s<seed>`` (loader ``components.dka.methods:load_adapted``). It is
re-evaluated as the adapt stage scores every run (``components.dka.train.predict_proba`` then ``scores``): test
accuracy, macro-F1 and one-vs-rest AUC (scikit-learn) on the fixed held-out test split of
``data/dka/data/pool.npz`` (images from the held-out axial slices). The model is in eval mode (no dropout),
the test set is fixed, nothing is sampled: an unchanged model in an unchanged torch/scikit-learn gives the
same numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from components.inputs import load_npz
from flows.runtime.champions import Rule, evaluated_candidate

SLUG = "dka"
LOADER = "components.dka.methods:load_adapted"  # the allow-listed loader its child run is logged with
METHOD = "dka"
LIBRARIES = ("scikit-learn", "safetensors")
RULES = {
    # rates in [0, 1]: 1 point either way, the claims' own no-effect band for accuracy (claims.delta_acc)
    "acc": Rule(higher_is_better=True, tolerance=0.01, relative=False),
    "macro_f1": Rule(higher_is_better=True, tolerance=0.01, relative=False),
    "auc": Rule(higher_is_better=True, tolerance=0.01, relative=False),
}


def choose(p) -> tuple[float, int, str]:
    """(fraction, seed, run name) of the champion: DKA at the claims' low fraction, that regime's first seed.

    The params require DKA at the low fraction (claims 1-4), and the adapt stage saves the first seed's model
    of every (method, fraction), so the choice always exists and is saved."""
    fraction = p.claims.low_fraction
    regime = next(r for r in p.adapt.regimes if r.fraction == fraction)
    seed = regime.seeds[0]
    return fraction, seed, f"{METHOD}-f{fraction:g}-s{seed}"


def settings_for(pool_rel: str) -> dict[str, Any]:
    return {"pool": pool_rel, "split": "test"}


def evaluate(model: Any, settings: dict, root: Path) -> dict[str, float]:

    from components.dka.train import predict_proba, scores
    from components.errors import DataError

    path = Path(root) / settings["pool"]
    if not path.is_file():
        raise DataError(f"{path}: dka's evaluation pool not found (run `paperline run dka --stage data` or `dvc pull`)")
    split = str(settings.get("split", "test"))
    with load_npz(path) as z:
        if f"{split}_x" not in z.files or f"{split}_y" not in z.files:
            raise DataError(f"{path}: no {split}_x / {split}_y arrays (rerun `paperline run dka --stage data`)")
        x, y = z[f"{split}_x"], z[f"{split}_y"]
    return scores(y, predict_proba(model, x))


def candidate(run_id: str | None, name: str, folder: Path, pool_rel: str, root: Path) -> dict | None:
    """The champion record: its metrics computed on the model loaded back from ``folder`` by its logged loader."""
    return evaluated_candidate(SLUG, run_id, name, folder, LOADER, evaluate, RULES, settings_for(pool_rel), root)
