"""Drop what a Markdown renderer never shows, from Markdown that is passed through.

A ``text/markdown`` page goes to the agent as it came, but Markdown carries text no reader
sees: HTML comments (``<!-- … -->``), the link-definition comment idiom (``[//]: # (…)``,
``[comment]: <> (…)``), and raw HTML elements that hide themselves (``hidden``,
``aria-hidden="true"``, a hiding ``style`` — judged by core/convert/css_hidden.py — plus
``<script>``, ``<style>``, ``<template>``, ``<noscript>``). These are the hiding places prompt
injection uses, so they go, like hidden HTML does before conversion. Fenced code (```` ``` ````
and ``~~~``) is left alone: an HTML comment in a code sample is content the reader sees.
"""

from __future__ import annotations

import re

from webshelf.core.convert.css_hidden import style_hides

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_DEFINITION_COMMENT = re.compile(r"^ {0,3}\[[^\]\n]*\]:[ \t]*(?:#|<>)(?:[ \t]+.*)?$", re.MULTILINE)
_OPEN_TAG = re.compile(r"<([a-zA-Z][a-zA-Z0-9-]*)\b((?:[^>\"']|\"[^\"]*\"|'[^']*')*)>")
_ATTR = re.compile(r"""([a-zA-Z_:][-a-zA-Z0-9_:.]*)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s"'=<>`]+))?""")
ALWAYS = {"script", "style", "template", "noscript"}
VOID = {"br", "img", "hr", "input", "meta", "link", "source", "wbr", "area", "col", "embed", "track", "param"}


def _hides(tag: str, attrs: str) -> bool:
    if tag in ALWAYS:
        return True
    for name, value in _ATTR.findall(attrs):
        name, value = name.lower(), value.strip("\"'")
        if name == "hidden" and value.strip().lower() != "until-found":
            return True
        if name == "aria-hidden" and value.strip().lower() == "true":
            return True
        if name == "style" and style_hides(value):
            return True
    return False


def _drop_elements(text: str) -> str:
    out: list[str] = []
    pos = 0
    while (m := _OPEN_TAG.search(text, pos)) is not None:
        tag = m.group(1).lower()
        if not _hides(tag, m.group(2)):
            out.append(text[pos:m.end()])
            pos = m.end()
            continue
        out.append(text[pos:m.start()])
        if tag in VOID or m.group(2).rstrip().endswith("/"):
            pos = m.end()
            continue
        depth, scan = 1, m.end()
        tags = re.compile(rf"<(/?){re.escape(tag)}\b[^>]*>", re.IGNORECASE)
        while depth and (t := tags.search(text, scan)) is not None:
            depth += -1 if t.group(1) else 1
            scan = t.end()
        if depth:  # never closed: the element runs to the end of its block (the next blank line)
            blank = text.find("\n\n", m.end())
            scan = len(text) if blank < 0 else blank
        pos = scan
    out.append(text[pos:])
    return "".join(out)


def _clean_prose(text: str) -> str:
    if "<" in text:
        text = _COMMENT.sub("", text)
        text = _drop_elements(text)
    if "]:" in text:
        text = _DEFINITION_COMMENT.sub("", text)
    return text


def drop_hidden_markdown(markdown: str) -> str:
    """The Markdown without comments and hidden HTML, code blocks untouched."""
    if "<" not in markdown and "]:" not in markdown:
        return markdown
    pieces: list[str] = []
    prose: list[str] = []
    fence: str | None = None
    for line in markdown.splitlines(keepends=True):
        m = _FENCE.match(line)
        if fence is None and m:
            pieces.append(_clean_prose("".join(prose)))
            prose = []
            fence = m.group(1)
            pieces.append(line)
        elif fence is not None:
            pieces.append(line)
            if line.strip().startswith(fence[0] * len(fence)) and not line.strip().strip(fence[0]):
                fence = None
        else:
            prose.append(line)
    pieces.append(_clean_prose("".join(prose)))
    return "".join(pieces)
