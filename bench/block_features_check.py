"""Identity and cost of ``core.convert.blocks.features.blocks`` against the code at ``--before``
(default ``main``), on every WCXB dev and readability page, in one process (issue 14's speed goal;
docs/benchmarks.md "Block features: the same floats, cheaper").

Speed work on the block features must not move a single float: the model's choices hang on them.
For every page the served path runs (``by_type.to_markdown`` on the page's bytes, cold sheet memo);
where it hands the container to ``blocks.model.select``, this script computes the block list with
the old module (``git show REV:core/convert/blocks/features.py``, bench/old_code.py) and with
today's, on the same tree, and compares node, chars, chain and every feature exactly (``==`` on the
floats, and their ``repr``). ``--body`` also compares both on each page's whole ``<body>`` (a fresh
parse, no pruning: more blocks, deeper trees, the 3,000-block bound) — harder input than the served
containers — and on the rules' container of the raw DOM (no hidden-content removal: what
bench/train_blocks.py trains on). Both variants are timed interleaved on each input (median of ``--rounds``), so machine
load falls on them alike.

    nice -n 10 .venv/bin/python bench/block_features_check.py [--before main] [--limit N] [--body]

Prints the inputs compared, how many differ (the first few in detail), and per input set the median
and mean ms of old vs new and the ratio of the medians. Exit status 1 when anything differs.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from selectolax.lexbor import LexborHTMLParser  # noqa: E402

from webshelf.core.convert import by_type, css_hidden, html_main_content  # noqa: E402
from webshelf.core.convert.blocks import features  # noqa: E402
from webshelf.core.convert.html_main_content import container  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
import extract_quality as eq  # noqa: E402
from old_code import old_module  # noqa: E402


def old_features(rev: str):  # noqa: ANN201
    """``features.py`` at ``rev`` with the ``tree.py`` of ``rev`` (not today's: speed work may
    change both), as one old module."""
    tree_import = "from webshelf.core.convert.blocks.tree import"
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:core/convert/blocks/features.py"],
                            capture_output=True, text=True, check=True).stdout
    if tree_import not in source:  # before the walk moved into tree.py
        return old_module("_before_block_features", rev, "core/convert/blocks/features.py", {})
    old_module("_before_block_tree", rev, "core/convert/blocks/tree.py", {})
    return old_module("_before_block_features", rev, "core/convert/blocks/features.py",
                      {tree_import: "from _before_block_tree import"})


def _snapshot(found: list) -> list:
    return [(b.node.mem_id, b.chars, b.chain, b.features, [repr(f) for f in b.features]) for b in found]


def _ms(fn, node, rounds: int) -> float:  # noqa: ANN001
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn(node)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


class Checker:
    def __init__(self, old, rounds: int):  # noqa: ANN001
        self.old, self.rounds = old, rounds
        self.differ: list[tuple[str, str]] = []
        self.times: dict[str, list[tuple[float, float]]] = {}
        self.compared: dict[str, int] = {}

    def check(self, kind: str, key: str, node) -> None:  # noqa: ANN001
        before, after = _snapshot(self.old.blocks(node)), _snapshot(features.blocks(node))
        self.compared[kind] = self.compared.get(kind, 0) + 1
        if before != after:
            first = next((i for i, (a, b) in enumerate(zip(before, after)) if a != b), min(len(before), len(after)))
            detail = f"{len(before)} vs {len(after)} blocks; first difference at block {first}"
            if first < min(len(before), len(after)):
                a, b = before[first], after[first]
                names = [n for n, x, y in zip(features.NAMES, a[3], b[3]) if repr(x) != repr(y)]
                detail += f": chars {a[1]}/{b[1]}, chain equal {a[2] == b[2]}, features {names}"
            self.differ.append((f"{kind} {key}", detail))
        # interleaved: old, new, old, new ... on the same node
        olds, news = [], []
        for _ in range(self.rounds):
            olds.append(_ms(self.old.blocks, node, 1))
            news.append(_ms(features.blocks, node, 1))
        t_old, t_new = statistics.median(olds), statistics.median(news)
        self.times.setdefault(kind, []).append((t_old, t_new))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="main")
    ap.add_argument("--limit", type=int, help="first N pages of each corpus")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--body", action="store_true", help="also compare on each page's whole <body>")
    ap.add_argument("--show", type=int, default=5)
    args = ap.parse_args(argv)
    old = old_features(args.before)
    checker = Checker(old, args.rounds)
    current: list[str] = [""]
    select = html_main_content.select

    def hooked(node, model, threshold=None):  # noqa: ANN001, ANN202
        checker.check(f"{current[0].split('/')[0]} served container", current[0], node)
        return select(node, model, threshold)

    html_main_content.select = hooked
    for corpus in ("wcxb", "readability"):
        for desc in eq.page_index(corpus, args.limit):
            page = eq.load_page(corpus, desc)
            current[0] = key = f"{corpus}/{desc['id']}"
            css_hidden.clear_memo()
            by_type.to_markdown(page["html"].encode("utf-8"), "text/html; charset=utf-8", page["url"] or "")
            if args.body:
                tree = LexborHTMLParser(page["html"])
                body = tree.body or tree.root
                if body is not None:
                    checker.check(f"{corpus} body", key, body)
                raw = container(LexborHTMLParser(page["html"]))
                if raw is not None:
                    checker.check(f"{corpus} raw container", key, raw)
    html_main_content.select = select
    total = sum(checker.compared.values())
    print(f"{total} inputs compared (before = {args.before}, after = working tree): "
          f"{len(checker.differ)} differ")
    for where, detail in checker.differ[:args.show]:
        print(f"  {where}: {detail}")
    print("\n| input | n | old median ms | new median ms | old mean ms | new mean ms | new/old (medians) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for kind, pairs in checker.times.items():
        olds, news = [p[0] for p in pairs], [p[1] for p in pairs]
        print(f"| {kind} | {len(pairs)} | {statistics.median(olds):.3f} | {statistics.median(news):.3f} | "
              f"{statistics.fmean(olds):.3f} | {statistics.fmean(news):.3f} | "
              f"{statistics.median(news) / statistics.median(olds):.3f} |")
    return 1 if checker.differ else 0


if __name__ == "__main__":
    sys.exit(main())
