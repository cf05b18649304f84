"""Optional SDKs (docker, paramiko, modal) are imported only when their runtime is used."""

from __future__ import annotations

import importlib
from types import ModuleType

from webshelf.errors import RuntimeUnavailableError


def import_sdk(kind: str, runtime: str, sdk: str, extra: str, *modules: str) -> ModuleType:
    """Import an optional SDK (the first of ``modules`` is returned, the rest are submodules it
    needs); a missing one is a ``RuntimeUnavailableError`` naming the package to install."""
    try:
        loaded = [importlib.import_module(m) for m in modules]
    except ImportError:
        raise RuntimeUnavailableError(f"the {kind} runtime needs {sdk}: pip install 'webshelf[{extra}]'",
                                      runtime=runtime) from None
    return loaded[0]
