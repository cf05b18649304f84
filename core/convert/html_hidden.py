"""Drop HTML that a reader never sees, before conversion to Markdown.

Hostile pages hide instructions for AI agents where people cannot see them: ``hidden`` and
``aria-hidden="true"`` elements, inline ``display:none`` / ``visibility:hidden`` / ``opacity:0``,
``<template>``, and the code and style blocks (``<script>``, ``<style>``, ``<noscript>``).
Removing them here, as HTML → HTML, keeps this independent of whichever converter follows.
"""

from __future__ import annotations

import re

from selectolax.lexbor import LexborHTMLParser

ALWAYS_DROPPED = "script, style, noscript, template, [hidden], [aria-hidden]"
_INVISIBLE_STYLE = re.compile(
    r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*(?:hidden|collapse)|opacity\s*:\s*0*(?:\.0+)?)\s*(?:!important\s*)?(?:;|$)",
    re.IGNORECASE,
)
# Cheap pre-check: skip the parse when none of the markers can be present.
_MAYBE_HIDDEN = re.compile(r"<(?:script|style|noscript|template)\b|\bhidden\b|\bdisplay\s*:\s*none|opacity\s*:\s*0", re.IGNORECASE)


def invisible_style(style: str) -> bool:
    """True for an inline style that hides the element (display:none, visibility:hidden, opacity:0)."""
    return bool(_INVISIBLE_STYLE.search(style))


def _hides(node) -> bool:  # noqa: ANN001 — selectolax node
    attrs = node.attributes
    if node.tag in ("script", "style", "noscript", "template"):
        return True
    if "hidden" in attrs and (attrs.get("hidden") or "").strip().lower() != "until-found":
        return True  # hidden="until-found" is collapsed but findable content, not a hiding place
    if (attrs.get("aria-hidden") or "").strip().lower() == "true":
        return True
    return False


def drop_hidden(html: str) -> str:
    """The same document without hidden elements (their text and children go with them)."""
    if not _MAYBE_HIDDEN.search(html):
        return html
    tree = LexborHTMLParser(html)
    changed = False
    # Two passes, each in reverse document order, so a node is removed before its ancestor
    # (removing an ancestor first would free the descendant's memory under us).
    for selector, hides in ((ALWAYS_DROPPED, _hides), ("[style]", lambda n: invisible_style(n.attributes.get("style") or ""))):
        for node in reversed([n for n in tree.css(selector) if hides(n)]):
            node.decompose()
            changed = True
    return (tree.html or "") if changed else html
