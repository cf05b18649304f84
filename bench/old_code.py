"""Our own modules as they were at an older commit, for before/after benchmarks in one run.

``old_module(name, rev, path, replace)`` loads ``git show rev:path`` as module ``name`` (registered
in ``sys.modules`` so a later old module can import it under that name), after exact text
replacements — each must be found, so a stale replacement fails loudly instead of silently
measuring the unpatched code.
"""

from __future__ import annotations

import subprocess
import sys
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
