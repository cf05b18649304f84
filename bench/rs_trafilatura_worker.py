"""rs-trafilatura in its own interpreter, for bench/extract_quality.py's ``--rs-python``.

rs-trafilatura (Rust, PyPI ``rs-trafilatura``) is the extractor WCXB's author publishes as the
best on that benchmark. Its wheels are built for CPython 3.12 only (0.1.1: ``cp312``
manylinux_2_34; the source distribution needs a Rust toolchain and crates.io), so it cannot load
into the project's 3.11 environment. This script imports nothing of webshelf: it reads a spec
written by extract_quality (pages as gzip paths and URLs), extracts each page, and writes the
outputs, the time of each extraction call and the process's peak RSS; extract_quality scores them
as it scores every other candidate.

    python3.12 -m venv /tmp/rs && /tmp/rs/bin/pip install rs-trafilatura
    nice -n 10 .venv/bin/python bench/extract_quality.py --rs-python /tmp/rs/bin/python …
"""

from __future__ import annotations

import gzip
import json
import resource
import sys
import time
from pathlib import Path

import rs_trafilatura


def main(spec_path: str, out_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text())
    markdown = spec["mode"] == "markdown"
    outputs: dict[str, dict] = {}
    for i, page in enumerate(spec["pages"]):
        html = gzip.decompress(Path(page["path"]).read_bytes()).decode("utf-8", errors="replace")
        if i == 0:
            rs_trafilatura.extract(html, url=page["url"], output_markdown=markdown)  # warm-up
        start = time.perf_counter()
        try:
            result = rs_trafilatura.extract(html, url=page["url"], output_markdown=markdown)
            text = (result.content_markdown if markdown else result.main_content) or ""
        except Exception as exc:  # a crash scores zero, as for every candidate
            text = ""
            print(f"  rs-trafilatura {page['id']}: {type(exc).__name__}: {exc}", file=sys.stderr)
        outputs[page["id"]] = {"text": text, "ms": (time.perf_counter() - start) * 1000}
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    try:  # VmHWM, as extract_quality's workers: ru_maxrss carries the forked parent's size over exec
        hwm = [line for line in Path("/proc/self/status").read_text().splitlines() if line.startswith("VmHWM:")]
        rss_mb = int(hwm[0].split()[1]) / 1024 if hwm else rss_mb
    except OSError:
        pass
    Path(out_path).write_text(json.dumps({"outputs": outputs, "peak_rss_mb": rss_mb,
                                          "version": getattr(rs_trafilatura, "__version__", None)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:3]))
