"""PDF → text, one page after another with page markers, via pypdf.

Agents get PDFs as often as HTML (papers, manuals, filings). Each page's text follows a
``## Page N`` heading, so the truncation footer's outline doubles as a page index and
``read_file`` can jump to a page. At most ``web.max_pdf_pages`` pages are read: a hostile or
huge PDF costs bounded time, and the text says how many pages were left out.

Bounds beyond the page cap (issue 16: a 7 KB PDF whose 200 pages share one content stream of 100k
text operators took ~2.3 s a page): pages that draw the *same* content stream with the same
resources give the same text, so it is extracted once and reused; extraction stops, with a note,
once the text passes ``Bounds.max_output_chars`` or the time passes ``Bounds.soft_deadline_s``
(partial text beats an error); the worker's hard deadline (core/convert/pool.py) covers one page
that alone is too slow.
"""

from __future__ import annotations

import io
import logging
import time

from webshelf.core.convert.bounds import Bounds
from webshelf.errors import UnsupportedContentError


def _content_key(page) -> tuple | None:  # noqa: ANN001 — pypdf PageObject
    """Identity of what a page draws: its content stream(s) and resources, by object number."""
    def ref(value):  # noqa: ANN001, ANN202
        return getattr(value, "idnum", None)

    raw = page.get("/Contents")
    refs = tuple(ref(v) for v in raw) if isinstance(raw, list) else (ref(raw),)
    resources = page.get("/Resources")
    if None in refs or resources is None or ref(resources) is None:
        return None  # inline objects: no identity to share
    return refs, ref(resources)


def looks_like_pdf(body: bytes) -> bool:
    """The ``%PDF-`` magic within the first 1 KB, where readers accept it."""
    return b"%PDF-" in body[:1024]


def pdf_to_markdown(body: bytes, url: str, max_pages: int, *, bounds: Bounds | None = None) -> tuple[str, str | None]:
    """(text with page markers, title from the PDF's metadata) or ``UnsupportedContentError``."""
    from pypdf import PdfReader

    bounds = bounds or Bounds()
    started = time.monotonic()
    stopped = None

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # pypdf warns loudly about harmless quirks
    try:
        reader = PdfReader(io.BytesIO(body))
        if reader.is_encrypted and not reader.decrypt(""):
            raise UnsupportedContentError(f"{url}: the PDF is encrypted with a password; webshelf cannot read it", url=url)
        total = len(reader.pages)
        title = None
        try:
            title = (reader.metadata.title or "").strip() or None if reader.metadata else None
        except Exception:  # noqa: BLE001 — metadata is optional
            title = None
        parts: list[str] = []
        seen: dict[tuple, str] = {}
        size = 0
        for number in range(min(total, max_pages)):
            if time.monotonic() - started > bounds.soft_deadline_s:
                stopped = f"the time budget (web.convert_timeout_s {bounds.timeout_s:g} s) ran out"
                break
            if size > bounds.max_output_chars:
                stopped = f"the text passed {bounds.max_output_chars:,} characters"
                break
            page = reader.pages[number]
            key = _content_key(page)
            if key is not None and key in seen:
                text = seen[key]
            else:
                try:
                    text = (page.extract_text() or "").strip()
                except Exception as exc:  # noqa: BLE001 — a hostile page must not fail the document
                    text = f"[webshelf] the text of this page could not be read: {type(exc).__name__}"
                if key is not None:
                    seen[key] = text
            parts.append(f"## Page {number + 1} of {total}\n\n{text}\n")
            size += len(parts[-1])
    except UnsupportedContentError:
        raise
    except Exception as exc:  # noqa: BLE001 — pypdf raises many types on malformed input
        raise UnsupportedContentError(f"{url}: the PDF could not be read ({type(exc).__name__}: {exc})", url=url) from None
    if stopped:
        parts.append(f"[webshelf] Stopped after page {len(parts):,} of {total:,}: {stopped}.\n")
    elif total > max_pages:
        parts.append(f"[webshelf] This PDF has {total:,} pages; only the first {max_pages:,} were read "
                     "(raise web.max_pdf_pages to read more).\n")
    return "\n".join(parts), title
