"""How the RL loop turns prompts into token ids, completions into text and text into a reward.

``CHAR`` is the offline arithmetic task (a char vocabulary, exact match of answer + eos). ``hf_codec`` wraps a
Hugging Face tokenizer for the ``full`` profile's DAPO-Math-17k prompts, scored as DAPO scores them: the text after
the last "Answer:" of the completion, normalised, must equal the ground truth (verl's ``math_dapo`` reward, read
for its rule; this is a smaller normaliser written here). Rewards are 0/1: Dr.GRPO's and RLOO's advantages only
scale under verl's +1/-1.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from components.errors import DataError
from components.vip import task as T


@dataclass(frozen=True)
class Codec:
    encode: Callable[[str], list[int]]
    decode: Callable[[list[int]], str]
    reward: Callable[[str, str], float]  # (target, completion text) -> reward
    eos: int
    pad: int


CHAR = Codec(encode=T.encode, decode=T.decode, reward=T.reward, eos=T.EOS, pad=T.PAD)

_ANSWER = re.compile(r"answer\s*:\s*([^\n]*)", re.IGNORECASE)
_BOXED = re.compile(r"^\\boxed\{(.*)\}$")


def normalise_answer(text: str) -> str:
    """A final answer as DAPO compares it: no surrounding $ or \\boxed{}, no spaces, no thousands commas, no
    trailing full stop."""
    s = text.strip().rstrip(".").strip().strip("$").strip()
    m = _BOXED.match(s)
    if m:
        s = m.group(1)
    s = s.replace(" ", "").rstrip(".")
    if re.fullmatch(r"-?\d{1,3}(,\d{3})+", s):
        s = s.replace(",", "")
    return s


def math_reward(target: str, completion: str) -> float:
    """1 iff the completion's last "Answer: ..." line, normalised, equals the normalised ground truth."""
    found = _ANSWER.findall(completion)
    if not found:
        return 0.0
    return float(normalise_answer(found[-1]) == normalise_answer(str(target)))


def hf_codec(tokenizer) -> Codec:
    """A codec over a Hugging Face tokenizer: prompts without special tokens, completions decoded without them,
    eos the tokenizer's (pad its pad token, else eos)."""
    if tokenizer.eos_token_id is None:
        raise DataError(
            f"tokenizer {getattr(tokenizer, 'name_or_path', '?')!r}: no eos token, so a completion could never end"
        )
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    return Codec(
        encode=lambda text: list(tokenizer(text, add_special_tokens=False)["input_ids"]),
        decode=lambda ids: tokenizer.decode(ids, skip_special_tokens=True),
        reward=math_reward,
        eos=int(tokenizer.eos_token_id),
        pad=int(pad),
    )
