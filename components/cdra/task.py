"""The synthetic persona-preference task (the card's DeepPref stand-in) and its rule critic (the council stand-in).

A user states one explicit constraint ("no nuts") and one value ("pregnant"); a rule table maps the value to an
implicit constraint (avoid ``alcohol``) and, for the risk rules, a second, risk constraint (avoid ``strenuous``).
Items (30 per topic, 20 topics) carry three attributes each. A good response reasons in three steps and answers:

    Step 1: (explicit) avoid nuts  Step 2: (implicit) avoid alcohol  Step 3: (risk) avoid strenuous  Answer: item07

Everything is word-level tokens (one word, one id), so a step's tokens are known exactly. ``critic`` is the exact
rule judge: per step a critique (token form for the PRMs, text form for people) and a score in {-1, 0, 1}.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from components.errors import DataError, ParamsError

ATTRS = (
    "nuts",
    "dairy",
    "meat",
    "spicy",
    "strenuous",
    "outdoor",
    "alcohol",
    "expensive",
    "late",
    "crowded",
)
# value -> (implicit attribute, risk attribute or None). The risk rules are the rows with a second attribute.
RULES: dict[str, tuple[str, str | None]] = {
    "vegan": ("dairy", None),
    "recovering_from_surgery": ("strenuous", "crowded"),
    "pregnant": ("alcohol", "strenuous"),
    "saving_money": ("expensive", None),
    "early_riser": ("late", None),
    "introvert": ("crowded", None),
    "heart_condition": ("strenuous", "spicy"),
    "sober_living": ("alcohol", "late"),
    "asthma": ("outdoor", "strenuous"),
    "halal_diet": ("meat", "alcohol"),
}
VALUES = tuple(RULES)
N_TOPICS, N_ITEMS, ITEM_ATTRS = 20, 30, 4
TOPICS = tuple(f"topic{t:02d}" for t in range(N_TOPICS))
ITEMS = tuple(f"item{k:02d}" for k in range(N_ITEMS))

SPECIAL = ("<pad>", "<bos>", "<eos>", "<sep>", "no:", "value:", "Step", "1:", "2:", "3:")
WORDS = ("(explicit)", "(implicit)", "(risk)", "avoid", "none", "Answer:")
CRIT = ("<critique>", "expected", "got", "has", "ok", "bad", "**SCORE:**", "-1", "0", "+1")
VOCAB_WORDS = SPECIAL + WORDS + CRIT + ATTRS + VALUES + TOPICS + ITEMS
ID = {w: i for i, w in enumerate(VOCAB_WORDS)}
VOCAB = len(VOCAB_WORDS)
PAD, BOS, EOS, SEP = ID["<pad>"], ID["<bos>"], ID["<eos>"], ID["<sep>"]
STEP, CRITIQUE, SCORE = ID["Step"], ID["<critique>"], ID["**SCORE:**"]
STEP_NUM = (ID["1:"], ID["2:"], ID["3:"])
SCORE_TOKEN = {-1: ID["-1"], 0: ID["0"], 1: ID["+1"]}
TOKEN_SCORE = {v: k for k, v in SCORE_TOKEN.items()}
STEP_KIND = ("(explicit)", "(implicit)", "(risk)")
N_STEPS = 3


def encode(words: list[str]) -> list[int]:
    try:
        return [ID[w] for w in words]
    except KeyError as exc:
        raise DataError(f"cdra task: unknown word {exc.args[0]!r} (not in the task vocabulary)") from None


def decode(ids: list[int]) -> list[str]:
    return [VOCAB_WORDS[int(i)] for i in ids]


def item_attrs(k: int) -> tuple[str, ...]:
    """The four attributes of item k. Every topic's catalogue shares this layout (item k of any topic has the
    same attributes; the topic names the catalogue), so a tiny policy can learn it from 1,000 chains."""
    rng = np.random.default_rng(1000 + k)
    return tuple(sorted(ATTRS[i] for i in rng.choice(len(ATTRS), ITEM_ATTRS, replace=False)))


@dataclass(frozen=True)
class Pair:
    """One (preference, query) pair: topic, explicit constraint, stated value; the gold chain follows from them."""

    id: str
    topic: str
    explicit: str
    value: str

    @property
    def implicit(self) -> str:
        return RULES[self.value][0]

    @property
    def risk(self) -> str | None:
        return RULES[self.value][1]

    def avoid(self) -> set[str]:
        return {self.explicit, self.implicit} | ({self.risk} if self.risk else set())

    def valid_items(self) -> list[str]:
        bad = self.avoid()
        return [it for k, it in enumerate(ITEMS) if not bad & set(item_attrs(k))]

    def prompt(self) -> list[int]:
        return encode(["<bos>", self.topic, "no:", self.explicit, "value:", self.value, "<sep>"])

    def row(self) -> dict:
        return {
            "id": self.id,
            "topic": self.topic,
            "explicit": self.explicit,
            "value": self.value,
            "implicit": self.implicit,
            "risk": self.risk or "none",
            "gold_item": self.valid_items()[0] if self.valid_items() else None,
            "n_valid": len(self.valid_items()),
        }


def pair_of(row: dict) -> Pair:
    for key in ("id", "topic", "explicit", "value"):
        if key not in row:
            raise DataError(f"cdra pair row: missing field {key!r}")
    if row["value"] not in RULES:
        raise DataError(f"cdra pair {row['id']}: unknown value {row['value']!r}")
    if row["explicit"] not in ATTRS or row["topic"] not in TOPICS:
        raise DataError(f"cdra pair {row['id']}: unknown explicit {row['explicit']!r} or topic {row['topic']!r}")
    return Pair(str(row["id"]), row["topic"], row["explicit"], row["value"])


def make_pairs(per_topic: int, seed: int) -> list[Pair]:
    """``per_topic`` pairs for each of the 20 topics (the card: 150, so 3,000); the explicit constraint is never
    one the value already implies, and every pair has at least one valid item."""
    if per_topic < 1:
        raise ParamsError(f"cdra.data.per_topic must be >= 1, got {per_topic}")
    rng = np.random.default_rng(seed)
    pairs = []
    for topic in TOPICS:
        n = 0
        while n < per_topic:
            value = VALUES[rng.integers(len(VALUES))]
            implied = {RULES[value][0], RULES[value][1]}
            explicit = ATTRS[rng.integers(len(ATTRS))]
            if explicit in implied:
                continue
            p = Pair(f"{topic}-{n:03d}", topic, explicit, value)
            if not p.valid_items():
                continue
            pairs.append(p)
            n += 1
    return pairs


def chain_words(explicit: str, implicit: str, risk: str, item: str) -> list[str]:
    return [
        "Step",
        "1:",
        "(explicit)",
        "avoid",
        explicit,
        "Step",
        "2:",
        "(implicit)",
        "avoid",
        implicit,
        "Step",
        "3:",
        "(risk)",
        "avoid",
        risk,
        "Answer:",
        item,
    ]


def slip_rate(value: str, noise: float) -> float:
    """How often the SFT chains of a user with this value get the implicit (and risk) step wrong: spread over the
    values from about 0 to about 2 x ``noise`` (capped at 0.95), so the SFT policy infers some values' implicit
    constraints and, greedily, gets the others wrong (a systematic misconception, not random noise)."""
    v = VALUES.index(value)
    return float(min(0.95, 2 * noise * (v + 0.5) / len(VALUES)))


# The surface reading of each value (the misconception the noisy chains carry): a plausible but wrong attribute.
DISTRACTOR = {
    "vegan": "nuts",
    "recovering_from_surgery": "late",
    "pregnant": "spicy",
    "saving_money": "late",
    "early_riser": "crowded",
    "introvert": "outdoor",
    "heart_condition": "alcohol",
    "sober_living": "crowded",
    "asthma": "spicy",
    "halal_diet": "dairy",
}


def noisy_chain(p: Pair, rng: np.random.Generator, noise: float) -> list[int]:
    """A chain as a weaker model would write it (the RFT stand-in's data). With probability
    :func:`slip_rate` the implicit step names the value's surface reading (:data:`DISTRACTOR`) and, on its own
    draw, the risk step says "none" (the risk missed); the explicit step slips to a random attribute with
    probability noise / 4. The answer is an item that avoids what the chain *says*, so a slipped step carries
    into the answer."""
    q = slip_rate(p.value, noise)
    e = ATTRS[rng.integers(len(ATTRS))] if rng.random() < noise / 4 else p.explicit
    i = DISTRACTOR[p.value] if rng.random() < q else p.implicit
    r = "none" if rng.random() < q else (p.risk or "none")
    said = {e, i} | ({r} if r != "none" else set())
    ok = [it for k, it in enumerate(ITEMS) if not said & set(item_attrs(k))]
    item = ok[rng.integers(len(ok))] if ok else ITEMS[rng.integers(N_ITEMS)]
    return encode(chain_words(e, i, r, item)) + [EOS]


def corrupt(ids: list[int], rng: np.random.Generator) -> list[int]:
    """A damaged response, so the PRMs also learn what a malformed step scores (RL drifts there): one token
    dropped, replaced by a random task word, two tokens swapped, or the response cut short (eos)."""
    ids = list(ids)
    if len(ids) < 2:
        return ids
    kind = rng.integers(4)
    j = int(rng.integers(len(ids) - 1))
    if kind == 0:
        del ids[j]
    elif kind == 1:
        pool = ATTRS + ITEMS + ("avoid", "Step", "Answer:", "none")
        ids[j] = ID[pool[rng.integers(len(pool))]]
    elif kind == 2:
        ids[j], ids[j + 1] = ids[j + 1], ids[j]
    else:
        ids = ids[: j + 1] + [EOS]
    return ids


def gold_chain(p: Pair, item_index: int = 0) -> list[int]:
    return encode(chain_words(p.explicit, p.implicit, p.risk or "none", p.valid_items()[item_index])) + [EOS]


# --- step splitting (as the official CDPATrainer: "Step k:" markers, the first consecutive run 1, 2, 3; the last
# --- step runs to the end of the completion, so "Answer: item" belongs to the risk step) ----------------------


def split_steps(ids: list[int], max_steps: int = N_STEPS) -> list[tuple[int, int]]:
    """Token spans [start, end) of the first consecutive "Step 1:", "Step 2:", ... segments of a completion.

    As the official trainer: the first run of consecutive markers 1, 2, ... (a "Step 1:" seen again before the
    run started restarts it; no run: the first markers), each step up to the next one's marker. We differ at
    the ends: the first step starts at the completion's first token and the last one runs to its end (eos
    included), so no token is left unscored; with unscored tokens the policy learned to stop before a step that
    would score -1 (measured: the score-only arm collapsed to answerless responses). No marker at all: the whole
    completion is one segment, scored as step 1 (the official fallback).
    """
    marks = [
        (t, STEP_NUM.index(ids[t + 1]) + 1) for t in range(len(ids) - 1) if ids[t] == STEP and ids[t + 1] in STEP_NUM
    ]
    if not marks:
        return [(0, len(ids))] if ids else []
    run: list[int] = []
    expected = 1
    for pos, k in marks:
        if k == expected:
            run.append(pos)
            expected += 1
            if len(run) == max_steps:
                break
        elif k == 1 and not run:
            run, expected = [pos], 2
    if not run:
        run = [pos for pos, _ in marks[:max_steps]]
    starts = [0, *run[1:]]
    ends = [*run[1:], len(ids)]
    return list(zip(starts, ends))


def _said(seg: list[str], step: int) -> str | None:
    """The attribute step ``step`` (0-based) names, or None when the segment is malformed: it must read exactly
    "Step k: (kind) avoid X", and the last (risk) step may only go on with "Answer: item" (and eos)."""
    head = ["Step", f"{step + 1}:", STEP_KIND[min(step, N_STEPS - 1)], "avoid"]
    if len(seg) < 5 or seg[:4] != head or seg[4] not in ATTRS + ("none",):
        return None
    rest = seg[5:]
    if step < N_STEPS - 1:
        return seg[4] if not rest else None
    if rest[:1] == ["Answer:"] and len(rest) >= 2 and rest[1] in ITEMS and rest[2:] in ([], ["<eos>"]):
        return seg[4]
    return None


def answer_of(ids: list[int]) -> str | None:
    words = decode(ids)
    if "Answer:" in words:
        j = words.index("Answer:")
        if j + 1 < len(words) and words[j + 1] in ITEMS:
            return words[j + 1]
    return None


def judge(p: Pair, ids: list[int]) -> dict:
    """The mini protocol's exact judge of a whole completion: explicit met, implicit met (the implicit and, for
    risk rules, the risk constraint both avoided by the answer), valid item, Acc_PF = all three, and the Acc_DA
    stand-in = implicit met with a correct implicit step (the rationale); also whether the implicit and the risk
    steps name the right constraints (the inference itself)."""
    item = answer_of(ids)
    valid = item is not None
    attrs = set(item_attrs(ITEMS.index(item))) if valid else set()
    explicit_ok = valid and p.explicit not in attrs
    implicit_set = {p.implicit} | ({p.risk} if p.risk else set())
    implicit_ok = valid and not implicit_set & attrs
    spans = split_steps(ids)
    words = decode(ids)
    step2 = _said(words[spans[1][0] : spans[1][1]], 1) if len(spans) > 1 else None
    step3 = _said(words[spans[2][0] : spans[2][1]], 2) if len(spans) > 2 else None
    return {
        "implicit_step": bool(step2 == p.implicit),
        "risk_step": bool(step3 == (p.risk or "none")),
        "valid": bool(valid),
        "explicit": bool(explicit_ok),
        "implicit": bool(implicit_ok),
        "pf": bool(valid and explicit_ok and implicit_ok),
        "da": bool(implicit_ok and step2 == p.implicit),
    }


@dataclass(frozen=True)
class Critique:
    tokens: list[int]  # the critique in the PRM's token form (without the score)
    text: str  # the same critique in words
    score: int  # in {-1, 0, 1}


def critic(p: Pair, ids: list[int], step: int, span: tuple[int, int]) -> Critique:
    """The rule critic on step ``step`` (0-based) whose tokens are ``ids[span[0]:span[1]]``.

    A malformed step (not exactly "Step k: (kind) avoid X", or anything after it but the risk step's
    "Answer: item") scores -1: it cannot lead to a sound recommendation. Steps 1 and 2: +1 when the step names
    the right constraint, -1 otherwise. Step 3 (risk, with the answer): +1 when the risk is right and the answer
    avoids every true constraint, -1 when the answer is missing or violates one, 0 when the answer is fine but
    the risk named is wrong.
    """
    seg = decode(ids[span[0] : span[1]])
    k = min(step, N_STEPS - 1)
    kind = STEP_KIND[k]
    truth = (p.explicit, p.implicit, p.risk or "none")[k]
    got = _said(seg, step) if step < N_STEPS else None
    named = "expected " + truth + ", got " + (got or "a malformed step")
    words = ["expected", truth, "got", got or "none"]
    if step < N_STEPS - 1:
        score = 1 if got == truth else -1
        words.append("ok" if score == 1 else "bad")
        reason = "the step states the constraint" if score == 1 else "the step misses the constraint"
        text = f"**Reasoning:** {kind[1:-1]} constraint: {named}; {reason}."
        return Critique(encode(words), text, score)
    item = answer_of(ids[span[0] : span[1]]) if got is not None else None
    attrs = list(item_attrs(ITEMS.index(item))) if item else []
    item_ok = item is not None and not p.avoid() & set(attrs)
    words += ["has", *attrs] if item else ["has", "none"]
    if not item_ok:
        score = -1
    elif got == truth:
        score = 1
    else:
        score = 0
    words.append("ok" if score == 1 else "bad")
    text = (
        f"**Reasoning:** risk: {named}; the answer {item or 'is missing'}"
        + (f" has {', '.join(attrs)}" if attrs else "")
        + ("; it avoids every constraint." if item_ok else "; it breaks a constraint.")
    )
    return Critique(encode(words), text, score)


def step_scores(p: Pair, ids: list[int]) -> tuple[list[tuple[int, int]], list[int]]:
    """The spans of a completion's steps and the rule critic's score of each (the "true rule" PRM)."""
    spans = split_steps(ids)
    return spans, [critic(p, ids, j, s).score for j, s in enumerate(spans)]
