"""A progress line with an ETA for every running stage, from the stage's own earlier run times.

A stage's work is the paper's code (training loops, grids, samplers), so the runner cannot count its steps; it
can time it. Every completed stage adds its wall time to ``.paperline/timings/<paper>-<stage>-<profile>.json``
(the last ``KEEP`` runs); while the stage runs again, a tqdm line on a terminal shows the time elapsed and, once
there is history, the expected total (median of the recorded runs) and the time left. Grids inside a stage
(``flows.runtime.grid``) add their own job bar below it. The line is off when stderr is not a terminal (logs,
CI, a worker) or the paper's ``progress`` param is false; the stage's start is logged with its usual time
instead, so a log still says how long to wait.
"""

from __future__ import annotations

import json
import statistics
import sys
import threading
from pathlib import Path
from typing import IO, Any

from components.io import write_text
from flows.runtime.settings import Paths

KEEP = 5
TICK_S = 1.0


def timings_file(paths: Paths, owner: str, stage: str, profile: str) -> Path:
    return paths.state / "timings" / f"{owner}-{stage}-{profile}.json"


def recorded(paths: Paths, owner: str, stage: str, profile: str) -> list[float]:
    """The stage's last wall times at this profile (seconds, oldest first); [] when none or unreadable."""
    try:
        values = json.loads(timings_file(paths, owner, stage, profile).read_text())
    except (OSError, ValueError):
        return []
    if not isinstance(values, list):
        return []
    return [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0][-KEEP:]


def expected_seconds(paths: Paths, owner: str, stage: str, profile: str) -> float | None:
    """The median of the recorded wall times, or None before the stage's first completed run at this profile."""
    times = recorded(paths, owner, stage, profile)
    return statistics.median(times) if times else None


def record(paths: Paths, owner: str, stage: str, profile: str, seconds: float) -> None:
    """Add a completed run's wall time (written atomically; a failure to write only loses the estimate)."""
    times = [*recorded(paths, owner, stage, profile), round(float(seconds), 3)][-KEEP:]
    path = timings_file(paths, owner, stage, profile)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, json.dumps(times) + "\n")
    except OSError:
        pass


def usual(expected: float | None) -> str:
    """`` (usually 41 s)`` for the start line, or ``''`` without history."""
    return "" if expected is None else f" (usually {_clock(expected)})"


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds} s" if seconds < 60 else f"{seconds // 60} min {seconds % 60:02d} s"


class StageClock:
    """The running stage's line: ``assomem:generate: 00:12 of ~00:40, ~00:28 left``, redrawn every ``TICK_S``.

    A context manager; shown only when ``enabled`` and ``stream`` is a terminal. Past the expected time it says
    ``longer than usual``; with no history it shows the elapsed time alone.
    """

    def __init__(self, name: str, expected: float | None, *, enabled: bool = True, stream: IO[str] | None = None):
        self.name, self.expected = name, expected
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled and _is_terminal(self.stream)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._bar: Any = None

    def __enter__(self) -> StageClock:
        if not self.enabled:
            return self
        from tqdm import tqdm
        from tqdm.contrib.logging import logging_redirect_tqdm

        total = round(self.expected, 1) if self.expected else None
        fmt = "{desc}: {elapsed}" + (f" of ~{tqdm.format_interval(total)}{{postfix}}" if total else " elapsed")
        self._bar = tqdm(total=total, desc=self.name, file=self.stream, bar_format=fmt, leave=False, position=0)
        self._logs = logging_redirect_tqdm()  # log lines print above the line instead of after it
        self._logs.__enter__()
        self._draw(0.0)
        self._thread = threading.Thread(target=self._run, name=f"clock-{self.name}", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(TICK_S):
            self._draw(self._bar.format_dict["elapsed"])

    def _draw(self, elapsed: float) -> None:
        if self.expected:
            left = self.expected - elapsed
            text = f"~{self._bar.format_interval(left)} left" if left > 0 else "longer than usual"
            self._bar.set_postfix_str(text, refresh=False)
            self._bar.n = min(elapsed, self.expected)
        self._bar.refresh()

    def __exit__(self, *exc: object) -> None:
        if self._bar is None:
            return
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._logs.__exit__(None, None, None)
        self._bar.close()


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
