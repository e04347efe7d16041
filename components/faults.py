"""A test seam for crash tests: kill this process at a named point.

Set ``PAPERLINE_CRASH_AT=<point>`` and the process sends itself SIGKILL when it
reaches that point (for example ``write:pool.jsonl`` after the temporary file is
complete but before it is renamed into place). Unset, it costs one dict lookup.
"""

from __future__ import annotations

import os
import signal

ENV = "PAPERLINE_CRASH_AT"


def crash_point(name: str) -> None:
    if os.environ.get(ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)
