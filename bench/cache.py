"""Cache benchmark: a reuse hit vs a network miss, and one eviction pass over 10,000 pages.

    .venv/bin/python bench/cache.py

Targets (issue 3): a hit ≤ 2 ms end to end in-process against a loopback server with 50 ms
latency (the miss, measured in the same run, is the baseline); an eviction pass over 10,000
pages ≤ 200 ms (baseline: listing the same directory).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from webshelf.cache.evict import EvictionPolicy  # noqa: E402
from webshelf.cache.index import PageRecord  # noqa: E402
from webshelf.cache.layout import content_hash, page_name  # noqa: E402
from webshelf.cache.shelf import Shelf  # noqa: E402
from webshelf.core.config import Config  # noqa: E402
from webshelf.core.extract import web_extract, web_extract_sync  # noqa: E402
from tests.loopback import LoopbackServer, Response  # noqa: E402

PAGES = 10_000


def doc() -> bytes:
    """A realistic long docs page: ~80 KB of Markdown, 60 headings, code blocks."""
    parts = []
    for i in range(60):
        parts.append(f"## Section {i}: [link](https://example.com/{i})\n\n")
        parts.extend(f"Paragraph {i}.{j} with some prose about the API and its options. " * 2 + "\n\n" for j in range(5))
        parts.append("```python\nprint('example')\n```\n\n")
    return "".join(parts).encode()


def ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def bench_reuse(home: Path) -> list[tuple[str, float, str]]:
    config = Config.model_validate({"web": {"allow_private": True, "fallback": ["local"]}}).with_home(home)
    with LoopbackServer(latency=0.05) as srv:
        url = srv.route("/doc", Response(doc(), headers={"Content-Type": "text/markdown"}))
        miss, hit, hit_async = [], [], []
        for _ in range(15):
            t = time.perf_counter()
            r = web_extract_sync([url], config=config, fresh=True)[0]
            miss.append(time.perf_counter() - t)
            assert not r.cached and r.truncated
        for _ in range(300):
            t = time.perf_counter()
            r = web_extract_sync([url], config=config)[0]
            hit.append(time.perf_counter() - t)
            assert r.cached

        async def in_loop() -> None:
            for _ in range(300):
                t = time.perf_counter()
                (res,) = await web_extract([url], config=config)
                hit_async.append(time.perf_counter() - t)
                assert res.cached

        asyncio.run(in_loop())
        assert srv.hits["/doc"] == 15
    return [
        ("miss (fetch 50 ms + convert + store), baseline", ms(miss), "-"),
        ("hit, web_extract_sync", ms(hit), "≤ 2 ms"),
        ("hit, await web_extract (running loop)", ms(hit_async), "≤ 2 ms"),
    ]


def fill(home: Path, n: int) -> Shelf:
    """n small stored pages, written directly (fsync-free) to build the fixture quickly."""
    shelf = Shelf(home)
    now = time.time()
    records = []
    for i in range(n):
        text = f"# page {i}\n" + "x" * 1000 + "\n"
        url = f"http://example.com/{i}"
        name = page_name("example.com", url, content_hash(text))
        (shelf.web_dir / name).write_text(text)
        records.append(PageRecord(name=name, url=url, final_url=url, title=None, sha256=content_hash(text),
                                  chars=len(text), lines=2, bytes=len(text), fetched_at=now - i,
                                  last_access=now - i, backend="bench", content_type="text/markdown", url_key=url))
    for rec in records:
        shelf.index.record(rec)
    return shelf


def bench_eviction(root: Path) -> list[tuple[str, float, str]]:
    listing, idle, planning, evicting = [], [], [], []
    for round_ in range(3):
        shelf = fill(root / f"home{round_}", PAGES)
        os.sync()  # flush the fixture's dirty pages so writeback does not land in a measured pass
        total = shelf.index.totals().bytes
        for _ in range(3):
            t = time.perf_counter()
            os.listdir(shelf.web_dir)
            listing.append(time.perf_counter() - t)
            t = time.perf_counter()
            report = shelf.prune(EvictionPolicy(ttl=7 * 86_400, max_total_bytes=total * 2))
            idle.append(time.perf_counter() - t)
            assert not report.removed
        over = EvictionPolicy(ttl=7 * 86_400, max_total_bytes=int(total * 0.9))
        t = time.perf_counter()
        shelf.prune(over, dry_run=True)
        planning.append(time.perf_counter() - t)
        t = time.perf_counter()
        report = shelf.prune(over)
        evicting.append(time.perf_counter() - t)
        assert len(report.removed) >= PAGES // 6, len(report.removed)
        shelf.close()
    return [
        (f"list cache/web ({PAGES:,} files), baseline", ms(listing), "-"),
        (f"eviction pass, {PAGES:,} pages, nothing to remove", ms(idle), "≤ 200 ms"),
        (f"eviction pass, {PAGES:,} pages, over cap: plan only (--dry-run)", ms(planning), "-"),
        (f"eviction pass, {PAGES:,} pages, over cap: 1,900 removed", ms(evicting), "≤ 200 ms"),
    ]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        rows = bench_reuse(Path(tmp) / "reuse") + bench_eviction(Path(tmp))
    width = max(len(r[0]) for r in rows)
    print(f"{'case':<{width}}  {'median ms':>10}  target")
    for name, value, target in rows:
        print(f"{name:<{width}}  {value:>10.2f}  {target}")


if __name__ == "__main__":
    main()
