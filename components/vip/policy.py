"""The policies the VIP loop trains: the offline TinyLM, or a Hugging Face causal LM (the ``full`` profile's
Qwen2.5-Math-1.5B, or any local folder in the same format), each with the codec that reads and scores its text.

A policy folder is either a TinyLM (``config.json`` with ``model_type: paperline-tiny-lm`` + safetensors) or a
``save_pretrained`` folder of a causal LM and its tokenizer; :func:`load_policy` tells them apart by the config.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from components.errors import DataError, OfflineError
from components.io import atomic_path
from components.models import tiny_lm
from components.vip.codec import CHAR, Codec, hf_codec


def load_hf(model_id: str, *, online: bool, cache_dir: str | os.PathLike) -> tuple[Any, Any]:
    """(model, tokenizer) of a Hugging Face causal LM id or local folder, through the project's loader
    (:func:`components.models.causal_lm.load_causal_lm`; ``cache_dir`` holds its SmolLM2 conversion). Errors name
    ``vip.model.hf_model``: offline, an id not in the local cache fails at once; a folder transformers cannot read
    is a DataError."""
    from components.models.causal_lm import load_causal_lm

    try:
        return load_causal_lm(model_id, cache_dir=cache_dir, offline=not online)
    except OfflineError as exc:
        raise OfflineError(
            f"vip.model.hf_model {model_id!r}: {exc}; set PAPERLINE_ONLINE=1 to download it, or give a local folder"
        ) from None
    except (OSError, ValueError) as exc:  # transformers: a folder without weights, or a config it cannot read
        raise DataError(f"vip.model.hf_model {model_id!r}: cannot load a causal LM ({exc})") from None


def save_policy(model, folder: str | os.PathLike, tokenizer=None) -> Path:
    """Write a policy folder atomically (TinyLM: its own format; HF: ``save_pretrained`` of model and tokenizer)."""
    if isinstance(model, tiny_lm.TinyLM):
        return tiny_lm.save_model(model, folder)
    with atomic_path(folder, is_dir=True) as tmp:
        model.save_pretrained(tmp, safe_serialization=True)
        if tokenizer is not None:
            tokenizer.save_pretrained(tmp)
    return Path(folder)


def is_tiny(folder: str | os.PathLike) -> bool:
    cfg = Path(folder) / "config.json"
    if not cfg.is_file():
        raise DataError(f"{cfg}: not a policy folder (no config.json)")
    from components.io import read_json

    return read_json(cfg, kind=dict).get("model_type") == tiny_lm.MODEL_TYPE


def load_policy(folder: str | os.PathLike) -> tuple[object, Codec, object | None]:
    """(model, codec, tokenizer or None) of a policy folder written by :func:`save_policy`."""
    if is_tiny(folder):
        return tiny_lm.load_model(folder), CHAR, None
    model, tok = load_hf(str(folder), online=False, cache_dir=folder)  # a folder: no SmolLM2 conversion to cache
    return model, hf_codec(tok), tok
