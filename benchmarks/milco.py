"""Benchmark of the milco pipeline: see ``benchmarks/sparse_retrieval.py`` (pruned sparse inverted index against a
dense flat faiss index at 2k and 30k documents; QPS and index bytes with ratios).

    python benchmarks/milco.py [same options]
"""

from __future__ import annotations

import runpy
from pathlib import Path

if __name__ == "__main__":
    runpy.run_path(str(Path(__file__).with_name("sparse_retrieval.py")), run_name="__main__")
