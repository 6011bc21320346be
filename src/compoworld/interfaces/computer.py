"""Computer use: the session's web app on a real screen (headless Chromium), driven by pixels.

`computer__screenshot / click / double_click / move / drag / scroll / type / key / wait` act on a
1280x800 viewport and each returns a PNG screenshot (base64); `marks=true` adds a set-of-marks
observation (every link, button and text box on screen with its box). The harness schemas of the
OpenAI computer-use tool, Anthropic's computer tool and UI-TARS map one to one onto these tools
(`from_openai`, `from_anthropic`, `from_uitars`).

How it is built, and why:
- One Chromium process per `BrowserPool`, driven by Playwright's async API on the pool's own thread
  (Playwright objects belong to the thread that made them); one browser context per session.
- The browser has no network: every request is intercepted. Requests for the app's origin are
  answered in-process by `WebApp.handle` *on the calling thread* (the one inside `env.call`), so a
  form post runs the same typed tools, journal and limits as any other call. Every other origin,
  scheme or download is refused (`refused` counts them), pop-ups are closed.
- Pixels are a function of (the page's HTML, the pointer and keyboard actions since it loaded):
  bundled fonts, no scripts of the app, no animations, a hidden caret. A screenshot is cached under
  the hash of exactly that, in the pool (shared by sessions), so a repeated screenshot of an
  unchanged page costs no render.
- The screen's URL and the pages it has shown are state (`screen`, `visits`): a reset restores them
  and the next action reopens the page; a check can ask whether a page was seen on the screen.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import queue
import re
import shutil
import threading
import weakref
from collections import OrderedDict
from concurrent.futures import Future
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict

from compoworld.core.envelope import InvalidArguments, RuleViolation
from compoworld.core.resource import Resource
from compoworld.core.service import SeedContext, Service
from compoworld.core.tool import tool

ORIGIN = "http://workplace.local"  # never resolved: every request is answered in-process
WIDTH, HEIGHT = 1280, 800
ACTION_TIMEOUT_S = 15.0  # one action, page loads included
SETTLE_S = 0.03  # after an input event: long enough for the navigation it starts to be requested
MAX_TYPE = 4000  # characters in one type action
MAX_WAIT_MS = 5000
MAX_PATH = 200  # points in one drag
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-smooth-scrolling",
    "--font-render-hinting=none",
    "--force-color-profile=srgb",
    "--hide-scrollbars",
    "--js-flags=--max-old-space-size=128",  # bounded memory per renderer
]
KEYS = {
    "ctrl": "Control",
    "control": "Control",
    "cmd": "Meta",
    "command": "Meta",
    "super": "Meta",
    "meta": "Meta",
    "win": "Meta",
    "alt": "Alt",
    "option": "Alt",
    "shift": "Shift",
    "enter": "Enter",
    "return": "Enter",
    "esc": "Escape",
    "escape": "Escape",
    "tab": "Tab",
    "space": " ",
    "backspace": "Backspace",
    "delete": "Delete",
    "del": "Delete",
    "up": "ArrowUp",
    "down": "ArrowDown",
    "left": "ArrowLeft",
    "right": "ArrowRight",
    "arrowup": "ArrowUp",
    "arrowdown": "ArrowDown",
    "arrowleft": "ArrowLeft",
    "arrowright": "ArrowRight",
    "pageup": "PageUp",
    "pagedown": "PageDown",
    "page_up": "PageUp",
    "page_down": "PageDown",
    "home": "Home",
    "end": "End",
}
# Does a left click at (x, y), or Enter on the focused element, start a navigation? Asked before
# the input, so the action waits for exactly the loads it starts (never a guessed delay).
NAV_JS = """([x, y]) => {
  const el = x === null ? document.activeElement : document.elementFromPoint(x, y);
  if (!el) return false;
  if (el.closest('a[href]')) return true;
  const b = el.closest('button');
  return !!(b && b.form && (b.type || 'submit') === 'submit');
}"""
BROWSER_KEYS = {
    "F5": "reload",
    "Control+r": "reload",
    "Control+R": "reload",
    "Meta+r": "reload",
    "Alt+ArrowLeft": "back",
    "Meta+[": "back",
    "Alt+ArrowRight": "forward",
    "Meta+]": "forward",
}
MARKS_JS = """() => {
  const out = [];
  for (const el of document.querySelectorAll('a[href], button, summary, textarea, input')) {
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1 || r.bottom < 0 || r.right < 0 || r.top > innerHeight || r.left > innerWidth) continue;
    const role = el.tagName === 'A' ? 'link' : (el.tagName === 'TEXTAREA' || el.tagName === 'INPUT') ? 'textbox' : 'button';
    const label = (el.getAttribute('aria-label') || el.innerText || '').trim().replace(/\\s+/g, ' ').slice(0, 120);
    out.push({role, label, x: Math.round(r.left + r.width / 2), y: Math.round(r.top + r.height / 2),
              box: [Math.round(r.left), Math.round(r.top), Math.round(r.width), Math.round(r.height)]});
  }
  return out;
}"""


class ScreenUnavailable(RuntimeError):
    """No Chromium could be started (the message says what to install)."""


def chromium_path() -> str | None:
    """$COMPOWORLD_CHROMIUM, else a `chromium` on PATH, else None."""
    found = (
        os.environ.get("COMPOWORLD_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    )
    return found if found and os.path.exists(found) else None


# ---- the pool -------------------------------------------------------------------------------
class BrowserPool:
    """One Chromium process, started on first use, with one context per session (`Screen`).

    Its Playwright runs on its own thread's event loop; callers block on futures. Screenshots are
    cached here under their content key (bounded LRU), so sessions share them."""

    def __init__(self, executable: str | None = None, cache_entries: int = 256) -> None:
        self.executable = executable
        self.cache: OrderedDict[str, bytes] = OrderedDict()
        self.cache_entries = cache_entries
        self.renders = 0
        self.contexts = 0
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._browser: Any = None
        self._pw: Any = None

    def _start(self) -> None:
        exe = self.executable or chromium_path()
        if exe is None:
            raise ScreenUnavailable(
                "the computer interface needs Chromium: install it (apt-get install chromium) "
                "or set COMPOWORLD_CHROMIUM to its path"
            )
        try:
            from playwright.async_api import async_playwright
        except ImportError:  # pragma: no cover - playwright is a declared dependency
            raise ScreenUnavailable(
                "the computer interface needs playwright (pip install playwright)"
            ) from None
        loop = asyncio.new_event_loop()
        ready: Future = Future()

        async def boot() -> None:
            self._pw = await async_playwright().start()
            # Playwright gives every launch a fresh temporary profile (user-data-dir), removed at close
            self._browser = await self._pw.chromium.launch(
                executable_path=exe, headless=True, args=LAUNCH_ARGS
            )

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(boot())
            except BaseException as e:  # noqa: BLE001 - reported to the starting caller
                ready.set_exception(ScreenUnavailable(f"Chromium at {exe} did not start: {e}"))
                return
            ready.set_result(None)
            loop.run_forever()

        threading.Thread(target=run, name="compoworld-browser", daemon=True).start()
        ready.result(timeout=60)
        self._loop = loop

    def submit(self, coro: Any) -> Future:
        with self._lock:
            if self._loop is None:
                try:
                    self._start()
                except BaseException:
                    coro.close()
                    raise
        return asyncio.run_coroutine_threadsafe(coro, self._loop)  # type: ignore[arg-type]

    def cached(self, key: str) -> bytes | None:
        with self._lock:
            png = self.cache.get(key)
            if png is not None:
                self.cache.move_to_end(key)
            return png

    def remember(self, key: str, png: bytes, rendered: bool = False) -> None:
        with self._lock:
            self.renders += rendered
            self.cache[key] = png
            while len(self.cache) > self.cache_entries:
                self.cache.popitem(last=False)

    def close(self) -> None:
        if self._loop is None:
            return

        async def stop() -> None:
            await self._browser.close()
            await self._pw.stop()

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._loop = None


_DEFAULT: list[BrowserPool] = []


def default_pool() -> BrowserPool:
    """This process's pool (one Chromium, like the limits watchdog: infrastructure, not state)."""
    if not _DEFAULT:
        _DEFAULT.append(BrowserPool())
    return _DEFAULT[0]


# ---- one session's screen -------------------------------------------------------------------
_DONE = object()


class Screen:
    """A browser context on `pool` showing `app` (a `WebApp`) at 1280x800."""

    def __init__(self, app: Any, pool: BrowserPool | None = None) -> None:
        self.app = app
        self.pool = pool or default_pool()
        self.inbox: queue.Queue = queue.Queue()
        self.ctx: Any = None
        self.page: Any = None
        self.refused: list[str] = []
        self.mouse = (0, 0)
        self.chain = ""  # what the page shows: its document, then each input since it loaded
        self.url = "/"
        self.loads = 0
        self._nav_pending = 0
        self._closed = False
        self._opening = False

    # the calling thread serves the app while the pool thread drives Chromium
    def run(self, coro: Any) -> Any:
        fut = self.pool.submit(coro)
        fut.add_done_callback(lambda _f: self.inbox.put(_DONE))
        while True:
            try:
                item = self.inbox.get(timeout=ACTION_TIMEOUT_S)
            except queue.Empty:
                fut.cancel()
                raise RuleViolation(
                    f"the screen did not answer within {ACTION_TIMEOUT_S:.0f} s", type="screen_timeout"
                ) from None
            if item is _DONE:
                if fut.done():
                    return fut.result()
                continue
            method, url, body, reply = item
            try:
                reply(self._serve(method, url, body))
            except BaseException as e:
                reply((500, {"content-type": "text/plain"}, f"server error: {type(e).__name__}".encode()))
                if not isinstance(e, Exception):
                    raise

    def _serve(self, method: str, url: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
        status, headers, data = self.app.handle(method, url, body)
        if status == 303:  # Chromium does not route a fulfilled redirect's target: render it here
            url = headers["location"]
            status, headers, data = self.app.handle("GET", url)
        if status != 303 and headers.get("content-type", "").startswith("text/html"):
            # what this document shows follows from the state it was rendered from
            digest = hashlib.sha256(data).hexdigest()
            self.chain = _h(f"doc|{digest}|{self.mouse}")
            self.url = url
        return status, headers, data

    async def _open_context(self) -> None:
        browser = self.pool._browser
        self.ctx = await browser.new_context(
            viewport={"width": WIDTH, "height": HEIGHT},
            device_scale_factor=1,
            accept_downloads=False,
            service_workers="block",
            locale="en-US",
            timezone_id="UTC",
            color_scheme="light",
            reduced_motion="reduce",
        )
        self.pool.contexts += 1
        self.ctx.set_default_timeout(ACTION_TIMEOUT_S * 1000)
        await self.ctx.route("**/*", self._route)
        self.ctx.on("page", self._popup)

    async def _popup(self, page: Any) -> None:
        if not self._opening and page is not self.page:  # pop-ups and new tabs: this screen has one page
            self.refused.append("popup")
            await page.close()

    async def _route(self, route: Any) -> None:
        req = route.request
        u = urlsplit(req.url)
        if f"{u.scheme}://{u.netloc}" != ORIGIN:
            self.refused.append(req.url[:200])
            await route.abort("blockedbyclient")
            return
        path = (u.path or "/") + (f"?{u.query}" if u.query else "")
        if req.method == "GET" and path.startswith("/_assets/"):  # static: no state, answered here
            status, headers, body = self.app.handle("GET", path)
            await route.fulfill(status=status, headers=headers, body=body)
            return
        loop = asyncio.get_running_loop()
        answer: asyncio.Future = loop.create_future()
        nav = req.is_navigation_request()
        if nav:
            self._nav_pending += 1
        self.inbox.put(
            (
                req.method,
                path,
                req.post_data_buffer or b"",
                lambda r: loop.call_soon_threadsafe(answer.set_result, r),
            )
        )
        try:
            status, headers, body = await answer
            await route.fulfill(status=status, headers=headers, body=body)
        finally:
            if nav:
                self._nav_pending -= 1

    async def _ensure(self, url: str | None) -> None:
        """A fresh page at `url` (after a reset), or the current one."""
        if self.ctx is None:
            await self._open_context()
        if url is not None:
            if self.page is not None:
                await self.page.close()
            self._opening = True
            try:
                self.page = await self.ctx.new_page()
            finally:
                self._opening = False
            self.page.on("download", lambda d: asyncio.ensure_future(d.cancel()))
            await self.page.goto(ORIGIN + url, wait_until="load")
            self.mouse = (0, 0)

    async def _settle(self) -> None:
        """Wait until the navigation the last input started (if any) has loaded."""
        await asyncio.sleep(SETTLE_S)
        for _ in range(int(ACTION_TIMEOUT_S / 0.01)):
            if not self._nav_pending:
                break
            await asyncio.sleep(0.01)
        await self.page.wait_for_load_state("load")
        u = urlsplit(self.page.url)
        if f"{u.scheme}://{u.netloc}" != ORIGIN:  # never leave the app: go back to it
            self.refused.append(self.page.url[:200])
            for attempt in range(5):  # a refused navigation lands on an error page a moment later
                try:
                    await self.page.goto(ORIGIN + self.url, wait_until="load")
                    break
                except Exception:
                    if attempt == 4:
                        raise
                    await asyncio.sleep(0.05)
        elif (u.path or "/") + (f"?{u.query}" if u.query else "") != self.url:
            # a form's answer was the page it leads to: show that page's address (a reload GETs it)
            await self.page.evaluate("u => history.replaceState(null, '', u)", self.url)

    async def _act(
        self, reopen: str | None, action: str, args: dict[str, Any], marks: bool
    ) -> dict[str, Any]:
        await self._ensure(reopen)
        p = self.page
        m = p.mouse
        # the pointer's place is set first: a page this input loads is drawn with it (hover)
        if "x" in args:
            self.mouse = (args["x"], args["y"])
        elif action == "drag":
            self.mouse = tuple(args["path"][-1])  # type: ignore[assignment]
        if action in ("click", "double_click") and args.get("button", "left") == "left":
            if await p.evaluate(NAV_JS, [args["x"], args["y"]]):
                async with p.expect_navigation(wait_until="load"):
                    await m.click(args["x"], args["y"], click_count=1 if action == "click" else 2)
            elif action == "click":
                await m.click(args["x"], args["y"])
            else:
                await m.dblclick(args["x"], args["y"])
        elif action == "click":
            await m.click(args["x"], args["y"], button=args["button"])
        elif action == "move":
            await m.move(args["x"], args["y"])
        elif action == "drag":
            pts = args["path"]
            await m.move(*pts[0])
            await m.down()
            for pt in pts[1:]:
                await m.move(*pt, steps=2)
            await m.up()
        elif action == "scroll":
            await m.move(args["x"], args["y"])
            await m.wheel(args["dx"], args["dy"])
        elif action == "type":
            await p.keyboard.type(args["text"])
        elif action == "key":
            for combo in args["combos"]:
                nav = BROWSER_KEYS.get(combo)  # headless Chromium has no browser shortcuts: do them
                if nav == "reload":
                    await p.reload(wait_until="load")
                elif nav == "back":
                    await p.go_back(wait_until="load")
                elif nav == "forward":
                    await p.go_forward(wait_until="load")
                elif combo in ("Enter", " ") and await p.evaluate(NAV_JS, [None, None]):
                    async with p.expect_navigation(wait_until="load"):
                        await p.keyboard.press(combo)
                else:
                    await p.keyboard.press(combo)
        elif action == "wait":
            await asyncio.sleep(args["ms"] / 1000)
        if action not in ("screenshot", "wait"):
            before = self.chain
            await self._settle()
            if self.chain == before:  # the input changed this document (focus, hover, text, scroll)
                self.chain = _h(f"{before}|{action}|{sorted(args.items())}")
            else:
                self.loads += 1
        key = _h(f"{self.chain}|{WIDTH}x{HEIGHT}")
        png = self.pool.cached(key)
        if png is None:
            png = await p.screenshot(type="png", animations="disabled", caret="hide", scale="css")
            self.pool.remember(key, png, rendered=True)
        out: dict[str, Any] = {"url": self.url, "png": png, "key": key}
        if marks:
            out["marks"] = [{"mark": i + 1, **mk} for i, mk in enumerate(await p.evaluate(MARKS_JS))]
        return out

    def act(
        self, action: str, args: dict[str, Any], reopen: str | None, marks: bool = False
    ) -> dict[str, Any]:
        if self._closed:
            raise RuleViolation("this screen is closed", type="screen_closed")
        return self.run(self._act(reopen, action, args, marks))

    def close(self) -> None:
        if self._closed or self.ctx is None or self.pool._loop is None:  # never start Chromium to close
            self._closed = True
            return
        self._closed = True
        try:
            self.pool.submit(self.ctx.close()).result(timeout=10)
            self.pool.contexts -= 1
        except Exception:  # noqa: BLE001 - the pool may already be gone at exit
            pass


def _h(s: str) -> str:
    return hashlib.sha256(s.encode()).hexdigest()[:32]


def combos(combo: str) -> list[str]:
    """'ctrl+a', 'Return', 'ctrl+shift+t', 'alt+Left' (xdotool style, space-separated for several)
    -> Playwright key names."""
    out = []
    for one in combo.split():
        parts = [p for p in one.replace("-", "+").split("+") if p] if len(one) > 1 else [one]
        if not parts:
            raise InvalidArguments(f"key combo {combo!r} names no key")
        named = [KEYS.get(p.lower(), p if len(p) == 1 else p[:1].upper() + p[1:]) for p in parts]
        out.append("+".join(named))
    if not out:
        raise InvalidArguments("key combo is empty: name a key such as 'Enter' or 'ctrl+a'")
    return out


# ---- the service ----------------------------------------------------------------------------
class ScreenState(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    url: str = "/"


class Visit(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str  # a page path the screen has shown
    via: str = "screen"


class ComputerService(Service):
    """The workplace web app on a screen: pointer and keyboard actions, each answered with a screenshot."""

    name = "computer"
    domain = "web"
    acts_on_others = True  # its forms act through the other services' tools, as the browser's do
    ephemeral_tables = frozenset({"screen"})

    screen_state = Resource("screen", ScreenState, label="screen")
    visits = Resource("visits", Visit, label="visited page")

    pool: BrowserPool | None = None  # None: the process's pool

    def bind(self, env: Any) -> None:
        self.env = env
        self._screen: Screen | None = None
        self._reopen: str | None = "/"

    def seed_data(self, ctx: SeedContext) -> None:
        self.screen_state.create({"url": "/"}, id="main")

    def restore(self, snap: dict[str, Any]) -> None:
        super().restore(snap)
        row = self.table("screen").get("main") or {}
        self._reopen = row.get("url", "/")  # the next action reopens the restored page

    def screen(self) -> Screen:
        if self._screen is None:
            from compoworld.interfaces.webapp import WebApp

            if "browser" not in self.env.services:
                raise RuleViolation(
                    "the computer interface shows the web app: add the 'browser' service", type="no_web_app"
                )
            self._screen = Screen(WebApp(self.env), self.pool)
            weakref.finalize(self, self._screen.close)
        return self._screen

    def _do(self, action: str, args: dict[str, Any], marks: bool = False) -> dict[str, Any]:
        scr = self.screen()
        reopen, self._reopen = self._reopen, None
        try:
            r = scr.act(action, args, reopen, marks)
        except ScreenUnavailable as e:
            self._reopen = reopen
            raise RuleViolation(str(e), type="no_screen") from None
        except RuleViolation:
            self._reopen = reopen
            raise
        except Exception as e:  # a Playwright error: the action did not complete
            self._reopen = scr.url
            raise RuleViolation(
                f"{action} failed on the screen: {str(e).splitlines()[0][:200]}", type="screen_error"
            ) from None
        path = r["url"].split("?", 1)[0]
        if action == "screenshot":  # looks only: what it shows was recorded when it was loaded
            pass
        elif (self.table("screen").get("main") or {}).get("url") != r["url"]:
            self.screen_state.update("main", {"url": r["url"]})
        if action != "screenshot" and self.visits.get(path) is None:
            self.visits.create({"via": "screen"}, id=path)
        out = {
            "type": "screenshot",
            "media_type": "image/png",
            "data": base64.b64encode(r["png"]).decode(),
            "width": WIDTH,
            "height": HEIGHT,
            "url": r["url"],
        }
        if marks:
            out["marks"] = r["marks"]
        return out

    @staticmethod
    def _xy(x: int, y: int) -> dict[str, int]:
        if not (0 <= x < WIDTH and 0 <= y < HEIGHT):
            raise InvalidArguments(f"point ({x}, {y}) is off the {WIDTH}x{HEIGHT} screen")
        return {"x": x, "y": y}

    @tool
    def screenshot(self, marks: bool = False) -> dict:
        """Take a screenshot of the screen (PNG, base64, 1280x800).

        Args:
            marks: Also list every link, button and text box on screen with its centre and box (set-of-marks).
        """
        return self._do("screenshot", {}, marks)

    @tool(mutates=True)
    def click(self, x: int, y: int, button: str = "left", marks: bool = False) -> dict:
        """Click at a point of the screen; returns a screenshot.

        Args:
            x: Pixels from the left edge (0-1279).
            y: Pixels from the top edge (0-799).
            button: "left", "right" or "middle".
            marks: Also return the set-of-marks observation.
        """
        if button not in ("left", "right", "middle"):
            raise InvalidArguments(f"button must be 'left', 'right' or 'middle', got {button!r}")
        return self._do("click", {**self._xy(x, y), "button": button}, marks)

    @tool(mutates=True)
    def double_click(self, x: int, y: int, marks: bool = False) -> dict:
        """Double-click at a point of the screen; returns a screenshot.

        Args:
            x: Pixels from the left edge (0-1279).
            y: Pixels from the top edge (0-799).
            marks: Also return the set-of-marks observation.
        """
        return self._do("double_click", self._xy(x, y), marks)

    @tool(mutates=True)
    def move(self, x: int, y: int, marks: bool = False) -> dict:
        """Move the pointer to a point (hover); returns a screenshot.

        Args:
            x: Pixels from the left edge (0-1279).
            y: Pixels from the top edge (0-799).
            marks: Also return the set-of-marks observation.
        """
        return self._do("move", self._xy(x, y), marks)

    @tool(mutates=True)
    def drag(self, path: list[list[int]], marks: bool = False) -> dict:
        """Press the left button at the first point, move through the others, release at the last.

        Args:
            path: Two or more [x, y] points.
            marks: Also return the set-of-marks observation.
        """
        if len(path) < 2 or len(path) > MAX_PATH:
            raise InvalidArguments(f"path must have 2 to {MAX_PATH} [x, y] points, got {len(path)}")
        pts = []
        for pt in path:
            if len(pt) != 2:
                raise InvalidArguments(f"each point of path is [x, y], got {pt!r}")
            pts.append(tuple(self._xy(pt[0], pt[1]).values()))
        return self._do("drag", {"path": pts}, marks)

    @tool(mutates=True)
    def scroll(self, x: int, y: int, dx: int = 0, dy: int = 0, marks: bool = False) -> dict:
        """Scroll with the wheel at a point; returns a screenshot.

        Args:
            x: Pixels from the left edge (0-1279).
            y: Pixels from the top edge (0-799).
            dx: Pixels to scroll right (negative: left).
            dy: Pixels to scroll down (negative: up).
            marks: Also return the set-of-marks observation.
        """
        if abs(dx) > 10 * HEIGHT or abs(dy) > 10 * HEIGHT:
            raise InvalidArguments(f"scroll by at most {10 * HEIGHT} pixels at a time")
        return self._do("scroll", {**self._xy(x, y), "dx": dx, "dy": dy}, marks)

    @tool(mutates=True)
    def type(self, text: str, marks: bool = False) -> dict:
        """Type text with the keyboard (into whatever has focus); returns a screenshot.

        Args:
            text: The characters to type.
            marks: Also return the set-of-marks observation.
        """
        if not text or len(text) > MAX_TYPE:
            raise InvalidArguments(f"text must be 1 to {MAX_TYPE} characters, got {len(text)}")
        return self._do("type", {"text": text}, marks)

    @tool(mutates=True)
    def key(self, combo: str, marks: bool = False) -> dict:
        """Press a key or a combination, e.g. "Enter", "ctrl+a", "shift+Tab"; returns a screenshot.

        Args:
            combo: Key names joined by '+'; several combos separated by spaces are pressed in turn.
            marks: Also return the set-of-marks observation.
        """
        if len(combo) > 200:
            raise InvalidArguments("combo is too long (200 characters at most)")
        return self._do("key", {"combos": combos(combo)}, marks)

    @tool(mutates=True)
    def wait(self, ms: int = 500, marks: bool = False) -> dict:
        """Wait, then take a screenshot.

        Args:
            ms: Milliseconds to wait (0-5000).
            marks: Also return the set-of-marks observation.
        """
        if not 0 <= ms <= MAX_WAIT_MS:
            raise InvalidArguments(f"ms must be 0 to {MAX_WAIT_MS}, got {ms}")
        return self._do("wait", {"ms": ms}, marks)


# ---- the harnesses' action schemas, one to one onto the tools -------------------------------
SCROLL_CLICK = 100  # pixels per wheel click (Anthropic's scroll_amount, UI-TARS' scroll)


def harness_tool(harness: str) -> dict[str, Any]:
    """The tool declaration a harness sends its model for this screen."""
    if harness == "openai":
        return {
            "type": "computer_use_preview",
            "display_width": WIDTH,
            "display_height": HEIGHT,
            "environment": "browser",
        }
    if harness == "anthropic":
        return {
            "type": "computer_20250124",
            "name": "computer",
            "display_width_px": WIDTH,
            "display_height_px": HEIGHT,
        }
    if harness == "uitars":
        return {"type": "uitars", "display_width": WIDTH, "display_height": HEIGHT}
    raise ValueError(f"unknown harness {harness!r}: expected openai, anthropic or uitars")


def _int(v: Any, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise ValueError(f"{what} must be a number, got {v!r}")
    return int(round(v))


def from_openai(action: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """An OpenAI computer-use `computer_call.action` -> (tool, arguments)."""
    kind = action.get("type")
    if kind == "screenshot":
        return "computer__screenshot", {}
    if kind in ("click", "double_click", "move"):
        args = {"x": _int(action.get("x"), "x"), "y": _int(action.get("y"), "y")}
        if kind == "click":
            button = action.get("button", "left")
            if button in ("back", "forward", "wheel"):
                raise ValueError(f"button {button!r} is not on this screen: use left, right or middle")
            args["button"] = button
        return f"computer__{kind}", args
    if kind == "drag":
        return "computer__drag", {
            "path": [[_int(p.get("x"), "x"), _int(p.get("y"), "y")] for p in action.get("path", [])]
        }
    if kind == "scroll":
        return "computer__scroll", {
            "x": _int(action.get("x"), "x"),
            "y": _int(action.get("y"), "y"),
            "dx": _int(action.get("scroll_x", 0), "scroll_x"),
            "dy": _int(action.get("scroll_y", 0), "scroll_y"),
        }
    if kind == "type":
        return "computer__type", {"text": action.get("text", "")}
    if kind == "keypress":
        keys = action.get("keys") or []
        return "computer__key", {"combo": "+".join(str(k) for k in keys)}
    if kind == "wait":
        return "computer__wait", {"ms": _int(action.get("ms", 1000), "ms")}
    raise ValueError(f"unknown OpenAI computer action type {kind!r}")


def from_anthropic(action: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """An Anthropic computer-tool input (`{"action": "left_click", "coordinate": [x, y]}`) -> (tool, arguments)."""
    kind = action.get("action")

    def xy(field: str = "coordinate") -> dict[str, int]:
        c = action.get(field)
        if not isinstance(c, list | tuple) or len(c) != 2:
            raise ValueError(f"{kind} needs {field}: [x, y]")
        return {"x": _int(c[0], f"{field}[0]"), "y": _int(c[1], f"{field}[1]")}

    if kind == "screenshot":
        return "computer__screenshot", {}
    if kind in ("left_click", "right_click", "middle_click"):
        return "computer__click", {**xy(), "button": kind.split("_")[0]}
    if kind == "double_click":
        return "computer__double_click", xy()
    if kind == "mouse_move":
        return "computer__move", xy()
    if kind == "left_click_drag":
        a, b = xy("start_coordinate"), xy()
        return "computer__drag", {"path": [[a["x"], a["y"]], [b["x"], b["y"]]]}
    if kind == "scroll":
        n = _int(action.get("scroll_amount", 3), "scroll_amount") * SCROLL_CLICK
        d = action.get("scroll_direction", "down")
        dx, dy = {"up": (0, -n), "down": (0, n), "left": (-n, 0), "right": (n, 0)}.get(d, (None, None))
        if dx is None:
            raise ValueError(f"scroll_direction must be up, down, left or right, got {d!r}")
        return "computer__scroll", {**xy(), "dx": dx, "dy": dy}
    if kind == "type":
        return "computer__type", {"text": action.get("text", "")}
    if kind == "key":
        return "computer__key", {"combo": action.get("text", "")}
    if kind == "wait":
        return "computer__wait", {"ms": _int(float(action.get("duration", 1)) * 1000, "duration")}
    raise ValueError(f"unknown Anthropic computer action {kind!r}")


_UITARS = re.compile(r"^\s*(\w+)\((.*)\)\s*$", re.S)
_UARG = re.compile(r"(\w+)\s*=\s*'((?:[^'\\]|\\.)*)'")
_POINT = re.compile(r"-?\d+(?:\.\d+)?")


def from_uitars(action: str, scale: float = 1.0) -> tuple[str, dict[str, Any]]:
    """A UI-TARS action string (`click(start_box='(640,400)')`) -> (tool, arguments). `scale`
    multiplies coordinates (UI-TARS models that answer in 0-1000 use WIDTH/1000 and HEIGHT/1000 by
    passing scale=None)."""
    m = _UITARS.match(action)
    if not m:
        raise ValueError(f"not a UI-TARS action: {action[:80]!r}")
    kind, rest = m.group(1), m.group(2)
    args = {k: v.encode().decode("unicode_escape") for k, v in _UARG.findall(rest)}

    def pt(field: str) -> dict[str, int]:
        nums = [float(n) for n in _POINT.findall(args.get(field, ""))]
        if len(nums) not in (2, 4):
            raise ValueError(f"{kind} needs {field}='(x,y)'")
        x, y = (nums[0], nums[1]) if len(nums) == 2 else ((nums[0] + nums[2]) / 2, (nums[1] + nums[3]) / 2)
        if scale is None:
            return {"x": int(x * WIDTH / 1000), "y": int(y * HEIGHT / 1000)}
        return {"x": int(round(x * scale)), "y": int(round(y * scale))}

    if kind in ("click", "left_single"):
        return "computer__click", {**pt("start_box"), "button": "left"}
    if kind == "right_single":
        return "computer__click", {**pt("start_box"), "button": "right"}
    if kind == "left_double":
        return "computer__double_click", pt("start_box")
    if kind == "hover":
        return "computer__move", pt("start_box")
    if kind in ("drag", "select"):
        a, b = pt("start_box"), pt("end_box")
        return "computer__drag", {"path": [[a["x"], a["y"]], [b["x"], b["y"]]]}
    if kind == "scroll":
        p = pt("start_box") if "start_box" in args else {"x": WIDTH // 2, "y": HEIGHT // 2}
        n = 5 * SCROLL_CLICK
        dx, dy = {"up": (0, -n), "down": (0, n), "left": (-n, 0), "right": (n, 0)}[
            args.get("direction", "down")
        ]
        return "computer__scroll", {**p, "dx": dx, "dy": dy}
    if kind == "type":
        return "computer__type", {"text": args.get("content", "")}
    if kind == "hotkey":
        return "computer__key", {"combo": "+".join(args.get("key", "").split())}
    if kind == "wait":
        return "computer__wait", {"ms": 5000}
    if kind == "screenshot":
        return "computer__screenshot", {}
    raise ValueError(f"unknown UI-TARS action {kind!r} (finished() and call_user() end the episode)")


def to_mcp_content(envelope: dict[str, Any]) -> list[dict[str, Any]]:
    """An action's envelope as MCP content blocks: the screenshot as an image, the rest as text."""
    if not envelope.get("success"):
        return [{"type": "text", "text": json.dumps(envelope)}]
    data = envelope["data"]
    meta = {k: v for k, v in data.items() if k not in ("data", "type", "media_type")}
    return [
        {"type": "image", "data": data["data"], "mimeType": data["media_type"]},
        {"type": "text", "text": json.dumps(meta)},
    ]


def screenshots_beside(record: dict[str, Any], run_dir: Any) -> dict[str, Any]:
    """An episode record whose steps' screenshots are written beside it, once per content
    (`<run>/screenshots/<sha256>.png`), each step keeping the file's relative path in `file`. The
    conversation (its last screenshots as image parts) stays as the model saw it."""
    from pathlib import Path

    steps = record.get("steps") or []
    if not any(_shot_of(s) for s in steps):
        return record
    folder = Path(run_dir) / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for s in steps:
        data = _shot_of(s)
        if data is None:
            out.append(s)
            continue
        png = base64.b64decode(data["data"])
        name = hashlib.sha256(png).hexdigest() + ".png"
        path = folder / name
        if not path.exists():
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(png)
            tmp.replace(path)  # whole or absent: a killed run never leaves half a PNG under its name
        kept = {k: v for k, v in data.items() if k != "data"}
        out.append({**s, "envelope": {**s["envelope"], "data": {**kept, "file": f"screenshots/{name}"}}})
    return {**record, "steps": out}


def _shot_of(step: dict[str, Any]) -> dict[str, Any] | None:
    env = step.get("envelope") or {}
    data = env.get("data") if env.get("success") else None
    ok = isinstance(data, dict) and data.get("type") == "screenshot" and isinstance(data.get("data"), str)
    return data if ok else None
