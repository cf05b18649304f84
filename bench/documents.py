"""Documents → Markdown: webshelf's per-format converters vs Microsoft's markitdown, same files, same run.

    .venv/bin/python bench/documents.py [--rounds 20] [--markitdown-python /path/to/venv/bin/python]

The files are the ones tests/core/test_documents.py makes (DOCX, PPTX, XLSX, EPUB, ODT). For each,
the table shows the median conversion time and whether the Markdown kept the structure the tests
check (headings, list items, table rows). markitdown runs in its own interpreter (it is not a
webshelf dependency: 85 MB of downloads with its docx/pptx/xlsx extras), timed inside that process.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

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


def kept(text: str, needles: list[str]) -> str:
    squeezed = "\n".join(" ".join(line.split()) for line in text.splitlines())
    return f"{sum(n in squeezed for n in needles)}/{len(needles)}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--markitdown-python", default=None)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
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


if __name__ == "__main__":
    main()
