"""core/convert/gc_pause.py: the collector is paused during a conversion and left as it was found."""

from __future__ import annotations

import gc
import threading
import weakref

import pytest

from webshelf.core.convert import gc_pause
from webshelf.core.convert.gc_pause import gc_paused
from webshelf.core.convert.html_markdown import html_to_markdown


class _Node:
    pass


def _cycles(n: int) -> list[weakref.ref]:
    """``n`` garbage reference cycles, made while the caller runs; weak references to them."""
    refs = []
    for _ in range(n):
        a, b = _Node(), _Node()
        a.other, b.other = b, a
        refs.append(weakref.ref(a))
    return refs


@pytest.fixture(autouse=True)
def _collector_restored():
    enabled = gc.isenabled()
    yield
    (gc.enable if enabled else gc.disable)()


def test_paused_while_running_enabled_after():
    seen = []
    gc.enable()
    gc_paused(lambda: seen.append(gc.isenabled()))()
    assert seen == [False]
    assert gc.isenabled()


def test_an_error_still_restores_the_collector():
    def fails():
        raise ValueError("boom")

    gc.enable()
    with pytest.raises(ValueError, match="boom"):
        gc_paused(fails)()
    assert gc.isenabled()


def test_a_disabled_collector_stays_disabled_and_nothing_is_collected_for_it():
    gc.disable()
    refs = gc_paused(_cycles)(2000)
    assert not gc.isenabled()
    assert any(ref() is not None for ref in refs)  # the program turned collection off: none ran
    gc.collect()


def test_cycles_made_during_a_conversion_are_collected_on_the_way_out():
    collected = []

    def watch(phase, info):  # noqa: ANN001, ANN202
        if phase == "stop":
            collected.append(info["collected"])

    gc.enable()
    gc.collect()
    gc.callbacks.append(watch)
    try:
        refs = gc_paused(_cycles)(5000)  # far more than the generation-0 threshold
        before_returning = len(collected)  # (no allocation here that could start a collection itself)
    finally:
        gc.callbacks.remove(watch)
    assert sum(collected[:before_returning]) >= 10_000  # the 5,000 pairs, by the pause's own young collection
    assert all(ref() is None for ref in refs)


def test_nested_calls_restore_only_when_the_outermost_leaves():
    seen = []
    inner = gc_paused(lambda: seen.append(gc.isenabled()))

    def outer():
        inner()
        seen.append(gc.isenabled())

    gc.enable()
    gc_paused(outer)()
    assert seen == [False, False]
    assert gc.isenabled()


def test_overlapping_threads_leave_the_collector_enabled():
    gc.enable()
    both_inside, release = threading.Barrier(2), threading.Event()
    seen = []

    def convert():
        both_inside.wait(timeout=10)
        seen.append(gc.isenabled())
        release.wait(timeout=10)

    threads = [threading.Thread(target=gc_paused(convert)) for _ in range(2)]
    for thread in threads:
        thread.start()
    release.set()
    for thread in threads:
        thread.join(timeout=10)
    assert seen == [False, False]
    assert gc.isenabled()


def test_html_to_markdown_runs_paused_and_restores():
    gc.enable()
    page = "<html><body><article><h1>Title</h1><p>" + "Some text. " * 40 + "</p></article></body></html>"
    converted = html_to_markdown(page)
    assert "Some text." in converted.markdown
    assert gc.isenabled()


@pytest.mark.parametrize(("counts", "overlapping", "collected"), [
    ((100, 11, 11), True, None),  # generation 0 under its threshold: nothing
    ((800, 3, 11), False, 0),
    ((800, 11, 11), False, 1),  # the old generation is the interpreter's once the pause is over
    ((800, 11, 11), True, 2),  # still paused for another conversion: the old one too, when due
    ((800, 11, 3), True, 1),
])
def test_the_collections_due_on_the_way_out(monkeypatch, counts, overlapping, collected):
    calls = []
    monkeypatch.setattr(gc_pause.gc, "get_count", lambda: counts)
    monkeypatch.setattr(gc_pause.gc, "get_threshold", lambda: (700, 10, 10))
    monkeypatch.setattr(gc_pause.gc, "collect", lambda generation=2: calls.append(generation))
    gc_pause._collect_due(overlapping)
    assert calls == ([] if collected is None else [collected])
