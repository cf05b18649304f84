"""The publish contract: a stored page is readable in every attached sandbox before
``web_extract`` returns, and an evicted one is gone from them.

A ``PublishTarget`` is anything with ``publish(paths)`` / ``retract(paths)`` — every runtime
is one. Bind-mount runtimes (local, docker) only confirm what the kernel already guarantees;
sync runtimes (ssh, modal) transfer through ``mounts.sync.SyncTransport``. ``publish_all``
runs the targets side by side under one deadline and reports, never raises: a slow or broken
sandbox must not cost the caller the page it already has.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@runtime_checkable
class PublishTarget(Protocol):
    """What ``publish_all`` needs from a runtime."""

    name: str

    def publish(self, paths: Sequence[str]) -> None:
        """Return only when every path is readable inside; raise if that cannot be done."""

    def retract(self, paths: Sequence[str]) -> None:
        """Return only when no path is readable inside any more."""


@dataclass(frozen=True)
class PublishProblem:
    """One target that did not confirm in time, or failed; ``str()`` is a ready note."""

    target: str
    action: str
    detail: str

    def __str__(self) -> str:
        return f"{self.action} to runtime {self.target!r} failed: {self.detail}"


def _run(targets: Sequence[PublishTarget], paths: Sequence[str], timeout: float, action: str) -> list[PublishProblem]:
    if not targets or not paths:
        return []
    problems: list[PublishProblem] = []
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=len(targets), thread_name_prefix=f"webshelf-{action}")
    try:
        futures = {pool.submit(getattr(t, action), list(paths)): t for t in targets}
        done, pending = concurrent.futures.wait(futures, timeout=timeout)
        for fut in pending:
            problems.append(PublishProblem(futures[fut].name, action, f"no confirmation within {timeout:g} s "
                                           "(runtimes.publish_timeout_s); the sandbox may not see the page yet"))
        for fut in done:
            exc = fut.exception()
            if exc is not None:
                problems.append(PublishProblem(futures[fut].name, action, str(exc) or type(exc).__name__))
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return problems


def publish_all(targets: Sequence[PublishTarget], paths: Sequence[str], timeout: float) -> list[PublishProblem]:
    """Publish ``paths`` to every target at once; the problems, if any, within ``timeout``."""
    return _run(targets, paths, timeout, "publish")


def retract_all(targets: Sequence[PublishTarget], paths: Sequence[str], timeout: float) -> list[PublishProblem]:
    """Retract ``paths`` (evicted pages) from every target; the problems, if any."""
    return _run(targets, paths, timeout, "retract")
