"""Loopback servers that implement the hosted providers' documented extract endpoints.

Each one checks what the client sends as the real API would — method, path, auth header, body
fields and their types and ranges, unknown fields — and rejects it in that provider's error
shape; a good request is answered in the documented success shape from ``pages`` (URL →
Markdown). A URL not in ``pages`` is a per-URL failure inside an HTTP 200, as the providers
report a page they could not fetch. ``script`` queues whole responses (401, 429 with
Retry-After, 500 …) that are sent before normal handling. Shapes: see each backend's docstring.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.loopback import QuietServer

PATHS = {"firecrawl": "/v2/scrape", "tavily": "/extract", "exa": "/contents", "parallel": "/v1/extract"}
ENV_VARS = {"firecrawl": "FIRECRAWL_API_KEY", "tavily": "TAVILY_API_KEY", "exa": "EXA_API_KEY",
            "parallel": "PARALLEL_API_KEY"}


class Reject(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class Scripted:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


def error_body(kind: str, message: str) -> dict[str, Any]:
    """Each provider's documented error envelope."""
    if kind == "firecrawl":
        return {"success": False, "error": message}
    if kind == "tavily":
        return {"detail": {"error": message}}
    if kind == "parallel":
        return {"type": "error", "error": {"message": message, "ref_id": "ref_test"}}
    return {"error": message, "requestId": "req_test"}


def _need(cond: bool, message: str, status: int = 400) -> None:
    if not cond:
        raise Reject(status, message)


def _only(body: dict[str, Any], allowed: set[str], where: str = "body") -> None:
    extra = set(body) - allowed
    _need(not extra, f"Unrecognized key(s) in {where}: {', '.join(sorted(extra))}")


def _urls(body: dict[str, Any], most: int | None) -> list[str]:
    urls = body.get("urls")
    _need(isinstance(urls, list) and urls and all(isinstance(u, str) for u in urls), "urls must be a non-empty list of strings")
    _need(most is None or len(urls) <= most, f"urls: at most {most} URLs per request")
    return urls


def validate(kind: str, body: Any) -> list[str]:
    """The URLs of a request the real API would accept; raises Reject otherwise."""
    _need(isinstance(body, dict), "the body must be a JSON object")
    if kind == "firecrawl":
        _only(body, {"url", "formats", "onlyMainContent", "removeBase64Images", "maxAge", "timeout", "waitFor",
                     "parsers", "headers", "includeTags", "excludeTags", "mobile", "proxy", "blockAds", "storeInCache"})
        _need(isinstance(body.get("url"), str) and body["url"].startswith(("http://", "https://")), "url: Invalid url")
        _need(body.get("formats") == ["markdown"] or "markdown" in body.get("formats", []), "formats must include markdown")
        for key in ("onlyMainContent", "removeBase64Images"):
            _need(isinstance(body.get(key, True), bool), f"{key} must be a boolean")
        for key in ("maxAge", "timeout", "waitFor"):
            _need(isinstance(body.get(key, 0), int) and body.get(key, 0) >= 0, f"{key} must be a non-negative integer (ms)")
        for parser in body.get("parsers", []):
            _need(isinstance(parser, (str, dict)), "parsers: items are strings or objects")
            if isinstance(parser, dict):
                _only(parser, {"type", "mode", "maxPages"}, "parsers[]")
                _need(parser.get("type") == "pdf" and parser.get("mode", "auto") in ("fast", "auto", "ocr"), "bad pdf parser")
                _need(isinstance(parser.get("maxPages", 1), int) and parser.get("maxPages", 1) >= 1, "maxPages ≥ 1")
        return [body["url"]]
    if kind == "tavily":
        _only(body, {"urls", "extract_depth", "format", "timeout", "include_images", "include_favicon",
                     "include_usage", "query", "chunks_per_source"})
        urls = _urls(body, 20)
        _need(body.get("extract_depth", "basic") in ("basic", "advanced"), "extract_depth must be basic or advanced")
        _need(body.get("format", "markdown") in ("markdown", "text"), "format must be markdown or text")
        timeout = body.get("timeout", 30)
        _need(isinstance(timeout, (int, float)) and 1 <= timeout <= 60, "timeout must be between 1 and 60 seconds")
        _need(isinstance(body.get("include_images", False), bool), "include_images must be a boolean")
        return urls
    if kind == "exa":
        _only(body, {"urls", "ids", "text", "summary", "highlights", "maxAgeHours", "livecrawlTimeout", "livecrawl",
                     "subpages", "subpageTarget", "extras", "filterEmptyResults", "metadata", "flags"})
        urls = _urls(body, None)
        text = body.get("text", True)
        _need(isinstance(text, (bool, dict)), "text must be a boolean or an object")
        if isinstance(text, dict):
            _only(text, {"maxCharacters", "includeHtmlTags", "verbosity", "includeSections", "excludeSections"}, "text")
            _need(isinstance(text.get("includeHtmlTags", False), bool), "text.includeHtmlTags must be a boolean")
        _need(isinstance(body.get("maxAgeHours", 0), int) and body.get("maxAgeHours", 0) >= -1, "maxAgeHours: integer ≥ -1")
        _need(not ("livecrawl" in body and "maxAgeHours" in body), "livecrawl cannot be combined with maxAgeHours")
        return urls
    _only(body, {"urls", "advanced_settings", "client_model", "max_chars_total", "objective", "search_queries",
                 "session_id"})
    urls = _urls(body, 20)
    settings = body.get("advanced_settings") or {}
    _need(isinstance(settings, dict), "advanced_settings must be an object", 422)
    _only(settings, {"excerpt_settings", "fetch_policy", "full_content"}, "advanced_settings")
    full = settings.get("full_content", False)
    _need(isinstance(full, bool) or (isinstance(full, dict) and set(full) <= {"max_chars_per_result"}),
          "full_content must be a boolean or FullContentSettings", 422)
    policy = settings.get("fetch_policy") or {}
    _only(policy, {"max_age_seconds", "timeout_seconds", "disable_cache_fallback"}, "fetch_policy")
    age = policy.get("max_age_seconds", 600)
    _need(age is None or (isinstance(age, int) and age >= 600), "fetch_policy.max_age_seconds: minimum 600", 422)
    _need(isinstance(policy.get("disable_cache_fallback", False), bool), "disable_cache_fallback must be a boolean", 422)
    return urls


def success_body(kind: str, urls: list[str], pages: dict[str, str]) -> dict[str, Any]:
    """The documented 200 answer; URLs not in ``pages`` are per-URL failures (target 404)."""
    good = [u for u in urls if u in pages]
    bad = [u for u in urls if u not in pages]
    title = lambda u: f"Title of {u.rsplit('/', 1)[-1]}"  # noqa: E731
    if kind == "firecrawl":
        url = urls[0]
        if url in pages:
            return {"success": True, "data": {"markdown": pages[url], "metadata": {
                "title": title(url), "sourceURL": url, "url": url, "statusCode": 200}}}
        return {"success": True, "data": {"markdown": "", "metadata": {
            "sourceURL": url, "url": url, "statusCode": 404, "error": "Not Found"}}}
    if kind == "tavily":
        return {"results": [{"url": u, "raw_content": pages[u], "images": []} for u in good],
                "failed_results": [{"url": u, "error": "Failed to fetch url"} for u in bad], "response_time": 0.2}
    if kind == "exa":
        return {"requestId": "req_test",
                "results": [{"id": u, "url": u, "title": title(u), "text": pages[u]} for u in good],
                "statuses": [{"id": u, "status": "success", "source": "crawled"} for u in good]
                + [{"id": u, "status": "error", "error": {"tag": "CRAWL_NOT_FOUND", "httpStatusCode": 404}} for u in bad]}
    return {"extract_id": "extract_test", "session_id": "session_test",
            "results": [{"url": u, "title": title(u), "publish_date": None, "excerpts": [], "full_content": pages[u]}
                        for u in good],
            "errors": [{"url": u, "error_type": "fetch_error", "http_status_code": 404, "content": None} for u in bad],
            "warnings": None, "usage": [{"name": "sku_extract_full_content", "count": len(urls)}]}


class FakeProvider:
    """``with FakeProvider("tavily", key="k", pages={...}) as fake: fake.base`` — a provider on 127.0.0.1."""

    def __init__(self, kind: str, *, key: str, pages: dict[str, str] | None = None, latency: float = 0.0) -> None:
        self.kind, self.key, self.latency = kind, key, latency
        self.pages: dict[str, str] = dict(pages or {})
        self.script: list[Scripted] = []
        self.requests: list[dict[str, Any]] = []  # {path, headers, body, at}
        self._lock = threading.Lock()
        outer = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                self._send(405, error_body(outer.kind, "Method Not Allowed"))

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, body, headers = outer._answer(self.path, dict(self.headers), raw)
                if outer.latency:
                    time.sleep(outer.latency)
                self._send(status, body, headers)

            def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode() if not isinstance(body, bytes) else body
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self._server = QuietServer(("127.0.0.1", 0), _Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _answer(self, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, Any, dict[str, str]]:
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = raw.decode("utf-8", "replace")
        with self._lock:
            self.requests.append({"path": path, "headers": {k.lower(): v for k, v in headers.items()},
                                  "body": body, "at": time.monotonic()})
            scripted = self.script.pop(0) if self.script else None
        if path != PATHS[self.kind]:
            return 404, error_body(self.kind, f"Cannot POST {path}"), {}
        sent = {k.lower(): v for k, v in headers.items()}
        given = sent.get("authorization", "").removeprefix("Bearer ") if self.kind in ("firecrawl", "tavily") \
            else sent.get("x-api-key", "")
        if given != self.key:
            # echoes what it got, as some APIs do: the client must scrub it from its messages
            return 401, error_body(self.kind, f"Unauthorized: invalid API key {given!r}"), {}
        if scripted:
            return scripted.status, scripted.body, scripted.headers
        if "json" not in sent.get("content-type", ""):
            return 400, error_body(self.kind, "Content-Type must be application/json"), {}
        try:
            urls = validate(self.kind, body)
        except Reject as exc:
            return exc.status, error_body(self.kind, exc.message), {}
        return 200, success_body(self.kind, urls, self.pages), {}

    @property
    def base(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def bodies(self) -> list[Any]:
        return [r["body"] for r in self.requests]

    def __enter__(self) -> "FakeProvider":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
