"""Batched LLM rewriting with a chat model (SmolLM2 by default).

Passages are first cleaned of markup (the template's :func:`clean_paragraphs`)
and then cut to ``max_input_tokens`` tokens of the passage itself (the
instruction is never cut), so generation cost stays bounded: the model then
rewrites only the head of a long document. Batches are left-padded, as
decoder-only generation needs. An output that hits ``max_new_tokens`` is cut
back to its last complete sentence. Greedy decoding (``temperature=0``) is
deterministic; sampling seeds torch's RNG from ``seed`` and the batch's texts
inside ``fork_rng``, so the same batch gives the same output in any run and
the caller's RNG state is left untouched.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from typing import Any

from components.data.rewrite.prompts import PROMPTS, build_messages, check_style, prompt_hash
from components.data.rewrite.template import clean_paragraphs
from components.errors import ParamsError

log = logging.getLogger(__name__)


class LLMRewriter:
    """Rewrite passages in one of :data:`PROMPTS`' styles with a causal chat LM."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        max_new_tokens: int = 256,
        batch_size: int = 4,
        temperature: float = 0.0,
        top_p: float = 0.95,
        seed: int = 0,
        max_input_tokens: int = 384,
        repetition_penalty: float = 1.1,
        name: str | None = None,
    ) -> None:
        for key, value in (
            ("max_new_tokens", max_new_tokens),
            ("batch_size", batch_size),
            ("max_input_tokens", max_input_tokens),
        ):
            if int(value) < 1:
                raise ParamsError(f"LLMRewriter {key} must be >= 1, got {value}")
        if temperature < 0:
            raise ParamsError(f"LLMRewriter temperature must be >= 0, got {temperature}")
        if getattr(tokenizer, "chat_template", None) is None:
            raise ParamsError(
                f"tokenizer of {name or _model_name(model)!r} has no chat template; use an instruct model"
            )
        self.model, self.tokenizer = model, tokenizer
        self.max_new_tokens, self.batch_size = int(max_new_tokens), int(batch_size)
        self.temperature, self.top_p, self.seed = float(temperature), float(top_p), int(seed)
        self.max_input_tokens, self.repetition_penalty = int(max_input_tokens), float(repetition_penalty)
        self.name = name or _model_name(model)

    @property
    def settings(self) -> dict:
        """Generation settings that change outputs: part of the rewrite cache key."""
        out = {
            "max_new_tokens": self.max_new_tokens,
            "max_input_tokens": self.max_input_tokens,
            "temperature": self.temperature,
            "repetition_penalty": self.repetition_penalty,
        }
        if self.temperature > 0:
            out.update(top_p=self.top_p, seed=self.seed, batch_size=self.batch_size)
        return out

    def cache_key(self, style: str) -> str:
        """Hash of the prompt and settings for ``style``."""
        return prompt_hash(style, self.settings)

    def rewrite(self, texts: Sequence[str], style: str) -> list[str]:
        """Rewrite every text in ``style``; one output string per input, in order."""
        check_style(style)
        out: list[str] = []
        for start in range(0, len(texts), self.batch_size):
            out.extend(self._generate(list(texts[start : start + self.batch_size]), style))
        return out

    def _prompts(self, texts: list[str], style: str) -> list[str]:
        tok = self.tokenizer
        texts = ["\n\n".join(clean_paragraphs(t)) or t for t in texts]
        ids = tok(texts, add_special_tokens=False, truncation=True, max_length=self.max_input_tokens)["input_ids"]
        passages = [tok.decode(row, skip_special_tokens=True).strip() for row in ids]
        n_cut = sum(len(row) >= self.max_input_tokens for row in ids)
        if n_cut:
            log.debug("%d of %d passages cut to max_input_tokens=%d", n_cut, len(texts), self.max_input_tokens)
        prefix = PROMPTS[style].get("response_prefix", "")
        return [
            tok.apply_chat_template(build_messages(p, style), tokenize=False, add_generation_prompt=True) + prefix
            for p in passages
        ]

    def _generate(self, texts: list[str], style: str) -> list[str]:
        import torch

        tok = self.tokenizer
        batch = tok(
            self._prompts(texts, style),
            return_tensors="pt",
            padding=True,
            padding_side="left",
            add_special_tokens=False,
        )
        pad_id = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        kwargs: dict[str, Any] = dict(
            max_new_tokens=self.max_new_tokens,
            pad_token_id=pad_id,
            repetition_penalty=self.repetition_penalty,
            do_sample=self.temperature > 0,
        )
        if self.temperature > 0:
            kwargs.update(temperature=self.temperature, top_p=self.top_p)
        else:
            kwargs.update(temperature=None, top_p=None, top_k=None)  # silence sampling-only defaults
        with torch.random.fork_rng(devices=[]), torch.inference_mode():
            torch.manual_seed(_batch_seed(self.seed, texts))
            gen = self.model.generate(**batch, **kwargs)
        new = gen[:, batch["input_ids"].shape[1] :]
        stop_ids = {pad_id, tok.eos_token_id, *_as_list(getattr(self.model.generation_config, "eos_token_id", None))}
        finished = [any(int(t) in stop_ids for t in row) for row in new]
        prefix = PROMPTS[style].get("response_prefix", "")
        texts = [(prefix + t).strip() if t.strip() else "" for t in tok.batch_decode(new, skip_special_tokens=True)]
        return [t if done else _trim_unfinished(t) for t, done in zip(texts, finished)]


def _as_list(value: Any) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _trim_unfinished(text: str) -> str:
    """Cut a generation that ran out of tokens back to its last sentence end, if that keeps most of it."""
    end = max(text.rfind(c) for c in ".!?")
    return text[: end + 1] if end >= len(text) // 2 else text


def _model_name(model: Any) -> str:
    return str(getattr(model, "name_or_path", None) or getattr(model.config, "name_or_path", "") or "causal-lm")


def _batch_seed(seed: int, texts: list[str]) -> int:
    """A seed that depends on ``seed`` and the batch's content, not on its position in a run."""
    h = hashlib.sha256(str(seed).encode())
    for t in texts:
        h.update(hashlib.sha256(t.encode()).digest())
    return int.from_bytes(h.digest()[:8], "little") & ((1 << 63) - 1)
