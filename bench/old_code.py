"""Our own modules as they were at an older commit, for before/after benchmarks in one run.

``old_module(name, rev, path, replace)`` loads ``git show rev:path`` as module ``name`` (registered
in ``sys.modules`` so a later old module can import it under that name), after exact text
replacements — each must be found, so a stale replacement fails loudly instead of silently
measuring the unpatched code.
"""

from __future__ import annotations

import atexit
import shutil
import subprocess
import sys
import tempfile
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def old_module(name: str, rev: str, path: str, replace: dict[str, str]) -> types.ModuleType:
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"], capture_output=True, text=True,
                            check=True).stdout
    for old, new in replace.items():
        if old not in source:
            raise SystemExit(f"{rev}:{path} has no {old!r} to replace")
        source = source.replace(old, new)
    module = types.ModuleType(name)
    module.__file__ = f"<{rev}:{path}>"
    sys.modules[name] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)  # noqa: S102 — our own code at an older commit
    return module


def old_package(rev: str, into: Path | None = None, name: str = "webshelf_before") -> str:
    """The whole package at ``rev`` importable as ``name`` (``import webshelf_before.core.convert.by_type``)
    next to today's ``webshelf`` in one process, so a benchmark can interleave old and new page by
    page: ``git archive`` of the rooms, laid out as pyproject's package-dir does, every
    ``webshelf.``/``from webshelf import`` in its sources renamed, and ``into`` put first on
    ``sys.path``. Without ``into``, a temporary directory removed when the process exits.
    Returns ``name``."""
    import io
    import re
    import tarfile

    if into is None:
        into = Path(tempfile.mkdtemp(prefix=f"{name}-"))
        atexit.register(shutil.rmtree, into, True)
    rooms = ("webshelf", "core", "cache", "mounts", "runtimes")
    data = subprocess.run(["git", "-C", str(ROOT), "archive", rev, *rooms], capture_output=True, check=True).stdout
    raw = into / "raw"
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(raw, filter="data")
    top = into / name
    (raw / "webshelf").rename(top)
    for room in rooms[1:]:
        (raw / room).rename(top / room)
    pattern = re.compile(r"\bwebshelf(?=\.[a-z_]|\s+import\b)")
    for path in top.rglob("*.py"):
        path.write_text(pattern.sub(name, path.read_text(encoding="utf-8")), encoding="utf-8")
    sys.path.insert(0, str(into))
    return name
