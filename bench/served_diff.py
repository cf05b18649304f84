"""Differential check for speed work on the served HTML path (issue 14): the served Markdown and
title of every WCXB dev and readability page, from the code at ``--before`` (default ``main``)
and from the working tree, compared page by page.

The old code is the whole package at ``--before`` (``git archive``), laid out as the installed
``webshelf`` package in a temporary directory and put first on ``sys.path`` of its own worker
process — so every module of the conversion chain is the old one, not only the ones a change
touched (bench/old_code.py loads single modules; a chain of a dozen needs the whole tree).
Each side runs in its own process; the output is what ``by_type.to_markdown`` returns on the
page's bytes, exactly as bench/extract_quality.py times it.

    .venv/bin/python bench/served_diff.py [--before REV] [--limit N] [--show 3]

Prints the number of pages compared, how many differ, and the first differences (unified diff).
Exit status 1 when any page differs. Not a test (it needs the corpora and a git checkout).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROOMS = {"webshelf": "webshelf", "core": "core", "cache": "cache", "mounts": "mounts", "runtimes": "runtimes"}


def old_tree(rev: str, into: Path) -> Path:
    """The package at ``rev`` as an importable ``webshelf`` under ``into`` (package-dir layout of
    pyproject.toml: ``webshelf/`` is the top, the rooms are its subpackages)."""
    data = subprocess.run(["git", "-C", str(ROOT), "archive", rev, *ROOMS], capture_output=True, check=True).stdout
    raw = into / "raw"
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(raw, filter="data")
    top = into / "lib" / "webshelf"
    top.parent.mkdir()
    (raw / "webshelf").rename(top)
    for room in ("core", "cache", "mounts", "runtimes"):
        (raw / room).rename(top / room)
    return into / "lib"


def dump(out: str, limit: int | None) -> None:
    """Worker: the served Markdown of every page with whatever ``webshelf`` imports first."""
    lib = os.environ.get("SERVED_DIFF_LIB")
    if lib:  # the old tree wins over the editable install's finder (which sits on sys.meta_path)
        sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__module__.lower()
                            and "editable" not in getattr(f, "__name__", "").lower()]
        sys.path.insert(0, lib)
    import webshelf.core.convert.by_type as by_type_module  # before extract_quality puts ROOT on sys.path
    from webshelf.core.convert.by_type import to_markdown

    sys.path.insert(0, str(ROOT / "bench"))
    import extract_quality as eq

    result = {"module": by_type_module.__file__, "pages": {}}
    for corpus in ("wcxb", "readability"):
        for desc in eq.page_index(corpus, limit):
            page = eq.load_page(corpus, desc)
            converted = to_markdown(page["html"].encode("utf-8"), "text/html; charset=utf-8", page["url"] or "")
            result["pages"][f"{corpus}/{desc['id']}"] = [converted.markdown, converted.title]
    Path(out).write_text(json.dumps(result))


def run_side(lib: Path | None, out: Path, limit: int | None) -> dict:
    env = dict(os.environ)
    argv = [sys.executable, __file__, "--dump", str(out)] + (["--limit", str(limit)] if limit else [])
    if lib is not None:
        env["SERVED_DIFF_LIB"] = str(lib)
    subprocess.run(argv, check=True, env=env, cwd=str(ROOT))
    return json.loads(out.read_text())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="main")
    ap.add_argument("--limit", type=int, help="first N pages of each corpus")
    ap.add_argument("--show", type=int, default=3, help="differences to print in full")
    ap.add_argument("--dump", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.dump:
        dump(args.dump, args.limit)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        lib = old_tree(args.before, Path(tmp))
        old = run_side(lib, Path(tmp) / "old.json", args.limit)
        new = run_side(None, Path(tmp) / "new.json", args.limit)
    if not old["module"].startswith(tmp) or new["module"].startswith(tmp):
        raise SystemExit(f"the sides did not load the intended code: {old['module']} / {new['module']}")
    differ = [key for key in old["pages"] if old["pages"][key] != new["pages"].get(key)]
    print(f"{len(old['pages'])} pages compared (before = {args.before}, after = working tree): "
          f"{len(differ)} differ")
    for key in differ[:args.show]:
        (om, ot), (nm, nt) = old["pages"][key], new["pages"][key]
        print(f"\n## {key}" + (f" title {ot!r} -> {nt!r}" if ot != nt else ""))
        sys.stdout.writelines(difflib.unified_diff(om.splitlines(True), nm.splitlines(True), "before", "after", n=1))
    if len(differ) > args.show:
        print("\nalso:", " ".join(differ[args.show:]))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
