"""Keep the cache bounded: TTL expiry, a size cap with LRU eviction, and temp-file sweeping.

One pass: pages fetched longer ago than ``ttl`` go first; then, if the remaining bytes exceed
``max_total_bytes``, the least recently used pages (by last extract or read_file) go until the
total is under ``low_water`` × the cap, so a busy cache does not evict on every write. Pages in
``protect`` — the ones the current call is about to hand out — are never removed, even when a
single one is larger than the cap (it goes on a later pass). Rows are dropped (leaving
tombstones) before files are unlinked, all under the cache's exclusive lock, so a crash
leaves at worst an unindexed file for ``cache verify``, never a row pointing at nothing.

The report says which page files went (``PruneReport.paths``): whoever mirrors ``cache/web/``
elsewhere retracts exactly those — ``web_extract`` from the runtimes of its call
(mounts/publish.py ``retract_all``). ``cache/`` sits below ``mounts/`` and announces nothing
itself: no process-wide subscription, the caller that evicts decides who must hear of it.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from webshelf.cache.index import PageRecord
from webshelf.cache.store import remove_files, stale_temp_files

if TYPE_CHECKING:
    from webshelf.cache.shelf import Shelf

EXPIRED = "expired (cache.ttl)"
OVER_CAP = "over the size cap (cache.max_total_bytes)"


@dataclass(frozen=True)
class EvictionPolicy:
    ttl: float  # seconds since fetch; 0 keeps pages forever
    max_total_bytes: int
    low_water: float = 0.9  # evict down to this share of the cap


@dataclass
class PruneReport:
    removed: list[tuple[PageRecord, str]] = field(default_factory=list)  # (page, reason)
    #: the page files this pass removed — what a caller retracts from the sandboxes it mirrors to
    paths: list[Path] = field(default_factory=list)
    temp_removed: list[Path] = field(default_factory=list)
    failed: list[tuple[Path, str]] = field(default_factory=list)
    skipped: bool = False  # another process was pruning; nothing was done
    complete: bool = True  # False when ``max_removals`` stopped the pass early
    dry_run: bool = False

    @property
    def freed_bytes(self) -> int:
        return sum(rec.bytes for rec, _ in self.removed)


def plan(shelf: "Shelf", policy: EvictionPolicy, *, protect: Collection[str] = (), now: float | None = None,
         max_removals: int | None = None) -> tuple[list[tuple[PageRecord, str]], bool]:
    """Which pages one pass removes and why; the flag is False when ``max_removals`` cut it short."""
    now = time.time() if now is None else now
    index = shelf.index
    chosen: list[tuple[PageRecord, str]] = []
    names: set[str] = set()
    limit = None if max_removals is None else max_removals + len(protect) + 1  # +1: tell 'more left'

    def full() -> bool:
        return max_removals is not None and len(chosen) >= max_removals

    if policy.ttl > 0:
        for rec in index.fetched_before(now - policy.ttl, limit):
            if full():
                return chosen, False
            if rec.name not in protect:
                chosen.append((rec, EXPIRED))
                names.add(rec.name)
    total = index.totals().bytes - sum(rec.bytes for rec, _ in chosen)
    if total <= policy.max_total_bytes:
        return chosen, True
    target = policy.max_total_bytes * policy.low_water
    for rec in index.least_recently_used():
        if total <= target:
            break
        if rec.name in names or rec.name in protect:
            continue
        if full():
            return chosen, False
        chosen.append((rec, OVER_CAP))
        names.add(rec.name)
        total -= rec.bytes
    return chosen, True


def prune(shelf: "Shelf", policy: EvictionPolicy, *, protect: Collection[str] = (), dry_run: bool = False,
          max_removals: int | None = None, block: bool = True, sweep_temps: bool = True,
          now: float | None = None) -> PruneReport:
    """Run one eviction pass (see the module docstring). ``block=False`` gives up at once
    (``skipped``) when another process holds the lock; ``max_removals`` bounds the work."""
    report = PruneReport(dry_run=dry_run)
    with shelf.lock.exclusive(block=block) as held, shelf.db_lock:
        if not held:
            report.skipped = True
            return report
        chosen, report.complete = plan(shelf, policy, protect=protect, now=now, max_removals=max_removals)
        temps = stale_temp_files(shelf.web_dir, now=now) if sweep_temps else []
        if dry_run:
            report.removed = chosen
            report.paths = [shelf.web_dir / rec.name for rec, _ in chosen]
            report.temp_removed = temps
            return report
        for reason in (EXPIRED, OVER_CAP):
            group = [rec for rec, why in chosen if why == reason]
            if group:
                report.removed += [(rec, reason) for rec in shelf.index.remove(group, reason)]
        removed, failed = remove_files(shelf.web_dir, [rec.name for rec, _ in report.removed])
        report.paths = removed
        report.failed = [(path, exc.strerror or str(exc)) for path, exc in failed]
        temps_removed, temps_failed = remove_files(shelf.web_dir, [p.name for p in temps])
        report.temp_removed = temps_removed
        report.failed += [(path, exc.strerror or str(exc)) for path, exc in temps_failed]
    return report


def clear(shelf: "Shelf") -> PruneReport:
    """Remove every stored page (tombstones kept, so read_file still names the URLs), every
    temp file of a dead writer, and the hit/miss counters."""
    report = PruneReport()
    with shelf.lock.exclusive(), shelf.db_lock:
        records = shelf.index.all()
        report.removed = [(rec, "cleared (cache clear)") for rec in shelf.index.remove(records, "cleared (cache clear)")]
        report.paths, failed = remove_files(shelf.web_dir, [rec.name for rec, _ in report.removed])
        report.temp_removed, temp_failed = remove_files(shelf.web_dir, [p.name for p in stale_temp_files(shelf.web_dir)])
        report.failed = [(path, exc.strerror or str(exc)) for path, exc in failed + temp_failed]
        shelf.index.reset_counters()
    return report
