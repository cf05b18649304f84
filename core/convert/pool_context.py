"""A ``forkserver`` multiprocessing context whose workers never re-import the caller's ``__main__``.

multiprocessing's spawn and forkserver methods run the parent's main script again in every child
(as ``__mp_main__``) so that functions defined there can be unpickled. webshelf's workers only
run webshelf's own converters, and a library must not demand an ``if __name__ == "__main__":``
guard of every script that calls ``web_extract`` (without one, each worker would run the script
again and start processes of its own). So the preparation data sent to a new worker drops the
main-module entries; everything else is the standard library's forkserver path.
"""

from __future__ import annotations

import io
import os
from multiprocessing import context, forkserver, popen_forkserver, reduction, spawn, util


class _Popen(popen_forkserver.Popen):
    def _launch(self, process_obj) -> None:  # noqa: ANN001 — as popen_forkserver.Popen._launch, minus __main__
        prep_data = spawn.get_preparation_data(process_obj._name)
        prep_data.pop("init_main_from_path", None)
        prep_data.pop("init_main_from_name", None)
        buf = io.BytesIO()
        context.set_spawning_popen(self)
        try:
            reduction.dump(prep_data, buf)
            reduction.dump(process_obj, buf)
        finally:
            context.set_spawning_popen(None)
        self.sentinel, w = forkserver.connect_to_new_process(self._fds)
        _parent_w = os.dup(w)
        self.finalizer = util.Finalize(self, util.close_fds, (_parent_w, self.sentinel))
        with open(w, "wb", closefd=True) as f:
            f.write(buf.getbuffer())
        self.pid = forkserver.read_signed(self.sentinel)


class _Process(context.ForkServerProcess):
    @staticmethod
    def _Popen(process_obj):  # noqa: ANN001, ANN205, N802
        return _Popen(process_obj)


class WorkerContext(context.ForkServerContext):
    """``multiprocessing.get_context("forkserver")`` whose processes skip the main module."""

    Process = _Process


def worker_context(preload: list[str]) -> WorkerContext:
    ctx = WorkerContext()
    ctx.set_forkserver_preload(preload)
    return ctx
