"""Hosted-backend benchmark: does each provider's batching give the wall time it should?

For each backend, 20 URLs through web_extract against its fake provider (tests/providers.py) on
loopback, which adds 200 ms to every request. The ideal is latency × the number of request
rounds that provider's batching needs: Firecrawl sends one request per URL, ``web.concurrency``
(8) at a time → ⌈20/8⌉ = 3 rounds; Tavily and Parallel take 20 URLs a request and Exa 100 →
1 round. Pipeline overhead (clean, store, truncate) is included, as the agent sees it.
Baselines in the same run: the same call against a provider with no latency (webshelf's own
cost: client set-up, clean, store with fsync, truncate), and one request at a time (latency × 20).

Run: .venv/bin/python bench/hosted.py [--rounds N]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from webshelf.core.config import Config  # noqa: E402
from webshelf.core.extract import web_extract_sync  # noqa: E402
from tests.providers import FakeProvider  # noqa: E402

LATENCY = 0.2
N_URLS = 20
KEY = "bench-key"
BATCH = {"firecrawl": 1, "tavily": 20, "exa": 100, "parallel": 20}


def run(kind: str, rounds: int, latency: float) -> tuple[list[float], int, int, int]:
    urls = [f"https://bench.example/{kind}/{i}" for i in range(N_URLS)]
    pages = {u: f"# Page {i}\n\n" + "Some text of a page. " * 400 + "\n" for i, u in enumerate(urls)}
    with FakeProvider(kind, key=KEY, pages=pages, latency=latency) as fake, tempfile.TemporaryDirectory() as home:
        config = Config.model_validate({"web": {"backend": kind, kind: {"api_key": KEY, "base_url": fake.base}}})
        config.with_home(Path(home))
        walls, failed = [], 0
        for _ in range(rounds):
            fake.requests.clear()
            start = time.perf_counter()
            results = web_extract_sync(urls, config=config)
            walls.append(time.perf_counter() - start)
            failed += sum(not r.ok for r in results)
        requests = len(fake.requests)
    return walls, requests, failed, config.web.concurrency


def row(kind: str, rounds: int) -> list[str]:
    walls, requests, failed, concurrency = run(kind, rounds, LATENCY)
    zero, _, _, _ = run(kind, rounds, 0.0)  # the same call with an instant provider: pipeline cost alone
    ideal = LATENCY * (math.ceil(N_URLS / concurrency) if BATCH[kind] == 1 else math.ceil(N_URLS / BATCH[kind]))
    wall, base = statistics.median(walls), statistics.median(zero)
    return [kind, str(requests), f"{wall:.3f}", f"{ideal:.3f}", f"{wall / ideal:.2f}", f"{base:.3f}",
            f"{(wall - base) / ideal:.2f}", f"{LATENCY * N_URLS:.1f}", str(failed)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    table = Table(title=f"{N_URLS} URLs per call, fake provider with {LATENCY * 1000:.0f} ms per request "
                        f"(median of {args.rounds})")
    for col in ("backend", "requests", "wall s", "ideal s", "× ideal", "0 ms provider s", "(wall − 0 ms) / ideal",
                "one at a time s", "failed"):
        table.add_column(col, justify="right")
    for kind in BATCH:
        table.add_row(*row(kind, args.rounds))
    Console(width=160).print(table)


if __name__ == "__main__":
    main()
