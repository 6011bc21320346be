"""Serving for trainers on a cluster: N `serve http` processes behind one session-affine router.

Why this and not Ray actors behind the control API: a session is an independent, stateful unit
that lives in one process, the control API and MCP already speak HTTP, and trainers' rollout
workers (verl, OpenRLHF, SkyRL) reach environments over the network anyway. A router that places
each new session on the least-loaded backend and then pins every request of that session to it
needs no shared state, scales by starting more `serve http` processes on any machine (a Ray
cluster's nodes included), and keeps the engine and the server exactly as they are. Ray actors
would add a second control path and serialisation on every tool call for no isolation gained.

The router forwards bodies and headers as they are (the control token and agent tokens are
checked by the backend that owns the session), rewrites the `mcp_url` of a new session to point at
itself, and finds the owner of a session it does not know (after a restart) by asking each
backend. A backend that is down answers 502 for its own sessions only.
"""

from __future__ import annotations

import contextlib
import itertools
import re

import httpx2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

_SID = re.compile(r"^/(?:mcp|sessions|web)/([A-Za-z0-9_-]+)")
_HOP = {"host", "content-length", "connection", "keep-alive", "transfer-encoding", "upgrade", "te"}


def build_router(backends: list[str], public_url: str, timeout: float = 120.0) -> Starlette:
    """The router app over `backends` (base URLs of `serve http` processes)."""
    if not backends:
        raise ValueError("the router needs at least one backend URL (--backend URL)")
    backends = [b.rstrip("/") for b in backends]
    owner: dict[str, str] = {}  # session id -> backend
    load = dict.fromkeys(backends, 0)
    order = itertools.count()
    client = httpx2.AsyncClient(timeout=timeout)

    def headers_of(request: Request) -> dict[str, str]:
        return {k: v for k, v in request.headers.items() if k.lower() not in _HOP}

    async def forward(request: Request, backend: str) -> Response:
        url = backend + request.url.path + (f"?{request.url.query}" if request.url.query else "")
        try:
            r = await client.request(
                request.method, url, content=await request.body(), headers=headers_of(request)
            )
        except httpx2.HTTPError as e:
            return JSONResponse(
                {"error": f"backend {backend} is unreachable: {type(e).__name__}"}, status_code=502
            )
        out = {
            k: v for k, v in r.headers.items() if k.lower() not in _HOP and k.lower() != "content-encoding"
        }
        return Response(r.content, status_code=r.status_code, headers=out)

    async def create(request: Request) -> Response:
        n = next(order)
        backend = min(backends, key=lambda b: (load[b], (backends.index(b) - n) % len(backends)))
        r = await forward(request, backend)
        if r.status_code == 201:
            import orjson

            data = orjson.loads(r.body)
            sid = data["session_id"]
            owner[sid] = backend
            load[backend] += 1
            data["mcp_url"] = f"{public_url.rstrip('/')}/mcp/{sid}"
            data["backend"] = backend
            return JSONResponse(data, status_code=201)
        return r

    async def find(request: Request, sid: str) -> str | None:
        """The backend that owns `sid`: remembered, or found by asking each (the request's own
        control token decides whether the backend answers)."""
        if sid in owner:
            return owner[sid]
        for b in backends:
            try:
                r = await client.get(f"{b}/sessions/{sid}/state", headers=headers_of(request))
            except httpx2.HTTPError:
                continue
            if r.status_code != 404:
                owner[sid] = b
                return b
        return None

    async def route(request: Request) -> Response:
        m = _SID.match(request.url.path)
        if not m:
            return JSONResponse({"error": f"no route for {request.url.path}"}, status_code=404)
        sid = m.group(1)
        backend = await find(request, sid)
        if backend is None:
            return JSONResponse({"error": f"no session {sid} on any backend"}, status_code=404)
        r = await forward(request, backend)
        if request.method == "DELETE" and request.url.path == f"/sessions/{sid}" and r.status_code == 200:
            owner.pop(sid, None)
            load[backend] = max(0, load[backend] - 1)
        return r

    async def backends_route(request: Request) -> JSONResponse:
        return JSONResponse({"backends": [{"url": b, "sessions": load[b]} for b in backends]})

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette):
        yield
        await client.aclose()

    methods = ["GET", "POST", "DELETE", "PUT", "PATCH"]
    app = Starlette(
        routes=[
            Route("/sessions", create, methods=["POST"]),
            Route("/router/backends", backends_route, methods=["GET"]),
            Route("/{path:path}", route, methods=methods),
        ],
        lifespan=lifespan,
    )
    app.state.owner = owner
    return app
