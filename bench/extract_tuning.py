"""The grid of container-choice parameters that bench/extract_quality.py cross-validates.

Each point is a ``core.convert.html_main_content.Tuning`` (overrides of its defaults);
``extract_quality.py --grid`` runs every point on every WCXB dev page, picks per held-out fold the point
that is best on the other four folds (``with`` recall ≥ 0.85 first, then mean F1), and reports
only the held-out scores. The shipped ``Tuning()`` defaults are the point that was best on all
of WCXB dev; "off" is the container choice before link density (issue 14's starting point).
"""

from __future__ import annotations

GRID: list[tuple[str, dict]] = [
    ("defaults", {}),
    ("off (no narrow, no link blocks, comments 0.2)",
     {"narrow_share": 1.0, "link_density": 1.0, "comment_min_share": 0.2}),
    ("link density 0.5", {"link_density": 0.5}),
    ("link density 0.7", {"link_density": 0.7}),
    ("link blocks from 80 chars", {"link_min_chars": 80}),
    ("link blocks from 150 chars", {"link_min_chars": 150}),
    ("listing guard 0.35", {"link_page_max": 0.35}),
    ("narrow 0.45", {"narrow_share": 0.45}),
    ("narrow 0.8", {"narrow_share": 0.8}),
    ("comments 0.2", {"comment_min_share": 0.2}),
]
