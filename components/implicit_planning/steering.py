"""Mean-difference steering at the end of line 1 and the paper's forward/backward planning metrics.

Method (card section "Method", following the paper's released ``paper_experiments/shared_utils.py`` as described
there): ``s = m * (mean_{RF2, train} x_pos^(l) - mean_{RF1, train} x_pos^(l))`` from *training* prompts only, added
to the residual stream at one position (the newline after line 1, or line 1's last token) of a *test* prompt whose
line 1 ends in family RF1; line 2 is then sampled. Baselines: the same sampling unsteered, and with a random
direction of the same norm as ``s`` (the equal-norm random control).

Metrics per generated line 2 (one row per prompt x sample x condition):

- ``rf2``: the final word is in family RF2 (forward planning: steered rate minus unsteered rate);
- ``regen_rf2``: with the final word dropped, regenerating it *unsteered* from line 1 + the rest of line 2 still
  lands in RF2 (backward planning: the intermediate tokens carry the plan);
- ``kl_share``: share of the pre-rhyme positions of line 2 where KL(steered || unsteered) > 1 (nats), both
  distributions taken on the same (steered) prefix;
- ``first_div``: index of the first pre-rhyme position whose top-1 token differs between steered and unsteered,
  divided by the number of pre-rhyme positions (1.0 when none differs);
- ``article``: the article before the final word when there is one (control language / QA);
- ``kl_pos``: the largest KL(steered || unsteered) from the steered position up to the last pre-rhyme position:
  whether the intervention moved the model's next-token distributions at all (the testability precondition
  "mechanism engaged": a vector that moves nothing cannot test planning). ``kl_at_pos`` is the KL at the steered
  position itself (the hook engages there or nowhere).

The multiplier ``m`` and the layer are chosen together on training prompts by the logit metric
(:func:`choose_layer_and_multiplier`), never on test lines.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

from components.errors import ParamsError
from components.interp.lm import Steer, SteerableLM


def mean_difference(acts_from: torch.Tensor, acts_to: torch.Tensor, multiplier: float) -> torch.Tensor:
    """``m * (mean(acts_to) - mean(acts_from))`` over rows: the steering vector from family RF1 to RF2."""
    if acts_from.ndim < 2 or acts_to.ndim < 2 or len(acts_from) == 0 or len(acts_to) == 0:
        raise ParamsError("steering vector: both training sets need at least one activation row")
    return float(multiplier) * (acts_to.mean(0) - acts_from.mean(0))


def random_like(vector: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """A uniformly random direction with the same L2 norm as ``vector`` (the equal-norm random control)."""
    r = torch.randn(vector.shape, generator=generator, dtype=torch.float32)
    return r / r.norm() * vector.norm()


def kl_rows(logp_p: torch.Tensor, logp_q: torch.Tensor) -> torch.Tensor:
    """KL(p || q) per row, from log-probabilities (natural log)."""
    return (logp_p.exp() * (logp_p - logp_q)).sum(-1)


def first_divergence(top_steered: Sequence[int], top_plain: Sequence[int]) -> float:
    """Index of the first differing top-1 token over the number of positions; 1.0 when none differs."""
    n = len(top_steered)
    if n == 0:
        return math.nan
    for i, (a, b) in enumerate(zip(top_steered, top_plain, strict=True)):
        if a != b:
            return i / n
    return 1.0


@dataclass
class Line2:
    """A decoded line 2: its tokens (stop excluded), final word, index of the final word's first token, article."""

    tokens: list[int]
    text: str
    final_word: str | None
    final_start: int  # tokens[:final_start] are the pre-rhyme tokens
    article: str | None
    final_tokens: int = 1  # how many tokens the final word spans (the tokenisation confound)


@dataclass
class CoupletTask:
    """How one model family writes and reads couplets: prompt ids, steering position, decoding, family test."""

    prompt_ids: Callable[[str], list[int]]
    parse: Callable[[list[int]], Line2]
    family_of: Callable[[str], str | None]  # the family (of the pair) a final word belongs to, or None
    family_tokens: Callable[[str], list[int]]  # first tokens of the family's words (for the logit metric)
    stop_ids: Sequence[int]
    position: str = "newline"  # or "last": line 1's last token
    metric_last: bool = False  # logit metric at the final word's last token (the rime token) instead of its first

    def steer_position(self, ids: Sequence[int]) -> int:
        if self.position == "newline":
            return len(ids) - 1
        if self.position == "last":
            return len(ids) - 2
        raise ParamsError(f"position must be 'newline' or 'last', got {self.position!r}")


@dataclass
class PairResult:
    rows: list[dict] = field(default_factory=list)
    layer_scores: dict[int, float] = field(default_factory=dict)  # at the chosen multiplier
    layer: int = -1
    norm: float = 0.0
    multiplier: float = 1.0
    grid: dict[tuple[float, int], float] = field(default_factory=dict)  # (m, layer) -> logit metric


def steering_vectors(
    lm: SteerableLM,
    task: CoupletTask,
    lines_from: Sequence[str],
    lines_to: Sequence[str],
    layers: Sequence[int],
    multiplier: float,
) -> dict[int, torch.Tensor]:
    """One mean-difference vector per layer, from the two families' training first lines."""
    acts = {}
    for name, lines in (("from", lines_from), ("to", lines_to)):
        ids = [task.prompt_ids(x) for x in lines]
        acts[name] = lm.read(ids, layers, [task.steer_position(i) for i in ids])
    return {int(layer): mean_difference(acts["from"][k], acts["to"][k], multiplier) for k, layer in enumerate(layers)}


def family_logmass(lp: torch.Tensor, tokens: Sequence[int]) -> torch.Tensor:
    return torch.logsumexp(lp[..., list(tokens)], dim=-1)


def layer_scores(
    lm: SteerableLM, task: CoupletTask, lines: Sequence[str], vectors: dict[int, torch.Tensor], rf1: str, rf2: str
) -> dict[int, float]:
    """The card's logit metric per layer (or per ``(m, layer)`` key), on training prompts of RF1.

    Line 2 is the unsteered greedy continuation with its final word dropped; at the final word's position the score
    is ``log mass(RF2 tokens) - log mass(RF1 tokens)``, steered minus unsteered, averaged over prompts. The tokens
    are the families' one-token words (real tokenizer) or, with ``task.metric_last``, their rime tokens, read at the
    word's last token (control language, whose article already fixes the onset class).
    """
    prompts = [task.prompt_ids(x) for x in lines]
    gens = lm.generate(prompts, max_new_tokens=16, stop_ids=task.stop_ids, temperature=0.0)
    seqs, where = [], []
    for p, g in zip(prompts, gens, strict=True):
        line = task.parse(g)
        cut = line.final_start + (line.final_tokens - 1 if task.metric_last else 0)
        seqs.append(p + line.tokens[:cut])
        where.append(len(seqs[-1]) - 1)
    t1, t2 = task.family_tokens(rf1), task.family_tokens(rf2)

    def score(steer: Steer | None) -> torch.Tensor:
        lps = lm.logprobs(seqs, steer)
        last = torch.stack([lp[w] for lp, w in zip(lps, where, strict=True)])
        return family_logmass(last, t2) - family_logmass(last, t1)

    base = score(None)
    pos = [task.steer_position(p) for p in prompts]

    def layer_of(key) -> int:
        return int(key[1]) if isinstance(key, tuple) else int(key)

    return {key: float((score(Steer(layer_of(key), v, pos)) - base).mean()) for key, v in vectors.items()}


def choose_layer_and_multiplier(
    lm: SteerableLM,
    task: CoupletTask,
    lines: Sequence[str],
    unit: dict[int, torch.Tensor],
    rf1: str,
    rf2: str,
    multipliers: Sequence[float],
) -> dict[tuple[float, int], float]:
    """The logit metric (:func:`layer_scores`) for every (m, layer) of the sweep, on training prompts: ``unit`` holds
    the plain mean differences (m = 1); the caller takes the argmax. A dev choice, made before any test line is
    generated."""
    if not multipliers or any(m <= 0 for m in multipliers):
        raise ParamsError(f"multipliers: need at least one positive value, got {list(multipliers)}")
    vectors = {(float(m), int(k)): float(m) * v for m in multipliers for k, v in unit.items()}
    return layer_scores(lm, task, lines, vectors, rf1, rf2)  # keys (m, layer): one greedy pass serves the grid


def generate_rows(
    lm: SteerableLM,
    task: CoupletTask,
    lines: Sequence[str],
    steer_vec: torch.Tensor | None,
    layer: int,
    *,
    samples: int,
    max_new_tokens: int,
    temperature: float,
    seed: int,
    batch_size: int,
) -> list[tuple[int, int, list[int], Line2]]:
    """Sample ``samples`` line 2s per test prompt (steered when ``steer_vec`` is given); batched.

    The sampling generator is seeded by ``seed`` alone, so the steered, unsteered and random conditions share their
    random numbers (common random numbers: paired comparisons).
    """
    items = [(i, s) for i in range(len(lines)) for s in range(samples)]
    gen = torch.Generator().manual_seed(int(seed))
    out = []
    for start in range(0, len(items), batch_size):
        chunk = items[start : start + batch_size]
        prompts = [task.prompt_ids(lines[i]) for i, _ in chunk]
        steer = None if steer_vec is None else Steer(layer, steer_vec, [task.steer_position(p) for p in prompts])
        new = lm.generate(
            prompts,
            max_new_tokens=max_new_tokens,
            stop_ids=task.stop_ids,
            steer=steer,
            temperature=temperature,
            generator=gen,
        )
        out += [(i, s, p, task.parse(n)) for (i, s), p, n in zip(chunk, prompts, new, strict=True)]
    return out


def backward_metrics(
    lm: SteerableLM,
    task: CoupletTask,
    gens: list[tuple[int, int, list[int], Line2]],
    steer_vec: torch.Tensor | None,
    layer: int,
    *,
    kl_threshold: float,
    batch_size: int,
) -> list[tuple[float, float, int, float, float]]:
    """Per generation: (share of pre-rhyme positions with KL(steered||unsteered) > threshold, first top-1 divergence,
    number of pre-rhyme positions, KL at the steered position, largest KL from the steered position to the last
    pre-rhyme position); NaNs when the condition is unsteered (the first two also when line 2 has no pre-rhyme
    token)."""
    if steer_vec is None:
        return [(math.nan, math.nan, g[3].final_start, math.nan, math.nan) for g in gens]
    out = []
    for start in range(0, len(gens), batch_size):
        chunk = gens[start : start + batch_size]
        seqs = [p + line.tokens[: line.final_start] for _, _, p, line in chunk]
        pos = [task.steer_position(p) for _, _, p, _ in chunk]
        steered = lm.logprobs(seqs, Steer(layer, steer_vec, pos))
        plain = lm.logprobs(seqs)
        for (_, _, p, line), a, b, q in zip(chunk, steered, plain, pos, strict=True):
            k = line.final_start
            moved = kl_rows(a[q : len(p) - 1 + max(k, 1)], b[q : len(p) - 1 + max(k, 1)])
            at_pos, most = float(moved[0]), float(moved.max())
            if k == 0 or line.final_word is None:
                out.append((math.nan, math.nan, k, at_pos, most))
                continue
            sl = slice(len(p) - 1, len(p) - 1 + k)  # positions that predict the pre-rhyme tokens
            kl = kl_rows(a[sl], b[sl])
            out.append(
                (
                    float((kl > kl_threshold).float().mean()),
                    first_divergence(a[sl].argmax(-1).tolist(), b[sl].argmax(-1).tolist()),
                    k,
                    at_pos,
                    most,
                )
            )
    return out


def regenerate(
    lm: SteerableLM,
    task: CoupletTask,
    gens: list[tuple[int, int, list[int], Line2]],
    *,
    temperature: float,
    seed: int,
    batch_size: int,
    max_new_tokens: int,
) -> list[str | None]:
    """Drop each line 2's final word and regenerate the rest of the line unsteered; its final word (or None)."""
    gen = torch.Generator().manual_seed(int(seed) + 7919)
    out: list[str | None] = []
    for start in range(0, len(gens), batch_size):
        chunk = gens[start : start + batch_size]
        seqs = [p + line.tokens[: line.final_start] for _, _, p, line in chunk]
        new = lm.generate(
            seqs, max_new_tokens=max_new_tokens, stop_ids=task.stop_ids, temperature=temperature, generator=gen
        )
        for (_, _, _, line), n in zip(chunk, new, strict=True):
            if line.final_word is None:
                out.append(None)
                continue
            regen = task.parse(line.tokens[: line.final_start] + n)
            out.append(regen.final_word)
    return out


def run_pair(
    lm: SteerableLM,
    task: CoupletTask,
    *,
    rf1: str,
    rf2: str,
    train_from: Sequence[str],
    train_to: Sequence[str],
    select_lines: Sequence[str],
    test_lines: Sequence[str],
    layers: Sequence[int],
    multiplier: float,
    samples: int,
    max_new_tokens: int,
    temperature: float,
    seed: int,
    batch_size: int,
    kl_threshold: float = 1.0,
    layer: int | None = None,
    multipliers: Sequence[float] | None = None,
) -> PairResult:
    """The whole experiment for one family pair RF1 -> RF2 and one sampling seed: vectors from training lines,
    layer (and, given ``multipliers``, the multiplier m) chosen on ``select_lines`` (training prompts of RF1) unless
    ``layer`` is given (then ``multiplier`` is used as is), then steered / unsteered / random generations on the test
    lines with every metric."""
    if set(test_lines) & (set(train_from) | set(train_to) | set(select_lines)):
        raise ParamsError("test lines overlap the training lines: steering vectors must come from training prompts")
    unit = steering_vectors(lm, task, train_from, train_to, layers, 1.0)
    res = PairResult(multiplier=float(multiplier))
    if layer is None:
        res.grid = choose_layer_and_multiplier(lm, task, select_lines, unit, rf1, rf2, multipliers or [multiplier])
        res.multiplier, layer = max(res.grid, key=res.grid.get)
        res.layer_scores = {k: v for (m, k), v in res.grid.items() if m == res.multiplier}
    vec = res.multiplier * unit[int(layer)]
    res.layer, res.norm = int(layer), float(vec.norm())
    rnd = random_like(vec, torch.Generator().manual_seed(10_000 + int(seed)))
    kw = dict(samples=samples, max_new_tokens=max_new_tokens, temperature=temperature, seed=seed, batch_size=batch_size)
    for condition, v in (("unsteered", None), ("steered", vec), ("random", rnd)):
        gens = generate_rows(lm, task, test_lines, v, res.layer, **kw)
        back = backward_metrics(lm, task, gens, v, res.layer, kl_threshold=kl_threshold, batch_size=batch_size)
        regen = regenerate(
            lm, task, gens, temperature=temperature, seed=seed, batch_size=batch_size, max_new_tokens=max_new_tokens
        )
        for (i, s, _, line), (kl_share, first_div, n_pre, kl_at, kl_pos), rw in zip(gens, back, regen, strict=True):
            fam = task.family_of(line.final_word) if line.final_word else None
            rfam = task.family_of(rw) if rw else None
            res.rows.append(
                {
                    "rf1": rf1,
                    "rf2": rf2,
                    "seed": int(seed),
                    "prompt": i,
                    "sample": s,
                    "condition": condition,
                    "line2": line.text,
                    "final_word": line.final_word,
                    "family": fam,
                    "rf2_hit": int(fam == rf2),
                    "rf1_hit": int(fam == rf1),
                    "regen_word": rw,
                    "regen_rf2": int(rfam == rf2),
                    "kl_share": kl_share,
                    "first_div": first_div,
                    "n_pre": n_pre,
                    "kl_at_pos": kl_at,
                    "kl_pos": kl_pos,
                    "multiplier": res.multiplier,
                    "article": line.article,
                    "final_tokens": line.final_tokens,
                    "layer": res.layer,
                }
            )
    return res


def question_position(tokenizer, ids: Sequence[int]) -> int:
    """Index of the question's last token: the last token that holds a "?" (else the prompt's last token)."""
    for i in range(len(ids) - 1, -1, -1):
        if "?" in tokenizer.decode([ids[i]]):
            return i
    return len(ids) - 1


def run_qa(
    lm: SteerableLM,
    tokenizer,
    nouns: Sequence[dict],
    *,
    layers: Sequence[int],
    multiplier: float,
    samples: int,
    temperature: float,
    seeds: Sequence[int],
    batch_size: int,
    prompt: str,
    multipliers: Sequence[float] | None = None,
) -> tuple[list[dict], dict[tuple[float, int], float], int]:
    """QA article flips. ``nouns`` come in consecutive pairs ``{"pair", "noun", "article", "questions"}``; each pair
    is run in both directions A -> B. The vector is ``m * (mean over B's training questions - mean over A's)`` at the
    question's end (all questions but the last are training questions); the test is A's last question. The layer
    is chosen once on training questions by the logit metric ``log p(B's article) - log p(A's article)`` at the
    answer's first token, steered minus unsteered; with ``multipliers``, m is chosen with it (the same sweep as the
    couplets). Returns (rows, scores per (m, layer), chosen layer); each row carries its m."""
    from components.implicit_planning.rhymes import article_initial

    enc = [
        [list(tokenizer(prompt.format(question=q), add_special_tokens=False)["input_ids"]) for q in n["questions"]]
        for n in nouns
    ]
    pos = [[question_position(tokenizer, ids) for ids in qs] for qs in enc]
    flat = [(k, j) for k in range(len(nouns)) for j in range(len(enc[k]))]
    acts = lm.read([enc[k][j] for k, j in flat], layers, [pos[k][j] for k, j in flat])  # (L, N, d)
    index = {kj: i for i, kj in enumerate(flat)}

    def train_mean(k: int) -> torch.Tensor:
        return acts[:, [index[(k, j)] for j in range(len(enc[k]) - 1)]].mean(1)  # (L, d)

    means = [train_mean(k) for k in range(len(nouns))]
    directions = [(k, k ^ 1) for k in range(len(nouns))]  # consecutive entries pair up: 0<->1, 2<->3, ...
    art_ids = {a: tokenizer(" " + a.capitalize(), add_special_tokens=False)["input_ids"][0] for a in ("a", "an")}

    # layer choice on training questions
    seqs, steer_pos, tgt_ids, src_ids, vec_rows = [], [], [], [], []
    for src, tgt in directions:
        for j in range(len(enc[src]) - 1):
            seqs.append(enc[src][j])
            steer_pos.append(pos[src][j])
            tgt_ids.append(art_ids[nouns[tgt]["article"]])
            src_ids.append(art_ids[nouns[src]["article"]])
            vec_rows.append((src, tgt))
    rows_idx = torch.arange(len(seqs))

    def margin(steer: Steer | None) -> torch.Tensor:
        out = []
        for start in range(0, len(seqs), batch_size):
            lps = lm.logprobs(
                seqs[start : start + batch_size],
                None
                if steer is None
                else Steer(
                    steer.layer, steer.vectors[start : start + batch_size], steer.positions[start : start + batch_size]
                ),
            )
            out += [lp[-1] for lp in lps]
        last = torch.stack(out)
        return last[rows_idx, tgt_ids] - last[rows_idx, src_ids]

    base = margin(None)
    scores = {}
    for m in multipliers or [multiplier]:
        for li, layer in enumerate(layers):
            vecs = torch.stack([m * (means[t][li] - means[s][li]) for s, t in vec_rows])
            scores[(float(m), int(layer))] = float((margin(Steer(int(layer), vecs, steer_pos)) - base).mean())
    multiplier, layer = max(scores, key=scores.get)
    li = list(layers).index(layer)

    rows = []
    for seed in seeds:
        gen_rnd = torch.Generator().manual_seed(20_000 + int(seed))
        items = []
        for src, tgt in directions:
            vec = multiplier * (means[tgt][li] - means[src][li])
            rnd = random_like(vec, gen_rnd)
            items += [(src, tgt, s, vec, rnd) for s in range(samples)]
        for condition in ("unsteered", "steered", "random"):
            gen = torch.Generator().manual_seed(int(seed))
            for start in range(0, len(items), batch_size):
                chunk = items[start : start + batch_size]
                prompts = [enc[s][-1] for s, *_ in chunk]
                steer = None
                if condition != "unsteered":
                    vecs = torch.stack([v if condition == "steered" else r for *_, v, r in chunk])
                    steer = Steer(layer, vecs, [pos[s][-1] for s, *_ in chunk])
                new = lm.generate(prompts, max_new_tokens=3, steer=steer, temperature=temperature, generator=gen)
                for (src, tgt, smp, _, _), n in zip(chunk, new, strict=True):
                    text = tokenizer.decode(n)
                    art = article_initial(text)
                    rows.append(
                        {
                            "seed": int(seed),
                            "pair": nouns[src]["pair"],
                            "src": nouns[src]["noun"],
                            "tgt": nouns[tgt]["noun"],
                            "src_article": nouns[src]["article"],
                            "tgt_article": nouns[tgt]["article"],
                            "sample": smp,
                            "condition": condition,
                            "answer": text,
                            "article": art,
                            "flip": int(art == nouns[tgt]["article"]),
                            "layer": layer,
                            "multiplier": multiplier,
                        }
                    )
    return rows, scores, layer
