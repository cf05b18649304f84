"""The protocol every ``bench/speed_*.py`` module speaks to ``bench/speed.py``.

Issue 15 asks for ONE command that prints every row of its speed table. Each area (post-fetch,
start-up, concurrency/CPU/RSS) owns a module ``bench/speed_<area>.py`` that exposes

    def rows() -> list[Row]

and ``bench/speed.py`` imports every such module it finds and prints the rows together. A Row
carries our time, the baseline measured *in the same run*, their ratio, the goal in words and
whether it was met — so a reader never compares numbers taken on different machines or loads.

Helpers here keep the modules consistent: ``median_ms`` (median of ≥ 5 runs, after a warm-up),
``ratio``, ``row`` (builds a Row and fills ratio/passed from a ratio goal) and ``peak_rss_mb``
(peak RSS of a child process, via ``os.wait4``'s rusage, or its VmHWM when the rusage figure is
only the peak it inherited from this process).

This file is a shared contract: keep the names and fields stable (add, never rename).
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, TypedDict

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # so `from tests.loopback import …` and `webshelf` resolve from bench/
    sys.path.insert(0, str(REPO))

MIN_RUNS = 5


class Row(TypedDict):
    """One line of the speed table.

    what         what is measured, e.g. "post-fetch, 10 MB Markdown"
    ours_ms      our figure (ms for times; for memory rows the unit goes in ``note``/``what``)
    baseline_ms  the baseline measured in the same run, or None when the goal is absolute
    ratio        ours / baseline, or None when there is no baseline
    goal         the goal in words, e.g. "≤ 3×" or "≤ 350 ms"
    passed       whether the goal is met (None: not judged, e.g. a component is missing)
    note         the baseline's name and anything a reader needs ("skipped: no docker")
    """

    what: str
    ours_ms: float | None
    baseline_ms: float | None
    ratio: float | None
    goal: str
    passed: bool | None
    note: str


def median_ms(fn: Callable[[], object], runs: int = MIN_RUNS, warmup: int = 1) -> float:
    """Median wall time of ``fn()`` in milliseconds over ``max(runs, 5)`` runs after ``warmup`` calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(max(runs, MIN_RUNS)):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def ratio(ours: float | None, baseline: float | None) -> float | None:
    """ours / baseline, or None when either is missing or the baseline is zero."""
    if ours is None or not baseline:
        return None
    return ours / baseline


def row(what: str, ours_ms: float | None, baseline_ms: float | None = None, *,
        max_ratio: float | None = None, max_ms: float | None = None,
        goal: str | None = None, passed: bool | None = None, note: str = "") -> Row:
    """Build a Row; ``passed`` is computed from ``max_ratio`` and/or ``max_ms`` unless given."""
    r = ratio(ours_ms, baseline_ms)
    if passed is None and ours_ms is not None:
        checks = []
        if max_ratio is not None:
            checks.append(r is not None and r <= max_ratio)
        if max_ms is not None:
            checks.append(ours_ms <= max_ms)
        passed = all(checks) if checks else None
    if goal is None:
        parts = ([f"≤ {max_ratio:g}×"] if max_ratio is not None else []) + \
                ([f"≤ {max_ms:g} ms"] if max_ms is not None else [])
        goal = ", ".join(parts) or "—"
    return Row(what=what, ours_ms=ours_ms, baseline_ms=baseline_ms, ratio=r, goal=goal,
               passed=passed, note=note)


def skipped(what: str, goal: str, reason: str) -> Row:
    """A row that could not be measured here (the reason is printed, the row is not judged)."""
    return Row(what=what, ours_ms=None, baseline_ms=None, ratio=None, goal=goal, passed=None,
               note=f"skipped: {reason}")


def vm_hwm_kb(pid: int) -> int | None:
    """The kernel's peak RSS (VmHWM, KiB) of a live process's address space, or None."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def peak_rss_mb(argv: list[str], *, env: dict[str, str] | None = None, cwd: str | None = None,
                timeout: float = 600) -> float:
    """Run ``argv`` to completion and return its peak resident set size in MB.

    ``os.wait4`` on that one child gives its ``ru_maxrss``, so neither this process's later growth
    nor other children count — but Linux carries ``ru_maxrss`` over fork and exec, so a child of
    a process that has grown starts at this process's peak (bench/speed.py runs the 50 MB rows
    first). When the child's figure is not above that inherited peak, it is the child's own
    VmHWM instead, polled from /proc while it runs (its address space only).
    Raises ``RuntimeError`` (with the child's stderr tail) if it exits non-zero.
    """
    inherited = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + timeout
    polled = 0
    while True:
        hwm = vm_hwm_kb(proc.pid)  # before wait4: once reaped, the pid is gone
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        polled = max(polled, hwm or 0)
        if time.monotonic() > deadline:
            proc.kill()
            os.wait4(proc.pid, 0)
            raise RuntimeError(f"{argv[:3]}… ran past {timeout} s")
        time.sleep(0.01)
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[:3]}… exited {proc.returncode}: {err[-500:]}")
    return child_peak_kb(usage.ru_maxrss, inherited, polled) / 1024  # Linux reports KiB


def child_peak_kb(rusage_kb: int, inherited_kb: int, polled_kb: int) -> int:
    """A reaped child's own peak RSS: its ``ru_maxrss`` unless that is only the peak carried over
    fork+exec from its parent (not above ``inherited_kb``), then the VmHWM polled while it ran."""
    return rusage_kb if rusage_kb > inherited_kb or not polled_kb else polled_kb


def python_peak_rss_mb(code: str, **kw) -> float:
    """Peak RSS (MB) of ``python -c code`` run with this interpreter from the repo root."""
    return peak_rss_mb([sys.executable, "-c", code], cwd=str(REPO), **kw)


def load_note() -> str:
    """The 1/5/15-minute load averages and CPU count, for recording with results."""
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f}/{five:.2f}/{fifteen:.2f} on {os.cpu_count()} CPUs"
