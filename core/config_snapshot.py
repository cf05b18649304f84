"""The settings a cached ``webshelf extract`` needs, kept from the last full validation.

Why (issue 15's start-up row): importing pydantic and defining the config models costs a CLI
5–7× ``python -c pass`` before it does anything, more than the ≤ 4× goal for a URL the shelf
answers. So when ``load_config`` has validated a config, the dozen plain values the cached path
reads (budget, reuse window, address policy, the backend in force …) are written to
``<home>/cache/config-snapshot.json``, keyed by everything they were computed from:

- the config file's path and bytes (absent is a state of its own);
- the environment variables that can change them: ``HOME``, ``WEBSHELF_HOME``, the hosted
  providers' key variables (the backend ``auto`` picks, a missing key's error) and every
  ``${VAR}`` the file names;
- the snapshot format and the size and mtime of the modules that compute them (an upgrade
  with new defaults never reads an old snapshot).

A snapshot is used only when its key matches the current state exactly; anything else —
a changed, new, removed or invalid file, a changed variable — finds none, and the full path
runs: the same validation, the same errors and exit codes. An invalid config is never
snapshotted, nor one whose values the cached path needs raise (a deferred ``${VAR}``, a hosted
backend without its key). The file holds no secrets (no key, only the backend's name) and
lives outside ``cache/web/``, which sandboxes see. It is a cache: unreadable, corrupt or
unwritable means "no snapshot", never an error.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
from pathlib import Path
from typing import Any

from webshelf.core.config_paths import config_path, default_home

FORMAT = 1
NAME = "config-snapshot.json"
MAX_ENTRIES = 8  # config files remembered per home (--config a, --config b, the default)
BASE_ENV = ("HOME", "WEBSHELF_HOME")
_ENV_REF = re.compile(rb"\$\{([A-Za-z_][A-Za-z0-9_]*)")
_HERE = Path(__file__).resolve().parent
SOURCES = (_HERE / "config.py", _HERE / "config_snapshot.py", _HERE / "served.py",
           _HERE / "backends" / "selection.py", _HERE / "surfaces" / "cli_cached.py")


def snapshot_file(home: Path | None = None) -> Path:
    return (home or default_home()) / "cache" / NAME


UNREADABLE = object()  # the config file exists but cannot be read: the full path reports it


def _file_bytes(file: Path) -> bytes | None | object:
    """The config file's bytes, None when there is no file, ``UNREADABLE`` when it cannot be read
    (a directory, no permission): only the full path may say what is wrong with it."""
    try:
        with open(file, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None
    except OSError:
        return UNREADABLE


# What a snapshot's settings hold, by type: a snapshot edited or damaged by hand is no snapshot.
SHAPE: dict[str, type | tuple[type, ...]] = {
    "home": str, "backend": str, "char_limit_range": list, "max_urls": int, "extract_char_limit": int,
    "head_ratio": (int, float), "wrap_untrusted": bool, "allow_private": bool, "allow_hosts": list,
    "allow_secret_urls": bool, "allow_file_urls": bool, "file_dirs": list, "max_age": (int, float),
    "max_file_chars": int,
}


def _well_formed(settings: Any) -> bool:
    return (isinstance(settings, dict) and set(settings) == set(SHAPE)
            and all(isinstance(settings[k], t) for k, t in SHAPE.items())
            and all(isinstance(h, str) for h in settings["allow_hosts"])
            and len(settings["char_limit_range"]) == 2
            and all(isinstance(v, int) for v in settings["char_limit_range"]))


def save_json(path: Path, value: Any) -> None:
    """Write ``value`` as JSON to ``path`` atomically (a unique temporary file, then ``os.replace``):
    concurrent starts never see half a file. A cache that cannot be written is no snapshot, never
    an error (this module's snapshot and mcp_early.py's frames)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "x", encoding="utf-8") as f:
            json.dump(value, f)
        os.replace(tmp, path)
    except (OSError, TypeError, ValueError):
        try:
            os.unlink(tmp)
        except OSError:
            pass


def source_stamps(sources: tuple[Path, ...]) -> list[list[int] | None]:
    """[size, mtime_ns] of each source file (None when it is gone): a snapshot is keyed by the
    code that made it (this module's ``SOURCES``; mcp_early.py's frame snapshot too)."""
    stamps: list[list[int] | None] = []
    for source in sources:
        try:
            st = os.stat(source)
            stamps.append([st.st_size, st.st_mtime_ns])
        except OSError:
            stamps.append(None)
    return stamps


def _key(file: Path, named: bool, data: bytes | None, env: list[str]) -> str:
    state = [FORMAT, str(file), named, None if data is None else hashlib.sha256(data).hexdigest(),
             [[name, os.environ.get(name)] for name in env], source_stamps(SOURCES)]
    return hashlib.sha256(json.dumps(state).encode()).hexdigest()


def _entries(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as f:
            entries = json.loads(f.read())
        return entries if isinstance(entries, dict) else {}
    except (OSError, ValueError):
        return {}


class Probe:
    """What the cached path saw of the config: its settings when a snapshot matched, else what
    ``save`` needs to snapshot the config the full path is about to validate."""

    def __init__(self, explicit: str | Path | None) -> None:
        self.file, self.named = config_path(explicit)
        self.data = _file_bytes(self.file)
        self.settings: dict[str, Any] | None = None
        if self.data is UNREADABLE or (self.named and self.data is None):
            return  # a file that cannot be read, a named one that is missing: the full path gives the error
        entry = _entries(snapshot_file()).get(str(self.file))
        if isinstance(entry, dict) and isinstance(entry.get("env"), list) and \
                all(isinstance(name, str) for name in entry["env"]) and \
                entry.get("key") == _key(self.file, self.named, self.data, entry["env"]) and \
                _well_formed(entry.get("settings")):
            self.settings = entry["settings"]

    def save(self, config: Any) -> None:
        """Snapshot ``config`` (just validated from this probe's file) when the file is still
        the one probed and every value the cached path needs can be read; otherwise nothing."""
        settings = settings_of(config)
        if settings is None or self.data is UNREADABLE or _file_bytes(self.file) != self.data or \
                str(config.home) != str(default_home()):
            return
        from webshelf.core.backends.selection import HOSTED_KEYS

        env = sorted({*BASE_ENV, *HOSTED_KEYS.values(),
                      *(m.group(1).decode() for m in _ENV_REF.finditer(self.data or b""))})
        path = snapshot_file()
        entries = _entries(path)
        entries.pop(str(self.file), None)
        entries[str(self.file)] = {"key": _key(self.file, self.named, self.data, env), "env": env,
                                   "settings": settings}
        while len(entries) > MAX_ENTRIES:
            del entries[next(iter(entries))]
        save_json(path, entries)


def settings_of(config: Any) -> dict[str, Any] | None:
    """The values the cached extract reads, from a validated ``Config``; None when one of them
    raises (a deferred ``${VAR}``) or the backend in force cannot run (unknown, no key)."""
    from webshelf.core.backends import check_backend, select_backend
    from webshelf.core.backends.selection import HOSTED_KEYS, require_key
    from webshelf.core.config import CHAR_LIMIT_RANGE
    from webshelf.errors import WebshelfError

    try:
        web, cache = config.web, config.cache
        backend = check_backend(select_backend(config, None))
        if backend in HOSTED_KEYS:
            require_key(backend, config)
        return {
            "home": str(config.home), "backend": backend, "char_limit_range": list(CHAR_LIMIT_RANGE),
            "max_urls": web.max_urls, "extract_char_limit": web.extract_char_limit, "head_ratio": web.head_ratio,
            "wrap_untrusted": web.wrap_untrusted, "allow_private": web.allow_private,
            "allow_hosts": list(web.allow_hosts), "allow_secret_urls": web.allow_secret_urls,
            "allow_file_urls": web.allow_file_urls, "file_dirs": [str(d) for d in web.file_dirs],
            "max_age": cache.max_age, "max_file_chars": cache.max_file_chars,
        }
    except WebshelfError:
        return None
