"""Real processes against one cache: concurrent extracts, a writer killed mid-write, a full disk."""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from webshelf.cache.layout import TEMP_PREFIX
from webshelf.cache.shelf import Shelf
from webshelf.core.config import Config
from webshelf.core.extract import web_extract_sync
from webshelf.core.read import read_file
from tests.components import is_root, need
from tests.loopback import Response

MD = {"Content-Type": "text/markdown; charset=utf-8"}
REPO = Path(__file__).resolve().parents[2]


def _extract_worker(home: str, urls: list[str], rounds: int, seed: int, out) -> None:
    """One process: ``rounds`` single-URL extracts, every third one fresh; report paths seen."""
    import random

    config = Config.model_validate({"web": {"allow_private": True}}).with_home(home)
    rng = random.Random(seed)
    seen = []
    for i in range(rounds):
        url = rng.choice(urls)
        result = web_extract_sync([url], config=config, fresh=i % 3 == 0)[0]
        seen.append((result.ok, result.path, result.error.message if result.error else None,
                     result.path is not None and os.path.isfile(result.path)))
    out.put(seen)


def test_four_processes_extracting_overlapping_urls_leave_a_consistent_cache(server, home):
    counter = {"n": 0}

    def changing(_handler):  # content changes now and then, so URLs get several versions
        counter["n"] += 1
        version = counter["n"] // 7
        return Response(("".join(f"# v{version}\n" + f"line {j} " + "q" * 60 + "\n" for j in range(400))).encode(),
                        headers=MD)

    urls = [server.route(f"/concurrent/{i}", changing) for i in range(20)]
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=_extract_worker, args=(str(home), urls, 50, seed, out)) for seed in range(4)]
    for p in procs:
        p.start()
    reports = [out.get(timeout=240) for _ in procs]
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    results = [r for rep in reports for r in rep]
    assert len(results) == 200
    assert all(ok and existed for ok, _path, _err, existed in results), [r for r in results if not (r[0] and r[3])]
    web = home / "cache" / "web"
    assert not [n for n in os.listdir(web) if n.startswith(TEMP_PREFIX)]
    with Shelf(home) as shelf:
        records = shelf.index.all()
        assert {r.name for r in records} == set(os.listdir(web))
        for rec in records:  # no torn file: every byte is what the index says
            data = (web / rec.name).read_bytes()
            assert len(data) == rec.bytes and hashlib.sha256(data).hexdigest() == rec.sha256
        assert shelf.verify().ok
    assert all(Path(path).exists() for _ok, path, _e, _x in results)


_KILLED_WRITER = """
import sys
from webshelf.cache.shelf import Shelf
shelf = Shelf(sys.argv[1])
print("ready", flush=True)
shelf.put(url="http://example.com/huge", final_url=None, title=None, text="x" * 400_000_000,
          backend="test", content_type="text/plain")
print("finished", flush=True)
"""


def test_a_writer_killed_mid_write_leaves_no_partial_page_and_its_temp_file_is_swept(home):
    web = home / "cache" / "web"
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(home)], cwd=REPO, stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline().strip() == "ready"
    deadline = time.monotonic() + 60
    temp = None
    while time.monotonic() < deadline and temp is None:  # wait until bytes are being written
        temps = [p for p in web.iterdir() if p.name.startswith(TEMP_PREFIX)]
        if temps and temps[0].stat().st_size > 0:
            temp = temps[0]
        time.sleep(0.001)
    assert temp is not None, "the writer never started writing"
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    assert proc.returncode == -signal.SIGKILL
    assert [p.name for p in web.iterdir()] == [temp.name]  # nothing under a final name
    with Shelf(home) as shelf:
        assert shelf.index.totals().pages == 0
        report = shelf.verify()
        assert report.temps == [temp]
        assert shelf.prune(shelf_policy()).temp_removed == [temp]
    assert list(web.iterdir()) == []


def shelf_policy():
    from webshelf.cache.evict import EvictionPolicy

    return EvictionPolicy(ttl=0, max_total_bytes=1 << 30)


@pytest.fixture
def tiny_home(tmp_path):
    need(is_root(), "root (to mount a tmpfs)", "run the tests as root, as .ci/run does")
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mnt)], check=True)
    try:
        yield mnt / "home"
    finally:
        from webshelf.cache.shelf import _shared

        _shared.pop(mnt / "home", None)  # drop the process's open shelf before unmounting
        import gc

        gc.collect()
        subprocess.run(["umount", "-l", str(mnt)], check=True)


def test_a_full_disk_still_returns_the_window_without_a_dangling_path_and_damages_nothing(server, tiny_home):
    config = Config.model_validate({"web": {"allow_private": True}}).with_home(tiny_home)
    small = server.route("/diskfull/small", Response(b"# kept\n\nsmall page\n", headers=MD))
    kept = web_extract_sync([small], config=config)[0]
    assert kept.ok and kept.path
    before = Path(kept.path).read_bytes()
    huge = "".join(f"## Part {i}\n" + "".join(f"row {i}.{j} " + "d" * 70 + "\n" for j in range(20)) for i in range(600))
    url = server.route("/diskfull/huge", Response(huge.encode(), headers=MD))  # ≈ 1 MB > the 512 KB disk
    result = web_extract_sync([url], config=config)[0]
    assert result.ok and result.path is None and result.truncated
    assert len(result.content) <= config.web.extract_char_limit
    assert any("could not be stored" in n for n in result.notes)
    footer = result.content[result.content.index("\n---\n[webshelf]"):]
    assert "Full text: not stored" in footer and "read_file" not in footer and str(tiny_home) not in footer
    web = tiny_home / "cache" / "web"
    assert sorted(os.listdir(web)) == [Path(kept.path).name]  # no temp file, no partial page
    assert Path(kept.path).read_bytes() == before
    assert read_file(kept.path, config=config) == "1|# kept\n2|\n3|small page\n"
    again = web_extract_sync([small], config=config)[0]
    assert again.cached and again.path == kept.path


# The cache raises its own errors (webshelf.errors.CacheError subclasses), never OSError / sqlite3.Error --------
def test_a_full_disk_is_a_store_error_that_names_the_reason_and_leaves_the_cache_intact(tiny_home):
    from webshelf.errors import CacheError, StoreError

    with Shelf(tiny_home) as shelf:
        kept = shelf.put(url="http://example.com/kept", final_url=None, title=None, text="# kept\n",
                         backend="test", content_type="text/markdown")
        with pytest.raises(StoreError) as err:
            shelf.put(url="http://example.com/huge", final_url=None, title=None, text="z" * 2_000_000,
                      backend="test", content_type="text/plain")
        assert isinstance(err.value, CacheError) and err.value.code == "store_failed"
        assert err.value.message.startswith("the full text could not be stored: No space left on device")
        assert "free some space" in err.value.message and err.value.context["errno"] == 28
        assert sorted(os.listdir(shelf.web_dir)) == [kept.path.name]  # no temp file, no partial page
        assert shelf.verify().ok


def test_a_read_only_file_system_is_a_cache_error_and_extract_and_read_still_answer(server, tiny_home):
    from webshelf.cache.shelf import _shared
    from webshelf.errors import CacheUnavailableError

    config = Config.model_validate({"web": {"allow_private": True}}).with_home(tiny_home)
    with Shelf(tiny_home) as shelf:
        stored = shelf.put(url="http://example.com/a", final_url=None, title=None, text="# a\n", backend="test",
                           content_type="text/markdown")
    _shared.pop(tiny_home, None)
    subprocess.run(["mount", "-o", "remount,ro", str(tiny_home.parent)], check=True)
    try:
        with pytest.raises(CacheUnavailableError) as err:
            Shelf(tiny_home)
        assert err.value.message.startswith(f"the cache at {tiny_home / 'cache'} is unusable: Read-only file system")
        assert "check its permissions" in err.value.message and err.value.context["errno"] == 30
        url = server.route("/readonly/page", Response(b"# Page\n\nbody\n", headers=MD))
        [result] = web_extract_sync([url], config=config)
        assert result.ok and result.path is None and "body" in result.content
        assert any("is unusable: Read-only file system" in n for n in result.notes), result.notes
        assert read_file(stored.path, config=config) == "1|# a\n"  # the index cannot be touched: the read still works
    finally:
        _shared.pop(tiny_home, None)
        subprocess.run(["mount", "-o", "remount,rw", str(tiny_home.parent)], check=True)


def test_a_damaged_index_is_cache_unavailable_and_extract_still_answers(server, home):
    from webshelf.cache.shelf import _shared
    from webshelf.errors import CacheUnavailableError

    (home / "cache" / "web").mkdir(parents=True)
    (home / "cache" / "index.sqlite").write_bytes(b"this is not an SQLite database\n" * 100)
    _shared.pop(home, None)
    with pytest.raises(CacheUnavailableError) as err:
        Shelf(home)
    assert err.value.code == "cache_unavailable" and "file is not a database" in err.value.message
    assert "move it away and run webshelf cache verify --repair" in err.value.message
    config = Config.model_validate({"web": {"allow_private": True}}).with_home(home)
    url = server.route("/damaged/page", Response(b"# Page\n\nbody\n", headers=MD))
    [result] = web_extract_sync([url], config=config)
    assert result.ok and result.path is None and "body" in result.content
    assert any("is unusable" in n and "not a database" in n for n in result.notes), result.notes


_UNWRITABLE = """
import sys
from webshelf.cache.shelf import Shelf
from webshelf.errors import CacheError
try:
    Shelf(sys.argv[1])
except CacheError as exc:
    print(type(exc).__name__, exc.code, exc.message, sep="\\n")
"""


def test_a_home_the_user_cannot_write_is_cache_unavailable_naming_the_permission(tmp_path):
    """A real EACCES: as root the check runs as nobody (root may write anywhere)."""
    import tempfile

    parent = Path(tempfile.mkdtemp(prefix="webshelf-noperm-"))  # world-traversable, unlike tmp_path as root
    try:
        os.chmod(parent, 0o555)
        argv = [sys.executable, "-c", _UNWRITABLE, str(parent / "home")]
        if is_root():
            argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv]
        done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        kind, code, message = done.stdout.strip().split("\n")
        assert (kind, code) == ("CacheUnavailableError", "cache_unavailable")
        assert message.startswith(f"the cache at {parent / 'home' / 'cache'} is unusable: Permission denied")
        assert "check its permissions" in message
    finally:
        os.chmod(parent, 0o755)
        os.rmdir(parent)
