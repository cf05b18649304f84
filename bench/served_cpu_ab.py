"""Interleaved A/B of the whole served HTML path's CPU time (issue 14/15): ``by_type.to_markdown``
of the package at ``--before`` (default ``main``, loaded as ``webshelf_before`` by
bench/old_code.py ``old_package``) against the working tree, page by page in one process.

Per page and round, each side converts the page's bytes once (which side goes first alternates
page by page and round by round, so load drift falls on both), timed with ``time.thread_time``
and the garbage collector off while a page runs (a collection would land on whichever side
happened to allocate last). Both sides clear their sheet memo first (``css_hidden.clear_memo``):
the same work every round. Prints, per round, both medians and their ratio, the median of the
page ratios and the ratio of the sums; then the same over each page's fastest round. Checks that
both sides return the same Markdown and title (a difference fails the run).

    nice -n 10 .venv/bin/python bench/served_cpu_ab.py [--before REV] [--pages 400] [--rounds 3]
"""

from __future__ import annotations

import argparse
import gc
import importlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from webshelf.core.convert import by_type as new_by_type, css_hidden as new_css  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
import extract_quality as eq  # noqa: E402
from old_code import old_package  # noqa: E402

CTYPE = "text/html; charset=utf-8"


def _side(by_type, css):  # noqa: ANN001, ANN202
    def run(body: bytes, url: str) -> tuple[float, tuple[str, str]]:
        css.clear_memo()
        t0 = time.thread_time()
        out = by_type.to_markdown(body, CTYPE, url)
        return (time.thread_time() - t0) * 1000, (out.markdown, out.title)
    return run


def _summary(label: str, before: list[float], now: list[float]) -> str:
    ratios = [n / b for b, n in zip(before, now) if b > 0]
    mb, mn = statistics.median(before), statistics.median(now)
    return (f"| {label} | {mb:.3f} | {mn:.3f} | {mn / mb:.4f} | {statistics.median(ratios):.4f} | "
            f"{sum(now) / sum(before):.4f} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="main")
    ap.add_argument("--pages", type=int, default=400, help="first N WCXB dev pages (0: all)")
    ap.add_argument("--readability", action="store_true", help="the readability pages too")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    name = old_package(args.before, Path(tempfile.mkdtemp(prefix="served-ab-")))
    old = _side(importlib.import_module(f"{name}.core.convert.by_type"),
                importlib.import_module(f"{name}.core.convert.css_hidden"))
    new = _side(new_by_type, new_css)
    corpora = ("wcxb", "readability") if args.readability else ("wcxb",)
    docs = [(page["html"].encode("utf-8"), page["url"] or "")
            for corpus in corpora for page in (eq.load_page(corpus, d) for d in eq.page_index(corpus, args.pages or None))]
    for body, url in docs[:5]:  # warm-up: imports, first calls, memos of pure functions
        old(body, url), new(body, url)
    gc.collect()
    gc.freeze()
    rounds: list[tuple[list[float], list[float]]] = []
    differ = 0
    for r in range(args.rounds):
        before, now = [], []
        for i, (body, url) in enumerate(docs):
            gc.disable()
            if (i + r) % 2:
                tb, ob = old(body, url)
                tn, on = new(body, url)
            else:
                tn, on = new(body, url)
                tb, ob = old(body, url)
            gc.enable()
            gc.collect()
            before.append(tb)
            now.append(tn)
            differ += ob != on
        rounds.append((before, now))
    print(f"{len(docs)} pages x {args.rounds} rounds, before = {args.before}, thread CPU ms of to_markdown, "
          f"interleaved; page-rounds whose output differs: {differ}")
    print("| round | before median | now median | ratio of medians | median of page ratios | ratio of sums |")
    print("|---|---:|---:|---:|---:|---:|")
    for r, (before, now) in enumerate(rounds, 1):
        print(_summary(str(r), before, now))
    fastest = [[min(side[i] for side in sides) for i in range(len(docs))]
               for sides in ([b for b, _ in rounds], [n for _, n in rounds])]
    print(_summary("fastest of rounds", *fastest))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
