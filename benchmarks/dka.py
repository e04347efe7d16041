"""Benchmark of the dka pipeline: see ``benchmarks/adapters.py`` (training images/s and trainable parameters of
each adapter against the linear probe, measured in the same run).

    python benchmarks/dka.py [--steps N] [--batch B] [--threads T]
"""

from __future__ import annotations

import runpy
from pathlib import Path

if __name__ == "__main__":
    runpy.run_path(str(Path(__file__).with_name("adapters.py")), run_name="__main__")
