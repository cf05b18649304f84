"""PDF → text, one page after another with page markers, via pypdf.

Agents get PDFs as often as HTML (papers, manuals, filings). Each page's text follows a
``## Page N`` heading, so the truncation footer's outline doubles as a page index and
``read_file`` can jump to a page. At most ``web.max_pdf_pages`` pages are read: a hostile or
huge PDF costs bounded time, and the text says how many pages were left out.
"""

from __future__ import annotations

import io
import logging

from webshelf.errors import UnsupportedContentError


def looks_like_pdf(body: bytes) -> bool:
    """The ``%PDF-`` magic within the first 1 KB, where readers accept it."""
    return b"%PDF-" in body[:1024]


def pdf_to_markdown(body: bytes, url: str, max_pages: int) -> tuple[str, str | None]:
    """(text with page markers, title from the PDF's metadata) or ``UnsupportedContentError``."""
    from pypdf import PdfReader

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
        for number in range(min(total, max_pages)):
            try:
                text = reader.pages[number].extract_text() or ""
            except Exception as exc:  # noqa: BLE001 — a hostile page must not fail the document
                text = f"[webshelf] the text of this page could not be read: {type(exc).__name__}"
            parts.append(f"## Page {number + 1} of {total}\n\n{text.strip()}\n")
    except UnsupportedContentError:
        raise
    except Exception as exc:  # noqa: BLE001 — pypdf raises many types on malformed input
        raise UnsupportedContentError(f"{url}: the PDF could not be read ({type(exc).__name__}: {exc})", url=url) from None
    if total > max_pages:
        parts.append(f"[webshelf] This PDF has {total:,} pages; only the first {max_pages:,} were read "
                     "(raise web.max_pdf_pages to read more).\n")
    return "\n".join(parts), title
