"""Interleaved A/B of the served HTML path's CPU time: ``by_type.to_markdown`` of the package at
``--before`` (default ``main``, loaded from git as ``webshelf_before`` by bench/old_code.py
``old_package``) against the working tree's, page by page in this one process.

Each page is converted by both sides in turn (which side goes first alternates page by page and
round by round), each call timed with ``time.process_time()`` (CPU, not wall time: the machine is
shared), so load that falls on a page falls on both sides alike. The sheet memo of each side is
cleared before every call (``--warm`` keeps it: a serving process's pages of one site share their
sheets). Per round: the median ms per page of each side, their ratio, the ratio of the sums and
the median of the per-page ratios; then the same over all rounds. The two sides' Markdown is
compared on the way (a speed change must not change a page: bench/served_diff.py is the full
check, over the readability pages too).

    nice -n 10 .venv/bin/python bench/served_ab.py [--before main] [--pages 400] [--rounds 3] [--warm]
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
sys.path.insert(0, str(ROOT))

from tests import corpus  # noqa: E402
from webshelf.core.convert import by_type, css_hidden  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from old_code import old_package  # noqa: E402

CTYPE = "text/html; charset=utf-8"


def _timed(convert, clear, body: bytes, url: str) -> tuple[float, str]:  # noqa: ANN001
    if clear is not None:
        clear()
    t0 = time.process_time()
    markdown = convert(body, CTYPE, url).markdown
    return (time.process_time() - t0) * 1000, markdown


def _summary(label: str, old: list[float], new: list[float]) -> str:
    mo, mn = statistics.median(old), statistics.median(new)
    per_page = statistics.median(n / o for o, n in zip(old, new) if o > 0)
    return (f"{label}: before {mo:.3f} ms, after {mn:.3f} ms (median/page); ratio of medians {mn / mo:.3f}, "
            f"of sums {sum(new) / sum(old):.3f}, median page ratio {per_page:.3f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="main")
    ap.add_argument("--pages", type=int, default=400, help="first N WCXB dev pages by id (0: all)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warm", action="store_true", help="keep each side's sheet memo between pages")
    args = ap.parse_args()
    name = old_package(args.before, Path(tempfile.mkdtemp(prefix="served-ab-")))
    old_convert = importlib.import_module(f"{name}.core.convert.by_type").to_markdown
    old_clear = None if args.warm else importlib.import_module(f"{name}.core.convert.css_hidden").clear_memo
    new_clear = None if args.warm else css_hidden.clear_memo
    ids = sorted(corpus.wcxb_metadata())
    ids = ids[:args.pages] if args.pages else ids
    pages = [(body, f"https://example.com/{fid}") for fid in ids if (body := corpus.wcxb_html(fid)) is not None]
    all_old: list[float] = []
    all_new: list[float] = []
    differ = set()
    for rnd in range(args.rounds):
        old_ms, new_ms = [], []
        for i, (body, url) in enumerate(pages):
            sides = [(old_convert, old_clear, old_ms), (by_type.to_markdown, new_clear, new_ms)]
            if (i + rnd) % 2:
                sides.reverse()
            out = []
            for convert, clear, times in sides:
                ms, markdown = _timed(convert, clear, body, url)
                times.append(ms)
                out.append(markdown)
            if out[0] != out[1]:
                differ.add(url)
        print(_summary(f"round {rnd + 1} ({len(pages)} pages)", old_ms, new_ms), flush=True)
        all_old.extend(old_ms)
        all_new.extend(new_ms)
    print(_summary(f"all rounds ({len(all_old)} page runs)", all_old, all_new))
    print(f"pages whose Markdown differs: {len(differ)}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
