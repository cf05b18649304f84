"""Tables: data tables stay tables (the converter makes pipe tables), layout tables become text.

Why: old-school and e-mail-style pages lay the whole article out in ``<table>`` cells; as a pipe
table every paragraph lands on one enormous line with ``|`` around it, which neither an agent
nor the heading outline can read. A table is *layout* when it says so (``role=presentation``),
holds another table, has a single row or a single column, or a cell holds block content
(paragraphs, lists, headings, code). Its cells are rewritten as ``<div>`` blocks in order.
"""

from __future__ import annotations

from selectolax.lexbor import LexborHTMLParser, LexborNode

_BLOCK_IN_CELL = "p, ul, ol, h1, h2, h3, h4, h5, h6, pre, blockquote, table, div > div"


def is_layout(table: LexborNode) -> bool:
    role = (table.attributes.get("role") or "").lower()
    if role in ("presentation", "none"):
        return True
    rows = [r for r in table.css("tr") if _owner(r) == table.mem_id]
    if len(rows) <= 1:
        return True
    widths = {len([c for c in r.iter(include_text=False) if c.tag in ("td", "th")]) for r in rows}
    if max(widths, default=0) <= 1:
        return True
    for cell in table.css("td, th"):
        if _owner(cell) == table.mem_id and cell.css_first(_BLOCK_IN_CELL) is not None:
            return True
    return False


def _owner(node: LexborNode) -> int | None:
    parent = node.parent
    while parent is not None and parent.tag != "table":
        parent = parent.parent
    return parent.mem_id if parent is not None else None


def unwrap_layout_tables(root: LexborNode) -> int:
    """Rewrite layout tables under ``root`` as a sequence of ``<div>`` blocks; innermost first."""
    done = 0
    for table in reversed(root.css("table")):
        if table.parent is None or not is_layout(table):
            continue
        cells = [c for c in table.css("td, th") if _owner(c) == table.mem_id]
        inner = "".join(f"<div>{c.inner_html or ''}</div>" for c in cells)
        caption = table.css_first("caption")
        if caption is not None and _owner(caption) == table.mem_id:
            inner = f"<div>{caption.inner_html or ''}</div>" + inner
        fresh = LexborHTMLParser(f"<div>{inner}</div>").body
        block = fresh.css_first("div") if fresh is not None else None
        if block is None:
            continue
        table.replace_with(block)
        done += 1
    return done
