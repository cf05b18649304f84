"""Find the main content of an HTML page: prune boilerplate, then pick the content container.

Works on a selectolax (Lexbor, C) DOM so that every bulk step — parsing, CSS matching, text
extraction, removal — runs in C; Python only makes a few dozen decisions per page. No per-site
rules: only HTML semantics (tags, ARIA roles, hidden markers), generic class/id words and text
statistics. Last, the learned block classifier (``core.convert.blocks``) scores the leaf
blocks of the container, narrows it to the branch holding the keep-weighted text mass (a story
inside a page-sized wrapper of teasers and comment widgets) and removes the blocks it scores
as boilerplate (``Tuning.block_model="off"`` skips it; the rules alone are ``container()``).
Used by ``core.html_markdown``; the measurements are in docs/benchmarks.md ("Extraction
quality").

Cost (issue 14's speed goal): the decisions are the same as ever; what is cheap is how they are
measured — ``_match`` (and ``_classify``) is memoised per class/id string (a page repeats its class lists, and
sites share them) and one ``html_density.Lengths`` memo carries the lengths measured while picking the
container on to ``narrow`` and ``drop_link_blocks``, which measure the same nodes. Lexbor matches
every selector of a list against every node, so ``prune`` asks it short lists: chrome is ``nav, aside,
[role]`` with the role checked here (``_chrome``); junk (15 tag names) is one query all the same, which
costs less than 15 tag-name walks (``_drop_junk``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from selectolax.lexbor import LexborHTMLParser, LexborNode

from webshelf.core.convert import native
from webshelf.core.convert.blocks.model import load, select
from webshelf.core.convert.html_code import contains
from webshelf.core.convert.html_density import Lengths, child_lengths, drop_link_blocks, narrow, text_len, unique
from webshelf.core.convert.thread_url import is_thread_url


@dataclass(frozen=True)
class Tuning:
    """The numeric knobs of container choice. The defaults are what
    ``bench/extract_tuning.py`` chose on all of WCXB dev; ``bench/extract_quality.py``
    re-chooses them on 4 folds and scores the 5th, so the reported numbers are held-out."""

    container_min_share: float = 0.25  # a semantic container must hold this share of the text
    descend_share: float = 0.7  # the density descent follows a child holding this share
    narrow_share: float = 0.6  # an inner article holding this share of non-link text wins (1 = off)
    link_density: float = 0.6  # blocks at least this much link text are dropped (1 = off)
    link_min_chars: int = 40  # ... when they hold at least this many characters
    link_page_max: float = 0.5  # ... unless the whole container is this much link text (listings)
    comment_min_share: float = 0.1  # reader comments go when the rest is this share of the page
    # the learned block classifier (core.convert.blocks): a model file, None = the shipped one,
    # "off" = no classifier; its keep-probability threshold, None = the one trained with it
    block_model: str | None = None
    block_threshold: float | None = None


DEFAULT = Tuning()

# Never content: removed everywhere, before anything else looks at the tree.
_JUNK_TAG_LIST = ["script", "style", "template", "svg", "iframe", "object", "embed", "canvas", "link", "meta",
                  "button", "input", "select", "textarea", "dialog"]
_JUNK_TAGS = ", ".join(_JUNK_TAG_LIST)  # the same as one selector list
# Hidden now; dropped unless that would drop most of the page (streamed SSR pages keep their
# content in hidden placeholders that a script reveals).
_HIDDEN = ("[hidden], [aria-hidden=true], [style*='display:none' i], [style*='display: none' i], "
           "[style*='visibility:hidden' i], [style*='visibility: hidden' i]")

# Page chrome by HTML semantics. header/footer only count as chrome outside the content element
# (inside an <article> a <header> holds the title and byline).
_CHROME_ROLES = ("navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar", "dialog",
                 "alertdialog", "tooltip")
# the same as one selector list (what ``_chrome`` answers)
_CHROME = ", ".join(["nav", "aside", *(f"[role={role}]" for role in _CHROME_ROLES)])
_CHROME_ROLE_SET = frozenset(_CHROME_ROLES)
_SITE_HEADER_FOOTER = "header, footer"

# Generic boilerplate words in class/id. A rough regex finds candidates; the word must then be
# the first or last token of a class/id (so "canvas" is not "nav", "has-sidebar" is kept).
_WORDS = ("nav", "navbar", "navigation", "menu", "submenu", "megamenu", "sidebar", "breadcrumb",
          "breadcrumbs", "footer", "masthead", "cookie", "cookies", "consent", "gdpr", "share",
          "sharing", "social", "newsletter", "subscribe", "subscription", "signup", "popup",
          "modal", "overlay", "advert", "advertisement", "ad", "ads", "adsense", "sponsored",
          "promo", "related", "recommended", "skip", "skiplink", "toolbar", "pagination",
          "pager", "offcanvas", "drawer", "banner", "topbar", "header", "sr")
# Reader comments: dropped only when the page has substantial content besides them (so a forum
# thread, which is all "comments", keeps them).
_COMMENT = frozenset({"comment", "comments", "commentlist", "respond", "disqus"})
_BOILER = frozenset(_WORDS)
# "has-sidebar", "with-nav", "no-ads", "js-menu-open": state flags on wrappers, not chrome.
_FLAG_PREFIXES = frozenset({"has", "with", "no", "without", "is", "js", "l", "o", "u", "body"})

_NAME_KEEPS = "main, article, [role=main], h1"  # a class name is weaker evidence than a tag
_CONTAINERS = ("main, [role=main], article, [itemprop=articleBody], [itemprop=mainContentOfPage]")


@lru_cache(maxsize=1 << 16)
def _classify(value: str) -> str | None:
    """"boiler" or "comment" when a class/id token starts or ends with such a word
    ("site-footer", "share-buttons", "main-nav", "comment-list"), unless it is a state flag
    ("has-sidebar"); else None."""
    return _match(value)[0]


_DIGITS = re.compile(r"\d+")


@lru_cache(maxsize=1 << 16)  # a pure function of the string; bounded for a long-lived server
def _match(value: str) -> tuple[str | None, str | None]:
    """(``_classify``'s kind, the class/id token that decided it with its digits dropped —
    "banner-772692385" and "banner-1866584638" are one name — or None)."""
    kind, token = None, None
    for name in value.lower().replace("_", "-").replace(":", "-").split():
        parts = name.strip("-").split("-")
        first, last = parts[0], parts[-1]
        if first in _FLAG_PREFIXES:
            continue
        if first in _BOILER or last in _BOILER:
            return "boiler", _DIGITS.sub("", name)
        if first in _COMMENT or last in _COMMENT:
            kind, token = "comment", token or _DIGITS.sub("", name)
    return kind, token


_text_len = text_len  # len(node.text(deep=True, separator=" ", strip=True))


def _has_ancestor(node: LexborNode, tags: tuple[str, ...]) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.tag in tags or parent.attributes.get("role") == "main":
            return True
        parent = parent.parent
    return False


def prune(tree: LexborHTMLParser, body: LexborNode, comment_share: float = 0.2, thread: bool = False) -> None:
    """Remove scripts, hidden elements and page chrome from ``body`` in place. On a discussion
    thread (``thread``: core/convert/thread_url.py) the elements named like comments are the
    replies, the content, and stay."""
    # remove() detaches without freeing, so nodes already listed stay safe to inspect.
    _drop_junk(tree)
    # <noscript> is junk, except on pages that only render their text there (Discourse's
    # crawler view): then it is the content.
    noscripts = native.css(body, "noscript")
    total = _text_len(body) or 1
    if noscripts:  # (without any, the body is unchanged: its length too)
        keep_noscript = sum(_text_len(n) for n in noscripts) > 0.5 * total
        for node in noscripts:
            node.unwrap() if keep_noscript else node.remove()
        total = _text_len(body) or 1
    # each once: a node with two markers (hidden and aria-hidden) is listed twice, and its text
    # counted twice toward the 60% that keeps every hidden element
    hidden = [n for n in unique(body.css(_HIDDEN)) if n.tag not in ("html", "body")]
    if sum(_text_len(n) for n in hidden) < 0.6 * total:
        for node in hidden:
            node.remove()
    # What holds a keeper, from one query per selector instead of a subtree query per candidate.
    # Exact while the loops below run: they only remove nodes that hold no keeper of their
    # selector (that is the test), so no holder loses its keeper; the name loop's keepers add
    # h1, which the tag loops may remove, so its holders are taken after them.
    holders = _holders(body, _KEEPS)
    for node in _chrome(body):
        if _removable(node, total, holders=holders):
            node.remove()
    for node in native.css(body, _SITE_HEADER_FOOTER):
        if not _has_ancestor(node, ("article", "main")) and _removable(node, total, holders=holders):
            node.remove()
    comments = []
    # _NAME_KEEPS is _KEEPS plus h1: the tag loops removed no keeper of _KEEPS (nor, so, any
    # ancestor of one), so its holders stand and only the h1s' are added.
    holders = _holders(body, "h1", holders)
    named: dict[str, list[LexborNode]] = {}
    for node, kind, token in _named(body, _match):
        if kind == "comment":
            comments.append(node)
        elif kind == "boiler" and _removable(node, total, _NAME_KEEPS, holders):
            named.setdefault(token, []).append(node)
    # (decided before any removal, as one at a time in document order did: a removal changes
    # no later node's length — a later node is a descendant, whose text stays, or lies after)
    for nodes in named.values():
        if _content_parts(nodes, total):
            continue
        for node in nodes:
            node.remove()
    if not thread:
        _drop_comments(body, comments, comment_share)


def _once(nodes: list[LexborNode]):
    """``nodes`` with each node once. Lexbor lists a node once per selector of a list it
    matches, and the repeats come side by side (it tries the whole list on a node before the
    next), so skipping the node just seen is ``unique`` for a tenth of its cost."""
    last = None
    for node in nodes:
        key = node.mem_id
        if key != last:
            last = key
            yield node


def _named(body: LexborNode, match) -> list[tuple[LexborNode, str, str | None]]:
    """(node, kind, token) of each element of ``body`` (``body`` too) whose class/id ``match``
    (``_match``) gives a kind, in document order, leaving out code (``_in_code``)."""
    out = []
    # (each node once: one with both a class and an id came twice, and its comment section
    # counted twice against the rest of the page — a thread under an article stayed whenever it
    # was over a third of the page: readability's pixnet)
    for node in _once(body.css("[class], [id]")):
        # the class list alone when there is no id (most nodes): the same tokens as "class id"
        node_id, cls = node.id, node.attrs.get("class")
        kind, token = match((cls or "") if node_id is None else f"{cls or ''} {node_id}")
        if kind is not None and not _in_code(node):
            # (in code: a highlighter's token — hljs-comment, Prism's "token comment", Pygments' sr)
            out.append((node, kind, token))
    return out


def _drop_junk(tree: LexborHTMLParser) -> None:
    """``tree.strip_tags(_JUNK_TAG_LIST, recursive=True)``: the tree minus every subtree rooted at
    a junk element, whatever the order (one inside a subtree already gone is detached again,
    harmlessly). One walk matching the 15 names costs less than ``strip_tags``' 15 tag-name walks
    of the document, the ~90 elements a page handed to Python included (docs/benchmarks.md, s10-prune)."""
    for node in native.css(tree, _JUNK_TAGS):
        node.remove()


def _in_code(node: LexborNode) -> bool:
    """``node`` is a ``<pre>`` or ``<code>`` or inside one: its class names are a syntax
    highlighter's (``hljs-comment``, Prism's ``token comment``, Pygments' ``sr`` for a regex),
    not page chrome, and its text is the code (issue 14: a code block must come out whole)."""
    while node is not None:
        if node.tag in ("pre", "code"):
            return True
        node = node.parent
    return False


def _content_parts(nodes: list[LexborNode], total: int) -> bool:
    """True when the elements one boilerplate class name would remove hold more than half of
    the page's text together: a name on the parts of the content itself ("skip-item" on every
    section of a story, "hide-read-more-ad" on every teaser of a listing, a card's
    "item-card--header"), not chrome, which one element of a page holds — the limit each
    element already has (``_removable``), applied to the name."""
    if len(nodes) < 2:  # (each node once: ``prune`` lists them through ``unique``)
        return False
    return sum(_text_len(n) for n in _outermost(nodes)) > 0.5 * total


def _outermost(nodes: list[LexborNode]) -> list[LexborNode]:
    """The ``nodes`` inside none of the others: their text holds all of their descendants'."""
    ids = {n.mem_id for n in nodes}
    return [n for n in nodes if not _inside(n, ids)]


def _drop_comments(body: LexborNode, comments: list[LexborNode], share: float) -> None:
    outermost = _outermost(comments)
    comment_len = sum(_text_len(n) for n in outermost)
    if not comment_len:
        return
    rest = _text_len(body) - comment_len
    if rest >= COMMENT_MIN_REST and rest >= share * (rest + comment_len):
        for node in outermost:
            if node.tag not in ("html", "body", "main") and node.css_first("main, h1") is None:
                node.remove()


COMMENT_MIN_REST = 1000


def _inside(node: LexborNode, ids: set[int]) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.mem_id in ids:
            return True
        parent = parent.parent
    return False


_KEEPS = "main, article, [role=main]"


def _holders(body: LexborNode, keeps: str, known: set[int] | None = None) -> set[int]:
    """The ``mem_id`` of every element that is or contains a match of ``keeps`` under ``body``
    (each match and its ancestors): ``node.mem_id in _holders(body, keeps)`` is
    ``node.css_first(keeps) is not None`` for the tree as it is now. ``known``: holders of
    other selectors still valid for the tree, united with these (a copy; each set is closed
    under "parent of", so a walk up stops at the first node already in it)."""
    ids: set[int] = set(known) if known is not None else set()
    for node in native.css(body, keeps):
        while node is not None and (key := node.mem_id) not in ids:
            ids.add(key)
            node = node.parent
    return ids


def _chrome(body: LexborNode) -> list[LexborNode]:
    """``body.css(_CHROME)``, from a query of three selectors instead of twelve (lexbor matches
    every selector of a list against every node, so the list's length is the query's cost):
    ``nav, aside, [role]``, then the role's value checked here as the attribute selectors do
    (exact, case-sensitive). Lexbor lists a node once per selector of the list it matches, in
    document order with the repeats side by side (``<nav role=navigation>`` twice), so each
    node comes once per selector of ``_CHROME`` it matches, as there."""
    out: list[LexborNode] = []
    for node in _once(body.css("nav, aside, [role]")):
        count = (node.tag in ("nav", "aside")) + (node.attrs.get("role") in _CHROME_ROLE_SET)
        out.extend([node] * count)
    return out


def _removable(node: LexborNode, total: int, keeps: str = _KEEPS, holders: set[int] | None = None) -> bool:
    """Chrome by its tag or name, unless it wraps the page (broken markup, odd class names):
    never remove what holds the semantic content container (``keeps``) or most of the text.
    ``holders``: ``_holders(body, keeps)``, valid for the tree as it is."""
    if node.tag in ("html", "body", "main", "article") or node.parent is None:
        return False
    if (node.mem_id in holders) if holders is not None else (node.css_first(keeps) is not None):
        return False
    if keeps is _NAME_KEEPS:
        return _text_len(node) <= 0.5 * total
    # A tag says "chrome" more firmly: override it only for a wrapper holding most of the text
    # *and* the page heading (an unclosed <aside> swallowing the page).
    return _text_len(node) <= 0.5 * total or node.css_first("h1") is None


def _descend(node: LexborNode, share: float = 0.7, lengths: Lengths | None = None) -> LexborNode:
    """Walk down while a single child holds most of the text (the text-density fallback).
    ``lengths``: the caller's memo (the tree does not change here), which learns the lengths
    found on the way (``narrow`` and ``drop_link_blocks`` measure the node chosen again)."""
    lengths = lengths if lengths is not None else Lengths()
    length, steps = lengths.text(node), 0
    while length and steps < 200:  # bounded: adversarial nesting must not cost O(depth²)
        steps += 1
        best, best_len = None, 0
        for child, child_len in child_lengths(node, length, lengths.text):
            if child_len > best_len:
                best, best_len = child, child_len
        if best is None or best_len < share * length:
            return node
        node, length = best, best_len
        lengths.note(node, length)
    return node


def main_content(tree: LexborHTMLParser, tuning: Tuning = DEFAULT, url: str | None = None) -> LexborNode | None:
    """Prune ``tree`` and return the element holding the page's main content, with link-dense
    blocks (``core.convert.html_density``) removed, narrowed by the learned classifier's block
    scores and without the blocks it scores as boilerplate (``core.convert.blocks.model.select``).
    ``url`` is the page's, if known (a discussion thread keeps its replies: ``prune``)."""
    node = container(tree, tuning, url)
    if node is not None and tuning.block_model != "off":
        node = select(node, load(tuning.block_model), tuning.block_threshold)
    return node


def container(tree: LexborHTMLParser, tuning: Tuning = DEFAULT, url: str | None = None) -> LexborNode | None:
    """The rule-based part: prune, pick the container, narrow it, drop link-dense blocks.
    ``bench/train_blocks.py`` learns the block classifier on what this returns."""
    lengths = Lengths()  # measured after pruning; nothing changes the tree until drop_link_blocks
    node = _container(tree, tuning, lengths, url)
    if node is not None and node.tag not in ("html", "body"):
        node = narrow(node, tuning.narrow_share, lengths)
    if node is not None:
        drop_link_blocks(node, tuning.link_density, tuning.link_min_chars, tuning.link_page_max, lengths)
    return node


def _container(tree: LexborHTMLParser, tuning: Tuning, lengths: Lengths | None = None,
               url: str | None = None) -> LexborNode | None:
    body = tree.body or tree.root
    if body is None:
        return None
    prune(tree, body, tuning.comment_min_share, is_thread_url(url))
    measure = lengths.text if lengths is not None else _text_len
    total = measure(body)
    if not total:
        return body
    # each once: Lexbor lists a node once per selector it matches, and an
    # ``<article itemprop=articleBody>`` listed twice was "several articles" (its parent chosen)
    candidates = unique(body.css(_CONTAINERS))
    if candidates:
        sized = [(measure(n), n) for n in candidates]
        best_len, best = max(sized, key=lambda pair: pair[0])
        if best.tag == "article" or best.attributes.get("itemprop") == "articleBody":
            # Several articles side by side (a forum thread, a listing): take what holds them.
            articles = [(length, n) for length, n in sized if n.tag == "article" and length > 0.1 * best_len]
            if len(articles) > 1:
                if sum(length for length, _ in articles) < 0.5 * total:
                    # ... unless together they are less than half of the page: then they are a
                    # "more posts" grid beside a story that sits in no semantic element, and
                    # the density descent finds the page's text mass
                    return _descend(body, tuning.descend_share, lengths)
                best = _common_ancestor([n for _, n in articles]) or best
                best_len = measure(best)
        if best_len >= tuning.container_min_share * total:
            return best
    return _descend(body, tuning.descend_share, lengths)


def _common_ancestor(nodes: list[LexborNode]) -> LexborNode | None:
    chain, node = [], nodes[0].parent
    while node is not None:
        chain.append(node)
        node = node.parent
    for candidate in chain:
        if all(contains(candidate, n) for n in nodes[1:]):
            return candidate
    return None


# (last: the reference it is checked against calls the helpers above)
if native.named is not None:
    native.named_words(_BOILER | _COMMENT)  # (``_match`` gives a kind only for a part that is one)
if native.named is not None and native.agrees(
        lambda root: native.named(root, _match), lambda root: _named(root, _match),
        lambda found: [(node.mem_id, kind, token) for node, kind, token in found]):
    _named = native.named  # noqa: F811 — the same list, the attributes read in C (core/convert/native)
