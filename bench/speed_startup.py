"""Start-up rows of issue 15's speed table: the CLI on a cached URL and ``mcp serve`` to initialised.

Each figure is the median wall time of a fresh process, with its baseline measured in the same
run and the two interleaved (A, B, A, B, …) so that a change in load hits both alike:

* ``webshelf extract URL`` on a URL the shelf answers, next to ``python -c pass``: goal ≤ 4×.
* the floor under it: ``import click, yaml, sqlite3`` and one pydantic model built and used —
  what any pydantic+click CLI pays before webshelf does anything (not judged; it says how close
  to the goal a CLI on these libraries can get on this machine).
* ``webshelf mcp serve``: spawn, send ``initialize`` on stdin, read the response: ≤ 350 ms;
  and to the first ``tools/list`` answer (not judged). The warm-up run stores the SDK's frame,
  so the timed runs take the early answer (core/surfaces/mcp_early.py), as every start after
  the first does.
* the floor under that: importing the MCP SDK's low-level server and stdio transport, which
  ``mcp serve`` needs before it can answer (not judged).
* ``webshelf read`` and ``webshelf config show`` next to ``python -c pass`` (not judged).
* two lower floors, since a cached extract builds no pydantic validator (core/config.py
  ``default_config``, a constructed result): one pydantic model *defined* (``defer_build``) and
  none built — what any CLI whose config is a pydantic model pays, so what a cached extract
  cannot go below — and the bare imports of click, pydantic and sqlite3 (not judged).
* the same cached extract with its config snapshot removed before each run (the full path:
  validation, then the snapshot written — core/config_snapshot.py), and the floor of the path
  that imports no pydantic: ``import click, sqlite3`` (not judged).
* ``--other-webshelf PATH``: the same cached extract by another installation's console script
  (e.g. main's, in its own venv), interleaved with ours: a before/after in one run; with the
  MCP SDK installed, its ``mcp serve`` rows too.

``--cpu`` reports the child's CPU time (user + system, ``os.wait4``) instead of wall time: on
a loaded machine wall time mostly measures the wait for a core, CPU time what the process did.

The stored page is put on the shelf directly (a temporary ``WEBSHELF_HOME``, no config file),
so no network is needed. Every child reads its bytecode from a temporary ``PYTHONPYCACHEPREFIX``
that the warm-up fills (what an installed package has; see ``rows``). Run alone:
``python bench/speed_startup.py [--runs N]``; ``bench/speed.py`` collects ``rows()`` with the
other areas.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

try:  # the shared Row protocol (bench/speed_common.py)
    from speed_common import Row, load_note, row  # noqa: E402
except ImportError:  # pragma: no cover — before the collector lands: the same fields, computed here
    Row = dict  # type: ignore[misc,assignment]

    def row(what, ours_ms, baseline_ms=None, *, max_ratio=None, max_ms=None, goal=None, passed=None, note=""):
        r = ours_ms / baseline_ms if ours_ms is not None and baseline_ms else None
        if passed is None and ours_ms is not None and (max_ratio is not None or max_ms is not None):
            passed = (max_ratio is None or (r is not None and r <= max_ratio)) and (max_ms is None or ours_ms <= max_ms)
        if goal is None:
            goal = ", ".join(([f"≤ {max_ratio:g}×"] if max_ratio is not None else []) +
                             ([f"≤ {max_ms:g} ms"] if max_ms is not None else [])) or "—"
        return dict(what=what, ours_ms=ours_ms, baseline_ms=baseline_ms, ratio=r, goal=goal, passed=passed, note=note)

    def load_note() -> str:
        one, five, fifteen = os.getloadavg()
        return f"load {one:.2f}/{five:.2f}/{fifteen:.2f} on {os.cpu_count()} CPUs"

from webshelf.cache.shelf import Shelf  # noqa: E402

URL = "https://docs.example.org/startup-bench"
PY = sys.executable
FLOOR = ("import click, yaml, sqlite3\nfrom pydantic import BaseModel\n"
         "class M(BaseModel):\n    x: int = 1\nM.model_validate({'x': 2})")
DEFINED_FLOOR = ("import click, sqlite3\nfrom pydantic import BaseModel, ConfigDict, Field\n"
                 "class M(BaseModel):\n    model_config = ConfigDict(defer_build=True)\n"
                 "    x: int = Field(1, ge=0)\nM.model_construct()")
IMPORTS_FLOOR = "import click, pydantic, sqlite3"
NO_PYDANTIC_FLOOR = "import click, sqlite3"
MCP_FLOOR = "import mcp_types\nfrom mcp.server.lowlevel import Server\nfrom mcp.server.stdio import stdio_server"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "speed_startup", "version": "0"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def _webshelf() -> list[str]:
    script = Path(PY).with_name("webshelf")  # the console script a user runs
    return [str(script)] if script.exists() else [PY, "-m", "webshelf"]


CPU = {"on": False}  # --cpu: child CPU time instead of wall time


def _run(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    ms = (time.perf_counter() - start) * 1000
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stderr.close()
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[:3]} exited {proc.returncode}: {err.decode(errors='replace')[-500:]}")
    return (usage.ru_utime + usage.ru_stime) * 1000 if CPU["on"] else ms


def _full(home: Path, argv: list[str], env: dict[str, str]) -> float:
    """``argv`` with no config snapshot: the full path, which validates the config and writes one."""
    from webshelf.core.config_snapshot import NAME

    (home / "cache" / NAME).unlink(missing_ok=True)
    return _run(argv, env)


def _mcp_initialised(env: dict[str, str], script: list[str] | None = None, tools: bool = False) -> float:
    """Spawn ``webshelf mcp serve`` (``script``: another installation's), send ``initialize``,
    wait for its response: ms. ``tools``: then ``notifications/initialized`` and ``tools/list``,
    up to that answer."""
    start = time.perf_counter()
    proc = subprocess.Popen([*(script or _webshelf()), "mcp", "serve"], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        proc.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        proc.stdin.flush()
        line = proc.stdout.readline()
        if tools and b'"result"' in line:
            proc.stdin.write((json.dumps(INITIALIZED) + "\n" + json.dumps(TOOLS_LIST) + "\n").encode())
            proc.stdin.flush()
            line = proc.stdout.readline()
        ms = (time.perf_counter() - start) * 1000
    finally:
        proc.stdin.close()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        err = proc.stderr.read().decode(errors="replace")
        proc.stdout.close()
        proc.stderr.close()
    if b'"result"' not in line:
        raise RuntimeError(f"mcp serve did not initialise: {line[:300]!r} {err[-500:]}")
    return ms


def _interleaved(fns: dict[str, Callable[[], float]], runs: int) -> dict[str, float]:
    for fn in fns.values():  # warm-up: page cache, .pyc files
        fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(max(runs, 5)):
        for name, fn in fns.items():
            times[name].append(fn())
    return {name: statistics.median(values) for name, values in times.items()}


def _mcp_available() -> bool:
    return subprocess.run([PY, "-c", "import mcp_types, mcp.server.lowlevel"], capture_output=True).returncode == 0


def rows(runs: int = 9, other: str | None = None) -> list[Row]:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        text = "# Start-up bench\n\n" + "".join(f"Line {i}: a stored page the shelf answers.\n" for i in range(3_000))
        stored = Shelf(home).put(url=URL, final_url=URL, title="Start-up bench", text=text, backend="local",
                                 content_type="text/html").path
        env = dict(os.environ, WEBSHELF_HOME=str(home))
        env.pop("WEBSHELF_CONFIG", None)
        # Bytecode as an installed package has it (pip compiles on install; Python writes it at a
        # first import): the warm-up writes every child's into a temporary prefix, and the timed
        # runs read it — also where the environment sets PYTHONDONTWRITEBYTECODE (this workplace
        # does), under which an editable install recompiles all of its modules at every start
        # (the cached extract 4.0× instead of 3.15× `python -c pass`, docs/benchmarks.md).
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        ws = _webshelf()
        cli = {
            "pass": lambda: _run([PY, "-c", "pass"], env),
            "extract": lambda: _run([*ws, "extract", URL], env),
            "extract_full": lambda: _full(home, [*ws, "extract", URL], env),
            "floor": lambda: _run([PY, "-c", FLOOR], env),
            "defined": lambda: _run([PY, "-c", DEFINED_FLOOR], env),
            "imports": lambda: _run([PY, "-c", IMPORTS_FLOOR], env),
            "no_pydantic": lambda: _run([PY, "-c", NO_PYDANTIC_FLOOR], env),
            "read": lambda: _run([*ws, "read", str(stored), "--limit", "50"], env),
            "config": lambda: _run([*ws, "config", "show"], env),
        }
        if other:
            cli["other"] = lambda: _run([other, "extract", URL], env)
        have_mcp = _mcp_available() and not CPU["on"]  # the MCP rows time a response, not a process
        if have_mcp:
            cli["mcp"] = lambda: _mcp_initialised(env)
            cli["mcp_tools"] = lambda: _mcp_initialised(env, tools=True)
            cli["mcp_floor"] = lambda: _run([PY, "-c", MCP_FLOOR], env)
            if other:
                cli["mcp_other"] = lambda: _mcp_initialised(env, [other])
                cli["mcp_tools_other"] = lambda: _mcp_initialised(env, [other], tools=True)
        ms = _interleaved(cli, runs)
    base, load = ms["pass"], load_note()
    unit = "child CPU time (os.wait4)" if CPU["on"] else "wall time"
    out = [
        row("`webshelf extract URL` on a cached URL", ms["extract"], base, max_ratio=4,
            note=f"baseline `python -c pass`; no config file; {unit}; {load}"),
        row("the same extract, first call under a new config (full path: validates, writes the snapshot)",
            ms["extract_full"], base, goal="—", passed=None,
            note="baseline `python -c pass`; the snapshot removed before each run (core/config_snapshot.py)"),
        row("floor: imports only, click+sqlite3 (no pydantic)", ms["no_pydantic"], base, goal="— (floor)",
            passed=None, note="baseline `python -c pass`; the cached path imports no pydantic: its floor"),
        row("floor: click+yaml+sqlite3+one pydantic model", ms["floor"], base, goal="— (floor)", passed=None,
            note="baseline `python -c pass`; what a pydantic+click CLI pays before any work"),
        row("floor: click+sqlite3+one pydantic model defined, none built", ms["defined"], base, goal="— (floor)",
            passed=None, note="baseline `python -c pass`; a cached extract builds no validator: what it cannot go below"),
        row("floor: imports only, click+pydantic+sqlite3", ms["imports"], base, goal="— (floor)", passed=None,
            note="baseline `python -c pass`; pydantic builds its model machinery on the first class, not on import"),
        row("`webshelf read PATH --limit 50`", ms["read"], base, goal="—", passed=None, note="baseline `python -c pass`"),
        row("`webshelf config show`", ms["config"], base, goal="—", passed=None, note="baseline `python -c pass`"),
    ]
    if other:
        out.append(row(f"the same extract by {other}", ms["other"], base, goal="—", passed=None,
                       note=f"baseline `python -c pass`; ours / this: {ms['extract'] / ms['other']:.2f}"))
    if CPU["on"]:
        return out
    if have_mcp:
        out += [
            row("`webshelf mcp serve` start to initialised", ms["mcp"], ms["mcp_floor"], max_ms=350,
                note=f"real stdio client: spawn, initialize, response; baseline: importing the MCP SDK's server alone; {load}"),
            row("`webshelf mcp serve` start to the first tools/list answer", ms["mcp_tools"], ms["mcp_floor"],
                goal="—", passed=None, note="the same, then notifications/initialized and tools/list (answered early too when its frame is stored)"),
        ]
        if other:
            out += [
                row(f"`mcp serve` start to initialised by {other}", ms["mcp_other"], ms["mcp_floor"], goal="—",
                    passed=None, note=f"ours / this: {ms['mcp'] / ms['mcp_other']:.2f}"),
                row(f"`mcp serve` start to the first tools/list answer by {other}", ms["mcp_tools_other"],
                    ms["mcp_floor"], goal="—", passed=None,
                    note=f"ours / this: {ms['mcp_tools'] / ms['mcp_tools_other']:.2f}"),
            ]
    else:
        out.append(row("`webshelf mcp serve` start to initialised", None, goal="≤ 350 ms", passed=None,
                       note="skipped: the MCP SDK is not installed (pip install 'webshelf[mcp]')"))
    return out


def _print(table: list[Row]) -> None:
    def fmt(v: float | None, spec: str) -> str:
        return "—" if v is None else format(v, spec)

    print(f"{'what':<48} {'ours ms':>9} {'base ms':>9} {'ratio':>7} {'goal':>12} {'result':>6}  note")
    for r in table:
        verdict = {True: "PASS", False: "FAIL", None: "—"}[r["passed"]]
        print(f"{r['what']:<48} {fmt(r['ours_ms'], '.1f'):>9} {fmt(r['baseline_ms'], '.1f'):>9} "
              f"{fmt(r['ratio'], '.2f'):>7} {r['goal']:>12} {verdict:>6}  {r['note']}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="runs of each command (median; at least 5)")
    parser.add_argument("--cpu", action="store_true", help="child CPU time (user+system) instead of wall time; "
                        "no MCP rows")
    parser.add_argument("--other-webshelf", metavar="PATH", help="another installation's webshelf console script "
                        "to time on the same cached URL (a before/after in one run)")
    args = parser.parse_args()
    CPU["on"] = args.cpu
    _print(rows(args.runs, args.other_webshelf))
