"""The compiled Lexbor reads (core/convert/native) give the Python code's answers: ``text_len`` of
every node and the block classifier's blocks and features, on the real pages kept in
tests/core/pages (WCXB dev, CC-BY-4.0) and on text Lexbor keeps undecoded; the whole served
Markdown is the same with and without them; and a module that answers differently is refused.
bench/served_cpu_ab.py makes the same comparison on every corpus page (``--before`` a commit
without the compiled part)."""

from __future__ import annotations

import gzip
import hashlib
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
from selectolax.lexbor import LexborHTMLParser

from tests.components import need
from webshelf.core.convert import by_type, native
from webshelf.core.convert.blocks import features

PAGES = sorted((Path(__file__).resolve().parent / "pages").glob("*.html.gz"))


def _python_len(node) -> int:
    return len(node.text(deep=True, separator=" ", strip=True))


def _need_native() -> None:
    need(native.AVAILABLE, "webshelf's compiled part (core/convert/native/_lexbor)",
         f"{native.REASON}; reinstall with a C compiler present: pip install -e '.[test]'")


def _rows(found):
    return [(b.node.mem_id, b.chars, b.features, b.chain) for b in found]


def _html(path: Path) -> str:
    return gzip.decompress(path.read_bytes()).decode("utf-8", "replace")


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name.split(".")[0])
def test_text_len_and_blocks_are_the_python_codes_on_a_real_page(path):
    _need_native()
    tree = LexborHTMLParser(_html(path))
    for node in tree.root.traverse(include_text=True):
        assert native.text_len(node) == _python_len(node), node.tag
        if node.is_element_node:
            assert native.link_len(node) == sum(map(_python_len, node.css("a"))), node.tag
    for container in [tree.body, *tree.css("main, article, div")[:40]]:
        assert _rows(native.blocks(container)) == _rows(features.blocks(container))
        assert _rows(native.blocks(container, 5)) == _rows(features.blocks(container, 5))


def test_the_served_markdown_is_the_same_without_the_compiled_part(tmp_path):
    """The pages served with the compiled part, and by a process where ``WEBSHELF_NATIVE=0``
    leaves every function to the Python code (what an install without a C compiler runs)."""
    _need_native()
    script = (
        "import gzip, hashlib, sys\n"
        "from webshelf.core.convert import by_type, native\n"
        "assert not native.AVAILABLE, native.REASON\n"
        "for path in sys.argv[1:]:\n"
        "    page = gzip.decompress(open(path, 'rb').read()).decode('utf-8', 'replace').encode()\n"
        "    out = by_type.to_markdown(page, 'text/html; charset=utf-8', 'https://example.org/')\n"
        "    print(hashlib.sha256((out.title or '').encode() + b'\\0' + out.markdown.encode()).hexdigest())\n")
    done = subprocess.run([sys.executable, "-c", script, *map(str, PAGES)], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "WEBSHELF_NATIVE": "0"})
    assert done.returncode == 0, done.stderr
    served = []
    for path in PAGES:
        out = by_type.to_markdown(_html(path).encode(), "text/html; charset=utf-8", "https://example.org/")
        served.append(hashlib.sha256((out.title or "").encode() + b"\0" + out.markdown.encode()).hexdigest())
    assert done.stdout.split() == served


@pytest.mark.parametrize("body", [
    b"<main><p>\xff\xfe broken \xc3 bytes</p><p class='a\xff'>two</p><p class='a\xfe'>three</p></main>",
    "<main><p>\u00a0\u2003 wide\u3000spaces \u2028</p><div>\u200b zero width</div></main>".encode(),
    b"<main><pre><p>inside</p>code</pre><p><a href='/'>link</a><img src='x'></p></main>",
    b"<main>  </main>",
])
def test_odd_text_gets_the_python_codes_answers(body):
    """Lexbor keeps bytes it cannot decode; the C reads then ask the Python code, so the numbers
    stay the same (selectolax reads such bytes as U+FFFD)."""
    _need_native()
    tree = LexborHTMLParser(body)
    for node in tree.root.traverse(include_text=True):
        assert native.text_len(node) == _python_len(node)
    main = tree.css_first("main")
    assert _rows(native.blocks(main)) == _rows(features.blocks(main))


def test_a_module_with_other_answers_is_refused():
    """What guards a selectolax whose Lexbor or wrapper lays its nodes out otherwise: the check
    reads the wrapper's layout first, then compares every answer with the Python code's and
    names the first that differs."""
    _need_native()
    layout_ok = native._module.layout_ok

    def stub(**given):
        return types.SimpleNamespace(**{"layout_ok": layout_ok, "text_len": _python_len,
                                        "link_len": native._module.link_len, "blocks": features.blocks,
                                        **given})

    assert native._check(stub()) is None
    assert "laid out otherwise" in native._check(stub(layout_ok=lambda node: False))
    assert native._check(stub(text_len=lambda node: _python_len(node) + 1)).startswith("text_len differs on <")
    assert native._check(stub(link_len=lambda node: 0)).startswith("link_len differs on <")
    assert native._check(stub(blocks=lambda container: [])) == "blocks differ"


def test_the_wrapper_layout_is_read_where_selectolax_keeps_it():
    _need_native()
    tree = LexborHTMLParser("<div><p>one</p></div>")
    assert native._module.layout_ok(tree.css_first("p"))
    assert native._module.layout_ok(tree.root)
