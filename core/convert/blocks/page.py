"""A page-level signal for the block classifier's drop cap: does the container hold an article?

Issue 14's main failure is an article inside a container several times larger than it (menus,
teasers, "more stories", comment widgets): most of the container should go. A listing or
collection looks similar block by block (short, link-bearing, repeated items) but its items
*are* the content. What tells them apart cheaply is one **run of prose**: consecutive blocks
with little link text and at least one sentence end, outside any repeated sibling structure
(a comment list or a post grid repeats its ancestor; an article's paragraphs do not). Headings,
code and captions inside the run do not break it. Listings have no such run (each item's
link-dense title breaks it), so the longest run's length in characters is the signal.

Computed from the block feature vectors alone (``core.convert.blocks.features``), so training
(``bench/train_blocks.py``'s proxy) and run time (``model.drop_blocks``) share it. Language
independent: link density, Unicode sentence ends, markup repetition, lengths.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from webshelf.core.convert.blocks.features import NAMES

_CHARS = NAMES.index("log_chars")
_LINKS = NAMES.index("link_density")
_ENDS = NAMES.index("sentence_ends")
_REPEATED = NAMES.index("repeated_ancestor")
_PASS = tuple(NAMES.index(n) for n in ("tag_h1", "tag_h2", "tag_h4", "tag_pre", "tag_figcaption"))
PROSE_LINK_DENSITY = 0.25  # a paragraph with a few inline links is still prose
REPEATED_LIMIT = math.log1p(3)  # an ancestor repeated ≥ 3 times among its siblings: a list item


def chars_of(features: Sequence[float]) -> int:
    """The block's character count as ``drop_blocks`` sees it (``log_chars`` undone)."""
    return round(math.expm1(features[_CHARS]))


def prose_run(vectors: Sequence[Sequence[float]]) -> int:
    """Characters in the longest run of consecutive prose blocks (see the module docstring)."""
    best = run = 0
    for f in vectors:
        if f[_LINKS] < PROSE_LINK_DENSITY and f[_ENDS] > 0 and f[_REPEATED] < REPEATED_LIMIT:
            run += chars_of(f)
            best = max(best, run)
        elif not any(f[i] for i in _PASS):
            run = 0
    return best
