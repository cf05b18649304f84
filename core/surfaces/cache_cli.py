"""``webshelf cache …``: look at and maintain the shelf of stored pages.

    webshelf cache stats                 pages, bytes against the cap, oldest/newest, hit rate
    webshelf cache list [--json]         one line per stored page, newest first
    webshelf cache prune [--dry-run]     one full eviction pass (TTL, size cap, stale temp files)
    webshelf cache clear [--yes]         remove every stored page
    webshelf cache verify [--repair]     index vs directory: missing, changed, orphan, foreign files

Output is plain and stable; times are UTC. Exit codes: 0 ok, 1 problems found (verify) or the
cache is unusable, 2 bad usage or config.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import click

from webshelf.cache.evict import EvictionPolicy
from webshelf.cache.index import PageRecord
from webshelf.cache.shelf import Shelf
from webshelf.core.config import Config, load_config
from webshelf.errors import CacheError, ConfigError, WebshelfError
from webshelf.core.units import describe_duration, describe_size


def _fail(exc: WebshelfError, code: int) -> None:
    click.echo(f"error[{exc.code}]: {exc.message}", err=True)
    sys.exit(code)


def _load(ctx: click.Context) -> Config:
    try:
        return load_config((ctx.find_root().obj or {}).get("config"))
    except ConfigError as exc:
        _fail(exc, 2)
        raise  # unreachable: _fail exits


@contextmanager
def _shelf(config: Config) -> Iterator[Shelf]:
    """The home's shelf; its CacheErrors (which name the file and what to do) end the command."""
    try:
        shelf = Shelf(config.home)
    except CacheError as exc:
        _fail(exc, 1)
        raise
    try:
        yield shelf
    except CacheError as exc:
        _fail(exc, 1)
    finally:
        shelf.close()


def when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts)) if ts is not None else "-"


def _ago(ts: float) -> str:
    return f"{describe_duration(max(time.time() - ts, 0))} ago"


def policy_of(config: Config) -> EvictionPolicy:
    return EvictionPolicy(ttl=config.cache.ttl, max_total_bytes=config.cache.max_total_bytes)


@click.group("cache")
def cache_group() -> None:
    """Inspect and maintain the stored pages under $WEBSHELF_HOME/cache/web."""


@cache_group.command("stats")
@click.pass_context
def stats(ctx: click.Context) -> None:
    """Pages, bytes against the cap, oldest/newest page, hit rate since counting started."""
    config = _load(ctx)
    with _shelf(config) as shelf:
        totals = shelf.index.totals()
        counters = shelf.index.counters()
    cap = config.cache.max_total_bytes
    click.echo(f"directory: {shelf.web_dir}")
    click.echo(f"pages: {totals.pages:,}")
    click.echo(f"bytes: {totals.bytes:,} ({describe_size(totals.bytes)}) of {cap:,} cap "
               f"({describe_size(cap)}), {100 * totals.bytes / cap:.1f}%")
    for label, ts in (("oldest", totals.oldest), ("newest", totals.newest)):
        click.echo(f"{label}: {when(ts)} ({_ago(ts)})" if ts is not None else f"{label}: -")
    hits, misses = int(counters.get("hits", 0)), int(counters.get("misses", 0))
    if hits + misses:
        click.echo(f"hit rate: {100 * hits / (hits + misses):.1f}% ({hits:,} hits, {misses:,} misses "
                   f"since {when(counters.get('since'))})")
    else:
        click.echo("hit rate: unknown (no reuse lookups recorded yet)")


def _as_json(shelf: Shelf, rec: PageRecord) -> dict[str, object]:
    return {
        "path": str(shelf.web_dir / rec.name), "url": rec.url, "final_url": rec.final_url, "title": rec.title,
        "bytes": rec.bytes, "chars": rec.chars, "lines": rec.lines, "sha256": rec.sha256,
        "fetched_at": when(rec.fetched_at), "last_access": when(rec.last_access), "backend": rec.backend,
        "content_type": rec.content_type, "cut_from_chars": rec.original_chars,
    }


@cache_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list with every field.")
@click.pass_context
def list_pages(ctx: click.Context, as_json: bool) -> None:
    """One line per stored page, newest first: fetched (UTC), bytes, URL, path."""
    config = _load(ctx)
    with _shelf(config) as shelf:
        records = list(reversed(shelf.index.all()))
    if as_json:
        click.echo(json.dumps([_as_json(shelf, r) for r in records], indent=2, ensure_ascii=False))
        return
    for rec in records:
        click.echo(f"{when(rec.fetched_at)}  {rec.bytes:>10,}  {rec.url or '(unknown url)'}  {shelf.web_dir / rec.name}")


def _removed(report) -> str:
    """What a prune or clear pass removed, as both commands' summary line says it."""
    return (f"{len(report.removed):,} pages ({report.freed_bytes:,} bytes) and "
            f"{len(report.temp_removed):,} temp files")


def _finish(report, summary: str) -> None:
    """End prune and clear alike: each file that could not be removed on stderr, then the
    summary; exit 1 when any removal failed (the files are still there), else 0."""
    for path, why in report.failed:
        click.echo(f"failed to remove {path}: {why}", err=True)
    click.echo(summary)
    sys.exit(1 if report.failed else 0)


@cache_group.command("prune")
@click.option("--dry-run", is_flag=True, help="Only print what would be removed.")
@click.pass_context
def prune_cmd(ctx: click.Context, dry_run: bool) -> None:
    """Remove expired pages (cache.ttl), then least recently used ones while over cache.max_total_bytes."""
    config = _load(ctx)
    verb = "would remove" if dry_run else "removed"
    with _shelf(config) as shelf:
        report = shelf.prune(policy_of(config), dry_run=dry_run)
        totals = shelf.index.totals()
    for rec, reason in report.removed:
        click.echo(f"{verb} {shelf.web_dir / rec.name} ({reason})")
    for path in report.temp_removed:
        click.echo(f"{verb} {path} (temp file of a writer that died)")
    _finish(report, f"{'would prune' if dry_run else 'pruned'} {_removed(report)}; "
                    f"cache holds {totals.pages:,} pages, {totals.bytes:,} bytes")


@cache_group.command("clear")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def clear_cmd(ctx: click.Context, yes: bool) -> None:
    """Remove every stored page (read_file will still name their URLs)."""
    config = _load(ctx)
    with _shelf(config) as shelf:
        pages = shelf.index.totals().pages
        if not yes:
            if not sys.stdin.isatty():
                _fail(CacheError(f"refusing to remove {pages:,} stored pages without confirmation; pass --yes"), 2)
            click.confirm(f"Remove all {pages:,} stored pages from {shelf.web_dir}?", abort=True)
        report = shelf.clear()
    _finish(report, f"cleared {_removed(report)}")


@cache_group.command("verify")
@click.option("--repair", is_flag=True, help="Reconcile: drop rows of missing files, adopt or quarantine the rest.")
@click.pass_context
def verify_cmd(ctx: click.Context, repair: bool) -> None:
    """Compare the index with the directory: missing files, changed files, orphans, foreign entries."""
    config = _load(ctx)
    with _shelf(config) as shelf:
        report = shelf.verify(repair=repair)
        pages = shelf.index.totals().pages
    web = shelf.web_dir
    for rec in report.missing:
        click.echo(f"missing: {web / rec.name} (url {rec.url or 'unknown'})")
    for rec, why in report.mismatched:
        click.echo(f"changed: {web / rec.name}: {why}")
    for path in report.orphans:
        click.echo(f"orphan: {path} (no index row)")
    for path in report.foreign:
        click.echo(f"foreign: {path} (not a webshelf page)")
    for path in report.temps:
        click.echo(f"stale temp: {path}")
    problems = len(report.missing) + len(report.mismatched) + len(report.orphans) + len(report.foreign) + len(report.temps)
    if not problems:
        click.echo(f"ok: {pages:,} pages; index and directory agree")
        return
    if not repair:
        click.echo(f"{problems:,} problems; run `webshelf cache verify --repair` to reconcile")
        sys.exit(1)
    for path in report.adopted:
        click.echo(f"adopted: {path}")
    for source, target in report.quarantined:
        click.echo(f"quarantined: {source} -> {target}")
    click.echo(f"repaired {problems:,} problems; {pages:,} pages indexed")
