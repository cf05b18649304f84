"""``webshelf extract URL`` answered from the shelf without the pipeline, the config models or pydantic.

Why (issue 15's start-up row, goal ≤ 4× ``python -c pass``): a CLI that imports pydantic and
defines its config models starts at 5–7× before any work; a cached extract needs none of it.
It needs a dozen settings (``core.config_snapshot``: kept from the last full validation, keyed
by the config file's bytes and the environment they depend on), the URL check
(``core.fetch.checked``), one index lookup and file read (``cache.shelf``), the window
(``core.served``, the same function ``core.extract`` renders with) and the renderer.

It serves only what it can serve exactly as the full path would, and declines — returning
before it prints or counts anything — in every other case: several URLs, ``--fresh``,
``--backend``, ``--runtime``, no matching snapshot (a new, changed or invalid config), a URL
the check refuses, a ``file://`` URL, no usable stored copy, a cache that cannot be opened. The
full path then does all the work, with its own errors and exit codes. The shelf's counters are
touched only when this path serves (``Shelf.reuse(count=False)`` + ``mark_hit`` under one
shared lock), so a declined call is counted once, by the full path.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from webshelf.core.config_snapshot import Probe
from webshelf.errors import WebshelfError


def serve(probe: Probe, urls: tuple[str, ...], char_limit: int | None, as_json: bool) -> tuple[str, int] | None:
    """(stdout text, exit code) for a one-URL extract the shelf answers, or None: run the full path."""
    settings = probe.settings
    if settings is None or len(urls) != 1:
        return None
    lo, hi = settings["char_limit_range"]
    if char_limit is not None and not lo <= char_limit <= hi:
        return None  # the full path says what is wrong
    budget = char_limit if char_limit is not None else settings["extract_char_limit"]
    found = _hit(urls[0].strip(), settings)
    if found is None:
        return None
    hit, started = found
    from webshelf.core import served
    from webshelf.core.clean import clean_title

    rec = hit.record
    cut_note = served.cut_note(rec.original_chars, settings["max_file_chars"])
    notes = [served.served_note(rec.fetched_at)] + ([cut_note] if cut_note else [])
    window, content = served.window(hit.text, budget, head_ratio=settings["head_ratio"],
                                    wrap_untrusted=settings["wrap_untrusted"], path=str(hit.path),
                                    cut_note=cut_note, notes=notes)
    result = {  # ExtractResult's fields in its order, as ``model_dump(mode="json")`` gives them
        "url": urls[0].strip(), "final_url": rec.final_url, "title": clean_title(rec.title), "content": content,
        "truncated": window.truncated, "path": str(hit.path), "total_chars": window.total_chars,
        "total_lines": window.total_lines, "backend": rec.backend,
        "elapsed_ms": (time.perf_counter() - started) * 1000, "error": None, "notes": notes, "cached": True,
    }
    if as_json:
        return json.dumps([result], indent=2, ensure_ascii=False) + "\n", 0
    from webshelf.core.surfaces.render import blocks, join

    return join(blocks([SimpleNamespace(**result)], budget, surface="cli")), 0


def _hit(url: str, settings: dict[str, Any]):  # noqa: ANN202 — (cache.shelf.CachedPage, start time) or None
    """The stored copy ``core.extract`` would serve for ``url``, marked used, and when its lookup
    started (``elapsed_ms`` counts from there, as ``core.extract._serve_hits`` does); None if it would not."""
    from webshelf.cache.shelf import Shelf
    from webshelf.core.fetch.checked import validate
    from webshelf.core.fetch.netpolicy import Policy

    if settings["max_age"] <= 0:
        return None
    try:
        checked = validate(url, Policy.from_config(SimpleNamespace(**settings)))
        if checked.is_file:
            return None  # file:// pages are read again: web.file_dirs is checked on every read
        shelf = Shelf.shared(Path(settings["home"]))
        started = time.perf_counter()
        with shelf.lock.shared():  # no eviction between the look and the mark
            hit = shelf.reuse(checked.url, settings["max_age"], count=False)
            if hit is None or not hit.text.strip():
                return None  # a miss, or an empty copy (fetched again): the full path counts it
            shelf.mark_hit(hit)
            return hit, started
    except WebshelfError:  # a refused URL, a broken cache: the full path reports or works around it
        return None
