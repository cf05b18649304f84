"""Where the tests' real pages come from: the full shared corpora, else the sample in this folder.

The full corpora (``../shared/corpora`` beside the repo: 32 pydocs pages, 1,358 WCXB pages) are
optional. Without them, a fresh clone uses the small sample kept here (6 pydocs pages, 21 WCXB
pages; see ``NOTICE.md`` for sources and licences, ``build.py`` for how it was chosen), so
README's test command passes anywhere. The loopback server (``tests/loopback.py``) and the tests
read pages only through this module, so they never care which of the two they got.

A test that genuinely needs the full corpora calls ``need_full_corpora()``: it skips with the
reason outside CI and fails in CI (``WEBSHELF_REQUIRE_REAL=1``, see ``tests/components.py``).

``WEBSHELF_TEST_CORPORA`` names another folder holding the full corpora, or is ``sample`` to run
on the sample even where ``../shared/corpora`` exists (to see what a fresh clone sees).
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

from tests.components import need

SAMPLE = Path(__file__).resolve().parent
_CHOICE = os.environ.get("WEBSHELF_TEST_CORPORA", "")
SHARED = Path(_CHOICE) if _CHOICE not in ("", "sample") else SAMPLE.parents[2] / "shared" / "corpora"


def full_corpora_at(shared: Path) -> bool:
    """Both corpora the tests read are in ``shared``."""
    return (shared / "pydocs").is_dir() and (shared / "wcxb-dev").is_dir()


FULL = _CHOICE != "sample" and full_corpora_at(SHARED)
ROOT = SHARED if FULL else SAMPLE
PYDOCS = ROOT / "pydocs"
WCXB = ROOT / "wcxb-dev"
if FULL:
    SOURCE = f"full corpora at {SHARED}"
elif _CHOICE == "sample":
    SOURCE = f"sample at {SAMPLE} (WEBSHELF_TEST_CORPORA=sample)"
else:
    SOURCE = f"sample at {SAMPLE} (no full corpora at {SHARED})"


def need_full_corpora(what: str) -> None:
    """Skip (in CI: fail) the calling test unless the full corpora are present."""
    if _CHOICE == "sample":
        how = "WEBSHELF_TEST_CORPORA=sample chose the sample; unset it to use the full corpora"
    else:
        how = (f"put them at {SHARED} (../shared/corpora beside the repo, see tests/corpus/NOTICE.md) "
               "or name their folder in WEBSHELF_TEST_CORPORA")
    need(FULL, f"the full corpora ({what})", how)


def pydocs_names() -> list[str]:
    """The pydocs page names available (``library__re.html``, …), sorted."""
    return sorted(p.name.removesuffix(".gz") for p in PYDOCS.iterdir() if p.name.endswith((".html", ".html.gz")))


def pydocs_bytes(name: str) -> bytes | None:
    """A pydocs page as served (the full corpus keeps it plain, the sample gzipped), or None."""
    for file in (PYDOCS / name, PYDOCS / f"{name}.gz"):
        if file.parent == PYDOCS and file.is_file():
            data = file.read_bytes()
            return gzip.decompress(data) if file.suffix == ".gz" else data
    return None


def pydocs_text(name: str) -> str:
    data = pydocs_bytes(name)
    if data is None:
        raise FileNotFoundError(f"pydocs page {name!r} is not in the {SOURCE}; "
                                "add it to PYDOCS_PAGES in tests/corpus/build.py and rebuild the sample")
    return data.decode("utf-8")


def wcxb_metadata() -> dict[str, dict]:
    """WCXB file id → its metadata (``page_type``, ``domain``, …)."""
    return json.loads((WCXB / "metadata.json").read_text())["files"]


def wcxb_html(file_id: str) -> bytes | None:
    """A WCXB page as served, or None."""
    file = WCXB / "html" / f"{file_id}.html.gz"
    if file.parent == WCXB / "html" and file.is_file():
        return gzip.decompress(file.read_bytes())
    return None


def wcxb_record(file_id: str) -> dict:
    """A WCXB page's ground-truth record (``ground_truth``, ``title``, ``url``)."""
    return json.loads((WCXB / "ground-truth" / f"{file_id}.json").read_text())
