"""Issue 14's speed goal and issue 15's CPU per page: what hidden-content removal costs per WCXB
dev page, before and after, in one run — and whether it still removes the same elements.

Variants, each on its own fresh Lexbor tree of the page (the parse is not timed), the per-process
memo cleared before every call (cold: every page is a site seen for the first time — WCXB dev has
one or two pages per site, so a warm memo would flatter us):

- ``lexbor parse`` of the page: the baseline every ratio is to;
- ``before``: ``drop_hidden_in`` as of ``--before`` (default ``main``), loaded from git into this
  process;
- ``before, judgement fixes``: the same code with the three fixes made alongside (``EXACT``) —
  its cascade check asked ``node.css_matches(selector)``, which is true when the selector matches
  *any element of the node's subtree*, so a hidden box holding one element that a showing rule
  matched was taken as shown again and kept; its sheet pre-test let ``opacity:+0`` and
  off-screen values with fewer than three digits (``left:-1e4px``, ``text-indent:-70em``) through
  unhidden. This variant is the reference the new code must equal, element for element;
- ``after, same judgement``: today's ``drop_hidden_in`` with ``css_hidden.SHOW_ON_SOME_SCREENS``
  off — must equal the reference tree for tree (the speed work changes no verdict);
- ``after``: today's ``drop_hidden_in`` as shipped (showing rules inside screen ``@media`` count).

Variants run interleaved page by page, so machine load falls on all of them alike. ``--stages``
adds today's breakdown (sheet scan, page keys, selector matching, cascade, inline styles, the
rest). ``--markdown`` also converts every page (``html_to_markdown`` with each variant as its
``prepare``) and counts identical Markdown. Run:

    nice -n 10 .venv/bin/python bench/hidden_cost.py [--pages N] [--before REV] [--stages] [--markdown]
"""

from __future__ import annotations

import argparse
import collections
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from selectolax.lexbor import LexborHTMLParser  # noqa: E402

from tests import corpus  # noqa: E402
from webshelf.core.convert import css_hidden, html_hidden  # noqa: E402
from webshelf.core.convert.by_type import decode  # noqa: E402
from webshelf.core.convert.html_markdown import html_to_markdown  # noqa: E402
from old_code import old_module  # noqa: E402

# The judgement fixes made with the speed work, applied to the old code to give the reference:
# the cascade's element match, and the sheet pre-test's '+0' and few-digit off-screen values.
EXACT = {"return bool(node.css_matches(selector))":
         "first = node.css_first(selector)\n        return first is not None and first.mem_id == node.mem_id",
         'value[:1] in "0."': 'value[:1] in "0.+"',
         'value.startswith("-") and sum(c.isdigit() for c in value) >= 3':
         'value.startswith("-") and (sum(c.isdigit() for c in value) >= 3 or any(u in value for u in ("e", "pc", "in", "cm")))'}


def old_variant(rev: str, tag: str, exact: bool) -> tuple:
    """(drop_hidden_in, clear_memo) of ``rev``'s html_hidden/css_hidden (and its hidden_frame,
    where ``rev`` has one), optionally with the judgement fixes (``EXACT``)."""
    css = old_module(f"_css_hidden_{tag}", rev, "core/convert/css_hidden.py", EXACT if exact else {})
    replace = {"webshelf.core.convert.css_hidden": f"_css_hidden_{tag}"}
    try:
        old_module(f"_hidden_frame_{tag}", rev, "core/convert/hidden_frame.py", {})
        replace["from webshelf.core.convert import hidden_frame"] = f"import _hidden_frame_{tag} as hidden_frame"
    except subprocess.CalledProcessError:
        pass  # (no frame rule at ``rev``)
    hidden = old_module(f"_html_hidden_{tag}", rev, "core/convert/html_hidden.py", replace)
    return hidden.drop_hidden_in, css.clear_memo


class Stages:
    """Today's time per stage, by wrapping the functions ``drop_hidden_in`` calls (nested calls
    are counted once, in the outermost stage that holds them)."""

    NAMES = {"page_sheets": "sheet scan (page_sheets)", "_page_names": "page keys (built on first need: in matching)",
             "_matching": "selector matching (hiding rules)", "overridden": "cascade (overridden, incl. showers)",
             "invisible_style": "inline styles"}

    def __init__(self) -> None:
        self.total: collections.Counter = collections.Counter()
        self._depth = 0
        for name in self.NAMES:
            setattr(html_hidden, name, self._wrap(getattr(html_hidden, name), name))

    def _wrap(self, fn, name: str):  # noqa: ANN001, ANN202
        def run(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            if self._depth:
                return fn(*args, **kwargs)
            self._depth += 1
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.total[name] += time.perf_counter() - t0
                self._depth -= 1
        return run


def _timed(fn, *args) -> float:  # noqa: ANN001
    t0 = time.perf_counter()
    fn(*args)
    return (time.perf_counter() - t0) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=0, help="first N WCXB dev pages by id (0: all)")
    # main before the speed work was merged (the branch compared itself with main); later changes to
    # the rules (the <noscript> unwrap) show as tree differences against it
    ap.add_argument("--before", default="1c8e197")
    ap.add_argument("--stages", action="store_true")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    before, before_clear = old_variant(args.before, "before", exact=False)
    try:
        exact, exact_clear = old_variant(args.before, "exact", exact=True)
    except SystemExit:  # a later ``--before`` (e.g. main) has the fixes already: no reference variant
        exact = exact_clear = None
    stages = Stages() if args.stages else None
    def same_judgement(tree, html):  # noqa: ANN001, ANN202 — today's code, showing rules in size queries not counted
        css_hidden.SHOW_ON_SOME_SCREENS = False
        try:
            return html_hidden.drop_hidden_in(tree, html)
        finally:
            css_hidden.SHOW_ON_SOME_SCREENS = True

    variants = {"before": (before, before_clear), "exact": (exact, exact_clear),
                "same": (same_judgement, css_hidden.clear_memo),
                "after": (html_hidden.drop_hidden_in, css_hidden.clear_memo)}
    if exact is None:
        del variants["exact"], variants["same"]
    ids = sorted(corpus.wcxb_metadata())
    ids = ids[:args.pages] if args.pages else ids
    ms: dict[str, list[float]] = {k: [] for k in ("parse", *variants)}
    # (variant, compared with): "same" must equal "exact" page for page; "after" is what ships
    pairs = (("before", "after"), ("exact", "same"), ("exact", "after")) if exact is not None else (("before", "after"),)
    same_tree = dict.fromkeys(pairs, 0)
    same_md = dict.fromkeys(pairs, 0)
    differ: dict[tuple, list[str]] = {p: [] for p in pairs}
    after_total = 0.0
    for fid in ids:
        body = corpus.wcxb_html(fid)
        if body is None:
            continue
        html = decode(body, "utf-8", html=True)
        t0 = time.perf_counter()
        LexborHTMLParser(html)
        ms["parse"].append((time.perf_counter() - t0) * 1000)
        out = {}
        for name, (drop, clear) in variants.items():
            tree = LexborHTMLParser(html)
            clear()
            ms[name].append(_timed(drop, tree, html))
            out[name] = tree.html
        after_total += ms["after"][-1]
        for pair in pairs:
            if out[pair[0]] == out[pair[1]]:
                same_tree[pair] += 1
            else:
                differ[pair].append(fid)
        if args.markdown:
            url = f"https://example.com/{fid}"
            mds = {}
            if stages is not None:
                stages._depth += 1  # conversions are not part of the per-stage times
            for name, (drop, clear) in variants.items():
                clear()
                mds[name] = html_to_markdown(html, url, prepare=drop)
            if stages is not None:
                stages._depth -= 1
            for pair in pairs:
                same_md[pair] += mds[pair[0]] == mds[pair[1]]
    n = len(ms["parse"])
    base = statistics.mean(ms["parse"])
    print(f"{n} WCXB dev pages, cold memo; before = {args.before}")
    print("| what | mean ms/page | median ms/page | p95 ms/page | mean / parse |")
    print("|---|---:|---:|---:|---:|")
    labels = {"parse": "lexbor parse (baseline)", "before": f"drop_hidden_in before ({args.before})",
              "exact": f"drop_hidden_in before ({args.before}) + judgement fixes",
              "same": "drop_hidden_in after, same judgement (SHOW_ON_SOME_SCREENS off)",
              "after": "drop_hidden_in after (as shipped)"}
    for key, label in labels.items():
        if key not in ms:
            continue
        values = sorted(ms[key])
        p95 = values[int(0.95 * (len(values) - 1))]
        print(f"| {label} | {statistics.mean(values):.2f} | {statistics.median(values):.2f} | {p95:.2f} | "
              f"{statistics.mean(values) / base:.1f}× |")
    mean = {k: statistics.mean(v) for k, v in ms.items()}
    median = {k: statistics.median(v) for k, v in ms.items()}
    print(f"\nafter / before: mean {mean['after'] / mean['before']:.2f}, median {median['after'] / median['before']:.2f}"
          + (f"; same judgement / before+fixes: mean {mean['same'] / mean['exact']:.2f}, "
             f"median {median['same'] / median['exact']:.2f}" if "exact" in mean else ""))
    names = {"before": "before", "exact": "before+fixes", "same": "after (same judgement)", "after": "after (shipped)"}
    for pair in pairs:
        line = f"{names[pair[0]]} vs {names[pair[1]]}: trees identical {same_tree[pair]}/{n}"
        if args.markdown:
            line += f", Markdown identical {same_md[pair]}/{n}"
        print(line)
        if differ[pair]:
            print(f"  trees differ: {' '.join(differ[pair][:40])}{' …' if len(differ[pair]) > 40 else ''}")
    if stages is not None:
        print("\nafter, per stage (mean ms/page):")
        for name, label in Stages.NAMES.items():
            print(f"  {label}: {stages.total[name] / n * 1000:.2f}")
        rest = after_total / 1000 - sum(stages.total.values())
        print(f"  the rest (always-dropped, comments, order, decompose, merge): {rest / n * 1000:.2f}")


if __name__ == "__main__":
    main()
