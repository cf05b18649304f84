"""One error tree: every class is drawn in ``webshelf/errors.py`` with its code, codes are
unique, the drawing's nesting is the real inheritance, and no room keeps a second tree or a
conversion layer — runtimes raise the tree's classes themselves."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
import re

import pytest

import webshelf
import webshelf.errors as errors
from webshelf.core.config import Config

# Exceptions that are not webshelf errors on purpose.
NOT_ERRORS = {
    "webshelf.core.surfaces.shutdown.Stopped",  # a BaseException carrying a signal out of the CLI
    "webshelf.runtimes.ssh.connection._UnknownHostKey",  # paramiko policy hook; converted in the same module
}


def _all_modules() -> list[str]:
    return [m.name for m in pkgutil.walk_packages(webshelf.__path__, "webshelf.")]


def _import_all() -> None:
    for name in _all_modules():
        importlib.import_module(name)


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


def _drawing() -> dict[str, tuple[int, str]]:
    """Class name → (depth, code) from the docstring's tree."""
    drawn = {}
    for line in errors.__doc__.splitlines():
        m = re.match(r"^\s{4}([│├└─ ]*)([A-Z]\w+)\s+(\w+)", line)
        if m and m.group(3) != "code":  # not the header line (WebshelfError  code)
            drawn[m.group(2)] = (len(m.group(1)) // 4, m.group(3))
    return drawn


def test_every_error_is_drawn_with_its_code_and_codes_are_unique():
    _import_all()
    classes = _subclasses(errors.WebshelfError)
    drawn = _drawing()
    names = {cls.__name__ for cls in classes}
    assert names == set(drawn), f"not drawn: {names - set(drawn)}; drawn but missing: {set(drawn) - names}"
    for cls in classes:
        assert cls.__module__ == "webshelf.errors", f"{cls.__module__}.{cls.__name__}: define it in webshelf/errors.py"
        assert drawn[cls.__name__][1] == cls.code, f"{cls.__name__} is drawn with {drawn[cls.__name__][1]}, has {cls.code}"
    codes = [cls.code for cls in [errors.WebshelfError, *classes]]
    assert len(codes) == len(set(codes)), sorted(c for c in codes if codes.count(c) > 1)


def test_the_drawing_nests_as_the_classes_inherit():
    drawn = _drawing()
    order = [n for n in drawn]
    for i, name in enumerate(order):
        depth = drawn[name][0]
        parent = next((p for p in reversed(order[:i]) if drawn[p][0] == depth - 1), "WebshelfError")
        cls = getattr(errors, name)
        tree_bases = [b for b in cls.__mro__[1:] if isinstance(b, type) and issubclass(b, errors.WebshelfError)]
        assert tree_bases[0].__name__ == parent, f"{name} is drawn under {parent} but inherits {tree_bases[0].__name__}"


def test_no_room_keeps_a_second_tree_or_a_conversion_layer():
    _import_all()
    assert importlib.util.find_spec("webshelf.runtimes.errors") is None
    from webshelf.core import sandbox

    assert not hasattr(sandbox, "converted") and not hasattr(sandbox, "convert")
    others = []
    for name in _all_modules():
        for attr, obj in vars(importlib.import_module(name)).items():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == name \
                    and not issubclass(obj, errors.WebshelfError) and f"{name}.{attr}" not in NOT_ERRORS:
                others.append(f"{name}.{attr}")
    assert others == [], "exception classes outside the tree: derive them from webshelf.errors"


def test_runtime_errors_are_webshelf_errors_with_the_runtime_named(config: Config):
    """A real adapter raises the tree's classes: one copy, caught as WebshelfError anywhere."""
    from webshelf import WebshelfError
    from webshelf.core.sandbox import open_runtime
    from webshelf.runtimes.local import runtime as local

    assert local.RuntimeUnavailableError is errors.RuntimeUnavailableError  # one module, not a second copy
    config.runtimes.local.bwrap = "/nonexistent/bwrap"
    rt = open_runtime("local", config)
    with pytest.raises(WebshelfError) as err:
        rt.exec(["true"], timeout=5)
    assert type(err.value) is errors.RuntimeExecError and err.value.code == "runtime_exec_failed"
    assert err.value.runtime == "local" and err.value.context["runtime"] == "local"
    assert str(err.value) == "runtime 'local': the sandbox is not started; call start() or use it as a context manager"
    with pytest.raises(errors.RuntimeUnavailableError) as err:
        rt.start()
    assert isinstance(err.value, WebshelfError) and "apt-get install bubblewrap" in err.value.detail


def test_a_runtime_config_error_is_a_config_error_naming_the_runtime():
    e = errors.RuntimeConfigError("Modal cannot mount a Volume at /tmp", runtime="modal")
    assert isinstance(e, errors.ConfigError) and e.code == "runtime_config_invalid"
    assert e.message == "runtime 'modal': Modal cannot mount a Volume at /tmp" and e.detail.startswith("Modal")


def test_a_missing_watchdog_is_a_missing_package_error(monkeypatch):
    import sys

    from webshelf.mounts.watch import _watchdog

    monkeypatch.setitem(sys.modules, "watchdog", None)  # makes `import watchdog` raise ImportError
    with pytest.raises(errors.MissingPackageError) as err:
        _watchdog("live sync")
    assert err.value.message == "live sync needs watchdog: pip install 'webshelf[ssh]'"
