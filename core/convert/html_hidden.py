"""Drop HTML that a reader never sees, before conversion to Markdown.

Hostile pages hide instructions for AI agents where people cannot see them: ``hidden`` and
``aria-hidden="true"`` elements, CSS that hides (inline ``style`` or rules of the page's own
``<style>`` sheets — core/convert/css_hidden.py says which CSS counts and why), ``<template>``,
HTML comments, and the code and style blocks (``<script>``, ``<style>``, ``<noscript>``).
Removing them here, as HTML → HTML, keeps this independent of whichever converter follows.
"""

from __future__ import annotations

import re

from selectolax.lexbor import LexborHTMLParser

from webshelf.core.convert.css_hidden import (overridden, parse_declarations, sheet_rules, showing_by_property,
                                              style_hides)

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


def _sheet_hidden(tree) -> list:  # noqa: ANN001 — selectolax tree
    """Elements hidden by rules of the page's own ``<style>`` sheets (before those are dropped)."""
    sheets = [node.text(deep=True) or "" for node in tree.css("style")]
    if not any(sheets):
        return []
    hiding, showing = sheet_rules(sheets)
    showers: dict | None = None
    hidden = []
    for rule in hiding:
        if not rule.declarations.hides():
            continue
        try:
            nodes = tree.css(rule.selector)
        except Exception:  # noqa: BLE001 — a selector lexbor cannot parse hides nothing we can find
            continue
        if nodes and showers is None:
            showers = showing_by_property(showing)
        for node in nodes:
            style = node.attributes.get("style")
            if not overridden(node, rule, showers or {}, parse_declarations(style) if style else None):
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


def drop_hidden(html: str) -> str:
    """The same document without hidden elements (their text and children go with them)."""
    if not _MAYBE_HIDDEN.search(html):
        return html
    tree = LexborHTMLParser(html)
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
    comments = [n for n in tree.root.traverse(include_text=True) if n.tag == "-comment"] if tree.root and "<!--" in html else []
    if not doomed and not comments:
        return html
    for node in comments:
        node.decompose()
    # In reverse document order, so a node is removed before its ancestor (removing an
    # ancestor first would free the descendant's memory under us); a node inside a removed
    # one goes with it.
    order = {n.mem_id: i for i, n in enumerate(tree.root.traverse())} if tree.root else {}
    for key in sorted(doomed, key=lambda k: order.get(k, -1), reverse=True):
        doomed[key].decompose()
    return tree.html or ""
