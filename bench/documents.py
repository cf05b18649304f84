"""Documents → Markdown: webshelf's per-format converters vs Microsoft's markitdown, same files, same run.

    .venv/bin/python bench/documents.py [--rounds 20] [--markitdown-python /path/to/venv/bin/python]
                                        [--pdf-only] [--pdf-timeout 120]

The files are the ones tests/core/test_documents.py makes (DOCX, PPTX, XLSX, EPUB, ODT). For each,
the table shows the median conversion time and whether the Markdown kept the structure the tests
check (headings, list items, table rows). markitdown runs in its own interpreter (it is not a
webshelf dependency: 85 MB of downloads with its docx/pptx/xlsx extras), timed inside that process.

PDF (issue 17 §3: "PDF stays on its current path unless the converter is better on the tests"):
PDFs generated here (headings, paragraphs, lists, a table-like layout, several pages, a 200-page
one) and tests/pdfgen.py's hostile shared-stream PDF go through webshelf's product path
(``to_markdown``: pypdf, core/convert/pdf_text.py) and markitdown's (pdfplumber + pdfminer). Each
(converter, file) runs in a fresh process (idle = RSS after imports, peak = the process's high-water
mark, VmHWM), and under a timeout,
so a hostile file costs at most ``--pdf-timeout``. Completeness is measured against the text the
generator drew: the share of its words found in the output in order (longest common subsequence,
difflib) and the share of its lines found in order (whitespace-squeezed, ``|`` cell bars ignored);
``#`` and ``|`` count the headings written as Markdown headings and table rows as Markdown rows.
"""

from __future__ import annotations

import argparse
import difflib
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests import pdfgen  # noqa: E402
from tests.core import test_documents as made  # noqa: E402
from webshelf.core.convert.documents import DOCX, EPUB, ODT, PPTX, XLSX, document_to_markdown  # noqa: E402

FILES = {"docx": (made.make_docx, DOCX, ["# Quarterly report", "- North", "| Region"]),
         "pptx": (made.make_pptx, PPTX, ["Launch plan", "Ship the beta", "| Item"]),
         "xlsx": (made.make_xlsx, XLSX, ["Inventory", "| Part"]),
         "epub": (made.make_epub, EPUB, ["# Chapter 1", "- point 1a"]),
         "odt": (made.make_odt, ODT, ["# Meeting notes", "- Write the draft", "| Who"])}

MARKITDOWN = """
import json, statistics, sys, time
from markitdown import MarkItDown
md = MarkItDown()
out = {}
for path in sys.argv[2:]:
    times, text = [], ""
    for _ in range(int(sys.argv[1])):
        start = time.perf_counter()
        try:
            text = md.convert(path).text_content
        except Exception as exc:
            text = f"ERROR {type(exc).__name__}: {exc}"
        times.append(time.perf_counter() - start)
    out[path] = [statistics.median(times) * 1000, text]
print(json.dumps(out))
"""


PDF_WORKER = """
import json, statistics, sys, time
tool, rounds, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
body = open(path, "rb").read()
if tool == "webshelf":
    sys.path.insert(0, sys.argv[4])
    from webshelf.core.convert.by_type import to_markdown
    convert = lambda: to_markdown(body, "application/pdf", "file:///sample.pdf").markdown
else:
    from markitdown import MarkItDown
    md = MarkItDown()
    convert = lambda: md.convert(path).text_content
def status(key):  # /proc/self/status, kB: VmHWM is this exec's own peak (ru_maxrss keeps the parent's at fork)
    return int(next(l for l in open("/proc/self/status") if l.startswith(key)).split()[1])
idle = status("VmRSS:")  # after imports
times, text = [], ""
for _ in range(rounds):
    start = time.perf_counter()
    try:
        text = convert()
    except Exception as exc:
        text = f"ERROR {type(exc).__name__}: {exc}"
    times.append(time.perf_counter() - start)
peak = status("VmHWM:")
print(json.dumps({"ms": statistics.median(times) * 1000, "idle_kb": idle, "peak_kb": peak, "text": text}))
"""


def _syllable_words(rng: random.Random, count: int) -> list[str]:
    """Pronounceable made-up words: a large vocabulary keeps the in-order match unambiguous."""
    parts = ["ka", "lo", "mi", "ru", "ten", "sa", "vo", "pel", "dra", "qui", "ne", "bor", "fi", "gal", "sto", "wen"]
    return ["".join(rng.choice(parts) for _ in range(rng.randint(2, 4))) for _ in range(count)]


def _sentence(rng: random.Random, vocab: list[str], words: int) -> str:
    return " ".join(rng.choice(vocab) for _ in range(words))


def make_pdf_document(pages: int, seed: int, *, table_rows: int = 6) -> tuple[bytes, list[tuple[str, str]]]:
    """(PDF bytes, the drawn lines in reading order as (kind, text)): each page has a 16 pt bold
    heading, two wrapped paragraphs, a bulleted and a numbered list and, on every other page, a
    4-column table drawn cell by cell at fixed x positions (what a PDF "table" is)."""
    rng = random.Random(seed)
    vocab = _syllable_words(rng, 3000)
    drawn: list[list[tuple[str, str, float, float, float, bool]]] = []  # kind, text, size, x, y, bold
    source: list[tuple[str, str]] = []
    for number in range(pages):
        ops, y = [], 740.0

        def line(kind: str, text: str, size: float = 11, x: float = 72, bold: bool = False) -> None:
            nonlocal y
            ops.append((kind, text, size, x, y, bold))
            source.append((kind, text))
            y -= size * 1.5

        line("heading", f"{number + 1}. {_sentence(rng, vocab, 4).title()}", 16, bold=True)
        for _ in range(2):
            for _ in range(rng.randint(3, 5)):
                line("text", _sentence(rng, vocab, 8))
            y -= 8
        for item in range(3):
            line("list", f"- {_sentence(rng, vocab, 5)}", x=90)
        for item in range(3):
            line("list", f"{item + 1}. {_sentence(rng, vocab, 5)}", x=90)
        if number % 2 == 0:
            y -= 8
            header = ["Code", "Region", "Owner", "Amount"]
            for row in range(table_rows + 1):
                cells = header if row == 0 else [f"R{number}-{row}", rng.choice(vocab), rng.choice(vocab),
                                                 f"{rng.randint(10, 99_999):,}"]
                for col, cell in enumerate(cells):
                    ops.append(("cell", cell, 11, 72 + 120 * col, y, row == 0))
                source.append(("row", " ".join(cells)))
                y -= 16
        drawn.append(ops)
    return _write_pdf(drawn), source


def _write_pdf(drawn: list[list[tuple]]) -> bytes:
    """A valid PDF with one uncompressed content stream per page (Helvetica, Helvetica-Bold)."""
    esc = pdfgen.escape
    n = len(drawn)
    objs: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{' '.join(f'{5 + 2 * i} 0 R' for i in range(n))}] /Count {n} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>",
    ]
    for i, ops in enumerate(drawn):
        stream = "\n".join(f"BT /{'F2' if bold else 'F1'} {size:g} Tf {x:g} {y:g} Td ({esc(text)}) Tj ET"
                            for _kind, text, size, x, y, bold in ops).encode("latin-1")
        objs.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R "
                    f"/F2 4 0 R >> >> /Contents {6 + 2 * i} 0 R >>".encode())
        objs.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    return pdfgen.assemble(objs)


def _squeeze(text: str) -> str:
    return " ".join(text.replace("|", " ").split())


def completeness(source: list[tuple[str, str]], text: str) -> dict[str, str]:
    """Share of the source's words and lines found in ``text`` in order, and the Markdown
    structure kept (headings as ``#`` lines, table rows as ``|`` rows)."""
    src_words = _squeeze(" ".join(t for _k, t in source)).split()
    out_words = _squeeze(text).split()
    matcher = difflib.SequenceMatcher(None, src_words, out_words, autojunk=False)
    found = sum(block.size for block in matcher.get_matching_blocks())
    flat, cursor, lines = _squeeze(text), 0, 0
    for _kind, line in source:
        at = flat.find(_squeeze(line), cursor)
        if at >= 0:
            lines, cursor = lines + 1, at + len(_squeeze(line))
    out_lines = [" ".join(raw.split()) for raw in text.splitlines()]
    marked = {" ".join(raw.lstrip("#").split()) for raw in out_lines if raw.startswith("#")}
    rows = {_squeeze(raw) for raw in out_lines if raw.startswith("|")}
    headings = [t for k, t in source if k == "heading"]
    table = [t for k, t in source if k == "row"]
    return {"words": f"{found / len(src_words):.1%}", "lines": f"{lines / len(source):.1%}",
            "#": f"{sum(h in marked for h in headings)}/{len(headings)}",
            "|": f"{sum(_squeeze(r) in rows for r in table)}/{len(table)}" if table else "-"}


def _run_pdf(python: str, tool: str, rounds: int, path: Path, timeout: float) -> dict:
    root = str(Path(__file__).resolve().parents[1])
    try:
        run = subprocess.run([python, "-c", PDF_WORKER, tool, str(rounds), str(path), root],
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"timeout": timeout}
    if run.returncode != 0:
        return {"error": run.stderr.strip().splitlines()[-1] if run.stderr.strip() else f"exit {run.returncode}"}
    return json.loads(run.stdout.strip().splitlines()[-1])


def pdf_table(rounds: int, markitdown_python: str | None, timeout: float, folder: Path) -> None:
    """One row per (file, converter): median ms, peak RSS, completeness."""
    files = {"3 pages": make_pdf_document(3, 1), "table page": make_pdf_document(1, 2, table_rows=25),
             "12 pages": make_pdf_document(12, 3), "200 pages": make_pdf_document(200, 4)}
    hostile = {"hostile 1p": pdfgen.make_shared_stream_pdf(1, 100_000),
               "hostile": pdfgen.make_shared_stream_pdf(200, 100_000)}  # the test's file (issue 16)
    tools = [("webshelf", sys.executable)] + ([("markitdown", markitdown_python)] if markitdown_python else [])
    print(f"\n{'pdf':11} {'bytes':>9} {'converter':10} {'ms':>10} {'idle MB':>8} {'peak MB':>8} "
          f"{'words':>7} {'lines':>7} {'#':>7} {'|':>7}")
    for name, (body, source) in [*files.items(), *((k, (v, None)) for k, v in hostile.items())]:
        path = folder / f"{name.replace(' ', '_')}.pdf"
        path.write_bytes(body)
        for tool, python in tools:
            got = _run_pdf(python, tool, 1 if name == "200 pages" or name.startswith("hostile") else rounds, path, timeout)
            head = f"{name:11} {len(body):>9,} {tool:10}"
            if "timeout" in got or "error" in got:
                print(f"{head} {'timeout ' + format(timeout, 'g') + ' s' if 'timeout' in got else got['error']}")
                continue
            mem = f"{got['idle_kb'] / 1024:>8.1f} {got['peak_kb'] / 1024:>8.1f}"
            if got["text"].startswith("ERROR"):
                print(f"{head} {got['ms']:>10.1f} {mem} {got['text'][:60]}")
            elif source is None:  # hostile: the text is pages of "ab"; report its size and any stop note
                note = "(stopped with a note)" if "Stopped after" in got["text"] else ""
                print(f"{head} {got['ms']:>10.1f} {mem} {len(got['text']):,} chars {note}")
            else:
                c = completeness(source, got["text"])
                print(f"{head} {got['ms']:>10.1f} {mem} {c['words']:>7} {c['lines']:>7} {c['#']:>7} {c['|']:>7}")


def kept(text: str, needles: list[str]) -> str:
    squeezed = "\n".join(" ".join(line.split()) for line in text.splitlines())
    return f"{sum(n in squeezed for n in needles)}/{len(needles)}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--markitdown-python", default=None)
    parser.add_argument("--pdf-only", action="store_true", help="only the PDF table")
    parser.add_argument("--pdf-timeout", type=float, default=120.0, help="seconds per (converter, PDF) process")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    if args.pdf_only:
        pdf_table(args.rounds, args.markitdown_python, args.pdf_timeout, folder)
        return
    paths = {}
    for name, (make, _mtype, _needles) in FILES.items():
        paths[name] = folder / f"sample.{name}"
        paths[name].write_bytes(make())
    others = {}
    if args.markitdown_python:
        run = subprocess.run([args.markitdown_python, "-c", MARKITDOWN, str(args.rounds), *map(str, paths.values())],
                             capture_output=True, text=True, check=True)
        others = json.loads(run.stdout.strip().splitlines()[-1])
    print(f"{'file':6} {'bytes':>7} {'webshelf ms':>12} {'kept':>5} {'markitdown ms':>14} {'kept':>5} {'ratio':>6}")
    for name, (_make, mtype, needles) in FILES.items():
        body = paths[name].read_bytes()
        times, text = [], ""
        for _ in range(args.rounds):
            start = time.perf_counter()
            text, _title = document_to_markdown(body, mtype, "file:///sample", max_bytes=10_000_000)
            times.append(time.perf_counter() - start)
        ours = statistics.median(times) * 1000
        theirs = others.get(str(paths[name]))
        if theirs:
            their_kept = "err" if theirs[1].startswith("ERROR") else kept(theirs[1], needles)
            print(f"{name:6} {len(body):>7} {ours:>12.2f} {kept(text, needles):>5} {theirs[0]:>14.2f} {their_kept:>5} "
                  f"{ours / theirs[0]:>6.2f}")
        else:
            print(f"{name:6} {len(body):>7} {ours:>12.2f} {kept(text, needles):>5} {'-':>14} {'-':>5} {'-':>6}")
    pdf_table(args.rounds, args.markitdown_python, args.pdf_timeout, folder)


if __name__ == "__main__":
    main()
