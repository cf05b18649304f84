"""Starting, restarting and stopping the one Chromium a browser backend shares between pages.

Kept apart from using it (backend.py), as SWE-ReX keeps a deployment apart from its runtime.
Chromium comes from the OS package (Debian ``chromium``) and is driven by Playwright's Python
package with ``executable_path``: nothing is ever downloaded (no ``playwright install``). The
flags keep a headless Chromium from calling home — without ``--disable-background-networking``
and friends it tries to reach Google's hosts on start — and every request it makes goes through
the policy proxy (proxy.py), loopback included (``<-loopback>``). Playwright gives each launch a
fresh temporary profile (``--user-data-dir``) and removes it on close.

A crashed browser (killed, out of memory) is noticed through ``is_connected()``: the page that
was rendering fails with a ``backend_error``, and the next page gets a new browser.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from typing import Any

from webshelf.errors import ConfigError

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# Debian's /usr/bin/chromium is a shell wrapper that sources /etc/chromium.d (Google API keys, GPU
# flags) and does not always exec: the binary itself is started instead, so the flags below are
# the only ones and the browser is one process webshelf can watch.
BINARIES = ("/usr/lib/chromium/chromium", "/usr/lib/chromium-browser/chromium-browser")
#: Chromium keeps only the last ``--disable-features``: Playwright passes its own list first (its
#: chromiumSwitches.ts — network time queries, search preconnects, optimization hints …), so ours
#: must repeat it, or those start-up requests to Google come back (found as DNS lookups of
#: update.googleapis.com and connectivitycheck.gstatic.com from the policy proxy during tests).
DISABLED_FEATURES = (
    # Playwright's list (playwright 1.5x)
    "AvoidUnnecessaryBeforeUnloadCheckSync", "DestroyProfileOnBrowserClose", "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable", "LensOverlay", "MediaRouter", "PaintHolding", "ThirdPartyStoragePartitioning",
    "AvoidCorsURLLoaderRestartOnRedirect", "OptimizationHints", "NetworkTimeServiceQuerying", "AimEnabled",
    "PreconnectToSearch",
    # ours: no calls home for translation, autofill, feeds, certificate-transparency or other component updates
    "Translate", "AutofillServerCommunication", "InterestFeedContentSuggestions",
    "CertificateTransparencyComponentUpdater", "CaptivePortalDetection", "DialMediaRouteProvider",
)
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--no-default-browser-check",
         "--disable-domain-reliability", "--disable-client-side-phishing-detection", "--metrics-recording-only",
         "--disable-features=" + ",".join(DISABLED_FEATURES))
INSTALL_HINT = ("install Chromium from the OS packages (Debian/Ubuntu: apt-get install chromium) or set "
                "web.browser.executable_path")
PIP_HINT = "install the browser extra: pip install 'webshelf[browser]' (Playwright's Python package only)"


def find_chromium(configured: str | None = None) -> str | None:
    """The Chromium executable to use: ``web.browser.executable_path``, else the first on PATH."""
    if configured:
        return configured if os.access(configured, os.X_OK) else None
    found = next((found for name in CANDIDATES if (found := shutil.which(name))), None)
    if found and _is_script(found):
        return next((b for b in BINARIES if os.access(b, os.X_OK)), found)
    return found


def _is_script(path: str) -> bool:
    with contextlib.suppress(OSError), open(path, "rb") as handle:
        return handle.read(2) == b"#!"
    return False


def playwright_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("playwright") is not None


def browser_available(configured: str | None = None) -> bool:
    """Can the browser backend run here (Chromium found and Playwright importable)?"""
    return playwright_installed() and find_chromium(configured) is not None



async def _wait_for(awaitable, timeout: float):  # noqa: ANN001, ANN202
    import asyncio

    return await asyncio.wait_for(awaitable, timeout)


def ca_flags(config: Any) -> tuple[str, ...]:
    """Chromium's flag trusting ``web.ca_bundle`` (core/fetch/tls.py): certificate chains through
    exactly these CA keys (SPKI SHA-256) are accepted; every other certificate is verified as
    always — verification is never turned off. No bundle, no flag."""
    from webshelf.core.fetch.tls import ca_bundle_for, spki_hashes

    path = ca_bundle_for(config, "browser")
    return (f"--ignore-certificate-errors-spki-list={','.join(spki_hashes(path))}",) if path else ()


def require_browser(configured: str | None = None) -> str:
    """The Chromium path, or the ConfigError saying what to install."""
    if not playwright_installed():
        raise ConfigError(f"the browser backend needs Playwright: {PIP_HINT}", key="web.backend")
    path = find_chromium(configured)
    if path is None:
        where = f"web.browser.executable_path {configured!r} is not an executable" if configured else \
            f"no Chromium on PATH (looked for {', '.join(CANDIDATES)})"
        raise ConfigError(f"the browser backend needs Chromium: {where}; {INSTALL_HINT}", key="web.browser.executable_path")
    return path


class SharedBrowser:
    """One Chromium for every page of a backend, launched on first use and again after a crash."""

    def __init__(self, executable: str, proxy_url: str, *, args: tuple[str, ...] = FLAGS) -> None:
        self.executable = executable
        self.args = args
        self.proxy_url = proxy_url  # the browser-wide proxy; each page's context names its own
        self.launches = 0
        self._playwright: Any = None
        self._browser: Any = None
        import asyncio  # on use: `webshelf backend list` only asks whether Chromium is there

        self._lock = asyncio.Lock()

    async def get(self) -> Any:
        """The running browser, (re)launched when there is none or it crashed."""
        async with self._lock:
            if self._browser is not None and self._browser.is_connected():
                return self._browser
            await self._close_browser()
            if self._playwright is None:
                from playwright.async_api import async_playwright

                self._playwright = await async_playwright().start()
            self._browser = await self._playwright.chromium.launch(
                executable_path=self.executable, headless=True, args=list(self.args), chromium_sandbox=False,
                proxy={"server": self.proxy_url, "bypass": "<-loopback>"}, handle_sigint=False,
                handle_sigterm=False, handle_sighup=False)
            self.launches += 1
            return self._browser

    async def pids(self) -> dict[str, list[int]]:
        """This browser's processes by kind (``browser``, ``renderer``, ``GPU``, …), from Chromium
        itself (CDP SystemInfo.getProcessInfo): exact even when other Chromiums run."""
        browser = await self.get()
        session = await browser.new_browser_cdp_session()
        try:
            info = await session.send("SystemInfo.getProcessInfo")
        finally:
            with contextlib.suppress(Exception):
                await session.detach()
        kinds: dict[str, list[int]] = {}
        for process in info.get("processInfo", []):
            kinds.setdefault(process["type"], []).append(int(process["id"]))
        return kinds

    def alive(self) -> bool:
        return self._browser is not None and self._browser.is_connected()

    async def _close_browser(self) -> None:
        if self._browser is not None:
            with contextlib.suppress(Exception):
                await _wait_for(self._browser.close(), 10)
            self._browser = None

    async def close(self) -> None:
        async with self._lock:
            await self._close_browser()
            if self._playwright is not None:
                with contextlib.suppress(Exception):
                    await _wait_for(self._playwright.stop(), 10)
                self._playwright = None


def _proc_table() -> dict[int, tuple[int, str]]:
    """pid → (parent pid, command name) for every process, from /proc."""
    table = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                stat = (entry / "stat").read_text()
                name = stat[stat.index("(") + 1:stat.rindex(")")]
                table[int(entry.name)] = (int(stat[stat.rindex(")") + 2:].split()[1]), name)
    return table


def chromium_pids(root: int | None = None) -> list[int]:
    """The Chromium processes this process started (its descendants only), the browser first."""
    table = _proc_table()
    root = os.getpid() if root is None else root
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, stack = [], [root]
    while stack:
        pid = stack.pop()
        for child in children.get(pid, []):
            if table[child][1].startswith("chrom"):
                found.append(child)
            stack.append(child)
    return sorted(found, key=lambda p: (table.get(table[p][0], (0, ""))[1].startswith("chrom"), p))


def rss_bytes(pids: list[int]) -> int:
    """Resident memory of ``pids`` together (VmRSS from /proc; shared pages counted per process)."""
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
    return total
