"""Markdown fidelity on every corpus page (issue 14 "Markdown fidelity"): code blocks, their
language and text, heading levels, tables, the title line, the first paragraph and a final code
block — counted on the served Markdown against the HTML of the *chosen content*.

Why: "fences balance" (the only corpus-wide check before) says nothing about whether the fence
holds the code, carries the language the page declares, or whether a heading kept its level.
Agents page by headings and copy code, so each property is counted here on every WCXB dev,
readability and pydocs page, as the local backend serves it (``by_type.to_markdown`` on the
bytes), and compared with what the extraction chose to keep: the subtree that
``html_markdown._polish`` receives (captured by wrapping it; huge pages: every slice) — so a
``<pre>`` the extraction rightly dropped as boilerplate is not a fidelity miss. Pages whose
output came from the whole-page fallback (a tiny pick) are counted against that pick too.

The reference side is computed here, independently of the converter's own rules: the language
conventions (``language-x``, ``lang-x``, ``highlight-source-x``, ``highlight-x``, ``sourceCode x``,
``brush: x``, ``data-lang``/``data-language`` on the ``<pre>``, its ``<code>`` or a wrapper
``div``), line-number gutters (by class, or a digits-only ``<pre>``/cell), data vs layout tables
(``html_tables.is_layout``, the documented definition). The output side is parsed with
markdown-it-py (CommonMark + tables); headings in list items are looked up with the truncation
outline's own scanner (``core.truncate.headings``).

    nice -n 10 .venv/bin/python bench/markdown_fidelity.py [--before main] [--limit N] [--show K]

``--before REV`` runs the same counts on the package at REV (bench/old_code.py ``old_package``) in
the same process, page by page, as the baseline. Prints one table per corpus.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from markdown_it import MarkdownIt
from selectolax.lexbor import LexborHTMLParser, LexborNode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
CORPORA = ROOT.parent / "shared" / "corpora"

_MD = MarkdownIt("commonmark").enable("table")
_WS = re.compile(r"\s+")
_LANG_CLASS = re.compile(
    r"(?:^|\s)(?:language|lang|highlight-source|highlight|brush:?)-?\s*([a-z0-9][\w+#.-]*)", re.I)
_SOURCE_CODE = re.compile(r"(?:^|\s)sourceCode\s+([a-z0-9][\w+#.-]*)", re.I)
_NO_LANG = frozenset({"default", "none", "text", "plain", "plaintext", "nohighlight", "source", "sourcecode",
                      "notranslate", "python3-none", "code", "block", "js-file-line", "txt"})
_GUTTER = re.compile(r"(?:^|\s)(?:line-?numbers?(?:-rows)?|linenos?|lnt|ln|gutter|hljs-ln-numbers?|hljs-ln-n|"
                     r"code-line-number|blob-num|react-line-number|rouge-gutter|line-no|lineno-\w+)(?:\s|$)", re.I)
_DIGITS = re.compile(r"^[\s\d.:]*$")


def norm(text: str) -> str:
    return _WS.sub(" ", text).strip()


def exact(text: str) -> str:
    """Code text compared line by line: trailing spaces and blank edge lines ignored, tabs kept."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\xa0", " ").split("\n")]
    return "\n".join(lines).strip("\n")


# ---------------------------------------------------------------- the reference side


def declared_language(pre: LexborNode) -> str | None:
    """The language the page declares for ``pre`` (None: none declared)."""
    nodes = [pre.css_first("code"), pre]
    up = pre.parent
    for _ in range(3):
        if up is None:
            break
        nodes.append(up)
        up = up.parent
    for node in nodes:
        if node is None:
            continue
        attrs = node.attributes
        for name in ("data-lang", "data-language"):
            value = (attrs.get(name) or "").strip().lower()
            if value:
                return None if value in _NO_LANG else value
        cls = attrs.get("class") or ""
        for pattern in (_LANG_CLASS, _SOURCE_CODE):
            for m in pattern.finditer(cls):
                lang = m.group(1).lower()
                if lang not in _NO_LANG:
                    return lang
    return None


def pre_text(pre: LexborNode) -> str:
    """What the reader copies: gutters removed, ``<br>`` → newline (on a copy of the subtree)."""
    node = LexborHTMLParser(pre.html or "").css_first("pre")
    if node is None:
        return ""
    for gutter in node.css("[class]"):
        if gutter.parent is not None and _GUTTER.search(gutter.attributes.get("class") or ""):
            gutter.remove()
    for br in node.css("br"):
        br.replace_with("\n")
    if "\n" not in node.text(deep=True):  # one block per line (<div>s, no newline characters)
        for line in node.css("div, p, li, tr"):
            if line.css_first("div, p, li, tr") is None:
                line.insert_after("\n")
    return node.text(deep=True)


def code_pres(content: LexborNode) -> list[LexborNode]:
    """Outermost ``<pre>``s holding code (a digits-only ``<pre>`` beside the code is a gutter)."""
    out = []
    for pre in content.css("pre"):
        up, nested = pre.parent, False
        while up is not None:
            if up.tag == "pre":
                nested = True
                break
            up = up.parent
        if nested or _DIGITS.match(pre.text(deep=True)):
            continue
        out.append(pre)
    return out


def _in(node: LexborNode, tag: str) -> bool:
    up = node.parent
    while up is not None:
        if up.tag == tag:
            return True
        up = up.parent
    return False


@dataclass
class Reference:
    pres: list[tuple[str, str, str | None]]  # (exact text, normalised text, declared language)
    headings: Counter  # level → count (headings with text)
    li_headings: list[tuple[int, str]]  # (level, normalised text) of headings inside list items
    data_tables: int
    layout_tables: int
    first_paragraph: str | None
    last_pre: str | None  # normalised text of a <pre> that ends the content
    h1: str | None  # the content's own first <h1> text


def reference(content_html: str, is_layout) -> Reference:  # noqa: ANN001 — html_tables.is_layout
    tree = LexborHTMLParser(content_html)
    root = tree.body or tree.root
    pres = []
    for pre in code_pres(root):
        text = pre_text(pre)
        if text.strip():
            pres.append((exact(text), norm(text), declared_language(pre)))
    levels, in_li = Counter(), []
    for h in root.css("h1, h2, h3, h4, h5, h6"):
        text = norm(h.text(deep=True))
        if not text or _in(h, "pre"):
            continue
        levels[int(h.tag[1])] += 1
        if _in(h, "li"):
            in_li.append((int(h.tag[1]), text))
    data = layout = 0
    for table in root.css("table"):
        if _in(table, "table") or _in(table, "pre") or table.css_first("pre") is not None:
            continue  # nested (its outer table decides), or code/gutter tables (counted as code)
        if is_layout(table):
            layout += 1
        else:
            data += 1
    first = None
    for p in root.css("p"):
        text = norm(p.text(deep=True))
        if len(text) >= 40 and not _in(p, "table") and not _in(p, "li") and not _in(p, "blockquote"):
            first = text
            break
    last_pre = None
    if pres:
        text_all = norm(root.text(deep=True))
        tail = pres[-1][1]
        if tail and text_all.endswith(tail[-200:]):
            last_pre = tail
    own = next((norm(h.text(deep=True)) for h in root.css("h1") if norm(h.text(deep=True))), None)
    return Reference(pres, levels, in_li, data, layout, first, last_pre, own)


# ---------------------------------------------------------------- the output side


@dataclass
class Output:
    fences: list[tuple[str, str, str]]  # (info language, exact body, normalised body)
    headings: Counter
    outline: list[tuple[int, str]]
    tables: int
    bad_tables: int  # pipe tables whose rows do not all have the delimiter row's column count
    text: str  # normalised rendered text
    first_line: str


def _cells(line: str) -> int:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    line = re.sub(r"`[^`]*`", "c", line)  # a pipe inside a code span does not split a cell
    return len(re.split(r"(?<!\\)\|", line))


def output(markdown: str) -> Output:
    from webshelf.core.truncate import headings as outline_headings

    tokens = _MD.parse(markdown)
    lines = markdown.split("\n")
    fences, levels, tables, bad = [], Counter(), 0, 0
    for i, token in enumerate(tokens):
        if token.type in ("fence", "code_block"):
            body = token.content
            fences.append(((token.info or "").split()[0].lower() if token.info.strip() else "", exact(body), norm(body)))
        elif token.type == "heading_open":
            inline = tokens[i + 1]
            if norm(inline.content):
                levels[int(token.tag[1])] += 1
        elif token.type == "table_open" and token.map:
            tables += 1
            start, end = token.map
            widths = {_cells(line) for line in lines[start:end] if line.strip()}
            if len(widths) > 1:
                bad += 1
    rendered = LexborHTMLParser(_MD.render(markdown))
    text = norm(rendered.body.text(deep=True)) if rendered.body is not None else ""
    outline = [(h.level, h.text) for h in outline_headings(markdown)]
    first_line = next((line.strip() for line in lines if line.strip()), "")
    return Output(fences, levels, outline, tables, bad, text, first_line)


_LINK = re.compile(r"!?\[([^\]]*)\]\((?:[^()]|\([^)]*\))*\)")
_NOT_WORD = re.compile(r"[\W_]+")


def _unmark(text: str) -> str:
    """Text compared across HTML and Markdown: links reduced to their text, then only letters and
    digits, lower-cased (an ``<h1>`` of two spans reads "(US)Your" in the DOM, "(US) Your" out)."""
    return _NOT_WORD.sub("", _LINK.sub(r"\1", text)).lower()


# ---------------------------------------------------------------- counting


@dataclass
class Tally:
    pages: int = 0
    counts: Counter = field(default_factory=Counter)
    examples: dict = field(default_factory=dict)

    def add(self, key: str, n: int = 1, page: str | None = None) -> None:
        self.counts[key] += n
        if page and n and key.startswith("miss"):
            self.examples.setdefault(key, []).append(page)


def count(tally: Tally, page: str, ref: Reference, out: Output, h1: str | None, title: str | None) -> None:
    c = tally.add
    tally.pages += 1
    c("pre", len(ref.pres))
    c("fence", len(out.fences))
    if len(ref.pres) != len(out.fences):
        c("miss pages pre != fence", 1, page)
    pool = Counter(f[2] for f in out.fences)
    exact_pool = Counter(f[1] for f in out.fences)
    lang_of = {}
    for info, body_exact, body in out.fences:
        lang_of.setdefault(body, info)
    for text_exact, text, lang in ref.pres:
        if pool[text]:
            pool[text] -= 1
            c("pre text kept (normalised)")
        else:
            c("miss pre text changed/dropped", 1, page)
        if exact_pool[text_exact]:
            exact_pool[text_exact] -= 1
            c("pre text kept (exact lines)")
        else:
            c("miss pre exact lines", 1, page)
        if lang:
            c("pre with language")
            if lang_of.get(text) == lang:
                c("fence with that language")
            else:
                c("miss language", 1, page)
    for level in range(1, 7):
        c(f"h{level} content", ref.headings[level])
        c(f"h{level} output", out.headings[level])
    if any(out.headings[lv] < ref.headings[lv] for lv in range(2, 7)):
        c("miss pages heading level short", 1, page)
    c("headings in list items", len(ref.li_headings))
    outline = {(lv, _unmark(t)) for lv, t in out.outline}
    for level, text in ref.li_headings:
        if (level, _unmark(text)) in outline:
            c("… found by the outline")
        else:
            c("miss li heading not in outline", 1, page)
    c("data tables", ref.data_tables)
    c("layout tables", ref.layout_tables)
    c("pipe tables", out.tables)
    c("pipe tables ragged", out.bad_tables)
    if out.bad_tables:
        c("miss ragged table", 1, page)
    if out.tables != ref.data_tables:
        c("miss pages pipe tables != data tables", 1, page)
    first_heading = next((t for _, t in out.outline), "")
    have = [h for h in (_unmark(first_heading), _unmark(out.first_line)) if h]
    h1 = ref.h1 or h1  # the content's own title heading, else the page's first <h1> (which the converter adds)
    if h1:
        c("pages with h1")
        if any(_unmark(h1) in h for h in have):
            c("title line present")
        else:
            c("miss title line (h1)", 1, page)
    elif title:
        c("pages without h1, with title")
        if first_heading and _unmark(first_heading) in _unmark(title):
            c("first heading in title")
        else:
            c("miss no h1: first heading not in title", 1, page)
    if ref.first_paragraph:
        c("first paragraph (content)")
        if _unmark(ref.first_paragraph)[:200] in _unmark(out.text):
            c("first paragraph present")
        else:
            c("miss first paragraph", 1, page)
    if ref.last_pre:
        c("content ends in <pre>")
        if any(body == ref.last_pre for _, _, body in out.fences[-3:]):
            c("final <pre> present")
        else:
            c("miss final pre", 1, page)


# ---------------------------------------------------------------- pages and sides


def pages(limit: int | None):
    """(corpus, id, bytes, url) for every WCXB dev, readability and pydocs page."""
    import extract_quality as eq

    for corpus in ("wcxb", "readability"):
        for desc in eq.page_index(corpus, limit):
            page = eq.load_page(corpus, desc)
            yield corpus, desc["id"], page["html"].encode("utf-8"), page["url"] or ""
    names = sorted(p.name for p in (CORPORA / "pydocs").iterdir() if p.name.endswith((".html", ".html.gz")))
    for name in names[:limit] if limit else names:
        data = (CORPORA / "pydocs" / name).read_bytes()
        if name.endswith(".gz"):
            data = gzip.decompress(data)
        stem = name.removesuffix(".gz").removesuffix(".html")
        yield "pydocs", stem, data, f"https://docs.python.org/3/{stem.replace('__', '/')}.html"


class Side:
    """One version of the package: its ``to_markdown`` with ``_polish`` wrapped to capture the
    chosen content's HTML before any fidelity fix touches it."""

    def __init__(self, package: str):
        import importlib

        self.by_type = importlib.import_module(f"{package}.core.convert.by_type")
        self.hm = importlib.import_module(f"{package}.core.convert.html_markdown")
        self.captured: list[str] = []
        self.h1_title: tuple[str | None, str | None] = (None, None)
        polish, title_of = self.hm._polish, self.hm._title

        def titling(tree):  # noqa: ANN001, ANN202 — called on the tree after hidden-content removal
            h1, title = tree.css_first("h1"), tree.css_first("title")
            if self.h1_title == (None, None):
                self.h1_title = ((norm(h1.text(deep=True)) if h1 is not None else None) or None,
                                 (norm(title.text()) if title is not None else None) or None)
            return title_of(tree)

        def capturing(node):  # noqa: ANN001, ANN202
            self.captured.append(node.html or "")
            return polish(node)

        self.hm._polish, self.hm._title = capturing, titling

    def run(self, data: bytes, url: str) -> tuple[str, str, str | None, str | None]:
        """(Markdown, chosen content's HTML, the page's first ``<h1>`` text, its ``<title>``) —
        the last two as the converter sees them (after hidden-content removal)."""
        self.captured, self.h1_title = [], (None, None)
        md = self.by_type.to_markdown(data, "text/html; charset=utf-8", url).markdown
        return md, "".join(self.captured), *self.h1_title


ROWS = [
    ("<pre> in content", "pre"), ("fenced/indented blocks out", "fence"),
    ("pages: <pre> count != fence count", "miss pages pre != fence"),
    ("<pre> text kept (whitespace-normalised)", "pre text kept (normalised)"),
    ("<pre> text kept (exact lines, tabs kept)", "pre text kept (exact lines)"),
    ("<pre> declaring a language", "pre with language"), ("… fence carries it", "fence with that language"),
    *[(f"h{n} content / output", f"h{n}") for n in range(1, 7)],
    ("pages: fewer h2-h6 out than in", "miss pages heading level short"),
    ("headings in list items", "headings in list items"), ("… in the footer outline", "… found by the outline"),
    ("data tables / layout tables", "tables"), ("pipe tables out / ragged", "pipe"),
    ("pages: pipe tables != data tables", "miss pages pipe tables != data tables"),
    ("title line present / pages with an h1", "title"),
    ("no h1: first heading is part of <title> / pages", "notitle"),
    ("first paragraph present / in content", "firstp"),
    ("final <pre> present / content ends in <pre>", "lastpre"),
]


def cell(t: Tally, key: str) -> str:
    c = t.counts
    if re.fullmatch(r"h\d", key):
        return f"{c[key + ' content']} / {c[key + ' output']}"
    pairs = {"tables": ("data tables", "layout tables"), "pipe": ("pipe tables", "pipe tables ragged"),
             "title": ("title line present", "pages with h1"),
             "notitle": ("first heading in title", "pages without h1, with title"),
             "firstp": ("first paragraph present", "first paragraph (content)"),
             "lastpre": ("final <pre> present", "content ends in <pre>")}
    if key in pairs:
        a, b = pairs[key]
        return f"{c[a]:,} / {c[b]:,}"
    return f"{c[key]:,}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="main", help="baseline revision in the same run ('' = none)")
    ap.add_argument("--limit", type=int, help="first N pages of each corpus")
    ap.add_argument("--show", type=int, default=0, help="example pages per miss kind")
    ap.add_argument("--json", help="write the counts and the missing pages as JSON")
    args = ap.parse_args(argv)
    from webshelf.core.convert.html_tables import is_layout

    sides = {"this tree": Side("webshelf")}
    tmp = None
    if args.before:
        from old_code import old_package

        tmp = tempfile.TemporaryDirectory()
        sides = {args.before: Side(old_package(args.before, Path(tmp.name))), **sides}
    tallies = {(name, corpus): Tally() for name in sides for corpus in ("wcxb", "readability", "pydocs")}
    for corpus, page_id, data, url in pages(args.limit):
        for name, side in sides.items():
            md, content, h1, title = side.run(data, url)
            count(tallies[name, corpus], f"{corpus}/{page_id}", reference(content, is_layout), output(md), h1, title)
    for corpus in ("wcxb", "readability", "pydocs"):
        group = {name: tallies[name, corpus] for name in sides}
        n = next(iter(group.values())).pages
        print(f"\n{corpus} ({n:,} pages)\n")
        print("| " + " | ".join(["measure", *group]) + " |")
        print("|---" * (len(group) + 1) + "|")
        for label, key in ROWS:
            print(f"| {label} | " + " | ".join(cell(t, key) for t in group.values()) + " |")
        if args.show:
            for name, t in group.items():
                for kind, where in sorted(t.examples.items()):
                    print(f"  {name} {kind}: {len(where)} e.g. {' '.join(where[:args.show])}")
    if args.json:
        Path(args.json).write_text(json.dumps({f"{n}/{c}": {"pages": t.pages, "counts": t.counts,
                                                            "missing": t.examples}
                                               for (n, c), t in tallies.items()}, indent=1))
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
