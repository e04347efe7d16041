"""Stage ``dialogues``: every target's 5-turn dialogues with the template user simulator, one grid job per
(target, seed), stored as JSONL with every turn; the simulator chatbot's records carry its planted truth.

LM targets answer through their chat template with batched, sampled generation (``targets.batch_size``
dialogues at a time); ``endpoint:<model>`` targets call the OpenAI-compatible ``targets.endpoint_url``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from components.anthrobench.dialogue import ChatLM, EndpointChat, run_dialogues
from components.anthrobench.simulate import Hazards, SimulatorChatbot
from components.data import validate as V
from components.io import read_jsonl, write_jsonl
from components.training import threads
from flows.anthrobench.params import ENDPOINT, SIMULATOR, Params
from flows.anthrobench.spec import DATA, DIALOGUES
from flows.runtime.grid import run_grid
from flows.runtime.stages import StageContext


@dataclass(frozen=True)
class DialogueJob:
    """One target on one seed's first turns (the job's values are its cache key)."""

    target: str
    seed: int
    first_turns: tuple
    n_turns: int
    hazards: dict
    lm: dict
    cache_dir: str
    threads: int = 1


@dataclass
class DialogueResult:
    target: str
    seed: int
    dialogues: list[dict]
    generated_tokens: int


@lru_cache(maxsize=2)
def _lm(spec: str, cache_dir: str):
    from components.models.causal_lm import load_causal_lm

    return load_causal_lm(spec, cache_dir=cache_dir)


def _target(job: DialogueJob):
    if job.target == SIMULATOR:
        return SimulatorChatbot(Hazards.build(job.hazards["a"], job.hazards["c"], job.hazards["kappa"]), job.seed)
    lm = job.lm
    if job.target.startswith(ENDPOINT):
        return EndpointChat(url=lm["endpoint_url"], model=job.target[len(ENDPOINT) :], name=job.target,
                            temperature=lm["temperature"], max_new_tokens=lm["max_new_tokens"])  # fmt: skip
    model, tok = _lm(job.target, job.cache_dir)
    return ChatLM(model, tok, job.target, job.seed, lm["temperature"], lm["max_new_tokens"], lm["max_context"])


def dialogues_of(job: DialogueJob) -> DialogueResult:
    """One target's dialogues on one seed (module level: process runners pickle it)."""
    if job.target != SIMULATOR:
        threads.set_threads(job.threads)
    target = _target(job)
    batch = job.lm["batch_size"] if job.target != SIMULATOR else len(job.first_turns)
    out = run_dialogues(target, list(job.first_turns), seed=job.seed, n_turns=job.n_turns, batch_size=batch)
    return DialogueResult(job.target, job.seed, out, int(getattr(target, "generated_tokens", 0)))


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    turns = read_jsonl(ctx.input(f"{DATA}/first_turns.jsonl"))
    lm = {**p.targets.model_dump(), "endpoint_url": p.targets.endpoint_url}
    hazards = p.hazards.model_dump()
    jobs = []
    for target in (SIMULATOR, *p.targets.all_models):
        n = p.data.n_sim_dialogues if target == SIMULATOR else p.data.n_lm_dialogues
        for seed in p.data.seeds:
            rows = tuple(r for r in turns if r["seed"] == seed)[:n]
            jobs.append(
                DialogueJob(
                    target,
                    seed,
                    rows,
                    p.data.n_turns,
                    hazards,
                    lm,
                    str(ctx.paths.cache / "models"),
                    p.resources.threads,
                )
            )
    results = run_grid(ctx, dialogues_of, jobs, desc="anthrobench dialogues", result=DialogueResult,
                       workers=p.resources.workers, progress=p.progress)  # fmt: skip
    records = [d for r in results for d in r.dialogues]
    flat = [{"id": f"{d['target']}/{d['seed']}/{d['dialogue']}/{t['turn']}", "dialogue": f"{d['target']}/{d['seed']}/"
             f"{d['dialogue']}", "turn": t["turn"], "user": t["user"], "assistant": t["assistant"],
             "n_turns": len(d["turns"])} for d in records for t in d["turns"]]  # fmt: skip
    out = ctx.output_dir(DIALOGUES)
    V.validate(flat, [V.unique("id"), V.non_empty_text("assistant"), V.non_empty_text("user"),
                      V.between("n_turns", p.data.n_turns, p.data.n_turns), V.between("turn", 1, p.data.n_turns)],
               name="dialogues", result_path=out / "_checks" / "dialogues.json")  # fmt: skip
    write_jsonl(out / "dialogues.jsonl", records)
    tokens = {f"{r.target}/{r.seed}": r.generated_tokens for r in results if r.target != SIMULATOR}
    return {"dialogues": len(records), "messages": len(flat), "generated_tokens": tokens}
