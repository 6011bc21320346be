"""`compoworld serve http`: many concurrent sessions; MCP for agents, a control API for trainers.

- Control API (JSON, `Authorization: Bearer <control token>`): `POST /sessions` with a task id, or
  services and a seed -> session id, MCP URL and agent token; `GET /sessions/{id}/state`;
  `POST /sessions/{id}/verify` with an answer; `DELETE /sessions/{id}`.
- MCP: `/mcp/{session id}`, streamable HTTP, accepting only that session's agent token.

An agent token never opens the control API (403), a session's token never opens another session
(403), unknown sessions are 404, bad JSON or fields are 400, oversized bodies 413. Idle sessions
expire. Verification results are appended to `results.jsonl` and fsynced before they are returned,
so stopping the server loses none that were reported.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from compoworld.core.environment import Environment
from compoworld.serve.mcp_server import EnvSession, build_server
from compoworld.tasks.model import Task
from compoworld.verify.verifier import verify

MAX_BODY = 1 << 20


@dataclass
class Session:
    id: str
    agent_token: str
    env: EnvSession
    task: Task | None
    created: float
    last_used: float = field(default=0.0)
    web: Any = None  # the session's web app, made on first use


class Store:
    def __init__(self, tasks: dict[str, Task], mode: str, idle_timeout: float, results: Path) -> None:
        self.tasks = tasks
        self.mode = mode
        self.idle_timeout = idle_timeout
        self.sessions: dict[str, Session] = {}
        # input schemas by tool name, across sessions (a namespaced name has one schema everywhere)
        self.schemas: dict[str, dict[str, Any]] = {}
        self.results = results
        results.parent.mkdir(parents=True, exist_ok=True)
        self._log = results.open("ab")

    def expire(self) -> None:
        now = time.monotonic()
        for sid in [s.id for s in self.sessions.values() if now - s.last_used > self.idle_timeout]:
            del self.sessions[sid]

    def get(self, sid: str) -> Session | None:
        self.expire()
        return self.sessions.get(sid)

    def record(self, rec: dict[str, Any]) -> None:
        self._log.write(json.dumps(rec, ensure_ascii=False).encode() + b"\n")
        self._log.flush()
        os.fsync(self._log.fileno())


def _bearer(headers: Any) -> str | None:
    value = headers.get("authorization") or ""
    return value[7:].strip() if value.lower().startswith("bearer ") else None


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": status, "message": message}}, status_code=status)


def build_app(store: Store, control_token: str, public_url: str):
    server = build_server(lambda ctx: _session_of(store, ctx), store.schemas.get)

    def control_ok(request: Request) -> JSONResponse | None:
        token = _bearer(request.headers)
        if token is None:
            return _error(401, "missing bearer token: the control API needs the control token")
        if not hmac.compare_digest(token, control_token):
            if any(hmac.compare_digest(token, s.agent_token) for s in store.sessions.values()):
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
            data = json.loads(raw)
        except json.JSONDecodeError as e:
            return _error(400, f"body is not valid JSON: {e}")
        return data if isinstance(data, dict) else _error(400, "body must be a JSON object")

    async def create(request: Request) -> JSONResponse:
        if (denied := control_ok(request)) is not None:
            return denied
        data = await body(request)
        if isinstance(data, JSONResponse):
            return data
        task = None
        mode = data.get("mode", store.mode)
        if mode not in ("direct", "gateway"):
            return _error(400, "'mode' must be direct or gateway")
        if "task_id" in data:
            task = store.tasks.get(str(data["task_id"]))
            if task is None:
                return _error(404, f"no task {data['task_id']!r} on this server")
            env = task.environment()
        elif "services" in data:
            services, seed = data["services"], data.get("seed", 0)
            if (
                not isinstance(services, list)
                or not all(isinstance(s, str) for s in services)
                or not isinstance(seed, int)
            ):
                return _error(400, "'services' must be a list of names and 'seed' an integer")
            try:
                env = Environment(services=services, seed=seed, size=data.get("size", "default"))
            except (KeyError, ValueError) as e:
                return _error(400, str(e.args[0] if e.args else e))
        else:
            return _error(400, "give 'task_id', or 'services' (and 'seed')")
        sid = secrets.token_hex(8)
        now = time.monotonic()
        store.expire()
        served = EnvSession(env, mode)
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
        return (
            s
            if s is not None
            else _error(404, f"no session {request.path_params['sid']!r} (closed, expired or never made)")
        )

    async def state(request: Request) -> JSONResponse:
        s = session_or_error(request)
        if isinstance(s, JSONResponse):
            return s
        return JSONResponse(
            {
                "session_id": s.id,
                "state_hash": s.env.env.state_hash(),
                "state": s.env.env.snapshot(),
                "calls": s.env.calls,
            }
        )

    async def verify_route(request: Request) -> JSONResponse:
        s = session_or_error(request)
        if isinstance(s, JSONResponse):
            return s
        data = await body(request)
        if isinstance(data, JSONResponse):
            return data
        if s.task is None:
            return _error(409, "this session was made from services, not a task: there is nothing to verify")
        answer = data.get("answer", s.env.answer)
        if answer is not None and not isinstance(answer, str):
            return _error(400, "'answer' must be a string")
        r = verify(s.task, s.env.env.snapshot(), answer)
        rec = {
            "session_id": s.id,
            "task_id": s.task.id,
            "answer": answer,
            "V": int(r.passed),
            "score": r.score,
            "checks": [c.model_dump() for c in r.checks],
            "state_hash": s.env.env.state_hash(),
        }
        store.record(rec)
        return JSONResponse(rec)

    async def delete(request: Request) -> JSONResponse:
        s = session_or_error(request)
        if isinstance(s, JSONResponse):
            return s
        del store.sessions[s.id]
        return JSONResponse({"session_id": s.id, "deleted": True})

    routes = [
        Route("/sessions", create, methods=["POST"]),
        Route("/sessions/{sid}/state", state, methods=["GET"]),
        Route("/sessions/{sid}/verify", verify_route, methods=["POST"]),
        Route("/sessions/{sid}", delete, methods=["DELETE"]),
    ]
    inner = server.streamable_http_app(
        streamable_http_path="/mcp",
        custom_starlette_routes=routes,
        json_response=True,
        max_request_body_size=MAX_BODY,
        session_idle_timeout=store.idle_timeout,
    )
    return Gate(inner, store), server


def _session_of(store: Store, ctx: Any) -> EnvSession | None:
    req = getattr(ctx, "request", None)
    sid = (getattr(req, "scope", None) or {}).get("state", {}).get("cw_session") if req is not None else None
    s = store.sessions.get(sid) if sid else None
    if s is not None:
        s.last_used = time.monotonic()
    return s.env if s else None


class Gate:
    """ASGI front door: `/mcp/{sid}` needs that session's agent token and is routed to the MCP app."""

    def __init__(self, app: Any, store: Store) -> None:
        self.app = app
        self.store = store

    async def _admit(self, sid: str, headers: dict[str, str], send: Any, missing: str) -> Session | None:
        """The session if `headers` carry its agent token; otherwise answer 404 / 401 / 403 and None."""
        session = self.store.get(sid) if sid else None
        token = _bearer(headers)
        if session is None:
            await _send_json(send, 404, missing)
        elif token is None:
            await _send_json(send, 401, "missing bearer token: use the session's agent token")
        elif not hmac.compare_digest(token, session.agent_token):
            await _send_json(send, 403, "this token does not belong to this session")
        else:
            return session
        return None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            path = scope["path"]
            if path == "/mcp" or path.startswith("/mcp/"):
                sid = path[5:].strip("/") if path.startswith("/mcp/") else ""
                headers = {k.decode().lower(): v.decode() for k, v in scope.get("headers", [])}
                session = await self._admit(sid, headers, send, f"no MCP session at {path}")
                if session is None:
                    return None
                length = int(headers.get("content-length") or 0)
                if length > MAX_BODY:
                    return await _send_json(send, 413, f"request body over {MAX_BODY} bytes")
                session.last_used = time.monotonic()
                scope = {
                    **scope,
                    "path": "/mcp",
                    "raw_path": b"/mcp",
                    "state": {**(scope.get("state") or {}), "cw_session": sid},
                }
            elif path.startswith("/web/"):
                # the session's web pages (GUI interface), behind the same agent token
                sid, _, rest = path[5:].partition("/")
                headers = {k.decode().lower(): v.decode() for k, v in scope.get("headers", [])}
                session = await self._admit(sid, headers, send, f"no session at {path}")
                if session is None:
                    return None
                if "browser" not in session.env.env.services:
                    return await _send_json(
                        send, 404, "this session has no web pages (add the 'browser' service)"
                    )
                session.last_used = time.monotonic()
                if session.web is None:
                    from compoworld.interfaces.webapp import web_app

                    session.web = web_app(session.env.env, prefix=f"/web/{sid}")
                sub = "/" + rest
                return await session.web(
                    {**scope, "path": sub, "raw_path": sub.encode(), "root_path": ""}, receive, send
                )
            elif path.startswith("/sessions"):
                length = int(
                    dict((k.decode().lower(), v.decode()) for k, v in scope.get("headers", [])).get(
                        "content-length"
                    )
                    or 0
                )
                if length > MAX_BODY:
                    return await _send_json(send, 413, f"request body over {MAX_BODY} bytes")
        await self.app(scope, receive, send)


async def _send_json(send: Any, status: int, message: str) -> None:
    data = json.dumps({"error": {"code": status, "message": message}}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": data})
