"""The card's similarity-dense meeting-memory generator, with gold utterances by construction.

Recurring projects hold weekly meetings; every session is filled from the same
templates with only slots changed (people, items, numbers, decisions,
complaints), so sessions of different projects are near-duplicates of each
other. Four question types, each with its gold utterances known exactly:

- single-session: "According to Bob, how much will the cloud bill cost for Apollo?" (one fact utterance);
- temporal: "What did we decide in the Apollo meeting 2 weeks ago?" (that session's decisions);
- aggregate: "What does Bob usually complain about in the Apollo meetings?" (all his complaints there);
- knowledge-update: "What is the current budget of Apollo?" (the latest update only).

Project names appear in each session's opening line only, so telling projects
apart needs session context (the clue), which is what AssoMem is about.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from components.errors import ParamsError
from components.retrieval.memory import Memory

PROJECTS = (
    "Apollo",
    "Borealis",
    "Cascade",
    "Dynamo",
    "Everest",
    "Falcon",
    "Granite",
    "Helios",
    "Ironwood",
    "Juniper",
    "Kestrel",
    "Lumen",
    "Meridian",
    "Nimbus",
    "Orion",
    "Polaris",
    "Quartz",
    "Redwood",
    "Sierra",
    "Titan",
    "Umbra",
    "Vertex",
    "Willow",
    "Xenon",
    "Yukon",
    "Zephyr",
)
PEOPLE = (
    "Alice",
    "Bob",
    "Carol",
    "Dan",
    "Erin",
    "Frank",
    "Grace",
    "Heidi",
    "Ivan",
    "Judy",
    "Kevin",
    "Laura",
    "Mike",
    "Nora",
    "Oscar",
    "Peggy",
    "Quinn",
    "Rita",
    "Sam",
    "Tina",
)
ITEMS = (
    "vendor contract",
    "cloud bill",
    "hiring plan",
    "launch event",
    "security audit",
    "data migration",
    "design review",
    "test suite",
    "marketing campaign",
    "office move",
    "customer survey",
    "release train",
)
ACTIONS = ("postpone", "approve", "cancel", "expand", "outsource", "freeze", "split", "prioritise")
COMPLAINTS = (
    "the flaky build pipeline",
    "late status reports",
    "too many meetings",
    "the slow laptops",
    "unclear requirements",
    "the noisy open office",
    "missing documentation",
    "weekend on-call shifts",
    "the broken coffee machine",
    "endless email threads",
)
METRICS = ("budget", "headcount", "deadline", "risk level")
FILLERS = (
    "Let's move on to the next item.",
    "{p} will share the slides after the call.",
    "Any questions before we continue?",
    "{p} joined a few minutes late.",
    "Thanks everyone for the updates.",
    "{p} gave a quick status update on the {i}.",
    "We still need input from the {i} team.",
    "{p} will follow up on the {i} by email.",
    "Let's take this offline.",
    "{p} shared the notes from last time.",
)
COMPLAINT_FORMS = (
    "{p} complained again about {c}.",
    "{p} said {c} are slowing everyone down.",
    "Once more {p} raised concerns about {c}.",
)
DAY = 1.0  # timestamps are in days


def _metric_value(rng: np.random.Generator, metric: str) -> str:
    if metric == "budget":
        return f"{int(rng.integers(10, 900)) * 1000} dollars"
    if metric == "headcount":
        return f"{int(rng.integers(3, 60))} people"
    if metric == "deadline":
        return f"week {int(rng.integers(1, 52))}"
    return ("low", "medium", "high", "critical")[int(rng.integers(0, 4))]


def _session(rng, project: str, week: int, roster: list[str], complaint: dict, min_u: int, max_u: int) -> list[dict]:
    """Utterances of one session (text, speaker, kind, slots); timestamps are added by the caller."""
    n = int(rng.integers(min_u, max_u + 1))
    pick = lambda seq: seq[int(rng.integers(0, len(seq)))]  # noqa: E731
    out = [{"kind": "opening", "speaker": roster[0], "text": f"Welcome to the weekly {project} sync."}]
    person, item = pick(roster), pick(ITEMS)
    cost = int(rng.integers(1, 200)) * 500
    out.append(
        {
            "kind": "fact",
            "speaker": person,
            "person": person,
            "item": item,
            "text": f"{person} said the {item} will cost {cost} dollars.",
        }
    )
    for _ in range(int(rng.integers(1, 3))):
        out.append(
            {"kind": "decision", "speaker": roster[0], "text": f"We decided to {pick(ACTIONS)} the {pick(ITEMS)}."}
        )
    if rng.random() < 0.6:
        p = pick(roster)
        out.append(
            {"kind": "complaint", "speaker": p, "person": p, "text": pick(COMPLAINT_FORMS).format(p=p, c=complaint[p])}
        )
    if rng.random() < 0.5:
        m = pick(METRICS)
        out.append(
            {
                "kind": "update",
                "speaker": roster[0],
                "metric": m,
                "text": f"The {m} for this project is now {_metric_value(rng, m)}.",
            }
        )
    while len(out) < n:
        out.append(
            {"kind": "filler", "speaker": pick(roster), "text": pick(FILLERS).format(p=pick(roster), i=pick(ITEMS))}
        )
    head, tail = out[:1], out[1:]
    order = rng.permutation(len(tail))
    return head + [tail[i] for i in order]


def generate_memory(
    *,
    n_projects: int,
    weeks: int,
    seed: int,
    min_utterances: int = 10,
    max_utterances: int = 20,
    max_facts_per_project: int = 8,
    temporal_weeks: int = 4,
) -> Memory:
    """A memory of ``n_projects`` x ``weeks`` sessions and its questions (see module docstring)."""
    if not 1 <= n_projects <= len(PROJECTS):
        raise ParamsError(f"n_projects: must be in [1, {len(PROJECTS)}], got {n_projects}")
    if weeks < temporal_weeks + 1 or min_utterances < 6 or max_utterances < min_utterances:
        raise ParamsError("weeks must exceed temporal_weeks, and 6 <= min_utterances <= max_utterances")
    rng = np.random.default_rng(seed)
    projects = list(PROJECTS[:n_projects])
    rosters = {p: [PEOPLE[i] for i in rng.choice(len(PEOPLE), 4, replace=False)] for p in projects}
    complaints = {p: {x: COMPLAINTS[int(rng.integers(0, len(COMPLAINTS)))] for x in rosters[p]} for p in projects}
    utts: list[dict] = []
    for week in range(weeks):
        for j, project in enumerate(projects):
            start = week * 7 * DAY + j * (
                7 * DAY / (n_projects + 1)
            )  # meetings spread over the week, never overlapping
            sid = f"{project}-w{week:03d}"
            for k, u in enumerate(
                _session(rng, project, week, rosters[project], complaints[project], min_utterances, max_utterances)
            ):
                utts.append(
                    {
                        **u,
                        "id": f"{sid}-u{k:02d}",
                        "session_id": sid,
                        "clue_truth": project,
                        "week": week,
                        "timestamp": round(start + k / (24 * 60), 6),
                    }
                )
    query_time = weeks * 7 * DAY
    questions = _questions(rng, utts, projects, weeks, query_time, max_facts_per_project, temporal_weeks)
    return Memory(utts, questions)


def _questions(rng, utts, projects, weeks, query_time, max_facts, temporal_weeks) -> list[dict]:
    by = defaultdict(list)
    for u in utts:
        by[(u["clue_truth"], u["kind"])].append(u)
    qs: list[dict] = []

    def add(project, qtype, text, gold):
        qs.append(
            {
                "id": f"q{len(qs):05d}",
                "type": qtype,
                "project": project,
                "text": text,
                "query_time": query_time,
                "gold": [g["id"] for g in gold],
            }
        )

    for p in projects:
        facts = defaultdict(list)
        for u in by[(p, "fact")]:
            facts[(u["person"], u["item"])].append(u)
        unique = [v[0] for v in facts.values() if len(v) == 1]
        for i in rng.permutation(len(unique))[:max_facts]:
            u = unique[int(i)]
            add(p, "single-session", f"According to {u['person']}, how much will the {u['item']} cost for {p}?", [u])
        for k in range(1, temporal_weeks + 1):
            gold = [u for u in by[(p, "decision")] if u["week"] == weeks - k]
            when = "last week" if k == 1 else f"{k} weeks ago"
            add(p, "temporal", f"What did we decide in the {p} meeting {when}?", gold)
        per_person = defaultdict(list)
        for u in by[(p, "complaint")]:
            per_person[u["person"]].append(u)
        for person, gold in sorted(per_person.items()):
            if len(gold) >= 2:
                add(p, "aggregate", f"What does {person} usually complain about in the {p} meetings?", gold)
        per_metric = defaultdict(list)
        for u in by[(p, "update")]:
            per_metric[u["metric"]].append(u)
        for metric, ups in sorted(per_metric.items()):
            if len(ups) >= 2:
                add(
                    p,
                    "knowledge-update",
                    f"What is the current {metric} of {p}?",
                    [max(ups, key=lambda u: u["timestamp"])],
                )
    return qs


def projects_for_size(mem: Memory, size: int) -> list[str]:
    """The fewest leading projects whose sessions hold at least ``size`` utterances (all if too few)."""
    counts: dict[str, int] = defaultdict(int)
    order: list[str] = []
    for u in mem.utterances:
        if u["clue_truth"] not in counts:
            order.append(u["clue_truth"])
        counts[u["clue_truth"]] += 1
    chosen, total = [], 0
    for p in order:
        chosen.append(p)
        total += counts[p]
        if total >= size:
            break
    return chosen
