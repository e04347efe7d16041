"""Stage ``rewrite``: LLM-guided rewriting and the synthetic:natural mixes (``qa-67`` = 67% synthetic by bytes).

The LLM (SmolLM2-135M-Instruct from the offline wheel, or an HF id online)
rewrites a seeded sample of ``rewrite.llm_docs`` documents; with
``rewrite.allow_template`` the rest of the synthetic share comes from the
deterministic template stand-in, labelled ``rewriter: template`` in every record
and in the report. Finished LLM rewrites are appended to a cache under
``.paperline/cache/rewrite`` so a killed run resumes without regenerating them.
"""

from __future__ import annotations

from components.data import validate as V
from components.data.rewrite import LLMRewriter, mix_synthetic, rewrite_corpus
from components.io import read_jsonl, write_json, write_jsonl
from flows.qualitypajama.common import is_curation, kind, synthetic_fraction
from flows.qualitypajama.params import Params
from flows.qualitypajama.spec import CORPUS, REWRITE
from flows.runtime.stages import StageContext

SUITE = [
    V.columns_present(["id", "text", "label"]),
    V.unique("id"),
    V.non_empty_text("text"),
    V.in_set("label", ["natural", "near_dup", "junk", "synthetic"]),
]


def _rewriter(ctx: StageContext[Params]) -> LLMRewriter | None:
    r = ctx.params.rewrite
    if r.llm_docs == 0:
        return None
    from components.models.causal_lm import load_causal_lm
    from components.training.threads import set_threads

    set_threads(1)  # decoding a 135M model: 1 thread measured ~12x faster per step than 2 on a loaded 2-core box
    model, tokenizer = load_causal_lm(r.model, cache_dir=ctx.paths.cache / "models")
    return LLMRewriter(model, tokenizer, max_new_tokens=r.max_new_tokens, batch_size=r.batch_size)


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    mixes = [name for name in p.interventions if not is_curation(name)]
    out = ctx.output_dir(REWRITE)
    summary: dict = {"mixes": {}}
    if mixes:
        pool = read_jsonl(ctx.input(f"{CORPUS}/pool.jsonl"), required=("id", "text", "label"))
        natural = [d for d in pool if d["label"] == "natural"]
        rewriter = _rewriter(ctx)
        for style in sorted({kind(m) for m in mixes}):
            synthetic = rewrite_corpus(
                natural if p.rewrite.allow_template else natural[: p.rewrite.llm_docs],
                style=style,
                rewriter=rewriter,
                llm_budget=p.rewrite.llm_docs,
                cache_path=ctx.paths.cache / "rewrite" / f"{style}.jsonl",
                seed=p.seed,
                progress=True,
            )
            V.validate(
                synthetic,
                SUITE,
                name=f"qualitypajama/synthetic-{style}",
                result_path=out / "_checks" / f"synthetic-{style}.json",
            )
            write_jsonl(out / f"synthetic-{style}.jsonl", synthetic)
            by = {}
            for d in synthetic:
                by[d["rewriter"]] = by.get(d["rewriter"], 0) + 1
            summary[f"synthetic_{style}"] = by
            for name in (m for m in mixes if kind(m) == style):
                # As large as both pools allow at this share (rewrites are shorter than their sources, so a
                # 67% mix cannot be as large as the raw pool); token budgets, not dataset size, bound training.
                mixed = mix_synthetic(pool, synthetic, synthetic_frac=synthetic_fraction(name), seed=p.seed)
                V.validate(mixed, SUITE, name=f"qualitypajama/{name}", result_path=out / "_checks" / f"{name}.json")
                write_jsonl(out / f"{name}.jsonl", mixed)
                summary["mixes"][name] = {
                    "documents": len(mixed),
                    "synthetic_docs": sum(d["label"] == "synthetic" for d in mixed),
                }
    write_json(out / "summary.json", summary)
    return {"mixes": {k: v["documents"] for k, v in summary["mixes"].items()}}
