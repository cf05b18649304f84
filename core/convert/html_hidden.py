"""Drop HTML that a reader never sees, before conversion to Markdown.

Hostile pages hide instructions for AI agents where people cannot see them: ``hidden`` and
``aria-hidden="true"`` elements, CSS that hides (inline ``style`` or rules of the page's own
``<style>`` sheets — core/convert/css_hidden.py says which CSS counts and why), ``<template>``,
HTML comments, and the code and style blocks (``<script>``, ``<style>``, ``<noscript>``).
Removing them here, in the Lexbor tree, keeps this independent of whichever converter follows.
Not removed: the frame (``<html>``, ``<body>``, ``_frame``) and what core/convert/hidden_frame.py
shows is the frame too — a hidden element holding (nearly) all of a page that shows almost
nothing, i.e. the page's own content waiting for its scripts, never a block beside visible text.

``drop_hidden_in(tree)`` works in place on the tree that conversion goes on to use (one parse
per page: core/convert/html_markdown.py hands it its tree); ``drop_hidden(html) -> str`` is the
same as HTML → HTML for callers that hold a string (Markdown's inline HTML, documents).
The sheet work is memoised per process (core/convert/css_hidden.py ``page_sheets``): a site's
pages share their sheets.

Cost (issue 14's speed goal, bench/hidden_cost.py): a sheet rule reaches lexbor only if the
classes and ids its rightmost compound needs exist in the page (``_PageKeys``), each selector is
queried once per page, and the cascade (``css_hidden.overridden``) asks a showing rule about a
hidden element only if the element itself carries the rule's keys, answering from the
selector's matched set — never ``node.css_matches``, which is true for a match anywhere in the
node's subtree. A selector's compounds left of the rightmost one must find their classes and ids
in the page too (``_page_keys_needed``: ``.menu a`` on a page without ``menu``). Comments come from
one walk over the elements, only for a text with ``<!--``; only the outermost doomed nodes are
removed (what is inside goes with them), so no document order is needed. Every such shortcut
only skips work whose result is known (tests/core/test_hidden_prefilters.py). The showing rules'
per-node index depends on the sheets alone and is memoised with them (``_showers_index``); the
keys a selector needs depend on its text alone and are memoised per process (``_selector_keys``,
``_index_key``: sites share framework selectors — WCXB dev served in one process, hidden removal
−15% CPU), and the page's class and id sets are built only when a rule first needs them.
"""

from __future__ import annotations

import re
from functools import cached_property, lru_cache

from selectolax.lexbor import LexborHTMLParser

from webshelf.core.convert import css_hidden, hidden_frame, native
from webshelf.core.convert.css_hidden import overridden, page_sheets, parse_declarations, style_hides
from webshelf.core.convert.html_density import text_len

ALWAYS_DROPPED = "script, style, noscript, template, [hidden], [aria-hidden]"
# Cheap pre-check: skip the parse when none of the markers can be present (a ``style``
# attribute or sheet is enough: CSS escapes make any spelling possible).
_MAYBE_HIDDEN = re.compile(r"<(?:script|style|noscript|template)\b|<!--|\bhidden\b|\bstyle\s*=", re.IGNORECASE)


def invisible_style(style: str) -> bool:
    """True for an inline style that hides the element (core/convert/css_hidden.py: the rules)."""
    return style_hides(style)


def _hides(node) -> bool:  # noqa: ANN001 — selectolax node
    if node.tag in ("script", "style", "noscript", "template"):
        return True  # (before the attribute dict: most of these nodes are scripts)
    attrs = node.attributes
    if "hidden" in attrs and (attrs.get("hidden") or "").strip().lower() != "until-found":
        return True  # hidden="until-found" is collapsed but findable content, not a hiding place
    if (attrs.get("aria-hidden") or "").strip().lower() == "true":
        return True
    return False


_WS = "[ \t\n\r\f]"  # CSS and HTML whitespace (ASCII only: U+00A0 is part of a class name)
_COMBINATOR = re.compile(f"{_WS}*[>+~]{_WS}*|{_WS}+")
_KEYS = re.compile(r"([.#])([^.#: \t\n\r\f]+)")
_CLASS_SPLIT = re.compile(f"{_WS}+")
_BRACKETS = re.compile(r"\[[^\]]*\]")
_PARENS = re.compile(r"\([^()]*\)")


class _PageKeys:
    """The classes and ids present in a page's tree, to skip selectors that cannot match.

    Like a browser's rule hash: a selector whose rightmost compound needs a class or id that no
    element has matches nothing, and most rules of a framework sheet are such on a given page
    (a lexbor query per rule cost more than the rest of the sheet work). Compared lower-cased
    (quirks-mode pages match classes without case); a compound with escapes or quotes is never
    skipped, and what stands inside parentheses or brackets is never taken as needed (``:not(.a)``).

    ``matches(selector)`` is the rule's matching elements (one lexbor query), memoised for the
    page: hiding rules and showing rules share selectors, and the cascade asks for a shower's
    elements only when it meets a hidden element that has the shower's keys. (Testing the few
    elements that carry a key one by one instead of querying the tree measured 4% faster on
    WCXB dev, not worth the index it needs.)"""

    def __init__(self, tree) -> None:  # noqa: ANN001
        self._tree = tree
        self._found: dict[str, list] = {}

    @cached_property
    def classes(self) -> set[str]:
        """Built on first need (a page whose hiding rules name no class never queries ``[class]``)."""
        return _page_names(self._tree, "class")

    @cached_property
    def ids(self) -> set[str]:
        """Built on first need: the hiding rules of half the pages with sheets name no id that the
        class test has not already ruled out."""
        return _page_names(self._tree, "id")

    def may_match(self, selector: str) -> bool:
        keys = _selector_keys(selector)[1]
        return keys is None or all(name in (self.classes if kind == "." else self.ids) for kind, name in keys)

    def matches(self, selector: str) -> list:
        """The elements ``selector`` matches (``tree.css`` order), memoised for this page; [] for a
        selector lexbor cannot parse (it hides nothing we can find)."""
        found = self._found.get(selector)
        if found is None:
            found = self._found[selector] = self._match(selector)
        return found

    def _match(self, selector: str) -> list:
        if not self.may_match(selector):
            return []
        try:
            return self._tree.css(selector)
        except Exception:  # noqa: BLE001 — a selector lexbor cannot parse hides nothing we can find
            return []

    def _required(self, selector: str) -> tuple | None:
        """The (``.`` or ``#``, lower-cased name) keys the rightmost compound needs; None when
        only lexbor can judge (escapes, quotes, unbalanced brackets, ``:scope``)."""
        return _selector_keys(selector)[0]


def _page_names(tree, attr: str) -> set[str]:  # noqa: ANN001 — selectolax tree
    """The lower-cased class names (``attr`` "class") or ids ("id") of the tree's elements: one
    join, one lower and one split in C, instead of a split per element. (Ids hold no NUL: the
    parser made it U+FFFD.)"""
    if attr == "class":
        return _class_names(_class_text(tree).lower())
    values = filter(None, _values(tree.css(f"[{attr}]"), attr))
    return set("\0".join(values).lower().split("\0"))


def _class_text(tree) -> str:  # noqa: ANN001 — selectolax tree
    """The tree's non-empty class lists, joined by spaces."""
    return " ".join(filter(None, _values(tree.css("[class]"), "class")))


_NOT_HTML_SPACE = "\x0b\x1c\x1d\x1e\x1f"  # what ``str.split()`` also splits ASCII text at


def _class_names(text: str) -> set[str]:
    """The class names in ``text`` (class lists joined by spaces), split at HTML whitespace:
    ``str.split()`` — several times faster than the regex — where it splits at exactly those
    characters (ASCII text without vertical tab or the separators U+001C–U+001F). Those five are
    looked for by ``in``, one fast C pass each: a regex character class has no literal to skip
    to and stepped through the text (140 µs of a median page's 17 kB of class names)."""
    if text.isascii() and not any(ch in text for ch in _NOT_HTML_SPACE):
        return set(text.split())
    return set(_CLASS_SPLIT.split(text))


def _values(nodes: list, name: str) -> list:
    """``node.attrs.get(name)`` of every node (lexbor matched ``[name]`` on each), by ``attrs[name]``
    in one list comprehension: ``get``'s generator and its ``try`` per element were most of the
    page keys' cost. Should lexbor's ``[name]`` ever match an attribute that the lookup by name
    does not find, ``get`` gives its answer (None) as before."""
    try:
        return [n.attrs[name] for n in nodes]
    except KeyError:
        return [n.attrs.get(name) for n in nodes]


# 1,024 selectors: on WCXB dev served in one process they keep 84% of key lookups as hits
# (unbounded: 89%, but its 26,773 entries held +21 MB of peak RSS; 1,024 are within the noise
# of none, about 1 MB: issue 14's memory goal)
_SELECTOR_MEMO = 1024


@lru_cache(maxsize=_SELECTOR_MEMO)
def _selector_keys(selector: str) -> tuple:
    """(``_required_keys``, ``_page_keys_needed``) of ``selector``, memoised per process and
    bounded (``_SELECTOR_MEMO``): a pure function of the text, and sites share their frameworks' selectors (``.sr-only``,
    ``.screen-reader-text``), so a served page finds most of its rules' keys already derived —
    deriving them was a fifth of the sheet work after the scan. Forgotten by
    ``css_hidden.clear_memo`` (a cold benchmark derives them again)."""
    own = _required_keys(selector)
    return own, _page_keys_needed(selector, own)


def _required_keys(selector: str) -> tuple | None:
    compound = _COMBINATOR.split(selector.strip())[-1]
    if any(ch in compound for ch in "\\\"'") or compound.count("(") != compound.count(")") \
            or compound.count("[") != compound.count("]") or ":scope" in selector.lower():
        return None  # escapes, quotes, or a combinator inside parentheses split the compound: lexbor judges
    compound = _BRACKETS.sub("", compound)  # attribute tests: their values are no keys
    while "(" in compound:  # :not(.a), :nth-child(…): what is inside is not required
        stripped = _PARENS.sub("", compound)
        if stripped == compound:
            return None  # unbalanced: let lexbor judge
        compound = stripped
    return tuple((kind, name.lower()) for kind, name in _KEYS.findall(compound))


# A compound whose every part is plain: an optional type or ``*``, then classes, ids and
# pseudo-classes without arguments (``:first-child``). Only such compounds left of the rightmost
# one are read for keys (``_page_keys_needed``); any other spelling needs nothing.
_PLAIN_COMPOUND = re.compile(r"(?:[a-zA-Z][a-zA-Z0-9-]*|\*)?(?:[.#][-_a-zA-Z0-9\u0080-\U0010ffff]+|:[a-zA-Z-]+)*")


def _page_keys_needed(selector: str, own: tuple | None) -> tuple | None:
    """The keys some element of the page must carry for ``selector`` to match anything: the
    rightmost compound's (``_required_keys``) and those of the compounds left of it — ``.menu a``
    matches nothing on a page without a ``menu`` class, whatever its ``a`` elements (every
    compound of a complex selector is matched by an element of the tree: an ancestor or a
    sibling). Read only from plain compounds of a selector without escapes, quotes, parentheses,
    namespaces or nesting (``_PLAIN_COMPOUND``); None as for ``_required_keys`` (lexbor judges).
    ``own`` is ``_required_keys(selector)`` (``_selector_keys`` derives both once per process)."""
    if own is None or any(ch in selector for ch in "\\\"'()|&"):
        return own
    stripped = _BRACKETS.sub("", selector.strip())  # attribute tests (``[href~=x]``): no keys, no combinators
    if "[" in stripped or "]" in stripped:
        return own
    extra = []
    for compound in _COMBINATOR.split(stripped)[:-1]:
        if _PLAIN_COMPOUND.fullmatch(compound):
            extra.extend((kind, name.lower()) for kind, name in _KEYS.findall(compound))
    return own + tuple(extra) if extra else own


def _matching(tree, rules, keys: _PageKeys) -> list:  # noqa: ANN001 — selectolax tree, SheetRule sequence
    """``[(rule, nodes)]`` for the rules that hide and whose selector matches something in
    ``tree``, in rule order. The verdict comes before the query: a rule's declarations are parsed
    once per site (memoised on the rule and by text), a query costs a walk of the tree on every
    page, and half the rules that reach it hide nothing (CSS resets' ``font-size:100%`` on every
    tag) — WCXB dev, hidden removal: −4% CPU in all, the same elements."""
    out = []
    for rule in rules:
        if not keys.may_match(rule.selector) or not rule.declarations.hides():
            continue
        nodes = keys.matches(rule.selector)
        if nodes:
            out.append((rule, nodes))
    return out


class _PageShowers:
    """The sheets' showing rules (``css_hidden.Showers``) narrowed to those that match anything in
    this page's tree — a rule that matches nothing cannot show an element again — with the
    elements each matches, so the cascade asks a set instead of lexbor (``matches``)."""

    def __init__(self, tree, showers, keys: _PageKeys) -> None:  # noqa: ANN001
        self._tree, self._showers, self._keys, self._by_prop = tree, showers, keys, {}
        self._matched: dict[str, set[int]] = {}
        self._nodes: dict[int, tuple] = {}
        self._index: dict[str, tuple[dict, list]] = {}

    def candidates(self, prop: str) -> list:
        """The showing rules for ``prop`` that may match in this page (by keys alone: no query)."""
        found = self._by_prop.get(prop)
        if found is None:
            found = self._by_prop[prop] = [r for r in self._showers.candidates(prop) if self._keys.may_match(r.selector)]
        return found

    def for_node(self, prop: str, node) -> list:  # noqa: ANN001 — selectolax node
        """The showing rules for ``prop`` that may match ``node`` itself, by its own classes and
        id: a rule whose rightmost compound needs a key (one it names is indexed,
        ``_index_key``) is taken only if the node has that key; a rule needing none is always
        taken. A superset of what can match: ``overridden`` asks ``matches`` of each, and the
        answer (any of them shows the node) depends on neither the order nor the extra rules —
        so the page's rules are not narrowed by ``may_match`` first (``candidates``: a key test
        for every showing rule of a framework sheet); ``matches`` asks it of the few taken."""
        index = self._index.get(prop)
        if index is None:
            index = self._index[prop] = _showers_index(self._showers, prop)
        keyed, free = index
        if not keyed:
            return free
        classes, ids = self._own(node)
        out = list(free)
        for name in classes:
            out.extend(keyed.get((".", name), ()))
        for name in ids:
            out.extend(keyed.get(("#", name), ()))
        return out

    def matches(self, node, rule) -> bool:  # noqa: ANN001 — selectolax node, SheetRule
        """Does ``rule`` (one of ``candidates``) match ``node`` itself? A rule whose rightmost
        compound needs a class or id the node lacks cannot (no query); otherwise the answer is
        membership in the elements lexbor matched for the selector, found once per page — only
        for the rules that meet a hidden element."""
        keys = self._keys._required(rule.selector)
        if keys:
            own = self._own(node)
            if any(name not in own[kind == "#"] for kind, name in keys):
                return False
        ids = self._matched.get(rule.selector)
        if ids is None:
            ids = self._matched[rule.selector] = {n.mem_id for n in self._keys.matches(rule.selector)}
        return node.mem_id in ids

    def _own(self, node) -> tuple:  # noqa: ANN001
        """(lower-cased classes, lower-cased id) of ``node``, memoised by its address."""
        found = self._nodes.get(node.mem_id)
        if found is None:
            attrs = node.attrs
            found = self._nodes[node.mem_id] = (set(_CLASS_SPLIT.split((attrs.get("class") or "").lower())),
                                                {(attrs.get("id") or "").lower()})
        return found


_NAME_TO_END = re.compile(r"[-_a-zA-Z0-9\u0080-\U0010ffff]+")


def _showers_index(showers, prop: str) -> tuple[dict, list]:  # noqa: ANN001 — css_hidden.Showers
    """``({key: [rules]}, [rules without a key])`` of the showing rules for ``prop`` (``_index_key``).
    It depends on the sheets alone, so it is kept on ``showers`` (``Showers.node_index``), which
    ``css_hidden.page_sheets`` memoises with the site's sheets: later pages of a site reuse it."""
    index = showers.node_index.get(prop)
    if index is None:
        index = showers.node_index[prop] = ({}, [])
        keyed, free = index
        for rule in showers.candidates(prop):
            key = _index_key(rule.selector)
            if key is not None:
                keyed.setdefault(key, []).append(rule)
            else:
                free.append(rule)
    return index


_NOT_INDEXED = re.compile(r"[\\()\[\]|&]")


@lru_cache(maxsize=_SELECTOR_MEMO)
def _index_key(selector: str) -> tuple | None:
    """A key the rightmost compound of ``selector`` needs, or None: the ``.``/``#`` name the
    selector ends with, when nothing can make it other than a class or id test of that compound
    (no escape, parenthesis — an unclosed ``:not(.x`` is closed at the end —, bracket, namespace
    or nesting); else the first of ``_required_keys``."""
    if _NOT_INDEXED.search(selector) is None:
        at = max(selector.rfind("."), selector.rfind("#"))
        if at >= 0 and _NAME_TO_END.fullmatch(selector, at + 1):
            return selector[at], selector[at + 1:].lower()
    required = _selector_keys(selector)[0]
    return required[0] if required else None


css_hidden.on_clear(_selector_keys.cache_clear)
css_hidden.on_clear(_index_key.cache_clear)


def _sheet_hidden(tree) -> list:  # noqa: ANN001 — selectolax tree
    """Elements hidden by rules of the page's own ``<style>`` sheets (before those are dropped)."""
    sheets = [node.text(deep=True) or "" for node in tree.css("style")]
    if not any(sheets):
        return []
    rules = page_sheets(sheets)
    keys = _PageKeys(tree) if rules.hiding else None
    showers = _PageShowers(tree, rules.showers, keys)
    hidden = []
    for rule, nodes in _matching(tree, rules.hiding, keys):
        for node in nodes:
            style = node.attributes.get("style")
            if not overridden(node, rule, showers, parse_declarations(style) if style else None):
                hidden.append(node)
    return hidden


def _frame(tree) -> list:  # noqa: ANN001 — selectolax tree
    """``<html>`` and ``<body>``: never dropped, whatever hides them.

    Pages hide the whole document until their scripts have run (``html {opacity: 0}``, anti-flicker
    snippets, ``<body style="display:none">``); a reader sees it all a moment later. Hiding the frame
    hides nothing selectively, so it is no hiding place, and dropping it would empty the page (and
    lexbor refuses to remove the root). The same argument, for the element inside the body that
    holds the page (``<main style="opacity:0">``), is core/convert/hidden_frame.py's.
    """
    return [node for node in (tree.root, tree.body) if node is not None]


#: ``<noscript>`` holding more than this share of the body's text is the page's content …
NOSCRIPT_CONTENT_SHARE = 0.5
#: … if it holds at least this many characters: an app shell's "You need to enable JavaScript to
#: run this app" is the majority of an empty page's text, and must leave it empty (near-empty pages
#: go to the next backend of web.fallback; see core/backends/fallback.py)
NOSCRIPT_CONTENT_MIN_CHARS = 500


def unwrap_noscript_content(tree) -> bool:  # noqa: ANN001 — selectolax tree
    """Unwrap every ``<noscript>`` when together they hold most of the body's text (and more than a
    note's worth); True if so.

    Forums (Discourse, Flarum) render the thread for readers without scripts inside ``<noscript>``
    and leave the rest of the body an empty shell for their app: that text is what a reader who
    fetched the page without running it (the local backend) sees, so dropping it would empty the
    page. Elsewhere ``<noscript>`` holds "enable JavaScript" notes and tracking pixels, and is
    dropped. Unwrapped, its elements go through every other hiding rule like the rest of the page.
    """
    noscripts = native.css(tree, "noscript")
    if not noscripts or tree.body is None:
        return False
    length = text_len  # len(node.text(deep=True, separator=" ", strip=True))
    inside = sum(map(length, noscripts))
    if inside < NOSCRIPT_CONTENT_MIN_CHARS:
        return False  # most pages stop here, before the walk over the whole body's text
    # the body's readable text: scripts' and sheets' text is no content (app state as JSON can be
    # most of a forum page's characters: WCXB 0557)
    readable = length(tree.body) - sum(map(length, tree.body.css("script, style, template")))
    if inside <= NOSCRIPT_CONTENT_SHARE * readable:
        return False
    for node in noscripts:
        node.unwrap()
    return True


def may_hide(html: str) -> bool:
    """False when no hiding marker can be in ``html`` (then there is nothing to drop)."""
    # Markers nearly every page has, by plain substring search first (C speed; the regex's
    # case-blind alternation steps through the text). A True without a true marker only costs the
    # walk: ``drop_hidden_in`` finds nothing to drop on such a page and leaves it as it was.
    # "hidden" and "style=" likewise (a True for "unhidden" or "xstyle=" only costs the walk): on
    # pages without scripts or sheets the case-blind regex was the largest cost of a median page.
    return "<script" in html or "<style" in html or "<!--" in html or "hidden" in html or "style=" in html \
        or bool(_MAYBE_HIDDEN.search(html))


def drop_hidden_in(tree, html: str | None = None) -> bool:  # noqa: ANN001 — selectolax LexborHTMLParser
    """Remove hidden elements (their text and children go with them) and comments from ``tree``
    in place. ``html`` is the text it was parsed from, if the caller has it: a page without any
    marker is left alone without a walk. True if anything was removed."""
    if html is not None and not may_hide(html):
        return False
    unwrap_noscript_content(tree)
    # Keyed by ``mem_id`` (the lexbor node's address): selectolax hands out a new wrapper object
    # for every lookup, so ``id()`` would neither dedupe a node found twice nor order nodes.
    doomed = {n.mem_id: n for n in _sheet_hidden(tree)}
    for node in tree.css(ALWAYS_DROPPED):
        if _hides(node):
            doomed[node.mem_id] = node
    styled = tree.css("[style]")
    verdicts: dict[str | None, bool] = {}  # pages repeat their inline styles: one verdict each
    for node, style in zip(styled, _values(styled, "style")):
        hides = verdicts.get(style)
        if hides is None:
            hides = verdicts[style] = invisible_style(style or "")
        if hides:
            doomed[node.mem_id] = node
    for node in _frame(tree):
        doomed.pop(node.mem_id, None)
    # the page's own content waiting for its scripts is no hiding place (core/convert/hidden_frame.py)
    tops = hidden_frame.outermost(doomed)  # (the doomed nodes not inside another one)
    spared = hidden_frame.spared(tree, doomed, tops)
    for key in spared:
        del doomed[key]
    if spared:  # what was inside a spared node may be outermost now
        tops = hidden_frame.outermost(doomed)
    # Comments come from one walk over the elements (a traversal without text nodes still yields
    # them), only when the text has "<!--" (as before: a text without one has no comment to remove).
    comments = []
    if tree.root is not None and (html is None or "<!--" in html):
        comments = _comments(tree.root)
    if not doomed and not comments:
        return False
    for node in comments:
        node.decompose()
    # Only the outermost doomed nodes are removed: a node inside a removed one goes with it (removing
    # it as well, after its ancestor, would free its memory under us). The same tree as removing
    # every doomed node in reverse document order — without a walk to find that order.
    for key in tops:
        doomed[key].decompose()
    # Text on both sides of a removed node becomes one text node, as a re-parse of the
    # serialised page gave it before (main-content selection counts and compares text nodes).
    tree.merge_text_nodes()
    return True


def drop_hidden(html: str) -> str:
    """The same document without hidden elements (their text and children go with them)."""
    if not may_hide(html):
        return html
    tree = LexborHTMLParser(html)
    if not drop_hidden_in(tree, html):
        return html
    return tree.html or ""


drop_hidden_in.as_text = drop_hidden  # the string form, for html_to_markdown's whole-page fallback


def _comments(root) -> list:  # noqa: ANN001 — selectolax node
    """The comment nodes under ``root`` in document order (a traversal without text nodes still
    yields them; ``is_comment_node`` is cheaper than building ``n.tag``)."""
    return [n for n in root.traverse() if n.is_comment_node]


if native.comments is not None and native.agrees(native.comments, _comments,
                                                  lambda found: [n.mem_id for n in found]):
    _comments = native.comments  # noqa: F811 — the same list, without a wrapper per element
if native.class_text is not None and native.agrees(native.class_text, lambda root: " ".join(filter(None, _values(
        root.css("[class]"), "class"))), lambda text: text):
    def _class_text(tree) -> str:  # noqa: ANN001, F811 — the same text, the values read in C
        return native.class_text(tree.root) if tree.root is not None else ""
