"""read_file: N|text lines, confinement to cache/web, errors that say what to do."""

from __future__ import annotations

import os

import pytest

from webshelf.cache.shelf import Shelf
from webshelf.errors import InputError, OffsetPastEndError, PageNotFoundError, PathOutsideCacheError
from webshelf.core.read import read_file


@pytest.fixture
def stored(config):
    text = "".join(f"line {i}\n" for i in range(1, 3_001))
    with Shelf(config.home) as shelf:
        page = shelf.put(url="https://example.com/a", final_url=None, title="A", text=text,
                         backend="local", content_type="text/plain")
    return page.path


def test_lines_are_numbered_from_offset(stored, config):
    assert read_file(stored, 2_999, 5, config=config) == "2999|line 2999\n3000|line 3000\n"
    assert read_file(stored, config=config).count("\n") == 500


def test_a_bare_name_is_taken_relative_to_the_cache(stored, config):
    assert read_file(stored.name, 1, 1, config=config) == "1|line 1\n"


def test_offset_past_the_end_says_how_many_lines_exist(stored, config):
    with pytest.raises(OffsetPastEndError, match="the page has 3,000 lines"):
        read_file(stored, 3_001, 10, config=config)


@pytest.mark.parametrize("offset, limit", [(0, 10), (1, 0), (1, 2_001), (-5, 1)])
def test_bad_offset_or_limit_names_the_allowed_values(stored, config, offset, limit):
    with pytest.raises(InputError, match="offset must be|limit must be between 1 and 2,000"):
        read_file(stored, offset, limit, config=config)


def test_paths_outside_the_cache_are_refused(stored, config, tmp_path):
    outside = tmp_path / "secret.md"
    outside.write_text("secret\n")
    for path in (outside, stored.parent / ".." / "index.sqlite", f"{stored.parent}/../../../secret.md", "/etc/passwd"):
        with pytest.raises(PathOutsideCacheError, match="only reads pages stored in"):
            read_file(path, config=config)


def test_a_symlink_inside_the_cache_is_refused(stored, config, tmp_path):
    target = tmp_path / "target.md"
    target.write_text("x\n")
    link = stored.parent / "evil.md"
    os.symlink(target, link)
    with pytest.raises(PathOutsideCacheError):
        read_file(link, config=config)
    os.unlink(link)
    os.symlink(stored, link)  # even one pointing at a real page
    with pytest.raises(PathOutsideCacheError):
        read_file(link, config=config)


def test_a_missing_page_names_the_url_to_re_extract(stored, config):
    os.unlink(stored)
    with pytest.raises(PageNotFoundError, match=r"re-extract it with web_extract\(\['https://example.com/a'\]\)"):
        read_file(stored, config=config)


def test_an_unknown_missing_page_says_to_extract_again(config):
    web = config.home / "cache" / "web"
    web.mkdir(parents=True)
    with pytest.raises(PageNotFoundError, match="extract the page again"):
        read_file(web / "nothing-here.md", config=config)


@pytest.mark.parametrize("path", ["/tmp/x\x00.md", "~nosuchuser-webshelf/cache/web/x.md"])
def test_unusable_paths_are_refused_with_a_clear_error(config, path):
    with pytest.raises(PathOutsideCacheError, match="not a usable path"):
        read_file(path, config=config)


def test_a_huge_offset_is_an_input_error_not_a_crash(stored, config):
    with pytest.raises(InputError, match="offset must be a line number from 1 to 1,000,000,000"):
        read_file(stored, 2**63, 10, config=config)


def test_an_empty_stored_page_says_so(config):
    with Shelf(config.home) as shelf:
        page = shelf.put(url="https://example.com/empty", final_url=None, title=None, text="",
                         backend="local", content_type="text/html")
    with pytest.raises(OffsetPastEndError, match="the stored page is empty"):
        read_file(page.path, config=config)


def test_any_offset_of_a_large_page_reads_the_same_as_splitting_it(config):
    """read_file jumps through a sparse newline index (core.line_index); the output is what
    splitting the whole page gives, at block edges, with invalid bytes and a last open line."""
    from webshelf.core import line_index

    lines = [f"{i} " + "é" * (i % 97) + ("\ufffd" if i % 1_000 == 0 else "") for i in range(1, 40_001)]
    text = "\n".join(lines)  # no final newline: the last line still counts
    with Shelf(config.home) as shelf:
        page = shelf.put(url="https://example.com/big", final_url=None, title=None, text=text,
                         backend="local", content_type="text/plain")
    assert os.path.getsize(page.path) > 4 * line_index.BLOCK
    for offset in (1, 2, 700, 701, 9_999, 20_000, 39_500, 40_000):
        line_index._cache.clear()
        expected = "".join(f"{n}|{lines[n - 1]}\n" for n in range(offset, min(offset + 500, 40_001)))
        assert read_file(page.path, offset, 500, config=config) == expected  # cold index
        assert read_file(page.path, offset, 500, config=config) == expected  # warm index
    with pytest.raises(OffsetPastEndError, match="the page has 40,000 lines"):
        read_file(page.path, 40_001, 10, config=config)


def test_the_line_index_counts_every_block_as_bytes_count_does_and_lets_the_map_close(tmp_path):
    """core.line_index.build counts with stringzilla on a view of the map: the same counts as
    slicing and ``bytes.count`` per block (newlines on both sides of a block edge, a last open
    line), and the view is released, so the page's map closes (an exported buffer would refuse)."""
    import mmap

    from webshelf.core import line_index

    block = line_index.BLOCK
    data = (b"a" * (block - 1) + b"\n" + b"\n" + b"x\n" * 5 + "é\n".encode() * block)[: 3 * block + 7] + b"tail"
    (tmp_path / "page.md").write_bytes(data)
    with open(tmp_path / "page.md", "rb") as f:
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        index = line_index.build(mapped)
        mapped.close()  # BufferError if build kept an exported view
    before = [data[:start].count(b"\n") for start in range(0, len(data), block)]
    assert (index.before, index.newlines, index.open_end) == (before, data.count(b"\n"), True)
    assert line_index.build(b"") == line_index.LineIndex(0, [], 0, False)


def test_a_fifo_under_a_page_name_is_refused_without_blocking(stored, config):
    fifo = stored.parent / "fifo-page.md"
    os.mkfifo(fifo)
    try:
        with pytest.raises(PathOutsideCacheError, match="not a stored page"):
            read_file(fifo, config=config)
    finally:
        os.unlink(fifo)
