"""anthrobench's folders and DVC stages: what each reads, which params it uses, what it writes."""

from __future__ import annotations

from flows.specs import Layout, Paper

PAPER = Paper(
    7, "anthrobench", "AnthroBench: multi-turn evaluation of anthropomorphic LLM behaviours", "07-anthrobench.md"
)

L = Layout("anthrobench")
DATA, DIALOGUES, LABELS = L.out("data"), L.out("dialogues"), L.out("labels")
# where a user puts the official first_turns.csv: the data stage's declared dependency, kept in git by its README
# (outside data/, whose folders are all outputs of stages)
INPUTS = "flows/anthrobench/inputs"

_C = "components/anthrobench"
STAGES = (
    L.stage("data", code=(_C, "components/data/validate.py", "components/models/causal_lm.py"), reads=(INPUTS,),
            params=("data",), writes=(DATA,), summary="first turns (official CSV in flows/anthrobench/inputs/ or "
            "templates) per seed; simulator-labelled judge training and dev sentences; GX checks"),
    L.stage("dialogues", code=(_C, "components/models/causal_lm.py"), reads=(DATA,),
            params=("data", "targets", "hazards", "resources"), writes=(DIALOGUES,), after=("data",),
            summary="5-turn dialogues of the simulator chatbot (with its planted truth) and of each LM target "
            "(SmolLM2 through its chat template, batched), stored as JSONL; GX checks"),
    L.stage("judge", code=(_C, "components/retrieval/embed.py", "flows/anthrobench/champion.py"),
            reads=(DATA, DIALOGUES), params=("data.seeds", "judges"), writes=(LABELS,), after=("dialogues",),
            summary="J1 lexicons, J2 MiniLM centroids, J3 logistic regression per seed (J3 of the first seed is the "
            "champion); optional LLM judge with the repo's rubric; votes, majority and pronoun regex on every "
            "target message; GX: J3 never trained on a scored sentence"),
    L.report_stage(reads=(DIALOGUES, LABELS), params=("data.seeds", "data.n_turns", "targets.models", "targets.gemma"),
                   plots={"turn_profile.csv": {"x": "turn", "y": "prevalence", "template": "linear",
                                               "color": "behaviour"}},
                   after=("judge",), summary="prevalences, late onset, snowball, judge F1 and Fleiss kappa; "
                   "claims C1-C4 with verdicts"),
)  # fmt: skip
