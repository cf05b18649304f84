"""Open an office document or e-book (a zip) only after its directory says it is not a bomb.

DOCX, PPTX, XLSX, EPUB and ODT are zip files, and a 40 KB zip can declare gigabytes of XML or a
million entries. Before any entry is decompressed — by webshelf or by the converter libraries —
the central directory is read and checked: at most ``MAX_ENTRIES`` entries, and the declared
uncompressed sizes together at most the byte cap (``web.max_bytes``, the same cap as any body).
An entry that lies about its size cannot get past that either: CPython's ``zipfile`` never
returns more than the declared size of an entry and then fails its CRC check, which becomes
``document_invalid`` like any corrupt file.
"""

from __future__ import annotations

import io
import zipfile

from webshelf.errors import DocumentError

MAX_ENTRIES = 10_000
CHUNK = 1 << 16


def open_zip(body: bytes, url: str, *, max_bytes: int, kind: str) -> zipfile.ZipFile:
    """The zip of a document, checked from its directory; ``DocumentError`` saying why not."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(body))
        entries = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError) as exc:
        raise DocumentError(f"{url}: this {kind} is not a readable zip file ({exc}); the file is corrupt or "
                            "truncated", url=url) from None
    if len(entries) > MAX_ENTRIES:
        raise DocumentError(f"{url}: refused: this {kind} has {len(entries):,} entries, more than the "
                            f"{MAX_ENTRIES:,} a document may have (a zip bomb?)", url=url)
    declared = sum(max(0, e.file_size) for e in entries)
    if declared > max_bytes:
        raise DocumentError(f"{url}: refused: this {kind} unpacks to {declared:,} bytes, more than web.max_bytes "
                            f"({max_bytes:,}); raise web.max_bytes to read it if you trust it", url=url)
    return archive


def read_entry(archive: zipfile.ZipFile, name: str, url: str) -> bytes:
    """One entry's bytes (never more than its declared size; a lying entry fails its CRC)."""
    try:
        with archive.open(name) as handle:
            return handle.read()
    except KeyError:
        raise DocumentError(f"{url}: the document has no {name!r} entry; it is corrupt or not what its type says",
                            url=url) from None
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise DocumentError(f"{url}: the entry {name!r} of the document is corrupt ({exc})", url=url) from None


__all__ = ["MAX_ENTRIES", "open_zip", "read_entry"]
