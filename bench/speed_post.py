"""Issue 15 rows for the work after the fetch: clean + store + window, read_file, search_page.

Each row is measured against a baseline taken in the same run, in interleaved rounds (ours,
then the baseline, ROUNDS times; medians), so machine load hits both alike:

- post-fetch of 1 / 10 / 50 MB of real Markdown (the pydocs corpus, converted, repeated to
  size; the cap raised to hold the 50 MB page): ``clean_for_store`` + ``Shelf.put`` +
  ``render``, vs writing the same bytes to a temp file + fsync + ``os.replace``. Goal ≤ 3×.
- a 10 MB page under the default 2,000,000-character cap, vs the post-fetch of a page of
  the stored size: the cost must be bounded by what is stored (goal ≤ 1.5×).
- ``read_file`` 500 lines near the end of a 50 MB page, vs ``tail -n +N | head -500`` on the
  file (a shell pipeline, as an agent in a sandbox would run it). Warm (the in-memory line
  index exists, as in a long-lived MCP server) and cold (first read of the page in a
  process: the index is built). Goal ≤ 1.5×.
- ``search_page`` for a rare word in a 50 MB page, vs ``grep -c``. Goal ≤ 2×.

Run alone: .venv/bin/python bench/speed_post.py [--rounds N] [--sizes 1,10] [--breakdown-only]   (or all
rows: bench/speed.py); alone, it also prints where the post-fetch time of a page goes (``breakdown``, 10 MB
unless ``--sizes``): every step timed in the same interleaved rounds as the plain write — the UTF-8 path
that ``core.extract`` runs, the str path and the previous clean and heading scan (kept verbatim in the
tests as references) beside it.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from speed_common import Row, load_note, row  # noqa: E402

from webshelf.cache.shelf import Shelf  # noqa: E402
from webshelf.core import line_index  # noqa: E402
from webshelf.core.clean import clean_for_store  # noqa: E402
from webshelf.core.clean_utf8 import clean_utf8_for_store  # noqa: E402
from webshelf.core.config import Config  # noqa: E402
from webshelf.core.read import read_file  # noqa: E402
from webshelf.core.search_page import search_page  # noqa: E402
from webshelf.core.truncate import render  # noqa: E402

ROUNDS = 5
MB = 1_000_000
RARE = "zyzzogeton"


def _corpus_markdown(size: int = 2 * MB) -> str:
    """~``size`` characters of real Markdown (pydocs HTML → Markdown), or a synthetic page
    with headings, lists, code and prose when the corpus is missing."""
    try:
        from tests.loopback import PYDOCS
        from webshelf.core.convert.html_markdown import html_to_markdown

        parts, n = [], 0
        for file in sorted(PYDOCS.glob("*.html")):
            md = html_to_markdown(file.read_text(encoding="utf-8"), f"https://docs.python.org/3/{file.stem}").markdown
            parts.append(md)
            n += len(md)
            if n >= size:
                break
        if n >= size // 4:
            return "\n".join(parts)
    except Exception:  # the corpus or the converter is missing: synthetic is enough for timing
        pass
    block = ("## Section {i}\n\nSome prose with `code`, *emphasis* and a [link](https://example.com/{i}). " * 3
             + "\n\n- item one\n- item two\n\n```python\nprint({i})\n```\n\n")
    return "".join(block.format(i=i) for i in range(size // len(block) + 1))


def _page(size: int, base: str) -> str:
    reps = size // len(base) + 1
    return (base * reps)[:size]


def _write_fsync_replace(tmp: Path, final: Path, data: bytes) -> None:
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, final)


def _plain_write(directory: Path, data: bytes, i: int) -> None:
    _write_fsync_replace(directory / f".plain-{i}.tmp", directory / f"plain-{i}.md", data)


def _floor_write(directory: Path, text: str, i: int) -> None:
    """The least a store of ``text`` under a content-hash name can do: encode it, sha256 the
    bytes (the name), write + fsync a temp file, ``os.replace`` it, fsync the directory (the
    rename's durability, which the plain baseline skips). No cleaning, no window, no index."""
    import hashlib

    data = text.encode()
    name = hashlib.sha256(data).hexdigest()[:16]
    _write_fsync_replace(directory / f".floor-{i}.tmp", directory / f"floor-{name}.md", data)
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _post_fetch(shelf: Shelf, config: Config, raw: str, i: int) -> None:
    """What ``core.extract._finish`` does after the fetch (the title scan aside): clean to UTF-8,
    store those bytes, render the window from them while the file is flushed (``during``)."""
    text, raw_chars = clean_utf8_for_store(raw, config.web.max_line_chars, config.cache.max_file_chars)
    limit = config.web.extract_char_limit
    shelf.put(url=f"https://bench.example/{i}", final_url=None, title=None, text=text, backend="bench",
              content_type="text/markdown", max_chars=config.cache.max_file_chars, original_chars=raw_chars,
              during=lambda stored: render(stored.text, limit, path=str(stored.path)))


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def post_fetch_rows(base: str, home: Path) -> list[Row]:
    out: list[Row] = []
    plain = home / "plain"
    plain.mkdir(parents=True)
    big = Config.model_validate({"cache": {"max_file_chars": 60 * MB}}).with_home(home)
    default = Config().with_home(home)
    stored_size: dict[str, float] = {}
    with Shelf(home) as shelf:
        for label, size, config in (("1 MB", MB, big), ("10 MB", 10 * MB, big), ("50 MB (cap raised)", 50 * MB, big),
                                    ("2 MB (stored size)", 2 * MB, default), ("10 MB, default 2M cap", 10 * MB, default)):
            page = _page(size, base)
            ours, baseline = [], []
            for i in range(ROUNDS + 1):  # round 0 warms up
                raw = f"round {i} {label}\n" + page  # new content each round: a real write, never a reuse
                t = _timed(lambda: _post_fetch(shelf, config, raw, i))
                data = raw.encode()
                b = _timed(lambda: _plain_write(plain, data, i))
                if i:
                    ours.append(t)
                    baseline.append(b)
                del raw, data
            o, b = statistics.median(ours), statistics.median(baseline)
            if label.startswith("2 MB"):
                stored_size["ms"] = o
                continue
            if "default" in label:
                out.append(row("post-fetch, 10 MB page under the default 2M-char cap", o, stored_size["ms"],
                               max_ratio=1.5, goal="≤ 1.5× a 2 MB page (bounded by what is stored)",
                               note="baseline: post-fetch of a 2 MB page, same run"))
            else:
                out.append(row(f"post-fetch (clean+store+window), {label} Markdown", o, b, max_ratio=3,
                               note="baseline: write+fsync+replace of the same bytes"))
            for f in plain.iterdir():
                f.unlink()
            shelf.clear()
    return out


def _pipeline_ms(argv: str, runs: int = ROUNDS) -> float:
    times = []
    for _ in range(runs + 1):
        start = time.perf_counter()
        subprocess.run(argv, shell=True, check=True, stdout=subprocess.DEVNULL)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times[1:])


def read_search_rows(base: str, home: Path) -> list[Row]:
    config = Config.model_validate({"cache": {"max_file_chars": 60 * MB}}).with_home(home)
    page = _page(50 * MB, base)
    cut = page.rfind("\n", 0, len(page) - 3 * MB) + 1  # the rare word once, near the end
    page = page[:cut] + f"the {RARE} is a rare weevil\n" + page[cut:]
    with Shelf(home) as shelf:
        text, _ = clean_for_store(page, config.web.max_line_chars, config.cache.max_file_chars)
        stored = shelf.put(url="https://bench.example/big", final_url=None, title=None, text=text, backend="bench",
                           content_type="text/markdown", max_chars=config.cache.max_file_chars)
    path = str(stored.path)
    del page, text
    lines = stored.record.lines
    offset = lines - 1_000
    rows: list[Row] = []
    tail = f"tail -n +{offset} {path} | head -500"
    if shutil.which("tail") and shutil.which("head"):
        ours_warm, ours_cold, base_ms = [], [], []
        for i in range(ROUNDS + 1):
            line_index._cache.clear()  # cold: the first read of this page in a process builds the index
            cold = _timed(lambda: read_file(path, offset, 500, config=config))
            warm = _timed(lambda: read_file(path, offset, 500, config=config))
            b = _pipeline_ms(tail, runs=1)
            if i:
                ours_cold.append(cold)
                ours_warm.append(warm)
                base_ms.append(b)
        b = statistics.median(base_ms)
        rows.append(row("read_file near the end of a 50 MB page (warm line index)", statistics.median(ours_warm), b,
                        max_ratio=1.5, note=f"baseline: {tail.replace(path, 'FILE')}"))
        rows.append(row("read_file near the end of a 50 MB page (cold: first read builds the index)",
                        statistics.median(ours_cold), b, max_ratio=1.5, note="same baseline"))
    if shutil.which("grep"):
        ours, base_ms = [], []
        for i in range(ROUNDS + 1):
            t = _timed(lambda: search_page(path, RARE, config=config))
            b = _pipeline_ms(f"grep -c -i {RARE} {path}", runs=1)
            if i:
                ours.append(t)
                base_ms.append(b)
        rows.append(row("search_page rare word, 50 MB page", statistics.median(ours), statistics.median(base_ms),
                        max_ratio=2, note="baseline: grep -c -i WORD FILE"))
    with Shelf(home) as shelf:
        shelf.clear()
    return rows


def rows() -> list[Row]:
    base = _corpus_markdown()
    with tempfile.TemporaryDirectory(prefix="webshelf-speed-post-") as tmp:
        home = Path(tmp)
        out = post_fetch_rows(base, home / "a")
        out += read_search_rows(base, home / "b")
    return out


def breakdown(base: str, home: Path, size: int = 10 * MB, rounds: int = ROUNDS) -> list[tuple[str, float, float, float]]:
    """(step, median wall ms, min wall ms, median CPU ms) for the post-fetch steps of one ``size`` page, interleaved
    round by round with the baseline write so that load hits every step alike. The str path (``clean_for_store``,
    ``Shelf.put(str)``, ``render(str)``) and the previous implementations are timed beside the UTF-8 path."""
    import hashlib

    from tests.core.test_clean_equivalence import reference_clean
    from tests.core.test_truncate_headings import reference_headings
    from webshelf.cache.store import write_bytes_hashed
    from webshelf.core.truncate import headings
    from webshelf.core.truncate_utf8 import headings_utf8

    config = Config.model_validate({"cache": {"max_file_chars": 60 * MB}}).with_home(home)
    plain = home / "plain"
    plain.mkdir(parents=True, exist_ok=True)
    raw_dir = home / "raw"
    raw_dir.mkdir(parents=True, exist_ok=True)
    page = _page(size, base)
    text, _ = clean_for_store(page, config.web.max_line_chars, config.cache.max_file_chars)
    utf8, _ = clean_utf8_for_store(page, config.web.max_line_chars, config.cache.max_file_chars)
    data = text.encode()
    width, cap = config.web.max_line_chars, config.cache.max_file_chars
    times: dict[str, list[float]] = {}
    cpu_times: dict[str, list[float]] = {}  # process CPU: what load does not inflate (fsync waits are not CPU)
    with Shelf(home) as shelf:
        for i in range(rounds + 1):
            raw = f"round {i}\n" + page
            steps = [
                ("post-fetch, UTF-8 path (clean + put + render)", lambda: _post_fetch(shelf, config, raw, 1000 + i)),
                ("  clean_utf8_for_store", lambda: clean_utf8_for_store(raw, width, cap)),
                ("  Shelf.put(Utf8Text): sha256+write+fsync+replace+dir fsync+index",
                 lambda: shelf.put(url=f"https://bench.example/u{i}", final_url=None, title=None,
                                   text=type(utf8)(b"%d\n" % i + utf8.data, utf8.chars + len(str(i)) + 1),
                                   backend="bench", content_type="text/markdown", max_chars=cap)),
                ("    write_bytes_hashed alone (no index row, no lock)",
                 lambda: write_bytes_hashed(raw_dir, b"%d\n" % i + data, lambda h: f"p-{h}.md")),
                ("    index row alone", lambda: shelf.index.record(_record_copy(shelf, i))),
                ("  render(Utf8Text): ends, footer, outline", lambda: render(type(utf8)(utf8.data, utf8.chars),
                                                                             config.web.extract_char_limit,
                                                                             path="/x/y.md")),
                ("    headings on the bytes (whole page)", lambda: headings_utf8(utf8.data, len(utf8.data))),
                ("str path: clean_for_store", lambda: clean_for_store(raw, width, cap)),
                ("str path: clean, previous per-line pass", lambda: reference_clean(raw, width)),
                ("str path: Shelf.put(str): encode+sha256+write+fsync+replace+index", lambda: shelf.put(
                    url=f"https://bench.example/b{i}", final_url=None, title=None, text=f"{i}\n" + text,
                    backend="bench", content_type="text/markdown", max_chars=cap)),
                ("str path: render(str)", lambda: render(text, config.web.extract_char_limit, path="/x/y.md")),
                ("str path: headings, whole page", lambda: headings(text)),
                ("str path: headings, previous one-scan finder", lambda: reference_headings(text)),
                ("encode UTF-8 (whole text)", lambda: page.encode()),
                ("sha256 of the bytes", lambda: hashlib.sha256(data).digest()),
                ("count newlines (bytes)", lambda: data.count(b"\n")),
                ("floor: encode+sha256+write+fsync+replace+dir fsync", lambda: _floor_write(plain, raw, i)),
                ("baseline: write+fsync+replace of the bytes", lambda: _plain_write(plain, data, i)),
            ]
            for name, fn in steps:
                cpu = time.process_time()
                t = _timed(fn)
                cpu = (time.process_time() - cpu) * 1000
                if i:
                    times.setdefault(name, []).append(t)
                    cpu_times.setdefault(name, []).append(cpu)
            for f in raw_dir.iterdir():
                f.unlink()
        shelf.clear()
    return [(name, statistics.median(v), min(v), statistics.median(cpu_times[name])) for name, v in times.items()]


def _record_copy(shelf: Shelf, i: int):  # noqa: ANN202 — a PageRecord for a name that is not on the shelf
    from webshelf.cache.index import PageRecord

    now = time.time()
    return PageRecord(name=f"row-only-{i}.md", url=f"https://bench.example/r{i}", final_url=None, title=None,
                      sha256="0" * 64, chars=1, lines=1, bytes=1, fetched_at=now, last_access=now, backend="bench",
                      content_type="text/markdown", url_key=f"https://bench.example/r{i}", original_chars=None)


if __name__ == "__main__":
    print(load_note())
    n = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else ROUNDS
    sizes = [float(s) for s in sys.argv[sys.argv.index("--sizes") + 1].split(",")] if "--sizes" in sys.argv else [10]
    for mb in sizes:
        with tempfile.TemporaryDirectory(prefix="webshelf-speed-post-") as tmp:
            print(f"where the post-fetch time of a {mb:g} MB page goes ({n} interleaved rounds; wall median, "
                  "wall min, CPU median ms):")
            for name, med, low, cpu in breakdown(_corpus_markdown(), Path(tmp), size=int(mb * MB), rounds=n):
                print(f"  {name:<70} {med:>8.2f} {low:>8.2f} {cpu:>8.2f}")
        print(load_note())
    if "--breakdown-only" in sys.argv:
        sys.exit(0)
    for r in rows():
        ratio = "—" if r["ratio"] is None else f"{r['ratio']:.2f}×"
        ok = {True: "PASS", False: "FAIL", None: "—"}[r["passed"]]
        base_s = "—" if r["baseline_ms"] is None else f"{r['baseline_ms']:.1f}"
        print(f"{r['what']:<75} {r['ours_ms']:>9.1f} {base_s:>9} {ratio:>8} {r['goal']:<12} {ok}  {r['note']}")
    print(load_note())
