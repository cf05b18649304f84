"""The stages of the served path that issue 14's speed pass changed, before (``--before``, default
``main``) and now, interleaved page by page in one process on every WCXB dev and readability page.

Each side gets its own fresh Lexbor tree of the page with its own hidden-content removal (as
``html_to_markdown`` does), then is timed on: ``prune`` alone; the whole rule-based container
choice (``container``: prune, pick, narrow, drop link blocks); and ``_tidy`` (with ``_dedupe``)
of the page's raw Markdown. The old code is the whole package at ``--before`` imported as
``webshelf_before`` (bench/old_code.py ``old_package``); which side runs first alternates per
page, so load drift falls on both. Times are the thread's CPU time (``time.thread_time``: other
processes on a shared machine do not count), with the garbage collector off while a page runs
(a collection would land on whichever side happened to allocate last) and ``drop_link_blocks``
timed inside ``container`` too. Per stage: median and mean ms per page for each side (with
``--rounds``, each page's fastest round), the ratio of the sums and the median of the per-page
ratios; and a check that both sides leave the same container HTML and the same Markdown.

    nice -n 10 .venv/bin/python bench/main_content_cost.py [--before REV] [--limit N] [--rounds R]
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

from selectolax.lexbor import LexborHTMLParser  # noqa: E402

from webshelf.core.convert import html_main_content as new_content  # noqa: E402
from webshelf.core.convert import html_markdown as new_markdown  # noqa: E402
from webshelf.core.convert.html_hidden import drop_hidden_in as new_hidden  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
import extract_quality as eq  # noqa: E402
from old_code import old_package  # noqa: E402


def _ms(fn) -> tuple[float, object]:  # noqa: ANN001
    t0 = time.thread_time()
    result = fn()
    return (time.thread_time() - t0) * 1000, result


def _timed(module, attr: str, spent: list[float]) -> None:  # noqa: ANN001
    """Wrap ``module.attr`` so that each call adds its CPU ms to ``spent[0]``."""
    fn = getattr(module, attr)

    def timed(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        t0 = time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[0] += (time.thread_time() - t0) * 1000
    setattr(module, attr, timed)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="main")
    ap.add_argument("--limit", type=int, help="first N pages of each corpus")
    ap.add_argument("--rounds", type=int, default=1, help="each page this many times (its fastest counts)")
    args = ap.parse_args(argv)
    name = old_package(args.before, Path(tempfile.mkdtemp(prefix="content-before-")))
    old_content = importlib.import_module(f"{name}.core.convert.html_main_content")
    old_markdown = importlib.import_module(f"{name}.core.convert.html_markdown")
    old_hidden = importlib.import_module(f"{name}.core.convert.html_hidden").drop_hidden_in
    sides = {"before": (old_content, old_markdown, old_hidden), "now": (new_content, new_markdown, new_hidden)}
    stages = ("prune", "drop_link_blocks", "container", "tidy")
    spent = {side: [0.0] for side in sides}
    for side, (content, _, _) in sides.items():
        _timed(content, "drop_link_blocks", spent[side])
    times = {(stage, side): [] for stage in stages for side in sides}
    differ = 0
    docs = [(corpus, eq.load_page(corpus, desc)) for corpus in ("wcxb", "readability")
            for desc in eq.page_index(corpus, args.limit)]
    pages = len(docs)
    docs = docs[:1] + docs * args.rounds  # the first page once more, untimed below: imports and first calls
    gc.collect()
    gc.freeze()  # the pages and modules: never collected, so a collection between pages is cheap
    for i, (_, page) in enumerate(docs):
        gc.disable()
        html, url = page["html"].replace("\x00", ""), page["url"] or ""
        flip = (i + max(i - 1, 0) // pages) % 2  # alternates page by page, and per page round by round
        order = list(sides) if flip else list(sides)[::-1]
        results = {}
        for side in order:
            content, markdown, hidden = sides[side]
            tree = LexborHTMLParser(html)
            hidden(tree, html)
            body = tree.body or tree.root
            if body is None:
                continue
            ms, _ = _ms(lambda: content.prune(tree, body, content.DEFAULT.comment_min_share))
            times[("prune", side)].append(ms)
            tree = LexborHTMLParser(html)
            hidden(tree, html)
            spent[side][0] = 0.0
            ms, node = _ms(lambda: content.container(tree, content.DEFAULT))
            times[("container", side)].append(ms)
            times[("drop_link_blocks", side)].append(spent[side][0])
            fragment = node.html if node is not None else ""
            raw = new_markdown._convert(fragment or "", url)  # the same converter: only the tidy differs
            ms, tidy = _ms(lambda: markdown._tidy(raw))
            times[("tidy", side)].append(ms)
            results[side] = (fragment, tidy)
        gc.enable()
        gc.collect()
        if i == 0:
            for values in times.values():
                values.clear()
            continue
        differ += len(set(results.values())) > 1
    print(f"{pages} pages (WCXB dev + readability) x {args.rounds} rounds, before = {args.before}, interleaved, "
          f"CPU time; page-rounds whose container or Markdown differ: {differ}")
    print("| stage | before median ms | now median ms | before mean ms | now mean ms | sum now / before | median of page ratios |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for stage in stages:
        b, n = (_fastest(times[(stage, side)], pages) for side in ("before", "now"))
        ratios = [y / x for x, y in zip(b, n) if x > 0]
        print(f"| {stage} | {statistics.median(b):.3f} | {statistics.median(n):.3f} | {statistics.fmean(b):.3f} | "
              f"{statistics.fmean(n):.3f} | {sum(n) / sum(b):.3f} | {statistics.median(ratios):.3f} |")
    return 1 if differ else 0


def _fastest(values: list[float], pages: int) -> list[float]:
    """Each page's fastest round (``values`` holds the rounds one after the other)."""
    assert len(values) % pages == 0, "a side skipped a page (no body): the rounds do not line up"
    return [min(values[i::pages]) for i in range(pages)]


if __name__ == "__main__":
    sys.exit(main())
