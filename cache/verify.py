"""Reconcile the index with ``cache/web/`` after files were deleted, added or changed behind
webshelf's back (``webshelf cache verify [--repair]``).

Checks every row against its file (missing, size or hash mismatch) and every directory entry
against the index (orphans, foreign entries such as symlinks or stray files, stale temp files).
Repair loses nothing that might matter: rows of missing files become tombstones (read_file
still names the URL); an orphan whose bytes match the hash in its name is a webshelf page whose
row was lost, and is adopted; changed files and foreign entries are moved to
``cache/quarantine/`` rather than deleted; only temp files of dead writers are removed.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from webshelf.cache.index import PageRecord
from webshelf.cache.layout import PAGE_SUFFIX, TEMP_PREFIX
from webshelf.cache.store import remove_files, stale_temp_files

if TYPE_CHECKING:
    from webshelf.cache.shelf import Shelf

PAGE_NAME = re.compile(r"^[a-z0-9.-]+-[0-9a-f]{12}-(?P<sha>[0-9a-f]{16})\.md$")


@dataclass
class VerifyReport:
    missing: list[PageRecord] = field(default_factory=list)  # row, no file
    mismatched: list[tuple[PageRecord, str]] = field(default_factory=list)  # row, file differs (why)
    orphans: list[Path] = field(default_factory=list)  # page file, no row
    foreign: list[Path] = field(default_factory=list)  # not a webshelf page (symlink, dir, other name)
    temps: list[Path] = field(default_factory=list)  # temp files of dead writers
    repaired: bool = False
    adopted: list[Path] = field(default_factory=list)
    quarantined: list[tuple[Path, Path]] = field(default_factory=list)
    #: page paths a repair took out of cache/web (quarantined) — as ``PruneReport.paths``, what a
    #: caller that mirrors the directory retracts
    paths: list[Path] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.missing or self.mismatched or self.orphans or self.foreign or self.temps)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb", buffering=0) as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _check_rows(shelf: "Shelf", report: VerifyReport) -> set[str]:
    known: set[str] = set()
    for rec in shelf.index.all():
        known.add(rec.name)
        path = shelf.web_dir / rec.name
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            report.missing.append(rec)
            continue
        if not stat.S_ISREG(st.st_mode):
            report.missing.append(rec)  # replaced by a symlink or a directory: listed as foreign too
        elif st.st_size != rec.bytes:
            report.mismatched.append((rec, f"size {st.st_size:,} bytes, index says {rec.bytes:,}"))
        elif _sha256(path) != rec.sha256:
            report.mismatched.append((rec, "content hash differs from the index"))
    return known


def _check_entries(shelf: "Shelf", known: set[str], report: VerifyReport) -> None:
    stale = set(stale_temp_files(shelf.web_dir))
    with os.scandir(shelf.web_dir) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            path = Path(entry.path)
            if entry.name.startswith(TEMP_PREFIX):
                if path in stale:
                    report.temps.append(path)
                continue
            if not entry.is_file(follow_symlinks=False) or not entry.name.endswith(PAGE_SUFFIX) \
                    or not PAGE_NAME.match(entry.name):
                report.foreign.append(path)
            elif entry.name not in known:
                report.orphans.append(path)


def _quarantine(shelf: "Shelf", path: Path, report: VerifyReport) -> None:
    target_dir = shelf.layout.root / "quarantine"
    os.makedirs(target_dir, mode=0o755, exist_ok=True)
    target = target_dir / f"{time.strftime('%Y%m%dT%H%M%S')}-{path.name}"
    n = 1
    while os.path.lexists(target):
        target = target_dir / f"{time.strftime('%Y%m%dT%H%M%S')}-{n}-{path.name}"
        n += 1
    os.rename(path, target)  # moves a symlink itself, never its target
    report.quarantined.append((path, target))


def _adopt(shelf: "Shelf", path: Path, report: VerifyReport) -> bool:
    data = path.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    m = PAGE_NAME.match(path.name)
    if not m or not sha.startswith(m["sha"]):
        return False
    text = data.decode("utf-8", errors="replace")
    st = os.stat(path)
    shelf.index.record(PageRecord(
        name=path.name, url="", final_url=None, title=None, sha256=sha, chars=len(text),
        lines=text.count("\n") + (0 if text.endswith("\n") or not text else 1), bytes=len(data),
        fetched_at=st.st_mtime, last_access=st.st_mtime, backend=None, content_type=None, url_key="",
    ))
    report.adopted.append(path)
    return True


def verify(shelf: "Shelf", *, repair: bool = False) -> VerifyReport:
    """Compare index and directory under the exclusive lock; with ``repair``, reconcile them."""
    report = VerifyReport()
    with shelf.lock.exclusive(), shelf.db_lock:
        known = _check_rows(shelf, report)
        _check_entries(shelf, known, report)
        if not repair:
            return report
        gone: list[Path] = []
        shelf.index.remove(report.missing, "missing from disk (cache verify)")
        changed = [rec for rec, _ in report.mismatched]
        shelf.index.remove(changed, "changed on disk (cache verify)")
        for rec in changed:
            _quarantine(shelf, shelf.web_dir / rec.name, report)
            gone.append(shelf.web_dir / rec.name)
        for path in report.orphans:
            if not _adopt(shelf, path, report):
                _quarantine(shelf, path, report)
                gone.append(path)
        for path in report.foreign:
            _quarantine(shelf, path, report)
            gone.append(path)
        remove_files(shelf.web_dir, [p.name for p in report.temps])
        report.repaired = True
        report.paths = gone
    return report
