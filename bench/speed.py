"""Issue 15's speed table in one command: every row, ours vs a baseline from the same run.

A collector: it imports every ``bench/speed_*.py`` module (except ``speed_common``), calls its
``rows()`` (protocol in ``bench/speed_common.py``) and prints one table — what, ours, baseline,
ratio, goal, PASS/FAIL — plus the machine load, so a result is never read without its conditions.
A module that raises shows as a FAIL row naming the error; the others still run.

Run: .venv/bin/python bench/speed.py [--only post,startup] [--json]
Exit status is 1 when any judged row fails.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from speed_common import Row, load_note  # noqa: E402

HERE = Path(__file__).resolve().parent


def modules(only: set[str] | None) -> list[str]:
    """Names of the speed_*.py modules next to this file, sorted, minus speed_common."""
    names = sorted(p.stem for p in HERE.glob("speed_*.py") if p.stem != "speed_common")
    return [n for n in names if only is None or n.removeprefix("speed_") in only]


def collect(name: str) -> list[Row]:
    try:
        return list(importlib.import_module(name).rows())
    except Exception as exc:  # one broken module never hides the other rows
        traceback.print_exc(file=sys.stderr)
        return [Row(what=f"{name}: could not run", ours_ms=None, baseline_ms=None, ratio=None,
                    goal="—", passed=False, note=f"{type(exc).__name__}: {exc}"[:200])]


def fmt(v: float | None, unit: str = "") -> str:
    if v is None:
        return "—"
    return f"{v:,.1f}{unit}" if v < 1000 else f"{v:,.0f}{unit}"


def verdict(passed: bool | None) -> str:
    return {True: "PASS", False: "FAIL", None: "—"}[passed]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="comma-separated areas, e.g. post,startup,pool")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else None
    before = load_note()
    rows: list[tuple[str, Row]] = []
    for name in modules(only):
        print(f"running {name} …", file=sys.stderr, flush=True)
        rows += [(name, r) for r in collect(name)]
    after = load_note()
    if args.json:
        print(json.dumps({"load_before": before, "load_after": after, "rows": [r for _, r in rows]}, indent=1))
    else:
        from rich.console import Console
        from rich.table import Table
        table = Table(title=f"issue 15 speed table ({before}; after: {after})")
        for col in ("what", "ours ms", "baseline ms", "ratio", "goal", "result", "note"):
            table.add_column(col, justify="left" if col in ("what", "goal", "note") else "right")
        for _, r in rows:
            table.add_row(r["what"], fmt(r["ours_ms"]), fmt(r["baseline_ms"]),
                          "—" if r["ratio"] is None else f"{r['ratio']:.2f}×", r["goal"],
                          verdict(r["passed"]), r["note"])
        Console(width=200).print(table)
    return 1 if any(r["passed"] is False for _, r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
