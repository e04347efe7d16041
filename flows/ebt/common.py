"""What ebt's stages share: set names, file names, the codec in use, model folder names."""

from __future__ import annotations

from components.ebt.tokens import Codec, codec_for
from flows.ebt.params import Params

ID_SET = "id"  # the in-distribution test set (Persuasion, or the held-out hub stream in full)


def set_names(p: Params) -> list[str]:
    """Evaluation sets, in-distribution first, then the OOD sets nearest first."""
    return [ID_SET, *p.data.ood_sets]


def codec(p: Params) -> Codec:
    return codec_for(p.data.hf_tokenizer)


def model_name(kind: str, width: int, seed: int) -> str:
    """``ebt-d64-s0``, ``tpp-d64-s0`` (equal steps), ``tppflops-d64-s0`` (equal FLOPs)."""
    return f"{kind}-d{width}-s{seed}"
