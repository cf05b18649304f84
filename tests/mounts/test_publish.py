"""``publish_all``/``retract_all``: every target at once, one deadline, problems reported not raised."""

from __future__ import annotations

import threading
import time

import pytest

from webshelf.mounts.publish import publish_all, retract_all
from webshelf.mounts.spec import MountSpec, cache_mount


class Target:
    """A minimal PublishTarget: the real runtimes are tested in tests/runtimes."""

    def __init__(self, name: str, *, delay: float = 0.0, error: Exception | None = None) -> None:
        self.name, self.delay, self.error, self.seen = name, delay, error, []
        self.release = threading.Event()

    def publish(self, paths):
        if self.delay:
            self.release.wait(self.delay)
        if self.error:
            raise self.error
        self.seen.append(("publish", paths))

    def retract(self, paths):
        self.seen.append(("retract", paths))


def test_all_targets_get_the_paths():
    a, b = Target("a"), Target("b")
    assert publish_all([a, b], ["/x/p.md"], timeout=5) == []
    assert retract_all([a], ["/x/p.md"], timeout=5) == []
    assert a.seen == [("publish", ["/x/p.md"]), ("retract", ["/x/p.md"])] and b.seen == [("publish", ["/x/p.md"])]


def test_a_slow_target_is_reported_after_the_timeout_and_others_still_finish():
    slow, fine = Target("slow", delay=30), Target("fine")
    started = time.perf_counter()
    [problem] = publish_all([slow, fine], ["/x/p.md"], timeout=0.2)
    slow.release.set()
    assert time.perf_counter() - started < 10
    assert str(problem) == ("publish to runtime 'slow' failed: no confirmation within 0.2 s "
                            "(runtimes.publish_timeout_s); the sandbox may not see the page yet")
    assert fine.seen == [("publish", ["/x/p.md"])]


def test_a_failing_target_becomes_a_problem():
    [problem] = publish_all([Target("bad", error=RuntimeError("disk gone"))], ["/x/p.md"], timeout=5)
    assert (problem.target, problem.action, problem.detail) == ("bad", "publish", "disk gone")


def test_nothing_to_do():
    assert publish_all([], ["/x"], timeout=1) == [] and publish_all([Target("a")], [], timeout=1) == []


def test_mount_spec_is_absolute_and_lexical(tmp_path):
    with pytest.raises(ValueError, match="must be absolute"):
        MountSpec("relative/web")
    spec = MountSpec(str(tmp_path / "web") + "/")
    assert spec.path == tmp_path / "web" and spec.read_only
    assert spec.contains(tmp_path / "web" / "a.md") and spec.contains(f"{tmp_path}/web/./b.md")
    assert not spec.contains(tmp_path / "web" / "sub" / "a.md") and not spec.contains(f"{tmp_path}/web/../x.md")
    assert not spec.contains("web/a.md")


def test_cache_mount_creates_the_directory_first(tmp_path):
    spec = cache_mount(tmp_path / "home")
    assert spec.path == tmp_path / "home" / "cache" / "web" and spec.path.is_dir()
    assert oct(spec.path.stat().st_mode & 0o777) == "0o755"
