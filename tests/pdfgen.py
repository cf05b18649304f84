"""Write small, valid PDFs with real text (Helvetica, one text line per page) for tests."""

from __future__ import annotations


def escape(text: str) -> str:
    """``text`` as the inside of a PDF string literal."""
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def assemble(objs: list[bytes], *, info: int | None = None) -> bytes:
    """A PDF file of ``objs`` (object 1 the catalog): numbered objects, the xref table, the trailer."""
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    trailer = f"<< /Size {len(objs) + 1} /Root 1 0 R" + (f" /Info {info} 0 R" if info else "") + " >>"
    out += f"trailer\n{trailer}\nstartxref\n{xref}\n%%EOF\n".encode()
    return out


def make_pdf(pages: list[str], title: str | None = None) -> bytes:
    n = len(pages)
    objs: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{' '.join(f'{4 + 2 * i} 0 R' for i in range(n))}] /Count {n} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for i, text in enumerate(pages):
        stream = f"BT /F1 12 Tf 72 720 Td ({escape(text)}) Tj ET".encode("latin-1")
        objs.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
                    f"/Contents {5 + 2 * i} 0 R >>".encode())
        objs.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    info = None
    if title is not None:
        objs.append(f"<< /Title ({escape(title)}) >>".encode("latin-1"))
        info = len(objs)
    return assemble(objs, info=info)


def make_shared_stream_pdf(pages: int, operators: int, *, shared_resources: bool = True) -> bytes:
    """A small hostile PDF (issue 16): ``pages`` pages that all draw one Flate-compressed content
    stream of ``operators`` text-showing operators — a few KB that cost seconds per page to read."""
    import zlib

    stream = zlib.compress(b"BT /F1 12 Tf 72 720 Td " + b"(ab) Tj " * operators + b"ET", 9)
    resources = "4 0 R" if shared_resources else "<< /Font << /F1 3 0 R >> >>"
    objs: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{' '.join(f'{6 + i} 0 R' for i in range(pages))}] /Count {pages} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Font << /F1 3 0 R >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    objs += [f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources {resources} /Contents 5 0 R >>".encode()
             for _ in range(pages)]
    return assemble(objs)
