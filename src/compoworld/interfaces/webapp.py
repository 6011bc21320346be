"""The web pages as a real HTTP app (for vision agents and Playwright), over one environment.

GET renders a page as HTML (elements carry `data-eid`); POST submits the page's form: typed
textboxes first, then the clicked button, through the `browser` service, so the real browser and
the text browser share one code path and act through the same tools. `WebApp.handle` is the app
without a server: the `computer` interface serves its Chromium from it in-process (no socket).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from importlib import resources
from typing import Any
from urllib.parse import parse_qs

import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from compoworld.interfaces.web import render

MAX_FORM = 64 * 1024
ASSETS = {"DejaVuSans.ttf": "font/ttf", "DejaVuSans-Bold.ttf": "font/ttf"}  # bundled: no network fonts


def asset(name: str) -> bytes | None:
    """A bundled static file (fonts), or None."""
    if name not in ASSETS:
        return None
    return resources.files("compoworld.interfaces").joinpath("assets", name).read_bytes()


class WebApp:
    """The pages of one environment: `handle(method, path, body)` -> (status, headers, body)."""

    def __init__(
        self, env: Any, prefix: str = "", call: Callable[[str, Any], dict[str, Any]] | None = None
    ) -> None:
        if "browser" not in env.services:
            raise ValueError("the web app needs the 'browser' service in the environment")
        self.env = env
        self.prefix = prefix
        self.browser = env.services["browser"]
        self.act = call or env.call

    def facts(self) -> dict[str, str]:
        return {k: v["text"] for k, v in self.browser.table("facts").items()}

    def _html(self, body: str, status: int = 200) -> tuple[int, dict[str, str], bytes]:
        return status, {"content-type": "text/html; charset=utf-8"}, body.encode()

    def _missing(self, url: str) -> tuple[int, dict[str, str], bytes]:
        return self._html(f"<h1>Not found</h1><p>no page at {html.escape(url)}</p>", 404)

    def get(self, url: str) -> tuple[int, dict[str, str], bytes]:
        url, _, query = url.partition("?")
        if url.startswith("/_assets/"):
            data = asset(url.split("/", 2)[2])
            if data is None:
                return self._missing(url)
            name = url.split("/", 2)[2]
            return 200, {"content-type": ASSETS[name], "cache-control": "max-age=86400"}, data
        p = render(self.env, url, self.facts())
        if p is None:
            return self._missing(url)
        self.act("browser__open", {"url": url})
        n = parse_qs(query).get("p", ["1"])[-1]
        return self._html(_prefixed(p.html(page_no=int(n) if n.isdigit() else 1), self.prefix))

    def post(self, url: str, raw: bytes) -> tuple[int, dict[str, str], bytes]:
        if len(raw) > MAX_FORM:
            return self._html("<h1>Form too large</h1>", 413)
        form = {k: v[-1] for k, v in parse_qs(raw.decode(errors="replace")).items()}
        opened = self.act("browser__open", {"url": url})
        if not opened["success"]:
            return self._missing(url)
        for k, v in form.items():
            if k != "click" and v:
                self.act("browser__type", {"element_id": k, "text": v})
        r = self.act("browser__click", {"element_id": form.get("click", "")})
        if not r["success"]:
            p = render(self.env, url, self.facts())
            msg = html.escape(r["error"]["message"])  # it can quote what the form sent
            body = _prefixed(p.html() if p else "", self.prefix).replace(
                "<form", f"<p role='alert' class='alert'>{msg}</p><form", 1
            )
            return self._html(body, 400 if r["error"]["code"] < 500 else 500)
        return 303, {"location": self.prefix + r["data"]["url"]}, b""

    def handle(self, method: str, url: str, body: bytes = b"") -> tuple[int, dict[str, str], bytes]:
        path = "/" + url.lstrip("/")
        if method == "GET":
            return self.get(path)
        if method == "POST":
            return self.post(path.split("?", 1)[0], body)
        return self._html("<h1>Method not allowed</h1>", 405)


def web_app(
    env: Any, prefix: str = "", call: Callable[[str, Any], dict[str, Any]] | None = None
) -> Starlette:
    """`prefix` is where the app is mounted (links and redirects are made absolute under it).
    `call` runs the pages' actions (default `env.call`; a server passes its session's, so that a
    form post is charged and logged like any other call). Pages render and act in a worker
    thread, off the event loop."""
    app = WebApp(env, prefix, call)

    def respond(status: int, headers: dict[str, str], body: bytes) -> Response:
        if status == 303:
            return RedirectResponse(headers["location"], status_code=303)
        if headers.get("content-type", "").startswith("text/html"):
            return HTMLResponse(body.decode(), status_code=status)
        return Response(body, status_code=status, headers=headers)

    async def page(request: Request) -> Response:
        url = "/" + request.path_params.get("path", "")
        if request.method == "GET":
            query = f"?{request.url.query}" if request.url.query else ""
            return respond(*await anyio.to_thread.run_sync(app.get, url + query))
        raw = await request.body()
        if len(raw) > MAX_FORM:
            return HTMLResponse("<h1>Form too large</h1>", status_code=413)
        return respond(*await anyio.to_thread.run_sync(app.post, url, raw))

    return Starlette(
        routes=[
            Route("/", page, methods=["GET", "POST"]),
            Route("/{path:path}", page, methods=["GET", "POST"]),
        ]
    )


def _prefixed(page_html: str, prefix: str) -> str:
    if not prefix:
        return page_html
    return page_html.replace("href='/", f"href='{prefix}/").replace("url('/_assets", f"url('{prefix}/_assets")
