"""Rebuild the small test corpus in this folder from the full shared corpora.

    .venv/bin/python -m tests.corpus.build        # needs ../shared/corpora beside the repo

The sample is what lets ``scripts/test`` pass on a fresh clone that has no ``../shared``; this
script records exactly which pages it holds and why, so it can be rebuilt (or grown) the same
way. Files are copied byte for byte (pydocs pages are gzipped, as the WCXB pages already are,
to keep the sample small); ``tests/test_corpus.py`` checks they still match the originals.
"""

from __future__ import annotations

import ast
import gzip
import json
import shutil
import sys
from pathlib import Path

from tests.corpus import SAMPLE, SHARED

# The pydocs pages tests fetch by name (tests/core/test_extract.py and friends): long pages
# for truncation, paging and storage; library__re.html also for conversion and hosted backends.
PYDOCS_PAGES = [
    "c-api__typeobj.html", "library__logging.html", "library__os.html",
    "library__re.html", "library__sys.html", "whatsnew__3.11.html",
]

# WCXB: per page type (7 types), the first WCXB_PER_TYPE pages in id order whose page and ground
# truth together are under WCXB_MAX_BYTES and which list at least 3 required ("with") snippets.
# Small pages keep the sample small; 21 pages with ~100 snippets keep the snippet check meaningful.
WCXB_PER_TYPE = 3
WCXB_MAX_BYTES = 40_000
WCXB_MIN_SNIPPETS = 3


def _with_snippets(record: dict) -> list[str]:
    truth = record["ground_truth"]
    if isinstance(truth, str):
        truth = ast.literal_eval(truth)
    return [s for s in truth.get("with") or [] if s.strip()]


def wcxb_pick(wcxb: Path) -> list[str]:
    """The WCXB file ids of the sample, by the rule above."""
    meta = json.loads((wcxb / "metadata.json").read_text())["files"]
    picked: dict[str, list[str]] = {}
    for file_id in sorted(meta):
        html, truth = wcxb / "html" / f"{file_id}.html.gz", wcxb / "ground-truth" / f"{file_id}.json"
        if html.stat().st_size + truth.stat().st_size >= WCXB_MAX_BYTES:
            continue
        if len(_with_snippets(json.loads(truth.read_text()))) < WCXB_MIN_SNIPPETS:
            continue
        bucket = picked.setdefault(meta[file_id]["page_type"], [])
        if len(bucket) < WCXB_PER_TYPE:
            bucket.append(file_id)
    return sorted(file_id for ids in picked.values() for file_id in ids)


def build(shared: Path = SHARED, sample: Path = SAMPLE) -> None:
    pydocs, wcxb = sample / "pydocs", sample / "wcxb-dev"
    for folder in (pydocs, wcxb):
        shutil.rmtree(folder, ignore_errors=True)
    (wcxb / "html").mkdir(parents=True)
    (wcxb / "ground-truth").mkdir()
    pydocs.mkdir()
    shutil.copyfile(shared / "pydocs" / "COPYRIGHT", pydocs / "COPYRIGHT")
    for name in PYDOCS_PAGES:
        data = (shared / "pydocs" / name).read_bytes()
        # mtime=0: the same page always gives the same bytes (no needless diffs on rebuild)
        (pydocs / f"{name}.gz").write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    ids = wcxb_pick(shared / "wcxb-dev")
    shutil.copyfile(shared / "wcxb-dev" / "LICENSE", wcxb / "LICENSE")
    for file_id in ids:
        shutil.copyfile(shared / "wcxb-dev" / "html" / f"{file_id}.html.gz", wcxb / "html" / f"{file_id}.html.gz")
        shutil.copyfile(shared / "wcxb-dev" / "ground-truth" / f"{file_id}.json",
                        wcxb / "ground-truth" / f"{file_id}.json")
    meta = json.loads((shared / "wcxb-dev" / "metadata.json").read_text())
    meta["files"] = {file_id: meta["files"][file_id] for file_id in ids}
    (wcxb / "metadata.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"pydocs: {len(PYDOCS_PAGES)} pages; wcxb-dev: {len(ids)} pages: {' '.join(ids)}")


if __name__ == "__main__":
    if not (SHARED / "pydocs").is_dir() or not (SHARED / "wcxb-dev").is_dir():
        sys.exit(f"the full corpora are not at {SHARED}; put ../shared/corpora beside the repo first")
    build()
