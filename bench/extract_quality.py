"""Extraction quality and speed of webshelf's HTML → Markdown versus trafilatura.

Runs over the WCXB dev split (``../shared/corpora/wcxb-dev``, CC-BY-4.0, Murrough Foley) and
reports, per page type and overall, for each candidate measured in the same process:

- mean word F1 against ``ground_truth.main_content`` (lowercased ``\\w+`` tokens as a multiset;
  precision = overlap / predicted, recall = overlap / reference) — the WCXB authors' scoring;
- share of ``with`` snippets found (higher is better) and of ``without`` snippets found (lower);
- median and p95 milliseconds per page, timing only the extraction call.

Markdown syntax (``#``, ``*``, ``_``, backticks, table pipes, list and quote markers,
``[text](url)`` → text) is stripped from every candidate's output before scoring, and images
``![alt](src)`` are dropped whole (alt text is not visible page text, and trafilatura's default
output has no images), so link targets and image addresses neither help nor hurt.

    python bench/extract_quality.py [--limit N] [--types article,forum] [--all] [--json OUT]

``--all`` adds the other candidates that were tried when choosing the approach (resiliparse
plain text, html-to-markdown on the whole page, readability-lxml + html-to-markdown, trafilatura
``fast``/``favor_recall``/with links). Not a test: it prints a table and writes nothing else.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import json
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT / ".." / "shared" / "corpora"
WCXB = CORPORA / "wcxb-dev"
sys.path.insert(0, str(ROOT))

# ---------------------------------------------------------------- scoring

_WORD = re.compile(r"\w+")
_IMAGE = re.compile(r"!\[([^\]]*)\]\((?:<[^>]*>|[^)\s]*)(?:\s+\"[^\"]*\")?\)")
_LINK = re.compile(r"\[([^\]]*)\]\((?:<[^>]*>|[^)\s]*)(?:\s+\"[^\"]*\")?\)")
_AUTOLINK = re.compile(r"<(https?://[^>\s]+)>")
_LIST_MARK = re.compile(r"^\s*(?:[-+*]|\d+[.)])\s+", re.M)
_QUOTE_MARK = re.compile(r"^\s*>+\s?", re.M)
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$", re.M)
_FENCE = re.compile(r"^\s*(?:```|~~~)[^\n]*$", re.M)
_SYNTAX = re.compile(r"[#*_`|~]+")
_SPACE = re.compile(r"\s+")


def strip_markdown(text: str) -> str:
    """Markdown → plain text, good enough for token and snippet scoring."""
    text = _FENCE.sub("", text)
    text = _IMAGE.sub("", text)  # alt text is not page text (and trafilatura omits images)
    text = _LINK.sub(r"\1", text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _TABLE_RULE.sub("", text)
    text = _LIST_MARK.sub("", text)
    text = _QUOTE_MARK.sub("", text)
    return _SYNTAX.sub(" ", text)


def normalise(text: str) -> str:
    """Lowercase, markdown-ish symbols → space, whitespace collapsed (for snippet matching)."""
    return _SPACE.sub(" ", _SYNTAX.sub(" ", text.lower())).strip()


def word_f1(predicted: str, reference: str) -> float:
    pred = Counter(_WORD.findall(predicted.lower()))
    ref = Counter(_WORD.findall(reference.lower()))
    if not pred or not ref:
        return 1.0 if not pred and not ref else 0.0
    overlap = sum((pred & ref).values())
    if not overlap:
        return 0.0
    precision, recall = overlap / sum(pred.values()), overlap / sum(ref.values())
    return 2 * precision * recall / (precision + recall)


def snippet_hits(plain: str, snippets: list[str]) -> tuple[int, int]:
    haystack = normalise(plain)
    wanted = [normalise(s) for s in snippets if s and s.strip()]
    return sum(1 for s in wanted if s in haystack), len(wanted)


# ---------------------------------------------------------------- corpus


def _ground_truth(record: dict) -> dict:
    gt = record.get("ground_truth") or {}
    if isinstance(gt, str):
        try:
            gt = ast.literal_eval(gt)
        except (ValueError, SyntaxError):
            try:
                gt = json.loads(gt)
            except ValueError:
                gt = {"main_content": gt}
    return gt if isinstance(gt, dict) else {}


def load_pages(limit: int | None, types: set[str] | None) -> list[dict]:
    meta = json.loads((WCXB / "metadata.json").read_text())["files"]
    pages = []
    for file_id in sorted(meta):
        page_type = meta[file_id].get("page_type", "unknown")
        if types and page_type not in types:
            continue
        record = json.loads((WCXB / "ground-truth" / f"{file_id}.json").read_text())
        gt = _ground_truth(record)
        html = gzip.decompress((WCXB / "html" / f"{file_id}.html.gz").read_bytes())
        pages.append({
            "id": file_id,
            "type": page_type,
            "url": record.get("url"),
            "html": html.decode("utf-8", errors="replace"),
            "main": gt.get("main_content") or "",
            "with": list(gt.get("with") or []),
            "without": list(gt.get("without") or []),
        })
        if limit and len(pages) >= limit:
            break
    return pages


# ---------------------------------------------------------------- candidates


def _webshelf(html: str, url: str | None) -> str:
    from webshelf.core.convert.html_markdown import html_to_markdown

    return html_to_markdown(html, url).markdown


def _trafilatura(**kwargs) -> Callable[[str, str | None], str]:
    import trafilatura

    def run(html: str, url: str | None) -> str:
        return trafilatura.extract(html, url=url, output_format="markdown", **kwargs) or ""

    return run


def _resiliparse(html: str, url: str | None) -> str:
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    return extract_plain_text(HTMLTree.parse(html), main_content=True)


def _h2m(html: str, url: str | None) -> str:
    import html_to_markdown as h2m

    return h2m.convert(html, h2m.ConversionOptions(extract_metadata=False)).content or ""


def _h2m_preprocess(html: str, url: str | None) -> str:
    import html_to_markdown as h2m

    options = h2m.ConversionOptions(
        extract_metadata=False,
        preprocessing=h2m.PreprocessingOptions(enabled=True, preset="aggressive"),
    )
    return h2m.convert(html, options).content or ""


def _readability_h2m(html: str, url: str | None) -> str:
    import html_to_markdown as h2m
    from readability import Document

    summary = Document(html).summary(html_partial=True)
    return h2m.convert(summary, h2m.ConversionOptions(extract_metadata=False)).content or ""


BASELINE = "trafilatura (markdown, defaults)"
DEFAULT_CANDIDATES: dict[str, Callable[[], Callable[[str, str | None], str]]] = {
    "webshelf html_to_markdown": lambda: _webshelf,
    BASELINE: lambda: _trafilatura(),
}
EXTRA_CANDIDATES = {
    "trafilatura fast=True": lambda: _trafilatura(fast=True),
    "trafilatura favor_recall": lambda: _trafilatura(favor_recall=True),
    "trafilatura +links +images": lambda: _trafilatura(include_links=True, include_images=True),
    "resiliparse main_content (text)": lambda: _resiliparse,
    "html-to-markdown whole page": lambda: _h2m,
    "html-to-markdown aggressive preprocessing": lambda: _h2m_preprocess,
    "readability-lxml + html-to-markdown": lambda: _readability_h2m,
}


def evaluate(run: Callable[[str, str | None], str], pages: list[dict]) -> list[dict]:
    rows = []
    for page in pages:
        start = time.perf_counter()
        try:
            out = run(page["html"], page["url"])
        except Exception as exc:  # a candidate crashing scores zero rather than aborting
            out = ""
            print(f"  {page['id']}: {type(exc).__name__}: {exc}", file=sys.stderr)
        elapsed = (time.perf_counter() - start) * 1000
        plain = strip_markdown(out)
        w_hit, w_n = snippet_hits(plain, page["with"])
        wo_hit, wo_n = snippet_hits(plain, page["without"])
        rows.append({"id": page["id"], "type": page["type"], "ms": elapsed,
                     "f1": word_f1(plain, page["main"]),
                     "with_hit": w_hit, "with_n": w_n, "without_hit": wo_hit, "without_n": wo_n})
    return rows


def summarise(rows: list[dict]) -> dict:
    ms = sorted(r["ms"] for r in rows)
    with_n = sum(r["with_n"] for r in rows)
    without_n = sum(r["without_n"] for r in rows)
    return {
        "pages": len(rows),
        "f1": statistics.fmean(r["f1"] for r in rows) if rows else 0.0,
        "with": sum(r["with_hit"] for r in rows) / with_n if with_n else 0.0,
        "without": sum(r["without_hit"] for r in rows) / without_n if without_n else 0.0,
        "median_ms": statistics.median(ms) if ms else 0.0,
        "p95_ms": ms[min(len(ms) - 1, int(0.95 * len(ms)))] if ms else 0.0,
    }


def print_table(results: dict[str, dict[str, dict]]) -> None:
    header = ["candidate", "type", "pages", "F1", "with", "without", "median ms", "p95 ms"]
    lines = []
    for name, by_type in results.items():
        for page_type, s in by_type.items():
            lines.append([name, page_type, str(s["pages"]), f"{s['f1']:.3f}", f"{s['with']:.3f}",
                          f"{s['without']:.3f}", f"{s['median_ms']:.2f}", f"{s['p95_ms']:.2f}"])
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        widths = [max(len(x) for x in col) for col in zip(header, *lines)]
        for line in [header, *lines]:
            print("  ".join(cell.ljust(w) for cell, w in zip(line, widths)))
        return
    table = Table(title="Extraction quality on WCXB dev (mean word F1; snippet shares; ms/page)")
    for i, col in enumerate(header):
        table.add_column(col, justify="left" if i < 2 else "right")
    previous = None
    for line in lines:
        if previous is not None and line[0] != previous:
            table.add_section()
        previous = line[0]
        table.add_row(*line)
    console = Console()
    if not console.is_terminal:  # piped: do not squeeze the names into 80 columns
        console = Console(width=160)
    console.print(table)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, help="only the first N pages (after --types)")
    parser.add_argument("--types", help="comma-separated page types, e.g. article,forum")
    parser.add_argument("--all", action="store_true", help="also run the other candidates tried")
    parser.add_argument("--only", help="comma-separated candidate names (substring match)")
    parser.add_argument("--json", metavar="OUT", help="write summaries and per-page rows as JSON")
    args = parser.parse_args(argv)

    types = {t.strip() for t in args.types.split(",") if t.strip()} if args.types else None
    pages = load_pages(args.limit, types)
    candidates = dict(DEFAULT_CANDIDATES, **(EXTRA_CANDIDATES if args.all else {}))
    if args.only:
        keys = [k.strip() for k in args.only.split(",")]
        candidates = {n: c for n, c in candidates.items() if any(k in n for k in keys)}

    results, per_page = {}, {}
    for name, factory in candidates.items():
        run = factory()
        run(pages[0]["html"], pages[0]["url"]) if pages else None  # warm-up: imports, caches
        rows = evaluate(run, pages)
        per_page[name] = rows
        by_type = {t: summarise([r for r in rows if r["type"] == t])
                   for t in sorted({r["type"] for r in rows})}
        by_type["overall"] = summarise(rows)
        results[name] = by_type

    print_table(results)
    if BASELINE in results and "webshelf html_to_markdown" in results:
        ours, base = results["webshelf html_to_markdown"]["overall"], results[BASELINE]["overall"]
        ratio = base["median_ms"] / ours["median_ms"] if ours["median_ms"] else float("inf")
        print(f"webshelf vs trafilatura: F1 {ours['f1'] - base['f1']:+.3f}, "
              f"with {ours['with'] - base['with']:+.3f}, without {ours['without'] - base['without']:+.3f}, "
              f"median speed-up {ratio:.1f}x")
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": results, "pages": per_page}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
