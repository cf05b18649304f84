"""What each stage of the served HTML path costs the median page, measured by taking it out
(issue 14's speed goal: the median page at ≤ 1/4 of trafilatura's time).

A stage's own timer (bench/served_profile.py) says what it spends on the pages of median cost;
this says what the *median* moves by without it — which also counts the work it saves or adds
downstream (a rule that removes chrome leaves less for the classifier and html-to-markdown) and
the pages it pushes across the median (a stage that is cheap on median pages but heavy on others
moves the median when those pages fall below it). Each variant switches one stage off where its
caller looks it up (nothing in the package is changed); the quality it gives is printed beside
its time (in-sample: the shipped block model), so a stage that could go is visible with its price.

Two conditions:

- ``warm`` (default): one process, page by page; each page converted once untimed, then every
  variant once, in a seeded random order per page, timed with ``time.perf_counter``. Every
  variant sees the same memos and caches, so the ratios are within ±1–2% (the ``control`` row
  is the unchanged path). This under-states stages whose cost is in first sight of a page
  (the sheet memo, selector keys): they are warm here.
- ``--first-seen``: each variant in its own process through bench/extract_quality.py's worker
  loop (every page converted once, as its benchmark times it — the sheet memo holds 64 sites and
  WCXB dev has 1,127 registered domains, so nearly every page's sheets are new). One number per
  process; the run-to-run spread of the unchanged path is printed (``--repeat``), and is ±5%.

    nice -n 10 .venv/bin/python bench/stage_cost.py [--corpus wcxb|readability] [--first-seen]
        [--only no_hidden,no_blocks] [--repeat 2] [--limit N]
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import extract_quality as eq  # noqa: E402
from webshelf.core.convert import by_type, html_hidden, html_main_content, html_markdown  # noqa: E402
from webshelf.core.convert.html_main_content import Tuning  # noqa: E402

CTYPE = "text/html; charset=utf-8"

# name -> (what it takes out, [(module, attribute, replacement)])
VARIANTS: dict[str, tuple[str, list[tuple[object, str, object]]]] = {
    "control": ("nothing (the unchanged path again: the noise)", []),
    "no_hidden": ("hidden-content removal (html_hidden.drop_hidden_in), all of it",
                  [(by_type, "drop_hidden_in", lambda tree, html=None: False)]),
    "no_sheets": ("hidden-content removal's sheet rules (the page's <style> sheets)",
                  [(html_hidden, "_sheet_hidden", lambda tree: [])]),
    "no_blocks": ("the learned block classifier (Tuning(block_model='off'))", []),
    "no_link_blocks": ("dropping link-dense blocks (html_density.drop_link_blocks)",
                       [(html_main_content, "drop_link_blocks", lambda *args, **kwargs: 0)]),
    "no_narrow": ("narrowing <main> to its article (html_density.narrow)",
                  [(html_main_content, "narrow", lambda node, share, lengths=None: node)]),
    "no_chrome": ("pruning nav/aside/ARIA landmarks (html_main_content._chrome)",
                  [(html_main_content, "_chrome", lambda body: [])]),
    "no_names": ("pruning by boilerplate class/id names (html_main_content._match)",
                 [(html_main_content, "_match", lambda value: (None, None))]),
    "no_comments": ("dropping reader comments (html_main_content._drop_comments)",
                    [(html_main_content, "_drop_comments", lambda *args: None)]),
}
_TUNING = {"no_blocks": Tuning(block_model="off")}


def _switch(name: str) -> tuple[Callable[[], None], Callable[[], None]]:
    """(switch the stage off, switch it back on); ``base`` switches nothing. A ``Tuning`` variant
    is bound into ``html_markdown.html_to_markdown``, which ``by_type`` looks up at call time (as
    extract_quality's ``_webshelf`` binds its folds' tuning)."""
    patches = [] if name == "base" else list(VARIANTS[name][1])
    if name in _TUNING:
        patches.append((html_markdown, "html_to_markdown",
                        functools.partial(html_markdown.html_to_markdown, tuning=_TUNING[name])))
    saved = [(module, attr, getattr(module, attr)) for module, attr, _ in patches]

    def on() -> None:
        for module, attr, value in patches:
            setattr(module, attr, value)

    def off() -> None:
        for module, attr, value in saved:
            setattr(module, attr, value)

    return on, off


def warm(corpus: str, names: list[str], limit: int | None) -> list[dict]:
    descs = eq.page_index(corpus, limit)
    order_rng = random.Random(7)
    names = ["base", *names]
    switches = {n: _switch(n) for n in names}
    ms: dict[str, list[float]] = {n: [] for n in names}
    rows: dict[str, list[dict]] = {n: [] for n in names}
    for desc in descs:
        page = eq.load_page(corpus, desc)
        body, url = page["html"].encode("utf-8"), page["url"] or ""
        by_type.to_markdown(body, CTYPE, url)  # every variant sees the page's memos warm
        order = list(names)
        order_rng.shuffle(order)
        for name in order:
            on, off = switches[name]
            on()
            try:
                start = time.perf_counter()
                out = by_type.to_markdown(body, CTYPE, url).markdown
                ms[name].append((time.perf_counter() - start) * 1000)
            finally:
                off()
            rows[name].append(eq.score(out, page, check_fences=False))
    base = ms["base"]
    out = []
    for name in names:
        summary = eq.summarise(rows[name])
        ratios = [b / a for a, b in zip(base, ms[name]) if a > 0]
        out.append({"variant": name, "median_ms": statistics.median(ms[name]),
                    "median_ratio": statistics.median(ms[name]) / statistics.median(base),
                    "page_ratio": statistics.median(ratios), "sum_ratio": sum(ms[name]) / sum(base),
                    **{k: summary[k] for k in ("f1", "p", "r", "with", "without")}})
    return out


def first_seen_worker(corpus: str, name: str, limit: int | None) -> dict:
    _switch(name)[0]()
    result = eq.run_worker(eq.OURS, corpus, eq.page_index(corpus, limit), None)
    summary = eq.summarise(result["rows"])
    return {"variant": name, "median_ms": summary["median_ms"],
            **{k: summary[k] for k in ("f1", "p", "r", "with", "without")}}


def first_seen(corpus: str, names: list[str], limit: int | None, repeat: int) -> list[dict]:
    runs = []
    for name in ["base"] * repeat + names:
        cmd = [sys.executable, __file__, "--worker", corpus, name] + (["--limit", str(limit)] if limit else [])
        done = subprocess.run(cmd, check=True, capture_output=True, text=True)
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    base = statistics.median(r["median_ms"] for r in runs[:repeat])
    for r in runs:
        r["median_ratio"] = r["median_ms"] / base
    return runs


def _fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _table(title: str, ratio_names: list[str], ratios: list[list[float]], rows: list[dict]) -> None:
    """One Markdown table: variant, what it takes out, median ms, the ``ratio_names`` columns,
    then the quality the variant gives."""
    quality = ["F1", "P", "R", "with", "without"]
    header = ["variant", "takes out", "median ms", *ratio_names, *quality]
    print(f"\n{title}")
    print("| " + " | ".join(header) + " |")
    print("|---|---|" + "---:|" * (len(header) - 2))
    for r, values in zip(rows, ratios):
        what = "nothing" if r["variant"] == "base" else VARIANTS[r["variant"]][0]
        cells = [r["variant"], what, f"{r['median_ms']:.2f}", *(f"{v:.3f}" for v in values),
                 *(_fmt(r[k.lower()], 4 if k in ("F1", "P", "R") else 3) for k in quality)]
        print("| " + " | ".join(cells) + " |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", choices=("wcxb", "readability"), default="wcxb")
    ap.add_argument("--first-seen", action="store_true", help="each variant in its own process, pages seen once")
    ap.add_argument("--only", help="comma-separated variants (default: all)")
    ap.add_argument("--repeat", type=int, default=2, help="--first-seen: runs of the unchanged path")
    ap.add_argument("--limit", type=int, help="only the first N pages")
    ap.add_argument("--worker", nargs=2, metavar=("CORPUS", "VARIANT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(first_seen_worker(args.worker[0], args.worker[1], args.limit)))
        return 0
    names = args.only.split(",") if args.only else list(VARIANTS)
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        ap.error(f"unknown variant(s) {', '.join(unknown)}; choose from {', '.join(VARIANTS)}")
    if args.first_seen:
        runs = first_seen(args.corpus, [n for n in names if n != "control"], args.limit, max(1, args.repeat))
        _table(f"{args.corpus}, first seen (extract_quality's worker loop, one process each)",
               ["× the unchanged path"], [[r["median_ratio"]] for r in runs], runs)
    else:
        rows = warm(args.corpus, [n for n in names if n != "base"], args.limit)
        _table(f"{args.corpus}, warm (interleaved in one process, seeded random order per page)",
               ["ratio of medians", "median page ratio", "sum ratio"],
               [[r["median_ratio"], r["page_ratio"], r["sum_ratio"]] for r in rows], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
