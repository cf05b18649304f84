"""The budget of one page's conversion (issue 16): time, memory, elements, depth, output.

The fetch is bounded by ``web.timeout_s`` and ``web.max_bytes``; this is the bound on the CPU and
memory spent *after* it. Two layers, because neither alone is enough:

- cheap pre-checks that run before any tree is built and cost a fraction of a parse
  (core/convert/html_precheck.py: element count, nesting depth; JSON depth; PDF content
  streams shared between pages) — they keep the common hostile shapes fast and keep their text;
- a hard limit that holds whatever the input: conversion runs in a worker process
  (core/convert/pool.py) with an address-space limit (``convert_memory_mb`` above the idle
  worker) and a deadline (``convert_timeout_s``); a worker over either is killed and replaced,
  and only its URL fails (``conversion_timeout`` / ``too_complex``).

``Bounds`` is a small frozen value so it pickles cheaply to the workers.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Deeper elements are unwrapped (their tags dropped, their text kept) before parsing: browsers
#: flatten the DOM at a similar depth (Blink: 512), and Lexbor's tree builder is quadratic in it.
MAX_DEPTH = 512


@dataclass(frozen=True)
class Bounds:
    timeout_s: float = 20.0
    memory_mb: int = 1_024
    max_elements: int = 1_000_000
    max_depth: int = MAX_DEPTH
    max_pdf_pages: int = 200
    max_bytes: int = 10_000_000  # web.max_bytes: also the cap on a document's declared uncompressed size
    max_output_chars: int = 10_000_000  # text a converter produces (PDF pages, …) before it stops with a note
    huge_bytes: int = 8_000_000  # web.convert_huge_bytes: a larger HTML page is converted slice by slice (html_huge.py)

    @classmethod
    def from_config(cls, web) -> "Bounds":  # noqa: ANN001 — WebConfig (kept import-free for the workers)
        return cls(timeout_s=web.convert_timeout_s, memory_mb=web.convert_memory_mb,
                   max_elements=web.max_html_elements, max_pdf_pages=web.max_pdf_pages, max_bytes=web.max_bytes,
                   max_output_chars=max(web.max_bytes, 1_000_000), huge_bytes=web.convert_huge_bytes)

    @property
    def soft_deadline_s(self) -> float:
        """When a converter that can stop early (PDF, page by page) stops with a note, before the
        hard deadline kills it: partial text beats an error."""
        return self.timeout_s * 0.6
