"""Response bytes → Markdown, by content type.

HTML goes through main-content extraction; Markdown and plain text pass through untouched;
JSON is pretty-printed in a fenced block so an agent can read its structure. Decoding uses
the declared charset, then an HTML ``<meta charset>``, then detection, and never fails:
undecodable bytes become U+FFFD, so the output is always valid UTF-8.
"""

from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass

import charset_normalizer

from core.errors import UnsupportedContentError

_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_HTML_START = re.compile(rb"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body|title|meta|div|p)\b", re.IGNORECASE | re.DOTALL)

HTML_TYPES = {"text/html", "application/xhtml+xml"}
MARKDOWN_TYPES = {"text/markdown", "text/x-markdown"}
TEXT_TYPES = {"text/plain"}


@dataclass(frozen=True)
class Converted:
    markdown: str
    title: str | None
    content_type: str


def media_type(header: str | None) -> tuple[str, str | None]:
    """``text/html; charset=x`` → ("text/html", "x")."""
    if not header:
        return "", None
    parts = [p.strip() for p in header.split(";")]
    charset = next((p.split("=", 1)[1].strip(" \"'") for p in parts[1:] if p.lower().startswith("charset=")), None)
    return parts[0].lower(), charset


def _known(encoding: str | None) -> str | None:
    if not encoding:
        return None
    try:
        return codecs.lookup(encoding).name
    except LookupError:
        return None


def decode(body: bytes, declared: str | None, *, html: bool) -> str:
    """Bytes → str by declared charset, BOM, meta charset, then detection; never raises."""
    for bom, enc in ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):
        if body.startswith(bom):
            return body.decode(enc, errors="replace")
    encoding = _known(declared)
    if encoding is None and html:
        m = _META_CHARSET.search(body[:4096])
        encoding = _known(m.group(1).decode("ascii", "ignore")) if m else None
    if encoding is None:
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError:
            best = charset_normalizer.from_bytes(body[:65536]).best()
            encoding = _known(best.encoding) if best else None
    return body.decode(encoding or "utf-8", errors="replace")


def looks_like_html(body: bytes) -> bool:
    return bool(_HTML_START.match(body[:1024]))


def to_markdown(body: bytes, content_type_header: str | None, url: str) -> Converted:
    """Convert a response body to Markdown according to its (declared or sniffed) type."""
    mtype, charset = media_type(content_type_header)
    if mtype in HTML_TYPES or (mtype in ("", "application/octet-stream") and looks_like_html(body)):
        from core.html_markdown import html_to_markdown

        converted = html_to_markdown(decode(body, charset, html=True), url)
        return Converted(converted.markdown, converted.title, mtype or "text/html")
    if mtype in MARKDOWN_TYPES or mtype in TEXT_TYPES:
        return Converted(decode(body, charset, html=False), None, mtype)
    if mtype == "application/json" or mtype.endswith("+json"):
        text = decode(body, charset, html=False)
        try:
            text = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
        except ValueError:
            pass  # not valid JSON after all: show it as it came, still fenced
        return Converted(f"```json\n{text}\n```\n", None, mtype)
    raise UnsupportedContentError(
        f"unsupported content type {mtype or 'unknown'!s} at {url}; webshelf reads HTML, Markdown, plain text and JSON",
        url=url,
    )
