"""The stages of the served path that issue 14's speed pass changed, before (``--before``, default
``main``) and now, interleaved page by page in one process on every WCXB dev and readability page.

Each side gets its own fresh Lexbor tree of the page with its own hidden-content removal (as
``html_to_markdown`` does), then is timed on: ``prune`` alone; the whole rule-based container
choice (``container``: prune, pick, narrow, drop link blocks); and ``_tidy`` (with ``_dedupe``)
of the page's raw Markdown. The old code is the whole package at ``--before`` imported as
``webshelf_before`` (bench/old_code.py ``old_package``); which side runs first alternates per
page, so load drift falls on both. Per stage: median and mean ms per page for each side, the
ratio of the sums and the median of the per-page ratios; and a check that both sides leave the
same container HTML and the same Markdown.

    nice -n 10 .venv/bin/python bench/main_content_cost.py [--before REV] [--limit N]
"""

from __future__ import annotations

import argparse
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
    t0 = time.perf_counter()
    result = fn()
    return (time.perf_counter() - t0) * 1000, result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="main")
    ap.add_argument("--limit", type=int, help="first N pages of each corpus")
    args = ap.parse_args(argv)
    name = old_package(args.before, Path(tempfile.mkdtemp(prefix="content-before-")))
    old_content = importlib.import_module(f"{name}.core.convert.html_main_content")
    old_markdown = importlib.import_module(f"{name}.core.convert.html_markdown")
    old_hidden = importlib.import_module(f"{name}.core.convert.html_hidden").drop_hidden_in
    sides = {"before": (old_content, old_markdown, old_hidden), "now": (new_content, new_markdown, new_hidden)}
    stages = ("prune", "container", "tidy")
    times = {(stage, side): [] for stage in stages for side in sides}
    differ = 0
    docs = [(corpus, eq.load_page(corpus, desc)) for corpus in ("wcxb", "readability")
            for desc in eq.page_index(corpus, args.limit)]
    docs = docs[:1] + docs  # the first page once more, untimed below: imports and first calls
    for i, (_, page) in enumerate(docs):
        html, url = page["html"].replace("\x00", ""), page["url"] or ""
        order = list(sides) if i % 2 else list(sides)[::-1]
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
            ms, node = _ms(lambda: content.container(tree, content.DEFAULT))
            times[("container", side)].append(ms)
            fragment = node.html if node is not None else ""
            raw = new_markdown._convert(fragment or "", url)  # the same converter: only the tidy differs
            ms, tidy = _ms(lambda: markdown._tidy(raw))
            times[("tidy", side)].append(ms)
            results[side] = (fragment, tidy)
        if i == 0:
            for values in times.values():
                values.clear()
            continue
        differ += len(set(results.values())) > 1
    print(f"{len(docs) - 1} pages (WCXB dev + readability), before = {args.before}, interleaved; "
          f"pages whose container or Markdown differ: {differ}")
    print("| stage | before median ms | now median ms | before mean ms | now mean ms | sum now / before | median of page ratios |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for stage in stages:
        b, n = times[(stage, "before")], times[(stage, "now")]
        ratios = [y / x for x, y in zip(b, n) if x > 0]
        print(f"| {stage} | {statistics.median(b):.3f} | {statistics.median(n):.3f} | {statistics.fmean(b):.3f} | "
              f"{statistics.fmean(n):.3f} | {sum(n) / sum(b):.3f} | {statistics.median(ratios):.3f} |")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
