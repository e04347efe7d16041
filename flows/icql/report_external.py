"""Report section for the ``data.external`` datasets: normalised score per method x dataset (no claims).

The card's claims are about kitchen-lite; external datasets only get this table. The CI is
a two-stage percentile bootstrap: seeds with replacement, then episodes within each drawn
seed (one seed: the CI covers that one trained model's episodes only).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from components.evaluation.seed_ci import paired_bootstrap_ci
from components.io import read_json, read_jsonl
from components.reporting import Section

RULE = (
    "Anchors per dataset: a value in the config (data.external[i].ref_min_score / ref_max_score) wins; else "
    "Minari's published D4RL reference scores (ref_min_score / ref_max_score in the dataset metadata); else "
    "measured in this run: random = uniform-random policy in the environment, expert = the behaviour data's "
    "mean episode return (for sac, the SAC policy that collected it)."
)


def external_table(p, episodes: list[dict]) -> list[dict]:
    """Mean normalised score per (dataset, method) with a two-stage bootstrap CI (seeds, then episodes)."""
    groups: dict = defaultdict(lambda: defaultdict(list))
    for e in episodes:
        groups[(e["dataset"], e["method"])][e["seed"]].append(e["score"])
    rows = []
    for (name, method), by_seed in sorted(groups.items()):
        vals = [v for _, vs in sorted(by_seed.items()) for v in vs]
        seeds = [s for s, vs in sorted(by_seed.items()) for _ in vs]
        pt, lo, hi = paired_bootstrap_ci(
            vals, clusters=seeds, n_resamples=p.claims.n_resamples, level=p.claims.level, seed=p.seed
        )
        rows.append(
            {
                "dataset": name,
                "method": method,
                "score": pt,
                "ci_low": lo,
                "ci_high": hi,
                "seeds": len(by_seed),
                "episodes": len(vals),
            }
        )
    return rows


def external_outputs(p, ev: Path, datasets: Path) -> tuple[list[Section], dict]:
    """(report sections, metrics) of the external datasets; ([], {}) when none were evaluated."""
    path = ev / "external_episodes.jsonl"
    if not path.exists():
        return [], {}
    rows = external_table(p, read_jsonl(path))
    metas = read_json(datasets / "external.json")
    refs = [
        {
            "dataset": k,
            "source": m["source"],
            "id": m["id"],
            "transitions": m["transitions"],
            "obs dim": m["obs_dim"],
            "act dim": m["act_dim"],
            "behaviour return": m["behaviour_return"],
            "random": (m["references"] or {}).get("random"),
            "random from": (m["references"] or {}).get("random_from"),
            "expert": (m["references"] or {}).get("expert"),
            "expert from": (m["references"] or {}).get("expert_from"),
        }
        for k, m in metas.items()
    ]
    section = Section(
        "External datasets",
        "Normalised score (0 = random anchor, 100 = expert anchor) per method and "
        f"external dataset, mean over seeds x {p.eval.episodes} evaluation episodes; 95% CI: two-stage "
        "bootstrap (seeds, then episodes within each drawn seed). These datasets carry no claims. " + RULE,
        tables=[rows, refs],
    )
    return [section], {"external_scores": {f"{r['dataset']}/{r['method']}": r["score"] for r in rows}}
