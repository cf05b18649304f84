"""Where a block sits relative to the container's main prose run: the article's body.

Issue 14's unseen pages lose precision to what follows (or precedes) the story inside its
container: "more stories" teasers, link lists, comment widgets, product recommendations. Each
such block looks harmless alone (short, few links), so block-local features miss it; what
gives it away is its position — after the last paragraph of the article's body, separated from
it by other non-prose blocks. This module finds that body on the feature vectors already
computed (``features.blocks``), so training and serving compute it the same way:

- a *prose* block: ≥ ``PROSE_MIN_CHARS`` characters, a sentence end (Unicode: ``。`` counts),
  link density < ``PROSE_MAX_LINKS``, not a heading, table row or ``<pre>``;
- *runs*: prose blocks in document order, joined across non-prose gaps of at most
  ``GAP_MAX_CHARS`` characters (a subheading, a figure caption, a short line);
- the *main run*: the run holding the most prose characters.

Features per block (language-independent: lengths, punctuation classes, link text, order):
is it prose; the share of the page's prose before / after it; before the first / after the last
prose block; inside / before / after the main run; the main run's share of the container's
text and its link density (page-level, so the model can weigh "after the run" by how much of
the container the run is); "after the run" × that share; and log characters between the block
and the run. Pure Python over lists; one pass per page.
"""

from __future__ import annotations

import math

PROSE_MIN_CHARS = 150
PROSE_MAX_LINKS = 0.3
GAP_MAX_CHARS = 300

NAMES = ("is_prose", "prose_before", "prose_after", "before_prose", "after_prose",
         "in_main_run", "before_main_run", "after_main_run", "main_run_share",
         "main_run_link_density", "after_main_run_x_share", "log_gap_to_run")


def prose_features(chars: list[int], link_density: list[float], sentence_ends: list[float],
                   not_prose_tag: list[bool]) -> list[list[float]]:
    """One row of ``NAMES`` per block, from the blocks' lengths, link densities, sentence-end
    densities and whether their tag can never be prose (headings, rows, code), in document
    order."""
    n = len(chars)
    prose = [c >= PROSE_MIN_CHARS and e > 0 and d < PROSE_MAX_LINKS and not t
             for c, d, e, t in zip(chars, link_density, sentence_ends, not_prose_tag)]
    total = sum(chars) or 1
    prose_total = sum(c for c, p in zip(chars, prose) if p)
    cum = [0]
    for c in chars:
        cum.append(cum[-1] + c)
    runs: list[list[int]] = []  # [first, last, prose chars]
    for i in range(n):
        if not prose[i]:
            continue
        if runs and cum[i] - cum[runs[-1][1] + 1] <= GAP_MAX_CHARS:
            runs[-1][1] = i
            runs[-1][2] += chars[i]
        else:
            runs.append([i, i, chars[i]])
    if runs:
        start, end, _ = max(runs, key=lambda r: r[2])
        span = cum[end + 1] - cum[start] or 1
        run_links = sum(link_density[j] * chars[j] for j in range(start, end + 1)) / span
        run_share = span / total
        first, last = runs[0][0], runs[-1][1]
    else:
        start, end, run_links, run_share, first, last = n, -1, 0.0, 0.0, n, -1
    out = []
    before = 0
    for i in range(n):
        own = chars[i] if prose[i] else 0
        inside = start <= i <= end
        after = bool(runs) and i > end
        if not runs or inside:
            gap = 0
        elif i < start:
            gap = cum[start] - cum[i + 1]
        else:
            gap = cum[i] - cum[end + 1]
        out.append([
            float(prose[i]),
            before / prose_total if prose_total else 0.0,
            (prose_total - before - own) / prose_total if prose_total else 0.0,
            float(i < first), float(i > last),
            float(inside), float(bool(runs) and i < start), float(after),
            run_share, run_links, run_share if after else 0.0, math.log1p(gap),
        ])
        before += own
    return out
