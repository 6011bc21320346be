"""Serving for trainers on a cluster: N `serve http` processes behind one session-affine router.

Why this and not Ray actors behind the control API: a session is an independent, stateful unit
that lives in one process, the control API and MCP already speak HTTP, and trainers' rollout
workers (verl, OpenRLHF, SkyRL) reach environments over the network anyway. A router that places
each new session on the least-loaded live backend and then pins every request of that session to
it scales by starting more `serve http` processes on any machine (a Ray cluster's nodes included),
and keeps the engine and the server exactly as they are.

Why our own router and not nginx / HAProxy / Envoy in front: placement needs what only the
backends know (which one is draining, which owns a session created before a restart), and the
session id lives in the path of every MCP, state, verify and web request, which the router reads
directly. A stock proxy would need a sticky-cookie or hash-on-path scheme that cannot rebuild its
table from the backends, plus a sidecar for health. The router is ~300 lines with the same
guards as the server (`serve/transport.py`):

- health: every `health_s` it asks each backend's `/healthz`; a backend that does not answer, or
  says it is draining, gets no new session; a create that cannot reach its backend is placed on
  the next live one (nothing was sent). A request for a session whose backend is down gets a 503
  that says so;
- the session table is appended to `table_path` (JSONL) as sessions are made and deleted, and read
  back at start; a session it does not know is looked up on the backends (`/sessions/{id}/exists`,
  with the client's own token), so a restart strands nobody;
- bodies over `MAX_BODY` are refused (413), counted as they stream; the Host header is checked
  against the same allow-list as the server's (421 otherwise); responses are streamed through,
  with a read timeout on the upstream (`stream_timeout`, between chunks) and at most
  `MAX_STREAMS_PER_SESSION` open GET streams per session (429 past it), on a connection pool
  that streams cannot exhaust for everyone else.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import itertools
import json
import re
from pathlib import Path

import httpx2
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from compoworld.serve.http import MAX_BODY, security

_SID = re.compile(r"^/(?:mcp|sessions|web)/([A-Za-z0-9_-]+)")
_HOP = {"host", "content-length", "connection", "keep-alive", "transfer-encoding", "upgrade", "te"}
MAX_STREAMS_PER_SESSION = 4
HEALTH_S = 2.0


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"code": status, "message": message}}, status_code=status, headers=headers)


class Table:
    """Session id -> backend, persisted as an append-only JSONL log (`None`: in memory only)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.owner: dict[str, str] = {}
        if path is not None and path.exists():
            for line in path.read_text().splitlines():
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    rec = json.loads(line)
                    if rec.get("backend"):
                        self.owner[rec["sid"]] = rec["backend"]
                    else:
                        self.owner.pop(rec["sid"], None)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        self._log = path.open("a") if path is not None else None

    def set(self, sid: str, backend: str | None) -> None:
        if backend is None:
            self.owner.pop(sid, None)
        else:
            self.owner[sid] = backend
        if self._log is not None:
            self._log.write(json.dumps({"sid": sid, "backend": backend}) + "\n")
            self._log.flush()


def _host_ok(host: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(host, p.replace("[", "[[]")) if "*" in p else host == p for p in patterns)


def build_router(
    backends: list[str],
    public_url: str,
    timeout: float = 120.0,
    *,
    host: str = "127.0.0.1",
    allowed_hosts: list[str] | None = None,
    table_path: Path | None = None,
    stream_timeout: float = 60.0,
    health_s: float = HEALTH_S,
) -> Starlette:
    """The router app over `backends` (base URLs of `serve http` processes)."""
    if not backends:
        raise ValueError("the router needs at least one backend URL (--backend URL)")
    backends = [b.rstrip("/") for b in backends]
    table = Table(table_path)
    load = dict.fromkeys(backends, 0)
    for b in table.owner.values():
        if b in load:
            load[b] += 1
    live = dict.fromkeys(backends, True)  # until the first health check says otherwise
    draining = dict.fromkeys(backends, False)
    streams: dict[str, int] = {}
    order = itertools.count()
    sec = security(host, allowed_hosts or [])
    # requests and streams on separate pools, so held streams never starve ordinary calls
    client = httpx2.AsyncClient(timeout=timeout, limits=httpx2.Limits(max_connections=512))
    stream_client = httpx2.AsyncClient(
        timeout=httpx2.Timeout(timeout, read=stream_timeout), limits=httpx2.Limits(max_connections=None)
    )

    def headers_of(request: Request) -> dict[str, str]:
        return {k: v for k, v in request.headers.items() if k.lower() not in _HOP}

    async def read_body(request: Request) -> bytes | Response:
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.strip().isdigit() or int(declared) > MAX_BODY):
            return _error(413, f"request body over {MAX_BODY} bytes")
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_BODY:  # counted as it streams: a chunked body is refused early
                return _error(413, f"request body over {MAX_BODY} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    async def forward(request: Request, backend: str, body: bytes, sid: str | None) -> Response:
        url = backend + request.url.path + (f"?{request.url.query}" if request.url.query else "")
        is_stream = request.method == "GET" and request.url.path.startswith("/mcp/")
        pool = stream_client if is_stream else client
        if is_stream and sid is not None:
            if streams.get(sid, 0) >= MAX_STREAMS_PER_SESSION:
                return _error(429, f"session {sid} already holds {MAX_STREAMS_PER_SESSION} open streams")
            streams[sid] = streams.get(sid, 0) + 1
        try:
            req = pool.build_request(request.method, url, content=body, headers=headers_of(request))
            r = await pool.send(req, stream=True)
        except httpx2.HTTPError as e:
            if is_stream and sid is not None:
                streams[sid] -= 1
            live[backend] = False
            return _error(
                503, f"backend {backend} is unreachable ({type(e).__name__}); its sessions are unavailable"
            )
        out = {
            k: v for k, v in r.headers.items() if k.lower() not in _HOP and k.lower() != "content-encoding"
        }

        async def done() -> None:
            await r.aclose()
            if is_stream and sid is not None:
                streams[sid] -= 1

        async def relay():
            try:
                async for chunk in r.aiter_raw():
                    yield chunk
            except httpx2.HTTPError:  # the upstream stalled past stream_timeout or went away
                return

        if not is_stream and "text/event-stream" not in r.headers.get("content-type", ""):
            try:
                data = await r.aread()
            except httpx2.HTTPError as e:
                await done()
                return _error(502, f"backend {backend} failed mid-response ({type(e).__name__})")
            await done()
            return Response(data, status_code=r.status_code, headers=out)
        return StreamingResponse(
            relay(), status_code=r.status_code, headers=out, background=BackgroundTask(done)
        )

    def guard(request: Request) -> Response | None:
        if sec.enable_dns_rebinding_protection:
            h = request.headers.get("host", "")
            if not _host_ok(h, sec.allowed_hosts or []):
                return _error(421, f"Host {h[:100]!r} is not served here (allow it with --allow-host)")
        return None

    async def create(request: Request) -> Response:
        if (bad := guard(request)) is not None:
            return bad
        body = await read_body(request)
        if isinstance(body, Response):
            return body
        n = next(order)
        tried: set[str] = set()
        while True:
            ready = [b for b in backends if live[b] and not draining[b] and b not in tried]
            if not ready:
                return _error(
                    503, "no live backend takes new sessions (all are down or draining)", {"Retry-After": "2"}
                )
            backend = min(ready, key=lambda b: (load[b], (backends.index(b) - n) % len(backends)))
            tried.add(backend)
            r = await forward(request, backend, body, None)
            if r.status_code == 503 and not live[backend]:
                continue  # unreachable: nothing was made there, place it on the next one
            if r.status_code == 503:  # the backend says it is draining
                draining[backend] = True
                continue
            if r.status_code == 201:
                data = json.loads(r.body)
                sid = data["session_id"]
                table.set(sid, backend)
                load[backend] += 1
                data["mcp_url"] = f"{public_url.rstrip('/')}/mcp/{sid}"
                data["backend"] = backend
                return JSONResponse(data, status_code=201)
            return r

    async def find(request: Request, sid: str) -> str | None:
        """The backend that owns `sid`: from the table, or found by asking each live backend with
        the request's own token (a backend answers 204 only to its session's tokens)."""
        if sid in table.owner:
            return table.owner[sid]
        auth = {"authorization": request.headers.get("authorization", "")}
        for b in backends:
            try:
                r = await client.get(f"{b}/sessions/{sid}/exists", headers=auth, timeout=5.0)
            except httpx2.HTTPError:
                continue
            if r.status_code == 204:
                table.set(sid, b)
                return b
        return None

    async def route(request: Request) -> Response:
        if (bad := guard(request)) is not None:
            return bad
        m = _SID.match(request.url.path)
        if not m:
            return _error(404, f"no route for {request.url.path[:200]}")
        sid = m.group(1)
        body = await read_body(request)
        if isinstance(body, Response):
            return body
        backend = await find(request, sid)
        if backend is None:
            return _error(404, f"no session {sid} on any backend (closed, expired or never made)")
        if backend not in live:
            return _error(503, f"session {sid} lives on {backend}, which this router no longer serves")
        if not live[backend]:
            return _error(
                503, f"session {sid} lives on backend {backend}, which is down: the session is unavailable"
            )
        r = await forward(request, backend, body, sid)
        if request.method == "DELETE" and request.url.path == f"/sessions/{sid}" and r.status_code == 200:
            table.set(sid, None)
            load[backend] = max(0, load[backend] - 1)
        return r

    async def backends_route(request: Request) -> JSONResponse:
        return JSONResponse(
            {
                "backends": [
                    {"url": b, "sessions": load[b], "live": live[b], "draining": draining[b]}
                    for b in backends
                ]
            }
        )

    async def check(b: str) -> None:
        try:
            r = await client.get(f"{b}/healthz", timeout=min(2.0, health_s))
            data = r.json() if r.status_code == 200 else None
        except (httpx2.HTTPError, ValueError):
            data = None
        live[b] = bool(data and data.get("ok"))
        draining[b] = bool(data and data.get("draining"))

    async def health() -> None:
        while True:
            await asyncio.gather(*(check(b) for b in backends))
            await asyncio.sleep(health_s)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette):
        task = asyncio.create_task(health())
        try:
            yield
        finally:
            task.cancel()
            await client.aclose()
            await stream_client.aclose()

    methods = ["GET", "POST", "DELETE", "PUT", "PATCH"]
    app = Starlette(
        routes=[
            Route("/sessions", create, methods=["POST"]),
            Route("/router/backends", backends_route, methods=["GET"]),
            Route("/{path:path}", route, methods=methods),
        ],
        lifespan=lifespan,
    )
    app.state.owner = table.owner
    app.state.live = live
    return app
