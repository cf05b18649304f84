"""Tool definitions (validated with jsonschema) and the call_tool dispatcher, end to end."""

from __future__ import annotations

import asyncio
import json

import jsonschema
import pytest
from click.testing import CliRunner

from webshelf.core.surfaces.cli import main
from webshelf.core.surfaces.dispatch import call_tool, run_tool
from webshelf.core.surfaces.tools import FORMATS, TOOLS, tool_definitions
from tests.loopback import Response

LONG_PAGE = "# Guide\n\n" + "".join(
    (f"## Part {i}\n\n" if i % 200 == 0 else "") + f"line {i}: " + ("the magic word\n" if i == 1_234 else "filler\n")
    for i in range(1, 3_001))


def schemas(fmt: str) -> dict[str, dict]:
    defs = tool_definitions(fmt)
    if fmt == "openai":
        return {d["function"]["name"]: d["function"]["parameters"] for d in defs}
    return {d["name"]: d["input_schema"] for d in defs}


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_defines_the_three_tools_with_valid_schemas(fmt):
    found = schemas(fmt)
    assert list(found) == ["web_extract", "read_file", "search_page"]
    for name, schema in found.items():
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert all("description" in prop for prop in schema["properties"].values()), name
        assert "title" not in json.dumps(schema) and "null" not in json.dumps(schema)


def test_the_shapes_frameworks_expect():
    openai, anthropic = tool_definitions("openai")[0], tool_definitions("anthropic")[0]
    assert openai["type"] == "function" and set(openai["function"]) == {"name", "description", "parameters"}
    assert set(anthropic) == {"name", "description", "input_schema"}
    assert tool_definitions("json-schema")[0]["input_schema"]["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    with pytest.raises(ValueError, match="unknown tool format 'xml'; use one of openai, anthropic, json-schema"):
        tool_definitions("xml")  # type: ignore[arg-type]


def test_schemas_accept_exactly_what_the_dispatcher_accepts():
    validators = {n: jsonschema.Draft202012Validator(s) for n, s in schemas("json-schema").items()}
    good = {"web_extract": {"urls": ["https://example.com"], "char_limit": 5_000, "fresh": True},
            "read_file": {"path": "/x.md", "offset": 3, "limit": 10},
            "search_page": {"path": "/x.md", "pattern": "a(", "max_results": 5, "regex": False}}
    bad = {"web_extract": [{}, {"urls": []}, {"urls": ["u"], "char_limit": 10}, {"urls": ["u"], "extra": 1}],
           "read_file": [{"path": "/x.md", "offset": 0}, {"path": "/x.md", "limit": 2_001}, {"offset": 1}],
           "search_page": [{"path": "/x.md"}, {"path": "/x.md", "pattern": ""},
                           {"path": "/x.md", "pattern": "a", "max_results": 201}]}
    for name, args in good.items():
        validators[name].validate(args)
        TOOLS[name].args.model_validate(args)
    for name, cases in bad.items():
        for args in cases:
            assert not validators[name].is_valid(args), (name, args)
            assert call_tool(name, args).startswith(f"error[invalid_input]: {name}: "), (name, args)


def test_a_session_round_trips_through_the_dispatcher(server, config):
    url = server.route("/tools/guide.md", Response(LONG_PAGE.encode(), headers={"Content-Type": "text/markdown"}))
    window = call_tool("web_extract", {"urls": [url], "char_limit": 4_000}, config=config)
    assert len(window) <= 4_000 and "[webshelf] Truncated page" in window
    path = window.split("Full text: ", 1)[1].split("\n", 1)[0]
    assert f'read_file path="{path}" offset=' in window

    n = LONG_PAGE.split("\n").index("line 1234: the magic word") + 1
    found = call_tool("search_page", json.dumps({"path": path, "pattern": "MAGIC WORD"}), config=config)
    assert found.startswith("1 matching line for text 'MAGIC WORD' (ignoring case)")
    assert f"\n>{n}|line 1234: the magic word\n" in found
    assert call_tool("read_file", {"path": path, "offset": n, "limit": 1}, config=config) == (
        f"{n}|line 1234: the magic word\n")


def test_structured_fields_and_per_url_errors(server, config):
    ok = server.route("/tools/short.txt", Response(b"short\n", headers={"Content-Type": "text/plain"}))
    missing = server.url("/tools/missing")
    out = asyncio.run(run_tool("web_extract", {"urls": [ok, missing, "ftp://nope"]}, config=config))
    assert not out.is_error
    assert out.text.split("\n")[:2] == [f"==> {ok} <==", "short"]
    assert f"==> {missing} <==\nerror[http_status]: {missing}: HTTP 404 Not Found\n" in out.text
    assert "==> ftp://nope <==\nerror[invalid_url]: 'ftp://nope' is not an absolute http(s) URL" in out.text
    first, second, third = out.data["results"]
    assert {k: first[k] for k in ("url", "truncated", "total_chars", "total_lines", "error")} == {
        "url": ok, "truncated": False, "total_chars": 6, "total_lines": 1, "error": None}
    assert first["path"].endswith(".md") and "content" not in first
    assert second["error"]["code"] == "http_status" and third["error"]["code"] == "invalid_url"


def test_call_level_errors_are_text_for_the_model(config, home):
    too_many = call_tool("web_extract", {"urls": [f"http://127.0.0.1/{i}" for i in range(21)]}, config=config)
    assert too_many == "error[invalid_input]: got 21 URLs; one call takes 1 to 20 (web.max_urls) — split the list\n"
    assert call_tool("fetch", {}) == "error[invalid_input]: unknown tool 'fetch'; the tools are web_extract, read_file, search_page\n"
    assert call_tool("read_file", "{not json").startswith("error[invalid_input]: read_file: arguments are not valid JSON")
    assert call_tool("read_file", {"path": "/etc/passwd"}, config=config).startswith(
        f"error[path_outside_cache]: /etc/passwd: read_file only reads pages stored in {home / 'cache' / 'web'}")
    assert call_tool("read_file", {"path": "/x.md", "colour": 1}) == (
        "error[invalid_input]: read_file: colour: unknown argument\n")
    assert call_tool("search_page", {"path": "/x.md"}) == "error[invalid_input]: search_page: pattern: required argument is missing\n"


def test_call_tool_works_inside_a_running_event_loop(server, config):
    url = server.route("/tools/loop.txt", Response(b"in a loop\n", headers={"Content-Type": "text/plain"}))

    async def agent() -> str:
        return call_tool("web_extract", {"urls": [url]}, config=config)

    assert asyncio.run(agent()) == "in a loop\n"


@pytest.mark.parametrize("fmt", FORMATS)
def test_cli_prints_the_same_definitions(fmt):
    result = CliRunner().invoke(main, ["tools", "--format", fmt])
    assert result.exit_code == 0 and json.loads(result.stdout) == tool_definitions(fmt)


def test_cli_rejects_an_unknown_format():
    result = CliRunner().invoke(main, ["tools", "--format", "xml"])
    assert result.exit_code == 2 and "'xml' is not one of 'openai', 'anthropic', 'json-schema'" in result.stderr
