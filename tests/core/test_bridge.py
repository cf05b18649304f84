"""core/bridge.py: the one sync-over-async bridge behind web_extract_sync, call_tool and mcp serve."""

from __future__ import annotations

import asyncio

from webshelf.core import bridge, extract
from webshelf.core.surfaces import dispatch


async def _loop_id() -> int:
    return id(asyncio.get_running_loop())


def test_outside_a_loop_each_thread_keeps_one_loop():
    assert bridge.run_sync(_loop_id()) == bridge.run_sync(_loop_id())


def test_inside_a_running_loop_it_runs_on_another_thread():
    async def caller() -> tuple[int, int]:
        return id(asyncio.get_running_loop()), bridge.run_sync(_loop_id())

    outer, inner = asyncio.run(caller())
    assert outer != inner


def test_the_sync_entry_points_use_it():
    assert extract.run_sync is bridge.run_sync and dispatch.run_sync is bridge.run_sync
