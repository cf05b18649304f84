"""Differential check and timing of ``css_hidden.sheet_rules`` (the sheet scan): the rules found
in the ``<style>`` sheets of every WCXB dev and readability page by the module at ``--before``
(default ``main``, loaded from git by bench/old_code.py) and by today's, compared rule by rule
(selector, block text, order, hiding/showing), and the scan's time of each, interleaved page by
page (median of ``--rounds``; the sum over pages and the ratio).

    nice -n 10 .venv/bin/python bench/sheet_diff.py [--before REV] [--limit N] [--rounds 3]
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from selectolax.lexbor import LexborHTMLParser  # noqa: E402

from webshelf.core.convert import css_hidden  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from old_code import old_module  # noqa: E402

CORPORA = ROOT / ".." / "shared" / "corpora"


def page_sheets(limit: int | None):  # noqa: ANN201
    files = sorted((CORPORA / "wcxb-dev" / "html").glob("*.html.gz"))[:limit]
    files += sorted((CORPORA / "readability").glob("*/source.html.gz"))[:limit]
    for path in files:
        tree = LexborHTMLParser(gzip.decompress(path.read_bytes()).decode("utf-8", "replace"))
        sheets = [node.text(deep=True) or "" for node in tree.css("style")]
        if any(sheets):
            yield path.name if "wcxb" in str(path) else path.parent.name, sheets


def _key(rules: tuple) -> list:
    hiding, showing = rules
    return [[(r.selector, r.body, r.order) for r in hiding], [(r.selector, r.body, r.order) for r in showing]]


def _ms(fn, sheets, rounds: int) -> float:  # noqa: ANN001
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn(sheets)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="main")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    old = old_module("_before_css_hidden", args.before, "core/convert/css_hidden.py", {})
    differ, n, t_old, t_new = [], 0, [], []
    for name, sheets in page_sheets(args.limit):
        n += 1
        if _key(old.sheet_rules(sheets)) != _key(css_hidden.sheet_rules(sheets)):
            differ.append(name)
        t_old.append(_ms(old.sheet_rules, sheets, args.rounds))
        t_new.append(_ms(css_hidden.sheet_rules, sheets, args.rounds))
    print(f"{n} pages with sheets; rules differ on {len(differ)} {' '.join(differ[:20])}")
    print("| sheet scan | sum ms | mean ms/page | median ms/page |\n|---|---:|---:|---:|")
    for label, values in ((f"before ({args.before})", t_old), ("after", t_new)):
        print(f"| {label} | {sum(values):.0f} | {statistics.fmean(values):.2f} | {statistics.median(values):.3f} |")
    print(f"after / before (sums): {sum(t_new) / sum(t_old):.2f}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
