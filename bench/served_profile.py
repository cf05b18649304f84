"""Where the served HTML path spends its time, per stage, on every WCXB dev and readability page
(issue 14's speed goal; docs/benchmarks.md "Served path: where the time goes").

The served path is ``by_type.to_markdown`` on the page's bytes. Each stage is a function of the
chain, wrapped in this process with a timer at the name its caller looks it up by (nothing is
changed in the code measured); a stage's time includes its sub-stages, which are listed below
it, indented. "rest" of a stage is its time not covered by its listed sub-stages (e.g. the
fragment's serialisation in ``html_to_markdown``). Per stage: the total over all pages as a
share of the whole served time, the mean and median ms per page, and the mean over the pages of
median cost (40th-60th percentile of the served total: what the median that issue 14 compares
is made of).

    nice -n 10 .venv/bin/python bench/served_profile.py [--limit N] [--cprofile 30]

``--cprofile N`` instead runs the plain path under cProfile over all pages and prints the N
functions with the most own time. The sheet memo is kept as in a serving process (pages of one
site share their sheets); ``--cold`` clears it before every page.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from webshelf.core.convert import blocks as _blocks  # noqa: E402,F401 — before ROOT goes on sys.path
from webshelf.core.convert import by_type, css_hidden, html_density, html_hidden, html_main_content  # noqa: E402
from webshelf.core.convert import html_markdown  # noqa: E402
from webshelf.core.convert.blocks import features as block_features, model as block_model  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
import extract_quality as eq  # noqa: E402

# (stage label, parent label, module, attribute): the wrapper is set at module.attribute
STAGES = [
    ("decode", None, by_type, "decode_html"),
    ("pre-check", None, by_type, "precheck_html"),
    ("html_to_markdown", None, html_markdown, "html_to_markdown"),
    ("parse (lexbor)", "html_to_markdown", html_markdown, "LexborHTMLParser"),
    ("hidden removal", "html_to_markdown", by_type, "drop_hidden_in"),
    ("noscript rule", "hidden removal", html_hidden, "unwrap_noscript_content"),
    ("sheet rules (all)", "hidden removal", html_hidden, "_sheet_hidden"),
    ("sheet scan (page_sheets)", "sheet rules (all)", html_hidden, "page_sheets"),
    ("matching", "sheet rules (all)", html_hidden, "_matching"),
    # (the page's class and id sets are built when a rule first needs them: inside matching)
    ("page keys", "matching", html_hidden, "_page_names"),
    ("cascade (overridden)", "sheet rules (all)", html_hidden, "overridden"),
    ("inline styles", "hidden removal", html_hidden, "invisible_style"),
    ("title", "html_to_markdown", html_markdown, "_title"),
    ("main_content", "html_to_markdown", html_markdown, "main_content"),
    ("prune", "main_content", html_main_content, "prune"),
    ("narrow (density)", "main_content", html_main_content, "narrow"),
    ("drop_link_blocks", "main_content", html_main_content, "drop_link_blocks"),
    ("block select", "main_content", html_main_content, "select"),
    ("block features", "block select", block_model, "blocks"),
    ("block narrow", "block select", block_model, "narrow"),
    ("block drop", "block select", block_model, "_drop"),
    ("polish (code, tables)", "html_to_markdown", html_markdown, "_polish"),
    ("html-to-markdown (Rust)", "html_to_markdown", html_markdown, "_convert"),
    ("whole-page fallback", "html_to_markdown", html_markdown, "_whole_page"),
    ("tidy", "html_to_markdown", html_markdown, "_tidy"),
]

_times: dict[str, float] = defaultdict(float)
_depth: dict[str, int] = defaultdict(int)


def _wrap(label: str, fn):  # noqa: ANN001, ANN202
    def timed(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        if _depth[label]:  # recursion (the fallback calls html_to_markdown): counted once
            return fn(*args, **kwargs)
        _depth[label] += 1
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            _times[label] += time.perf_counter() - t0
            _depth[label] -= 1
    timed.__wrapped__ = fn
    for name in ("as_text",):
        if hasattr(fn, name):
            setattr(timed, name, getattr(fn, name))
    return timed


def pages(limit: int | None) -> list[tuple[str, bytes, str]]:
    out = []
    for corpus in ("wcxb", "readability"):
        for desc in eq.page_index(corpus, limit):
            page = eq.load_page(corpus, desc)
            out.append((f"{corpus}/{desc['id']}", page["html"].encode("utf-8"), page["url"] or ""))
    return out


def serve(body: bytes, url: str) -> str:
    return by_type.to_markdown(body, "text/html; charset=utf-8", url).markdown


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int)
    ap.add_argument("--cprofile", type=int, metavar="N")
    ap.add_argument("--cold", action="store_true")
    ap.add_argument("--sort", default="tottime", help="cProfile order: tottime or cumulative")
    args = ap.parse_args(argv)
    docs = pages(args.limit)
    serve(docs[0][1], docs[0][2])  # imports, model load
    if args.cprofile:
        profile = cProfile.Profile()
        profile.enable()
        for _, body, url in docs:
            if args.cold:
                css_hidden.clear_memo()
            serve(body, url)
        profile.disable()
        pstats.Stats(profile).sort_stats(args.sort).print_stats(args.cprofile)
        return 0
    for label, _, module, attr in STAGES:
        setattr(module, attr, _wrap(label, getattr(module, attr)))
    per_page: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for key, body, url in docs:
        corpus = key.split("/")[0]
        if args.cold:
            css_hidden.clear_memo()
        _times.clear()
        t0 = time.perf_counter()
        serve(body, url)
        total = time.perf_counter() - t0
        per_page[corpus]["served total"].append(total * 1000)
        for label, *_ in STAGES:
            per_page[corpus][label].append(_times.get(label, 0.0) * 1000)
    children: dict[str | None, list[str]] = defaultdict(list)
    for label, parent, *_ in STAGES:
        children[parent].append(label)
    for corpus, cols in per_page.items():
        whole = sum(cols["served total"])
        print(f"\n{corpus}: {len(cols['served total'])} pages, sheet memo {'cold' if args.cold else 'warm (as served)'}")
        print("| stage | share of served time | mean ms/page | median ms/page | mean ms, pages of median cost |")
        print("|---|---:|---:|---:|---:|")
        # the pages between the 40th and 60th percentile of the served total: what a median page spends
        order = sorted(range(len(cols["served total"])), key=cols["served total"].__getitem__)
        band = order[int(0.4 * len(order)):max(int(0.6 * len(order)), int(0.4 * len(order)) + 1)]

        def row(label: str, values: list[float], indent: int) -> None:
            name = "&nbsp;&nbsp;" * indent + label
            print(f"| {name} | {100 * sum(values) / whole:.1f}% | {statistics.fmean(values):.2f} | "
                  f"{statistics.median(values):.2f} | {statistics.fmean(values[i] for i in band):.2f} |")

        row("served total", cols["served total"], 0)

        def walk(parent: str | None, indent: int) -> None:
            for label in children[parent]:
                row(label, cols[label], indent)
                walk(label, indent + 1)
                if children[label]:
                    rest = [t - sum(cols[c][i] for c in children[label]) for i, t in enumerate(cols[label])]
                    row("rest", rest, indent + 1)

        walk(None, 1)
        rest = [t - sum(cols[c][i] for c in children[None]) for i, t in enumerate(cols["served total"])]
        row("rest (type checks, binary sniff, surrogates)", rest, 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
