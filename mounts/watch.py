"""Live sync: keep remote mirrors in step when *other* processes write the host cache.

``publish`` covers pages this process stores; ``LiveSync`` covers everything else (another
webshelf process, eviction by the cache's lifecycle). A watchdog (inotify) observer on
``cache/web`` marks a file ready when it is closed after writing or renamed into place (the
cache's atomic store is a rename), and gone when deleted or renamed away. Changes are batched:
a batch goes out after ``debounce_s`` of quiet, or at the latest ``max_wait_s`` after its first
change; ``stop()`` sends the pending batch before it returns. A periodic full diff
(``rescan_interval_s``), and one after every reconnect, recovers whatever events missed: an
inotify queue overflow, a link that was down. A failed batch is retried with doubling waits, up
to 30 s — 5 s while the host cannot be reached at all, so a link that comes back is caught up
within seconds even after a long outage.

Names are filtered by basename here, not with watchdog's ``PatternMatchingEventHandler``:
since watchdog 7 its patterns match the *full path*, so a pattern such as ``[!.]*`` would test
the directory, not the file.

A target is anything with ``name``, ``publish(paths)``, ``retract(paths)``, ``sync()`` (full
diff) and ``needs_sync()`` (reconnected since the last full diff) — the SSH runtime is one.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from webshelf.errors import MissingPackageError, RuntimeUnavailableError
from webshelf.mounts.sync_engine import mirrored

log = logging.getLogger("webshelf.sync")


class SyncTarget(Protocol):
    name: str

    def publish(self, paths: Sequence[str]) -> None: ...
    def retract(self, paths: Sequence[str]) -> None: ...
    def sync(self) -> object: ...
    def needs_sync(self) -> bool: ...


def _watchdog(what: str):
    try:
        from watchdog import events, observers
    except ImportError:
        raise MissingPackageError(f"{what} needs watchdog: pip install 'webshelf[ssh]'", package="watchdog") from None
    return events, observers


#: the longest wait between retries of a failed batch (a remote disk full, a permission error)
MAX_RETRY_S = 30.0
#: … and when the host could not be reached at all: each retry already spends the connection's
#: own reconnect ladder (``reconnect_attempts`` × doubling ``reconnect_backoff_s``), so a short
#: cap is what makes a link that comes back after a long outage catch up within seconds
LINK_DOWN_RETRY_S = 5.0


def retry_cap(exc: BaseException) -> float:
    """How long retries of a batch that failed with ``exc`` may wait at the most."""
    return LINK_DOWN_RETRY_S if isinstance(exc, RuntimeUnavailableError) else MAX_RETRY_S


class _Worker:
    """One target's queue and thread: batches changes, retries failures, rescans on schedule."""

    def __init__(self, target: SyncTarget, directory: Path, sync: "LiveSync") -> None:
        self.target, self.directory, self.live = target, directory, sync
        self.ready: set[str] = set()
        self.gone: set[str] = set()
        self.first_change: float | None = None
        self.last_change = 0.0
        self.next_rescan = 0.0  # a full diff first
        self.cond = threading.Condition()
        self.errors = 0
        self.thread = threading.Thread(target=self._run, name=f"webshelf-sync-{target.name}", daemon=True)

    def note(self, name: str, present: bool) -> None:
        with self.cond:
            (self.ready if present else self.gone).add(name)
            (self.gone if present else self.ready).discard(name)
            now = time.monotonic()
            self.first_change = self.first_change or now
            self.last_change = now
            self.cond.notify()

    def _due(self, now: float) -> float | None:
        """Seconds until the pending batch is due (0 = now), or None when nothing is pending."""
        if self.first_change is None:
            return None
        s = self.live
        return max(0.0, min(self.last_change + s.debounce_s, self.first_change + s.max_wait_s) - now)

    def _run(self) -> None:
        while not self.live.stopping.is_set():
            with self.cond:
                now = time.monotonic()
                due = self._due(now)
                wait = min(x for x in (due, self.next_rescan - now) if x is not None)
                if wait > 0:
                    self.cond.wait(min(wait, 1.0))
                    continue
                ready, gone = sorted(self.ready), sorted(self.gone)
                self.ready, self.gone, self.first_change = set(), set(), None
            try:
                self._step(ready, gone)
                self.errors = 0
            except Exception as exc:  # any failure: keep the changes, back off, try again
                self.errors += 1
                backoff = min(0.5 * 2 ** (self.errors - 1), retry_cap(exc))
                self.live.report(self.target.name, f"error: {exc} (retrying in {backoff:g} s)")
                for name in ready:
                    self.note(name, True)
                for name in gone:
                    self.note(name, False)
                self.live.stopping.wait(backoff)
        self._flush()

    def _flush(self) -> None:
        """On stop: send the pending batch once (each copy bounded by the target's own timeout)."""
        with self.cond:
            ready, gone = sorted(self.ready), sorted(self.gone)
            self.ready, self.gone, self.first_change = set(), set(), None
        if ready or gone:
            try:
                self._send(ready, gone)
            except Exception as exc:  # stopping: no retry; the next sync's full diff recovers them
                self.live.report(self.target.name, f"error: {exc} (the last {len(ready) + len(gone)} change(s) "
                                 "were not sent; the next sync sends them)")

    def _step(self, ready: list[str], gone: list[str]) -> None:
        now = time.monotonic()
        if now >= self.next_rescan or self.target.needs_sync():
            result = self.target.sync()
            self.next_rescan = time.monotonic() + self.live.rescan_interval_s
            self.live.report(self.target.name, f"full sync: {result}")
            return  # the diff covered the pending changes too
        self._send(ready, gone)

    def _send(self, ready: list[str], gone: list[str]) -> None:
        present = [str(self.directory / n) for n in ready if (self.directory / n).is_file()]
        absent = [str(self.directory / n) for n in gone if not os.path.lexists(self.directory / n)]
        absent += [str(self.directory / n) for n in ready if not (self.directory / n).is_file()]
        if present:
            self.target.publish(present)
        if absent:
            self.target.retract(absent)
        if present or absent:
            self.live.report(self.target.name, f"sent {len(present)}, deleted {len(absent)}")


class LiveSync:
    """Watch ``directory`` and mirror changes to every target until ``stop()``; a context manager."""

    def __init__(self, directory: Path, targets: Sequence[SyncTarget], *, debounce_s: float = 0.05,
                 max_wait_s: float = 0.5, rescan_interval_s: float = 60.0,
                 report: Callable[[str, str], None] | None = None) -> None:
        self.directory = Path(directory)
        self.debounce_s, self.max_wait_s, self.rescan_interval_s = debounce_s, max_wait_s, rescan_interval_s
        self.stopping = threading.Event()
        self._report = report
        self.workers = [_Worker(t, self.directory, self) for t in targets]
        self._observer = None

    def report(self, target: str, message: str) -> None:
        log.info("%s: %s", target, message)
        if self._report is not None:
            self._report(target, message)

    def _on_event(self, event) -> None:
        if event.is_directory:
            return
        kind = event.event_type
        here = str(self.directory)
        changes: list[tuple[str, bool]] = []
        src = os.fsdecode(event.src_path)
        if kind in ("closed", "deleted") and os.path.dirname(src) == here:
            changes.append((os.path.basename(src), kind == "closed"))  # closed after writing = ready
        elif kind == "moved":
            dest = os.fsdecode(event.dest_path)
            if os.path.dirname(src) == here:
                changes.append((os.path.basename(src), False))
            if os.path.dirname(dest) == here:
                changes.append((os.path.basename(dest), True))
        for name, present in changes:
            if mirrored(name):
                for worker in self.workers:
                    worker.note(name, present)

    def watch(self) -> "LiveSync":
        """Start collecting changes without sending them yet (``start()`` sends): a caller that runs
        its own first full diff watches first, so a page written during that diff is not missed."""
        if self._observer is not None:
            return self
        events, observers = _watchdog("webshelf sync")
        live = self

        class Handler(events.FileSystemEventHandler):
            def on_any_event(self, event) -> None:
                live._on_event(event)

        self._observer = observers.Observer()
        self._observer.schedule(Handler(), str(self.directory), recursive=False)
        self._observer.start()
        return self

    def start(self) -> "LiveSync":
        self.watch()
        for worker in self.workers:
            worker.thread.start()
        return self

    def stop(self) -> None:
        """Stop watching, send the pending batch, then stop the workers."""
        if self._observer is not None:  # first, so every change it saw is noted before the last batch
            self._observer.stop()
            self._observer.join(timeout=10)
            self._observer = None
        self.stopping.set()
        for worker in self.workers:
            with worker.cond:
                worker.cond.notify()
        for worker in self.workers:
            if worker.thread.is_alive():
                worker.thread.join(timeout=30)

    def __enter__(self) -> "LiveSync":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def idle(self) -> bool:
        """True when no change is waiting to be sent (for tests and a clean shutdown)."""
        return all(w.first_change is None for w in self.workers)
