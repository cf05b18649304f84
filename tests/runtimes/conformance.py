"""The one suite every runtime passes (fsspec style): subclass ``RuntimeConformance`` and
provide a ``runtime_factory`` fixture returning ``factory(config) -> Runtime`` (not started).

    class TestDockerConformance(RuntimeConformance):
        @pytest.fixture
        def runtime_factory(self, docker_image):
            ...return lambda config: open_runtime("docker", config)

Each test runs against a started sandbox whose webshelf home has spaces, quotes, a ``$`` and
non-ASCII in its path, because that path appears verbatim in footers and must work inside.
Nothing here sleeps: a page must be readable inside the moment ``web_extract`` returns.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import pytest

from webshelf.cache.shelf import Shelf
from webshelf.core.config import Config
from webshelf.errors import (
    MountError, OffsetPastEndError, PageNotFoundError, PathOutsideCacheError, RuntimeTimeoutError,
)
from webshelf.core.extract import web_extract_sync
from webshelf.core.read import read_file
from webshelf.core.sandbox import read_file_in
from webshelf.mounts.publish import publish_all, retract_all
from webshelf.runtimes.base import Runtime
from tests.loopback import Response

UNUSUAL_HOME = "shelf home 'q' $HOME ü"


def long_markdown(tag: str, lines: int = 1_200) -> bytes:
    """A page far over the budget, with headings so the footer has an outline."""
    out = [f"# Page {tag}\n"]
    for i in range(1, lines):
        out.append(f"## Section {i} of {tag}\n" if i % 100 == 0 else f"Line {i} of page {tag}: héllo — wörld ✓ `code` \"quoted\"\n")
    return "".join(out).encode()


def serve(server, path: str, body: bytes) -> str:
    return server.route(path, Response(body, headers={"Content-Type": "text/markdown; charset=utf-8"}))


def digest(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


class RuntimeConformance:
    """The contract of DESIGN.md's "Runtime" and "Publish" sections, from the agent's side."""

    @pytest.fixture
    def sandbox_config(self, tmp_path: Path) -> Config:
        return Config.model_validate({"web": {"allow_private": True}}).with_home(tmp_path / UNUSUAL_HOME)  # loopback server

    @pytest.fixture
    def runtime(self, runtime_factory, sandbox_config):
        rt: Runtime = runtime_factory(sandbox_config)
        rt.start()
        try:
            yield rt
        finally:
            rt.stop()

    # 1 ----------------------------------------------------------------------------------
    def test_page_extracted_now_reads_identically_inside(self, runtime, sandbox_config, server):
        url = serve(server, f"/conformance/{runtime.name}/fresh.md", long_markdown("fresh"))
        [result] = web_extract_sync([url], config=sandbox_config, runtimes=[runtime])
        assert result.ok and result.truncated and result.notes == []
        footer_path = re.search(r"^Full text: (.+)$", result.content, re.M).group(1)
        assert footer_path == result.path and runtime.mount.contains(footer_path)
        first, last = map(lambda s: int(s.replace(",", "")),
                          re.search(r"^Omitted: lines ([\d,]+)–([\d,]+)\.", result.content, re.M).groups())
        total = result.total_lines
        for offset, limit in [(1, 40), (first, 500), (last - 3, 10), (total - 7, 2_000)]:
            inside = read_file_in(runtime, footer_path, offset, limit, config=sandbox_config)
            assert inside == read_file(footer_path, offset, limit, config=sandbox_config)
        assert inside.endswith(f"{total}|" + read_file(footer_path, total, 1, config=sandbox_config).split("|", 1)[1])

    def test_read_errors_match_host(self, runtime, sandbox_config, server):
        url = serve(server, f"/conformance/{runtime.name}/errors.md", long_markdown("errors", 50))
        [result] = web_extract_sync([url], config=sandbox_config, runtimes=[runtime])
        for call in [(result.path, 51, 5), (runtime.mount.path / "nope.md", 1, 5), ("/etc/passwd", 1, 5)]:
            with pytest.raises((OffsetPastEndError, PageNotFoundError, PathOutsideCacheError)) as host:
                read_file(*call, config=sandbox_config)
            with pytest.raises(type(host.value)) as inside:
                read_file_in(runtime, *call, config=sandbox_config)
            assert str(inside.value) == str(host.value)

    # 2 ----------------------------------------------------------------------------------
    def test_verify_passes_and_every_change_fails_inside(self, runtime, sandbox_config, server):
        report = runtime.verify()
        assert report.ok and [name for name, _, _ in report.checks] == [
            "same path", "live and readable", "read-only", "mount locked", "no capabilities", "host hidden",
            "sandbox works"], report.lines()
        assert not [w for w in report.warnings if "reachable" in w or "binds" in w], report.warnings
        url = serve(server, f"/conformance/{runtime.name}/ro.md", long_markdown("ro", 30))
        [result] = web_extract_sync([url], config=sandbox_config, runtimes=[runtime])
        page, web = result.path, str(runtime.mount.path)
        before = (digest(page), os.stat(page).st_mode, sorted(os.listdir(web)))
        attempts = {  # $1 = the page, $2 = the directory (never spliced into the script: the path has a '$')
            "write": 'echo x > "$1"', "append": 'echo x >> "$1"', "chmod": 'chmod 777 "$1"', "delete": 'rm -f "$1"',
            "create": 'echo x > "$2/new.md"', "mkdir": 'mkdir "$2/d"', "rename": 'mv "$1" "$2/moved.md"',
            "touch": 'touch "$1"', "truncate": ': > "$1"',
        }
        for what, script in attempts.items():
            done = runtime.exec(["sh", "-c", script, "sh", page, web], timeout=30)
            assert done.exit_code != 0, f"{what} succeeded inside {runtime.name}"
        assert (digest(page), os.stat(page).st_mode, sorted(os.listdir(web))) == before
        # the rest of the sandbox keeps working: commands run, scratch space is writable
        done = runtime.exec(["sh", "-c", "echo kept > /tmp/scratch && cat /tmp/scratch"], timeout=30)
        assert (done.exit_code, done.stdout) == (0, b"kept\n")
        assert read_file_in(runtime, page, 1, 5, config=sandbox_config) == read_file(page, 1, 5, config=sandbox_config)

    def test_exec_contract(self, runtime):
        assert runtime.is_alive()
        done = runtime.exec(["sh", "-c", "cat; echo err >&2; exit 3"], timeout=30, stdin=b"in\xc3\xa9")
        assert (done.exit_code, done.stdout, done.stderr) == (3, "iné".encode(), b"err\n")
        with pytest.raises(RuntimeTimeoutError):
            runtime.exec(["sleep", "30"], timeout=1)
        assert runtime.exec(["true"], timeout=30).ok  # still usable after a timeout

    def test_exec_takes_a_stream_as_stdin(self, runtime):
        """A binary stream is copied to the command (runtimes/stdin.py): one without a descriptor
        (pumped), and a pipe's read end (handed over as it is by local)."""
        import io
        import threading

        data = b"".join(b"line %d\n" % i for i in range(20_000))
        done = runtime.exec(["cat"], timeout=60, stdin=io.BytesIO(data))
        assert (done.exit_code, done.stdout) == (0, data)
        read_end, write_end = os.pipe()

        def write() -> None:
            with os.fdopen(write_end, "wb") as wire:
                wire.write(data)

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        with os.fdopen(read_end, "rb") as stream:
            done = runtime.exec(["wc", "-c"], timeout=60, stdin=stream)
        writer.join(timeout=60)
        assert (done.exit_code, done.stdout.strip()) == (0, str(len(data)).encode())

    def test_publish_refuses_paths_outside_the_mount(self, runtime, tmp_path):
        [problem] = publish_all([runtime], [str(tmp_path / "elsewhere.md")], timeout=30)
        assert problem.target == runtime.name and "not inside the mounted" in problem.detail
        with pytest.raises(MountError):
            runtime.publish(["/etc/passwd"])

    # 3 ----------------------------------------------------------------------------------
    def test_page_evicted_on_host_is_gone_inside(self, runtime, sandbox_config, server):
        url = serve(server, f"/conformance/{runtime.name}/evict.md", long_markdown("evict", 40))
        [result] = web_extract_sync([url], config=sandbox_config, runtimes=[runtime])
        assert read_file_in(runtime, result.path, 1, 3, config=sandbox_config).startswith("1|# Page evict")
        os.unlink(result.path)  # what eviction does on the host
        assert retract_all([runtime], [result.path], timeout=30) == []
        assert runtime.exec(["test", "-e", result.path], timeout=30).exit_code != 0
        with pytest.raises(PageNotFoundError) as err:
            read_file_in(runtime, result.path, 1, 3, config=sandbox_config)
        assert url in str(err.value)

    # 4 ----------------------------------------------------------------------------------
    def test_twenty_pages_extracted_concurrently_are_all_readable(self, runtime, sandbox_config, server):
        urls = [serve(server, f"/conformance/{runtime.name}/many-{i}.md", long_markdown(f"many-{i}", 300 + i))
                for i in range(20)]
        results = web_extract_sync(urls, config=sandbox_config, runtimes=[runtime])
        assert all(r.ok and r.notes == [] for r in results)
        assert len({r.path for r in results}) == 20
        listing = runtime.exec(["ls", str(runtime.mount.path)], timeout=30).text().split("\n")
        assert {Path(r.path).name for r in results} <= set(listing)
        for r in results:
            assert read_file_in(runtime, r.path, r.total_lines - 2, 3, config=sandbox_config) == \
                read_file(r.path, r.total_lines - 2, 3, config=sandbox_config)

    # 5 ----------------------------------------------------------------------------------
    def test_unusual_host_slugs(self, runtime, sandbox_config, server):
        hosts = ["xn--bcher-kva.example", "a--b..c.example", "[::1]", "under_score.example", "UPPER.Example.",
                 "1.2.3.4", "x" * 70 + ".example"]
        paths = []
        with Shelf(sandbox_config.home) as shelf:
            for host in hosts:
                text = f"# {host}\n" + "".join(f"row {i} of {host}\n" for i in range(1, 60))
                paths.append(str(shelf.put(url=f"http://{host}/p?q=1&r=$x", final_url=None, title=None, text=text,
                                           backend="test", content_type="text/markdown").path))
        assert publish_all([runtime], paths, timeout=30) == []
        for path in paths:
            assert read_file_in(runtime, path, 55, 10, config=sandbox_config) == read_file(path, 55, 10, config=sandbox_config)
        # a page fetched over loopback by name (host slug "localhost") as well
        url = serve(server, f"/conformance/{runtime.name}/by-name.md", long_markdown("by-name", 20)).replace("127.0.0.1", "localhost")
        [result] = web_extract_sync([url], config=sandbox_config, runtimes=[runtime])
        assert Path(result.path).name.startswith("localhost-")
        assert read_file_in(runtime, result.path, 1, 20, config=sandbox_config) == read_file(result.path, 1, 20, config=sandbox_config)

    def test_lifecycle(self, runtime_factory, sandbox_config):
        rt = runtime_factory(sandbox_config)
        assert not rt.is_alive()
        with rt:
            rt.start()  # idempotent
            assert rt.is_alive()
        assert not rt.is_alive()
        rt.stop()  # idempotent
