"""Code blocks: every ``<pre>`` becomes one clean ``<pre><code class="language-…">`` before
conversion, so the Markdown has exactly one valid fenced block per ``<pre>``.

Why: highlighters wrap code in structure that a converter renders as Markdown — a table with a
line-number gutter column (Hugo/Chroma, Pygments ``linenos="table"``, GitHub gists) became a
pipe table or list with fences inside it (``- ```` lines: broken fences); ``<span
class="lineno">`` gutters put numbers into the code; per-line ``<div>``s lost their line breaks;
a ``<blockquote>`` used only to indent an example put a fence inside a quote. Here the gutter is
dropped, the code's text (with ``<br>`` and per-line blocks as newlines) is kept verbatim, and
the language is taken from the first ``language-x`` / ``lang-x`` / ``highlight-x`` /
``highlight-source-x`` class, ``brush: x`` (SyntaxHighlighter, MDN), ``sourceCode x``
(pandoc, Sphinx) or ``data-lang`` / ``data-language`` on the ``<code>``, the block or up to three
ancestors — the conventions counted on WCXB dev by bench/markdown_fidelity.py, where
``brush: js`` (a space after the colon) and Asciidoctor's ``<code data-lang="http">`` inside a
``<pre class="highlight">`` had lost the language on 203 blocks.
"""

from __future__ import annotations

import html
import re

from selectolax.lexbor import LexborHTMLParser, LexborNode

_LANG = re.compile(r"(?:^|\s)(?:(?:language|lang|highlight-source|highlight)-|brush:\s*|sourceCode\s+)([\w+#.-]+)")
_NO_LANG = frozenset({"default", "none", "text", "plain", "plaintext", "nohighlight", "source"})
_GUTTER_CLASS = re.compile(
    r"(?:^|\s)(?:line-?numbers?(?:-rows)?|linenos?|lnt|ln|gutter|hljs-ln-numbers?|hljs-ln-n|"
    r"code-line-number|blob-num|react-line-number|rouge-gutter|line-no|lineno-\w+)(?:\s|$)", re.I)
_DIGITS = re.compile(r"^[\s\d.:]*$")
_LINE_BLOCKS = ("div", "p", "li", "tr")


def _declared(node: LexborNode) -> str | None | bool:
    """The language ``node``'s attributes declare, None for a declared "no language" (``text``,
    ``nohighlight``…), False when they declare nothing."""
    attrs = node.attributes
    for name in ("data-lang", "data-language"):
        lang = (attrs.get(name) or "").strip().lower()
        if lang:
            return None if lang in _NO_LANG else lang
    for match in _LANG.finditer(attrs.get("class") or ""):
        lang = match.group(1).lower()
        if lang not in _NO_LANG:
            return lang
        return None
    return False


def _language(node: LexborNode) -> str | None:
    current, depth = node, 0
    while current is not None and depth < 4:
        lang = _declared(current)
        if lang is not False:
            return lang
        current, depth = current.parent, depth + 1
    return None


def _code_language(pre: LexborNode) -> str | None:
    code = pre.css_first("code")
    if code is not None:
        lang = _declared(code)
        if lang is not False:
            return lang
    return _language(pre)


def _code_text(pre: LexborNode) -> str:
    """The code as the reader sees it: gutters removed, ``<br>`` and per-line blocks → newlines."""
    for node in pre.css("[class]"):
        if _GUTTER_CLASS.search(node.attributes.get("class") or ""):
            node.remove()
    for br in pre.css("br"):
        br.replace_with("\n")
    selector = ", ".join(_LINE_BLOCKS)
    lines = [n for n in pre.css(selector) if n.mem_id != pre.mem_id]
    if lines and "\n" not in pre.text(deep=True):
        leaves = [n for n in lines if all(m.mem_id == n.mem_id for m in n.css(selector))]
        return "\n".join(n.text(deep=True) for n in leaves)
    return pre.text(deep=True)


def _gutter_table(pre: LexborNode) -> LexborNode | None:
    """The table a highlighter laid out as [line numbers | code] around ``pre``, if any."""
    table, depth = pre.parent, 0
    while table is not None and table.tag != "table" and depth < 4:
        table, depth = table.parent, depth + 1
    if table is None or table.tag != "table":
        return None
    for cell in table.css("td, th"):
        if cell.css_first("pre") is not None and contains(cell, pre):
            continue
        if not _DIGITS.match(cell.text(deep=True)):
            return None
    return table


def contains(outer: LexborNode, inner: LexborNode) -> bool:
    """``inner`` is ``outer`` or lies inside it (by lexbor node identity: selectolax wrappers are
    new objects on every lookup)."""
    node = inner
    while node is not None:
        if node.mem_id == outer.mem_id:
            return True
        node = node.parent
    return False


def normalise_code_blocks(root: LexborNode) -> int:
    """Rewrite every ``<pre>`` under ``root`` as a clean code block; returns how many."""
    pres = root.css("pre")
    done = 0
    for pre in pres:
        if pre.parent is None:
            continue
        text = pre.text(deep=True)
        if _DIGITS.match(text) and len(pres) > 1:
            # A gutter of its own (<pre>1\n2\n3</pre> beside the code): drop it.
            if text.strip():
                pre.remove()
            continue
        lang = _code_language(pre)
        code = _code_text(pre).strip("\n")
        target = _gutter_table(pre) or pre
        parent = target.parent
        if parent is not None and parent.tag == "blockquote" and \
                parent.text(deep=True).strip() == target.text(deep=True).strip():
            target = parent  # a quote used only to indent the example
        attr = f' class="language-{html.escape(lang, quote=True)}"' if lang else ""
        fresh = LexborHTMLParser(f"<pre><code{attr}>{html.escape(code, quote=False)}</code></pre>")
        node = fresh.css_first("pre")
        if node is None:
            continue
        target.replace_with(node)
        done += 1
    return done


_BLANKS = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
# A fenced block: its opening fence (after list markers or quote marks), everything up to the
# first closing fence line of the same character at least as long. An unclosed fence is not
# matched (its text is squeezed like prose: no guess about where it would end).
_FENCED = re.compile(r"^(?:[ \t]*(?:[-*+>]|\d{1,9}[.)]))*[ \t]*(`{3,}|~{3,})[^\n]*\n.*?^[ \t>]*\1[`~]*[ \t]*$",
                     re.M | re.S)


def squeeze_blanks(markdown: str) -> str:
    """Runs of blank lines → one blank line, outside fenced code only (html_markdown's tidy and
    html_huge's per-slice tidy).

    Why: code keeps its blank lines (PEP 8's two before a ``class``, a mail's paragraphs); the
    whole-text squeeze changed 96 of 1,741 code blocks on WCXB dev and 10 in the Python docs
    (bench/markdown_fidelity.py, "exact lines")."""
    if "```" not in markdown and "~~~" not in markdown:
        return _BLANKS.sub("\n\n", markdown)
    out, at = [], 0
    for block in _FENCED.finditer(markdown):
        out.append(_BLANKS.sub("\n\n", markdown[at:block.start()]))
        out.append(block.group(0))
        at = block.end()
    out.append(_BLANKS.sub("\n\n", markdown[at:]))
    return "".join(out)
