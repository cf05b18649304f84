"""Compiled reads of selectolax's Lexbor tree for the served path (issue 14's speed goal).

``_lexbor`` (Cython, built at install when a C compiler is there: setup.py) answers the served
path's questions about the parsed tree from Lexbor's structures instead of through selectolax's
per-node Python objects: ``text_len``, ``link_len``, the block classifier's ``blocks``, pruning's
class/id scan (``named``), the comment walk, the page's class lists, selector lists of plain tag
names (``css``) and the pre-check's tag marks (``mark_bound``) — each the same answer as the
Python code, which stays the reference and the fallback.

Before anything serves: selectolax's node wrapper is checked, by reading only, to be laid out as
``ws_node_object.h`` says; ``_check`` runs ``text_len``, ``link_len`` and ``blocks`` beside the
Python code on a page that exercises what the C code reads (nesting, classes, ids, anchors,
images, ``<pre>``, code, comments, non-ASCII and odd white space); a module that owns the Python
reference of another function takes the compiled one only if ``agrees`` (the same page) or its
own samples say so. Any difference — another layout in a future selectolax, say — and the Python
code serves, with ``REASON`` saying why. ``WEBSHELF_NATIVE=0`` in the environment turns it off.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from selectolax.lexbor import LexborHTMLParser

from webshelf.core.convert.blocks import features

_CHECK_PAGE = """<html><body><main class="content main" id="top">
<h1>Title — “quoted”</h1><p class="lead">First, paragraph. 12 items!</p>
<div class="card"><p>Some <a href="/a">link text</a> and <img src="x.png"> more.</p></div>
<div class="card"><p>\u00a0Non-breaking\u3000spaces\u2003 and tabs\t</p></div>
<div class="card teaser"><ul><li class="item">One</li><li class="item">Two <b>bold</b></li></ul></div>
<pre class="code"><div>inside pre</div>x = 1; <code class="hljs-comment"># y</code></pre>
<table><tr><td>cell, one</td><td>cell 2</td></tr></table>
<section id="comments"><article><p>Привет, мир! Ελληνικά; 中文。</p></article></section>
<!-- a comment --><footer class="site-footer" id="foot"><nav class="menu main-nav" id>
<a href="/" class>Home</a></nav><div class="share-buttons" id="share_1">Share</div></footer>
</main></body></html>"""

REASON: str | None = None


def _check(module) -> str | None:
    """None when ``module`` gives the Python code's answers on ``_CHECK_PAGE``, else why not."""
    tree = LexborHTMLParser(_CHECK_PAGE)
    container = tree.css_first("main")
    if not module.layout_ok(container):  # (before anything reads a node through the layout)
        return "selectolax's node wrapper is laid out otherwise than ws_node_object.h says"
    for node in tree.root.traverse(include_text=True):
        if module.text_len(node) != len(node.text(deep=True, separator=" ", strip=True)):
            return f"text_len differs on <{node.tag}>"
        if node.is_element_node and module.link_len(node) != sum(
                len(a.text(deep=True, separator=" ", strip=True)) for a in node.css("a")):
            return f"link_len differs on <{node.tag}>"
    ours, theirs = module.blocks(container), features.blocks(container)
    if [(b.node.mem_id, b.chars, b.features, b.chain) for b in ours] != \
            [(b.node.mem_id, b.chars, b.features, b.chain) for b in theirs]:
        return "blocks differ"
    return None


def agrees(ours: Callable, theirs: Callable, key: Callable) -> bool:
    """Whether ``ours`` (a compiled function, given a node) and ``theirs`` (its Python reference)
    give the same answers, compared through ``key``, on every element of the check page: how a
    module that owns the Python reference takes a compiled one (the reference cannot be imported
    here without importing that module)."""
    tree = LexborHTMLParser(_CHECK_PAGE)
    try:
        return all(key(ours(node)) == key(theirs(node))
                   for node in tree.root.traverse() if node.is_element_node)
    except Exception:  # noqa: BLE001 — any failure means: serve with the Python code
        return False


_TAG_LIST = re.compile(r"[a-z][a-z0-9]*(?:, [a-z][a-z0-9]*)*")
_TAG_SELECTORS: dict[str, frozenset[int] | None] = {}  # selector -> its tags' ids, None: by ``css``


def css(root, selector: str) -> list:  # noqa: ANN001 — selectolax node or tree
    """``root.css(selector)``; a list of plain HTML tag names ("header, footer") is found by tag
    id in C when the compiled module is there (``junk``: no selector engine, no wrapper for the
    elements on the way), once it has given the selector engine's answer on the check page."""
    ids = _TAG_SELECTORS.get(selector, ())
    if ids == ():
        ids = _TAG_SELECTORS[selector] = _tag_selector(selector)
    if ids is None:
        return root.css(selector)
    top = root.root if isinstance(root, LexborHTMLParser) else root  # (a tree's elements are under <html>)
    return junk(top, ids) if top is not None else []


def _tag_selector(selector: str) -> frozenset[int] | None:
    if junk is None or not _TAG_LIST.fullmatch(selector):
        return None
    from webshelf.core.convert.blocks.tree import tag_ids

    try:
        ids = frozenset(tag_ids(frozenset(selector.split(", "))))
    except RuntimeError:  # a name without a fixed tag id (not one of HTML's)
        return None
    same = agrees(lambda node: junk(node, ids), lambda node: node.css(selector),
                  lambda found: [node.mem_id for node in found])
    return ids if same else None


def _load():
    global REASON
    if os.environ.get("WEBSHELF_NATIVE") == "0":  # (the Python code alone: a way out, a baseline)
        REASON = "turned off by WEBSHELF_NATIVE=0"
        return None
    try:
        from webshelf.core.convert.native import _lexbor
    except ImportError as error:  # not built (no C compiler at install)
        REASON = f"not built: {error}"
        return None
    try:
        REASON = _check(_lexbor)
    except Exception as error:  # noqa: BLE001 — any failure means: serve with the Python code
        REASON = f"check failed: {type(error).__name__}: {error}"
    return None if REASON else _lexbor


_module = _load()
AVAILABLE = _module is not None
text_len: Callable | None = _module.text_len if _module else None
blocks: Callable | None = _module.blocks if _module else None
named: Callable | None = _module.named if _module else None
named_words: Callable | None = _module.named_words if _module else None
comments: Callable | None = _module.comments if _module else None
junk: Callable | None = _module.junk if _module else None
mark_bound: Callable | None = _module.mark_bound if _module else None
mark_steps: Callable | None = _module.mark_steps if _module else None
link_len: Callable | None = _module.link_len if _module else None
class_text: Callable | None = _module.class_text if _module else None
