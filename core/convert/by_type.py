"""Response bytes → Markdown, by content type.

HTML (also when mislabelled: sniffed) loses its hidden parts (core/convert/html_hidden.py) and goes
through main-content extraction; Markdown passes through without its comments and hidden HTML
(core/convert/markdown_hidden.py) and plain text untouched; JSON is
pretty-printed in a fenced block so an agent can read its structure; PDF (by type or ``%PDF``
magic) becomes text per page (core/convert/pdf_text.py); DOCX, PPTX, XLSX, EPUB and ODT (by type, or a
zip body recognised by its entries — also when labelled ``application/zip``) become Markdown (core/convert/documents.py). Images, audio, video, archives and other
binary types are refused with "unsupported content type X" — early, from the headers, when
the type says so, so their bodies are never downloaded — and, whatever the label, a body whose
magic number or NUL bytes say binary (a PNG served as ``text/html``) is refused the same way. Decoding uses
the declared charset, then an HTML ``<meta charset>``, then detection, and never fails:
undecodable bytes become U+FFFD, so the output is always valid UTF-8.
"""

from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass

import charset_normalizer

from webshelf.errors import TooComplexError, UnsupportedContentError
from webshelf.core.convert.bounds import Bounds
from webshelf.core.convert.documents import DOCUMENT_TYPES, document_to_markdown, sniff_document, zip_kind
from webshelf.core.convert.html_hidden import drop_hidden_in
from webshelf.core.convert.html_huge import sliceable
from webshelf.core.convert.html_precheck import element_count, precheck_html
from webshelf.core.convert.markdown_hidden import drop_hidden_markdown
from webshelf.core.convert.pdf_text import looks_like_pdf, pdf_to_markdown

_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_HTML_START = re.compile(rb"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body|title|meta|div|p)\b", re.IGNORECASE | re.DOTALL)

HTML_TYPES = {"text/html", "application/xhtml+xml"}
MARKDOWN_TYPES = {"text/markdown", "text/x-markdown"}
TEXT_TYPES = {"text/plain"}
PDF_TYPES = {"application/pdf", "application/x-pdf"}
# Declared types that say nothing reliable about the body: sniff it.
VAGUE_TYPES = {"", "application/octet-stream", "binary/octet-stream", "application/unknown", "application/x-unknown",
               "unknown/unknown", "text/plain"}
BINARY_PREFIXES = ("image/", "audio/", "video/", "font/", "model/")
BINARY_TYPES = {
    "application/gzip", "application/x-gzip", "application/x-tar", "application/x-bzip2",
    "application/x-xz", "application/x-7z-compressed", "application/x-rar-compressed", "application/vnd.rar",
    "application/zstd", "application/java-archive", "application/x-msdownload", "application/x-executable",
    "application/vnd.android.package-archive", "application/x-apple-diskimage", "application/wasm",
    "application/msword", "application/vnd.ms-excel", "application/vnd.ms-powerpoint", "application/x-shockwave-flash",
}
# Zip labels: DOCX/PPTX/XLSX/EPUB/ODT are often served as plain zips, so these bodies are downloaded
# (under web.max_bytes) and sniffed by their zip directory; a zip that is no document is refused after.
ZIP_TYPES = {"application/zip", "application/x-zip-compressed", "application/x-zip", "multipart/x-zip"}
# Magic numbers of common binary formats, for bodies whose type is vague.
MAGIC = ((b"\x89PNG", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF8", "image/gif"), (b"PK\x03\x04", "application/zip"),
         (b"\x1f\x8b", "application/gzip"), (b"7z\xbc\xaf", "application/x-7z-compressed"), (b"Rar!", "application/vnd.rar"),
         (b"\x7fELF", "application/x-executable"), (b"MZ", "application/x-msdownload"), (b"ID3", "audio/mpeg"),
         (b"OggS", "audio/ogg"), (b"fLaC", "audio/flac"), (b"\x00asm", "application/wasm"), (b"BZh", "application/x-bzip2"))


@dataclass(frozen=True)
class Converted:
    markdown: str
    title: str | None
    content_type: str
    spool: str | None = None  # the Markdown is in this file instead (a huge page converted in a worker, pool.py)


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


def _stated(body: bytes, declared: str | None, *, html: bool) -> str | None:
    """The encoding the body says it has: BOM, then the declared charset, then (HTML) ``<meta charset>``."""
    for bom, enc in ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):
        if body.startswith(bom):
            return enc
    encoding = _known(declared)
    if encoding is None and html:
        m = _META_CHARSET.search(body[:4096])
        encoding = _known(m.group(1).decode("ascii", "ignore")) if m else None
        if encoding and encoding.startswith(("utf-16", "utf-32")):
            encoding = "utf-8"  # a <meta> readable as ASCII means the bytes are not UTF-16/32 (HTML spec)
    return encoding


def _detected(body: bytes) -> str:
    best = charset_normalizer.from_bytes(body[:65536]).best()
    return (_known(best.encoding) if best else None) or "utf-8"


def decode(body: bytes, declared: str | None, *, html: bool) -> str:
    """Bytes → str by BOM, declared charset, meta charset, then UTF-8 or detection; never raises."""
    encoding = _stated(body, declared, html=html)
    if encoding is None:
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError:
            encoding = _detected(body)
    return body.decode(encoding, errors="replace")


def decode_html(body: bytes, declared: str | None) -> tuple[str, bytes | None]:
    """``decode(body, declared, html=True)``, and ``body`` itself when the text is exactly its UTF-8
    decoding (UTF-8 by charset, ``<meta>`` or default, no BOM, nothing replaced) — else None.

    Why the bytes: Lexbor parses UTF-8 bytes, and handed the text it encodes it back first (~0.8
    ms on a mean WCXB page: most decode to UCS-2 or UCS-4 strings); the pre-check's scans and the
    NUL test run on the bytes too (``html_precheck.element_count`` says why that is the same)."""
    encoding = _stated(body, declared, html=True)
    if encoding is None or encoding == "utf-8":
        try:
            return body.decode("utf-8"), body
        except UnicodeDecodeError:
            pass  # decode() replaces (stated UTF-8) or detects (nothing stated), as before
    return decode(body, declared, html=True), None


def charset_of(body: bytes, declared: str | None, *, html: bool) -> str:
    """The encoding ``decode`` uses for ``body``, found without decoding it whole (UTF-8 is checked
    1 MB at a time): a huge page is decoded slice by slice (core/convert/html_huge.py)."""
    encoding = _stated(body, declared, html=html)
    if encoding is not None:
        return encoding
    check, view = codecs.getincrementaldecoder("utf-8")(), memoryview(body)
    try:
        for at in range(0, len(body), 1 << 20):
            check.decode(view[at:at + (1 << 20)], final=at + (1 << 20) >= len(body))
        return "utf-8"
    except UnicodeDecodeError:
        return _detected(body)


def looks_like_html(body: bytes) -> bool:
    return bool(_HTML_START.match(body[:1024]))


def unsupported(mtype: str, url: str) -> UnsupportedContentError:
    return UnsupportedContentError(
        f"unsupported content type {mtype or 'unknown'} at {url}; webshelf reads HTML, Markdown, plain text, JSON, PDF, "
        "DOCX, PPTX, XLSX, EPUB and ODT",
        url=url,
    )


def refuse_binary_type(content_type_header: str | None, url: str) -> None:
    """Refuse from the headers alone a type that is certainly not readable (image, archive, …)."""
    _refuse_binary_mtype(media_type(content_type_header)[0], url)


def _refuse_binary_mtype(mtype: str, url: str) -> None:
    if mtype.startswith(BINARY_PREFIXES) or mtype in BINARY_TYPES:
        raise unsupported(mtype, url)


_TEXT_CONTROLS = frozenset(b"\t\n\r\f\x1b")
_NOT_CONTROLS = bytes(sorted(_TEXT_CONTROLS)) + bytes(range(0x20, 0x100))  # deleted: what is left are controls
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)


def sniff_binary(body: bytes, *, labelled_text: bool = False) -> str | None:
    """The type of a recognisably binary body (magic number, or NUL bytes), else None.

    ``labelled_text`` is for a body whose header claims a text type (HTML, Markdown, …): a
    server can label a PNG or an ELF ``text/html``, and decoding it gives a page full of U+FFFD.
    Real text can start with the letters of an ASCII magic (``MZ``, ``GIF8``, ``ID3``…), so for
    a labelled body a magic number counts only together with control bytes that text never has;
    a UTF-16/32 BOM means text (its NULs are part of the encoding)."""
    head = body[:1024]
    if head.startswith(_UTF16_BOMS):
        return None
    controls = len(head.translate(None, _NOT_CONTROLS))  # bytes < 0x20 but text's own, in C
    for magic, mtype in MAGIC:
        if head.startswith(magic) and (not labelled_text or controls or not magic.isascii()):
            return mtype
    if labelled_text:  # a stray NUL or control byte in a text page is damage, not a binary file
        return "application/octet-stream" if controls >= max(8, len(head) // 10) else None
    return "application/octet-stream" if b"\x00" in head else None


def _valid_text(text: str) -> str:
    """Lone surrogates (e.g. from a JSON ``\\ud800`` escape) → U+FFFD: the output is always valid UTF-8.

    A strict UTF-8 encode fails on a surrogate and on nothing else, and is ~7× faster than the
    regex's search on text without one (0.03 against 0.2 ms on a mean page's Markdown; the HTML
    path's Markdown comes from Rust and Lexbor and never has one): the regex runs only then."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


_SURROGATE = re.compile("[\ud800-\udfff]")


def is_pdf(body: bytes, content_type_header: str | None) -> bool:
    return _is_pdf_mtype(body, media_type(content_type_header)[0])


def _is_pdf_mtype(body: bytes, mtype: str) -> bool:
    return mtype in PDF_TYPES or ((mtype in VAGUE_TYPES or mtype in HTML_TYPES) and looks_like_pdf(body))


def to_markdown(body: bytes, content_type_header: str | None, url: str, *, max_pdf_pages: int | None = None,
                bounds: Bounds | None = None, spool: str | None = None) -> Converted:
    """Convert a response body to Markdown according to its (declared or sniffed) type, within
    ``bounds`` (core/convert/bounds.py); ``max_pdf_pages`` overrides the bounds' page cap.

    ``spool`` (a file path): a huge HTML page (over ``bounds.huge_bytes``) writes its Markdown
    there slice by slice and returns ``Converted(markdown="", spool=spool)`` — a worker then never
    holds, pickles or sends the whole text (core/convert/pool.py reads it back)."""
    bounds = bounds or _DEFAULT_BOUNDS
    if max_pdf_pages is not None:
        bounds = Bounds(**{**bounds.__dict__, "max_pdf_pages": max_pdf_pages})
    converted = _convert(body, content_type_header, url, bounds, spool)
    return Converted(_valid_text(converted.markdown), converted.title, converted.content_type, converted.spool)


_DEFAULT_BOUNDS = Bounds()  # (frozen: one shared default, not a new one per page)


def _valid_fffd(error: UnicodeError) -> tuple[bytes, int]:
    """Lone surrogates written to a spool file → U+FFFD, as ``_valid_text`` does in memory (as
    bytes: the UTF-8 encoder takes only ASCII text back from an error handler)."""
    return "\ufffd".encode() * (error.end - error.start), error.end


codecs.register_error("webshelf-fffd", _valid_fffd)


def _convert(body: bytes, content_type_header: str | None, url: str, bounds: Bounds,
             spool: str | None = None) -> Converted:
    mtype, charset = media_type(content_type_header)  # (parsed once: the checks below take its type)
    _refuse_binary_mtype(mtype, url)
    if _is_pdf_mtype(body, mtype):
        text, title = pdf_to_markdown(body, url, bounds.max_pdf_pages, bounds=bounds)
        return Converted(text, title, "application/pdf")
    document = mtype if mtype in DOCUMENT_TYPES else sniff_document(body) if mtype in VAGUE_TYPES | ZIP_TYPES else None
    if mtype in ZIP_TYPES and not document:
        raise unsupported(f"{mtype} ({zip_kind(body)}, not a DOCX, PPTX, XLSX, EPUB or ODT document)", url)
    if document:  # DOCX, PPTX, XLSX, EPUB, ODT (core/convert/documents.py, zip-bomb checked)
        text, title = document_to_markdown(body, document, url, max_bytes=bounds.max_bytes)
        return Converted(text, title, document)
    if mtype not in VAGUE_TYPES and (binary := sniff_binary(body, labelled_text=True)):
        raise unsupported(f"{mtype} (the body looks like {binary})", url)  # magic numbers win over any label
    if mtype in HTML_TYPES or (mtype in VAGUE_TYPES and looks_like_html(body)):
        from webshelf.core.convert.html_markdown import html_to_markdown

        huge = len(body) > bounds.huge_bytes  # slice by slice, no main-content selection (core/convert/html_huge.py)
        encoding = charset_of(body, charset, html=True) if huge else None
        utf8: bytes | None = None
        try:  # before any tree is built
            if huge and sliceable(encoding):  # the page's bytes go on, each slice decoded (and flattened) alone
                element_count(body, bounds)  # ASCII-compatible bytes: the same "<" and tags as the text
                html: str | bytes = body
            else:
                text, utf8 = decode_html(body, charset)
                html, encoding = precheck_html(text, bounds, utf8), None
                utf8 = utf8 if html is text else None  # flattened: the bytes are not its encoding any more
        except TooComplexError as exc:
            raise TooComplexError(f"{url}: {exc.message}", url=url) from None
        ctype = "text/html" if mtype in VAGUE_TYPES else mtype
        if huge and spool is not None:
            with open(spool, "w", encoding="utf-8", errors="webshelf-fffd") as out:
                converted = html_to_markdown(html, url, prepare=drop_hidden_in, huge=True, encoding=encoding, out=out)
            return Converted("", converted.title, ctype, spool)
        # one parse: hidden removal in the same tree
        converted = html_to_markdown(html, url, prepare=drop_hidden_in, huge=huge, encoding=encoding, utf8=utf8)
        return Converted(converted.markdown, converted.title, ctype)
    if mtype in VAGUE_TYPES and (binary := sniff_binary(body)):
        raise unsupported(f"{mtype or 'unknown'} (the body looks like {binary})", url)
    if mtype in MARKDOWN_TYPES:  # passed through, minus what a Markdown renderer never shows
        return Converted(drop_hidden_markdown(decode(body, charset, html=False)), None, mtype)
    if mtype in VAGUE_TYPES or mtype.startswith("text/") or mtype.endswith(("/xml", "+xml")):
        return Converted(decode(body, charset, html=False), None, mtype or "text/plain")
    if mtype == "application/json" or mtype.endswith("+json"):
        text = decode(body, charset, html=False)
        try:
            text = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
        except (ValueError, RecursionError):
            pass  # not valid JSON, or nested deeper than the parser's recursion limit: shown as it came, still fenced
        return Converted(f"```json\n{text}\n```\n", None, mtype)
    raise unsupported(mtype, url)
