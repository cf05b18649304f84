"""Where webshelf's home and config file are, without importing the config models.

Split from ``core.config`` (which re-exports every name here, its public API unchanged) so that
a cached ``webshelf extract`` can find the config file and its snapshot
(``core.config_snapshot``) without importing pydantic (issue 15's start-up row).
"""

from __future__ import annotations

import os
from pathlib import Path


def absolute(path: str | Path) -> Path:
    """``~`` expanded, made absolute and normalised (no ``.``/``..``): footer paths and the
    sandbox mount point must be spelled the same, or the footer's path fails inside."""
    return Path(os.path.normpath(Path(path).expanduser().absolute()))


def default_home() -> Path:
    return absolute(os.environ.get("WEBSHELF_HOME") or "~/.webshelf")


def config_path(explicit: str | Path | None = None) -> tuple[Path, bool]:
    """Which config file applies, and whether the user named it (then it must exist)."""
    if explicit:
        return absolute(explicit), True
    env = os.environ.get("WEBSHELF_CONFIG")
    if env:
        return absolute(env), True
    return default_home() / "config.yaml", False
