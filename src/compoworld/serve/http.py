"""`compoworld serve http`: many concurrent sessions; MCP for agents, a control API for trainers.

- Control API (JSON, `Authorization: Bearer <control token>`): `POST /sessions` with a task id, or
  services and a seed -> session id, MCP URL and agent token; `GET /sessions/{id}/state`;
  `GET /sessions/{id}/calls` (the calls as the server saw them); `POST /sessions/{id}/verify` with
  an answer; `DELETE /sessions/{id}`.
- MCP: `/mcp/{session id}`, streamable HTTP, accepting only that session's agent token.

An agent token never opens the control API (403), a session's token never opens another session
(403), unknown sessions are 404, bad JSON or fields are 400, oversized bodies 413, hostile headers
(non-ASCII tokens, undecodable bytes) 400 or 401, never 500. A 401 says `WWW-Authenticate: Bearer`.
Idle sessions expire; sessions live in memory, so a restart loses them (verification results do
not: they are appended to `results.jsonl` and fsynced before they are returned).

One session cannot slow the others down: state reads, verification and session set-up run in a
worker thread under the session's lock, and every session has a state budget in bytes (422 when
a write would pass it; see `EnvSession`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hmac
import json
import os
import secrets
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio.to_thread
import orjson
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from compoworld.core.environment import Environment
from compoworld.core.library import Library, active
from compoworld.core.limits import CallLimits, watch_loop
from compoworld.serve.mcp_server import DEFAULT_STATE_BUDGET, FAIR_SHARE, EnvSession, build_server
from compoworld.serve.work import verify_snapshot, write_state
from compoworld.tasks.model import Task
from compoworld.verify.verifier import verify

MAX_BODY = 1 << 20
AGENT_BYTES_PER_S = 256 << 10  # request bytes per second one session's agent is paced to ...
AGENT_BURST_S = 4.0  # ... beyond a burst worth this many seconds (1 MiB: one body at the limit)
MAX_SEED = 2**63
LOOPBACK = ("127.0.0.1", "localhost", "::1")
# Uvicorn's default keep-alive (5 s) closes idle connections that a client under load is about to
# reuse, and the client's next request then fails with ReadError: keep them open longer.
KEEP_ALIVE_S = 75
# A session that wrote more than this is verified in a worker process, not a thread: the
# predicates scan what was written, and in a thread that work would hold the GIL against the
# event loop (and so against every other session) for as long as it runs.
OFFLOAD_BYTES = 1 << 20


@dataclass
class Session:
    id: str
    agent_token: str
    env: EnvSession
    task: Task | None
    created: float
    last_used: float = field(default=0.0)
    web: Any = None  # the session's web app, made on first use
    bytes_due: float = 0.0  # monotonic time by which the session's request bytes are paid for

    async def pace(self, n: int) -> None:
        """Fair share of the event loop: parsing a request (the MCP SDK does it on the loop, twice:
        JSON, then the typed request) costs ~20-40 ms per MiB, so one session's requests are paced
        to `AGENT_BYTES_PER_S` (about 1% of the loop) beyond a burst of `AGENT_BURST_S`; an agent
        that floods big bodies waits, others do not. An agent writes a few KB a minute."""
        if n <= 0:
            return
        now = time.monotonic()
        self.bytes_due = max(self.bytes_due, now) + n / AGENT_BYTES_PER_S
        wait = self.bytes_due - now - AGENT_BURST_S
        if wait > 0:
            await anyio.sleep(wait)


class Store:
    def __init__(
        self,
        tasks: dict[str, Task],
        mode: str,
        idle_timeout: float,
        results: Path,
        state_budget: int | None = DEFAULT_STATE_BUDGET,
        limits: CallLimits | None = CallLimits(),
        library: Library | None = None,
    ) -> None:
        self.tasks = tasks
        if limits is not None and limits.share is None:  # sessions share this process's GIL: fair share
            limits = dataclasses.replace(limits, share=FAIR_SHARE)
        self.limits = limits
        self.library = library if library is not None else active()  # what sessions are composed from
        self.draining = False  # set by POST /drain: no new sessions, the old ones keep running
        self._stream_due = 0.0  # monotonic time by which the big responses sent so far are paid for
        self.mode = mode
        self.idle_timeout = idle_timeout
        self.state_budget = state_budget
        self._write_lock = threading.Lock()
        self._pool: Any = None
        self.sessions: dict[str, Session] = {}
        # input schemas by tool name, across sessions (a namespaced name has one schema everywhere)
        self.schemas: dict[str, dict[str, Any]] = {}
        self.results = results
        results.parent.mkdir(parents=True, exist_ok=True)
        self._log = results.open("ab")

    async def stream_pace(self, n: int) -> None:
        """Wait until `n` more bytes of big responses fit `STREAM_BYTES_PER_S`, across all streams."""
        now = time.monotonic()
        self._stream_due = max(self._stream_due, now) + n / STREAM_BYTES_PER_S
        if self._stream_due > now:
            await anyio.sleep(self._stream_due - now)

    def expire(self) -> None:
        now = time.monotonic()
        for sid in [s.id for s in self.sessions.values() if now - s.last_used > self.idle_timeout]:
            del self.sessions[sid]

    def get(self, sid: str) -> Session | None:
        self.expire()
        return self.sessions.get(sid)

    async def in_process(self, fn: Any, *args: Any, retry: bool = True) -> Any:
        """Run `fn(*args)` (plain data in and out) in the server's worker process, started lazily."""
        import asyncio
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        if self._pool is None:
            from compoworld.serve.work import init_worker

            self._pool = ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=init_worker,
                initargs=(os.getpid(), self.library),
            )
        from concurrent.futures.process import BrokenProcessPool

        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)
        except BrokenProcessPool:  # the worker died (killed, out of memory): start a fresh one, once
            self._pool = None
            if not retry:
                raise
            return await self.in_process(fn, *args, retry=False)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def record(self, rec: dict[str, Any]) -> None:
        """Append and fsync one result (blocking: call it from a worker thread)."""
        line = orjson.dumps(rec) + b"\n"
        with self._write_lock:
            self._log.write(line)
            self._log.flush()
            os.fsync(self._log.fileno())


def _same(a: str, b: str) -> bool:
    """Constant-time comparison that never raises (hmac refuses non-ASCII str)."""
    return hmac.compare_digest(a.encode("utf-8", "surrogateescape"), b.encode("utf-8", "surrogateescape"))


def _bearer(headers: Any) -> str | None:
    value = headers.get("authorization") or ""
    return value[7:].strip() if value[:7].lower() == "bearer " else None


def _headers(scope: dict[str, Any]) -> dict[str, str]:
    """Header names and values as text. HTTP headers are bytes: latin-1 decodes any of them."""
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


def _content_length(headers: dict[str, str]) -> int | None:
    """The declared body length, 0 if absent, None if it is not a number."""
    raw = headers.get("content-length") or "0"
    return int(raw) if raw.isascii() and raw.strip().isdigit() else None


_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="compoworld"'}


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse(
        {"error": {"code": status, "message": message}},
        status_code=status,
        headers=_CHALLENGE if status == 401 else None,
    )


def _parse(raw: bytes) -> Any:
    """JSON from a request body, or ValueError naming what is wrong with it."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"body is not UTF-8: invalid byte at position {e.start}") from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise ValueError("body is nested too deeply") from None
    except ValueError as e:  # JSONDecodeError, and integers over Python's digit limit
        raise ValueError(f"body is not valid JSON: {e}") from None
    if "\\u" in text and _has_lone_surrogate(data):
        raise ValueError("body holds a lone surrogate escape (\\ud800-\\udfff alone is not Unicode text)")
    return data


def _has_lone_surrogate(value: Any) -> bool:
    try:
        orjson.dumps(value)  # refuses str that is not valid Unicode (and nothing else JSON gives)
    except orjson.JSONEncodeError as e:
        return "surrogates" in str(e) or "str is not valid UTF-8" in str(e)
    return False


def build_app(
    store: Store,
    control_token: str,
    public_url: str,
    host: str = "127.0.0.1",
    allowed_hosts: list[str] | None = None,
):
    """The ASGI app and the MCP server. MCP's DNS-rebinding check accepts the loopback names, `host`
    (the bind address, unless it is a wildcard) and `allowed_hosts` (`name` or `name:port`); an
    allowed host of `*` turns the check off (the bearer tokens still guard every request)."""
    server = build_server(lambda ctx: _session_of(store, ctx), store.schemas.get)

    def control_ok(request: Request) -> JSONResponse | None:
        token = _bearer(request.headers)
        if token is None:
            return _error(401, "missing bearer token: the control API needs the control token")
        if not _same(token, control_token):
            if any(_same(token, s.agent_token) for s in store.sessions.values()):
                return _error(403, "an agent token cannot use the control API")
            return _error(401, "wrong control token")
        return None

    async def body(request: Request) -> dict[str, Any] | JSONResponse:
        raw = await request.body()
        if len(raw) > MAX_BODY:
            return _error(413, f"request body over {MAX_BODY} bytes")
        if not raw.strip():
            return {}
        try:
            data = _parse(raw)
        except ValueError as e:
            return _error(400, str(e))
        return data if isinstance(data, dict) else _error(400, "body must be a JSON object")

    async def create(request: Request) -> JSONResponse:
        if (denied := control_ok(request)) is not None:
            return denied
        if store.draining:
            return _error(
                503, "this server is draining: it takes no new sessions (its sessions keep running)"
            )
        data = await body(request)
        if isinstance(data, JSONResponse):
            return data
        task = None
        mode = data.get("mode", store.mode)
        if mode not in ("direct", "gateway"):
            return _error(400, "'mode' must be direct or gateway")
        if "task_id" in data:
            if not isinstance(data["task_id"], str | int) or isinstance(data["task_id"], bool):
                return _error(400, "'task_id' must be a string")
            task = store.tasks.get(str(data["task_id"]))
            if task is None:
                return _error(404, f"no task {str(data['task_id'])[:200]!r} on this server")
            try:
                env = await anyio.to_thread.run_sync(task.environment, store.library)
            except KeyError as e:  # a compiled service the server was not given
                return _error(
                    422,
                    f"task {task.id!r} needs {e.args[0] if e.args else e} (start the server with --manifests)",
                )
        elif "services" in data:
            services, seed, size = data["services"], data.get("seed", 0), data.get("size", "default")
            if (
                not isinstance(services, list)
                or not all(isinstance(s, str) for s in services)
                or not isinstance(seed, int)
                or isinstance(seed, bool)
                or not 0 <= seed < MAX_SEED
                or not isinstance(size, str)
            ):
                return _error(
                    400,
                    "'services' must be a list of names, 'seed' an integer in [0, 2**63) and 'size' a name",
                )
            try:
                env = await anyio.to_thread.run_sync(
                    lambda: Environment(services=services, seed=seed, size=size, library=store.library)
                )
            except (KeyError, ValueError) as e:
                return _error(400, str(e.args[0] if e.args else e))
        else:
            return _error(400, "give 'task_id', or 'services' (and 'seed')")
        sid = secrets.token_hex(8)
        now = time.monotonic()
        store.expire()
        served = await anyio.to_thread.run_sync(EnvSession, env, mode, store.state_budget, store.limits)
        store.schemas.update(served.schemas)
        store.sessions[sid] = Session(sid, secrets.token_urlsafe(24), served, task, now, now)
        return JSONResponse(
            {
                "session_id": sid,
                "mcp_url": f"{public_url}/mcp/{sid}",
                "agent_token": store.sessions[sid].agent_token,
                "task_id": task.id if task else None,
                "mode": mode,
            },
            status_code=201,
        )

    def session_or_error(request: Request) -> Session | JSONResponse:
        if (denied := control_ok(request)) is not None:
            return denied
        s = store.get(request.path_params["sid"])
        if s is None:
            return _error(404, f"no session {request.path_params['sid']!r} (closed, expired or never made)")
        s.last_used = time.monotonic()  # any authenticated control call keeps the session alive
        return s

    async def state(request: Request) -> Response:
        s = session_or_error(request)
        if isinstance(s, JSONResponse):
            return s
        env = s.env.env
        if s.env.written > OFFLOAD_BYTES:  # big: written in pieces to a file, streamed from it
            async with s.env.lock:  # copy-on-write snapshot; the hash is kept incrementally
                snap, state_hash, n_calls = await anyio.to_thread.run_sync(
                    lambda: (env.snapshot(), env.state_hash(), s.env.calls)
                )
            fd, path = tempfile.mkstemp(prefix="compoworld-state-", suffix=".json")
            os.close(fd)
            try:
                size = await anyio.to_thread.run_sync(write_state, path, s.id, state_hash, snap, n_calls)
                f = open(path, "rb")  # noqa: SIM115 (closed by the stream below)
            finally:
                os.unlink(path)  # the open file stays readable; nothing is left behind on disk
            return StreamingResponse(
                _chunks(f, store), media_type="application/json", headers={"content-length": str(size)}
            )

        def render() -> bytes:
            return orjson.dumps(
                {
                    "session_id": s.id,
                    "state_hash": env.state_hash(),
                    "state": env.snapshot(),
                    "calls": s.env.calls,
                }
            )

        async with s.env.lock:  # off the loop, with the session held still
            data = await anyio.to_thread.run_sync(render)
        return Response(data, media_type="application/json")

    async def calls(request: Request) -> Response:
        s = session_or_error(request)
        if isinstance(s, JSONResponse):
            return s
        async with s.env.lock:
            log = list(s.env.log)
        data = await anyio.to_thread.run_sync(
            lambda: orjson.dumps({"session_id": s.id, "count": len(log), "calls": log})
        )
        return Response(data, media_type="application/json")

    async def verify_route(request: Request) -> JSONResponse:
        s = session_or_error(request)
        if isinstance(s, JSONResponse):
            return s
        data = await body(request)
        if isinstance(data, JSONResponse):
            return data
        if s.task is None:
            return _error(409, "this session was made from services, not a task: there is nothing to verify")
        answer = data.get("answer")
        if answer is not None and not isinstance(answer, str):
            return _error(400, "'answer' must be a string")
        task, env = s.task, s.env.env
        final = answer if answer is not None else s.env.answer  # null: the agent's own answer

        if s.env.written > OFFLOAD_BYTES:  # big: the checks and the hash run in the worker process
            async with s.env.lock:
                snap = env.snapshot()  # the state as it is now; the checks run on this copy
            r, state_hash = await store.in_process(verify_snapshot, task, snap, final)
        else:
            async with s.env.lock:
                snap, state_hash = await anyio.to_thread.run_sync(lambda: (env.snapshot(), env.state_hash()))
            r = await anyio.to_thread.run_sync(verify, task, snap, final)
        rec = {
            "session_id": s.id,
            "task_id": task.id,
            "answer": final,
            "V": int(r.passed),
            "score": r.score,
            "checks": [c.model_dump() for c in r.checks],
            "state_hash": state_hash,
        }
        await anyio.to_thread.run_sync(store.record, rec)  # fsynced before it is returned
        return JSONResponse(rec)

    async def delete(request: Request) -> JSONResponse:
        s = session_or_error(request)
        if isinstance(s, JSONResponse):
            return s
        del store.sessions[s.id]
        return JSONResponse({"session_id": s.id, "deleted": True})

    async def healthz(request: Request) -> JSONResponse:
        """Liveness for a router or load balancer: no token, no secrets."""
        return JSONResponse({"ok": True, "draining": store.draining, "sessions": len(store.sessions)})

    async def drain(request: Request) -> JSONResponse:
        if (denied := control_ok(request)) is not None:
            return denied
        store.draining = True
        return JSONResponse({"draining": True, "sessions": len(store.sessions)})

    async def exists(request: Request) -> Response:
        """204 if the session lives here and the token is the control token or its agent token,
        else 404 (a router finding a session's owner asks every backend with the client's token)."""
        s = store.get(request.path_params["sid"])
        token = _bearer(request.headers)
        if s is None or token is None or not (_same(token, control_token) or _same(token, s.agent_token)):
            return Response(status_code=404)
        return Response(status_code=204)

    routes = [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/drain", drain, methods=["POST"]),
        Route("/sessions/{sid}/exists", exists, methods=["GET"]),
        Route("/sessions", create, methods=["POST"]),
        Route("/sessions/{sid}/state", state, methods=["GET"]),
        Route("/sessions/{sid}/calls", calls, methods=["GET"]),
        Route("/sessions/{sid}/verify", verify_route, methods=["POST"]),
        Route("/sessions/{sid}", delete, methods=["DELETE"]),
    ]
    inner = server.streamable_http_app(
        streamable_http_path="/mcp",
        custom_starlette_routes=routes,
        json_response=True,
        max_request_body_size=MAX_BODY,
        session_idle_timeout=store.idle_timeout,
        transport_security=security(host, allowed_hosts or []),
        host=host,
    )
    return Gate(inner, store), server


def security(host: str, extra: list[str]) -> TransportSecuritySettings:
    """MCP's DNS-rebinding protection, allowing loopback, the bind host and any `extra` hosts."""
    if "*" in extra:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    names = [*LOOPBACK]
    if host not in ("0.0.0.0", "::", ""):
        names.append(host)
    hosts: list[str] = []
    for n in [*names, *extra]:
        bracketed = f"[{n}]" if ":" in n and not n.startswith("[") and n.count(":") > 1 else n
        has_port = bracketed.rsplit("]", 1)[-1].count(":") == 1 if bracketed.startswith("[") else ":" in n
        hosts += [bracketed] if has_port else [bracketed, f"{bracketed}:*"]
    hosts = list(dict.fromkeys(hosts))
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


def _session_of(store: Store, ctx: Any) -> EnvSession | None:
    req = getattr(ctx, "request", None)
    sid = (getattr(req, "scope", None) or {}).get("state", {}).get("cw_session") if req is not None else None
    s = store.sessions.get(sid) if sid else None
    if s is not None:
        s.last_used = time.monotonic()
    return s.env if s else None


class Gate:
    """ASGI front door: `/mcp/{sid}` needs that session's agent token and is routed to the MCP app.

    Its refusals on MCP paths are JSON-RPC errors as well as HTTP statuses, so an MCP client shows
    their message (an expired session reads as expired, not as "Method not found")."""

    def __init__(self, app: Any, store: Store) -> None:
        self.app = app
        self.store = store
        self._watched = False

    async def _admit(
        self, sid: str, headers: dict[str, str], send: Any, missing: str, rpc: bool
    ) -> Session | None:
        """The session if `headers` carry its agent token; otherwise answer 404 / 401 / 403 and None."""
        session = self.store.get(sid) if sid else None
        token = _bearer(headers)
        if session is None:
            await _send_json(send, 404, missing, rpc)
        elif token is None:
            await _send_json(send, 401, "missing bearer token: use the session's agent token", rpc)
        elif not _same(token, session.agent_token):
            await _send_json(send, 403, "this token does not belong to this session", rpc)
        else:
            return session
        return None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if not self._watched:  # heavy calls under a fair share yield to this loop while it has work
            self._watched = True
            watch_loop(asyncio.get_running_loop())
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope["path"]
        headers = _headers(scope)
        length = _content_length(headers)
        mcp = path == "/mcp" or path.startswith("/mcp/")
        if length is None:
            return await _send_json(send, 400, "Content-Length is not a number", mcp)
        if path.startswith(("/mcp", "/web/", "/sessions")) and length > MAX_BODY:
            return await _send_json(send, 413, f"request body over {MAX_BODY} bytes", mcp)
        body_size = 0
        if "content-length" not in headers and scope["method"] in ("POST", "PUT", "PATCH"):
            # a chunked body (no declared length) is counted as it streams, refused past the limit
            # before more of it is read, and handed on whole
            chunks, size, more = [], 0, True
            while more:
                message = await receive()
                if message["type"] != "http.request":
                    return None  # the client went away
                size += len(message.get("body", b""))
                if size > MAX_BODY:
                    return await _send_json(send, 413, f"request body over {MAX_BODY} bytes", mcp)
                chunks.append(message.get("body", b""))
                more = message.get("more_body", False)
            receive = _replay(b"".join(chunks), receive)
            body_size = size
        if mcp:
            sid = path[5:].strip("/") if path.startswith("/mcp/") else ""
            missing = (
                f"no MCP session at {path[:200]}: it expired, was closed, or never existed "
                "(ask the harness for a new session)"
            )
            session = await self._admit(sid, headers, send, missing, rpc=True)
            if session is None:
                return None
            session.last_used = time.monotonic()
            await session.pace(length or body_size)
            scope = {
                **scope,
                "path": "/mcp",
                "raw_path": b"/mcp",
                "state": {**(scope.get("state") or {}), "cw_session": sid},
            }
        elif path.startswith("/web/"):
            # the session's web pages (GUI interface), behind the same agent token
            sid, _, rest = path[5:].partition("/")
            session = await self._admit(sid, headers, send, f"no session at {path[:200]}", rpc=False)
            if session is None:
                return None
            if "browser" not in session.env.env.services:
                return await _send_json(
                    send, 404, "this session has no web pages (add the 'browser' service)"
                )
            session.last_used = time.monotonic()
            await session.pace(length or body_size)
            if session.web is None:
                from compoworld.interfaces.webapp import web_app

                session.web = web_app(session.env.env, prefix=f"/web/{sid}", call=session.env.web_call)
            sub = "/" + rest
            async with session.env.lock:  # pages read and act on the session's state
                return await session.web(
                    {**scope, "path": sub, "raw_path": sub.encode(), "root_path": ""}, receive, send
                )
        await self.app(scope, receive, send)


STREAM_CHUNK = 128 * 1024
# Big state reads stream at this pace, all of them together (16 MiB/s: the default budget in 2 s).
# Each MiB costs ~1.5 ms of this server's CPU (the loop's steps, the kernel's copies) and ~2 ms of
# the reader's: at 32 MiB/s a trainer re-reading a 20 MB state kept ~11% of a core busy, and on a
# 2-core machine any other process burning 10% of a core (a bare CPU loop, no server involved)
# already doubles a quiet session's p99. At 16 MiB/s the copies attack's quiet p99 went from 1.5x
# to 1.0x of alone (benchmarks/serve_abuse.py, the attack at its budget, reading on).
STREAM_BYTES_PER_S = 16 << 20


async def _chunks(f: Any, store: Store) -> Any:
    """A big file's bytes in slices of its memory map, paced by the store (`Store.stream_pace`):
    each slice is one short step of the event loop (no copy to read it, no hop to a worker
    thread and back), and between steps the loop is the other sessions'. Unpaced, one trainer
    reading a 20 MB state over and over kept the loop (and the machine's other core, receiving)
    busy enough to double a quiet session's p99. Unmapping and closing the (unlinked) file free
    its pages, ~4 ms of kernel time for 20 MB: a worker thread does it, not the loop."""
    import mmap

    mm = view = None
    try:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        view = memoryview(mm)
        for i in range(0, len(view), STREAM_CHUNK):
            yield bytes(view[i : i + STREAM_CHUNK])
            await store.stream_pace(min(STREAM_CHUNK, len(view) - i))
    finally:
        if view is not None:
            view.release()
        # not awaited: this also runs when the reader went away and the stream was cancelled
        try:
            asyncio.get_running_loop().run_in_executor(None, _release, mm, f)
        except RuntimeError:  # finalised after its loop stopped
            _release(mm, f)


def _release(mm: Any, f: Any) -> None:
    if mm is not None:
        mm.close()
    f.close()


def _replay(body: bytes, receive: Any) -> Any:
    """A `receive` that gives `body` once, then what the connection says (a disconnect)."""
    sent = False

    async def again() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again


async def _send_json(send: Any, status: int, message: str, rpc: bool = False) -> None:
    body: dict[str, Any] = {"error": {"code": status, "message": message}}
    if rpc:  # also a JSON-RPC error, which MCP clients surface as is
        body = {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32600, "message": message, "data": body["error"]},
        }
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="compoworld"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})
