"""An LLM judge with the official repo's rubric prompts (``rubric.py``): every target message is rated for each
of the 13 judged behaviours by one prompt, ``samples`` times, and the samples' majority taken as in the repo
(``get_majority_vote``; an unparsed answer or an even tie is -1, counted, and stored as "not shown").

The model behind it is any :class:`components.anthrobench.dialogue.Target` (``respond(histories, keys)``): a
local causal LM through its chat template (``ChatLM``: SmolLM2, a local folder or a Hugging Face id) or an
OpenAI-compatible endpoint (``EndpointChat``), the seam where the repo's ``LLMClient`` calls litellm.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from components.anthrobench.behaviours import JUDGED
from components.anthrobench.rubric import majority_vote, parse_answer, rubric_prompt
from components.errors import DataError, OfflineError

NAME = "J4_llm"


@dataclass
class LLMJudge:
    chat: object  # a Target: respond(histories, keys) -> replies
    samples: int = 1
    batch_size: int = 16
    name: str = NAME
    unparsed: int = field(default=0, init=False)  # (message, behaviour) cells whose majority is -1

    def rate(self, users: Sequence[str], assistants: Sequence[str]) -> np.ndarray:
        """messages x JUDGED 0/1 flags."""
        if len(users) != len(assistants):
            raise DataError(f"llm judge: {len(users)} user messages for {len(assistants)} target messages")
        cells = [(i, j) for i in range(len(assistants)) for j in range(len(JUDGED))]
        prompts = [[{"role": "user", "content": rubric_prompt(JUDGED[j], assistants[i], users[i])}] for i, j in cells]
        scores = np.full((len(cells), self.samples), -1, dtype=int)
        for s in range(self.samples):
            for start in range(0, len(prompts), self.batch_size):
                part = range(start, min(start + self.batch_size, len(prompts)))
                replies = self.chat.respond([prompts[k] for k in part], [s * len(prompts) + k for k in part])
                scores[list(part), s] = [parse_answer(r) for r in replies]
        votes = np.array([majority_vote(list(row)) for row in scores])
        self.unparsed += int(np.sum(votes == -1))
        out = np.zeros((len(assistants), len(JUDGED)), dtype=int)
        for (i, j), v in zip(cells, votes):
            out[i, j] = int(v == 1)
        return out


def check_available(spec: str, *, offline: bool) -> None:
    """Raise :class:`OfflineError` naming ``spec`` when it is a Hugging Face id that is not in the local cache and
    the run is offline (a run fails at once, before any stage works); SmolLM2, local folders and endpoint
    targets pass."""
    from pathlib import Path

    from components.models.causal_lm import SMOLLM2_SPEC

    if not offline or spec == SMOLLM2_SPEC or spec.startswith("endpoint:") or Path(spec).is_dir():
        return
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(spec, "config.json")
    except (ValueError, OSError):  # an invalid repo id (HFValidationError) is as absent as an uncached one
        cached = None
    if not isinstance(cached, str):
        raise OfflineError(
            f"model {spec!r} is not in the Hugging Face cache and running offline (HF_HUB_OFFLINE): download it "
            "first, or leave it out"
        )
