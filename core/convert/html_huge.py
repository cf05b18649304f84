"""Huge HTML pages (over ``web.convert_huge_bytes``) → Markdown, one slice of the body at a time.

Why: the memory of converting a page is its trees, not its text. A 20 MB page of ~600,000
paragraphs is a ~215 MB Lexbor tree, main-content selection then adds ~165 MB of transient
Python and C state over it, and html-to-markdown's own tree of the whole document alone peaks at
~620 MB (docs/benchmarks.md, "Conversion worker pool", measured step by step). Pages that big
are specs, logs, data dumps and single-page books: their boilerplate is negligible next to their
content, so main-content selection is skipped (everything but hidden content and
script/style/embedded objects is kept) and the body is converted in slices of about
``CHUNK_CHARS`` so that only one slice's tree is alive at a time.

How the body is cut (``plan``): one regex scan over the tags, tracking the open elements as the
HTML parser would (void and optional-end elements never counted, an end tag closes up to its
open element, comments and raw-text elements skipped). A cut goes only before the start tag of a
block element (which closes an open ``<p>`` anyway) and only where every open element is a plain
container (``div``, ``section``, ``article``, ``main``, …): never inside a list, table, ``<pre>``,
blockquote, inline element or foreign content. Each slice is parsed as a document of its own —
the page's head (minus scripts), every ``<style>`` sheet of the page, the ``<body>`` tag and the
start tags of its open containers re-opened, then the slice — so hidden-content removal
(core/convert/html_hidden.py) sees the same sheets and ancestors as in the whole tree. The
``<style>`` elements of the body are taken out of the slices (they are in every slice's head).

When the page is not cut (converted in one tree, the same steps): the page's sheets have a rule
whose match depends on siblings or descendants (``:nth-child``, ``+``, ``~``, ``:has()``…), which a
slice would change; a tag the scan cannot read safely (an unclosed quote, a script with comment
escapes); or no safe cut point (one huge table or list).

What is lost against the normal path: nothing of the content; page chrome (menus, footers) that
main-content selection would drop stays, and a repeated section is kept (no ``_dedupe``). ``tests/test_html_huge.py`` checks the slices' Markdown against the
whole-tree conversion of the same page.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import IO
from dataclasses import dataclass, field

from selectolax.lexbor import LexborHTMLParser

from webshelf.core.convert.bounds import MAX_DEPTH
from webshelf.core.convert.css_hidden import page_sheets
from webshelf.core.convert.html_precheck import flatten_deep
from webshelf.core.convert.html_code import squeeze_blanks

#: Target size of one slice (characters of HTML): its Lexbor tree is ~10× that.
CHUNK_CHARS = 1_000_000

# A comment, doctype or processing instruction; or a tag read as the HTML tokenizer reads it: quotes
# count only around an attribute value (after "="), a stray quote is part of an attribute name, and
# an unclosed quoted value runs to the end of the text (the tag then has no ">": not cut after).
_ATTR = r"""[^\t\n\f\r />][^\t\n\f\r />=]*(?:[\t\n\f\r ]*=[\t\n\f\r ]*(?:"[^"]*"|'[^']*'|["'][\s\S]*|[^\t\n\f\r >]*))?"""
_TOKEN = re.compile(rf"""<!--.*?(?:-->|\Z)|<[!?][^>]*>?|<(/?)([A-Za-z][^\t\n\f\r />]*)((?:[\t\n\f\r /]+|{_ATTR})*)(>?)""",
                    re.S)
VOID = frozenset("area base br col embed hr img input link meta param source track wbr keygen frame image".split())
OPTIONAL_END = frozenset("p li dt dd option optgroup tr td th thead tbody tfoot colgroup caption rb rt rtc rp "
                         "html head body".split())
RAW_TEXT = frozenset("script style textarea title xmp iframe noembed noframes".split())
#: Containers a slice may re-open: they add no Markdown of their own.
CONTAINERS = frozenset("div section article main header footer nav aside center form hgroup search".split())
#: Start tags a cut may precede: block elements (each closes an open <p>) that html-to-markdown
#: always separates from what comes before by one blank line — not <blockquote> or <hr> (after a
#: paragraph, fence or quote it writes them on the next line) nor <ol> (after another list it
#: switches the marker to ``1)``), measured pair by pair.
BLOCKS = frozenset("address article aside details dialog div dl fieldset figcaption figure footer form "
                   "h1 h2 h3 h4 h5 h6 header hgroup main menu nav p pre section table ul search center".split())
_HEAD_ONLY = frozenset("html head title meta link style script base noscript template".split())
#: Formatting elements: closed implicitly (``<div><b>x</div>``), the parser re-opens them in what follows.
FORMATTING = frozenset("a b big code em font i nobr s small strike strong tt u".split())
#: Selector parts whose match depends on siblings or descendants: a slice would change them.
_STRUCTURAL = re.compile(r"[+~]|:(?:nth-|first-|last-|only-|empty|has\()", re.I)
#: Removed before conversion, as the whole-page fallback of html_markdown does.
JUNK = "script, style, noscript, template, svg, iframe, object, embed, canvas"


@dataclass
class Plan:
    """How to convert one huge page: ``head`` (the text every slice starts with) and the slices,
    each (re-opened container tags, start, end) in the page text, style elements to leave out."""

    head: str
    slices: list[tuple[str, int, int]] = field(default_factory=list)
    styles: list[tuple[int, int]] = field(default_factory=list)  # spans of the body's <style> elements
    why_whole: str | None = None  # set when the page is converted in one tree


def plan(html: str, chunk_chars: int) -> Plan:
    """Where to cut ``html`` (see the module docstring); one slice when it must not be cut."""
    stack: list[tuple[str, str]] = []  # open counted elements: (name, start tag text)
    active: set[str] = set()  # formatting elements closed by an ancestor's end tag, re-opened by the parser
    cuts: list[tuple[int, str]] = []  # (position, re-opened tags)
    sheets: list[str] = []
    head_scripts: list[tuple[int, int]] = []
    styles: list[tuple[int, int]] = []
    body_tag: tuple[int, int] | None = None  # span of <body …>, or (p, p) where the body starts implicitly
    unsafe = None
    last_cut = last = 0
    pos = 0
    while (m := _TOKEN.search(html, pos)) is not None:
        start, pos = m.start(), m.end()
        inert = body_tag is None and any(open_name == "template" for open_name, _ in stack)  # a head <template>
        if body_tag is None and not inert and html[last:start].strip():
            body_tag = (last, last)  # text before any <body> (not inside a <template> of the head): the body has begun
        last = pos
        name = m.group(2)
        if name is None:
            continue  # comment, doctype, processing instruction
        name = name.lower()
        if not m.group(4):  # a tag without its ">" (an unclosed quote, or the end of the text)
            unsafe = unsafe or f"a tag the scan cannot read at character {start:,}"
            break
        if m.group(1):  # an end tag: close up to its open element, as the parser does
            for i in range(len(stack) - 1, -1, -1):
                if stack[i][0] == name:
                    # formatting elements closed implicitly stay active: the parser re-opens them later
                    active.update(n for n, _ in stack[i + 1:] if n in FORMATTING)
                    del stack[i:]
                    break
            else:
                active.discard(name)  # its own end tag ends an active formatting element
            continue
        if body_tag is None and not inert and (name == "body" or name not in _HEAD_ONLY):
            body_tag = (start, pos) if name == "body" else (start, start)
        if name in RAW_TEXT:
            end = re.compile(rf"</{name}[\t\n\f\r />]", re.I).search(html, pos)
            close = html.find(">", end.end() - 1) + 1 if end else 0
            content_end = end.start() if end else len(html)
            if name == "script" and "<!--" in html[pos:content_end]:
                unsafe = unsafe or f"a script with comment escapes at character {start:,}"
            if name == "style":
                sheets.append(html[pos:content_end])
                if body_tag is not None:
                    styles.append((start, close or len(html)))
            elif name == "script" and body_tag is None:
                head_scripts.append((start, close or len(html)))
            if not close:
                unsafe = unsafe or f"an unclosed <{name}> at character {start:,}"
                break
            pos = last = close
            continue
        if name == "plaintext":
            break  # the rest of the page is text: no tag, no cut
        if name == "a":
            active.discard("a")  # a new <a> closes an active one
        if body_tag is not None and name in BLOCKS and start - last_cut >= chunk_chars and start > body_tag[1] \
                and not active and all(open_name in CONTAINERS for open_name, _ in stack):
            cuts.append((start, "".join(tag for _, tag in stack)))
            last_cut = start
        if name in VOID or name in OPTIONAL_END or (m.group(3).rstrip().endswith("/") and name in ("svg", "math")):
            continue
        stack.append((name, m.group(0)))
    body_tag = body_tag or (len(html), len(html))
    head = _head(html, body_tag, head_scripts, sheets, styles)
    if unsafe is None and sheets:
        rules = page_sheets(sheets)
        structural = next((r.selector for r in (*rules.hiding, *rules.showing) if _STRUCTURAL.search(r.selector)), None)
        if structural is not None:
            unsafe = f"a style rule that depends on siblings or descendants ({structural[:80]})"
    if unsafe is not None or not cuts:
        return Plan(head, [("", body_tag[1], len(html))], styles, unsafe or "no safe cut point")
    bounds = [(body_tag[1], "")] + cuts
    slices = [(reopen, begin, end) for (begin, reopen), (end, _) in zip(bounds, bounds[1:] + [(len(html), "")])]
    return Plan(head, slices, styles)


def _head(html: str, body_tag: tuple[int, int], head_scripts: list, sheets: list[str], styles: list) -> str:
    """The text before the body without its scripts, the body's sheets added, then the body tag."""
    parts, at = [], 0
    for begin, end in head_scripts:
        parts.append(html[at:begin])
        at = end
    parts.append(html[at:body_tag[0]])
    parts.extend(f"<style>{sheet}</style>" for sheet in sheets[len(sheets) - len(styles):])
    parts.append(html[body_tag[0]:body_tag[1]])
    return "".join(parts)


def slice_documents(source: str | bytes, the_plan: Plan, encoding: str | None = None) -> Iterator[str]:
    """Each slice as a document of its own: head, re-opened containers, the slice without its styles.

    ``source`` is the page as text, or as its bytes with the ``encoding`` to decode each slice
    with (``the_plan`` then holds byte offsets and text read as Latin-1, see ``plan_bytes``): the
    whole page is then never decoded at once."""
    head, join = (the_plan.head, "".join) if encoding is None else (the_plan.head.encode("latin-1"), b"".join)
    for reopen, begin, end in the_plan.slices:
        parts, at = [head, reopen if encoding is None else reopen.encode("latin-1")], begin
        for s_begin, s_end in the_plan.styles:
            if s_end <= begin or s_begin >= end:
                continue
            parts.append(source[at:max(at, s_begin)])
            at = max(at, s_end)
        parts.append(source[at:end] if at < end else source[:0])
        doc = join(parts) if encoding is None else join(parts).decode(encoding, errors="replace")
        yield doc.replace("\x00", "") if "\x00" in doc else doc


def plan_bytes(body: bytes, chunk_chars: int) -> Plan:
    """``plan`` of a page given as bytes in an ASCII-compatible encoding whose multi-byte
    sequences never contain ``<``, ``>`` or quotes (``SLICEABLE``): read as Latin-1, one character
    per byte, the scan sees the same tags and its offsets are byte offsets. The Latin-1 copy is
    dropped before any slice is converted."""
    return plan(body.decode("latin-1"), chunk_chars)


def sliceable(encoding: str) -> bool:
    """Whether a page in ``encoding`` (a ``codecs.lookup`` name) can be cut as bytes: UTF-8 and
    single-byte ASCII-compatible encodings; not UTF-16/32, not stateful ones (ISO-2022)."""
    return encoding in ("utf-8", "utf-8-sig", "ascii") or encoding.startswith(SLICEABLE)


SLICEABLE = ("iso8859-", "cp125", "koi8-", "mac-", "cp437", "cp850", "cp866", "cp874")


Prepare = Callable[[LexborHTMLParser, str], object]


def convert_huge(html: str | bytes, convert: Callable[[str], str], polish: Callable, title_of: Callable,
                 prepare: Prepare | None = None, chunk_chars: int | None = None,
                 encoding: str | None = None, out: IO[str] | None = None) -> tuple[str, str | None]:
    """(tidy Markdown of the whole body, title): each slice parsed, ``prepare``d (hidden removal),
    cleared of ``JUNK``, ``polish``ed and converted by ``convert`` in turn, its tree freed before
    the next is built. The callables are html_markdown's (this module builds no Markdown).

    The Markdown is tidied per slice (blank-line runs → one blank line, blank lines at the ends
    dropped) and joined once, so the whole text exists once, not once per pass; the result ends
    with one newline like html_markdown's ``_tidy``. No repeated-section removal (``_dedupe``):
    it is there for responsive double renders of ordinary pages, and in a reference or a data
    dump a run of repeated blocks is content.

    ``html`` may be the page's bytes with their ``encoding`` (``sliceable``): each slice is then
    decoded on its own, so the page's text never exists whole. With ``out`` (a text file) the
    Markdown is written there slice by slice and never held whole either (the worker pool spools a
    huge page's result this way, core/convert/pool.py); the returned text is then empty. Elements nested deeper than
    ``MAX_DEPTH`` are unwrapped per slice (core/convert/html_precheck.py), before its parse."""
    chunk_chars = chunk_chars or CHUNK_CHARS
    the_plan = plan(html, chunk_chars) if encoding is None else plan_bytes(html, chunk_chars)
    parts: list[str] = []
    write = parts.append if out is None else out.write
    pending = None  # the last slice's Markdown, held back: the final one ends in one newline
    meta_title = h1_title = None
    for i, doc in enumerate(slice_documents(html, the_plan, encoding)):
        doc = flatten_deep(doc, MAX_DEPTH)[0]
        tree = LexborHTMLParser(doc)
        if prepare is not None:
            prepare(tree, doc)
        if meta_title is None:  # a page's <title> (or og:title) may sit in any slice; an <h1> is the last resort
            found = title_of(tree)
            h1 = tree.css_first("h1")
            if found and h1 is not None and found == " ".join((h1.text(deep=True) or "").split()):
                h1_title = h1_title or found
            elif found:
                meta_title = found
            del h1
        body = tree.body
        if body is None:
            continue
        for node in body.css(JUNK):
            node.remove()  # detached, not freed: a nested match (an <svg> in an <object>) stays valid
        polish(body)
        fragment = body.html or ""
        del body, tree, doc  # this slice's tree is freed before html-to-markdown builds its own
        part = _EDGE_BLANKS.sub("", squeeze_blanks(convert(fragment)))
        del fragment
        if not part.strip():
            continue
        if pending is None:
            part = part.lstrip()
        else:
            write(pending)
            write("\n\n")
        pending = part
    title = meta_title or h1_title
    if pending is None:
        return "", title
    write(pending.rstrip() + "\n")
    return ("" if out is not None else "".join(parts)), title


_EDGE_BLANKS = re.compile(r"\A(?:[ \t]*\n)+|(?:\n[ \t]*)+\Z")  # blank lines at the start or end of a slice
