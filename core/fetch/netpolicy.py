"""Which URLs webshelf may fetch: the address policy against SSRF, usable with or without DNS.

An agent will be handed hostile URLs, so a URL must not reach the machine's own services,
the local network or a cloud metadata endpoint. ``check_url`` applies every rule that needs
no DNS (scheme, credentials in the URL, reserved names, IP literals in any spelling — decimal
``2130706433``, hex, octal, ``127.1``, ``::ffff:127.0.0.1``); every input URL passes it once,
inside ``core/fetch/checked.validate``, and hosted backends rely on that alone (no DNS here).
``check_addresses`` applies the rule to every address DNS returned; the local backend's
connector (core/fetch/guarded_connect.py) resolves once, checks, and connects only to a checked
address, so a rebinding DNS server gets no second chance.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import idna

from webshelf.errors import BlockedURLError, InvalidURLError, clip

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# Names that always mean "this machine" or "this private network", whatever DNS says.
RESERVED_NAMES = {"localhost", "metadata", "instance-data", "metadata.google.internal", "metadata.goog"}
RESERVED_SUFFIXES = (".localhost", ".internal", ".local", ".localdomain", ".home.arpa", ".intranet", ".corp", ".lan")

# Query parameter names that carry credentials (matched on the whole name or its last _/-/. part).
_SECRET_PARAM = re.compile(
    r"(?:^|[_.-])(?:token|secret|password|passwd|pwd|apikey|api[_-]?key|access[_-]?key|private[_-]?key"
    r"|client[_-]?secret|sig|signature|credential|credentials|auth|session[_-]?id)$",
    re.IGNORECASE,
)
# Values that are credentials whatever the parameter is called: Google (AIza…), AWS access key
# ids, GitHub, Slack, OpenAI/Anthropic-style and Stripe keys, JWTs.
_SECRET_VALUE = re.compile(
    r"^(?:AIza[0-9A-Za-z_-]{30,}|(?:AKIA|ASIA)[0-9A-Z]{16}|gh[pousr]_[0-9A-Za-z]{30,}|github_pat_[0-9A-Za-z_]{30,}"
    r"|xox[abposr]-[0-9A-Za-z-]{10,}|sk-(?:ant-|proj-)?[0-9A-Za-z_-]{20,}|[rs]k_(?:live|test)_[0-9A-Za-z]{16,}"
    r"|eyJ[0-9A-Za-z_-]{8,}\.eyJ[0-9A-Za-z_-]{8,}\.[0-9A-Za-z_-]*)$"
)
_SECRET_NAMES = {"key", "apikey", "access_token", "code_verifier"}  # whole names the pattern above misses
_HOST_NAME = re.compile(r"^(?:\*\.)?(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\.)*[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$")
URL_ECHO_CHARS = 300  # the most of a URL an error echoes
HOW_TO_ALLOW = "if you trust this host, add it to web.allow_hosts (or set web.allow_private: true)"


@dataclass(frozen=True)
class Policy:
    allow_private: bool = False
    allow_hosts: tuple[str, ...] = ()
    allow_secret_urls: bool = False
    allow_file_urls: bool = False
    file_dirs: tuple[str, ...] = ()
    _networks: tuple[Network, ...] = field(default=(), repr=False)

    @classmethod
    def from_config(cls, web: object) -> "Policy":
        hosts = tuple(getattr(web, "allow_hosts", ()))
        return cls(
            allow_private=getattr(web, "allow_private", False), allow_hosts=hosts,
            allow_secret_urls=getattr(web, "allow_secret_urls", False),
            allow_file_urls=getattr(web, "allow_file_urls", False), file_dirs=tuple(getattr(web, "file_dirs", ())),
            _networks=tuple(ipaddress.ip_network(h, strict=False) for h in hosts if _is_network(h)),
        )

    def host_allowed(self, host: str) -> bool:
        """Is this host name (or literal) explicitly allowed by ``web.allow_hosts``?"""
        host = host.lower().rstrip(".")
        for entry in self.allow_hosts:
            if entry.startswith("*.") and (host.endswith(entry[1:]) or host == entry[2:]):
                return True
            if host == entry:
                return True
        ip = parse_ip(host)
        return ip is not None and self.address_allowed(ip)

    def address_allowed(self, ip: IPAddress) -> bool:
        return self.allow_private or any(ip in net for net in self._networks if net.version == ip.version)


def _is_network(entry: str) -> bool:
    try:
        ipaddress.ip_network(entry, strict=False)
        return True
    except ValueError:
        return False


def normalise_allow_entry(entry: str) -> str:
    """Validate one ``web.allow_hosts`` entry: a host name, ``*.suffix``, an IP or a CIDR."""
    value = entry.strip().lower().rstrip(".")
    if _is_network(value) or _HOST_NAME.match(value):
        return value
    raise ValueError(f"{entry!r} is not a host name, *.suffix, IP address or CIDR network")


def _ipv4_number(part: str) -> int | None:
    """One dotted part as inet_aton reads it: 0x… hex, 0… octal, else decimal."""
    try:
        if part[:2].lower() == "0x":
            return int(part[2:] or "0", 16)
        if len(part) > 1 and part[0] == "0":
            return int(part[1:], 8)
        return int(part, 10) if part.isdigit() else None
    except ValueError:
        return None


def parse_ip(host: str) -> IPAddress | None:
    """The address a host string denotes when it is an IP literal in any spelling resolvers accept."""
    host = host.strip("[]").rstrip(".")
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        pass
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or not all(parts):
        return None
    numbers = [_ipv4_number(p) for p in parts]
    if any(n is None for n in numbers):
        return None
    *front, last = numbers
    if any(n > 255 for n in front) or last >= 256 ** (5 - len(parts)):
        return None
    value = last
    for i, n in enumerate(front):
        value += n << (8 * (3 - i))
    return ipaddress.IPv4Address(value)


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped:
        return ip.ipv4_mapped
    if ip.sixtofour:
        return ip.sixtofour
    if ip.teredo:
        return ip.teredo[1]
    if ip in ipaddress.IPv6Network("64:ff9b::/96") or ip in ipaddress.IPv6Network("::/96"):  # NAT64, IPv4-compatible
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def address_problem(ip: IPAddress) -> str | None:
    """Why an address is not a public one (None when it is)."""
    if isinstance(ip, ipaddress.IPv6Address):
        inner = _embedded_ipv4(ip)
        if inner is not None and (inner_problem := address_problem(inner)):
            return f"{inner_problem} (embedded in IPv6 {ip})"
    kinds = (("is_unspecified", "unspecified"), ("is_loopback", "loopback"), ("is_link_local", "link-local (cloud metadata lives here)"),
             ("is_multicast", "multicast"), ("is_reserved", "reserved"))
    for attr, name in kinds:
        if getattr(ip, attr):
            return f"a {name} address"
    if isinstance(ip, ipaddress.IPv6Address) and ip in ipaddress.IPv6Network("fc00::/7"):
        return "a unique-local IPv6 address"
    if ip.is_private:
        return "a private address"
    if not ip.is_global:
        return "a non-public address"
    return None


def secret_param(name: str, value: str) -> bool:
    """Does this query parameter carry a credential (by its name, or by its value's known shape)?"""
    return bool(_SECRET_PARAM.search(name) or (name.lower() in _SECRET_NAMES and value.strip()) or _SECRET_VALUE.match(value.strip()))


_NOT_INERT = re.compile(r"[\x00-\x20\x7f-\x9f\"'<>\\`\u2028\u2029\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]")


def redact(url: str) -> str:
    """The URL for a message: userinfo and secret-looking query values replaced by ***, made inert
    and clipped. Redirect targets are chosen by the server, so a message never carries one as
    readable prose: spaces, quotes, angle brackets, control and invisible characters are
    percent-encoded (``IGNORE%20ALL%20…``) and the echo is at most ``URL_ECHO_CHARS`` long."""
    inert = _NOT_INERT.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode("utf-8")), _redacted(url))
    return clip(inert, URL_ECHO_CHARS)


def _redacted(url: str) -> str:
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2] if "@" in parts.netloc else parts.netloc
    query = "&".join(f"{k}=***" if secret_param(k, v) else (f"{k}={v}" if v else k)
                     for k, v in parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit((parts.scheme, ("***@" if "@" in parts.netloc else "") + netloc, parts.path, query, parts.fragment))


def check_secrets(url: str, policy: Policy) -> None:
    if policy.allow_secret_urls:
        return
    parts = urlsplit(url)
    where = None
    if "@" in parts.netloc:
        where = "a user name or password before the host"
    else:
        secret = next((k for k, v in parse_qsl(parts.query, keep_blank_values=True) if secret_param(k, v)), None)
        if secret is not None:
            where = f"the query parameter {secret!r}"
    if where:
        raise BlockedURLError(
            f"{redact(url)}: refused because the URL carries a credential ({where}); webshelf does not send secrets "
            "found in URLs — remove it, or set web.allow_secret_urls: true if this is intended", url=url)


def host_syntax_problem(host: str) -> str | None:
    """Why a host is not a usable DNS name (None when it is, or is an IP literal).

    Malformed names used to reach the HTTP library and the resolver, which raise ``IDNAError`` or
    ``UnicodeError`` (an internal error to the agent). The rules: no empty label (``a..b``), labels of
    at most 63 and names of at most 253 characters, and internationalised labels — ``xn--…`` or
    non-ASCII — that the IDNA codec (the ``idna`` package httpx uses) accepts."""
    name = host.rstrip(".")
    if host.startswith("[") or parse_ip(name) is not None or ":" in name:
        return None
    if not name:
        return "the host name is empty"
    labels = name.split(".")
    if any(not label for label in labels):
        return "the host name has an empty label (two dots in a row, or a leading dot)"
    long = next((label for label in labels if len(label) > 63), None)
    if long is not None:
        return f"a label of the host name is {len(long):,} characters long (DNS allows 63)"
    if len(name) > 253:
        return f"the host name is {len(name):,} characters long (DNS allows 253)"
    for label in labels:
        try:
            if not label.isascii():
                idna.encode(label, uts46=True)
            elif label.lower().startswith("xn--"):
                idna.decode(label)
        except (idna.IDNAError, UnicodeError, ValueError) as exc:
            return f"the label {clip(label, 80, quote=True)} is not a valid internationalised name ({exc})"
    return None


def check_host(host: str, url: str, policy: Policy) -> IPAddress | None:
    """The DNS-free host rules; returns the address when the host is an IP literal."""
    name = host.lower().rstrip(".")
    if policy.allow_private or policy.host_allowed(name):
        return parse_ip(name)
    if name in RESERVED_NAMES or name.endswith(RESERVED_SUFFIXES):
        raise BlockedURLError(f"{redact(url)}: refused: {host!r} is a reserved local or internal name; {HOW_TO_ALLOW}", url=url)
    ip = parse_ip(name)
    if ip is not None and (problem := address_problem(ip)) and not policy.address_allowed(ip):
        raise BlockedURLError(f"{redact(url)}: refused: {host} is {problem}; {HOW_TO_ALLOW}", url=url)
    return ip


def check_url(url: str, policy: Policy, *, first_hop: bool = True) -> None:
    """Every rule that needs no DNS; raises ``BlockedURLError`` saying why and what to do.

    ``first_hop`` False is for redirect targets: those are re-checked for scheme and address, but
    a signed download URL that a server redirects to is not the agent leaking a secret."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "file":
        if not first_hop:
            raise BlockedURLError(f"{clip(url, URL_ECHO_CHARS)}: refused: a redirect to a file:// URL is never followed", url=url)
        if not policy.allow_file_urls:
            raise BlockedURLError(f"{clip(url, URL_ECHO_CHARS)}: refused: file:// URLs are off; set web.allow_file_urls: true and list "
                                  "the directories in web.file_dirs", url=url)
        return
    if scheme not in ("http", "https"):
        raise BlockedURLError(f"{redact(url)}: refused: scheme {scheme or '(none)'!r} is not allowed; webshelf fetches "
                              "http and https URLs only", url=url)
    if first_hop:
        check_secrets(url, policy)
    if not parts.hostname:
        raise BlockedURLError(f"{redact(url)}: refused: the URL has no host", url=url)
    if problem := host_syntax_problem(parts.hostname):
        raise InvalidURLError(f"{redact(url)}: not a valid URL: {problem}; check the host name "
                              "(write it like https://example.com/page)", url=url)
    check_host(parts.hostname, url, policy)


def check_addresses(host: str, addresses: list[str], policy: Policy) -> list[str]:
    """Every address DNS returned must be allowed (one bad answer refuses the host); returns them.

    Messages name the host, not the URL: the caller, which knows the URL, puts it in front."""
    if not addresses:
        raise BlockedURLError(f"{host} did not resolve to any address")
    if policy.host_allowed(host):
        return addresses
    for text in addresses:
        ip = ipaddress.ip_address(text.split("%", 1)[0])
        if (problem := address_problem(ip)) and not policy.address_allowed(ip):
            raise BlockedURLError(f"refused: {host} resolves to {ip}, {problem}; {HOW_TO_ALLOW}")
    return addresses
