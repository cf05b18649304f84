"""Which proxy a request goes through, and a transport that still applies the policy to the target.

A network that allows egress only through a proxy must still get webshelf's address policy: the
proxy is a way out, never a way around the rules. So a proxied request is checked twice before a
byte leaves: the DNS-free rules (as always, core/fetch/checked.py), then the target's name is
resolved *here* and every address checked (``ProxiedTransport``) — the same ``check_addresses``
the direct connection uses. Only then does the request go to the proxy, which resolves the name
again itself: the connection is not pinned to the address webshelf checked (README "Proxies"
says what that means for DNS rebinding). The proxy's own address is operator configuration and
is not subject to the policy — a proxy on loopback works with ``web.allow_private: false``.

Settings, most specific first: ``web.proxy_by_backend.<backend>`` (a URL, or ``direct``), then
``web.proxy``, then — with ``web.trust_env_proxy: true`` — ``HTTPS_PROXY`` / ``HTTP_PROXY`` /
``ALL_PROXY`` with ``NO_PROXY`` (the variables httpx's ``trust_env`` reads). Credentials live only
in the URL (``${ENV}`` in the config); every message shows the proxy as ``scheme://***@host:port``.
The browser backend asks ``browser_proxy(config)`` for Playwright's ``proxy=`` dict.
"""

from __future__ import annotations

import ssl
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

import httpx

from webshelf.core.fetch.guarded_connect import Resolver, system_resolver
from webshelf.core.fetch.netpolicy import Policy, check_addresses, parse_ip
from webshelf.core.fetch.tls import verify_failure
from webshelf.errors import MissingPackageError, ProxyError

PROXY_BACKENDS = ("local", "browser", "firecrawl", "tavily", "exa", "parallel")
SCHEMES = ("http", "https", "socks5", "socks5h")
DIRECT = "direct"


def check_proxy_url(url: str, *, direct_ok: bool = False) -> str:
    """A proxy URL as the config takes it (scheme, host, port), or ValueError saying what to write."""
    url = url.strip()
    if direct_ok and url == DIRECT:
        return url
    example = "write it like http://proxy.example.com:3128 or socks5://user:${PROXY_PASSWORD}@127.0.0.1:1080"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 — a port that is not a number in range raises
    except ValueError as exc:
        raise ValueError(f"not a valid proxy URL ({exc}); {example}") from None
    if parts.scheme.lower() not in SCHEMES:
        raise ValueError(f"proxy scheme {parts.scheme or '(none)'!r} is not supported; use one of "
                         f"{', '.join(SCHEMES)}" + (" (or direct)" if direct_ok else "") + f"; {example}")
    if not parts.hostname or parts.path not in ("", "/") or parts.query:
        raise ValueError(f"a proxy URL is scheme://[user:password@]host:port and nothing else; {example}")
    return url


@dataclass(frozen=True)
class ProxySettings:
    """One proxy. ``url`` carries the credentials; ``shown`` never does."""

    url: str

    @property
    def _parts(self):  # noqa: ANN202
        return urlsplit(self.url)

    @property
    def scheme(self) -> str:
        return self._parts.scheme.lower()

    @property
    def server(self) -> str:
        """scheme://host:port without credentials (Playwright's ``server``)."""
        parts = self._parts
        port = parts.port or {"http": 80, "https": 443}.get(self.scheme, 1080)
        host = f"[{parts.hostname}]" if ":" in (parts.hostname or "") else parts.hostname
        return f"{self.scheme}://{host}:{port}"

    @property
    def shown(self) -> str:
        """For messages and logs: the credentials replaced by ***."""
        server = self.server
        return server.replace("://", "://***@", 1) if self._parts.username or self._parts.password else server

    @property
    def username(self) -> str | None:
        return unquote(self._parts.username) if self._parts.username else None

    @property
    def password(self) -> str | None:
        return unquote(self._parts.password) if self._parts.password else None

    def __repr__(self) -> str:
        return f"ProxySettings({self.shown!r})"


Chooser = Callable[[str], ProxySettings | None]


def _env_proxy(url: str) -> ProxySettings | None:
    """The proxy the environment names for this URL (HTTPS_PROXY/HTTP_PROXY/ALL_PROXY, NO_PROXY)."""
    parts = urlsplit(url)
    proxies = urllib.request.getproxies_environment()
    if parts.hostname and urllib.request.proxy_bypass_environment(parts.hostname, proxies):
        return None
    value = proxies.get(parts.scheme.lower()) or proxies.get("all")
    if not value:
        return None
    if "://" not in value:
        value = "http://" + value
    try:
        return ProxySettings(check_proxy_url(value))
    except ValueError as exc:
        raise ProxyError(f"the proxy in the environment (HTTPS_PROXY/HTTP_PROXY/ALL_PROXY, read because "
                         f"web.trust_env_proxy is true) is not usable: {exc}") from None


def proxy_chooser(config: object, backend: str) -> Chooser:
    """For one backend: a function from a target URL to its proxy (None: connect directly)."""
    web = config.web  # type: ignore[attr-defined]
    override = web.proxy_by_backend.get(backend)
    value = override.get_secret_value() if override is not None else None
    if value == DIRECT:
        return lambda url: None
    if value is None and web.proxy is not None:
        value = web.proxy.get_secret_value()
    if value is not None:
        fixed = ProxySettings(value)
        return lambda url: fixed
    if web.trust_env_proxy:
        return _env_proxy
    return lambda url: None


def proxy_for(config: object, backend: str, url: str = "https://example.com/") -> ProxySettings | None:
    """The proxy ``backend`` uses for ``url`` (for one fixed proxy the URL does not matter)."""
    return proxy_chooser(config, backend)(url)


def browser_proxy(config: object) -> dict[str, str] | None:
    """Playwright's ``proxy=`` for the browser backend: server, credentials and, from NO_PROXY, bypass."""
    proxy = proxy_for(config, "browser")
    if proxy is None:
        return None
    out = {"server": proxy.server}
    if proxy.username:
        out["username"] = proxy.username
    if proxy.password:
        out["password"] = proxy.password
    web = config.web  # type: ignore[attr-defined]
    if web.trust_env_proxy and web.proxy is None and "browser" not in web.proxy_by_backend:
        if bypass := urllib.request.getproxies_environment().get("no"):
            out["bypass"] = bypass
    return out


def hosted_client_proxy(config: object, backend: str, base_url: str) -> str | None:
    """The proxy URL a hosted provider's httpx client uses for its API (None: direct)."""
    proxy = proxy_chooser(config, backend)(base_url)
    if proxy is not None and proxy.scheme.startswith("socks"):
        _need_socksio()
    return proxy.url if proxy is not None else None


def _need_socksio() -> None:
    try:
        import socksio  # noqa: F401
    except ImportError:
        raise MissingPackageError("a socks5 proxy needs the socksio package: pip install 'webshelf[socks]'",
                                  package="socksio") from None


def httpx_proxy(proxy: ProxySettings) -> httpx.Proxy:
    """httpx's view of the proxy (socks5h is socks5 to httpx: the proxy resolves names either way)."""
    if proxy.scheme.startswith("socks"):
        _need_socksio()
    url = proxy.url if proxy.scheme != "socks5h" else "socks5" + proxy.url[len("socks5h"):]
    return httpx.Proxy(url)


class ProxiedTransport(httpx.AsyncHTTPTransport):
    """httpx's proxy transport, with the target's name resolved and checked here before it is sent."""

    def __init__(self, policy: Policy, proxy: ProxySettings, *, limits: httpx.Limits,
                 resolver: Resolver | None = None, verify: ssl.SSLContext | bool = True) -> None:
        super().__init__(limits=limits, trust_env=False, proxy=httpx_proxy(proxy), verify=verify)
        self.policy = policy
        self.proxy = proxy
        self.resolver = resolver or system_resolver

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        host = request.url.host
        port = request.url.port or (443 if request.url.scheme == "https" else 80)
        if parse_ip(host) is None:  # an IP literal already passed the DNS-free policy
            try:
                addresses = await self.resolver(host, port)
            except OSError as exc:
                raise httpx.ConnectError(f"cannot resolve {host}: {exc.strerror or exc}") from None
            check_addresses(host, addresses, self.policy)
        try:
            response = await super().handle_async_request(request)
        except httpx.ProxyError as exc:
            raise ProxyError(f"the proxy {self.proxy.shown} refused the request: {exc}; check web.proxy "
                             "(its address and credentials)", proxy=self.proxy.shown) from None
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            if verify_failure(exc) is not None:  # the tunnel worked; the site's certificate did not verify
                raise
            raise ProxyError(f"cannot reach the proxy {self.proxy.shown}: {exc or type(exc).__name__}; check web.proxy",
                             proxy=self.proxy.shown) from None
        if response.status_code == 407:  # a forward (non-CONNECT) proxy answers in the response itself
            await response.aclose()
            raise ProxyError(f"the proxy {self.proxy.shown} refused the credentials (HTTP 407 Proxy Authentication "
                             "Required); check the user and password in web.proxy", proxy=self.proxy.shown)
        return response


class RoutingTransport(httpx.AsyncBaseTransport):
    """One transport per proxy (and the direct one), chosen per request by the target URL."""

    def __init__(self, direct: httpx.AsyncBaseTransport, choose: Chooser,
                 make: Callable[[ProxySettings], httpx.AsyncBaseTransport]) -> None:
        self._direct = direct
        self._choose = choose
        self._make = make
        self._proxied: dict[str, httpx.AsyncBaseTransport] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        proxy = self._choose(str(request.url))
        if proxy is None:
            return await self._direct.handle_async_request(request)
        transport = self._proxied.get(proxy.url)
        if transport is None:
            transport = self._proxied[proxy.url] = self._make(proxy)
        return await transport.handle_async_request(request)

    async def aclose(self) -> None:
        await self._direct.aclose()
        for transport in self._proxied.values():
            await transport.aclose()


__all__ = ["ProxiedTransport", "ProxySettings", "RoutingTransport", "browser_proxy",
           "check_proxy_url", "hosted_client_proxy", "proxy_chooser", "proxy_for"]
