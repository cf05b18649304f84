"""Issue 15, huge-page mode (core/convert/html_huge.py): is slicing safe, and what does it save?

``python bench/huge_slices.py peaks``  — peak RSS (VmHWM, one child process per variant, so Lexbor's
and html-to-markdown's native memory counts) of converting bench/speed_pool.py's 20 MB page over
its decoded text: today's path, html-to-markdown on the whole document (option a), one tree
without main-content selection, and slices (option b).

``python bench/huge_slices.py equivalence [slice_chars]`` — every WCXB dev page and the 32 pydocs
pages concatenated, cut into small slices (default 20,000 characters, so that ordinary pages get
many cuts) and compared with the same huge-mode conversion in one tree: identical, identical up to
whitespace and list markers, differing only through the whole-page depth pre-check, or different.
"""

from __future__ import annotations

import collections
import glob
import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

_PEAK = r"""
import sys, gc, json
sys.path.insert(0, {repo!r})
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) // 1024
from webshelf.core.convert import by_type, html_huge, html_markdown as hm
from webshelf.core.convert.html_hidden import drop_hidden_in
from bench.speed_pool import big_page
body = big_page()
html = by_type.decode(body, None, html=True)
gc.collect(); base = hwm()
variant = {variant!r}
if variant == "today":
    md = hm.html_to_markdown(html, "http://x/", prepare=drop_hidden_in).markdown
elif variant == "a":
    md = hm._convert(html, "http://x/")
elif variant == "one tree":
    md = html_huge.convert_huge(html, lambda f: hm._convert(f, "http://x/"), hm._polish, hm._title, drop_hidden_in,
                                chunk_chars=10**12)[0]
else:
    md = html_huge.convert_huge(html, lambda f: hm._convert(f, "http://x/"), hm._polish, hm._title, drop_hidden_in)[0]
print(json.dumps([hwm() - base, len(md)]))
"""


def peaks() -> None:
    for variant, what in (("today", "today: Lexbor tree, main content, html-to-markdown of the fragment"),
                          ("a", "(a) html-to-markdown on the whole document"),
                          ("one tree", "huge mode in one tree (no main-content selection)"),
                          ("b", "(b) huge mode, ~1 MB slices")):
        out = subprocess.run([sys.executable, "-c", _PEAK.format(repo=str(REPO), variant=variant)],
                             capture_output=True, text=True, timeout=900)
        peak, chars = json.loads(out.stdout) if out.returncode == 0 else (float("nan"), 0)
        print(f"| {what} | +{peak} MB | {chars:,} |", flush=True)


def _words(text: str) -> list[str]:
    return sorted(re.findall(r"\w+", text))


def _spaces(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"(?m)^(\s*)\d+[.)] ", r"\1# ", text)).strip()


def equivalence(chunk: int) -> None:
    from tests import corpus
    from webshelf.core.convert import by_type, html_huge, html_markdown as hm, html_precheck
    from webshelf.core.convert.html_hidden import drop_hidden_in

    def run(html: str, chars: int) -> tuple[str, str | None]:
        return html_huge.convert_huge(html, lambda f: hm._convert(f, "https://example.com/"), hm._polish, hm._title,
                                      drop_hidden_in, chars)

    pages = [(p.name, gzip.open(p).read()) for p in sorted(corpus.WCXB.glob("html/*.gz"))]
    pydocs = b"".join(corpus.pydocs_bytes(n) or b"" for n in corpus.pydocs_names())
    pages.append(("pydocs concatenated", pydocs))
    verdicts, uncut, titles, cuts = collections.Counter(), collections.Counter(), 0, 0
    for name, body in pages:
        html = by_type.decode(body, None, html=True)
        plan = html_huge.plan(html, chunk)
        if len(plan.slices) == 1:
            uncut[re.sub(r" at character [\d,]+| \(.*", "", plan.why_whole or "")] += 1
            continue
        cuts += len(plan.slices) - 1
        (whole, t1), (sliced, t2) = run(html, 10**12), run(html, chunk)
        titles += t1 != t2
        if whole == sliced:
            verdict = "identical"
        elif _spaces(whole) == _spaces(sliced):
            verdict = "whitespace or list marker only"
        elif _words(whole) == _words(sliced):
            verdict = "same words, other Markdown"
        else:
            html_huge.flatten_deep = lambda d, m: (d, 0)
            same = run(html, 10**12)[0] == run(html, chunk)[0]
            html_huge.flatten_deep = html_precheck.flatten_deep
            verdict = "differ only through the whole-page depth pre-check" if same else "DIFFERENT"
        verdicts[verdict] += 1
        if verdict != "identical":
            print(f"  {name}: {verdict}", flush=True)
    print(f"pages cut: {sum(verdicts.values())} ({cuts:,} cuts of ~{chunk:,} characters): {dict(verdicts)}; "
          f"titles differ: {titles}")
    print(f"not cut: {dict(uncut.most_common())}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["peaks"]:
        peaks()
    elif sys.argv[1:2] == ["equivalence"]:
        equivalence(int(sys.argv[2]) if len(sys.argv) > 2 else 20_000)
    else:
        sys.exit(__doc__)
