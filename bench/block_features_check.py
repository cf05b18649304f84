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
bench/train_blocks.py trains on). The old code is ``features.py``, ``tree.py`` and ``model.py`` of
``--before``, wired to each other. The model's choices are compared too: every block's score (the
shipped model, by ``repr``), the narrowing (depth, members, node) and what ``model.select`` leaves
(the chosen node's and the container's HTML, on a clone each, since select changes the tree).
Both variants are timed interleaved on each input — ``blocks()`` on the node, ``select`` on fresh
clones (made outside the timer; which side gets the first clone alternates by round, since a later
clone is slower to work on) — on this thread's CPU time (``time.thread_time``: other processes'
load does not enter it, cache and memory contention still do), and each input's time is the fastest
of ``--rounds``, so machine load falls on them alike.

    nice -n 10 .venv/bin/python bench/block_features_check.py [--before main] [--limit N] [--body]

Prints the inputs compared, how many differ (features or choices; the first few in detail), and per
input set, for ``blocks()`` and for ``select``, the median and mean ms of old vs new and the ratio
of the medians. Exit status 1 when anything differs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from selectolax.lexbor import LexborHTMLParser  # noqa: E402

from webshelf.core.convert import by_type, css_hidden, html_main_content  # noqa: E402
from webshelf.core.convert.blocks import features, model  # noqa: E402
from webshelf.core.convert.html_main_content import container  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
import extract_quality as eq  # noqa: E402
from old_code import old_module  # noqa: E402


def old_modules(rev: str):  # noqa: ANN201
    """``features.py`` and ``model.py`` at ``rev``, with the ``tree.py`` of ``rev`` (not
    today's: speed work may change all three), as old modules wired to each other."""
    tree_import = "from webshelf.core.convert.blocks.tree import"
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:core/convert/blocks/features.py"],
                            capture_output=True, text=True, check=True).stdout
    if tree_import not in source:  # before the walk moved into tree.py
        old = old_module("_before_block_features", rev, "core/convert/blocks/features.py", {})
    else:
        old_module("_before_block_tree", rev, "core/convert/blocks/tree.py", {})
        old = old_module("_before_block_features", rev, "core/convert/blocks/features.py",
                         {tree_import: "from _before_block_tree import"})
    old_model = old_module("_before_block_model", rev, "core/convert/blocks/model.py",
                           {"from webshelf.core.convert.blocks.features import":
                            "from _before_block_features import"})
    return old, old_model


def _snapshot(found: list) -> list:
    return [(b.node.mem_id, b.chars, b.chain, b.features, [repr(f) for f in b.features]) for b in found]


def _ms(fn, node, rounds: int) -> float:  # noqa: ANN001
    times = []
    for _ in range(rounds):
        t0 = time.thread_time()
        fn(node)
        times.append((time.thread_time() - t0) * 1000)
    return statistics.median(times)


def _select_ms(select, scorer, node) -> tuple[float, str]:  # noqa: ANN001
    """``select`` on a clone of ``node`` (select changes the tree; the clone is made outside
    the timer): ms, and the chosen node's HTML with the container's after the drops."""
    copy = node.clone()
    t0 = time.thread_time()
    chosen = select(copy, scorer)
    ms = (time.thread_time() - t0) * 1000
    return ms, f"{chosen.html}\n----\n{copy.html}"


class Checker:
    def __init__(self, old, old_model, rounds: int):  # noqa: ANN001
        self.old, self.old_model, self.rounds = old, old_model, rounds
        shipped = json.loads(model.SHIPPED.read_text(encoding="utf-8"))
        self.old_scorer, self.scorer = old_model.BlockModel(shipped), model.BlockModel(shipped)
        self.differ: list[tuple[str, str]] = []
        self.times: dict[str, list[tuple[float, float]]] = {}
        self.select_times: dict[str, list[tuple[float, float]]] = {}
        self.compared: dict[str, int] = {}
        self.blocks = self.choices = 0

    def check(self, kind: str, key: str, node) -> None:  # noqa: ANN001
        old_found, new_found = self.old.blocks(node), features.blocks(node)
        before, after = _snapshot(old_found), _snapshot(new_found)
        self.compared[kind] = self.compared.get(kind, 0) + 1
        if before != after:
            first = next((i for i, (a, b) in enumerate(zip(before, after)) if a != b), min(len(before), len(after)))
            detail = f"{len(before)} vs {len(after)} blocks; first difference at block {first}"
            if first < min(len(before), len(after)):
                a, b = before[first], after[first]
                names = [n for n, x, y in zip(features.NAMES, a[3], b[3]) if repr(x) != repr(y)]
                detail += f": chars {a[1]}/{b[1]}, chain equal {a[2] == b[2]}, features {names}"
            self.differ.append((f"{kind} {key}", detail))
        # the model's choices: each block's score, the narrowing, what select leaves
        old_probs = [self.old_scorer.keep_probability(b.features) for b in old_found]
        new_probs = self.scorer.keep_probabilities([b.features for b in new_found])
        choice = []
        if len(old_found) >= 2 and len(new_found) >= 2:
            share = self.scorer.narrow_share
            (old_node, old_members), (new_node, new_members) = (
                self.old_model.narrow(old_found, old_probs, share), model.narrow(new_found, new_probs, share))
            if old_members != new_members or (old_node is None) != (new_node is None) or (
                    old_node is not None and old_node.mem_id != new_node.mem_id):
                choice.append("narrowing")
        if [repr(p) for p in old_probs] != [repr(p) for p in new_probs]:
            choice.append("scores")
        # interleaved: old, new, old, new ... on the same node (select: on fresh clones of it)
        olds, news, old_selects, new_selects = [], [], [], []
        for round_ in range(self.rounds):
            olds.append(_ms(self.old.blocks, node, 1))
            news.append(_ms(features.blocks, node, 1))
            # which side works on the first clone alternates: a later clone is slower to work on
            if round_ % 2:
                ms, new_html = _select_ms(model.select, self.scorer, node)
                new_selects.append(ms)
                ms, old_html = _select_ms(self.old_model.select, self.old_scorer, node)
                old_selects.append(ms)
            else:
                ms, old_html = _select_ms(self.old_model.select, self.old_scorer, node)
                old_selects.append(ms)
                ms, new_html = _select_ms(model.select, self.scorer, node)
                new_selects.append(ms)
            if old_html != new_html and "select" not in choice:
                choice.append("select")
        if choice:
            self.differ.append((f"{kind} {key}", "choices differ: " + ", ".join(choice)))
        self.blocks += len(new_found)
        self.choices += 1
        # the fastest of the rounds: on a shared machine the other processes only ever add time
        self.times.setdefault(kind, []).append((min(olds), min(news)))
        self.select_times.setdefault(kind, []).append((min(old_selects), min(new_selects)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="main")
    ap.add_argument("--limit", type=int, help="first N pages of each corpus")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--body", action="store_true", help="also compare on each page's whole <body>")
    ap.add_argument("--show", type=int, default=5)
    args = ap.parse_args(argv)
    old, old_model = old_modules(args.before)
    checker = Checker(old, old_model, args.rounds)
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
    print(f"{checker.blocks} blocks of {checker.choices} inputs scored, narrowed and selected by both")
    for title, table in (("features.blocks", checker.times), ("model.select (features, scores, narrowing, "
                                                              "drops)", checker.select_times)):
        print(f"\n{title}\n\n| input | n | old median ms | new median ms | old mean ms | new mean ms | "
              "new/old (medians) | median of per-input new/old | new/old (sums) |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for kind, pairs in table.items():
            olds, news = [p[0] for p in pairs], [p[1] for p in pairs]
            ratios = [new / old for old, new in pairs if old > 0]
            print(f"| {kind} | {len(pairs)} | {statistics.median(olds):.3f} | {statistics.median(news):.3f} | "
                  f"{statistics.fmean(olds):.3f} | {statistics.fmean(news):.3f} | "
                  f"{statistics.median(news) / statistics.median(olds):.3f} | "
                  f"{statistics.median(ratios) if ratios else float('nan'):.3f} | {sum(news) / sum(olds):.3f} |")
    return 1 if checker.differ else 0


if __name__ == "__main__":
    sys.exit(main())
