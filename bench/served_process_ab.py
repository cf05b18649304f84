"""A/B of the served HTML path as a process runs it, cyclic garbage collector included (issue 14/15).

``bench/served_cpu_ab.py`` interleaves two packages page by page in one process with the
collector off: exact for the code's own CPU, blind to what the collector costs — and the
collector is process-wide, so it cannot be split between two packages sharing a process. Here
each side is its own process that serves every page once in corpus order, as a serving process
would (sheet memo warm, collector on, its settings untouched), and the sides alternate process
by process for ``--rounds`` rounds (A B, B A, …) so load drift falls on both. Per run: the
process CPU of the whole pass, the median wall ms per page (what bench/extract_quality.py
compares with trafilatura), the collections by generation and their time. Checks that both
sides return the same Markdown for every page (a difference fails the run).

    .venv/bin/python bench/served_process_ab.py [--before REV] [--rounds 3] [--limit N] [--freeze]
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import importlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CTYPE = "text/html; charset=utf-8"


def _worker(rev: str | None, limit: int | None, out: Path, freeze: bool = False) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    import extract_quality as eq

    if rev is None:
        from webshelf.core.convert import by_type
    else:
        from old_code import old_package

        by_type = importlib.import_module(f"{old_package(rev)}.core.convert.by_type")
    # the pages read here, not by served_profile.pages: that module imports this checkout's package,
    # whose modules would then sit in the "before" process too and be walked by its collector
    docs = [(page["html"].encode("utf-8"), page["url"] or "") for corpus in ("wcxb", "readability")
            for page in (eq.load_page(corpus, d) for d in eq.page_index(corpus, limit))]
    by_type.to_markdown(docs[0][0], CTYPE, docs[0][1])  # imports, model load (as extract_quality's warm-up)
    if freeze:  # as a pool worker does after its preload (core/convert/pool.py ``_init_worker``)
        gc.freeze()
    collections, collected_ms, started = [0, 0, 0], [0.0], [0.0]

    def watch(phase: str, info: dict) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            collections[info["generation"]] += 1
            collected_ms[0] += (time.perf_counter() - started[0]) * 1000

    gc.callbacks.append(watch)
    digest, walls = hashlib.blake2b(digest_size=16), []
    cpu = time.process_time()
    for body, url in docs:
        t0 = time.perf_counter()
        converted = by_type.to_markdown(body, CTYPE, url)
        walls.append((time.perf_counter() - t0) * 1000)
        digest.update(converted.markdown.encode("utf-8", "surrogatepass") + b"\0")
    cpu = time.process_time() - cpu
    gc.callbacks.remove(watch)
    out.write_text(json.dumps({"cpu_s": cpu, "walls": walls, "collections": collections,
                               "gc_ms": collected_ms[0], "digest": digest.hexdigest()}))


def _run(rev: str | None, limit: int | None, freeze: bool) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        cmd = [sys.executable, __file__, "--worker", rev or "", out.name] + (["--limit", str(limit)] if limit else []) \
            + (["--freeze"] if freeze else [])
        subprocess.run(cmd, check=True, cwd=ROOT)
        return json.loads(Path(out.name).read_text())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="main")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--limit", type=int, help="first N pages of each corpus")
    ap.add_argument("--freeze", action="store_true",
                    help="gc.freeze() after the warm-up, as a conversion pool worker does after its preload")
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        _worker(args.worker[0] or None, args.limit, Path(args.worker[1]), args.freeze)
        return 0
    runs: dict[str, list[dict]] = {"before": [], "now": []}
    for r in range(args.rounds):
        for side in (("before", "now") if r % 2 == 0 else ("now", "before")):
            runs[side].append(_run(args.before if side == "before" else None, args.limit, args.freeze))
    differ = len({run["digest"] for side in runs.values() for run in side}) != 1
    pages = len(runs["now"][0]["walls"])
    print(f"{pages} pages (WCXB dev + readability) x {args.rounds} rounds, each side its own process, "
          f"before = {args.before}{', frozen after the warm-up' if args.freeze else ''}; "
          f"outputs {'DIFFER' if differ else 'identical'}")
    print("| round | side | process CPU s | median wall ms/page | collections gen 0/1/2 | collector ms |")
    print("|---|---|---:|---:|---|---:|")
    for r in range(args.rounds):
        for side in ("before", "now"):
            run = runs[side][r]
            print(f"| {r + 1} | {side} | {run['cpu_s']:.2f} | {statistics.median(run['walls']):.3f} | "
                  f"{'/'.join(map(str, run['collections']))} | {run['gc_ms']:.0f} |")
    cpu = {side: statistics.median(run["cpu_s"] for run in runs[side]) for side in runs}
    wall = {side: statistics.median(statistics.median(run["walls"]) for run in runs[side]) for side in runs}
    print(f"\nmedian over rounds: process CPU {cpu['before']:.2f} → {cpu['now']:.2f} s "
          f"({cpu['now'] / cpu['before']:.3f}×); median wall ms/page {wall['before']:.3f} → {wall['now']:.3f} "
          f"({wall['now'] / wall['before']:.3f}×)")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
