"""Extraction quality, speed and memory of webshelf's HTML → Markdown versus trafilatura and
resiliparse, cross-validated by domain so that no number comes from pages it was tuned on.

One command reproduces everything in docs/benchmarks.md's extraction section:

    nice -n 10 .venv/bin/python bench/extract_quality.py [--retrain] [--json OUT]

(``--retrain`` first re-runs ``bench/train_blocks.py``: block dataset, fold models, shipped
model; without it the fold models in ``build/blocks/`` are trained only when missing.)

What it does:

- **wcxb-dev** (``../shared/corpora/wcxb-dev``, 1,358 pages, CC-BY-4.0, Murrough Foley): every
  page gets a fold, ``sha1(registered domain of its URL) % 5``, so one site never sits in both
  train and test. The learned block classifier (``core/convert/blocks``) is cross-validated:
  ``bench/train_blocks.py`` fits one model per fold on the other four folds (threshold chosen
  on those four too) and the pages of fold k are converted with model k; the reported
  "cross-validated" webshelf row is the union of the five held-out folds. The shipped model
  (fitted on all five folds) gives the in-sample row, which is also the one timed; "rules only"
  is the same converter without the classifier. "previous main" is main's block-classifier code
  (from git, ``--previous-rev``) with main's fold and shipped models (``--previous-models``,
  default ``build/blocks/main/``: a copy of main's ``build/blocks/``), cross-validated and
  in-sample, so a branch and main are measured in one run. Candidates without learned parts
  (trafilatura, resiliparse) are scored on every page. ``--grid`` also cross-validates the
  rule knobs (``bench/extract_tuning.py``'s grid over ``Tuning``, chosen on 4 folds).
- **readability** (``../shared/corpora/readability``, Mozilla Readability's 130 test pages,
  Apache-2.0): a second, untouched check, scored against the text of ``expected.html``; webshelf
  runs as shipped (knobs and block model fitted on wcxb-dev only; this corpus is never read
  by training).
- per page type: mean word F1, precision and recall (lowercased ``\\w+`` tokens as a multiset —
  WCXB's scoring), share of ``with`` snippets found (↑) and ``without`` snippets found (↓);
- webshelf is measured as served: ``by_type.to_markdown`` on the page's bytes, hidden-content
  removal included (``_webshelf``); "converter alone" is html_to_markdown without it, for
  comparison only;
- ``--before REV``: the served path of the whole package at commit REV as one more candidate
  (before/after of speed work in one run; its quality columns show the output is unchanged),
  and cross-validated with the same fold models (a change to the rules against REV's, held-out);
- median and p95 ms per page (only the extraction call is timed) and peak RSS, each candidate in
  its own worker process that streams the pages one at a time (a "read only" worker gives the
  floor: Python + page reading);
- for webshelf: the share of pages whose stored Markdown has only balanced code fences,
  checked with markdown-it-py (CommonMark).
- ``--rs-python PYTHON``: rs-trafilatura (the extractor WCXB's author reports best on WCXB) in a
  CPython 3.12 that has it installed (its only wheels), Markdown and text output, each in its own
  process (``bench/rs_trafilatura_worker.py``), scored here like the rest.

Markdown syntax is stripped from every candidate's output before scoring (``#``, ``*``, ``_``,
backticks, table pipes, list and quote markers, ``[text](url)`` → text; images dropped whole).

Options: ``--limit N`` / ``--types article,forum`` for a quick look, ``--all`` for the other
candidates tried when choosing the approach, ``--no-cv`` to skip the cross-validated row, ``--jobs N`` to run
grid workers in parallel (timings are then not reported for them). Not a test.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import hashlib
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Iterator

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT / ".." / "shared" / "corpora"
WCXB = CORPORA / "wcxb-dev"
READABILITY = CORPORA / "readability"
FOLDS = 5
MIN_WITH = 0.85
BLOCK_MODELS = Path(__file__).resolve().parents[1] / "build" / "blocks"
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
_EMPHASIS = re.compile(r"(?<![\w*])\*{1,3}(?=[^\s*])|(?<=[^\s*])\*{1,3}(?![\w*])")
_SYNTAX = re.compile(r"[#*`|~]+")
_SPACE = re.compile(r"\s+")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " "})


def strip_markdown(text: str) -> str:
    """Markdown → plain text, good enough for token and snippet scoring."""
    text = _FENCE.sub("", text)
    text = _IMAGE.sub("", text)  # alt text is not page text (and trafilatura omits images)
    text = _LINK.sub(r"\1", text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _TABLE_RULE.sub("", text)
    text = _LIST_MARK.sub("", text)
    text = _QUOTE_MARK.sub("", text)
    text = _EMPHASIS.sub("", text).replace("`", "")  # "*word*." is "word.", not "word ."
    return _SYNTAX.sub(" ", text)


def normalise(text: str) -> str:
    """Lowercase, typographic quotes folded to ASCII (the ground truth's snippets are ASCII where
    the pages use ’ and “”), markdown-ish symbols → space, whitespace collapsed."""
    return _SPACE.sub(" ", _SYNTAX.sub(" ", text.lower().translate(_QUOTES))).strip()


def word_prf(predicted: str, reference: str) -> tuple[float, float, float]:
    """(precision, recall, F1) of lowercased ``\\w+`` tokens as multisets."""
    pred = Counter(_WORD.findall(predicted.lower()))
    ref = Counter(_WORD.findall(reference.lower()))
    if not pred or not ref:
        same = 1.0 if not pred and not ref else 0.0
        return same, same, same
    overlap = sum((pred & ref).values())
    if not overlap:
        return 0.0, 0.0, 0.0
    precision, recall = overlap / sum(pred.values()), overlap / sum(ref.values())
    return precision, recall, 2 * precision * recall / (precision + recall)


def word_f1(predicted: str, reference: str) -> float:
    return word_prf(predicted, reference)[2]


def snippet_hits(plain: str, snippets: list[str]) -> tuple[int, int]:
    haystack = normalise(plain)
    wanted = [normalise(s) for s in snippets if s and s.strip()]
    return sum(1 for s in wanted if s in haystack), len(wanted)


_PARSER = None
_CONTAINER_PREFIX = re.compile(r"^(?:\s*>)*")  # a fence inside a block quote: "> ```"


def fences_balanced(markdown: str) -> bool:
    """True when every fenced code block a CommonMark parser (markdown-it-py) finds is closed
    by its own closing fence — an unclosed fence swallows the rest of the page or list item."""
    global _PARSER
    if _PARSER is None:
        from markdown_it import MarkdownIt

        _PARSER = MarkdownIt("commonmark")
    lines = markdown.split("\n")
    for token in _PARSER.parse(markdown):
        if token.type != "fence" or not token.map:
            continue
        start, end = token.map
        closing = _CONTAINER_PREFIX.sub("", lines[end - 1]).strip() if end - start >= 2 else ""
        marker = token.markup
        if not (closing.startswith(marker) and set(closing) == {marker[0]}):
            return False
    return True


# ---------------------------------------------------------------- corpora


def registered_domain(url: str | None) -> str:
    """The registered domain (public-suffix list via ``tld``, a trafilatura dependency)."""
    try:
        from tld import get_fld

        return get_fld(url or "", fail_silently=True) or (url or "")
    except ImportError:  # pragma: no cover - bench extra missing
        host = re.sub(r"^\w+://", "", url or "").split("/")[0]
        return ".".join(host.split(".")[-2:])


def fold_of(url: str | None) -> int:
    return int(hashlib.sha1(registered_domain(url).encode()).hexdigest(), 16) % FOLDS


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


def page_index(corpus: str, limit: int | None = None, types: set[str] | None = None) -> list[dict]:
    """Page descriptors (no HTML): id, type, url, fold."""
    out = []
    if corpus == "wcxb":
        meta = json.loads((WCXB / "metadata.json").read_text())["files"]
        for file_id in sorted(meta):
            page_type = meta[file_id].get("page_type", "unknown")
            if types and page_type not in types:
                continue
            record = json.loads((WCXB / "ground-truth" / f"{file_id}.json").read_text())
            out.append({"id": file_id, "type": page_type, "url": record.get("url"),
                        "fold": fold_of(record.get("url"))})
            if limit and len(out) >= limit:
                break
    else:
        for folder in sorted(p for p in READABILITY.iterdir() if (p / "source.html.gz").exists()):
            out.append({"id": folder.name, "type": "readability", "fold": -1,
                        "url": f"http://fakehost/test/{folder.name}/page.html"})
            if limit and len(out) >= limit:
                break
    return out


def load_page(corpus: str, desc: dict) -> dict:
    """The page's HTML and its reference: main text, ``with`` and ``without`` snippets."""
    if corpus == "wcxb":
        record = json.loads((WCXB / "ground-truth" / f"{desc['id']}.json").read_text())
        gt = _ground_truth(record)
        html = gzip.decompress((WCXB / "html" / f"{desc['id']}.html.gz").read_bytes())
        return dict(desc, html=html.decode("utf-8", errors="replace"),
                    main=gt.get("main_content") or "", with_=list(gt.get("with") or []),
                    without=list(gt.get("without") or []))
    folder = READABILITY / desc["id"]
    html = gzip.decompress((folder / "source.html.gz").read_bytes()).decode("utf-8", "replace")
    expected = gzip.decompress((folder / "expected.html.gz").read_bytes()).decode("utf-8", "replace")
    from selectolax.lexbor import LexborHTMLParser

    root = LexborHTMLParser(expected).root
    main = root.text(deep=True, separator="\n") if root is not None else ""
    return dict(desc, html=html, main=main, with_=[], without=[])


# ---------------------------------------------------------------- candidates


def _webshelf(tuning: dict | None = None) -> Callable[[str, str | None], str]:
    """The served conversion: ``by_type.to_markdown`` on the page's bytes, as the local backend
    runs it on an HTML body (pre-check, hidden-content removal in the same Lexbor tree, main
    content, html-to-markdown). The page is encoded to bytes outside the timed call. ``tuning``
    (the CV folds' block models, the grid's knobs) reaches the same call by binding it into
    ``html_markdown.html_to_markdown``, which ``by_type`` looks up at call time (each candidate
    runs in its own worker process, so nothing else sees the binding)."""
    import functools

    from webshelf.core.convert import html_markdown
    from webshelf.core.convert.by_type import to_markdown
    from webshelf.core.convert.html_main_content import Tuning

    tuning = dict(tuning or {})
    if tuning.get("previous"):
        _use_previous_blocks(tuning.pop("previous"))
    if tuning:
        html_markdown.html_to_markdown = functools.partial(html_markdown.html_to_markdown, tuning=Tuning(**tuning))

    def run(body: bytes, url: str | None) -> str:
        return to_markdown(body, "text/html; charset=utf-8", url or "").markdown

    run.wants_bytes = True
    return run


def _use_previous_blocks(rev: str) -> None:
    """The block classifier's code (features, scoring, narrowing, drop) as it is at git ``rev``,
    bound into ``html_main_content`` (the rest of the converter is this checkout's): "previous
    main" in the same run, with the fold models main's ``bench/train_blocks.py`` wrote
    (``--previous-models``; their feature list is main's, which this checkout's loader refuses)."""
    from old_code import old_module

    from webshelf.core.convert import html_main_content

    old_module("webshelf_previous_block_features", rev, "core/convert/blocks/features.py", {})
    model = old_module("webshelf_previous_block_model", rev, "core/convert/blocks/model.py", {
        "from webshelf.core.convert.blocks.features import": "from webshelf_previous_block_features import"})
    html_main_content.load, html_main_content.select = model.load, model.select


def _converter_alone() -> Callable[[str, str | None], str]:
    """html_to_markdown alone, without hidden-content removal and the pre-check: not what users
    get, kept to show what the served path adds."""
    from webshelf.core.convert.html_markdown import html_to_markdown

    return lambda html, url: html_to_markdown(html, url).markdown


def _trafilatura(**kwargs) -> Callable[[str, str | None], str]:
    import trafilatura

    def run(html: str, url: str | None) -> str:
        return trafilatura.extract(html, url=url, output_format="markdown", **kwargs) or ""

    return run


def _resiliparse() -> Callable[[str, str | None], str]:
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    return lambda html, url: extract_plain_text(HTMLTree.parse(html), main_content=True)


def _h2m(preset: str | None = None) -> Callable[[str, str | None], str]:
    import html_to_markdown as h2m

    options = h2m.ConversionOptions(extract_metadata=False) if preset is None else \
        h2m.ConversionOptions(extract_metadata=False,
                              preprocessing=h2m.PreprocessingOptions(enabled=True, preset=preset))
    return lambda html, url: h2m.convert(html, options).content or ""


def _readability_h2m() -> Callable[[str, str | None], str]:
    import html_to_markdown as h2m
    from readability import Document

    options = h2m.ConversionOptions(extract_metadata=False)
    return lambda html, url: h2m.convert(Document(html).summary(html_partial=True), options).content or ""


def _read_only() -> Callable[[str, str | None], str]:
    return lambda html, url: ""


OURS = "webshelf"
ALONE = "webshelf converter alone (no hidden removal; not served)"
RULES = "webshelf rules only (no block classifier)"
FLAT = "webshelf without narrowing (previous main)"
PREVIOUS = "webshelf previous main (block code and models of main)"
PREVIOUS_REV = "main"  # git revision of the previous block classifier code (--previous-rev)
PREVIOUS_MODELS = BLOCK_MODELS / "main"  # its fold and shipped models (--previous-models)
BASELINE = "trafilatura (markdown, defaults)"
FLOOR = "read pages only (floor)"
CANDIDATES: dict[str, Callable[..., Callable[[str, str | None], str]]] = {
    OURS: _webshelf,
    RULES: lambda: _webshelf({"block_model": "off"}),
    ALONE: _converter_alone,
    PREVIOUS: lambda: _webshelf({"block_model": str(PREVIOUS_MODELS / "model.json"), "previous": PREVIOUS_REV}),
    BASELINE: lambda: _trafilatura(),
    "resiliparse main_content (text)": _resiliparse,
    FLOOR: _read_only,
}
EXTRA_CANDIDATES = {
    "trafilatura fast=True": lambda: _trafilatura(fast=True),
    "trafilatura favor_recall": lambda: _trafilatura(favor_recall=True),
    "html-to-markdown whole page": lambda: _h2m(),
    "html-to-markdown aggressive preprocessing": lambda: _h2m("aggressive"),
    "readability-lxml + html-to-markdown": _readability_h2m,
}


def _flat(model: Path) -> Path:
    """A copy of a block model without narrowing (``narrow_share`` 1): the converter of main
    before issue 14's container narrowing, with the same weights, threshold and cap."""
    data = json.loads(model.read_text())
    out = BLOCK_MODELS / f"{model.stem}.flat.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({**data, "narrow_share": 1.0}))
    return out


# ---------------------------------------------------------------- one worker = one candidate


BEFORE_PREFIX = "webshelf served, code at "


def _webshelf_at(rev: str, tuning: dict | None = None) -> Callable[[bytes, str | None], str]:
    """The served conversion of the whole package at commit ``rev`` (bench/old_code.py
    ``old_package``: loaded from git as ``webshelf_before``), for before/after timing of speed
    work in one run (``--before REV``). ``tuning`` (the CV folds' block models) is bound into
    that package's ``html_to_markdown`` as ``_webshelf`` does for this checkout's, so a change
    to the rules is cross-validated against ``rev``'s rules with the same fold models."""
    import functools
    import importlib

    from old_code import old_package

    name = old_package(rev)
    to_markdown = importlib.import_module(f"{name}.core.convert.by_type").to_markdown
    if tuning:
        html_markdown = importlib.import_module(f"{name}.core.convert.html_markdown")
        tuning_cls = importlib.import_module(f"{name}.core.convert.html_main_content").Tuning
        html_markdown.html_to_markdown = functools.partial(html_markdown.html_to_markdown, tuning=tuning_cls(**tuning))

    def run(body: bytes, url: str | None) -> str:
        return to_markdown(body, "text/html; charset=utf-8", url or "").markdown

    run.wants_bytes = True
    return run


def score(out: str, page: dict, check_fences: bool) -> dict:
    plain = strip_markdown(out)
    p, r, f1 = word_prf(plain, page["main"])
    w_hit, w_n = snippet_hits(plain, page["with_"])
    wo_hit, wo_n = snippet_hits(plain, page["without"])
    row = {"id": page["id"], "type": page["type"], "fold": page["fold"], "f1": f1, "p": p, "r": r,
           "with_hit": w_hit, "with_n": w_n, "without_hit": wo_hit, "without_n": wo_n}
    if check_fences:
        row["fences_ok"] = fences_balanced(out)
    return row


def run_worker(name: str, corpus: str, descs: list[dict], tuning: dict | None) -> dict:
    if name.startswith(BEFORE_PREFIX):
        sys.path.insert(0, str(ROOT / "bench"))
        run = _webshelf_at(name[len(BEFORE_PREFIX):], tuning)
    else:
        factory = {**CANDIDATES, **EXTRA_CANDIDATES}[name]
        run = factory(tuning) if name == OURS else factory()
    rows = []
    wants_bytes = getattr(run, "wants_bytes", False)
    for i, desc in enumerate(descs):
        page = load_page(corpus, desc)
        doc = page["html"].encode("utf-8") if wants_bytes else page["html"]  # outside the timed call
        if i == 0:
            run(doc, page["url"])  # warm-up: imports, caches
        start = time.perf_counter()
        try:
            out = run(doc, page["url"])
        except Exception as exc:  # a candidate crashing scores zero rather than aborting
            out = ""
            print(f"  {name} {page['id']}: {type(exc).__name__}: {exc}", file=sys.stderr)
        ms = (time.perf_counter() - start) * 1000
        row = score(out, page, check_fences=name == OURS)
        row["ms"] = ms
        rows.append(row)
    return {"rows": rows, "peak_rss_mb": peak_rss_mb()}


def peak_rss_mb() -> float:
    """This process's peak resident set: ``VmHWM``, the high-water mark of its own memory map.
    Not ``ru_maxrss``: Linux carries that across ``execve`` from the forked parent, so every
    worker reported at least the parent's size (all readability candidates showed the same
    103 MB in one run, the floor worker included)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


RS = "rs-trafilatura ({mode})"  # bench/rs_trafilatura_worker.py under ``--rs-python``


def _page_file(corpus: str, desc: dict) -> Path:
    if corpus == "wcxb":
        return WCXB / "html" / f"{desc['id']}.html.gz"
    return READABILITY / desc["id"] / "source.html.gz"


def spawn_rs(python: str, mode: str, corpus: str, descs: list[dict]) -> dict:
    """rs-trafilatura in the interpreter ``python`` (its wheels are CPython 3.12 only), scored here
    like every candidate: the worker only extracts and times; the pages' references are read in
    this process."""
    with tempfile.TemporaryDirectory() as tmp:
        spec, out = Path(tmp) / "spec.json", Path(tmp) / "out.json"
        pages = [{"id": d["id"], "url": d["url"], "path": str(_page_file(corpus, d))} for d in descs]
        spec.write_text(json.dumps({"mode": mode, "pages": pages}))
        subprocess.run([python, str(ROOT / "bench" / "rs_trafilatura_worker.py"), str(spec), str(out)], check=True)
        result = json.loads(out.read_text())
    rows = []
    for desc in descs:
        page, done = load_page(corpus, desc), result["outputs"][desc["id"]]
        row = score(done["text"], page, check_fences=False)
        row["ms"] = done["ms"]
        rows.append(row)
    return {"rows": rows, "peak_rss_mb": result["peak_rss_mb"]}


def spawn(name: str, corpus: str, descs: list[dict], tuning: dict | None = None) -> dict:
    """Run one candidate in a fresh process (its own peak RSS, no state shared between them)."""
    with tempfile.TemporaryDirectory() as tmp:
        spec, out = Path(tmp) / "spec.json", Path(tmp) / "out.json"
        spec.write_text(json.dumps({"name": name, "corpus": corpus, "descs": descs, "tuning": tuning,
                                    "previous": [PREVIOUS_REV, str(PREVIOUS_MODELS)]}))
        subprocess.run([sys.executable, __file__, "--worker", str(spec), str(out)], check=True)
        return json.loads(out.read_text())


# ---------------------------------------------------------------- summaries and CV


def summarise(rows: list[dict], result: dict | None = None) -> dict:
    ms = sorted(r["ms"] for r in rows if "ms" in r)
    with_n = sum(r["with_n"] for r in rows)
    without_n = sum(r["without_n"] for r in rows)
    mean = lambda key: statistics.fmean(r[key] for r in rows) if rows else 0.0  # noqa: E731
    out = {
        "pages": len(rows), "f1": mean("f1"), "p": mean("p"), "r": mean("r"),
        "with": sum(r["with_hit"] for r in rows) / with_n if with_n else None,
        "without": sum(r["without_hit"] for r in rows) / without_n if without_n else None,
        "median_ms": statistics.median(ms) if ms else None,
        "p95_ms": ms[min(len(ms) - 1, int(0.95 * len(ms)))] if ms else None,
    }
    if rows and "fences_ok" in rows[0]:
        out["fences_ok"] = sum(r["fences_ok"] for r in rows)
    if result is not None:
        out["peak_rss_mb"] = result.get("peak_rss_mb")
    return out


def by_type(rows: list[dict], result: dict | None = None) -> dict[str, dict]:
    table = {t: summarise([r for r in rows if r["type"] == t]) for t in sorted({r["type"] for r in rows})}
    if len(table) > 1:
        table["overall"] = summarise(rows, result)
    else:
        table[next(iter(table))] = summarise(rows, result)
    return table


def _objective(rows: list[dict]) -> tuple[bool, float]:
    s = summarise(rows)
    return ((s["with"] or 0.0) >= MIN_WITH, s["f1"])


def cross_validate(grid: list[tuple[str, dict, list[dict]]]) -> tuple[list[dict], list[dict]]:
    """Per held-out fold: the grid point best on the other folds (with recall ≥ MIN_WITH first,
    then mean F1), scored on that fold. Returns (held-out rows, the choice made per fold)."""
    held_out, choices = [], []
    for fold in range(FOLDS):
        best = max(grid, key=lambda g: _objective([r for r in g[2] if r["fold"] != fold]))
        test = [r for r in best[2] if r["fold"] == fold]
        held_out.extend(test)
        choices.append({"fold": fold, "label": best[0], "test_pages": len(test),
                        "train": summarise([r for r in best[2] if r["fold"] != fold]),
                        "test": summarise(test)})
    return held_out, choices


# ---------------------------------------------------------------- output


def _fmt(value, digits: int = 3) -> str:
    if value is None:
        return "–"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def print_table(title: str, results: dict[str, dict[str, dict]]) -> None:
    header = ["candidate", "type", "pages", "F1", "P", "R", "with", "without", "median ms",
              "p95 ms", "peak RSS MB", "fences ok"]
    print(f"\n{title}")
    lines = []
    for name, table in results.items():
        for page_type, s in table.items():
            lines.append([name, page_type, str(s["pages"]), _fmt(s["f1"]), _fmt(s["p"]), _fmt(s["r"]),
                          _fmt(s["with"]), _fmt(s["without"]), _fmt(s["median_ms"], 1),
                          _fmt(s["p95_ms"], 1), _fmt(s.get("peak_rss_mb"), 0),
                          _fmt(s.get("fences_ok"))])
    widths = [max(len(x) for x in col) for col in zip(header, *lines)]
    print("| " + " | ".join(c.ljust(w) for c, w in zip(header, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for line in lines:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(line, widths)) + " |")


def _set_previous(rev: str, models: Path) -> None:
    global PREVIOUS_REV, PREVIOUS_MODELS
    PREVIOUS_REV, PREVIOUS_MODELS = rev, models


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, help="only the first N pages of each corpus")
    parser.add_argument("--types", help="comma-separated wcxb page types, e.g. article,forum")
    parser.add_argument("--all", action="store_true", help="also run the other candidates tried")
    parser.add_argument("--only", help="comma-separated candidate names (substring match; =NAME: exactly NAME)")
    parser.add_argument("--before", metavar="REV", action="append",
                        help="also the served path of the whole package at REV (e.g. main), in-sample and "
                             "cross-validated, in the same run (repeatable)")
    parser.add_argument("--no-cv", action="store_true", help="skip the cross-validated classifier row")
    parser.add_argument("--retrain", action="store_true",
                        help="re-run bench/train_blocks.py (dataset, fold models, shipped model) first")
    parser.add_argument("--grid", action="store_true",
                        help="also cross-validate the rule knobs (bench/extract_tuning.py's grid)")
    parser.add_argument("--jobs", type=int, default=1, help="grid workers in parallel")
    parser.add_argument("--flat", action="store_true", help="also the CV row without narrowing")
    parser.add_argument("--previous-rev", default=PREVIOUS_REV,
                        help="git revision whose block classifier code is 'previous main'")
    parser.add_argument("--previous-models", type=Path, default=PREVIOUS_MODELS,
                        help="that code's fold models and model.json (its bench/train_blocks.py output)")
    parser.add_argument("--rs-python", metavar="PYTHON",
                        help="a CPython 3.12 with rs-trafilatura installed: also score it (markdown and text output)")
    parser.add_argument("--json", metavar="OUT", help="write summaries and per-page rows as JSON")
    parser.add_argument("--worker", nargs=2, metavar=("SPEC", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        spec = json.loads(Path(args.worker[0]).read_text())
        _set_previous(spec["previous"][0], Path(spec["previous"][1]))  # --previous-* of the parent
        result = run_worker(spec["name"], spec["corpus"], spec["descs"], spec["tuning"])
        Path(args.worker[1]).write_text(json.dumps(result))
        return 0

    _set_previous(args.previous_rev, args.previous_models)
    types = {t.strip() for t in args.types.split(",") if t.strip()} if args.types else None
    corpora = {"wcxb": page_index("wcxb", args.limit, types),
               "readability": [] if types else page_index("readability", args.limit)}
    names = list(CANDIDATES) + (list(EXTRA_CANDIDATES) if args.all else [])
    if args.only:
        keys = [k.strip() for k in args.only.split(",")]
        names = [n for n in names if any(n == k[1:] if k.startswith("=") else k in n for k in keys)]
    if PREVIOUS in names and not (PREVIOUS_MODELS / "model.json").exists():
        # without its models the row would be main's code with no classifier at all, under main's name
        print(f"no previous models in {PREVIOUS_MODELS} (--previous-models): no {PREVIOUS!r} row", file=sys.stderr)
        names.remove(PREVIOUS)
    befores = args.before or []
    for rev in reversed(befores):
        names.insert(1 if names and names[0] == OURS else 0, BEFORE_PREFIX + rev)

    dump: dict = {"folds": {d["id"]: d["fold"] for d in corpora["wcxb"]}}
    results: dict[str, dict] = {c: {} for c in corpora}
    for corpus, descs in corpora.items():
        if not descs:
            continue
        for name in names:
            print(f"[{corpus}] {name} …", file=sys.stderr, flush=True)
            result = spawn(name, corpus, descs)
            label = f"{name} (defaults, in-sample)" if name == OURS and corpus == "wcxb" else name
            results[corpus][label] = by_type(result["rows"], result)
            dump.setdefault("rows", {}).setdefault(corpus, {})[label] = result["rows"]
        for mode in ("markdown", "text") if args.rs_python else ():
            label = RS.format(mode=mode)
            print(f"[{corpus}] {label} ({args.rs_python}) …", file=sys.stderr, flush=True)
            result = spawn_rs(args.rs_python, mode, corpus, descs)
            results[corpus][label] = by_type(result["rows"], result)
            dump.setdefault("rows", {}).setdefault(corpus, {})[label] = result["rows"]

    if OURS in names and not args.no_cv and corpora["wcxb"]:
        # The block classifier, cross-validated: fold k's pages are converted with the model
        # bench/train_blocks.py fitted (and thresholded) on the other four folds.
        models = [BLOCK_MODELS / f"fold{k}.json" for k in range(FOLDS)]
        if args.retrain or not all(m.exists() for m in models):
            import train_blocks

            print("[wcxb] training the block classifier (bench/train_blocks.py) …", file=sys.stderr)
            train_blocks.main(["--rebuild"] if args.retrain else [])
        cv_rows = {}
        # the same fold models without narrowing: main's converter before it, cross-validated
        # and main's block code with main's fold models: previous main, cross-validated
        previous = [PREVIOUS_MODELS / f"fold{k}.json" for k in range(FOLDS)]
        variants = [("cv", models, {})]
        if all(m.exists() for m in previous):
            variants.append(("cv previous", previous, {"previous": PREVIOUS_REV}))
        else:
            print(f"[wcxb] no previous fold models in {PREVIOUS_MODELS}: no previous-main row", file=sys.stderr)
        if args.flat:
            variants.append(("cv flat", [_flat(m) for m in models], {}))
        # the whole package at each REV with the same fold models: a change to the rules
        # (pruning, container choice) against REV's rules, both held-out, in one run
        before_label = {("cv before" if i == 0 else f"cv before {rev}"): rev for i, rev in enumerate(befores)}
        variants.extend((label, models, {}) for label in before_label)
        for label, fold_models, extra in variants:
            held_out = []
            worker = BEFORE_PREFIX + before_label[label] if label in before_label else OURS
            for k, model in enumerate(fold_models):
                fold_descs = [d for d in corpora["wcxb"] if d["fold"] == k]
                print(f"[wcxb] {worker} fold {k} with its held-out model ({label}) …", file=sys.stderr,
                      flush=True)
                held_out.extend(spawn(worker, "wcxb", fold_descs,
                                      {"block_model": str(model), **extra})["rows"])
            defaults = dump["rows"]["wcxb"][f"{OURS} (defaults, in-sample)"]
            timing = {r["id"]: r["ms"] for r in defaults}
            for r in held_out:  # time of the shipped model's run (same code, same pages)
                r["ms"] = timing[r["id"]]
            cv_rows[label] = by_type(held_out)
            overall = lambda table: table.get("overall") or next(iter(table.values()))  # noqa: E731
            overall(cv_rows[label])["peak_rss_mb"] = \
                overall(results["wcxb"][f"{OURS} (defaults, in-sample)"]).get("peak_rss_mb")
            dump.setdefault("rows", {}).setdefault("wcxb", {})[label] = held_out
        cv_labels = {"cv": f"{OURS} (cross-validated)",
                     "cv previous": f"{OURS} previous main, cross-validated",
                     "cv flat": f"{OURS} without narrowing, cross-validated",
                     **{label: f"{BEFORE_PREFIX}{rev}, cross-validated" for label, rev in before_label.items()}}
        results["wcxb"] = {**{cv_labels[k]: v for k, v in cv_rows.items()}, **results["wcxb"]}

    if OURS in names and args.grid and corpora["wcxb"]:
        from extract_tuning import GRID

        def grid_run(point: tuple[str, dict]) -> tuple[str, dict, list[dict]]:
            label, tuning = point
            print(f"[wcxb] grid {label} …", file=sys.stderr, flush=True)
            return label, tuning, spawn(OURS, "wcxb", corpora["wcxb"], tuning)["rows"]

        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            grid = list(pool.map(grid_run, GRID))
        held_out, choices = cross_validate(grid)
        defaults = dump["rows"]["wcxb"][f"{OURS} (defaults, in-sample)"]
        timing = {r["id"]: r["ms"] for r in defaults}
        for r in held_out:  # time of the shipped configuration: grid workers may run in parallel
            r["ms"] = timing[r["id"]]
        cv = by_type(held_out)
        cv["overall"]["peak_rss_mb"] = results["wcxb"][f"{OURS} (defaults, in-sample)"]["overall"].get("peak_rss_mb")
        results["wcxb"] = {f"{OURS} (rule knobs cross-validated)": cv, **results["wcxb"]}
        dump["cv_choices"] = choices
        dump["grid"] = {label: by_type(rows)["overall"] for label, _, rows in grid}
        print("\nCV choice per held-out fold:")
        for c in choices:
            print(f"  fold {c['fold']}: {c['label']}  train F1 {c['train']['f1']:.3f} "
                  f"with {c['train']['with']:.3f} → test F1 {c['test']['f1']:.3f} ({c['test_pages']} pages)")
        print("\nGrid (all wcxb pages, in-sample, for reference only):")
        for label, s in dump["grid"].items():
            print(f"  {label:40s} F1 {s['f1']:.3f} P {s['p']:.3f} R {s['r']:.3f} with {s['with']:.3f}")

    print_table("wcxb-dev (5 folds by registered domain; webshelf cross-validated row = held-out folds)",
                results["wcxb"])
    if results["readability"]:
        print_table("readability (untouched check; reference = text of expected.html)",
                    results["readability"])
    dump["summary"] = results
    if args.json:
        Path(args.json).write_text(json.dumps(dump, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
