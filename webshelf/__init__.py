"""webshelf: the web-reading layer for AI agents that run code in sandboxes.

    from webshelf import web_extract_sync, read_file
    results = web_extract_sync(["https://peps.python.org/pep-0008/"])
    print(results[0].content)             # whole page, or head/tail windows + footer
    print(read_file(results[0].path, offset=200, limit=100))

This package is the distribution's one import name. The rooms live in the repository's
top-level folders and are installed below it (``webshelf.core``, ``webshelf.cache``,
``webshelf.mounts``, ``webshelf.runtimes``; see docs/architecture.md). Importing ``webshelf``
is cheap: each public name is imported on first use (PEP 562, webshelf/_lazy.py), so ``webshelf read`` or a
program that only needs ``read_file`` never loads httpx, selectolax or an SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from webshelf._lazy import lazy_getattr

# public name -> the module that defines it
_PUBLIC: dict[str, str] = {
    "web_extract": "webshelf.core.extract",
    "web_extract_sync": "webshelf.core.extract",
    "read_file": "webshelf.core.read",
    "search_page": "webshelf.core.search_page",
    "load_config": "webshelf.core.config",
    "Config": "webshelf.core.config",
    "open_runtime": "webshelf.core.sandbox",
    "read_file_in": "webshelf.core.sandbox",
    "ExtractResult": "webshelf.core.models",
    "ErrorInfo": "webshelf.core.models",
    "WebshelfError": "webshelf.errors",
}

__all__ = sorted(_PUBLIC)

if TYPE_CHECKING:  # for type checkers and IDEs only; at run time names load lazily
    from webshelf.core.config import Config, load_config
    from webshelf.core.extract import web_extract, web_extract_sync
    from webshelf.core.models import ErrorInfo, ExtractResult
    from webshelf.core.read import read_file
    from webshelf.core.sandbox import open_runtime, read_file_in
    from webshelf.core.search_page import search_page
    from webshelf.errors import WebshelfError


__getattr__ = lazy_getattr(__name__, _PUBLIC, globals())


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))
