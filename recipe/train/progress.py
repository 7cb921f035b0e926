"""Live progress. In Jupyter, ``progress_bar`` is a ``tqdm.auto`` widget bar (ipywidgets); in a terminal, text.
Headless (``recipe run`` through papermill, or piped output), ``StageTail`` follows a stage's ``metrics.jsonl`` from
the parent process and prints the step, reward (or loss) and ETA as the stage goes."""
from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Callable


def progress_bar(total: int, initial: int, desc: str, enabled: bool = True):
    from tqdm.auto import tqdm
    return tqdm(total=total, initial=initial, desc=desc, disable=not enabled, file=sys.stderr, dynamic_ncols=True,
                mininterval=0.5)


def step_time_estimate(times: list[float], recent: int = 10) -> float:
    """Seconds a remaining step is expected to take: the mean step time so far blended half and half with the mean
    of the last ``recent`` steps. The first step is left out once there are others (it carries the warm-up: first
    kernel calls, allocator growth). A window alone jumps whenever a slow step (a refill round, a validation or a
    checkpoint step) enters or leaves it; the blend follows a real change of pace and damps the jumps."""
    if len(times) > 1:
        times = times[1:]
    window = times[-recent:]
    return 0.5 * sum(times) / len(times) + 0.5 * sum(window) / len(window)


def progress_line(stage: str, rows: list[dict], total: int) -> str:
    """``if_rl  step 12/50  reward 0.412  at cap 20%  ETA 31 s`` from the rows logged so far (ETA:
    ``step_time_estimate`` x steps left; ``at cap``: the share of the step's answers that hit the token cap); RLHF
    stages add ``judge score 0.61`` (the normalised group reward's mean cannot move)."""
    last = rows[-1]
    done = int(last.get("step", len(rows) - 1)) + 1
    parts = [f"{stage}", f"step {done}/{total}"]
    for key, label in (("reward_mean", "reward"), ("loss", "loss")):
        if isinstance(last.get(key), (int, float)):
            parts.append(f"{label} {last[key]:.3f}")
            break
    if isinstance(last.get("judge_score_mean"), (int, float)):  # RLHF: the judge's absolute score, which moves
        parts.append(f"judge score {last['judge_score_mean']:.3f}")
    if isinstance(last.get("overlong_frac"), (int, float)):  # RL: the share of answers that hit the token cap
        parts.append(f"at cap {100 * last['overlong_frac']:.0f}%")
    times = [r["time_s"] for r in rows if isinstance(r.get("time_s"), (int, float))]
    if times and done < total:
        parts.append(f"ETA {step_time_estimate(times) * (total - done):.0f} s")
    elif done >= total:
        parts.append("training done; validating")
    return "  ".join(parts)


def _read_rows(path: Path) -> list[dict]:
    rows = []
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:  # a line being written
                continue
    return rows


class StageTail:
    """Follow ``metrics_path`` in a thread; ``emit`` a progress line for new steps, at most every ``every_s``
    seconds (and always for the last step). Use as a context manager around the stage."""

    def __init__(self, metrics_path: Path, stage: str, total_steps: int, emit: Callable[[str], None] | None = None,
                 every_s: float = 2.0, poll_s: float = 0.5):
        self.path, self.stage, self.total = Path(metrics_path), stage, total_steps
        self.emit = emit or (lambda s: print(s, file=sys.stderr, flush=True))
        self.every_s, self.poll_s = every_s, poll_s
        self._stop = threading.Event()
        self._last_step, self._last_emit = None, 0.0
        self._since = time.time()   # rows are shown once the file changes after this: a previous attempt's rows
        self._thread = threading.Thread(target=self._loop, name=f"tail-{stage}", daemon=True)
        self.lines: list[str] = []

    def poll(self, force: bool = False) -> None:
        try:   # (other inputs: the stage truncates them) are never shown as this attempt's progress
            if self.path.stat().st_mtime < self._since:
                return
        except FileNotFoundError:
            return
        rows = _read_rows(self.path)
        if not rows or rows[-1].get("step") == self._last_step:
            return
        final = int(rows[-1].get("step", 0)) + 1 >= self.total
        if force or final or time.monotonic() - self._last_emit >= self.every_s:
            line = progress_line(self.stage, rows, self.total)
            self.lines.append(line)
            self.emit(line)
            self._last_step, self._last_emit = rows[-1].get("step"), time.monotonic()

    def _loop(self) -> None:
        while not self._stop.wait(self.poll_s):
            self.poll()

    def __enter__(self) -> "StageTail":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.poll(force=True)
