"""PEP 562 lazy exports, shared by the packages whose names load on first use (``webshelf``,
``webshelf.mounts``, ``webshelf.runtimes``): importing a package stays cheap, and a public name
imports its module only when it is read (issue 15's start-up budget)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_getattr(package: str, names: dict[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """The module-level ``__getattr__`` for ``package``: ``names`` maps each public name to the
    module defining it; a loaded value is cached in ``namespace`` so later reads skip this."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
