"""``read_file``: page through a stored page by line numbers, confined to the cache.

This is the host side of the footer's promise. Output lines are ``N|text`` with 1-based
numbers, the same format an agent's own tools give inside a sandbox. Only files inside
``cache/web/`` can be read, whatever ``..`` or symlinks a path contains, and the errors say
what to do next: re-extract an evicted page, or which offsets exist.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from webshelf.cache.layout import PAGE_SUFFIX, CacheLayout
from webshelf.cache.shelf import Shelf
from webshelf.cache.store import open_page
from webshelf.core import line_index
from webshelf.core.config import Config, load_config
from webshelf.errors import (CacheError, CacheUnavailableError, InputError, OffsetPastEndError, PageNotFoundError,
                             PathOutsideCacheError, clip)

MAX_LIMIT = 2_000
MAX_PATH_CHARS = 4_096  # PATH_MAX on Linux; a footer's path is far shorter
MAX_OFFSET = 1_000_000_000  # far past any stored page (cache.max_file_chars), well inside islice's range


def resolve_page_path(path: str | os.PathLike[str], layout: CacheLayout) -> Path:
    """The real file a path names, refused unless it is a regular file directly in cache/web."""
    web = layout.web_dir
    if (linked := layout.symlinked_dir()) is not None:
        raise CacheUnavailableError(
            f"{linked} is a symlink or not a directory; webshelf reads stored pages only from a real directory, "
            "never through a link — move it away (webshelf creates the directory again on the next extract)",
            path=str(linked))
    length = len(path) if isinstance(path, (str, bytes)) else len(str(path))
    if length > MAX_PATH_CHARS:  # before realpath, which would walk every component
        raise PathOutsideCacheError(
            f"{clip(path)}: the path is {length:,} characters long, too long to be a stored page "
            f"(at most {MAX_PATH_CHARS:,}); use the path from a webshelf footer", path=str(path))
    try:
        raw = Path(path).expanduser()
        web_real = Path(os.path.realpath(web))
        candidate = raw if raw.is_absolute() else web / raw
        real = Path(os.path.realpath(candidate))
    except (ValueError, RuntimeError, OSError):  # NUL bytes, ~unknownuser, …
        raise PathOutsideCacheError(
            f"{clip(path, quote=True)}: not a usable path; read_file only reads pages stored in {web}; use the path from a "
            "webshelf footer", path=str(path)) from None
    if (real.parent != web_real or not real.name.endswith(PAGE_SUFFIX) or real.name.startswith(".")
            or os.path.lexists(candidate) and os.path.islink(candidate)):
        raise PathOutsideCacheError(
            f"{clip(path)}: read_file only reads pages stored in {web}; use the path from a webshelf footer",
            path=str(path),
        )
    return real


def _url_for(layout: CacheLayout, name: str) -> tuple[str | None, str | None]:
    """(URL, why it is gone) for a page the index knows or once knew (evicted pages leave a tombstone)."""
    if not layout.index_path.exists():
        return None, None
    try:
        shelf = Shelf.shared(layout.home)
        with shelf.db_lock:
            record = shelf.index.get(name)
            gone = None if record else shelf.index.tombstone(name)
        if record:
            return record.url or None, None
    except CacheError:
        return None, None
    return (gone.url or None, gone.reason) if gone else (None, None)


def _touch(layout: CacheLayout, name: str) -> None:
    """Count a read as a use, so least-recently-used eviction keeps pages agents are reading."""
    try:
        shelf = Shelf.shared(layout.home)
        with shelf.db_lock:
            shelf.index.touch(name)
    except CacheError:
        pass  # a read must not fail because the index is busy or damaged


def page_not_found(layout: CacheLayout, name: str, shown: str) -> PageNotFoundError:
    """The error for a page that is not there, naming the URL to re-extract when known
    (shared with the in-sandbox read, so both say the same)."""
    url, reason = _url_for(layout, name)
    hint = f"; re-extract it with web_extract([{url!r}])" if url else "; extract the page again to get a new path"
    why = f"evicted: {reason}" if reason else "evicted or never stored"
    return PageNotFoundError(f"{shown}: no such stored page ({why}){hint}", path=shown, url=url)


def offset_past_end(shown: str, offset: int, total: int) -> OffsetPastEndError:
    if total == 0:
        return OffsetPastEndError(f"{shown}: the stored page is empty (no readable text was found); there is "
                                  "nothing to read", path=shown)
    return OffsetPastEndError(
        f"{shown}: offset {offset:,} is past the end; the page has {total:,} lines (use offset 1–{max(total, 1):,})",
        path=shown,
    )


_OPEN = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def open_page_fd(real: Path, layout: CacheLayout, shown: str) -> int:
    """A descriptor on the stored page, checked to be a regular file on the descriptor itself
    (``O_NONBLOCK``: a FIFO planted under a page name cannot block the open)."""
    try:
        fd = os.open(real, _OPEN)
    except FileNotFoundError:
        raise page_not_found(layout, real.name, shown) from None
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            raise PathOutsideCacheError(f"{shown}: the file name is too long to be a stored page; use the path from "
                                        "a webshelf footer", path=shown) from None
        if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a symlink
            raise PathOutsideCacheError(f"{shown}: not a stored page (a symlink in {layout.web_dir}); use the path "
                                        "from a webshelf footer", path=shown) from None
        raise CacheUnavailableError(f"{shown}: the stored page cannot be opened ({exc.strerror or exc}); check the "
                                    f"permissions of {layout.web_dir}", path=shown, errno=exc.errno) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise PathOutsideCacheError(f"{shown}: not a stored page (a FIFO or other special file in "
                                    f"{layout.web_dir}); use the path from a webshelf footer", path=shown)
    return fd


def _open_page(real: Path, layout: CacheLayout, shown: str):
    fd = open_page_fd(real, layout, shown)
    return open(fd, encoding="utf-8", errors="replace", newline="\n")


def check_read_args(offset: object, limit: object) -> None:
    """The argument rules every read (host or in-sandbox) shares, with the allowed values."""
    if isinstance(offset, bool) or not isinstance(offset, int) or not 1 <= offset <= MAX_OFFSET:
        raise InputError(f"offset must be a line number from 1 to {MAX_OFFSET:,} (got {offset!r})")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InputError(f"limit must be between 1 and {MAX_LIMIT:,} lines (got {limit!r})")


def read_file(path: str | os.PathLike[str], offset: int = 1, limit: int = 500, *, config: Config | None = None) -> str:
    """Lines ``offset``..``offset+limit-1`` of a stored page as ``N|text`` lines."""
    check_read_args(offset, limit)
    config = config or load_config()
    layout = CacheLayout(config.home)
    real = resolve_page_path(path, layout)
    fd = open_page_fd(real, layout, clip(path))
    try:
        # O(limit) at any offset: a sparse newline index over the mapped bytes (core.line_index)
        data = line_index.mapped(fd)
        try:
            index = line_index.index_for(fd, data)
            start = line_index.line_start(data, index, offset)
            chunk = [] if start is None else line_index.read_lines(data, start, limit)
        finally:
            if not isinstance(data, bytes):
                data.close()
    finally:
        os.close(fd)
    if not chunk:
        raise offset_past_end(clip(path), offset, index.lines)
    _touch(layout, real.name)
    return "".join(f"{n}|{line}\n" for n, line in enumerate(chunk, offset))


def count_lines(real: Path) -> int:
    """Lines in a stored file, counting a last line without a newline."""
    with open_page(real) as f:
        data = f.read()
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
