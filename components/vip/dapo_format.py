"""Prompts in the DAPO-Math-17k format (``BytedTsinghua-SIA/DAPO-Math-17k``), from a local file or the Hub.

A row: ``prompt`` = [{"role": "user", "content": ...}], ``reward_model`` = {"ground_truth": ..., "style": "rule"},
``extra_info`` = {"index": ...}, plus ``data_source`` and ``ability``. Offline, a Hub id fails at once, naming it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from components.errors import DataError


def rows_to_problems(rows: list[dict], where: str) -> list[dict]:
    out = []
    for k, r in enumerate(rows):
        try:
            msgs = r["prompt"]
            prompt = msgs if isinstance(msgs, str) else list(msgs)[-1]["content"]  # parquet gives an array
            target = str(r["reward_model"]["ground_truth"])
        except (KeyError, IndexError, TypeError) as exc:
            raise DataError(
                f"{where}: row {k} is not in the DAPO-Math-17k format (prompt / reward_model.ground_truth): {exc!r}"
            ) from None
        index = (r.get("extra_info") or {}).get("index", k)
        out.append(
            {"id": f"dapo{index}", "tier": str(r.get("data_source", "dapo")), "prompt": prompt, "target": target}
        )
    if not out:
        raise DataError(f"{where}: no rows")
    return out


def load_local(path: str | os.PathLike) -> list[dict]:
    p = Path(path)
    if not p.is_file():
        raise DataError(f"{p}: no such file (a DAPO-Math-17k parquet or jsonl)")
    if p.suffix == ".parquet":
        import pandas as pd

        rows = pd.read_parquet(p).to_dict("records")
    elif p.suffix in (".jsonl", ".json"):
        try:
            rows = [json.loads(line) for line in p.read_text().splitlines() if line.strip()]
        except json.JSONDecodeError as exc:
            raise DataError(f"{p}: not JSON lines ({exc.msg} at line {exc.lineno})") from None
    else:
        raise DataError(f"{p}: expected .parquet or .jsonl, got {p.suffix or 'no suffix'}")
    return rows_to_problems(rows, str(p))


def load_hub(dataset_id: str, limit: int) -> list[dict]:
    if os.environ.get("HF_HUB_OFFLINE") == "1" or os.environ.get("PAPERLINE_ONLINE") != "1":
        raise DataError(
            f"{dataset_id}: the Hugging Face dataset needs the network (set PAPERLINE_ONLINE=1); "
            "offline runs use data.local_file in the same format"
        )
    from datasets import load_dataset

    ds = load_dataset(dataset_id, split="train")
    return rows_to_problems([ds[i] for i in range(min(limit, len(ds)))], dataset_id)
