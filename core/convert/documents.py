"""Office documents and e-books → Markdown: DOCX, PPTX, XLSX, EPUB, ODT.

Each format becomes HTML that keeps its structure (headings, lists, tables), and html-to-markdown
turns the whole of it into Markdown — no main-content pruning: a document has no navigation to
drop. The converters, measured against Microsoft's markitdown (issue 17): markitdown with its
docx/pptx/xlsx extras downloads 85 MB (onnxruntime, magika, pandas, numpy) and has no ODT reader;
the per-format libraries it wraps — ``mammoth`` (DOCX → HTML with heading styles, lists, tables),
``python-pptx`` and ``openpyxl`` — are 14 MB with their lxml and Pillow, and EPUB and ODT need
only the standard library's zipfile plus ``defusedxml`` (no XXE, no entity expansion). They are
the optional extra ``webshelf[documents]``; without it a document is ``missing_package`` naming
the extra. Every file passes core/convert/zipguard.py first: entry count and declared uncompressed
size are checked from the zip directory before anything is extracted.
"""

from __future__ import annotations

import html
import io
import posixpath
import zipfile
from collections.abc import Callable

from webshelf.core.convert.zipguard import open_zip, read_entry
from webshelf.errors import DocumentError, MissingPackageError, WebshelfError

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
EPUB = "application/epub+zip"
ODT = "application/vnd.oasis.opendocument.text"
DOCUMENT_TYPES = {DOCX: "DOCX", PPTX: "PPTX", XLSX: "XLSX", EPUB: "EPUB", ODT: "ODT"}
EXTRA = "pip install 'webshelf[documents]'"


def sniff_document(body: bytes) -> str | None:
    """The document type of a zip body, from its entry names (or its ``mimetype`` entry), else None."""
    if not body.startswith(b"PK\x03\x04"):
        return None
    try:
        archive = zipfile.ZipFile(io.BytesIO(body))
        names = set(archive.namelist()[:20_000])
        if "mimetype" in names:
            info = archive.getinfo("mimetype")
            if info.file_size < 100:
                declared = archive.read("mimetype").decode("ascii", "ignore").strip()
                if declared in (EPUB, ODT):
                    return declared
    except (zipfile.BadZipFile, ValueError, OSError, KeyError):
        return None
    for marker, mtype in (("word/document.xml", DOCX), ("ppt/presentation.xml", PPTX), ("xl/workbook.xml", XLSX)):
        if marker in names:
            return mtype
    return None


def zip_kind(body: bytes) -> str:
    """What a zip body that is not a document is, for the refusal: a plain zip archive (with its
    entry count, from the directory only — nothing is extracted), or a body that is not a zip."""
    if not body.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "the body is not a zip file"
    try:
        count = len(zipfile.ZipFile(io.BytesIO(body)).infolist())
    except (zipfile.BadZipFile, ValueError, OSError):
        return "the body is not a readable zip file"
    return f"a plain zip archive of {count:,} entr{'y' if count == 1 else 'ies'}; webshelf does not unpack archives"


def _need(module: str, package: str):  # noqa: ANN202
    try:
        return __import__(module, fromlist=["_"])
    except ImportError:
        raise MissingPackageError(f"reading this document needs {package}: {EXTRA}", package=package) from None


def _xml(data: bytes):  # noqa: ANN202 — an ElementTree element, parsed without entities or DTDs
    ElementTree = _need("defusedxml.ElementTree", "defusedxml")
    return ElementTree.fromstring(data)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _docx(archive: zipfile.ZipFile, body: bytes, url: str) -> tuple[str, str | None]:
    mammoth = _need("mammoth", "mammoth")
    return mammoth.convert_to_html(io.BytesIO(body)).value, None


def _table(rows: list[list[str]]) -> str:
    if not rows:
        return ""
    head, *rest = rows
    out = ["<table><thead><tr>", *(f"<th>{html.escape(c)}</th>" for c in head), "</tr></thead><tbody>"]
    for row in rest:
        out += ["<tr>", *(f"<td>{html.escape(c)}</td>" for c in row), "</tr>"]
    return "".join(out + ["</tbody></table>"])


def _pptx(archive: zipfile.ZipFile, body: bytes, url: str) -> tuple[str, str | None]:
    pptx = _need("pptx", "python-pptx")
    deck = pptx.Presentation(io.BytesIO(body))
    parts: list[str] = []
    for number, slide in enumerate(deck.slides, 1):
        title_shape = slide.shapes.title
        title = title_shape.text_frame.text.strip() if title_shape is not None and title_shape.has_text_frame else ""
        parts.append(f"<h2>Slide {number}{': ' + html.escape(title) if title else ''}</h2>")
        for shape in slide.shapes:
            if shape is title_shape:
                continue
            if shape.has_text_frame:
                items = [(p.level, "".join(r.text for r in p.runs).strip()) for p in shape.text_frame.paragraphs]
                items = [(level, text) for level, text in items if text]
                if items:  # level 0 is a bullet, deeper levels nest
                    parts.append("<ul>" + "".join("<li>" + "<ul><li>" * lv + html.escape(t) + "</li></ul>" * lv + "</li>"
                                                  for lv, t in items) + "</ul>")
            if getattr(shape, "has_table", False) and shape.has_table:
                parts.append(_table([[cell.text.strip() for cell in row.cells] for row in shape.table.rows]))
        if slide.has_notes_slide and (notes := slide.notes_slide.notes_text_frame.text.strip()):
            parts.append(f"<p><em>Notes:</em> {html.escape(notes)}</p>")
    title = deck.core_properties.title or None
    return "".join(parts), title


def _xlsx(archive: zipfile.ZipFile, body: bytes, url: str) -> tuple[str, str | None]:
    openpyxl = _need("openpyxl", "openpyxl")
    book = openpyxl.load_workbook(io.BytesIO(body), read_only=True, data_only=True)
    try:
        parts = []
        for sheet in book.worksheets:
            rows = [["" if v is None else str(v) for v in row] for row in sheet.iter_rows(values_only=True)]
            while rows and not any(rows[-1]):
                rows.pop()
            width = max((max((i + 1 for i, v in enumerate(r) if v), default=0) for r in rows), default=0)
            rows = [(r + [""] * width)[:width] for r in rows]
            parts.append(f"<h2>{html.escape(sheet.title)}</h2>" + (_table(rows) if width else "<p>(empty sheet)</p>"))
        return "".join(parts), book.properties.title or None
    finally:
        book.close()


def _epub(archive: zipfile.ZipFile, body: bytes, url: str) -> tuple[str, str | None]:
    container = _xml(read_entry(archive, "META-INF/container.xml", url))
    rootfile = next((e.get("full-path") for e in container.iter() if _local(e.tag) == "rootfile"), None)
    if not rootfile:
        raise DocumentError(f"{url}: the EPUB names no package file in META-INF/container.xml", url=url)
    opf = _xml(read_entry(archive, rootfile, url))
    base = posixpath.dirname(rootfile)
    manifest = {e.get("id"): e.get("href") for e in opf.iter() if _local(e.tag) == "item"}
    spine = [e.get("idref") for e in opf.iter() if _local(e.tag) == "itemref"]
    title = next((e.text.strip() for e in opf.iter() if _local(e.tag) == "title" and e.text and e.text.strip()), None)
    from selectolax.lexbor import LexborHTMLParser

    parts = []
    for idref in spine:
        href = manifest.get(idref)
        if not href:
            continue
        page = LexborHTMLParser(read_entry(archive, posixpath.normpath(posixpath.join(base, href)), url).decode("utf-8", "replace"))
        if page.body is not None:
            parts.append(page.body.html or "")
    return "".join(parts), title


_ODT_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"


def _odt_inline(element) -> str:  # noqa: ANN001
    """The text of an ODT paragraph with spaces, tabs and line breaks as ODF encodes them."""
    out = [html.escape(element.text or "")]
    for child in element:
        name = _local(child.tag)
        if name == "s":
            out.append(" " * int(child.get(f"{{{_ODT_TEXT}}}c", "1")))
        elif name == "tab":
            out.append(" ")
        elif name == "line-break":
            out.append("<br>")
        else:
            out.append(_odt_inline(child))
        out.append(html.escape(child.tail or ""))
    return "".join(out)


def _odt_block(element) -> str:  # noqa: ANN001
    name = _local(element.tag)
    if name == "h":
        level = max(1, min(6, int(element.get(f"{{{_ODT_TEXT}}}outline-level", "1") or 1)))
        return f"<h{level}>{_odt_inline(element)}</h{level}>"
    if name == "p":
        return f"<p>{_odt_inline(element)}</p>"
    if name == "list":
        return "<ul>" + "".join(f"<li>{''.join(_odt_block(c) for c in item)}</li>" for item in element
                                if _local(item.tag) in ("list-item", "list-header")) + "</ul>"
    if name == "table":
        rows = [[" ".join(_odt_inline(p) for p in cell.iter() if _local(p.tag) in ("p", "h"))
                 for cell in row if _local(cell.tag) == "table-cell"] for row in element.iter() if _local(row.tag) == "table-row"]
        return _table([[html.unescape(c) for c in row] for row in rows])
    return "".join(_odt_block(c) for c in element)  # sections, frames: their blocks


def _odt(archive: zipfile.ZipFile, body: bytes, url: str) -> tuple[str, str | None]:
    content = _xml(read_entry(archive, "content.xml", url))
    office_text = next((e for e in content.iter() if _local(e.tag) == "text" and e.tag.startswith("{urn:oasis:names:tc:opendocument:xmlns:office")), None)
    title = None
    if "meta.xml" in archive.namelist():
        meta = _xml(read_entry(archive, "meta.xml", url))
        title = next((e.text.strip() for e in meta.iter() if _local(e.tag) == "title" and e.text and e.text.strip()), None)
    return ("" if office_text is None else "".join(_odt_block(c) for c in office_text)), title


CONVERTERS: dict[str, Callable[[zipfile.ZipFile, bytes, str], tuple[str, str | None]]] = {
    DOCX: _docx, PPTX: _pptx, XLSX: _xlsx, EPUB: _epub, ODT: _odt}


def _markdown(fragment: str) -> str:
    import html_to_markdown as h2m

    options = h2m.ConversionOptions(heading_style="atx", code_block_style="backticks", bullets="-",
                                    strong_em_symbol="*", extract_metadata=False, autolinks=False)
    return (h2m.convert(fragment, options).content or "").strip() + "\n"


def document_to_markdown(body: bytes, mtype: str, url: str, *, max_bytes: int) -> tuple[str, str | None]:
    """(Markdown, title) of a document of type ``mtype`` (one of ``DOCUMENT_TYPES``)."""
    kind = DOCUMENT_TYPES[mtype]
    archive = open_zip(body, url, max_bytes=max_bytes, kind=kind)
    try:
        fragment, title = CONVERTERS[mtype](archive, body, url)
    except WebshelfError:
        raise
    except Exception as exc:  # noqa: BLE001 — a library's error on a corrupt file, converted here
        raise DocumentError(f"{url}: this {kind} could not be read: {type(exc).__name__}: {exc}", url=url) from None
    markdown = _markdown(fragment)
    if title is None:
        first = next((line for line in markdown.splitlines() if line.startswith("# ")), None)
        title = first[2:].strip() if first else None
    return markdown, title


__all__ = ["DOCUMENT_TYPES", "document_to_markdown", "sniff_document", "zip_kind"]
