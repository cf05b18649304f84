"""Drop HTML that a reader never sees, before conversion to Markdown.

Hostile pages hide instructions for AI agents where people cannot see them: ``hidden`` and
``aria-hidden="true"`` elements, CSS that hides (inline ``style`` or rules of the page's own
``<style>`` sheets — core/convert/css_hidden.py says which CSS counts and why), ``<template>``,
HTML comments, and the code and style blocks (``<script>``, ``<style>``, ``<noscript>``).
Removing them here, in the Lexbor tree, keeps this independent of whichever converter follows.

``drop_hidden_in(tree)`` works in place on the tree that conversion goes on to use (one parse
per page: core/convert/html_markdown.py hands it its tree); ``drop_hidden(html) -> str`` is the
same as HTML → HTML for callers that hold a string (Markdown's inline HTML, documents).
The sheet work is memoised per process (core/convert/css_hidden.py ``page_sheets``): a site's
pages share their sheets.
"""

from __future__ import annotations

import re

from selectolax.lexbor import LexborHTMLParser

from webshelf.core.convert.css_hidden import overridden, page_sheets, parse_declarations, style_hides

ALWAYS_DROPPED = "script, style, noscript, template, [hidden], [aria-hidden]"
# Cheap pre-check: skip the parse when none of the markers can be present (a ``style``
# attribute or sheet is enough: CSS escapes make any spelling possible).
_MAYBE_HIDDEN = re.compile(r"<(?:script|style|noscript|template)\b|<!--|\bhidden\b|\bstyle\s*=", re.IGNORECASE)


def invisible_style(style: str) -> bool:
    """True for an inline style that hides the element (core/convert/css_hidden.py: the rules)."""
    return style_hides(style)


def _hides(node) -> bool:  # noqa: ANN001 — selectolax node
    attrs = node.attributes
    if node.tag in ("script", "style", "noscript", "template"):
        return True
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
    skipped, and what stands inside parentheses or brackets is never taken as needed (``:not(.a)``)."""

    def __init__(self, tree) -> None:  # noqa: ANN001
        self.classes = {c.lower() for n in tree.css("[class]") for c in _CLASS_SPLIT.split(n.attributes.get("class") or "")}
        self.ids = {(n.attributes.get("id") or "").lower() for n in tree.css("[id]")}
        self._memo: dict[str, bool] = {}

    def may_match(self, selector: str) -> bool:
        found = self._memo.get(selector)
        if found is None:
            found = self._memo[selector] = self._may_match(selector)
        return found

    def _may_match(self, selector: str) -> bool:
        compound = _COMBINATOR.split(selector.strip())[-1]
        if any(ch in compound for ch in "\\\"'") or compound.count("(") != compound.count(")") \
                or compound.count("[") != compound.count("]"):
            return True  # escapes, quotes, or a combinator inside parentheses split the compound: lexbor judges
        compound = _BRACKETS.sub("", compound)  # attribute tests: their values are no keys
        while "(" in compound:  # :not(.a), :nth-child(…): what is inside is not required
            stripped = _PARENS.sub("", compound)
            if stripped == compound:
                return True  # unbalanced: let lexbor judge
            compound = stripped
        for kind, name in _KEYS.findall(compound):
            if name.lower() not in (self.classes if kind == "." else self.ids):
                return False
        return True


def _matching(tree, rules, keys: _PageKeys) -> list:  # noqa: ANN001 — selectolax tree, SheetRule sequence
    """``[(rule, nodes)]`` for the rules whose selector matches something in ``tree``, in rule order."""
    out = []
    for rule in rules:
        if not keys.may_match(rule.selector):
            continue
        try:
            nodes = tree.css(rule.selector)
        except Exception:  # noqa: BLE001 — a selector lexbor cannot parse hides nothing we can find
            continue
        if nodes:
            out.append((rule, nodes))
    return out


class _PageShowers:
    """The sheets' showing rules (``css_hidden.Showers``) narrowed to those that match anything in
    this page's tree — a rule that matches nothing cannot show an element again."""

    def __init__(self, tree, showers, keys: _PageKeys) -> None:  # noqa: ANN001
        self._tree, self._showers, self._keys, self._by_prop = tree, showers, keys, {}

    def candidates(self, prop: str) -> list:
        found = self._by_prop.get(prop)
        if found is None:
            found = self._by_prop[prop] = [r for r, _ in _matching(self._tree, self._showers.candidates(prop), self._keys)]
        return found


def _sheet_hidden(tree) -> list:  # noqa: ANN001 — selectolax tree
    """Elements hidden by rules of the page's own ``<style>`` sheets (before those are dropped)."""
    sheets = [node.text(deep=True) or "" for node in tree.css("style")]
    if not any(sheets):
        return []
    rules = page_sheets(sheets)
    keys = _PageKeys(tree) if rules.hiding else None
    showers = _PageShowers(tree, rules.showers, keys)
    hidden = []
    # matched first: lexbor's query is cheaper than tokenizing a block that matches nothing
    for rule, nodes in _matching(tree, rules.hiding, keys):
        if not rule.declarations.hides():
            continue
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
    lexbor refuses to remove the root).
    """
    return [node for node in (tree.root, tree.body) if node is not None]


def may_hide(html: str) -> bool:
    """False when no hiding marker can be in ``html`` (then there is nothing to drop)."""
    return bool(_MAYBE_HIDDEN.search(html))


def drop_hidden_in(tree, html: str | None = None) -> bool:  # noqa: ANN001 — selectolax LexborHTMLParser
    """Remove hidden elements (their text and children go with them) and comments from ``tree``
    in place. ``html`` is the text it was parsed from, if the caller has it: a page without any
    marker is left alone without a walk. True if anything was removed."""
    if html is not None and not may_hide(html):
        return False
    # Keyed by ``mem_id`` (the lexbor node's address): selectolax hands out a new wrapper object
    # for every lookup, so ``id()`` would neither dedupe a node found twice nor order nodes.
    doomed = {n.mem_id: n for n in _sheet_hidden(tree)}
    for node in tree.css(ALWAYS_DROPPED):
        if _hides(node):
            doomed[node.mem_id] = node
    for node in tree.css("[style]"):
        if invisible_style(node.attributes.get("style") or ""):
            doomed[node.mem_id] = node
    for node in _frame(tree):
        doomed.pop(node.mem_id, None)
    comments = ([n for n in tree.root.traverse(include_text=True) if n.tag == "-comment"]
                if tree.root and (html is None or "<!--" in html) else [])
    if not doomed and not comments:
        return False
    for node in comments:
        node.decompose()
    # In reverse document order, so a node is removed before its ancestor (removing an
    # ancestor first would free the descendant's memory under us); a node inside a removed
    # one goes with it.
    order = {n.mem_id: i for i, n in enumerate(tree.root.traverse())} if tree.root else {}
    for key in sorted(doomed, key=lambda k: order.get(k, -1), reverse=True):
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
