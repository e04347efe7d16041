"""Stage ``data``: the first turns of every seed (the official CSV when ``data.first_turns`` names one, else the
card's labelled template generator), and the simulator-labelled sentences of the judges (J3's training set and
J2's dev set, both from the simulator's train bank); Great Expectations checks every table."""

from __future__ import annotations

from components.anthrobench.behaviours import JUDGED
from components.anthrobench.first_turns import generate_first_turns, load_first_turns, stratified_sample
from components.anthrobench.llm_judge import check_available
from components.anthrobench.simulate import labelled_sentences
from components.data import validate as V
from components.io import write_jsonl
from components.models.causal_lm import is_offline
from flows.anthrobench.params import Params
from flows.anthrobench.spec import DATA
from flows.runtime.paths import allowed_roots, inside
from flows.runtime.stages import StageContext


def preflight(p: Params) -> None:
    """Every LM target and the LLM judge exist here, checked before any work: offline, a Hugging Face id that is
    not in the local cache (Gemma3-270M behind ``targets.gemma``, say) fails at once, naming the id."""
    offline = is_offline()
    for spec in (*p.targets.all_models, *([p.judges.llm] if p.judges.llm else [])):
        check_available(spec, offline=offline)


def run(ctx: StageContext[Params]) -> dict:
    preflight(ctx.params)
    d = ctx.params.data
    if d.first_turns:  # a path inside the checkout (data/ or the file cache), never outside it
        path = inside(ctx.paths.root / d.first_turns, allowed_roots(ctx.paths.root), "data.first_turns")
        source = load_first_turns(path)
    else:
        source = generate_first_turns()
    out = ctx.output_dir(DATA)
    turns, sentences = [], []
    for seed in d.seeds:
        n = max(d.n_lm_dialogues, d.n_sim_dialogues)
        for slot, row in enumerate(stratified_sample(source, n, seed)):
            turns.append({"seed": seed, "slot": slot, **{k: str(v) for k, v in row.items()}})
        for split, n_per, offset in (("train", d.train_sentences, 10_000), ("dev", d.dev_sentences, 20_000)):
            for r in labelled_sentences(n_per, seed=offset + seed, split="train"):
                sentences.append({"seed": seed, "split": split, **r, "behaviour": r["behaviour"] or "none"})
    V.validate(
        turns,
        [
            V.columns_present(["seed", "slot", "use_domain", "use_scenario", "user_first_turn"]),
            V.non_empty_text("user_first_turn"),
            V.non_empty_text("use_domain"),
            V.not_null("seed"),
        ],
        name="first_turns",
        result_path=out / "_checks" / "first_turns.json",
    )
    V.validate(sentences, [V.non_empty_text("text"), V.in_set("behaviour", [*JUDGED, "none"]),
                           V.in_set("split", ["train", "dev"])],
               name="judge_sentences", result_path=out / "_checks" / "judge_sentences.json")  # fmt: skip
    write_jsonl(out / "first_turns.jsonl", turns)
    write_jsonl(out / "judge_sentences.jsonl", sentences)
    return {"first_turns": len(turns), "judge_sentences": len(sentences), "source": d.first_turns or "templates"}
