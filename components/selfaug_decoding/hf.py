"""The paper-scale path: a Hugging Face LLaVA (``llava-hf/llava-1.5-7b-hf`` in the ``full`` profile) decoded with
the visual contrastive step as a transformers ``LogitsProcessor``.

:class:`VisualContrastiveProcessor` receives the clean next-token logits ``scores`` = l(y | v, x) from
``generate`` and runs the same model on the augmented image v' with the same text so far (one extra forward per
step, no key-value cache for the augmented branch: VCD's ``sample`` patch does the same second pass), then
returns :func:`components.selfaug_decoding.decoding.cd_step`: ``(1 + alpha) l(v) - alpha l(v')`` masked outside
``l(v) >= log beta + max l(v)``, with ``beta`` fixed (VCD, VACoDe, SAS-only) or SAT's ``sigmoid(-tau H2)``.
Greedy decoding of the processed scores is the tiny-VLM path's ``decoding.generate`` step for step.

Nothing downloads here: :func:`load_llava` reads the local Hugging Face cache only and an absent id is a
DataError naming it, at once.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import LogitsProcessor

from components.errors import DataError
from components.selfaug_decoding.decoding import cd_step, sat_beta

PAPER_MODELS = ("llava-hf/llava-1.5-7b-hf", "llava-hf/llava-1.5-13b-hf")


class VisualContrastiveProcessor(LogitsProcessor):
    """Contrastive logits against the model's output on ``aug_pixel_values`` (the augmented images v')."""

    def __init__(self, model: Any, aug_pixel_values: torch.Tensor, *, alpha: float = 1.0, beta: float = 0.1,
                 tau: float | None = None, extra: dict | None = None):  # fmt: skip
        if alpha < 0 or not 0 < beta <= 1 or (tau is not None and tau <= 0):
            raise ValueError(f"alpha {alpha} must be >= 0, beta {beta} in (0, 1], tau {tau} > 0 or None")
        self.model, self.aug, self.alpha, self.beta, self.tau = model, aug_pixel_values, alpha, beta, tau
        self.extra = dict(extra or {})
        self.betas: list[torch.Tensor] = []  # the cut-off used at each step (for reports)

    @torch.no_grad()
    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        aug = self.model(input_ids=input_ids, pixel_values=self.aug, attention_mask=torch.ones_like(input_ids),
                         use_cache=False, **self.extra).logits[:, -1].to(scores.dtype)  # fmt: skip
        beta = sat_beta(scores, self.tau) if self.tau is not None else torch.full((scores.shape[0],), self.beta)
        self.betas.append(beta)
        return cd_step(scores, aug, self.alpha, beta.to(scores.dtype))


def generate(model: Any, input_ids: torch.Tensor, pixel_values: torch.Tensor, aug_pixel_values: torch.Tensor | None,
             *, alpha: float = 1.0, beta: float = 0.1, tau: float | None = None, max_new_tokens: int = 1,
             eos_token_id: int | None = None) -> torch.Tensor:  # fmt: skip
    """Greedy generation; with ``aug_pixel_values`` the contrastive processor (else plain greedy). The new ids."""
    from transformers import LogitsProcessorList

    procs = LogitsProcessorList()
    if aug_pixel_values is not None:
        procs.append(VisualContrastiveProcessor(model, aug_pixel_values, alpha=alpha, beta=beta, tau=tau))
    pad = 0 if eos_token_id is None else eos_token_id
    out = model.generate(input_ids=input_ids, pixel_values=pixel_values, attention_mask=torch.ones_like(input_ids),
                         logits_processor=procs, do_sample=False, max_new_tokens=max_new_tokens, num_beams=1,
                         eos_token_id=eos_token_id, pad_token_id=pad)  # fmt: skip
    return out[:, input_ids.shape[1] :]


def require(model_id: str) -> None:
    """Fail at once, naming the id, when ``model_id`` has no config in the local Hugging Face cache."""
    from huggingface_hub import try_to_load_from_cache

    if not isinstance(model_id, str) or not model_id.strip():
        raise DataError(f"paper_scale.model_id: need a Hugging Face id, got {model_id!r}")
    try:
        found = try_to_load_from_cache(model_id, "config.json")
    except ValueError:  # not even a valid repo id
        found = None
    if not isinstance(found, str):
        raise DataError(f"model {model_id!r} is not in the local Hugging Face cache (this machine is offline; "
                        "download it first, or run the default profile's tiny VLM)")  # fmt: skip


def load_llava(model_id: str) -> tuple[Any, Any]:
    """(model, processor) of a LLaVA id from the local Hugging Face cache only; absent: a DataError naming it."""
    if not isinstance(model_id, str) or not model_id.strip():
        raise DataError(f"paper_scale.model_id: need a Hugging Face id, got {model_id!r}")
    try:
        from transformers import AutoProcessor, LlavaForConditionalGeneration

        processor = AutoProcessor.from_pretrained(model_id, local_files_only=True)
        model = LlavaForConditionalGeneration.from_pretrained(model_id, local_files_only=True)
    except (OSError, ValueError) as exc:
        raise DataError(f"model {model_id!r} is not in the local Hugging Face cache (this machine is offline; "
                        f"download it first): {type(exc).__name__}") from None  # fmt: skip
    return model.eval(), processor
