"""Hostile-input benchmark (issue 16 items 2, 3, 4, 7): is each bound cheap, and does it bound?

Each row compares with a baseline measured in the same run:

- regex compilation: peak RSS and time of compiling in a fresh subprocess — the guard refusing
  ``(?:a{2000}){2000}`` (which needed 1.1 GB unguarded) and ``(?:a{65535}){65535}``, next to
  compiling an ordinary pattern and the largest nested repeat the guard allows, and (baseline of
  what the guard prevents, kept small for a shared machine) ``(?:a{600}){600}`` compiled unguarded;
- provider answers: peak traced memory and time for a gzip answer inflating to 200 MB with
  ``web.max_bytes`` 10 MB, next to a plain 5 MB answer read the same way;
- hidden text: median time of ``drop_hidden`` (inline CSS with tinycss2, the page's sheets,
  comments) on corpus HTML pages, next to parsing the same page with lexbor alone;
- MCP guard: median time of ``check_line`` on a tools/call line, next to ``json.loads`` of it.

Run: .venv/bin/python bench/hostile_input.py [--rounds N]  (bench/hostile.py: conversion bounds, item 1)
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import statistics
import subprocess
import sys
import time
import tracemalloc
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402
from selectolax.lexbor import LexborHTMLParser  # noqa: E402

from webshelf.core.backends.hosted import read_answer  # noqa: E402
from webshelf.core.convert.css_hidden import clear_memo  # noqa: E402
from webshelf.core.convert.html_hidden import drop_hidden  # noqa: E402
from webshelf.core.surfaces.mcp_guard import check_line  # noqa: E402
from tests import corpus  # noqa: E402

COMPILE = r"""
import resource, sys, time, regex
from webshelf.core.search_page import compile_guard
pattern, guarded = sys.argv[1], sys.argv[2] == "1"
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
try:
    if guarded:
        compile_guard(pattern)
    regex.compile(pattern, regex.MULTILINE | regex.V0 | regex.IGNORECASE)
    outcome = "compiled"
except Exception as exc:
    outcome = "refused"
print(outcome, time.perf_counter() - t, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024)
"""


def compile_rows() -> list[tuple[str, str, str, str]]:
    rows = []
    for label, pattern, guarded in [("ordinary", r"\bdef \w+\(", True), ("largest allowed", "(?:a{300}){300}", True),
                                    ("guard: issue case", "(?:a{2000}){2000}", True),
                                    ("guard: OOM case", "(?:a{65535}){65535}", True),
                                    ("unguarded baseline", "(?:a{600}){600}", False)]:
        out = subprocess.run([sys.executable, "-c", COMPILE, pattern, "1" if guarded else "0"], capture_output=True,
                             text=True, timeout=300, cwd=Path(__file__).resolve().parents[1]).stdout.split()
        rows.append((f"{label}: {pattern}", out[0], f"{float(out[1]) * 1000:.2f} ms", f"{float(out[2]):.1f} MB"))
    return rows


class _Raw(httpx.AsyncByteStream):
    def __init__(self, data: bytes) -> None:
        self.data = data

    async def __aiter__(self):  # noqa: ANN204
        for i in range(0, len(self.data), 65536):
            yield self.data[i:i + 65536]


def provider_rows() -> list[tuple[str, str, str, str]]:
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    bomb = z.compress(b'{"x":"' + b"A" * 200_000_000) + z.flush()
    plain = json.dumps({"results": [{"raw_content": "w " * 2_500_000}]}).encode()
    rows = []
    for label, data, headers in [("plain 5 MB answer (baseline)", plain, {}),
                                 (f"gzip bomb {len(bomb) // 1024} KB → 200 MB", bomb, {"content-encoding": "gzip"})]:
        response = httpx.Response(200, headers=headers, stream=_Raw(data), request=httpx.Request("POST", "http://x/"))
        tracemalloc.start()
        t = time.perf_counter()
        try:
            body = asyncio.run(read_answer(response, 10_000_000, "bench"))
            outcome = f"read {len(body):,} B"
        except Exception as exc:  # noqa: BLE001
            outcome = type(exc).__name__
        elapsed = time.perf_counter() - t
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        rows.append((label, outcome, f"{elapsed * 1000:.0f} ms", f"{peak / 1e6:.1f} MB (+ input)"))
    return rows


def median_ms(fn, rounds: int) -> float:  # noqa: ANN001
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def hidden_rows(rounds: int) -> list[tuple[str, str, str, str]]:
    pages = sorted((corpus.SHARED / "wcxb-dev" / "html").glob("*.html.gz"))[:40]
    htmls = [gzip.decompress(p.read_bytes()).decode("utf-8", errors="replace") for p in pages]
    parse = sum(median_ms(lambda h=h: LexborHTMLParser(h).html, rounds) for h in htmls) / len(htmls)
    def cold(h: str) -> None:  # every round as a first visit: the per-process sheet memo would flatter rounds 2+
        clear_memo()
        drop_hidden(h)

    drop = sum(median_ms(lambda h=h: cold(h), rounds) for h in htmls) / len(htmls)
    return [(f"{len(htmls)} corpus pages, mean of medians", "lexbor parse + serialise (baseline)", f"{parse:.2f} ms", ""),
            ("", "drop_hidden (cold: memo cleared each call)", f"{drop:.2f} ms", f"{drop / parse:.2f}× baseline")]


def guard_rows(rounds: int) -> list[tuple[str, str, str, str]]:
    line = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                       "params": {"name": "web_extract", "arguments": {"urls": ["https://example.com/" + "p" * 200] * 20}}})
    base = median_ms(lambda: [json.loads(line) for _ in range(100)], rounds) / 100
    guard = median_ms(lambda: [check_line(line) for _ in range(100)], rounds) / 100
    deep = "[" * 100_000 + "]" * 100_000
    deep_ms = median_ms(lambda: check_line('{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":' + deep + "}}"), 3)
    return [(f"tools/call line, {len(line):,} B", "json.loads (baseline)", f"{base * 1000:.1f} µs", ""),
            ("", "check_line", f"{guard * 1000:.1f} µs", f"{guard / base:.2f}× baseline"),
            ("100k-deep arguments", "check_line → -32602", f"{deep_ms:.1f} ms", "no recursion")]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    console = Console()
    for title, rows in [("regex compilation (fresh subprocess each)", compile_rows()),
                        ("provider answer, web.max_bytes 10 MB", provider_rows()),
                        ("hidden text", hidden_rows(rounds)), ("MCP protocol guard", guard_rows(rounds))]:
        table = Table(title=title)
        for col in ("case", "outcome", "time", "memory / ratio"):
            table.add_column(col)
        for row in rows:
            table.add_row(*row)
        console.print(table)


if __name__ == "__main__":
    main()
