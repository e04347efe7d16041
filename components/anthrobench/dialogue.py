"""The multi-turn runner and the LLM targets (a local causal LM through its chat template; an OpenAI-compatible
chat endpoint). A target answers a batch of dialogue histories at once: ``respond(histories, keys) -> replies``.

Dialogue records (stored as JSONL): ``{"dialogue", "seed", "target", "use_domain", "use_scenario", "turns":
[{"turn", "user", "assistant", "truth"?}]}``; ``truth`` only for the simulator chatbot.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from components.anthrobench.simulate import user_turn
from components.errors import DataError


class Target(Protocol):
    name: str

    def respond(self, histories: Sequence[list[dict]], keys: Sequence[int]) -> list[str]: ...


def run_dialogues(
    target: Target,
    first_turns: Sequence[dict],
    *,
    seed: int,
    n_turns: int = 5,
    batch_size: int = 16,
    key_offset: int = 0,
) -> list[dict]:
    """``len(first_turns)`` dialogues of ``n_turns`` user/target pairs, batched across dialogues per turn."""
    dialogues = [
        {
            "dialogue": key_offset + i,
            "seed": seed,
            "target": target.name,
            "use_domain": r["use_domain"],
            "use_scenario": r["use_scenario"],
            "turns": [],
        }
        for i, r in enumerate(first_turns)
    ]
    histories: list[list[dict]] = [[] for _ in first_turns]
    for t in range(1, n_turns + 1):
        users = [
            r["user_first_turn"] if t == 1 else user_turn(seed, d["dialogue"], t, d["use_scenario"])
            for r, d in zip(first_turns, dialogues)
        ]
        for h, u in zip(histories, users):
            h.append({"role": "user", "content": u})
        replies: list[str] = []
        for start in range(0, len(dialogues), batch_size):
            idx = range(start, min(start + batch_size, len(dialogues)))
            replies += target.respond([histories[i] for i in idx], [dialogues[i]["dialogue"] for i in idx])
        for d, h, u, reply in zip(dialogues, histories, users, replies):
            h.append({"role": "assistant", "content": reply})
            d["turns"].append({"turn": t, "user": u, "assistant": reply})
    truth = getattr(target, "truth", None)
    if truth is not None:
        for d in dialogues:
            for turn, labels in zip(d["turns"], truth(d["dialogue"])):
                turn["truth"] = labels
    return dialogues


@dataclass
class ChatLM:
    """A local causal LM answering through its chat template; sampled, left-padded batched generation."""

    model: Any
    tokenizer: Any
    name: str
    seed: int
    temperature: float = 0.7
    max_new_tokens: int = 48
    max_context: int = 768

    def __post_init__(self) -> None:
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self._calls = 0
        self.generated_tokens = 0

    def _prompt(self, history: list[dict]) -> list[int]:
        msgs = list(history)
        while True:
            ids = self.tokenizer.apply_chat_template(msgs, add_generation_prompt=True, tokenize=True)
            ids = list(ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids)
            if len(ids) <= self.max_context or len(msgs) <= 1:
                return ids[-self.max_context :]
            msgs = msgs[2:]  # drop the oldest user/assistant pair

    def respond(self, histories: Sequence[list[dict]], keys: Sequence[int]) -> list[str]:
        import torch

        prompts = [self._prompt(h) for h in histories]
        width = max(len(p) for p in prompts)
        pad = self.tokenizer.pad_token_id
        ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts])
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
        torch.manual_seed(hash((self.seed, self._calls, tuple(keys))) % (2**31))
        self._calls += 1
        with torch.no_grad():
            out = self.model.generate(
                input_ids=ids,
                attention_mask=mask,
                do_sample=True,
                temperature=self.temperature,
                max_new_tokens=self.max_new_tokens,
                pad_token_id=pad,
                top_p=1.0,
                top_k=0,
            )
        new = out[:, width:]
        self.generated_tokens += int((new != pad).sum())
        texts = [self.tokenizer.decode(row, skip_special_tokens=True).strip() for row in new]
        return [t if t else "..." for t in texts]  # an empty reply is stored as "..." (GX: no empty messages)


@dataclass
class EndpointChat:
    """Any OpenAI-compatible ``/chat/completions`` endpoint (a local vLLM server or a provider), one call per
    dialogue. ``url`` is the base (``http://host:port/v1``)."""

    url: str
    model: str
    name: str
    temperature: float = 0.7
    max_new_tokens: int = 48
    api_key: str | None = None
    timeout: float = 60.0

    def respond(self, histories: Sequence[list[dict]], keys: Sequence[int]) -> list[str]:
        return [
            chat_completion(
                self.url,
                self.model,
                h,
                temperature=self.temperature,
                max_tokens=self.max_new_tokens,
                api_key=self.api_key,
                timeout=self.timeout,
            )
            for h in histories
        ]


def chat_completion(
    url: str,
    model: str,
    messages: list[dict],
    *,
    temperature: float,
    max_tokens: int,
    api_key: str | None = None,
    timeout: float = 60.0,
) -> str:
    """One chat completion; an unreachable endpoint or a malformed answer raises DataError naming the url."""
    body = json.dumps(
        {"model": model, "messages": messages, "temperature": temperature, "max_tokens": max_tokens}
    ).encode()
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    req = urllib.request.Request(url.rstrip("/") + "/chat/completions", data=body, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            doc = json.loads(resp.read().decode())
        return str(doc["choices"][0]["message"]["content"]).strip() or "..."
    except (urllib.error.URLError, OSError) as exc:
        raise DataError(f"endpoint {url}: unreachable for model {model!r} ({exc})") from None
    except (KeyError, IndexError, ValueError) as exc:
        raise DataError(f"endpoint {url}: not an OpenAI-style chat completion ({exc!r})") from None
