"""Exactness check for issue 14's speed pass on pruning and link blocks (s7-lengths): on every WCXB
dev and readability page, each cheaper step gives what the step it replaced gave.

- ``_chrome(body)`` is ``body.css(_CHROME)`` node for node, repeats included;
- junk removal by tag name (``strip_tags``) leaves the tree the selector loop left (same HTML);
- ``_holders(body, "h1", _holders(body, _KEEPS))`` is ``_holders(body, _NAME_KEEPS)`` after
  the tag loops of ``prune``;
- in ``drop_link_blocks``, after every removal, each text and link length the ``Lengths`` memo
  still holds for a node in the tree equals a fresh ``text_len`` / ``link_len``.

    .venv/bin/python bench/lengths_check.py [--limit N]

Exit status 1 on any difference. Not a test: it needs the corpora.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from selectolax.lexbor import LexborHTMLParser  # noqa: E402

from webshelf.core.convert import html_density, html_main_content as content  # noqa: E402
from webshelf.core.convert.html_hidden import drop_hidden_in  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
import extract_quality as eq  # noqa: E402


class CheckedLengths(html_density.Lengths):
    """A memo that, after each removal, compares every remembered length with a fresh one."""

    __slots__ = ("root", "checked", "wrong")

    def __init__(self) -> None:
        super().__init__()
        self.root, self.checked, self.wrong = None, 0, 0

    def remove(self, node) -> None:  # noqa: ANN001
        super().remove(node)
        for other in self.root.traverse():
            key = other.mem_id
            if key in self._text:
                self.checked += 1
                self.wrong += self._text[key] != html_density.text_len(other)
            if key in self._links:
                self.checked += 1
                self.wrong += self._links[key] != html_density.link_len(other)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, help="first N pages of each corpus")
    args = ap.parse_args(argv)
    counts = {"pages": 0, "chrome": 0, "junk": 0, "holders": 0, "memo entries checked": 0, "memo wrong": 0,
              "pages with removals": 0}
    tuning = content.DEFAULT
    for corpus in ("wcxb", "readability"):
        for desc in eq.page_index(corpus, args.limit):
            html = eq.load_page(corpus, desc)["html"].replace("\x00", "")
            counts["pages"] += 1
            old, new = LexborHTMLParser(html), LexborHTMLParser(html)
            drop_hidden_in(old, html), drop_hidden_in(new, html)
            for node in old.css(content._JUNK_TAGS):
                if node.tag not in ("html", "body"):
                    node.remove()
            new.strip_tags(content._JUNK_TAG_LIST, recursive=True)
            counts["junk"] += old.html != new.html
            body = new.body or new.root
            if body is not None:
                counts["chrome"] += ([n.mem_id for n in content._chrome(body)]
                                     != [n.mem_id for n in body.css(content._CHROME)])
                keeps = content._holders(body, content._KEEPS)
                total = content._text_len(body) or 1
                for node in content._chrome(body):  # the tag loops as prune runs them
                    if content._removable(node, total, holders=keeps):
                        node.remove()
                for node in body.css(content._SITE_HEADER_FOOTER):
                    if (not content._has_ancestor(node, ("article", "main"))
                            and content._removable(node, total, holders=keeps)):
                        node.remove()
                counts["holders"] += content._holders(body, "h1", keeps) != content._holders(body, content._NAME_KEEPS)
            tree = LexborHTMLParser(html)
            drop_hidden_in(tree, html)
            lengths = CheckedLengths()
            node = content._container(tree, tuning, lengths)
            if node is not None and node.tag not in ("html", "body"):
                node = html_density.narrow(node, tuning.narrow_share, lengths)
            if node is not None:
                lengths.root = node
                removed = html_density.drop_link_blocks(node, tuning.link_density, tuning.link_min_chars,
                                                        tuning.link_page_max, lengths)
                counts["pages with removals"] += removed > 0
            counts["memo entries checked"] += lengths.checked
            counts["memo wrong"] += lengths.wrong
    print(", ".join(f"{k}: {v}" for k, v in counts.items()))
    return 1 if counts["chrome"] or counts["junk"] or counts["holders"] or counts["memo wrong"] else 0


if __name__ == "__main__":
    sys.exit(main())
