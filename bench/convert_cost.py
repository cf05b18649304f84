"""Issue 15 (one parse per page, the hidden-CSS cost) and issue 14's speed goal: conversion cost
per WCXB dev page, before and after, in one run.

Rows (per page: the median of ``--rounds`` runs; then the mean and the median over pages):

- lexbor parse of the page (the baseline every ratio is to);
- ``drop_hidden`` as of ``--before`` (default: the commit before this work), loaded from git into
  this process, next to today's ``drop_hidden`` with its per-process memo cleared before every
  call (cold: a site seen for the first time) and kept (warm: the site's sheets seen before);
- the HTML conversion of ``by_type`` (decode, pre-check, hidden removal, main content,
  html-to-markdown): before = the old ``drop_hidden`` string pass + ``html_to_markdown`` of its
  output (two parses), after = today's single-parse path; and trafilatura on the same page
  (issue 14: our median ≤ 1/4 of trafilatura's);
- the served path of the whole package at ``--served-before`` (default ``main``; loaded from git
  as ``webshelf_before`` by bench/old_code.py ``old_package``), cold memo, next to today's: the
  speed work's before/after in one run.

Variants run interleaved page by page, so machine load falls on all of them alike. Run with
``nice -n 10 .venv/bin/python bench/convert_cost.py [--pages N] [--rounds R] [--before REV]``;
``--served-only`` keeps the parse baseline, the two served paths and trafilatura (the speed
pass's before/after, in a third of the time).
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from selectolax.lexbor import LexborHTMLParser  # noqa: E402

from tests import corpus  # noqa: E402
from webshelf.core.convert import css_hidden  # noqa: E402
from webshelf.core.convert.bounds import Bounds  # noqa: E402
from webshelf.core.convert.by_type import decode, to_markdown  # noqa: E402
from webshelf.core.convert.html_hidden import drop_hidden  # noqa: E402
from webshelf.core.convert.html_markdown import html_to_markdown  # noqa: E402
from old_code import old_module, old_package  # noqa: E402
from webshelf.core.convert.html_precheck import precheck_html  # noqa: E402

BEFORE = "26fc91d"  # main before issue 15's conversion work (two parses, unmemoised sheets)


def old_drop_hidden(rev: str):  # noqa: ANN201
    old_module("_before_css_hidden", rev, "core/convert/css_hidden.py", {})
    old = old_module("_before_html_hidden", rev, "core/convert/html_hidden.py",
                      {"webshelf.core.convert.css_hidden": "_before_css_hidden"})
    return old.drop_hidden


def _ms(fn, rounds: int) -> float:  # noqa: ANN001
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def _cold(fn):  # noqa: ANN001, ANN202
    def run():  # noqa: ANN202
        css_hidden.clear_memo()
        return fn()
    return run


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=200, help="first N WCXB dev pages by id (0: all)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--before", default=BEFORE)
    ap.add_argument("--no-trafilatura", action="store_true")
    ap.add_argument("--served-before", default="main", help="a commit whose whole served path is timed too ('' = none)")
    ap.add_argument("--served-only", action="store_true",
                    help="only the parse baseline, the served paths (before and now) and trafilatura")
    args = ap.parse_args()
    before = None if args.served_only else old_drop_hidden(args.before)
    served_before = old_css = None
    if args.served_before:
        name = old_package(args.served_before)
        served_before = importlib.import_module(f"{name}.core.convert.by_type").to_markdown
        old_css = importlib.import_module(f"{name}.core.convert.css_hidden")
        old_bounds = importlib.import_module(f"{name}.core.convert.bounds").Bounds()
    try:
        import trafilatura
    except ImportError:
        trafilatura = None
    if args.no_trafilatura:
        trafilatura = None
    ids = sorted(corpus.wcxb_metadata())
    ids = ids[:args.pages] if args.pages else ids
    bounds = Bounds()
    cols: dict[str, list[float]] = {k: [] for k in ("parse", "hidden_before", "hidden_cold", "hidden_warm",
                                                     "convert_before", "served_before", "convert_after", "trafilatura")}
    for fid in ids:
        body = corpus.wcxb_html(fid)
        if body is None:
            continue
        html = decode(body, "utf-8", html=True)
        url = f"https://example.com/{fid}"

        def convert_before(body=body, url=url):  # noqa: ANN001, ANN202
            text = precheck_html(decode(body, "utf-8", html=True), bounds)
            return html_to_markdown(before(text), url)

        def convert_after(body=body, url=url):  # noqa: ANN001, ANN202
            return to_markdown(body, "text/html; charset=utf-8", url, bounds=bounds)

        cols["parse"].append(_ms(lambda: LexborHTMLParser(html), args.rounds))
        if not args.served_only:
            cols["hidden_before"].append(_ms(lambda: before(html), args.rounds))
            cols["hidden_cold"].append(_ms(_cold(lambda: drop_hidden(html)), args.rounds))
            drop_hidden(html)  # the site's sheets seen once
            cols["hidden_warm"].append(_ms(lambda: drop_hidden(html), args.rounds))
            cols["convert_before"].append(_ms(convert_before, args.rounds))
        if served_before is not None:
            def served_old(body=body, url=url):  # noqa: ANN001, ANN202
                old_css.clear_memo()
                return served_before(body, "text/html; charset=utf-8", url, bounds=old_bounds)

            cols["served_before"].append(_ms(served_old, args.rounds))
        cols["convert_after"].append(_ms(_cold(convert_after), args.rounds))
        if trafilatura is not None:
            cols["trafilatura"].append(_ms(lambda: trafilatura.extract(html, url=url), args.rounds))
    n = len(cols["parse"])
    base = statistics.mean(cols["parse"])
    print(f"{n} WCXB dev pages, median of {args.rounds} per page; before = {args.before}")
    print("| what | mean ms/page | median ms/page | p95 ms/page | mean / parse |")
    print("|---|---:|---:|---:|---:|")
    labels = {"parse": "lexbor parse (baseline)", "hidden_before": f"drop_hidden before ({args.before})",
              "hidden_cold": "drop_hidden after, cold memo (new site)", "hidden_warm": "drop_hidden after, warm memo (site seen)",
              "convert_before": "HTML conversion before (drop_hidden string pass + html_to_markdown: 2 parses)",
              "served_before": f"served path at {args.served_before} (whole package from git, cold memo)",
              "convert_after": "HTML conversion after (one parse, cold memo)", "trafilatura": "trafilatura.extract (same pages)"}
    for key, label in labels.items():
        values = cols[key]
        if not values:
            continue
        p95 = sorted(values)[int(0.95 * (len(values) - 1))]
        print(f"| {label} | {statistics.mean(values):.2f} | {statistics.median(values):.2f} | {p95:.2f} | "
              f"{statistics.mean(values) / base:.1f}× |")
    if cols["trafilatura"]:
        ratio = statistics.median(cols["convert_after"]) / statistics.median(cols["trafilatura"])
        print(f"\nmedian conversion / median trafilatura: {ratio:.3f} (goal ≤ 0.25)")
        if cols["served_before"]:
            ratio = statistics.median(cols["served_before"]) / statistics.median(cols["trafilatura"])
            print(f"the same at {args.served_before}: {ratio:.3f}; after / before (medians): "
                  f"{statistics.median(cols['convert_after']) / statistics.median(cols['served_before']):.3f}")
    if cols["served_before"]:  # page by page: the load a page met fell on both sides alike
        pairs = list(zip(cols["convert_after"], cols["served_before"]))
        print(f"after / before page by page: median of the page ratios "
              f"{statistics.median(a / b for a, b in pairs if b > 0):.3f}, sums {sum(cols['convert_after']) / sum(cols['served_before']):.3f}")


if __name__ == "__main__":
    main()
