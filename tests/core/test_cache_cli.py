"""``webshelf cache …`` output and ``cache verify --repair`` reconciling a tampered directory."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from click.testing import CliRunner

from webshelf.cache.shelf import Shelf
from webshelf.core.surfaces.cli import main
from webshelf.core.extract import web_extract_sync
from tests.loopback import Response

MD = {"Content-Type": "text/markdown"}


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(main, list(args), input=input)


def stored(server, config, name: str, body: str):
    url = server.route(f"/cli/{name}-{id(config)}", Response(body.encode(), headers=MD))
    return web_extract_sync([url], config=config)[0]


def test_stats_list_and_hit_rate(server, config):
    r = stored(server, config, "a", "# A\n\nalpha\n")
    web_extract_sync([r.url], config=config)  # a hit
    out = run("cache", "stats").output
    assert "pages: 1\n" in out and f"bytes: {len(b'# A' + bytes(1) + bytes(1) + b'alpha' + bytes(1)):,} " in out
    assert "of 1,073,741,824 cap (1.0 GiB)" in out
    assert re.search(r"hit rate: 50\.0% \(1 hits, 1 misses since \d{4}-\d\d-\d\dT", out)
    listed = run("cache", "list").output.splitlines()
    assert len(listed) == 1 and listed[0].endswith(f"  {r.url}  {r.path}")
    data = json.loads(run("cache", "list", "--json").output)
    assert data[0]["path"] == r.path and data[0]["url"] == r.url and data[0]["cut_from_chars"] is None


def test_prune_dry_run_then_prune(server, config):
    r = stored(server, config, "old", "# Old\n")
    shelf = Shelf.shared(config.home)
    with shelf.db_lock:
        shelf.index._db.execute("UPDATE pages SET fetched_at = 0")
    dry = run("cache", "prune", "--dry-run")
    assert dry.exit_code == 0 and f"would remove {r.path} (expired (cache.ttl))" in dry.output
    assert Path(r.path).exists()
    done = run("cache", "prune")
    assert f"removed {r.path} (expired (cache.ttl))" in done.output
    assert done.output.rstrip().endswith("pruned 1 pages (6 bytes) and 0 temp files; cache holds 0 pages, 0 bytes")
    assert not Path(r.path).exists()


def test_clear_needs_yes_when_not_interactive(server, config):
    r = stored(server, config, "c", "# C\n")
    refused = run("cache", "clear")
    assert refused.exit_code == 2 and "pass --yes" in refused.output and Path(r.path).exists()
    done = run("cache", "clear", "--yes")
    assert done.exit_code == 0 and done.output == "cleared 1 pages (4 bytes) and 0 temp files\n"
    assert not Path(r.path).exists()
    gone = run("read", r.path)
    assert gone.exit_code == 1 and f"re-extract it with web_extract([{r.url!r}])" in gone.output


def test_verify_finds_and_repairs_what_changed_behind_our_back(server, config, tmp_path):
    deleted = stored(server, config, "deleted", "# Deleted\n")
    changed = stored(server, config, "changed", "# Changed\n")
    orphan = stored(server, config, "orphan", "# Orphan\n")
    web = Path(deleted.path).parent
    os.unlink(deleted.path)
    Path(changed.path).write_text("# Chang3d\n")  # same size, other bytes
    shelf = Shelf.shared(config.home)
    with shelf.db_lock:
        shelf.index._db.execute("DELETE FROM pages WHERE name = ?", (Path(orphan.path).name,))
    (web / "stray.txt").write_text("x")
    (web / "link.md").symlink_to(tmp_path)
    found = run("cache", "verify")
    assert found.exit_code == 1
    assert found.output.splitlines() == [
        f"missing: {deleted.path} (url {deleted.url})",
        f"changed: {changed.path}: content hash differs from the index",
        f"orphan: {orphan.path} (no index row)",
        f"foreign: {web / 'link.md'} (not a webshelf page)",
        f"foreign: {web / 'stray.txt'} (not a webshelf page)",
        "5 problems; run `webshelf cache verify --repair` to reconcile",
    ]
    fixed = run("cache", "verify", "--repair")
    assert fixed.exit_code == 0 and f"adopted: {orphan.path}" in fixed.output
    assert "repaired 5 problems; 1 pages indexed" in fixed.output
    assert sorted(os.listdir(web)) == [Path(orphan.path).name]
    assert tmp_path.is_dir()  # the symlink was moved, its target untouched
    quarantine = config.home / "cache" / "quarantine"
    assert len(os.listdir(quarantine)) == 3
    assert run("cache", "verify").output == "ok: 1 pages; index and directory agree\n"
    gone = run("read", changed.path)
    assert "changed on disk" in gone.output and changed.url in gone.output
    assert stored(server, config, "deleted", "# Deleted\n").ok  # extract works after the repair
