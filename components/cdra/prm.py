"""Process reward models on the tiny-GPT backbone: Pers-GenPRM (critique, then score) and a score-only PRM.

Both read the user's preference (the prompt), the response up to and including the step being judged (earlier
steps as context, as the official trainer builds ``prompt + previous steps + step``), then ``<critique>``.
Pers-GenPRM is trained to write the rule critic's critique and then ``**SCORE:** s``; the score-only PRM writes
``**SCORE:** s`` at once. The SFT loss is the card's -sum_j [log p(c_j | ...) + log p(r_j | c_j, ...)]: the NLL of
the target tokens only. At scoring time each PRM decodes greedily from ``<critique>``: Pers-GenPRM reads its
score after *its own* critique (never the gold one); a missing or unreadable score is 0, the official fallback.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from components.cdra import task as T
from components.errors import ParamsError
from components.models.tiny_lm import TinyLM, TinyLMConfig
from components.rl_text.sampling import sample

CRITIQUE_MAX = 13  # longest target: expected a got b has w x y z ok **SCORE:** s <eos>
KINDS = ("genprm", "score_only")


@dataclass(frozen=True)
class StepQuery:
    """One step to score: the pair, the completion's token ids and the step's index and span."""

    pair: T.Pair
    ids: tuple[int, ...]
    step: int
    span: tuple[int, int]

    def context(self) -> list[int]:
        return self.pair.prompt() + list(self.ids[: self.span[1]]) + [T.CRITIQUE]


def queries_of(pair: T.Pair, ids: Sequence[int]) -> list[StepQuery]:
    ids = tuple(int(i) for i in ids)
    return [StepQuery(pair, ids, j, s) for j, s in enumerate(T.split_steps(list(ids)))]


def target(q: StepQuery, kind: str) -> list[int]:
    c = T.critic(q.pair, list(q.ids), q.step, q.span)
    head = c.tokens if kind == "genprm" else []
    return head + [T.SCORE, T.SCORE_TOKEN[c.score], T.EOS]


def sft_items(queries: Sequence[StepQuery], kind: str) -> list[tuple[list[int], int]]:
    """(input ids, where the target starts) for :func:`components.training.qa_lm.train_lm`."""
    if kind not in KINDS:
        raise ParamsError(f"cdra.prm kind {kind!r} is not one of {KINDS}")
    items = []
    for q in queries:
        ctx = q.context()
        items.append((ctx + target(q, kind), len(ctx)))
    return items


def new_backbone(d_model: int, n_layers: int, seed: int, max_len: int = 64) -> TinyLM:
    heads = 4 if d_model % 8 == 0 else 2
    return TinyLM(
        TinyLMConfig(
            vocab_size=T.VOCAB,
            d_model=d_model,
            n_layers=n_layers,
            n_heads=heads,
            d_ff=int(2.75 * d_model),
            max_seq_len=max_len,
        ),
        seed=seed,
    )


def parse_score(tokens: Sequence[int]) -> int:
    """The score after the first ``**SCORE:**`` token; 0 when there is none or it is unreadable."""
    toks = list(tokens)
    if T.SCORE in toks:
        j = toks.index(T.SCORE)
        if j + 1 < len(toks) and toks[j + 1] in T.TOKEN_SCORE:
            return T.TOKEN_SCORE[toks[j + 1]]
    return 0


@torch.no_grad()
def prm_generate(model, queries: Sequence[StepQuery], *, batch: int = 512) -> list[list[int]]:
    """Greedy PRM outputs (critique and score tokens), many steps per batch."""
    outs: list[list[int]] = []
    for i in range(0, len(queries), batch):
        chunk = queries[i : i + batch]
        ro = sample(
            model,
            [q.context() for q in chunk],
            [1] * len(chunk),
            max_new=CRITIQUE_MAX,
            eos=T.EOS,
            pad=T.PAD,
            temperature=0.0,
        )
        outs += [c[: int(m.sum())].tolist() for c, m in zip(ro.completions, ro.mask)]
    return outs


def prm_scores(model, queries: Sequence[StepQuery], *, batch: int = 512) -> list[int]:
    return [parse_score(o) for o in prm_generate(model, queries, batch=batch)]


def rule_scores(queries: Sequence[StepQuery]) -> list[int]:
    """The "true rule" PRM: the rule critic's score of every step."""
    return [T.critic(q.pair, list(q.ids), q.step, q.span).score for q in queries]


Scorer = Callable[[Sequence[StepQuery]], list[int]]


def model_scorer(model, batch: int = 512) -> Scorer:
    return lambda qs: prm_scores(model, qs, batch=batch)


def step_accuracy(pred: Sequence[int], gold: Sequence[int]) -> np.ndarray:
    """Per-step 0/1: the PRM's score equals the rule critic's."""
    if len(pred) != len(gold):
        raise ParamsError(f"{len(pred)} predicted step scores for {len(gold)} gold ones")
    return (np.asarray(pred) == np.asarray(gold)).astype(float)
