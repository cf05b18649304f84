"""Contract: every ``modal`` SDK name and keyword that ``runtimes/modal/sdk.py`` uses exists in
the installed package with a compatible signature — so an SDK change breaks our build, not a
user's agent. Each check binds the exact call shape the seam makes to the real signature."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

modal = pytest.importorskip("modal", reason="pip install 'webshelf[modal]'")

from webshelf.errors import (  # noqa: E402
    ReloadBusyError, RuntimeConfigError, RuntimeExecError, RuntimeTimeoutError, RuntimeUnavailableError,
)
from webshelf.runtimes.modal.sdk import SdkModalSeam, convert_modal_error  # noqa: E402
from webshelf.runtimes.modal.seam import FORBIDDEN_MOUNT_PATHS, ImageRecipe, SandboxRequest  # noqa: E402


def binds(func, *args, **kwargs) -> None:
    """The call ``func(*args, **kwargs)`` is accepted by the installed signature."""
    inspect.signature(func).bind(*args, **kwargs)


def test_installed_version_is_a_1x_release_we_checked():
    major, minor = (int(x) for x in modal.__version__.split(".")[:2])
    assert major == 1 and minor >= 1, f"modal {modal.__version__}: reload_volumes needs ≥ 1.1; checked against 1.6"


def test_volume_calls():
    V = modal.Volume
    binds(V.from_name, "webshelf-cache", environment_name=None, create_if_missing=True, version=2)
    binds(V.hydrate, object())
    binds(V.batch_upload, object(), force=True)
    binds(V.remove_file, object(), "/page.md")
    binds(V.listdir, object(), "/")
    binds(V.with_mount_options, object(), read_only=True)
    binds(type(V.objects).delete, object(), "webshelf-test-x", allow_missing=True)  # the live tests clean up with it
    upload = modal.volume._AbstractVolumeUploadContextManager
    binds(upload.put_file, object(), Path("/x"), "/x.md")
    entry = {f.name for f in __import__("dataclasses").fields(modal.volume.FileEntry)}
    assert {"path", "type", "size"} <= entry and modal.volume.FileEntryType.FILE


def test_sandbox_calls():
    S = modal.Sandbox
    binds(S.create, app=object(), image=object(), volumes={"/m": object()}, timeout=3600, cpu=1.0, memory=1024,
          workdir="/", region=["us-east"], env={"A": "b"}, secrets=[object()], block_network=True)
    binds(S.from_id, "sb-123")
    binds(S.exec, object(), "sh", "-c", "true", timeout=30, text=False)
    binds(S.reload_volumes, object(), timeout=55)
    binds(S.poll, object())
    binds(S.terminate, object())
    assert any(isinstance(vars(cls).get("object_id"), property) for cls in S.__mro__)
    P, W, R = modal.container_process.ContainerProcess, modal.io_streams.StreamWriter, modal.io_streams.StreamReader
    binds(W.write, object(), b"data")
    binds(W.write_eof, object())
    binds(W.drain, object())
    binds(R.read, object())
    binds(P.wait, object())
    assert isinstance(inspect.getattr_static(P, "stdin"), property) and isinstance(inspect.getattr_static(P, "stdout"), property)
    # the seam reads an exceeded exec deadline as wait() returning -1
    assert "self._returncode = -1" in inspect.getsource(modal.container_process._ContainerProcess.wait)


def test_app_image_secret_calls():
    binds(modal.App.lookup, "webshelf", create_if_missing=True)
    binds(modal.Image.debian_slim, python_version=None)
    binds(modal.Image.from_registry, "python:3.12-slim", add_python=None)
    binds(modal.Image.apt_install, object(), "gawk", "curl")
    binds(modal.Image.pip_install, object(), "httpx")
    binds(modal.Secret.from_name, "api-keys")


def test_exceptions_the_converter_names_exist():
    e = modal.exception
    for name in ["Error", "AuthError", "ConnectionError", "ExecTimeoutError", "SandboxTimeoutError",
                 "VolumeUploadTimeoutError", "TimeoutError", "SandboxTerminatedError", "NotFoundError",
                 "PermissionDeniedError", "ResourceExhaustedError", "ConflictError", "InvalidError"]:
        assert issubclass(getattr(e, name), Exception), name
    assert issubclass(e.ConflictError, e.InvalidError)  # the converter checks ConflictError first
    assert "FAILED_PRECONDITION -> ConflictError" in e.__doc__  # how a refused reload arrives


def test_forbidden_mount_paths_match_the_sdk():
    from modal._utils.mount_utils import validate_mount_points

    for path in FORBIDDEN_MOUNT_PATHS:
        with pytest.raises(modal.exception.InvalidError):
            validate_mount_points("Volume", {path: object()})
    assert validate_mount_points("Volume", {"/tmp/x/cache/web": 1, "/root/.webshelf/cache/web": 2})


@pytest.mark.parametrize("exc, ours, words", [
    (modal.exception.AuthError("Token missing."), RuntimeUnavailableError, ["modal token new", "MODAL_TOKEN_SECRET"]),
    (modal.exception.ConnectionError("refused"), RuntimeUnavailableError, ["cannot reach Modal"]),
    (modal.exception.NotFoundError("Volume x"), RuntimeUnavailableError, ["not found on Modal"]),
    (modal.exception.ExecTimeoutError("deadline"), RuntimeTimeoutError, ["timed out"]),
    (modal.exception.SandboxTerminatedError("gone"), RuntimeExecError, ["has terminated"]),
    (modal.exception.ConflictError("there are open files preventing the operation"), ReloadBusyError, ["open inside"]),
    (modal.exception.InvalidError("bad region"), RuntimeConfigError, ["runtimes.modal"]),
    (modal.exception.InternalError("boom"), RuntimeExecError, ["InternalError: boom"]),
])
def test_every_modal_exception_becomes_a_webshelf_one(exc, ours, words):
    converted = convert_modal_error(exc, "modal", "doing it")
    assert type(converted) is ours and converted.runtime == "modal"
    assert all(w in str(converted) for w in words) and str(converted).startswith("runtime 'modal': doing it")


class _Volume:
    def with_mount_options(self, **options):
        self.options = options
        return ("mounted", options)


def test_create_arguments_mount_the_volume_read_only_and_pass_options_through(monkeypatch):
    seam = SdkModalSeam()
    monkeypatch.setattr(modal.App, "lookup", lambda name, create_if_missing: ("app", name, create_if_missing))
    request = SandboxRequest(app="webshelf", volume=_Volume(), mount_path="/h/cache/web", image=ImageRecipe(),
                             timeout=600, cpu=2.0, env={"A": "b"}, region=("us-east",), options={"block_network": True})
    kwargs = seam.create_arguments(request)
    assert kwargs["volumes"] == {"/h/cache/web": ("mounted", {"read_only": True})}
    assert kwargs["app"] == ("app", "webshelf", True) and kwargs["region"] == ["us-east"]
    assert (kwargs["timeout"], kwargs["cpu"], kwargs["env"], kwargs["block_network"]) == (600, 2.0, {"A": "b"}, True)
    assert "memory" not in kwargs and "secrets" not in kwargs   # unset: Modal's defaults
    binds(modal.Sandbox.create, **kwargs)
    for bad, words in [({"volumes": {}}, "set by webshelf itself"), ({"no_such_arg": 1}, "has no such argument")]:
        with pytest.raises(RuntimeConfigError) as err:
            seam.create_arguments(SandboxRequest(app="w", volume=_Volume(), mount_path="/m", image=ImageRecipe(),
                                                 timeout=60, options=bad))
        assert words in str(err.value)


def _run_python(code: str, tmp_path: Path) -> "subprocess.CompletedProcess[str]":
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("MODAL_")}
    env.update(HOME=str(tmp_path), MODAL_CONFIG_PATH=str(tmp_path / "no-modal.toml"))
    root = Path(__file__).resolve().parents[2]
    return subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, timeout=120)


def test_real_sdk_without_credentials_says_how_to_authenticate(tmp_path):
    # No token anywhere: the real SDK refuses before any network call, and the seam converts it.
    done = _run_python("from webshelf.runtimes.modal.sdk import SdkModalSeam\n"
                       "from webshelf.errors import RuntimeUnavailableError\n"
                       "try:\n    SdkModalSeam().open_volume('webshelf-cache', None)\n"
                       "except RuntimeUnavailableError as e:\n    print(e)\n", tmp_path)
    assert done.returncode == 0, done.stderr
    assert "modal token new" in done.stdout and "MODAL_TOKEN_ID" in done.stdout and "Volume 'webshelf-cache'" in done.stdout


def test_missing_sdk_names_the_package(tmp_path):
    done = _run_python("import sys; sys.modules['modal'] = None\n"
                       "from webshelf.runtimes.modal.runtime import ModalRuntime\n"
                       "from webshelf.core.config import Config, ModalRuntimeConfig\nfrom webshelf.mounts.spec import cache_mount\n"
                       f"c = Config().with_home({str(tmp_path / 'h')!r})\n"
                       "try:\n    ModalRuntime(ModalRuntimeConfig(), cache_mount(c.home)).start()\n"
                       "except Exception as e:\n    print(type(e).__name__, e)\n", tmp_path)
    assert done.stdout.strip() == ("RuntimeUnavailableError runtime 'modal': the modal runtime needs the modal SDK: "
                                   "pip install 'webshelf[modal]'"), done.stderr
