"""DOCX, PPTX, XLSX, EPUB and ODT → Markdown, over the real loopback server; zip bombs refused.

Every file is made here: python-docx, python-pptx and openpyxl write the Office files, and the
EPUB and ODT are zips built by hand (their formats are a few XML entries). The bombs are zips
whose directory declares too many entries or too many bytes, and one whose entry lies about its
size (declared small, actually 5 MB).
"""

from __future__ import annotations

import io
import re
import struct
import zipfile

import pytest

from webshelf.core.config import Config
from webshelf.core.convert.documents import DOCX, EPUB, ODT, PPTX, XLSX
from webshelf.core.extract import web_extract_sync
from tests.loopback import LoopbackServer, Response

docx = pytest.importorskip("docx", reason="python-docx makes the DOCX test file (pip install 'webshelf[test]')")


def cfg(home, **web) -> Config:
    return Config.model_validate({"web": {"allow_private": True, **web}}).with_home(home)


def serve(home, body: bytes, ctype: str, **web):
    with LoopbackServer() as srv:
        url = srv.route("/doc", Response(body, headers={"Content-Type": ctype}))
        [result] = web_extract_sync([url], config=cfg(home, **web))
    return result


def stored(result) -> str:
    """The stored Markdown, with the padding of pipe-table cells collapsed (``| North  | 120     |``)."""
    lines = open(result.path, encoding="utf-8").read().split("\n")
    return "\n".join(re.sub(r" +\|", " |", line) if line.startswith("|") else line for line in lines)


def make_docx() -> bytes:
    document = docx.Document()
    document.add_heading("Quarterly report", level=1)
    document.add_paragraph("Revenue grew in every region.")
    document.add_heading("Regions", level=2)
    document.add_paragraph("North", style="List Bullet")
    document.add_paragraph("South", style="List Bullet")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Region", "Revenue"
    table.cell(1, 0).text, table.cell(1, 1).text = "North", "120"
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def make_pptx() -> bytes:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Launch plan"
    body = slide.placeholders[1].text_frame
    body.text = "Ship the beta"
    sub = body.add_paragraph()
    sub.text, sub.level = "Invite 50 users", 1
    table_slide = deck.slides.add_slide(deck.slide_layouts[5])
    table_slide.shapes.title.text = "Budget"
    table = table_slide.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(4), Inches(1)).table
    table.cell(0, 0).text, table.cell(0, 1).text = "Item", "Cost"
    table.cell(1, 0).text, table.cell(1, 1).text = "Servers", "900"
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def make_xlsx() -> bytes:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Inventory"
    for row in (["Part", "Count"], ["Bolt", 40], ["Nut", 75]):
        sheet.append(row)
    book.create_sheet("Notes").append(["checked weekly"])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def zip_of(entries: dict[str, str | bytes], first: str | None = None) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        if first:  # EPUB/ODT: the mimetype entry comes first, stored
            archive.writestr(zipfile.ZipInfo("mimetype"), entries.pop("mimetype"), zipfile.ZIP_STORED)
        for name, data in entries.items():
            archive.writestr(name, data)
    return out.getvalue()


def make_epub() -> bytes:
    chapter = ("<?xml version='1.0'?><html xmlns='http://www.w3.org/1999/xhtml'><head><title>c</title></head><body>"
               "<h1>Chapter {n}</h1><p>Text of chapter {n}.</p><ul><li>point {n}a</li><li>point {n}b</li></ul></body></html>")
    opf = ("<?xml version='1.0'?><package xmlns='http://www.idpf.org/2007/opf' version='3.0'>"
           "<metadata xmlns:dc='http://purl.org/dc/elements/1.1/'><dc:title>The Small Book</dc:title></metadata>"
           "<manifest><item id='c1' href='text/c1.xhtml' media-type='application/xhtml+xml'/>"
           "<item id='c2' href='text/c2.xhtml' media-type='application/xhtml+xml'/></manifest>"
           "<spine><itemref idref='c2'/><itemref idref='c1'/></spine></package>")
    container = ("<?xml version='1.0'?><container xmlns='urn:oasis:names:tc:opendocument:xmlns:container' version='1.0'>"
                 "<rootfiles><rootfile full-path='OEBPS/content.opf' media-type='application/oebps-package+xml'/>"
                 "</rootfiles></container>")
    return zip_of({"mimetype": EPUB, "META-INF/container.xml": container, "OEBPS/content.opf": opf,
                   "OEBPS/text/c1.xhtml": chapter.format(n=1), "OEBPS/text/c2.xhtml": chapter.format(n=2)}, first="mimetype")


def make_odt() -> bytes:
    ns = ("xmlns:office='urn:oasis:names:tc:opendocument:xmlns:office:1.0' "
          "xmlns:text='urn:oasis:names:tc:opendocument:xmlns:text:1.0' "
          "xmlns:table='urn:oasis:names:tc:opendocument:xmlns:table:1.0'")
    content = (f"<?xml version='1.0'?><office:document-content {ns}><office:body><office:text>"
               "<text:h text:outline-level='1'>Meeting notes</text:h><text:p>We met<text:s text:c='2'/>on Monday.</text:p>"
               "<text:h text:outline-level='2'>Actions</text:h>"
               "<text:list><text:list-item><text:p>Write the draft</text:p></text:list-item>"
               "<text:list-item><text:p>Book a room</text:p></text:list-item></text:list>"
               "<table:table><table:table-row><table:table-cell><text:p>Who</text:p></table:table-cell>"
               "<table:table-cell><text:p>What</text:p></table:table-cell></table:table-row>"
               "<table:table-row><table:table-cell><text:p>Ana</text:p></table:table-cell>"
               "<table:table-cell><text:p>Draft</text:p></table:table-cell></table:table-row></table:table>"
               "</office:text></office:body></office:document-content>")
    return zip_of({"mimetype": ODT, "content.xml": content}, first="mimetype")


def test_docx_keeps_headings_lists_and_tables(home):
    result = serve(home, make_docx(), DOCX)
    assert result.error is None, result.error
    text = stored(result)
    assert "# Quarterly report" in text and "## Regions" in text
    assert "- North" in text and "- South" in text
    assert "| Region | Revenue |" in text and "| North | 120 |" in text


def test_pptx_slides_become_sections_with_bullets_and_tables(home):
    result = serve(home, make_pptx(), PPTX)
    assert result.error is None, result.error
    text = stored(result)
    assert "## Slide 1: Launch plan" in text and "## Slide 2: Budget" in text
    assert "- Ship the beta" in text and "Invite 50 users" in text
    assert "| Item | Cost |" in text and "| Servers | 900 |" in text


def test_xlsx_sheets_become_tables(home):
    result = serve(home, make_xlsx(), XLSX)
    assert result.error is None, result.error
    text = stored(result)
    assert "## Inventory" in text and "| Part | Count |" in text and "| Nut | 75 |" in text
    assert "## Notes" in text and "checked weekly" in text


def test_epub_chapters_in_spine_order(home):
    result = serve(home, make_epub(), EPUB)
    assert result.error is None, result.error
    text = stored(result)
    assert result.title == "The Small Book"
    assert text.index("# Chapter 2") < text.index("# Chapter 1")
    assert "- point 1a" in text


def test_odt_headings_lists_tables_and_spaces(home):
    result = serve(home, make_odt(), ODT)
    assert result.error is None, result.error
    text = stored(result)
    assert "# Meeting notes" in text and "## Actions" in text and "We met on Monday." in text  # text:s keeps the words apart
    assert "- Write the draft" in text and "| Who | What |" in text and "| Ana | Draft |" in text


def test_a_document_served_as_octet_stream_is_sniffed(home):
    result = serve(home, make_docx(), "application/octet-stream")
    assert result.error is None and "# Quarterly report" in stored(result)


def test_many_entries_are_refused_from_the_directory(home):
    entries = {"word/document.xml": "<x/>"} | {f"junk/{i}": "" for i in range(10_001)}
    result = serve(home, zip_of(entries), DOCX)
    assert result.error.code == "document_invalid" and "10,002 entries" in result.error.message


def test_a_huge_declared_size_is_refused_before_extraction(home):
    bomb = zip_of({"word/document.xml": b"<w>" + b" " * 3_000_000 + b"</w>"})  # 3 MB of spaces: a few KB zipped
    assert len(bomb) < 50_000
    result = serve(home, bomb, DOCX, max_bytes=1_000_000)
    assert result.error.code == "document_invalid"
    assert "unpacks to 3,000,007 bytes, more than web.max_bytes (1,000,000)" in result.error.message


def test_an_entry_lying_about_its_size_is_corrupt_not_inflated(home):
    data = bytearray(zip_of({"mimetype": ODT, "content.xml": b"<a>" + b"a" * 5_000_000 + b"</a>"}, first="mimetype"))
    local = data.find(b"PK\x03\x04", 1)  # the content.xml entry (after mimetype)
    central = data.find(b"PK\x01\x02", data.find(b"PK\x01\x02") + 1)
    struct.pack_into("<I", data, local + 22, 100)
    struct.pack_into("<I", data, central + 24, 100)
    result = serve(home, bytes(data), ODT, max_bytes=1_000_000)
    assert result.error.code == "document_invalid" and "content.xml" in result.error.message


def test_a_corrupt_document_is_a_per_url_error(home):
    result = serve(home, b"PK\x03\x04 not really a zip", DOCX)
    assert result.error.code == "document_invalid" and "not a readable zip file" in result.error.message


def test_without_the_extra_the_error_names_it(home, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "mammoth", None)  # as if webshelf[documents] were not installed
    result = serve(home, make_docx(), DOCX)
    assert result.error.code == "missing_package"
    assert "pip install 'webshelf[documents]'" in result.error.message and "mammoth" in result.error.message


@pytest.mark.parametrize("ctype", ["application/zip", "application/x-zip-compressed"])
@pytest.mark.parametrize("make,expected", [(make_docx, "# Quarterly report"), (make_xlsx, None), (make_epub, None),
                                           (make_odt, None)], ids=["docx", "xlsx", "epub", "odt"])
def test_documents_labelled_zip_are_sniffed_by_their_directory(home, ctype, make, expected):
    body = make()
    result = serve(home, body, ctype)
    assert result.error is None, result.error
    as_own_type = serve(home, body, "application/octet-stream")  # the same conversion as any sniffed body
    assert stored(result) == stored(as_own_type)
    if expected:
        assert expected in stored(result)


@pytest.mark.parametrize("ctype", ["application/zip", "application/x-zip-compressed"])
def test_a_plain_zip_archive_is_refused_after_sniffing_naming_what_it_is(home, ctype):
    result = serve(home, zip_of({"readme.txt": "hello", "data/a.csv": "1,2"}), ctype)
    assert result.error.code == "unsupported_content_type"
    assert result.error.message.startswith(f"unsupported content type {ctype} (a plain zip archive of 2 entries")
    assert "not a DOCX, PPTX, XLSX, EPUB or ODT document" in result.error.message


def test_a_zip_labelled_body_that_is_no_zip_says_so(home):
    result = serve(home, b"<html>not a zip</html>", "application/zip")
    assert result.error.code == "unsupported_content_type" and "the body is not a zip file" in result.error.message


def test_a_zip_labelled_bomb_is_refused_from_the_directory(home):
    bomb = zip_of({"word/document.xml": b"<w>" + b" " * 3_000_000 + b"</w>"})
    result = serve(home, bomb, "application/zip", max_bytes=1_000_000)
    assert result.error.code == "document_invalid" and "unpacks to 3,000,007 bytes" in result.error.message
    many = zip_of({"word/document.xml": "<x/>"} | {f"junk/{i}": "" for i in range(10_001)})
    result = serve(home, many, "application/x-zip-compressed")
    assert result.error.code == "document_invalid" and "10,002 entries" in result.error.message
