"""The arithmetic RLVR task: prompts "a op b =" in difficulty tiers, a char vocabulary, exact-match reward.

Operands are right-aligned in fixed-width fields (``"  12+ 345="``), so every prompt has the same length and the
char-level policy sees digits at fixed positions. The answer is the exact integer followed by a newline (eos).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from components.errors import ParamsError

CHARS = "0123456789+-*= \n"
PAD, EOS = 0, 1 + CHARS.index("\n")
VOCAB = 1 + len(CHARS)
WIDTH = 4  # operand field width
# tier name -> (operator, digits of a, digits of b)
TIERS = (
    {f"add{d}": ("+", d, d) for d in range(1, 5)}
    | {f"sub{d}": ("-", d, d) for d in range(1, 5)}
    | {"mul1": ("*", 1, 1), "mul2x1": ("*", 2, 1), "mul2": ("*", 2, 2)}
)


def encode(text: str) -> list[int]:
    try:
        return [1 + CHARS.index(c) for c in text]
    except ValueError as exc:
        raise ParamsError(f"text {text!r} has a character outside the task's vocabulary") from exc


def decode(ids: list[int]) -> str:
    return "".join(CHARS[i - 1] for i in ids if 0 < i <= len(CHARS))


def prompt_text(a: int, op: str, b: int) -> str:
    return f"{a:>{WIDTH}}{op}{b:>{WIDTH}}="


def answer(a: int, op: str, b: int) -> int:
    return a + b if op == "+" else a - b if op == "-" else a * b


def _operand(rng: np.random.Generator, digits: int) -> int:
    return int(rng.integers(0 if digits == 1 else 10 ** (digits - 1), 10**digits))


@dataclass(frozen=True)
class Problem:
    id: str
    tier: str
    a: int
    op: str
    b: int

    @property
    def prompt(self) -> str:
        return prompt_text(self.a, self.op, self.b)

    @property
    def target(self) -> str:
        return str(answer(self.a, self.op, self.b))

    def row(self) -> dict:
        return {
            "id": self.id,
            "tier": self.tier,
            "a": self.a,
            "op": self.op,
            "b": self.b,
            "prompt": self.prompt,
            "target": self.target,
        }


def make_problems(n: int, tiers: dict[str, float], rng: np.random.Generator, prefix: str) -> list[Problem]:
    """``n`` problems drawn from ``tiers`` (name -> weight)."""
    unknown = sorted(set(tiers) - set(TIERS))
    if unknown:
        raise ParamsError(f"unknown tier(s) {unknown}; known: {sorted(TIERS)}")
    names = sorted(tiers)
    w = np.array([tiers[t] for t in names], float)
    picks = rng.choice(len(names), size=n, p=w / w.sum())
    out = []
    for k, ti in enumerate(picks):
        op, da, db = TIERS[names[ti]]
        a, b = _operand(rng, da), _operand(rng, db)
        if op == "-" and b > a:
            a, b = b, a  # non-negative differences keep answers short
        out.append(Problem(f"{prefix}{k}", names[ti], a, op, b))
    return out


def reward(target: str, completion: str) -> float:
    """Exact match: 1 iff the completion is the answer followed by eos."""
    return float(completion == target + "\n")


def corrupt(target: str, rng: np.random.Generator) -> str:
    """``target`` with one digit replaced by another (a slip in a worked example): same length, never equal to
    ``target``, no new leading zero in a multi-digit answer."""
    if not target.isdigit():
        raise ParamsError(f"corrupt: answer {target!r} is not a non-negative integer")
    i = int(rng.integers(len(target)))
    choices = [c for c in "0123456789" if c != target[i] and not (i == 0 and len(target) > 1 and c == "0")]
    return target[:i] + choices[int(rng.integers(len(choices)))] + target[i + 1 :]


def noisy_answers(rows: list[dict], share: float, rng: np.random.Generator) -> list[dict]:
    """SFT rows where each answer is, with probability ``share``, replaced by :func:`corrupt`'s slip; every row
    gets ``corrupted`` (bool) and keeps the true answer as ``answer``. The policy SFT'd on them samples slips on
    problems it has learnt, which RL with an exact-match reward can remove (the sharpening headroom RLVR needs)."""
    if not 0.0 <= share < 1.0:
        raise ParamsError(f"sft_noise: expected a share in [0, 1), got {share}")
    out = []
    for r in rows:
        hit = bool(rng.random() < share)
        out.append(
            {**r, "answer": r["target"], "target": corrupt(r["target"], rng) if hit else r["target"], "corrupted": hit}
        )
    return out


def sft_items(rows: list[dict]) -> list[tuple[list[int], int]]:
    """(prompt + answer + eos ids, answer start) pairs for answer-only SFT."""
    return [(encode(r["prompt"] + r["target"] + "\n"), len(r["prompt"])) for r in rows]
