"""Stream text documents from a Hugging Face dataset (the ``full`` profile's loaders).

A hub id (``HuggingFaceFW/fineweb``) needs the network. Offline (``offline=True``
or ``HF_HUB_OFFLINE=1``/``HF_DATASETS_OFFLINE=1``) it fails at once with
:class:`OfflineError` instead of letting ``datasets`` retry for half a minute.
A local source (a packaged builder such as ``"json"`` with ``data_files``, or a
path to a file or folder) works offline.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from components.errors import DataError, OfflineError

log = logging.getLogger(__name__)

LOCAL_BUILDERS = {"json", "csv", "text", "parquet", "arrow", "pandas", "webdataset"}
_SUFFIX_BUILDER = {".json": "json", ".jsonl": "json", ".csv": "csv", ".txt": "text", ".parquet": "parquet"}
_TRUE = {"1", "true", "yes", "on"}


def is_offline(offline: bool | None = None) -> bool:
    """``offline`` if given, else whether ``HF_HUB_OFFLINE`` or ``HF_DATASETS_OFFLINE`` is set."""
    if offline is not None:
        return offline
    return any(os.environ.get(v, "").strip().lower() in _TRUE for v in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"))


def is_local(dataset_id: str) -> bool:
    """Whether ``dataset_id`` names a packaged builder or an existing local path (not a hub id)."""
    return dataset_id in LOCAL_BUILDERS or Path(dataset_id).exists()


def _load_args(dataset_id: str, config: str | None, data_files: Any) -> tuple[str, str | None, Any]:
    """Turn a local file path into (builder, None, data_files); leave other ids as they are."""
    path = Path(dataset_id)
    if path.is_file() and data_files is None:
        builder = _SUFFIX_BUILDER.get(path.suffix.lower())
        if builder is None:
            raise DataError(f"{dataset_id}: cannot tell the format; use a .jsonl/.json/.csv/.txt/.parquet file")
        return builder, None, str(path)
    return dataset_id, config, data_files


def _open(dataset_id: str, split: str, config: str | None, data_files: Any, revision: str | None):
    import datasets  # the `lm` extra; imported here so listing the corpus stays cheap

    path, name, files = _load_args(dataset_id, config, data_files)
    try:
        return datasets.load_dataset(path, name, split=split, data_files=files, revision=revision, streaming=True)
    except ConnectionError as exc:
        raise OfflineError(
            f"{dataset_id}: could not reach the Hugging Face Hub ({exc}); check the network or use the offline corpus"
        ) from None
    except (FileNotFoundError, ValueError) as exc:
        raise DataError(f"{dataset_id}: cannot load split {split!r} ({exc})") from None


def _docs(stream, dataset_id: str, source: str, text_field: str, limit: int | None) -> Iterator[dict]:
    n = 0
    for i, rec in enumerate(stream):
        if text_field not in rec:
            raise DataError(
                f"{dataset_id}: no field {text_field!r} in its records; fields are {sorted(rec)} (set text_field)"
            )
        text = rec[text_field]
        if not isinstance(text, str) or not text.strip():
            continue
        title = rec.get("title") or rec.get("url") or ""
        yield {"id": f"{source}/{i}", "source": source, "text": text, "title": str(title)}
        n += 1
        if limit is not None and n >= limit:
            return


def stream_hf_text(
    dataset_id: str,
    *,
    split: str = "train",
    text_field: str = "text",
    config: str | None = None,
    limit: int | None = None,
    offline: bool | None = None,
    data_files: Any = None,
    revision: str | None = None,
    source: str | None = None,
) -> Iterator[dict]:
    """Yield up to ``limit`` non-empty documents ``{"id", "source", "text", "title"}`` from a dataset.

    ``id`` is ``<source>/<record index>`` (``source`` defaults to
    ``dataset_id``), stable for a fixed ``revision``. Raises
    :class:`OfflineError` on the call itself (not at the first document) when a
    hub id is requested offline.
    """
    if limit is not None and limit < 0:
        raise DataError(f"limit={limit}: must be >= 0")
    if is_offline(offline) and not is_local(dataset_id):
        raise OfflineError(
            f"{dataset_id}: a Hugging Face Hub dataset, but running offline (offline=True or HF_HUB_OFFLINE=1); "
            "to stream it, unset HF_HUB_OFFLINE/HF_DATASETS_OFFLINE with network access, "
            "or use the offline corpus (the default profile)"
        )
    stream = _open(dataset_id, split, config, data_files, revision)
    log.info("streaming %s (split %s, limit %s)", dataset_id, split, limit)
    return _docs(stream, dataset_id, source or dataset_id, text_field, limit)
