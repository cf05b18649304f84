"""write_text_hashed: one pass gives the bytes, their sha256 and their newline count."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webshelf.cache import store
from webshelf.cache.shelf import Shelf, count_lines


@pytest.mark.parametrize("text", ["", "a", "a\n", "é\n\nü — x", "line\n" * 3_000 + "end", "😀\n" * 70_000])
def test_hash_size_and_newlines_come_from_the_written_chunks(tmp_path, monkeypatch, text):
    monkeypatch.setattr(store, "WRITE_CHUNK_CHARS", 1_000)  # many chunks, some split inside a line
    path, written, sha, size, newlines = store.write_text_hashed(tmp_path, text, lambda h: f"p-{h}.md")
    data = path.read_bytes()
    assert written and data == text.encode() and size == len(data)
    assert sha == hashlib.sha256(data).hexdigest() and newlines == data.count(b"\n")
    again = store.write_text_hashed(tmp_path, text, lambda h: f"p-{h}.md")
    assert again[:2] == (path, False) and [p.name for p in tmp_path.iterdir()] == [path.name]  # no temp left


@pytest.mark.parametrize("text", ["", "x", "x\n", "a\nb", "a\nb\n\n"])
def test_the_index_line_count_is_count_lines(tmp_path, text):
    with Shelf(tmp_path) as shelf:
        stored = shelf.put(url="https://example.com/a", final_url=None, title=None, text=text, backend="t",
                           content_type="text/markdown")
    assert stored.record.lines == count_lines(text)


@pytest.mark.parametrize("text", ["", "a", "a\n", "é\n\nü — x", "line\n" * 3_000 + "end", "😀\n" * 70_000])
def test_bytes_are_written_hashed_and_counted_as_the_text_is(tmp_path, text):
    """write_bytes_hashed (the UTF-8 the cleaner made) gives the file, name and counts that
    write_text_hashed gives for the same text."""
    (tmp_path / "b").mkdir()
    got = store.write_bytes_hashed(tmp_path / "b", text.encode(), lambda h: f"p-{h}.md")
    want = store.write_text_hashed(tmp_path, text, lambda h: f"p-{h}.md")
    assert (got[0].name, got[1:]) == (want[0].name, want[1:])
    assert got[0].read_bytes() == want[0].read_bytes() == text.encode()
    again = store.write_bytes_hashed(tmp_path, text.encode(), lambda h: f"p-{h}.md")
    assert again[:2] == (want[0], False) and sorted(p.name for p in tmp_path.iterdir()) == sorted(["b", want[0].name])


@pytest.mark.parametrize("text", ["", "x", "x\n", "a\nb", "a\nb\n\n", "é — ü\n" * 500, "line\n" * 400])
@pytest.mark.parametrize("cap", [None, 1_000])
def test_a_utf8_page_is_stored_and_indexed_as_its_text_is(tmp_path, text, cap):
    """Shelf.put(Utf8Text) — written without encoding, or decoded and cut when over the cap —
    gives the same file and index row as Shelf.put(str)."""
    from webshelf.cache.utf8 import Utf8Text

    rows = []
    for name, given in (("s", text), ("u", Utf8Text(text.encode(), len(text)))):
        with Shelf(tmp_path / name) as shelf:
            stored = shelf.put(url="https://example.com/a", final_url=None, title="T", text=given, backend="t",
                               content_type="text/markdown", max_chars=cap, original_chars=None)
            rows.append((stored.path.name, stored.path.read_bytes(), str(stored.text),
                         {k: v for k, v in vars(stored.record).items() if k not in ("fetched_at", "last_access")}))
    assert rows[0] == rows[1]
    assert rows[1][3]["lines"] == count_lines(rows[1][2]) and rows[1][3]["chars"] == len(rows[1][2])


def test_during_never_sees_a_partial_page_under_its_name_and_its_result_is_returned(tmp_path):
    from webshelf.cache.utf8 import Utf8Text

    seen = []

    def during(page):
        # the name may appear while this runs (the writer thread renames once the file is flushed),
        # but only for the complete, flushed file: never a partial page under a final name
        visible = page.path.exists()
        seen.append((visible and page.path.read_bytes() != b"a\nb\n", page.record.lines, page.record.chars,
                     page.written))
        return "window"

    with Shelf(tmp_path) as shelf:
        stored = shelf.put(url="https://example.com/a", final_url=None, title=None, text=Utf8Text(b"a\nb\n", 4),
                           backend="t", content_type="text/markdown", during=during)
        assert stored.during == "window" and stored.path.read_bytes() == b"a\nb\n"
        assert seen == [(False, 2, 4, True)]  # no partial page was ever visible under the name
        again = shelf.put(url="https://example.com/a", final_url=None, title=None, text=Utf8Text(b"a\nb\n", 4),
                          backend="t", content_type="text/markdown", during=during)
        assert again.written is False and seen[-1] == (False, 2, 4, False) and again.during == "window"
        assert [p.name for p in shelf.web_dir.iterdir()] == [stored.path.name]  # no temp file left


def test_an_error_in_during_is_raised_as_it_is_after_the_page_is_stored(tmp_path):
    from webshelf.cache.utf8 import Utf8Text

    def during(page):
        raise KeyError("render failed")

    with Shelf(tmp_path) as shelf:
        with pytest.raises(KeyError):
            shelf.put(url="https://example.com/a", final_url=None, title=None, text=Utf8Text(b"x\n", 2),
                      backend="t", content_type="text/markdown", during=during)
        assert shelf.reuse("https://example.com/a", 60).text == "x\n"


def test_a_failed_flush_is_a_store_error_with_nothing_left_behind(tmp_path, monkeypatch):
    from webshelf.cache.utf8 import Utf8Text
    from webshelf.errors import StoreError

    def no_space(fd):
        raise OSError(28, "No space left on device")

    with Shelf(tmp_path) as shelf:
        monkeypatch.setattr(store.os, "fsync", no_space)
        with pytest.raises(StoreError, match="No space left"):
            shelf.put(url="https://example.com/a", final_url=None, title=None, text=Utf8Text(b"x\n", 2),
                      backend="t", content_type="text/markdown", during=lambda page: "window")
        monkeypatch.undo()
        assert list(shelf.web_dir.iterdir()) == [] and shelf.reuse("https://example.com/a", 60) is None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", "é", "😀", "\n", "word ", "ü\n", "x" * 90]), max_size=300),
       st.integers(0, 400), st.one_of(st.none(), st.integers(0, 5_000)))
def test_cutting_the_bytes_gives_the_cut_text(parts, max_chars, original):
    """cap_utf8 (the cut of a Utf8Text, from its bytes) stores exactly what cap_text stores."""
    from webshelf.cache.caps import cap_text, cap_utf8
    from webshelf.cache.utf8 import Utf8Text

    text = "".join(parts)
    max_chars += 300  # room for the marker line
    want = cap_text(text, max_chars, original)
    page, got_original = cap_utf8(Utf8Text(text.encode("utf-8"), len(text)), max_chars, original)
    assert (page.data, page.chars, got_original) == (want[0].encode("utf-8"), len(want[0]), want[1])


def test_a_bad_name_stops_the_writer_thread_and_leaves_nothing(tmp_path, monkeypatch):
    """The writer waits for the name before renaming: an error before the decision must not hang it."""
    monkeypatch.setattr(store, "INLINE_WRITE_BYTES", 0)  # the writer thread, however small the page
    with pytest.raises(ValueError, match="invalid page name"):
        store.write_bytes_hashed(tmp_path, b"x\n" * 1000, lambda h: "../escape.md")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("inline_bytes", [0, 1 << 17])
def test_the_rename_happens_only_after_the_file_is_flushed(tmp_path, monkeypatch, inline_bytes):
    """Order in the writer thread (and inline, for a small page): write, fsync the file, rename, fsync the directory."""
    monkeypatch.setattr(store, "INLINE_WRITE_BYTES", inline_bytes)
    calls = []
    real_fsync, real_replace = store.os.fsync, store.os.replace
    monkeypatch.setattr(store.os, "fsync", lambda fd: calls.append("fsync") or real_fsync(fd))
    monkeypatch.setattr(store.os, "replace", lambda *a, **k: calls.append("replace") or real_replace(*a, **k))
    path, written, *_ = store.write_bytes_hashed(tmp_path, b"page\n", lambda h: f"p-{h}.md")
    assert written and path.read_bytes() == b"page\n"
    assert calls == ["fsync", "replace", "fsync"]
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_pages_are_written_by_reused_writer_threads_in_a_forked_child_too(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """cache/write_threads.py: no thread started per page, and a forked child (no threads of the
    parent) gets writer threads of its own instead of waiting on the parent's."""
    import threading

    from webshelf.cache.store import write_bytes_hashed

    monkeypatch.setattr(store, "INLINE_WRITE_BYTES", 0)  # the writer threads, however small the page

    def put(i: int) -> Path:
        return write_bytes_hashed(tmp_path, b"page %d\n" % i, lambda h: f"p-{h}.md")[0]

    put(0)
    started = []
    real_start = threading.Thread.start
    monkeypatch.setattr(threading.Thread, "start", lambda self: started.append(self) or real_start(self))
    for i in range(1, 20):
        assert put(i).read_bytes() == b"page %d\n" % i
    assert len(started) <= 1, started  # the pool's idle thread takes the next page: not 19 new threads
    pid = os.fork()
    if pid == 0:  # the child: its own writer threads
        try:
            ok = put(100).read_bytes() == b"page 100\n"
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.parametrize("size", [0, 1, 5_000, (1 << 17) + 1, 300_000])
def test_a_small_page_written_inline_is_the_page_the_writer_thread_writes(tmp_path, monkeypatch, size):
    """write_bytes_hashed writes a page of at most INLINE_WRITE_BYTES in the calling thread: the same
    file, name, hash and counts as through the writer thread, ``during`` called once with them, and
    identical content again not written."""
    data = (b"line \xc3\xa9\n" * size)[:size]
    got = {}
    for mode, inline_bytes in (("thread", 0), ("inline", 1 << 30)):
        monkeypatch.setattr(store, "INLINE_WRITE_BYTES", inline_bytes)
        seen = []
        (tmp_path / mode).mkdir()
        result = store.write_bytes_hashed(tmp_path / mode, data, lambda h: f"p-{h}.md",
                                          during=lambda *args: seen.append(args))
        assert seen == [result] and result[0].read_bytes() == data
        again = store.write_bytes_hashed(tmp_path / mode, data, lambda h: f"p-{h}.md")
        assert again[1] is False and again[2:] == result[2:]
        assert [p.name for p in (tmp_path / mode).iterdir()] == [result[0].name]  # no temp file left
        got[mode] = (result[0].name, *result[1:])
    assert got["thread"] == got["inline"]
