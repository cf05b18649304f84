"""Where the cache's OS and SQLite failures become webshelf errors.

``cache/`` is where ``OSError`` (a full disk, a permission, a read-only file system, a symlink
where a directory belongs) and ``sqlite3.Error`` (locked, corrupt, read-only database) enter
webshelf, so they are converted here, at the cache's public methods, into ``CacheError``
subclasses: callers in core catch one family and keep their behaviour (a failed store still
gives the agent its window with a note; a broken index is a cache miss). Each error names
the file or directory and what to do; ``.context`` holds ``path``, ``reason`` (the OS or
SQLite wording) and ``errno`` when there is one.
"""

from __future__ import annotations

import functools
import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from webshelf.errors import CacheError, CacheIndexError

F = TypeVar("F", bound=Callable[..., object])


def reason(exc: BaseException) -> str:
    """The OS/SQLite wording of a failure (``No space left on device``), or a CacheError's."""
    if isinstance(exc, CacheError):
        return str(exc.context.get("reason") or exc.message)
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


_SQLITE_FULL, _SQLITE_READONLY, _SQLITE_CANTOPEN = 13, 8, 14


def _hint(errno: int | None, exc: BaseException) -> str:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        code &= 0xFF  # the primary result code of an extended one
    if errno in (28, 122) or code == _SQLITE_FULL:  # ENOSPC, EDQUOT
        return "; free some space (webshelf cache prune, or lower cache.max_total_bytes)"
    if errno in (1, 13, 30) or code in (_SQLITE_READONLY, _SQLITE_CANTOPEN):  # EPERM, EACCES, EROFS
        return "; check its permissions (webshelf needs to write it) or set WEBSHELF_HOME elsewhere"
    if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError):
        return "; the index looks damaged: move it away and run webshelf cache verify --repair"
    return ""


@contextmanager
def faults(cls: type[CacheError], doing: str, path: str | os.PathLike[str]) -> Iterator[None]:
    """Raise ``cls("<doing>: <reason>; <what to do>")`` for any OS or SQLite failure inside.

    A CacheError from a lower layer is re-worded the same way, keeping its reason and hint, so
    the message says what the caller was doing; it keeps its class when that is already a
    ``cls`` (an index failure during eviction stays a ``CacheIndexError``) and becomes ``cls``
    otherwise (an index failure while storing is a ``StoreError``)."""
    try:
        yield
    except (OSError, sqlite3.Error, CacheError) as exc:
        if isinstance(exc, CacheError):
            if exc.message.startswith(f"{doing}: "):
                raise  # worded by an inner call doing the same thing
            new = type(exc) if isinstance(exc, cls) else cls
            where, errno = exc.context.get("path") or path, exc.context.get("errno")
            hint = str(exc.context.get("hint", ""))
        else:
            new = cls
            where, errno = getattr(exc, "filename", None) or path, getattr(exc, "errno", None)
            hint = _hint(errno, exc)
        why = reason(exc)
        raise new(f"{doing}: {why}{hint}", path=str(where), reason=why, errno=errno, hint=hint or None) from exc


def index_faults(method: F) -> F:
    """Decorate a ``PageIndex`` method: OS and SQLite failures leave as ``CacheIndexError``."""

    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        with faults(CacheIndexError, f"the cache index {self.path}", self.path):
            return method(self, *args, **kwargs)

    return guarded  # type: ignore[return-value]
