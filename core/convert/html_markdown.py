"""HTML page → Markdown of its main content (the local backend's converter).

Method — parse once with Lexbor (selectolax), then, all in C-backed DOM calls with a few dozen
Python decisions per page:

1. prune page chrome (``core.convert.html_main_content``): scripts, hidden elements, ``nav`` /
   ``aside`` / ARIA landmarks, site header/footer, class/id tokens that start or end with a
   boilerplate word (unless the elements one such name marks hold more than half of the page's
   text together: then the name is on the content's own parts, "skip-item" on every section of
   a story), reader comments when the page has ≥ 10% other text — except on a discussion
   thread's URL (``core.convert.thread_url``), whose replies named like comments are the content;
2. pick the container: ``main`` / ``article`` / ``role=main`` (the common ancestor of several
   articles for threads and listings — when together they hold at least half of the page;
   less is a teaser grid beside a story in no semantic element), else a text-density descent;
3. link density (``core.convert.html_density``): narrow a ``<main>`` to the single inner article
   that holds ≥ 60% of its non-link text, and drop blocks that are ≥ 60% link text (teaser
   rails, "read next", tag clouds) — unless the container is itself mostly links (a listing);
4. a learned block classifier (``core.convert.blocks``): every leaf block of the container
   (paragraph, list item, table row, text ``<div>``…) gets 51 language-independent features
   (lengths, link and punctuation densities, tag, depth, position, sibling repetition, generic
   class/id markup words, where it sits relative to the page's text mass) and a logistic
   regression trained on WCXB dev (``bench/train_blocks.py``; weights in ``model.json``, pure
   Python at run time) drops the ones it scores as boilerplate; ``<pre>``, ``<h1>`` and any
   block holding ≥ 30% of the text are never dropped, and nothing is when the drop would take
   more than 40% of the container's text;
5. fidelity fixes (``html_code``: every ``<pre>`` one clean fenced block, gutters dropped,
   language kept; ``html_tables``: layout tables become text; a heading inside a link or an
   emphasis keeps its level; ``html_links``: a link around a block keeps its images as images,
   never their alt text or its URL as link text; ``html_media``: a video's fallback text goes),
   then html-to-markdown 3.x (Rust) on that subtree only; a
   repeated *section* (responsive double render) is dropped, repeated item headings are not;
   blank lines are squeezed outside code only. bench/markdown_fidelity.py counts each of these
   on every corpus page against the chosen content.

No per-site rules. The numeric knobs live in ``html_main_content.Tuning``.

Why, measured by ``bench/extract_quality.py`` (one run, every candidate in its own process;
docs/benchmarks.md has the tables). Numbers are **cross-validated**: 5 folds by registered
domain on WCXB dev, the block model trained on 4 folds and scored on the 5th; the readability
corpus is a second check never trained on — mean word F1 / precision / ``with`` snippets, as
served (hidden-content removal, then the steps above):

    WCXB dev, 1,358 pages        webshelf 0.849 / 0.853 / 0.854 (session 10; 0.845 / 0.845 /
                                 0.856 before html_links; this module alone 0.848 F1 then)
                                 rules only (steps 1-3, 5; before html_links) 0.839 / 0.821 / 0.870
                                 trafilatura 0.816 / 0.849 / 0.805
                                 rs-trafilatura (text output) 0.844 / 0.851 / 0.860
    readability, 130 pages       webshelf 0.954 / 0.956, trafilatura 0.928 / 0.948,
                                 rs-trafilatura 0.930 / 0.927

Speed: the median page takes 0.20-0.22 of trafilatura's time in that benchmark on WCXB dev and
0.23-0.25 on the readability pages (three runs on 2026-12-08; issue 14 asks ≤ 0.25), with the
compiled module ``core.convert.native`` built at install; without it (no C compiler: the same
output) 0.29-0.30 and 0.32-0.35. Why compiled: after five passes of identical-output Python work the median page's time
was spread over ~15 steps of 2-15% each, most of it selectolax building one Python object per
node asked about (a wrapper, an attribute dict, a decoded string per text node); the module
reads those nodes through Lexbor's own structures instead, and each of its functions is checked
against the Python code it replaces before it is used. docs/benchmarks.md "Session 18" has the
steps and their numbers, "Session 17" what each step of the converter costs the median page
(bench/stage_cost.py takes each out in turn).

Rules win on recall (an agent can skip a menu, it cannot read what was dropped) but lose on
precision on pages unlike WCXB (issue 14: menus, teasers, comment widgets inside the container).
The classifier is there for precision (+0.013 on WCXB, boilerplate snippets 0.113 → 0.088) at
the price of 0.009 recall; it is learned rather than hand-ruled because the boilerplate left
after the rules has no class word or tag to catch it, and language-independent because the
pages that matter are not all English. It drops nothing when it would take more than 40% of
the container (listing pages, whose items look like teasers).
"""

from __future__ import annotations

from html import escape as _escape
import re
from collections.abc import Callable
from itertools import groupby
from typing import IO
from dataclasses import dataclass

import html_to_markdown as h2m
from selectolax.lexbor import LexborHTMLParser

from webshelf.core.convert.gc_pause import gc_paused
from webshelf.core.convert.html_code import normalise_code_blocks, squeeze_blanks
from webshelf.core.convert.html_huge import convert_huge
from webshelf.core.convert.html_links import images_out_of_links
from webshelf.core.convert.html_media import drop_media_fallback
from webshelf.core.convert.html_tables import unwrap_layout_tables
from webshelf.core.convert.html_main_content import DEFAULT, Tuning, main_content


# Called on each parsed tree with the text it came from, before anything reads the tree.
Prepare = Callable[[LexborHTMLParser, str], object]


@dataclass(frozen=True)
class Converted:
    markdown: str
    title: str | None


_OPTIONS = dict(
    heading_style="atx",
    code_block_style="backticks",
    bullets="-",
    strong_em_symbol="*",
    extract_metadata=False,
    autolinks=False,
    inline_data_media="keep",
    hidden_content="drop",
    preprocessing=h2m.PreprocessingOptions(enabled=False),
)
_PLAIN_OPTIONS = h2m.ConversionOptions(**_OPTIONS)
_BLANKS = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
_TAGS = re.compile(r"<[^>]*>")
_SPACE = re.compile(r"\s+")


def _options(url: str | None) -> h2m.ConversionOptions:
    if url and url.startswith(("http://", "https://")):
        return h2m.ConversionOptions(**_OPTIONS, base_url=url)
    return _PLAIN_OPTIONS


def _native_converter() -> Callable[[str, str | None], str] | None:
    """``html → Markdown`` through html-to-markdown's Rust binding with its options object built
    once, or None when this version of the package lays its binding out differently.

    Why: ``h2m.convert`` maps the Python options onto the Rust ones on every call — 50 fields,
    a dozen enum coercions — ~0.2 ms a call, about a tenth of converting a median page's
    fragment. The fields are taken from the package's own mapping of ``_PLAIN_OPTIONS`` (so the
    Rust options are the ones ``h2m.convert`` would build), and only ``base_url`` is set per
    page (~9 µs)."""
    try:
        from html_to_markdown import _html_to_markdown as native
        from html_to_markdown.api import _to_rust_conversion_options

        plain = _to_rust_conversion_options(_PLAIN_OPTIONS)
        fields = {name: getattr(plain, name) for name in dir(plain)
                  if not name.startswith("_") and not callable(getattr(plain, name))}
        if fields.get("base_url") is not None or fields.get("visitor") is not None:
            return None
        native.ConversionOptions(**fields)  # the binding takes back what it gave
        # and converts as the public API does (a version whose binding takes other arguments, or
        # converts differently, is caught here at import, not on the first page)
        sample = "<h2>T</h2><p>a <a href='/x'>b</a> <em>c</em></p><ul><li>d</li></ul><pre><code>e</code></pre>"
        if native.convert(html=sample, options=plain, visitor=None).content != h2m.convert(sample, _PLAIN_OPTIONS).content:
            return None
    except Exception:  # another layout of the package: the public API
        return None

    def convert(html: str, url: str | None) -> str:
        if url and url.startswith(("http://", "https://")):
            options = native.ConversionOptions(**{**fields, "base_url": url})
        else:
            options = plain
        return native.convert(html=html, options=options, visitor=None).content or ""

    return convert


_NATIVE = _native_converter()


def _clean_text(text: str | None) -> str | None:
    text = _SPACE.sub(" ", text or "").strip()
    return text or None


def _title(tree: LexborHTMLParser) -> str | None:
    node = tree.css_first("title")
    title = _clean_text(node.text() if node is not None else None)
    if title:
        return title
    for selector in ("meta[property='og:title']", "meta[name='twitter:title']"):
        node = tree.css_first(selector)
        if node is not None and _clean_text(node.attributes.get("content")):
            return _clean_text(node.attributes.get("content"))
    node = tree.css_first("h1")
    return _clean_text(node.text(deep=True) if node is not None else None)


_PERMALINK_TEXT = frozenset({"", "¶", "#", "§", "🔗", "link", "permalink"})


# Inline elements the converter renders around their content: a heading inside one comes out as
# "**## Title**" (b, strong, em, i, s, del, strike, mark, q, code; a disclosure summary, a legend,
# a figure caption) or as link text (a).
_WRAPPERS = ("a", "b", "strong", "em", "i", "s", "del", "strike", "mark", "q", "code", "summary", "legend", "figcaption")
_INLINE = frozenset(_WRAPPERS)
# Every heading, and a walk up to the container in Python: the 84 compound selectors "a h1, …"
# cost Lexbor 2.1 ms on a median WCXB page (a tenth of its conversion), the walk 0.4 ms; the
# shorter ":is(a, b, …) :is(h1, …)" misses some matches in this Lexbor (54 of 300 pages).
_HEADINGS = "h1, h2, h3, h4, h5, h6"


def _lift_headings_out_of_inline(node) -> int:
    """A heading inside an inline element keeps its level: a link around it (a card:
    ``<a href><h3>Title</h3><p>teaser</p></a>``) moves inside the heading (``### [Title](href)``,
    the rest of the card unlinked); bold, italic, strike-through, mark, quote or code around it
    are dropped (the heading is emphasis enough), and so is a disclosure ``<summary>``, a
    ``<legend>`` or a ``<figcaption>`` holding it (an accordion's section titles).

    Why: Markdown has no block inside an inline, so the converter flattened a card into one link
    line and wrote ``**## Title**`` for a bold-wrapped heading or an accordion's
    ``<summary><h2>`` — neither is a heading. On WCXB
    dev that lost 2.4% of the h2-h6 in the chosen content, and 123 headings in list items that
    the footer outline could not list (bench/markdown_fidelity.py)."""
    lifted, top = 0, node.mem_id
    for heading in node.css(_HEADINGS):
        up = heading.parent
        while up is not None and up.mem_id != top:
            tag, above = up.tag, up.parent
            if tag == "pre":
                break
            if tag in _INLINE and above is not None:
                if tag == "a":
                    href = up.attributes.get("href")
                    if href is not None and heading.css_first("a") is None:
                        title = up.attributes.get("title")
                        extra = f' title="{_escape(title, quote=True)}"' if title else ""
                        heading.inner_html = f'<a href="{_escape(href, quote=True)}"{extra}>{heading.inner_html or ""}</a>'
                up.unwrap()
                lifted += 1
            up = above
    return lifted


def _polish(node) -> None:
    """Small fixes on the chosen subtree before conversion: drop heading permalinks ("¶"),
    lift headings out of the links and emphasis around them, make every ``<pre>`` one clean code block with
    its language (``core.convert.html_code``), turn layout tables into text blocks
    (``core.convert.html_tables``), a link around a block keeps its images as images
    (``core.convert.html_links``), a video's fallback text goes (``core.convert.html_media``)."""
    _lift_headings_out_of_inline(node)
    for a in node.css("h1 a[href^='#'], h2 a[href^='#'], h3 a[href^='#'], h4 a[href^='#'], "
                      "h5 a[href^='#'], h6 a[href^='#'], dt a[href^='#'], a.headerlink"):
        if a.text(deep=True, strip=True).lower() in _PERMALINK_TEXT and a.css_first("img") is None:
            a.remove()
    normalise_code_blocks(node)
    unwrap_layout_tables(node)
    images_out_of_links(node)
    drop_media_fallback(node)


def _convert(html: str, url: str | None) -> str:
    if _NATIVE is not None:
        return _NATIVE(html, url)
    result = h2m.convert(html, _options(url))
    return result.content or ""


def _dedupe(markdown: str) -> str:
    """Drop a repeated copy of a section (responsive layouts render the article twice, desktop
    and mobile): a run of consecutive blocks that each appeared before, holding at least
    ``_DEDUPE_RUN`` different blocks (the same paragraph three times is not a section copy). Whole blank-line-separated blocks are compared, never lines, and a single repeated
    paragraph stays (a coupon's fine print under each offer, a refrain, a test page's lorem)."""
    blocks = markdown.split("\n\n")
    keys = list(map(str.strip, blocks))  # (the loop in C)
    # Fewer than _DEDUPE_RUN second occurrences of non-empty blocks (most pages have none): no run
    # can hold _DEDUPE_RUN different repeated blocks, and nothing would be dropped.
    if len(keys) - len(set(keys)) - max(0, keys.count("") - 1) < _DEDUPE_RUN:
        return markdown
    seen: set[str] = set()
    if "```" not in markdown and "~~~" not in markdown:  # no fence in any block (a fence has no "\n\n"):
        add = seen.add  # a block repeats when it is not empty and was seen before — one C-driven pass
        repeat = [bool(key) and (key in seen or add(key)) for key in keys]
    else:
        repeat, fenced = [], False
        for block, key in zip(blocks, keys):
            fences = sum(1 for line in block.split("\n") if line.lstrip().startswith(("```", "~~~"))) \
                if "```" in block or "~~~" in block else 0  # (most blocks hold no fence: no split)
            repeat.append(bool(key) and not fenced and not fences and key in seen)
            if key:
                seen.add(key)
            if fences % 2:
                fenced = not fenced
    # A repeated section: a maximal run of repeated blocks holding _DEDUPE_RUN different ones —
    # dropped whole; any other run is kept.
    dropped, at = [], 0
    for repeated, run in groupby(map(bool, repeat)):
        end = at + sum(1 for _ in run)
        if repeated and len(set(keys[at:end])) >= _DEDUPE_RUN:
            dropped.append((at, end, any(map(_prose, keys[at:end]))))
        at = end
    if not dropped:
        return markdown  # ("\n\n".join of its split)
    out, at = [], 0
    for start, end, copy in dropped:
        out.extend(blocks[at:start])
        if not copy:  # structure repeated under every item: its headings stay, the rest goes
            out.extend(block for block in blocks[start:end] if block.lstrip().startswith("#"))
        at = end
    out.extend(blocks[at:])
    return "\n\n".join(out)


_DEDUPE_RUN = 3
_MARKUP_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")


def _prose(block: str) -> bool:
    """A block of running text (not a heading, not an image or a short label): ≥ 8 words.

    Why: a section copy repeats the article's text, and goes whole; a run of repeated headings,
    icons and labels with no prose ("### Pros & Cons", the same toggle icon twice, "#### Pros"
    under every item of a review list; a forum's "##### Full Member / Joined / Messages" under
    each post) is page structure: its icons and labels go, its headings stay — dropping them
    took 410 headings from WCXB dev pages, ~150 of them in real double renders
    (bench/markdown_fidelity.py)."""
    if block.startswith("#"):
        return False
    return len(_MARKUP_LINK.sub(r"\1", block).split()) >= 8


_TOO_SHORT = 200


def _whole_page(html: str, url: str | None, prepare: Prepare | None = None, utf8: bytes | None = None) -> str:
    """The body with only scripts, styles and the like removed: the fallback."""
    tree = LexborHTMLParser(html if utf8 is None else utf8)
    if prepare is not None:
        prepare(tree, html)
    body = tree.body or tree.root
    if body is None:
        return ""
    for node in body.css("script, style, noscript, template, svg, iframe, object, embed, canvas"):
        node.remove()
    return _convert(body.html or "", url)


def _tidy(markdown: str) -> str:
    markdown = squeeze_blanks(_dedupe(markdown)).strip()
    return markdown + "\n" if markdown else ""


@gc_paused
def html_to_markdown(html: str | bytes, url: str | None = None, *, tuning: Tuning = DEFAULT,
                     prepare: Prepare | None = None, huge: bool = False, encoding: str | None = None,
                     out: IO[str] | None = None, utf8: bytes | None = None) -> Converted:
    """Convert ``html`` to Markdown of its main content. Never raises on junk input.

    ``prepare(tree, html)`` runs on the parsed tree before anything reads it (by_type passes
    ``html_hidden.drop_hidden_in``): one Lexbor parse serves hidden-content removal, the title and
    main-content selection, where a string pass before would parse and re-serialise the page.
    The tree is freed before html-to-markdown builds its own from the chosen fragment, so the
    two never peak together on a large page.

    ``huge`` (by_type sets it above ``web.convert_huge_bytes``): no main-content selection, the
    whole body converted one slice at a time (core/convert/html_huge.py says why and how); with
    ``encoding`` set, ``html`` is the page's bytes and each slice is decoded on its own; with
    ``out`` (a text file, huge mode only) the Markdown is written there and ``markdown`` is empty.

    ``utf8`` (by_type passes the page's bytes): ``html`` is exactly their UTF-8 decoding. Lexbor
    is handed them as they are — it parses UTF-8 bytes, and given the text it encodes it first
    (the same bytes, ~0.8 ms on a mean page) — and the NUL test runs on them (a byte search
    instead of a scan of the UCS-2/4 text; a NUL byte in UTF-8 is exactly a NUL character).

    The cyclic garbage collector is paused while it runs (core/convert/gc_pause.py says why)."""
    if huge and out is not None:
        start = out.tell()
        try:
            markdown, title = convert_huge(html, lambda fragment: _convert(fragment, url), _polish, _title, prepare,
                                           encoding=encoding, out=out)
            return Converted(markdown=markdown, title=title)
        except Exception:  # a converter bug must not lose the page: the paths below, their result written to out
            out.seek(start)
            out.truncate()
            converted = html_to_markdown(html.decode(encoding or "utf-8", errors="replace") if isinstance(html, bytes)
                                         else html, url, tuning=tuning, prepare=prepare, huge=True)
            out.write(converted.markdown)
            return Converted(markdown="", title=converted.title)
    if huge and encoding is not None and isinstance(html, bytes):
        try:
            markdown, title = convert_huge(html, lambda fragment: _convert(fragment, url), _polish, _title, prepare,
                                           encoding=encoding)
            return Converted(markdown=markdown, title=title)
        except Exception:  # a converter bug must not lose the page: the text path below, then its fallbacks
            html = html.decode(encoding, errors="replace")
    if isinstance(html, bytes):
        html, utf8 = html.decode("utf-8", errors="replace"), None
    if not isinstance(html, str) or not html or html.isspace():  # (= not html.strip(), without the copy)
        return Converted(markdown="", title=None)
    if huge:
        utf8 = None
    if (b"\x00" in utf8) if utf8 is not None else ("\x00" in html):
        html, utf8 = html.replace("\x00", ""), None
    title = None
    try:
        if huge:
            markdown, title = convert_huge(html, lambda fragment: _convert(fragment, url), _polish, _title, prepare)
            return Converted(markdown=markdown, title=title)  # tidied slice by slice
        tree = LexborHTMLParser(html if utf8 is None else utf8)
        if prepare is not None:
            prepare(tree, html)
        title = _title(tree)
        h1 = tree.css_first("h1")
        h1_text = _clean_text(h1.text(deep=True)) if h1 is not None else None
        node = main_content(tree, tuning, url)
        if node is not None:
            _polish(node)
        fragment = node.html if node is not None else ""
        picked, own_h1 = node is not None, node is not None and node.css_first("h1") is not None
        del tree, h1, node  # free Lexbor's tree before html-to-markdown parses the fragment
        markdown = _convert(fragment or "", url)
        del fragment
        if len(markdown) < _TOO_SHORT:  # pruning misfired (or the page is tiny): keep it all
            whole = _whole_page(html, url, prepare, utf8)
            if len(whole) > 3 * len(markdown):
                markdown = whole
        if h1_text and picked and not own_h1 and h1_text not in markdown:
            markdown = f"# {h1_text}\n\n{markdown}"
    except Exception:  # a converter bug must not lose the page: fall back to simpler paths
        html = _prepared(html, prepare)  # not guarded: hidden content must never reach a fallback
        try:
            markdown = _convert(html, url)
        except Exception:
            markdown = _SPACE.sub(" ", _TAGS.sub(" ", html)).strip()
    return Converted(markdown=_tidy(markdown), title=title)


def _prepared(html: str, prepare: Prepare | None) -> str:
    """``html`` after ``prepare`` (for the fallback that converts the whole page as a string):
    ``prepare.as_text(html)`` when it has one (``drop_hidden_in.as_text`` is ``drop_hidden``, which
    does not parse a page without hiding markers, so a page Lexbor could not parse still gets
    html-to-markdown's try), else a parse, ``prepare`` and a serialisation."""
    if prepare is None:
        return html
    as_text = getattr(prepare, "as_text", None)
    if as_text is not None:
        return as_text(html)
    tree = LexborHTMLParser(html)
    prepare(tree, html)
    return tree.html or ""
