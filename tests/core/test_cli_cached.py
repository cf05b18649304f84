"""The cached ``webshelf extract`` path (core/surfaces/cli_cached.py + core/config_snapshot.py).

Real processes against a real shelf: the first call under a config runs the full path (it
validates the config and writes the snapshot), the next one takes the cached path, and the two
must print the same bytes and exit alike — for text and ``--json``. A changed config goes
through full validation again, an invalid one gives the same clear error, and the cached path
imports no pydantic (``sys.modules`` of the child process).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from webshelf.cache.shelf import Shelf
from webshelf.core.config_snapshot import NAME

URL = "https://docs.example.org/cached-path"
_AGE = re.compile(r"fetched \d+ s ago")

_PROBE = textwrap.dedent("""
    import json, sys
    from webshelf.core.surfaces.cli import main
    try:
        main(sys.argv[1:], standalone_mode=False)
    except SystemExit as exc:
        code = exc.code
    else:
        code = 0
    sys.stdout.flush()
    print("\\n@@" + json.dumps({"code": code, "pydantic": "pydantic" in sys.modules,
                                "pipeline": "webshelf.core.extract" in sys.modules}))
""")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    text = "# Cached path\n\n" + "".join(f"Line {i}: é a stored page the shelf answers.\n" for i in range(4_000))
    with Shelf(home) as shelf:
        shelf.put(url=URL, final_url=URL + "/final", title="Cached\tpath  title", text=text, backend="local",
                  content_type="text/html")
    return home


def _run(home: Path, *argv: str, config: Path | None = None, script: str = _PROBE) -> tuple[int, str, str, dict]:
    """``script`` (click's CLI by default) in a fresh interpreter: (exit code, stdout, stderr, its report)."""
    env = dict(os.environ, WEBSHELF_HOME=str(home))
    env.pop("WEBSHELF_CONFIG", None)
    if config is not None:
        env["WEBSHELF_CONFIG"] = str(config)
    done = subprocess.run([sys.executable, "-c", script, *argv], env=env, capture_output=True, text=True,
                          timeout=120, cwd="/")
    out, _, tail = done.stdout.rpartition("\n@@")
    assert tail, done.stderr[-2000:]
    report = json.loads(tail)
    return report["code"], out, done.stderr, report


def _same(text: str) -> str:
    return _AGE.sub("fetched N s ago", text)


def _snapshot(home: Path) -> Path:
    return home / "cache" / NAME


def test_the_cached_path_prints_what_the_full_path_prints(home: Path) -> None:
    code, full, err, first = _run(home, "extract", URL)
    assert (code, err, first["pipeline"]) == (0, "", True)
    assert _snapshot(home).exists()  # the full path validated the config and kept the snapshot
    code, cached, err, second = _run(home, "extract", URL)
    assert (code, err) == (0, "")
    assert (second["pipeline"], second["pydantic"]) == (False, False)
    assert _same(cached) == _same(full)
    assert "[webshelf] Truncated page" in cached and "pass --fresh to fetch again" in cached


def test_json_is_identical_but_for_age_and_elapsed(home: Path) -> None:
    _snapshot(home).unlink(missing_ok=True)
    code, full, _, first = _run(home, "extract", "--json", "--limit", "3000", URL)
    assert code == 0 and first["pipeline"]
    code, cached, _, second = _run(home, "extract", "--json", "--limit", "3000", URL)
    assert code == 0 and not second["pipeline"] and not second["pydantic"]

    def normal(out: str) -> list[dict]:
        results = json.loads(out)
        for r in results:
            r["elapsed_ms"] = 0
        return json.loads(_same(json.dumps(results)))

    assert normal(cached) == normal(full)
    assert list(json.loads(cached)[0]) == list(json.loads(full)[0])  # the same keys in the same order
    assert cached.replace(str(json.loads(cached)[0]["elapsed_ms"]), "E").count("\n") == full.count("\n")


def test_a_changed_config_is_validated_again(home: Path, tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("web:\n  extract_char_limit: 3000\n")
    code, out, _, report = _run(home, "extract", URL, config=config)
    assert code == 0 and report["pipeline"]
    code, out, _, report = _run(home, "extract", URL, config=config)
    assert code == 0 and not report["pipeline"] and len(out) <= 3000
    config.write_text("web:\n  extract_char_limit: 2500\n")  # changed: no snapshot matches
    code, changed, _, report = _run(home, "extract", URL, config=config)
    assert code == 0 and report["pipeline"] and len(changed) <= 2500
    code, again, _, report = _run(home, "extract", URL, config=config)
    assert code == 0 and not report["pipeline"] and _same(again) == _same(changed)


def test_an_invalid_config_is_the_same_clear_error_every_time(home: Path, tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("web:\n  extract_char_limit: 3000\n")
    assert _run(home, "extract", URL, config=config)[0] == 0  # a snapshot for the valid file
    config.write_text("web:\n  extract_char_limit: 5\n")
    errors = set()
    for _ in range(2):  # never snapshotted: both calls validate and fail alike
        code, out, err, report = _run(home, "extract", URL, config=config)
        assert code == 2 and out == "" and report["pydantic"]
        assert err.startswith("error[") and "web.extract_char_limit" in err
        errors.add(err)
    assert len(errors) == 1
    config.write_text("web:\n  extract_char_limit: 3000\n")  # the valid bytes again: the old snapshot fits
    code, out, _, report = _run(home, "extract", URL, config=config)
    assert code == 0 and not report["pipeline"]


def test_an_environment_variable_the_config_names_is_part_of_the_key(home: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("web:\n  extract_char_limit: ${WS_TEST_LIMIT:-3000}\n")
    assert _run(home, "extract", URL, config=config)[0] == 0
    assert not _run(home, "extract", URL, config=config)[3]["pipeline"]
    monkeypatch.setenv("WS_TEST_LIMIT", "2500")
    code, out, _, report = _run(home, "extract", URL, config=config)
    assert code == 0 and report["pipeline"] and len(out) <= 2500


def test_what_the_cached_path_cannot_answer_goes_the_full_way(home: Path) -> None:
    assert _run(home, "extract", URL)[0] == 0  # snapshot written
    code, out, err, report = _run(home, "extract", "https://docs.example.org/not-stored-" + "x" * 3,
                                  "--backend", "nonesuch")
    assert code == 2 and report["pipeline"] and "unknown backend" in err
    code, out, err, report = _run(home, "extract", "http://127.0.0.1/private")  # refused by the address policy
    assert code == 1 and report["pipeline"] and "error[" in err
    code, out, err, report = _run(home, "extract", URL, "--limit", "5")  # out of range: the full path's error
    assert code == 2 and report["pipeline"] and "char_limit" in err


def test_hits_are_counted_once_on_either_path(home: Path) -> None:
    _run(home, "extract", URL)  # full path
    _run(home, "extract", URL)  # cached path
    with Shelf(home) as shelf:
        counters = shelf.index.counters()
    assert counters.get("hits") == 2 and not counters.get("misses")


def test_a_damaged_snapshot_is_no_snapshot(home: Path) -> None:
    code, full, _, _ = _run(home, "extract", URL)
    entries = json.loads(_snapshot(home).read_text())
    for damage in ("{not json", json.dumps({k: {**v, "settings": {**v["settings"], "max_age": "soon"}}
                                             for k, v in entries.items()})):
        _snapshot(home).write_text(damage)
        code, out, err, report = _run(home, "extract", URL)
        assert (code, err) == (0, "") and report["pipeline"] and _same(out) == _same(full)
    assert not _run(home, "extract", URL)[3]["pipeline"]  # rewritten by the full path


def test_a_config_path_that_cannot_be_read_is_the_full_paths_error(home: Path, tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.mkdir()  # exists, but is a directory
    errors = {_run(home, "extract", URL, config=config)[1:3] for _ in range(2)}
    assert len(errors) == 1
    (out, err), = errors
    assert out == "" and err.startswith("error[")


# --- the console script's entry (core/surfaces/cli_entry.py): the plain spellings before click ---

_ENTRY = textwrap.dedent("""
    import json, sys
    from webshelf.core.surfaces.cli_entry import main
    sys.argv = ["webshelf", *sys.argv[1:]]
    try:
        main()
    except SystemExit as exc:
        code = exc.code
    else:
        code = 0
    sys.stdout.flush()
    print("\\n@@" + json.dumps({"code": code, "pydantic": "pydantic" in sys.modules, "click": "click" in sys.modules,
                                "pipeline": "webshelf.core.extract" in sys.modules}))
""")


def _entry(home: Path, *argv: str) -> tuple[int, str, str, dict]:
    return _run(home, *argv, script=_ENTRY)


def test_the_console_script_answers_plain_spellings_without_click(home: Path) -> None:
    for argv in (["extract", URL], ["extract", "--json", "--limit", "3000", URL], ["extract", URL, "--json"]):
        _snapshot(home).unlink(missing_ok=True)
        code, full, err, first = _entry(home, *argv)  # no snapshot: click and the full path
        assert (code, err) == (0, "") and first["click"] and first["pipeline"]
        code, fast, err, second = _entry(home, *argv)
        assert (code, err) == (0, "")
        assert not (second["click"] or second["pydantic"] or second["pipeline"]), argv
        if "--json" in argv:
            full, fast = (json.dumps([{**r, "elapsed_ms": 0} for r in json.loads(o)]) for o in (full, fast))
        assert _same(fast) == _same(full)


def test_other_spellings_go_through_click_with_the_same_answer(home: Path) -> None:
    _entry(home, "extract", URL)  # snapshot written
    code, plain, _, report = _entry(home, "extract", "--limit", "3000", URL)
    assert code == 0 and not report["click"]
    code, spelled, _, report = _entry(home, "extract", "--limit=3000", URL)
    assert code == 0 and report["click"] and not report["pipeline"]  # click parses it, then the cached path serves
    assert _same(spelled) == _same(plain)
    code, out, err, report = _entry(home, "extract", "--limit", "5", URL)  # out of range: click's full path says so
    assert code == 2 and report["click"] and "char_limit" in err


def test_the_plain_spellings() -> None:
    from webshelf.core.surfaces.cli_entry import _plain_extract as plain

    assert plain(["extract", "u"]) == ("u", None, False)
    assert plain(["extract", "--json", "u", "--limit", "3000"]) == ("u", 3000, True)
    for argv in (["extract"], ["read", "u"], ["extract", "u", "v"], ["extract", "--limit=5", "u"],
                 ["extract", "--limit", "-5", "u"], ["extract", "--limit", "٣", "u"], ["extract", "--json", "--json", "u"],
                 ["extract", "--fresh", "u"], ["--config", "f", "extract", "u"], ["extract", "-", "u"], []):
        assert plain(argv) is None, argv


def test_a_plain_extract_the_shelf_declines_probes_the_config_once(home: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture) -> None:
    """The console script hands its probe to click's ``extract`` (issue 15): the config file and
    its snapshot are read, and the shelf asked, once per command line — with the same answer."""
    from webshelf.core import config_snapshot
    from webshelf.core.surfaces import cli, cli_cached, cli_entry

    monkeypatch.setenv("WEBSHELF_HOME", str(home))
    monkeypatch.delenv("WEBSHELF_CONFIG", raising=False)
    made, asked = [], []
    real_probe, real_serve = config_snapshot.Probe, cli_cached.serve

    class Counted(real_probe):
        def __init__(self, explicit):  # noqa: ANN001
            made.append(explicit)
            super().__init__(explicit)

    monkeypatch.setattr(config_snapshot, "Probe", Counted)
    monkeypatch.setattr(cli_cached, "serve", lambda *a: asked.append(a[1]) or real_serve(*a))
    blocked = "http://127.0.0.1:9/not-on-the-shelf"  # refused by the address policy: no request is made
    for _ in range(2):  # without a snapshot, then with the one the first run wrote
        made.clear(), asked.clear()
        monkeypatch.setattr(sys, "argv", ["webshelf", "extract", blocked])
        with pytest.raises(SystemExit) as exit_:
            cli_entry.main()
        assert exit_.value.code == 1 and "error[blocked_url]" in capsys.readouterr().err
        assert made == [None] and len(asked) <= 1, (made, asked)
        assert cli._handed is None  # handed to that one run only
    assert asked == [(blocked,)]  # the second run had a snapshot: the entry asked the shelf, click did not
