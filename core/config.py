"""YAML configuration → validated pydantic models.

One file (``$WEBSHELF_HOME/config.yaml``, or ``--config`` / ``WEBSHELF_CONFIG``) configures
everything. Unknown keys are rejected and out-of-range values are errors naming the key and
the allowed range — never silently clamped — because a typo in a deployment config should
fail loudly at start, not quietly change behaviour. ``${ENV_VAR}`` (or ``${ENV_VAR:-default}``)
in any string keeps secrets out of the file; an unset one is an error only where its setting is
read (core/config_env.py), so a missing provider key never stops ``webshelf read``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, SecretStr, ValidationError, field_validator

from webshelf.core.config_env import Unset, defer, field_path, interpolate, prune
from webshelf.errors import ConfigError, InputError
from webshelf.core.units import Duration, Size
from webshelf.runtimes.local.view import SYSTEM_BINDS

DEFAULT_USER_AGENT = "webshelf/0.1 (+https://pypi.org/project/webshelf/; web reader for AI agents)"
CHAR_LIMIT_RANGE = (2_000, 2_000_000)


class Strict(BaseModel):
    """Base for every config section: unknown keys are errors. A field whose ``${VAR}`` is unset
    raises its ConfigError when read, not when the file loads (core/config_env.py)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)
    _unset: dict[str, Unset] = PrivateAttr(default_factory=dict)

    def __getattribute__(self, name: str) -> Any:
        if name[:1] != "_" and name in type(self).__pydantic_fields__:
            pending = (object.__getattribute__(self, "__pydantic_private__") or {}).get("_unset")
            if pending and name in pending:
                raise pending[name].error()
        return object.__getattribute__(self, name)

    def __setattr__(self, name: str, value: Any) -> None:
        private = object.__getattribute__(self, "__pydantic_private__") or {}
        if name in private.get("_unset", {}):  # a value set in code replaces the unset one
            private["_unset"] = {k: v for k, v in private["_unset"].items() if k != name}
        super().__setattr__(name, value)


class HostedBackendConfig(Strict):
    """What every hosted provider section (``web.firecrawl`` …) has: a key, an API base URL, a timeout.

    ``api_key`` is a SecretStr so that ``config show``, reprs and logs print ``**********``; when it
    is unset the provider's usual environment variable is read (core/backends/hosted.py)."""

    api_key: SecretStr | None = Field(None, description="API key; ${ENV} works; default: the provider's env var.")
    base_url: str = Field(..., description="API base URL (operator configuration: self-hosted or a test server).")
    timeout_s: float = Field(60.0, gt=0, le=600, description="How long the provider may take for one request.")

    @field_validator("base_url")
    @classmethod
    def _http_base(cls, value: str) -> str:
        if not re.match(r"^https?://[^/\s]+", value):
            raise ValueError(f"base_url {value!r} must be an absolute http(s) URL like https://api.example.com")
        return value.rstrip("/")


class FirecrawlConfig(HostedBackendConfig):
    """``web.firecrawl``: POST /v2/scrape, one URL per request, run concurrently."""

    base_url: str = "https://api.firecrawl.dev"
    only_main_content: bool = Field(True, description="Only the main content (no nav, header, footer).")
    remove_base64_images: bool = Field(True, description="Drop inline base64 images from the Markdown.")
    wait_for_ms: int | None = Field(None, ge=0, le=60_000, description="Wait this long for JavaScript before scraping.")
    pdf_mode: Literal["fast", "auto", "ocr"] = Field("auto", description="Firecrawl's PDF parser mode.")
    pdf_max_pages: int | None = Field(None, ge=1, le=10_000, description="PDF pages parsed (default: web.max_pdf_pages).")


class TavilyConfig(HostedBackendConfig):
    """``web.tavily``: POST /extract, up to 20 URLs per request."""

    base_url: str = "https://api.tavily.com"
    timeout_s: float = Field(60.0, ge=1, le=60, description="Tavily's extract timeout (its API allows 1 – 60 s).")
    extract_depth: Literal["basic", "advanced"] = Field("basic", description="advanced: tables, embedded content, more anti-bot.")


class ExaConfig(HostedBackendConfig):
    """``web.exa``: POST /contents, many URLs per request."""

    base_url: str = "https://api.exa.ai"
    max_characters: int | None = Field(None, ge=1_000, le=100_000_000, description="Cap on text per page (default: none).")
    livecrawl_timeout_ms: int | None = Field(None, ge=1_000, le=90_000, description="Exa's live-crawl timeout.")


class ParallelConfig(HostedBackendConfig):
    """``web.parallel``: POST /v1/extract with full content, up to 20 URLs per request."""

    base_url: str = "https://api.parallel.ai"
    max_chars_per_result: int | None = Field(None, ge=1_000, le=100_000_000, description="Cap on full content per URL.")
    disable_cache_fallback: bool = Field(False, description="Error instead of serving stale cache when a live fetch fails.")


class WebConfig(Strict):
    backend: str | None = Field(
        "local", description="Backend used to fetch pages: local (default), firecrawl, tavily, exa, parallel, or auto "
        "(the first hosted provider with a key, else local). A key alone never changes the backend.")
    extract_backend: str | None = Field(None, description="Backend for web_extract (same choices); overrides web.backend.")
    extract_char_limit: int = Field(
        15_000, ge=CHAR_LIMIT_RANGE[0], le=CHAR_LIMIT_RANGE[1],
        description="Budget in characters for what one page returns to the agent, footer included.",
    )
    head_ratio: float = Field(0.75, ge=0.1, le=0.95, description="Share of the budget given to the head window.")
    max_line_chars: int = Field(1_000, ge=200, le=100_000, description="Longer stored lines are wrapped.")
    max_urls: int = Field(20, ge=1, le=1_000, description="URLs accepted in one call.")
    concurrency: int = Field(8, ge=1, le=256, description="Pages fetched at once.")
    timeout_s: float = Field(30.0, gt=0, le=3_600, description="Per-URL timeout in seconds.")
    user_agent: str = Field(DEFAULT_USER_AGENT, min_length=1)
    # fetch hardening (core/fetch/netpolicy.py, core/backends/local.py): what may be fetched, and how much
    allow_private: bool = Field(False, description="Allow loopback, private, link-local and other non-public addresses.")
    allow_hosts: list[str] = Field(
        default_factory=list,
        description="Hosts allowed even when they resolve to non-public addresses: names, *.suffix, IPs or CIDRs.",
    )
    max_redirects: int = Field(5, ge=0, le=30, description="Redirect hops followed, each re-checked.")
    allow_file_urls: bool = Field(False, description="Allow file:// URLs (only under web.file_dirs).")
    file_dirs: list[str] = Field(default_factory=list, description="Directories file:// URLs may read from.")
    allow_secret_urls: bool = Field(False, description="Allow URLs carrying credentials (userinfo, token/key query parameters).")
    max_bytes: int = Field(10_000_000, ge=1_000, le=2_000_000_000, description="Cap on a decoded response body, in bytes.")
    read_timeout_s: float = Field(15.0, gt=0, le=3_600, description="Longest wait for any single read from the server.")
    max_retries: int = Field(2, ge=0, le=10, description="Retries of a 429 or 503 response, honouring Retry-After.")
    max_retry_wait_s: float = Field(10.0, ge=0, le=600, description="Total seconds spent waiting between retries of one URL.")
    max_pdf_pages: int = Field(200, ge=1, le=100_000, description="PDF pages converted to text.")
    wrap_untrusted: bool = Field(False, description="Wrap page content in untrusted-content markers with a random id.")
    private_urls: Literal["local", "refuse"] = Field(
        "local", description="With a hosted backend, URLs never sent to the provider (private, allow-listed, loopback, "
        "file://) are fetched by the local backend (local) or fail with not_sent_to_provider (refuse).")
    # hosted backends (core/backends/hosted.py): one section per provider
    firecrawl: FirecrawlConfig = Field(default_factory=FirecrawlConfig)
    tavily: TavilyConfig = Field(default_factory=TavilyConfig)
    exa: ExaConfig = Field(default_factory=ExaConfig)
    parallel: ParallelConfig = Field(default_factory=ParallelConfig)

    @field_validator("allow_hosts")
    @classmethod
    def _valid_hosts(cls, hosts: list[str]) -> list[str]:
        from webshelf.core.fetch.netpolicy import normalise_allow_entry

        return [normalise_allow_entry(h) for h in hosts]


class LocalRuntimeConfig(Strict):
    """``runtimes.local``: commands under bubblewrap on this machine."""

    sandbox: Literal["bwrap", "none"] = Field(
        "bwrap", description="bwrap, or none to run unsandboxed on purpose (verify says so).")
    bwrap: str = Field("bwrap", min_length=1, description="The bubblewrap executable (name on PATH or a path).")
    binds: list[str] = Field(
        default_factory=lambda: list(SYSTEM_BINDS),
        description="Host paths visible read-only at the same path (default: a minimal system view; "
                    "['/'] = the whole host, which verify() warns about).")
    uid: int = Field(65534, ge=1, le=4_294_967_294, description="Unprivileged uid commands run as (in a user namespace).")
    gid: int = Field(65534, ge=1, le=4_294_967_294, description="Unprivileged gid commands run as.")
    network: bool = Field(False, description="Share the host network (off: a private, empty network namespace).")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables inside.")
    working_dir: str = Field("/tmp", min_length=1, description="Directory commands start in.")

    @field_validator("binds")
    @classmethod
    def _absolute_binds(cls, value: list[str]) -> list[str]:
        for path in value:
            if not path.startswith("/"):
                raise ValueError(f"bind {path!r} must be an absolute path")
        return value


class DockerRuntimeConfig(Strict):
    """``runtimes.docker``: a container with cache/web bound read-only; safe defaults."""

    image: str = Field("debian:bookworm-slim", min_length=1, description="Image to start (needs sh, sed, awk).")
    container: str | None = Field(None, description="Attach to this running container (name or id) instead of starting one.")
    docker_host: str | None = Field(None, description="Daemon address; default DOCKER_HOST or the local socket.")
    network: str = Field("none", min_length=1, description="Docker network mode: none, bridge, host or a network name.")
    cap_drop: list[str] = Field(["ALL"], description="Capabilities dropped.")
    cap_add: list[str] = Field(default_factory=list, description="Capabilities added back.")
    no_new_privileges: bool = Field(True, description="security-opt no-new-privileges.")
    read_only_root: bool = Field(True, description="Read-only root filesystem.")
    tmpfs: dict[str, str] = Field({"/tmp": "rw,nosuid,nodev,size=256m"}, description="tmpfs mounts: path → options.")
    user: str = Field("65534:65534", description="User inside (uid:gid); pages are world-readable, so any uid reads them.")
    mem_limit: str = Field("1g", pattern=r"^[0-9]+[bkmg]?$", description="Memory limit (docker syntax: 512m, 1g).")
    cpus: float = Field(1.0, gt=0, le=1024, description="CPU limit.")
    pids_limit: int = Field(512, ge=16, le=1_000_000, description="Process limit.")
    labels: dict[str, str] = Field(default_factory=dict, description="Extra container labels.")
    env: dict[str, str] = Field(default_factory=dict, description="Environment variables inside.")
    working_dir: str = Field("/tmp", description="Directory commands start in.")
    volumes: list[str] = Field(default_factory=list, description="Extra binds 'host:container[:ro|rw]' (ro by default).")
    command: list[str] = Field(
        ["sh", "-c", "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done"], min_length=1,
        description="The container's long-running main process.")

    @field_validator("volumes")
    @classmethod
    def _volume_syntax(cls, value: list[str]) -> list[str]:
        for spec in value:
            parts = spec.split(":")
            if not 2 <= len(parts) <= 3 or not all(parts[:2]) or not parts[0].startswith("/") \
                    or not parts[1].startswith("/") or (len(parts) == 3 and parts[2] not in ("ro", "rw")):
                raise ValueError(f"volume {spec!r} must be '/host/path:/container/path[:ro|rw]'")
        return value


class ModalImageConfig(Strict):
    """``runtimes.modal.image`` as a small recipe the adapter turns into a ``modal.Image``."""

    base: str = Field("debian_slim", min_length=1, description="debian_slim, or a registry image tag.")
    python: str | None = Field(None, description="Python version to add (debian_slim python_version / add_python).")
    apt: list[str] = Field(default_factory=list, description="Debian packages to install.")
    pip: list[str] = Field(default_factory=list, description="Python packages to install.")


class ModalRuntimeConfig(Strict):
    """``runtimes.modal``: Modal sandboxes sharing one Volume mounted read-only at the cache path."""

    app: str = Field("webshelf", min_length=1, description="Modal app the sandboxes belong to (created if missing).")
    volume: str = Field("webshelf-cache", min_length=1, max_length=64, pattern=r"^[A-Za-z0-9._-]+$",
                        description="Modal Volume holding cache/web (created if missing, version 2).")
    environment: str | None = Field(None, description="Modal environment; default: the profile's.")
    sandbox_id: str | None = Field(None, description="Attach to this running sandbox (sb-…) instead of creating one.")
    image: str | ModalImageConfig = Field("debian_slim", description="debian_slim, a registry tag, or {base, python, apt, pip}.")
    timeout: int = Field(3_600, ge=10, le=86_400, description="Seconds before Modal ends a sandbox we created.")
    cpu: float | None = Field(None, gt=0, le=64, description="CPU cores reserved (Modal default when null).")
    memory: int | None = Field(None, ge=128, le=344_064, description="Memory reserved, in MiB (Modal default when null).")
    workdir: str | None = Field(None, description="Directory commands start in.")
    user: str | None = Field("65534:65534", pattern=r"^[0-9]+:[0-9]+$",
                             description="uid:gid commands run as (setpriv inside; no capabilities); "
                                         "null = the image's user, root on Modal, which verify() fails.")
    env: dict[str, str] = Field(default_factory=dict, description="Environment variables inside.")
    secrets: list[str] = Field(default_factory=list, description="Names of Modal Secrets exposed as environment variables.")
    region: str | list[str] | None = Field(None, description="Region(s) the sandbox may run in.")
    options: dict[str, Any] = Field(default_factory=dict, description="Other modal.Sandbox.create arguments, passed through.")
    reload_timeout_s: float = Field(55.0, gt=0, le=600, description="Longest wait for one Volume reload inside a sandbox.")
    reload_retry_s: float = Field(30.0, ge=0, le=600, description="How long a reload refused because files are open is retried.")
    reload_concurrency: int = Field(32, ge=1, le=1_024, description="Sandboxes reloaded at once when a page is published.")

    @field_validator("workdir")
    @classmethod
    def _absolute_workdir(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("/"):
            raise ValueError(f"workdir {value!r} must be an absolute path")
        return value


class SshJumpConfig(Strict):
    """``runtimes.ssh.hosts.<name>.jump``: a bastion the connection is tunnelled through."""

    host: str = Field(..., min_length=1, description="Jump host name or address.")
    port: int = Field(22, ge=1, le=65_535)
    user: str | None = Field(None, description="Login on the jump host (default: the target's user).")
    key_file: str | None = Field(None, description="Private key for the jump host (default: the target's key).")


class SshHostConfig(Strict):
    """``runtimes.ssh.hosts.<name>``: one remote machine that mirrors cache/web read-only."""

    host: str = Field(..., min_length=1, description="Host name or address to connect to.")
    port: int = Field(22, ge=1, le=65_535)
    user: str = Field("root", min_length=1, description="The sync user (root for readonly: bind).")
    key_file: str | None = Field(None, description="Private key file; unset = ssh-agent and ~/.ssh default keys.")
    use_agent: bool = Field(True, description="Also try keys from a running ssh-agent.")
    known_hosts: str = Field("~/.ssh/known_hosts", min_length=1, description="Known-hosts file checked for the host key.")
    insecure_accept_unknown_host_key: bool = Field(
        False, description="Accept a host key not in known_hosts (throwaway hosts only; warns).")
    connect_timeout_s: float = Field(10.0, gt=0, le=600, description="TCP connect + handshake + auth timeout.")
    keepalive_s: int = Field(15, ge=0, le=3_600, description="Keepalive interval in seconds (0 = off).")
    jump: SshJumpConfig | None = Field(None, description="Optional jump host.")
    readonly: Literal["bind", "perms"] = Field(
        "perms", description="bind: root sync user, staging dir bind-mounted read-only; perms: 0444/0555 files.")
    staging_dir: str | None = Field(None, description="readonly: bind staging directory (default: beside cache/web).")
    agent_user: str | None = Field(None, description="The user commands (exec, verify) run as; default: user.")
    agent_key_file: str | None = Field(None, description="Key for agent_user (default: key_file).")
    transfer: Literal["auto", "tar", "sftp"] = Field("auto", description="tar stream over exec, or SFTP; auto = tar if present.")

    @field_validator("staging_dir")
    @classmethod
    def _absolute_staging(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("/"):
            raise ValueError(f"staging_dir {value!r} must be an absolute path")
        return value


class SshRuntimeConfig(Strict):
    """``runtimes.ssh``: remote hosts reached over SSH (paramiko); runtime names ``ssh:<host name>``."""

    hosts: dict[str, SshHostConfig] = Field(default_factory=dict, description="Remote hosts by name.")
    publish_timeout_s: float = Field(10.0, gt=0, le=600, description="How long publish waits for every host.")
    batch_files: int = Field(1_000, ge=1, le=100_000, description="Files per transfer batch.")
    batch_bytes: int = Field(64_000_000, ge=1_000, le=10_000_000_000, description="Bytes per transfer batch.")
    reconnect_attempts: int = Field(5, ge=1, le=100, description="Connection attempts before an error.")
    reconnect_backoff_s: float = Field(0.5, ge=0, le=60, description="First backoff; doubles per attempt (max 30 s).")
    debounce_s: float = Field(0.05, ge=0, le=60, description="webshelf sync: quiet time before a batch is sent.")
    max_wait_s: float = Field(0.5, gt=0, le=600, description="webshelf sync: longest a change waits for its batch.")
    rescan_interval_s: float = Field(60.0, gt=0, le=86_400, description="webshelf sync: full diff this often.")

    @field_validator("hosts")
    @classmethod
    def _host_names(cls, value: dict[str, SshHostConfig]) -> dict[str, SshHostConfig]:
        for name in value:
            if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
                raise ValueError(f"host name {name!r} may only use letters, digits, '.', '_' and '-'")
        return value


class RuntimesConfig(Strict):
    """``runtimes``: one block per sandbox kind, plus how long publishing may take."""

    publish_timeout_s: float = Field(
        10.0, gt=0, le=600, description="How long web_extract waits for sandboxes to confirm a page is visible.")
    local: LocalRuntimeConfig = Field(default_factory=LocalRuntimeConfig)
    docker: DockerRuntimeConfig = Field(default_factory=DockerRuntimeConfig)
    modal: ModalRuntimeConfig = Field(default_factory=ModalRuntimeConfig)
    ssh: SshRuntimeConfig = Field(default_factory=SshRuntimeConfig)


class CacheConfig(Strict):
    """Reuse and bounds of ``cache/web/``. Durations: seconds or ``90s``/``15m``/``12h``/``7d``;
    sizes: bytes or ``500MB``/``1GiB``."""

    max_age: Duration = Field(
        900.0, ge=0, le=365 * 86_400,
        description="Reuse a stored copy younger than this instead of fetching again (0 disables reuse).",
    )
    ttl: Duration = Field(
        7 * 86_400.0, ge=0, le=10 * 365 * 86_400,
        description="Remove stored pages fetched longer ago than this (0 keeps them until the size cap).",
    )
    max_total_bytes: Size = Field(
        1 << 30, ge=1 << 20, le=1 << 50,
        description="Size cap of cache/web/; least recently used pages go until it is 90% full.",
    )
    max_file_chars: int = Field(
        2_000_000, ge=10_000, le=100_000_000,
        description="A longer page's stored copy is cut here, with a marker line.",
    )


class Config(Strict):
    web: WebConfig = Field(default_factory=WebConfig)
    cache: CacheConfig = Field(default_factory=CacheConfig)
    runtimes: RuntimesConfig = Field(default_factory=RuntimesConfig)

    _home: Path = PrivateAttr(default_factory=lambda: default_home())
    _source: Path | None = PrivateAttr(default=None)

    @property
    def home(self) -> Path:
        """The directory that holds config.yaml and cache/ (``WEBSHELF_HOME``)."""
        return self._home

    @property
    def source(self) -> Path | None:
        """The YAML file this config was read from, if any."""
        return self._source

    def with_home(self, home: Path | str) -> "Config":
        self._home = absolute(home)
        return self


def absolute(path: str | Path) -> Path:
    """``~`` expanded, made absolute and normalised (no ``.``/``..``): footer paths and the
    sandbox mount point must be spelled the same, or the footer's path fails inside."""
    return Path(os.path.normpath(Path(path).expanduser().absolute()))


def default_home() -> Path:
    return absolute(os.environ.get("WEBSHELF_HOME") or "~/.webshelf")


def config_path(explicit: str | Path | None = None) -> tuple[Path, bool]:
    """Which config file applies, and whether the user named it (then it must exist)."""
    if explicit:
        return absolute(explicit), True
    env = os.environ.get("WEBSHELF_CONFIG")
    if env:
        return absolute(env), True
    return default_home() / "config.yaml", False


def _describe(err: dict[str, Any]) -> str:
    key = ".".join(str(p) for p in err["loc"])
    kind = err["type"]
    if kind == "extra_forbidden":
        return f"{key}: unknown key (check the spelling; see README's config reference)"
    ctx = err.get("ctx") or {}
    bounds = {"greater_than_equal": "≥ {ge}", "less_than_equal": "≤ {le}", "greater_than": "> {gt}", "less_than": "< {lt}"}
    if kind in bounds:
        return f"{key}: {err['input']!r} is out of range; allowed: {bounds[kind].format(**ctx)}"
    return f"{key}: {err['msg']} (got {err.get('input')!r})"


def parse_config(data: Any, file: Path) -> Config:
    """Validate already-loaded YAML data; errors name the file and every bad key."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{file}: the top level must be a mapping of sections (web, cache, runtimes)", path=str(file))
    unset: dict[tuple, Unset] = {}
    data = interpolate(data, file, unset)
    deferred: dict[tuple, Unset] = {}
    for parts, missing in unset.items():  # a setting naming an unset ${VAR} takes its default for now
        if (path := field_path(Config, parts)) is not None:
            deferred.setdefault(path, missing)
            prune(data, path)
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        for err in exc.errors():  # a required setting cannot wait: its variable is needed now
            if err["type"] == "missing" and tuple(err["loc"]) in deferred:
                raise deferred[tuple(err["loc"])].error() from None
        problems = "; ".join(_describe(e) for e in exc.errors())
        raise ConfigError(f"{file}: {problems}", path=str(file)) from None
    for path, missing in deferred.items():
        defer(config, path, missing)
    return config


def load_config(path: str | Path | None = None) -> Config:
    """Load the config that applies (explicit path, WEBSHELF_CONFIG, or the home's config.yaml)."""
    file, named = config_path(path)
    if not file.exists():
        if named:
            raise ConfigError(f"config file {file} does not exist; create it or drop --config/WEBSHELF_CONFIG", path=str(file))
        return Config().with_home(default_home())
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{file}: not valid YAML: {exc}", path=str(file)) from None
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read: {exc.strerror}", path=str(file)) from None
    config = parse_config(data, file).with_home(default_home())
    config._source = file
    return config


def check_char_limit(value: int) -> int:
    """A per-call budget must be in the same range as the config key; say the range if not."""
    lo, hi = CHAR_LIMIT_RANGE
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise InputError(f"char_limit {value!r} is out of range; allowed: {lo:,} to {hi:,} characters", key="char_limit")
    return value
