"""write_text_hashed: one pass gives the bytes, their sha256 and their newline count."""

from __future__ import annotations

import hashlib

import pytest

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
