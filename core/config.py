"""YAML configuration → validated pydantic models.

One file (``$WEBSHELF_HOME/config.yaml``, or ``--config`` / ``WEBSHELF_CONFIG``) configures
everything. Unknown keys are rejected and out-of-range values are errors naming the key and
the allowed range — never silently clamped — because a typo in a deployment config should
fail loudly at start, not quietly change behaviour. ``${ENV_VAR}`` (or ``${ENV_VAR:-default}``)
in any string keeps secrets out of the file; an unset one is an error only where its setting is
read (core/config_env.py), so a missing provider key never stops ``webshelf read``.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import ConfigDict, Field, PrivateAttr, SecretStr, TypeAdapter, ValidationError, field_validator, model_validator

from webshelf.core.config_env import Unset, defer, field_path, interpolate, prune
from webshelf.core.config_paths import absolute, config_path, default_home  # noqa: F401 — public here too
from webshelf.core.config_errors import clean_loc, describe, empty_sections, key_of, yaml_problem
from webshelf.core.config_runtimes import check_old_shape
from webshelf.errors import ConfigError, InputError
from webshelf.core.units import Duration, Size
from webshelf.runtimes.docker.config import DockerRuntimeConfig
from webshelf.runtimes.local.config import LocalRuntimeConfig
from webshelf.runtimes.modal.config import ModalImageConfig, ModalRuntimeConfig
from webshelf.runtimes.settings import INSTANCE_NAME, Strict
from webshelf.runtimes.ssh.config import SshJumpConfig, SshRuntimeConfig

DEFAULT_USER_AGENT = "webshelf/0.1 (+https://pypi.org/project/webshelf/; web reader for AI agents)"
CHAR_LIMIT_RANGE = (2_000, 2_000_000)


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


#: ``web.backend`` and ``web.extract_backend``: core/backends/__init__.py registers one backend per name
BACKEND_CHOICES = ("auto", "local", "browser", "firecrawl", "tavily", "exa", "parallel")
BackendName = Literal["auto", "local", "browser", "firecrawl", "tavily", "exa", "parallel"]
#: ``web.fallback`` entries: a backend name (``auto`` is not a backend)
FallbackName = Literal["local", "browser", "firecrawl", "tavily", "exa", "parallel"]


class BrowserConfig(Strict):
    """``web.browser``: headless Chromium from the OS package, driven by Playwright (core/backends/browser/)."""

    executable_path: str | None = Field(None, description="Chromium executable; default: chromium (or chromium-browser, "
                                        "google-chrome) on PATH.")
    wait_ms: int = Field(3_000, ge=0, le=60_000, description="After load, wait for network idle at most this long.")
    max_pages: int = Field(4, ge=1, le=64, description="Pages rendered at once (one fresh context each, one browser).")
    user_agent: str | None = Field(None, min_length=1, description="User-Agent of the browser; default: Chromium's own "
                                   "(without 'Headless').")
    idle_s: float = Field(60.0, ge=0, le=86_400, description="The process-wide browser is closed after this many "
                          "seconds unused by any call (0: as soon as no call uses it); the next page launches it again.")


def _known_backends(by_backend: dict) -> dict:
    """A ``*_by_backend`` mapping whose keys all name backends (else a clear error); unchanged."""
    from webshelf.core.fetch.proxy import PROXY_BACKENDS

    for name in by_backend:
        if name not in PROXY_BACKENDS:
            raise ValueError(f"{name!r} is not a backend; choose from: {', '.join(PROXY_BACKENDS)}")
    return by_backend


class WebConfig(Strict):
    backend: BackendName | None = Field(
        "local", description="Backend used to fetch pages: local (default), firecrawl, tavily, exa, parallel, or auto "
        "(the first hosted provider with a key, else local). A key alone never changes the backend.")
    extract_backend: BackendName | None = Field(None, description="Backend for web_extract (same choices); overrides web.backend.")
    extract_char_limit: int = Field(
        15_000, ge=CHAR_LIMIT_RANGE[0], le=CHAR_LIMIT_RANGE[1],
        description="Budget in characters for what one page returns to the agent, footer included.",
    )
    head_ratio: float = Field(0.75, ge=0.1, le=0.95, description="Share of the budget given to the head window.")
    max_line_chars: int = Field(1_000, ge=200, le=100_000, description="Longer stored lines are wrapped.")
    max_urls: int = Field(20, ge=1, le=1_000, description="URLs accepted in one call.")
    concurrency: int = Field(8, ge=1, le=256, description="Pages fetched at once.")
    timeout_s: float = Field(30.0, gt=0, le=3_600, description="Per-URL timeout in seconds.")
    user_agent: str = Field(DEFAULT_USER_AGENT, min_length=1, description="User-Agent of the local backend and the browser.")
    # request headers, proxies and polite fetching (core/fetch/headers.py, proxy.py, politeness.py, robots.py)
    headers: dict[str, str] = Field(default_factory=dict, description="Extra request headers sent with every page request.")
    languages: list[str] = Field(default_factory=list, description="Accept-Language, most wanted first (e.g. [en-GB, en]).")
    proxy: SecretStr | None = Field(None, description="Proxy for every backend: http://, https://, socks5:// or socks5h:// "
                                    "URL; credentials via ${ENV}.")
    proxy_by_backend: dict[str, SecretStr] = Field(
        default_factory=dict, description="Per-backend proxy overriding web.proxy: backend name → proxy URL, or direct.")
    ca_bundle: str | None = Field(None, min_length=1, description="PEM file of extra CA certificates trusted for "
                                  "https (a TLS-inspecting proxy's CA), added to the default roots.")
    ca_bundle_by_backend: dict[str, str] = Field(
        default_factory=dict, description="Per-backend CA bundle overriding web.ca_bundle: backend name → PEM path.")
    trust_env_proxy: bool = Field(False, description="Honour HTTPS_PROXY / HTTP_PROXY / ALL_PROXY / NO_PROXY from the environment.")
    per_host_concurrency: int = Field(2, ge=1, le=64, description="Requests in flight to one host, across calls and processes of a home.")
    per_host_delay_ms: int = Field(0, ge=0, le=60_000, description="Least time between two request starts to one host.")
    robots_txt: Literal["ignore", "obey"] = Field("ignore", description="obey: refuse URLs the site's robots.txt disallows.")
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
    # bounded conversion (core/convert/pool.py, bounds.py): CPU-bound work after the fetch
    convert_workers: int | None = Field(
        None, ge=0, le=64, description="Conversion worker processes; 0 or 1 converts in this process (pre-checks "
        "only, no kill); null: the CPU count. A call with one URL always converts in this process when the body is small.")
    convert_timeout_s: float = Field(20.0, gt=0, le=3_600, description="Deadline for converting one page (worker killed "
                                     "and replaced → conversion_timeout).")
    convert_memory_mb: int = Field(1_024, ge=64, le=65_536, description="Memory one conversion may use beyond the idle "
                                   "worker (RLIMIT_AS; over it → too_complex).")
    max_html_elements: int = Field(1_000_000, ge=1_000, le=100_000_000, description="HTML elements per page; more is "
                                   "too_complex, refused before any tree is built.")
    convert_huge_bytes: int = Field(8_000_000, ge=100_000, le=2_000_000_000, description="An HTML page larger than this "
                                    "(bytes) is converted whole, without main-content selection, one slice of its body "
                                    "at a time, so its memory stays flat (core/convert/html_huge.py).")
    wrap_untrusted: bool = Field(False, description="Wrap page content in untrusted-content markers with a random id.")
    private_urls: Literal["local", "refuse"] = Field(
        "local", description="With a hosted backend, URLs never sent to the provider (private, allow-listed, loopback, "
        "file://) are fetched by the local backend (local) or fail with not_sent_to_provider (refuse).")
    # the browser backend and the fallback chain (core/backends/browser/, core/backends/fallback.py)
    browser: BrowserConfig = Field(default_factory=BrowserConfig)
    fallback: list[FallbackName] | None = Field(
        None, description="Backends tried in turn after the one in force gives a near-empty page, a 403/429 or a "
        "timeout; default [local, browser] when Chromium and Playwright are installed, else [local].")
    fallback_min_chars: int = Field(200, ge=0, le=100_000, description="A page with fewer letters and digits than this "
                                    "and a <script> is an app shell: the next backend of web.fallback renders it.")
    # hosted backends (core/backends/hosted.py): one section per provider
    firecrawl: FirecrawlConfig = Field(default_factory=FirecrawlConfig)
    tavily: TavilyConfig = Field(default_factory=TavilyConfig)
    exa: ExaConfig = Field(default_factory=ExaConfig)
    parallel: ParallelConfig = Field(default_factory=ParallelConfig)

    @field_validator("headers")
    @classmethod
    def _valid_headers(cls, headers: dict[str, str]) -> dict[str, str]:
        from webshelf.core.fetch.headers import check_headers

        return check_headers(headers)

    @field_validator("languages")
    @classmethod
    def _valid_languages(cls, languages: list[str]) -> list[str]:
        from webshelf.core.fetch.headers import check_language

        return [check_language(tag) for tag in languages]

    @field_validator("proxy")
    @classmethod
    def _valid_proxy(cls, value: SecretStr | None) -> SecretStr | None:
        from webshelf.core.fetch.proxy import check_proxy_url

        return None if value is None else SecretStr(check_proxy_url(value.get_secret_value()))

    @field_validator("proxy_by_backend")
    @classmethod
    def _valid_backend_proxies(cls, value: dict[str, SecretStr]) -> dict[str, SecretStr]:
        from webshelf.core.fetch.proxy import check_proxy_url

        _known_backends(value)
        return {name: SecretStr(check_proxy_url(url.get_secret_value(), direct_ok=True)) for name, url in value.items()}

    @field_validator("ca_bundle_by_backend")
    @classmethod
    def _valid_backend_bundles(cls, value: dict[str, str]) -> dict[str, str]:
        return _known_backends(value)

    @field_validator("fallback")
    @classmethod
    def _unique_chain(cls, chain: list[str] | None) -> list[str] | None:
        if chain is not None and len(set(chain)) != len(chain):
            raise ValueError(f"{chain} names a backend twice; list each backend once, in the order to try them")
        return chain

    @field_validator("allow_hosts")
    @classmethod
    def _valid_hosts(cls, hosts: list[str]) -> list[str]:
        from webshelf.core.fetch.netpolicy import normalise_allow_entry

        return [normalise_allow_entry(h) for h in hosts]


#: ``runtimes.<name>.type`` → its options, each model next to its adapter (runtimes/<type>/config.py)
RUNTIME_CONFIGS: dict[str, type[Strict]] = {
    "local": LocalRuntimeConfig, "docker": DockerRuntimeConfig, "ssh": SshRuntimeConfig, "modal": ModalRuntimeConfig,
}
RuntimeConfig = Annotated[Union[LocalRuntimeConfig, DockerRuntimeConfig, SshRuntimeConfig, ModalRuntimeConfig],
                          Field(discriminator="type")]
#: the instances that exist without any config, so ``--runtime local`` and ``--runtime docker`` just work
DEFAULT_INSTANCES = {"local": "local", "docker": "docker"}


@functools.cache
def _instance_adapter() -> TypeAdapter[Any]:
    """The validator of one runtime instance block, built on first use: a module-level
    TypeAdapter would build its schema (and load pydantic's plugin machinery) on every import
    of this module, though only ``config.runtimes.<name> = …`` in code needs it (issue 15)."""
    return TypeAdapter(RuntimeConfig)


class SyncConfig(Strict):
    """``runtimes.sync``: the timing of ``webshelf sync``, one watcher for every SSH instance it keeps in step."""

    debounce_s: float = Field(0.05, ge=0, le=60, description="Quiet time before a batch is sent.")
    max_wait_s: float = Field(0.5, gt=0, le=600, description="Longest a change waits for its batch.")
    rescan_interval_s: float = Field(60.0, gt=0, le=86_400, description="Full diff this often (and after a reconnect).")


class RuntimesConfig(Strict):
    """``runtimes``: shared settings, and every other key is a named instance with a ``type``.

    Like SWE-ReX's deployment configs: one model per type with ``extra="forbid"``, chosen by
    ``type`` (a discriminated union), so ``gpu-box`` and ``cpu-box`` are two docker blocks and an
    SSH host is one ``type: ssh`` block. ``local`` and ``docker`` exist with their defaults unless
    an instance of that name is configured. Instances are attributes (``config.runtimes.gpu_box``
    for a name that is an identifier) and ``instances()`` lists them all.
    """

    # assignments are validated by __setattr__: pydantic's own validate_assignment mixes typed extras up
    model_config = ConfigDict(extra="allow", validate_assignment=False)
    __pydantic_extra__: dict[str, RuntimeConfig] = Field(init=False)

    publish_timeout_s: float = Field(
        10.0, gt=0, le=600, description="How long web_extract waits for sandboxes to confirm a page is visible.")
    sync: SyncConfig = Field(default_factory=SyncConfig, description="webshelf sync's timing.")

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        if isinstance(data, dict):
            out = {name: {"type": kind} for name, kind in DEFAULT_INSTANCES.items() if name not in data}
            for key, value in data.items():
                if key not in cls.model_fields and not INSTANCE_NAME.fullmatch(str(key)):
                    raise ValueError(f"runtime name {key!r} may only use letters, digits, '.', '_' and '-' "
                                     "(and starts with a letter or digit)")  # `local:` with nothing under it is the default instance too
                out[key] = {"type": DEFAULT_INSTANCES[key]} if value is None and key in DEFAULT_INSTANCES else value
            data = out
        return data

    def __setattr__(self, name: str, value: Any) -> None:
        """``config.runtimes.gpu = DockerRuntimeConfig(…)`` adds or replaces an instance, validated as one."""
        if name.startswith("_"):
            return super().__setattr__(name, value)
        if name in type(self).model_fields:  # validated alone, with the field's constraints
            return super().__setattr__(name, getattr(type(self).model_validate({name: value}), name))
        if not INSTANCE_NAME.fullmatch(name):
            raise ConfigError(f"runtime name {name!r} may only use letters, digits, '.', '_' and '-'", key=f"runtimes.{name}")
        self.__pydantic_extra__[name] = _instance_adapter().validate_python(value)

    @classmethod
    def extra_model(cls, value: Any) -> type[Strict] | None:
        """The model of an instance block (for core/config_env.py): chosen by its ``type``."""
        return RUNTIME_CONFIGS.get(value.get("type")) if isinstance(value, dict) else None

    def instances(self) -> dict[str, Strict]:
        """Every runtime instance by name (defaults included)."""
        return dict(self.__pydantic_extra__ or {})

    def of_type(self, kind: str) -> list[str]:
        """The names of the instances of one type, in config order."""
        return [name for name, settings in self.instances().items() if settings.type == kind]


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


def parse_config(data: Any, file: Path) -> Config:
    """Validate already-loaded YAML data; errors name the file and every bad key."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{file}: the top level must be a mapping of sections (web, cache, runtimes)", path=str(file))
    data = empty_sections(Config, data)  # `web:` with nothing under it: the defaults
    check_old_shape(data, file)
    unset: dict[tuple, Unset] = {}
    data = interpolate(data, file, unset)
    deferred: dict[tuple, Unset] = {}
    for parts, missing in unset.items():  # a setting naming an unset ${VAR} takes its default for now
        if (path := field_path(Config, parts, data)) is not None:
            deferred.setdefault(path, missing)
            prune(data, path)
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        for err in exc.errors():  # a required setting cannot wait: its variable is needed now
            if err["type"] == "missing" and (loc := clean_loc(Config, tuple(err["loc"]))) in deferred:
                raise deferred[loc].error() from None
        problems = describe(exc, Config, tuple(RUNTIME_CONFIGS))
        raise ConfigError(f"{file}: {'; '.join(message for _, message in problems)}", path=str(file),
                          key=key_of(problems[0][0]) if problems else None) from None
    for path, missing in deferred.items():
        defer(config, path, missing)
    return config


def _constructed(cls: type[Strict], fields_set: set[str] | None = None, **given: Any) -> Any:
    """``cls()`` with every section a ``Strict`` default factory makes built the same way, by
    ``model_construct`` (defaults as they are; pydantic does not validate defaults either)."""
    values = {name: _constructed(field.default_factory) for name, field in cls.model_fields.items()
              if isinstance(field.default_factory, type) and issubclass(field.default_factory, Strict)}
    return cls.model_construct(_fields_set=set() if fields_set is None else fields_set, **values, **given)


def default_config() -> Config:
    """``Config()``, equal to it field for field (tests/core/test_config_defaults.py), without
    building a validator: with no config file there is nothing to validate, and building the
    schema of every section cost a cached ``webshelf extract`` about as much as the rest of its
    own work (issue 15; docs/benchmarks.md "Start-up"). The validators are built, as before, on
    first use — an assignment (``validate_assignment``), a dump, a runtime instance added.

    ``RuntimesConfig``'s ``before`` validator is the one validator that gives defaults: the
    ``local`` and ``docker`` instances (``DEFAULT_INSTANCES``), built here the same way."""
    config = _constructed(Config)
    runtimes = config.runtimes
    instances = {name: _constructed(RUNTIME_CONFIGS[kind], {"type"}, type=kind) for name, kind in DEFAULT_INSTANCES.items()}
    object.__setattr__(runtimes, "__pydantic_extra__", instances)
    object.__setattr__(runtimes, "__pydantic_fields_set__", set(instances))
    return config


def load_config(path: str | Path | None = None) -> Config:
    """Load the config that applies (explicit path, WEBSHELF_CONFIG, or the home's config.yaml)."""
    file, named = config_path(path)
    if not file.exists():
        if named:
            raise ConfigError(f"config file {file} does not exist; create it or drop --config/WEBSHELF_CONFIG", path=str(file))
        return default_config().with_home(default_home())
    import yaml  # only when there is a file to parse: no config file, no YAML parser (issue 15)

    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(yaml_problem(file, exc), path=str(file)) from None
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
