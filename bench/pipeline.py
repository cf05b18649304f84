"""Pipeline benchmark: is webshelf's own overhead invisible next to the network?

1. 50 real pages (WCXB HTML) from a loopback server that adds 200 ms to every response:
   web_extract's wall time vs the ideal (latency × ceil(50 / concurrency)) and vs fetching the
   same URLs one at a time (concurrency 1) — both measured in this run. Target ≤ 1.2× ideal.
2. The post-fetch cost (clean + store + truncate) of a 2 MB Markdown page, median ms, next to a
   baseline of writing + fsyncing the same bytes plainly. Target ≤ 10 ms.

Run: .venv/bin/python bench/pipeline.py [--rounds N]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from webshelf.cache.shelf import Shelf  # noqa: E402
from webshelf.core.clean import clean_markdown  # noqa: E402
from webshelf.core.config import Config  # noqa: E402
from webshelf.core.extract import web_extract_sync  # noqa: E402
from webshelf.core.truncate import render  # noqa: E402
from tests.loopback import PYDOCS, WCXB, LoopbackServer  # noqa: E402

LATENCY = 0.2
N_URLS = 50


def bench_fetch(rounds: int) -> Table:
    ids = sorted(p.name.split(".")[0] for p in (WCXB / "html").glob("*.html.gz"))[:N_URLS]
    table = Table(title=f"{N_URLS} URLs, loopback server with {LATENCY * 1000:.0f} ms latency (median of {rounds})")
    for col in ("run", "concurrency", "wall s", "ideal s", "× ideal", "failed"):
        table.add_column(col, justify="right")
    with LoopbackServer(latency=LATENCY) as server, tempfile.TemporaryDirectory() as home:
        urls = [server.url(f"/wcxb/{i}") for i in ids]
        for label, concurrency in (("webshelf", 8), ("one at a time", 1)):
            config = Config.model_validate({"web": {"max_urls": N_URLS, "concurrency": concurrency,
                                                   "allow_private": True, "fallback": ["local"],
                                                   # one loopback host stands for many sites: no per-host limit
                                                   "per_host_concurrency": concurrency}}).with_home(Path(home))  # loopback
            walls, failed = [], 0
            for _ in range(rounds if concurrency > 1 else 1):
                start = time.perf_counter()
                results = web_extract_sync(urls, config=config, fresh=True)  # measure fetching, not cache hits
                walls.append(time.perf_counter() - start)
                failed = sum(not r.ok for r in results)
            ideal = LATENCY * math.ceil(N_URLS / concurrency)
            wall = statistics.median(walls)
            table.add_row(label, str(concurrency), f"{wall:.2f}", f"{ideal:.2f}", f"{wall / ideal:.2f}", str(failed))
    return table


def two_mb_markdown() -> str:
    """~2 MB of real Markdown: the pydocs pages converted, concatenated."""
    from webshelf.core.convert.html_markdown import html_to_markdown

    parts, size = [], 0
    for file in sorted(PYDOCS.glob("*.html")):
        md = html_to_markdown(file.read_text(encoding="utf-8"), f"https://docs.python.org/3/{file.stem}").markdown
        parts.append(md)
        size += len(md.encode())
        if size >= 2_000_000:
            break
    return "\n".join(parts).encode()[:2_000_000].decode("utf-8", "ignore")


def bench_post_fetch(rounds: int) -> Table:
    text = two_mb_markdown()
    steps: dict[str, list[float]] = {"clean": [], "store": [], "truncate": [], "total": [], "baseline: write+fsync": []}
    with tempfile.TemporaryDirectory() as home:
        config = Config().with_home(Path(home))
        with Shelf(config.home) as shelf:
            for i in range(rounds):
                raw = text + f"\nround {i}\n"  # new content each round: a real write, not a reuse
                t0 = time.perf_counter()
                cleaned = clean_markdown(raw, config.web.max_line_chars)
                t1 = time.perf_counter()
                stored = shelf.put(url=f"https://bench.example/{i}", final_url=None, title=None, text=cleaned,
                                   backend="bench", content_type="text/markdown")
                t2 = time.perf_counter()
                render(cleaned, config.web.extract_char_limit, path=str(stored.path))
                t3 = time.perf_counter()
                steps["clean"].append(t1 - t0)
                steps["store"].append(t2 - t1)
                steps["truncate"].append(t3 - t2)
                steps["total"].append(t3 - t0)
                data = raw.encode()
                b0 = time.perf_counter()
                with open(Path(home) / f"plain-{i}.md", "wb") as f:
                    f.write(data)
                    f.flush()
                    os.fsync(f.fileno())
                steps["baseline: write+fsync"].append(time.perf_counter() - b0)
    table = Table(title=f"post-fetch cost of a {len(text.encode()) / 1e6:.1f} MB Markdown page ({rounds} rounds)")
    for col in ("step", "median ms", "p95 ms"):
        table.add_column(col, justify="right")
    for step, values in steps.items():
        values.sort()
        table.add_row(step, f"{statistics.median(values) * 1000:.2f}", f"{values[int(len(values) * 0.95) - 1] * 1000:.2f}")
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="repetitions of the concurrent run")
    args = parser.parse_args()
    console = Console()
    console.print(bench_fetch(args.rounds))
    console.print(bench_post_fetch(max(args.rounds * 4, 20)))


if __name__ == "__main__":
    main()
