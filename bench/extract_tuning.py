"""The grid of container-choice parameters that bench/extract_quality.py cross-validates.

Each point is a ``core.convert.html_main_content.Tuning``; extract_quality.py runs every point
on every WCXB dev page, picks per held-out fold the point that is best on the other four folds,
and reports only the held-out scores. The shipped ``Tuning()`` defaults are the point that is
best on all of WCXB dev (printed by the same run as "grid (in-sample)").
"""

from __future__ import annotations

GRID: list[tuple[str, dict]] = [
    ("defaults", {}),
    ("container 0.15", {"container_min_share": 0.15}),
    ("container 0.40", {"container_min_share": 0.40}),
    ("descend 0.6", {"descend_share": 0.6}),
    ("descend 0.8", {"descend_share": 0.8}),
]
