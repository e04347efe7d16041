"""The synthetic couplet languages of the control models, their word-level tokenizer, and the trainer.

A sequence is ``<bos> couplet: \\n line1 \\n line2 \\n``; a rhyme word is two tokens,
onset and rime. Line 1 is 2-3 filler words and a rhyme word of family f.
Line 2 is one filler word, an article, an adjective and another rhyme word of the same family f.

- **positive** language: the article is fixed by the final word ("an" before a vowel-initial word, "a" otherwise).
  In line 2, half the families have vowel-initial words only, half consonant-initial only; in line 1 every family
  takes both kinds of onset. So the article of line 2 is told by line 1's rime alone, and a model that writes the
  right article has to know, before it writes it, which family ends the line: planning is required.
- **negative** language: the same lines with the article drawn at random (no article dependency): the article
  carries no information about the final word, so steering the plan cannot move it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from components.errors import ParamsError
from components.models.tiny_lm import TinyLM, TinyLMConfig, swiglu_width

SPECIALS = ("<pad>", "<bos>", "\n", "couplet:")
PAD, BOS, NL, HEAD = 0, 1, 2, 3
RIMES = ("ight", "ake", "oat", "ing", "air", "ip", "ee", "it")
CONSONANT_ONSETS = ("b", "d", "f", "g", "l", "m", "n", "p", "r", "s", "t", "w")
VOWEL_ONSETS = ("a", "e", "i", "o", "u", "ou", "ea")
FILLERS = (
    "the",
    "old",
    "wind",
    "was",
    "we",
    "saw",
    "and",
    "then",
    "there",
    "by",
    "in",
    "with",
    "under",
    "over",
    "so",
    "they",
    "found",
    "heard",
    "near",
    "through",
    "all",
    "came",
    "past",
    "still",
)
ADJECTIVES = ("quiet", "bright", "small", "grey", "tall", "soft", "cold", "strange")
LANGUAGES = ("positive", "negative")


@dataclass(frozen=True)
class CoupletLanguage:
    """Families, words and vocabulary of the control language; ``words_per_family`` words per rime."""

    words_per_family: int = 5
    n_families: int = 8

    def __post_init__(self) -> None:
        if not 2 <= self.n_families <= len(RIMES) or self.n_families % 2:
            raise ParamsError(f"n_families must be even and in 2..{len(RIMES)}, got {self.n_families}")
        if not 2 <= self.words_per_family <= len(VOWEL_ONSETS):
            raise ParamsError(f"words_per_family must be in 2..{len(VOWEL_ONSETS)}, got {self.words_per_family}")

    @property
    def families(self) -> tuple[str, ...]:
        return RIMES[: self.n_families]

    def article_of_family(self, family: str) -> str:
        """Families in the first half take consonant-initial words ("a"), the rest vowel-initial ones ("an")."""
        return "a" if self.families.index(family) < self.n_families // 2 else "an"

    def words(self, family: str) -> tuple[str, ...]:
        onsets = CONSONANT_ONSETS if self.article_of_family(family) == "a" else VOWEL_ONSETS
        return tuple(o + family for o in onsets[: self.words_per_family])

    def line1_words(self, family: str) -> tuple[str, ...]:
        """Line-1 rhyme words take vowel and consonant onsets alike, so only the rime tells the family (and hence
        line 2's article): the onset is no shortcut."""
        n = self.words_per_family
        return tuple(o + family for o in (*CONSONANT_ONSETS[:n], *VOWEL_ONSETS[:n]))

    @property
    def family_of(self) -> dict[str, str]:
        return {w: f for f in self.families for w in (*self.line1_words(f), *self.words(f))}

    @property
    def vocab(self) -> tuple[str, ...]:
        """Tokens: a rhyme word is two tokens, onset ``"b-"`` and rime ``"-ight"`` (a shared suffix token, as in
        BPE): the rime token names the family."""
        onsets = [o + "-" for o in (*CONSONANT_ONSETS, *VOWEL_ONSETS)]
        rimes = ["-" + f for f in self.families]
        return (*SPECIALS, *FILLERS, *ADJECTIVES, "a", "an", *onsets, *rimes)

    def split(self, word: str) -> list[str]:
        """A rhyme word as its onset and rime tokens; any other word as itself."""
        fam = self.family_of.get(word)
        return [word[: -len(fam)] + "-", "-" + fam] if fam else [word]

    def encode(self, words: Sequence[str]) -> list[int]:
        index = {w: i for i, w in enumerate(self.vocab)}
        toks = [t for w in words for t in self.split(w)]
        unknown = [t for t in toks if t not in index]
        if unknown:
            raise ParamsError(f"couplet tokens: unknown words {unknown[:5]}")
        return [index[t] for t in toks]

    def decode(self, ids: Sequence[int]) -> list[str]:
        """Words (onset + rime joined back into one word); a dangling onset or rime stays a token of its own."""
        toks = [self.vocab[i] for i in ids]
        words: list[str] = []
        for t in toks:
            if t.startswith("-") and words and words[-1].endswith("-") and len(words[-1]) > 1:
                words[-1] = words[-1][:-1] + t[1:]
            else:
                words.append(t)
        return words

    # ------------------------------------------------------------------ sampling
    def line1(self, family: str, rng: random.Random) -> list[str]:
        return [rng.choice(FILLERS) for _ in range(rng.randint(2, 3))] + [rng.choice(self.line1_words(family))]

    def line2(self, family: str, language: str, rng: random.Random) -> list[str]:
        if language not in LANGUAGES:
            raise ParamsError(f"language must be one of {LANGUAGES}, got {language!r}")
        word = rng.choice(self.words(family))
        article = ("an" if word[0] in "aeiou" else "a") if language == "positive" else rng.choice(("a", "an"))
        filler = [rng.choice(FILLERS)]
        return [*filler, article, rng.choice(ADJECTIVES), word]

    def prompt(self, line1: Sequence[str]) -> list[int]:
        """Ids of ``<bos> couplet: \\n line1 \\n``: the newline is the last token, line 1's word the one before."""
        return [BOS, HEAD, NL, *self.encode(line1), NL]

    def sequence(self, family: str, language: str, rng: random.Random) -> list[int]:
        return [*self.prompt(self.line1(family, rng)), *self.encode(self.line2(family, language, rng)), NL]

    def corpus(self, n: int, language: str, seed: int) -> list[list[int]]:
        rng = random.Random(seed)
        return [self.sequence(rng.choice(self.families), language, rng) for _ in range(n)]

    def first_lines(self, family: str, n: int, rng: random.Random, exclude: set[str] = frozenset()) -> list[str]:
        """``n`` distinct first lines of ``family`` (space-joined), none in ``exclude``."""
        out: list[str] = []
        seen = set(exclude)
        for _ in range(200 * n):
            line = " ".join(self.line1(family, rng))
            if line not in seen:
                seen.add(line)
                out.append(line)
                if len(out) == n:
                    return out
        raise ParamsError(f"cannot draw {n} distinct first lines of family {family!r}")


def _nth(seq: Sequence[int], token: int, n: int) -> int:
    """Index of the ``n``-th occurrence (1-based) of ``token`` in ``seq``."""
    hits = [i for i, t in enumerate(seq) if t == token]
    return hits[n - 1]


def control_config(lang: CoupletLanguage, *, d_model: int = 128, n_layers: int = 4) -> TinyLMConfig:
    return TinyLMConfig(
        vocab_size=len(lang.vocab),
        d_model=d_model,
        n_layers=n_layers,
        n_heads=4,
        d_ff=swiglu_width(d_model),
        max_seq_len=32,
    )


def train_control(
    lang: CoupletLanguage,
    language: str,
    *,
    seed: int,
    steps: int,
    batch_size: int = 64,
    lr: float = 3e-3,
    n_sequences: int = 20000,
    d_model: int = 128,
    n_layers: int = 4,
    line2_only: bool = True,
) -> tuple[TinyLM, list[float]]:
    """Train a control model on ``language``; returns the model (eval mode) and the loss of every step.

    With ``line2_only`` the loss covers line 2 only (the model is a couplet *continuer*): line 1's random fillers
    would otherwise dominate the loss and delay learning the line-1 -> line-2 dependency.
    """
    if steps < 1:
        raise ParamsError(f"steps must be >= 1, got {steps}")
    data = lang.corpus(n_sequences, language, seed)
    width = max(len(s) for s in data)
    ids = torch.full((len(data), width), PAD, dtype=torch.long)
    line2 = torch.zeros((len(data), width), dtype=torch.bool)  # tokens of line 2 (and its closing newline)
    for i, s in enumerate(data):
        ids[i, : len(s)] = torch.as_tensor(s)
        line2[i, _nth(s, NL, 2) + 1 : len(s)] = True
    model = TinyLM(control_config(lang, d_model=d_model, n_layers=n_layers), seed=seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    gen = torch.Generator().manual_seed(seed)
    warm = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warm) * max(0.1, 1 - s / steps))
    losses = []
    model.train()
    for _ in range(steps):
        pick = torch.randint(len(data), (batch_size,), generator=gen)
        batch = ids[pick]
        logits, _ = model(batch[:, :-1])
        keep = line2[pick, 1:] if line2_only else batch[:, 1:] != PAD
        targets = batch[:, 1:].masked_fill(~keep, -100)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-100)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    return model.eval(), losses
