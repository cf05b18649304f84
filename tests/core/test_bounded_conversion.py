"""Bounded conversion (issue 16 item 1, issue 15's worker pool): hostile pages generated here and
served by the real loopback server give their per-URL error or their text, the other URLs of the
same call succeed, and a worker killed mid-conversion is replaced."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from tests.loopback import LoopbackServer, Response
from tests.pdfgen import make_shared_stream_pdf
from webshelf.core.config import Config
from webshelf.core.convert.bounds import Bounds
from webshelf.core.convert.by_type import to_markdown
from webshelf.core.convert.html_precheck import flatten_deep, precheck_html
from webshelf.core.convert.pool import INLINE_BYTES, shared_pool, use_pool
from webshelf.core.extract import web_extract_sync
from webshelf.errors import TooComplexError

PDF = {"Content-Type": "application/pdf"}
JSON = {"Content-Type": "application/json"}
NORMAL = "/pydocs/library__re.html"


def deep_divs(n: int = 100_000) -> bytes:
    return ("<html><body>" + "<div>" * n + "the only line of text" + "</div>" * n + "</body></html>").encode()


def _config(home: Path, **web: object) -> Config:
    return Config.model_validate({"web": {"allow_private": True, "convert_workers": 2, **web}}).with_home(home)


def _by_path(results):  # noqa: ANN001, ANN202
    return {r.url.split("/", 3)[3]: r for r in results}


def test_hostile_pages_give_their_error_or_their_text_and_the_other_urls_succeed(tmp_path):
    with LoopbackServer() as srv:
        srv.route("/deep", Response(deep_divs()))
        srv.route("/many", Response(b"<html><body>" + b"<p>x" * 2_400_000))  # 9.6 MB, under web.max_bytes
        srv.route("/json", Response(b"[" * 100_000 + b"]" * 100_000, headers=JSON))
        srv.route("/pdf", Response(make_shared_stream_pdf(200, 100_000), headers=PDF))
        paths = ["/deep", "/many", "/json", "/pdf", NORMAL]
        results = _by_path(web_extract_sync([srv.url(p) for p in paths], config=_config(tmp_path), fresh=True))
    assert results["deep"].ok and "the only line of text" in results["deep"].content
    assert results["many"].error.code == "too_complex"
    assert "web.max_html_elements" in results["many"].error.message
    assert results["json"].ok and results["json"].content.startswith("```json")  # not internal_error
    assert results["pdf"].ok and "## Page 1 of 200" in results["pdf"].content
    assert results[NORMAL.lstrip("/")].ok


def test_a_conversion_past_its_deadline_is_killed_and_the_worker_replaced(tmp_path):
    # one PDF page of 2 million operators: far more than a minute of pypdf work, against a 2 s
    # deadline; the other page is tiny, so even a loaded machine converts it well inside 2 s
    slow_pdf = make_shared_stream_pdf(1, 2_000_000)
    small = b"<html><body><main><h1>Small</h1><p>" + b"An ordinary paragraph. " * 40 + b"</p></main></body></html>"
    config = _config(tmp_path, convert_timeout_s=2)
    with LoopbackServer() as srv:
        srv.route("/slow", Response(slow_pdf, headers=PDF))
        srv.route("/small", Response(small))
        results = _by_path(web_extract_sync([srv.url("/slow"), srv.url("/small")], config=config, fresh=True))
        assert results["slow"].error.code == "conversion_timeout"
        assert "web.convert_timeout_s" in results["slow"].error.message
        assert results["small"].ok, results["small"].error
        again = web_extract_sync([srv.url("/small"), srv.url("/small?again")], config=config, fresh=True)
    assert all(r.ok for r in again), [r.error for r in again]


def test_a_conversion_over_its_memory_budget_is_too_complex(tmp_path):
    config = _config(tmp_path, convert_memory_mb=64)  # 400k elements pass the pre-check but need ~300 MB as trees
    with LoopbackServer() as srv:
        srv.route("/big", Response(b"<html><body>" + b"<p>x</p>" * 400_000))
        results = _by_path(web_extract_sync([srv.url("/big"), srv.url(NORMAL)], config=config, fresh=True))
    assert results["big"].error.code == "too_complex", results["big"].error
    assert "web.convert_memory_mb" in results["big"].error.message
    assert results[NORMAL.lstrip("/")].ok


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def _settled(pids: list[int]) -> dict[int, int]:
    """The workers' CPU ticks once none of them is working (their start-up imports are done):
    two readings 0.3 s apart that agree. A wait on a condition, not a time limit."""
    while True:
        first = {pid: _cpu_ticks(pid) for pid in pids}
        time.sleep(0.3)
        second = {pid: _cpu_ticks(pid) for pid in pids}
        if first == second:
            return second


def test_a_worker_killed_mid_conversion_is_replaced(tmp_path):
    """Load-proof: the other page is held by the server until the kill, so the slow PDF is the
    only conversion running, and its worker is the one whose CPU time grows from a settled pool
    (however slowly a loaded machine lets it) — no CPU share within a time window is needed."""
    from tests import corpus

    config = _config(tmp_path, convert_timeout_s=600, timeout_s=600, read_timeout_s=600)
    pool = shared_pool(2, config.web.convert_memory_mb)
    asyncio.run(pool.convert(b"<p>warm</p>", "text/html", "http://x/", Bounds()))  # the pool starts on first use
    while len(pool.worker_pids()) < 2:  # and then starts its workers: wait for them
        time.sleep(0.05)
    baseline = _settled(pool.worker_pids())
    killed: list[int] = []
    released = threading.Event()
    normal = corpus.pydocs_bytes(NORMAL.removeprefix("/pydocs/"))

    def held(req) -> Response:  # noqa: ANN001
        released.wait(300)
        return Response(normal)

    def kill_the_busy_worker() -> None:
        try:
            while not killed:
                time.sleep(0.05)
                busy = [pid for pid in baseline if Path(f"/proc/{pid}").exists()
                        and _cpu_ticks(pid) - baseline[pid] >= 10]  # 0.1 s of CPU: converting, not idle
                if busy:
                    os.kill(busy[0], signal.SIGKILL)
                    killed.append(busy[0])
        finally:
            released.set()

    with LoopbackServer() as srv:
        srv.route("/slow", Response(make_shared_stream_pdf(1, 2_000_000), headers=PDF))
        srv.route("/held", held)
        killer = threading.Thread(target=kill_the_busy_worker, daemon=True)
        killer.start()
        results = _by_path(web_extract_sync([srv.url("/slow"), srv.url("/held")], config=config, fresh=True))
        killer.join(5)
        assert killed, "no worker was busy converting"
        assert results["slow"].error.code == "too_complex"
        assert "worker died" in results["slow"].error.message
        assert results["held"].ok, results["held"].error
        again = web_extract_sync([srv.url(NORMAL), srv.url("/wcxb/" + _a_wcxb_id())], config=config, fresh=True)
    assert all(r.ok for r in again)
    assert killed[0] not in pool.worker_pids()


def _a_wcxb_id() -> str:
    from tests import corpus

    return sorted(corpus.wcxb_metadata())[0]


def test_deep_nesting_is_flattened_before_parsing_and_keeps_its_text():
    html, dropped = flatten_deep(deep_divs(5_000).decode(), 512)
    assert dropped == 5_000 - 512 and "the only line of text" in html
    # stray end tags cannot hide the depth from the fast estimate
    sneaky = "<html><body>" + "<div></b>" * 5_000 + "hidden depth" + "</div>" * 5_000
    assert precheck_html(sneaky, Bounds()) != sneaky
    page = to_markdown(deep_divs().decode().encode(), "text/html", "http://x/")  # in-process path too
    assert "the only line of text" in page.markdown


def test_too_many_elements_are_refused_before_any_tree_is_built():
    with pytest.raises(TooComplexError, match="web.max_html_elements"):
        precheck_html("<p>x" * 2_000, Bounds(max_elements=1_000))
    ordinary = "<p>x</p>" * 100
    assert precheck_html(ordinary, Bounds()) is ordinary


def test_deeply_nested_json_is_shown_as_it_came_in_process_too():
    body = b'{"a":' * 50_000 + b"1" + b"}" * 50_000
    page = to_markdown(body, "application/json", "http://x/")
    assert page.markdown.startswith("```json\n{\"a\":{")


def test_a_single_small_page_converts_in_process_and_pdfs_always_go_to_a_worker():
    assert not use_pool(2, 1, b"x" * 1000, pdf=False)
    assert use_pool(2, 1, b"x" * (INLINE_BYTES + 1), pdf=False)
    assert use_pool(2, 1, b"%PDF-", pdf=True)
    assert use_pool(2, 3, b"x", pdf=False)
    assert not use_pool(1, 3, b"x", pdf=True) and not use_pool(0, 3, b"x", pdf=True)


@pytest.mark.parametrize("shape", [
    "<div>" * 600, "<DIV>" * 600, "<div>" * 300 + "</span>" * 300 + "<div>" * 300, "<p>" * 2000 + "<br>" * 900,
    "</div>" * 600 + "<div>" * 100, "<section><div>" * 260 + "</div>" * 10 + "<em>" * 10,
    "<script>" + "<div>" * 700 + "</script><p>x</p>", "<div><!-- " + "<div>" * 700 + " -->x</div>" * 2,
])
def test_the_depth_pre_test_never_changes_the_flattened_page(monkeypatch, shape):
    """``_maybe_deep`` only gates the exact scan: forcing the scan gives the same text."""
    from webshelf.core.convert import html_precheck

    html = shape + "<p>tail</p>"
    expected = flatten_deep(html, 512)
    monkeypatch.setattr(html_precheck, "_maybe_deep", lambda text, depth: True)
    assert html_precheck.flatten_deep(html, 512) == expected
