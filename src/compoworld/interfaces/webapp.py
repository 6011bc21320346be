"""The web pages as a real HTTP app (for vision agents and Playwright), over one environment.

GET renders a page as HTML (elements carry `data-eid`); POST submits the page's form: typed
textboxes first, then the clicked button, through the `browser` service, so the real browser and
the text browser share one code path and act through the same tools.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from compoworld.interfaces.web import render

MAX_FORM = 64 * 1024


def web_app(
    env: Any, prefix: str = "", call: Callable[[str, Any], dict[str, Any]] | None = None
) -> Starlette:
    """`prefix` is where the app is mounted (links and redirects are made absolute under it).
    `call` runs the pages' actions (default `env.call`; a server passes its session's, so that a
    form post is charged and logged like any other call). Pages render and act in a worker
    thread, off the event loop."""
    if "browser" not in env.services:
        raise ValueError("the web app needs the 'browser' service in the environment")
    browser = env.services["browser"]
    act = call or env.call

    def facts() -> dict[str, str]:
        return {k: v["text"] for k, v in browser.table("facts").items()}

    def get(url: str) -> Response:
        p = render(env, url, facts())
        if p is None:
            return HTMLResponse(f"<h1>Not found</h1><p>no page at {html.escape(url)}</p>", status_code=404)
        act("browser__open", {"url": url})
        return HTMLResponse(_prefixed(p.html(), prefix))

    def post(url: str, raw: bytes) -> Response:
        form = {k: v[-1] for k, v in parse_qs(raw.decode(errors="replace")).items()}
        opened = act("browser__open", {"url": url})
        if not opened["success"]:
            return HTMLResponse(f"<h1>Not found</h1><p>no page at {html.escape(url)}</p>", status_code=404)
        for k, v in form.items():
            if k != "click" and v:
                act("browser__type", {"element_id": k, "text": v})
        r = act("browser__click", {"element_id": form.get("click", "")})
        if not r["success"]:
            p = render(env, url, facts())
            msg = html.escape(r["error"]["message"])  # it can quote what the form sent
            body = _prefixed(p.html() if p else "", prefix).replace(
                "<form", f"<p role='alert'>{msg}</p><form", 1
            )
            return HTMLResponse(body, status_code=400 if r["error"]["code"] < 500 else 500)
        return RedirectResponse(prefix + r["data"]["url"], status_code=303)

    async def page(request: Request) -> Response:
        url = "/" + request.path_params.get("path", "")
        if request.method == "GET":
            return await anyio.to_thread.run_sync(get, url)
        raw = await request.body()
        if len(raw) > MAX_FORM:
            return HTMLResponse("<h1>Form too large</h1>", status_code=413)
        return await anyio.to_thread.run_sync(post, url, raw)

    return Starlette(
        routes=[
            Route("/", page, methods=["GET", "POST"]),
            Route("/{path:path}", page, methods=["GET", "POST"]),
        ]
    )


def _prefixed(page_html: str, prefix: str) -> str:
    return page_html.replace("href='/", f"href='{prefix}/") if prefix else page_html
