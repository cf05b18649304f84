"""The sample corpus in tests/corpus: small, credited, unchanged, and served when ../shared is absent.

A fresh clone has no ``../shared/corpora``; these tests keep the sample that replaces it honest:
every file is credited in ``tests/corpus/NOTICE.md``, is a byte-identical copy of the original
(checked against the full corpora, which CI must have), and is what the loopback server serves
when the full corpora are missing.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests import corpus
from tests.corpus import build

REPO = Path(__file__).resolve().parents[1]
PYDOCS_NAME = re.compile(r"(?<![\w.])((?:library|c-api|whatsnew|howto|reference|extending)__[\w.-]+?\.html)")
SAMPLE_FILES = sorted(p.relative_to(corpus.SAMPLE).as_posix() for p in (corpus.SAMPLE / "pydocs").rglob("*")
                      if p.is_file()) + sorted(p.relative_to(corpus.SAMPLE).as_posix()
                                               for p in (corpus.SAMPLE / "wcxb-dev").rglob("*") if p.is_file())


def test_the_sample_is_small_and_every_file_is_credited():
    size = sum((corpus.SAMPLE / f).stat().st_size for f in SAMPLE_FILES)
    assert size < 1_500_000, f"the sample is {size:,} bytes; keep it well under 2 MB"
    notice = (corpus.SAMPLE / "NOTICE.md").read_text()
    assert "PSF License" in notice and "CC-BY-4.0" in notice and "Murrough Foley" in notice
    assert {"pydocs/COPYRIGHT", "wcxb-dev/LICENSE", "wcxb-dev/metadata.json"} <= set(SAMPLE_FILES)
    ids = sorted(json.loads((corpus.SAMPLE / "wcxb-dev" / "metadata.json").read_text())["files"])
    for file in SAMPLE_FILES:
        if file.startswith("pydocs/") and file.endswith(".html.gz"):
            assert f"`{file}`" in notice, f"{file} is not credited in tests/corpus/NOTICE.md"
    for file_id in ids:
        assert file_id in notice, f"WCXB page {file_id} is not credited in tests/corpus/NOTICE.md"
        assert f"wcxb-dev/html/{file_id}.html.gz" in SAMPLE_FILES
        assert f"wcxb-dev/ground-truth/{file_id}.json" in SAMPLE_FILES
    assert len(SAMPLE_FILES) == 3 + len(build.PYDOCS_PAGES) + 2 * len(ids)  # nothing uncredited


def test_the_sample_is_an_unchanged_copy_of_the_full_corpora():
    corpus.need_full_corpora("to check the sample against the originals")
    shared = corpus.SHARED
    assert (corpus.SAMPLE / "pydocs" / "COPYRIGHT").read_bytes() == (shared / "pydocs" / "COPYRIGHT").read_bytes()
    for name in build.PYDOCS_PAGES:
        packed = (corpus.SAMPLE / "pydocs" / f"{name}.gz").read_bytes()
        assert gzip.decompress(packed) == (shared / "pydocs" / name).read_bytes(), name
    wcxb, original = corpus.SAMPLE / "wcxb-dev", shared / "wcxb-dev"
    ids = build.wcxb_pick(original)  # the rule in build.py still picks exactly these pages
    meta = json.loads((wcxb / "metadata.json").read_text())
    full_meta = json.loads((original / "metadata.json").read_text())
    assert sorted(meta["files"]) == ids
    assert meta == {**full_meta, "files": {i: full_meta["files"][i] for i in ids}}
    assert (wcxb / "LICENSE").read_bytes() == (original / "LICENSE").read_bytes()
    for file_id in ids:
        for rel in (f"html/{file_id}.html.gz", f"ground-truth/{file_id}.json"):
            assert (wcxb / rel).read_bytes() == (original / rel).read_bytes(), rel


def test_every_pydocs_page_the_tests_name_is_in_the_sample():
    """A test that fetches or reads a pydocs page by name must find it on a fresh clone too."""
    named: set[str] = set()
    for test_file in (REPO / "tests").rglob("test_*.py"):
        named |= set(PYDOCS_NAME.findall(test_file.read_text(encoding="utf-8")))
    assert named, "no pydocs page names found: has PYDOCS_NAME gone stale?"
    missing = named - set(build.PYDOCS_PAGES)
    assert not missing, f"add {sorted(missing)} to PYDOCS_PAGES in tests/corpus/build.py and rebuild the sample"


def test_without_the_full_corpora_the_loopback_server_serves_the_sample(tmp_path):
    """A real loopback server in a process that sees no full corpora (as on a fresh clone)."""
    script = """
import gzip, sys, urllib.request
from tests import corpus
from tests.loopback import LoopbackServer
assert not corpus.FULL and corpus.ROOT == corpus.SAMPLE, corpus.SOURCE
with LoopbackServer() as srv:
    for path in ("/pydocs/library__re.html", "/wcxb/0014"):
        with urllib.request.urlopen(srv.url(path)) as r:
            sys.stdout.buffer.write(path.encode() + b" " + str(len(r.read())).encode() + b"\\n")
    try:
        urllib.request.urlopen(srv.url("/pydocs/../conftest.py"))
    except urllib.error.HTTPError as e:
        print("traversal", e.code)
print(corpus.SOURCE)
"""
    env = {**os.environ, "WEBSHELF_TEST_CORPORA": str(tmp_path / "no-corpora-here")}
    out = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True, check=True)
    re_size = len(gzip.decompress((corpus.SAMPLE / "pydocs" / "library__re.html.gz").read_bytes()))
    page_size = len(gzip.decompress((corpus.SAMPLE / "wcxb-dev" / "html" / "0014.html.gz").read_bytes()))
    assert out.stdout.splitlines() == [
        f"/pydocs/library__re.html {re_size}",
        f"/wcxb/0014 {page_size}",
        "traversal 404",
        f"sample at {corpus.SAMPLE} (no full corpora at {tmp_path / 'no-corpora-here'})",
    ]
