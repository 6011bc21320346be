"""Transport hygiene of `serve http`: TCP_NODELAY on every connection, slow headers timed out, a
connection limit with a clear refusal, chunked bodies counted as they stream, lone surrogates 400,
and any control call renewing a session's lease."""

from __future__ import annotations

import asyncio
import select
import socket
import threading
import time
from pathlib import Path

import httpx2
import pytest
import uvicorn

from compoworld.serve.http import MAX_BODY, Store, build_app
from compoworld.serve.transport import guarded_protocol, listen_socket
from tests.serve.test_hardening import _free_port

CONTROL = {"Authorization": "Bearer control-secret"}


def test_the_listening_socket_gives_every_connection_tcp_nodelay() -> None:
    async def main() -> tuple[int, int]:
        seen: list[int] = []

        async def on(reader, writer) -> None:
            seen.append(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        got = []
        for sock in (listen_socket("127.0.0.1", 0), _plain_socket()):
            server = await asyncio.start_server(on, sock=sock)
            _, w = await asyncio.open_connection(*sock.getsockname()[:2])
            while len(seen) < len(got) + 1:
                await asyncio.sleep(0.01)
            got.append(seen[-1])
            w.close()
            server.close()
        return got[0], got[1]

    ours, plain = asyncio.run(main())
    assert ours == 1
    assert plain == 0  # the bug: a socket made without IPPROTO_TCP never gets it from asyncio


def _plain_socket() -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    return s


@pytest.fixture
def guarded(tmp_path: Path):
    port = _free_port()
    store = Store({}, "direct", idle_timeout=60, results=tmp_path / "r.jsonl")
    app, _ = build_app(store, "control-secret", f"http://127.0.0.1:{port}")
    config = uvicorn.Config(
        app, log_level="critical", http=guarded_protocol(header_timeout=0.5, max_connections=4)
    )
    server = uvicorn.Server(config)
    sock = listen_socket("127.0.0.1", port)
    th = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    th.start()
    while not server.started:
        time.sleep(0.02)
    yield port, store
    server.should_exit = True
    th.join(5)
    store.close()


def _read_all(s: socket.socket) -> bytes:
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    return data


def test_slow_headers_are_answered_408_and_closed(guarded) -> None:
    port, _ = guarded
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(b"GET /sessions/x/state HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never finished
        data = _read_all(s)
    assert data.startswith(b"HTTP/1.1 408") and b"headers not received" in data


def test_a_client_late_with_its_headers_is_served_while_connections_are_plentiful(guarded) -> None:
    """A client process starved of CPU (many sessions on a loaded box) can be late with its headers:
    while file descriptors are plentiful the deadline is patient, so it is served, not refused."""
    port, _ = guarded
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        time.sleep(1.2)  # past header_timeout (0.5 s), well within its patience (6 x 0.5 s)
        s.sendall(b"Connection: close\r\n\r\n")
        data = _read_all(s)
    assert data.startswith(b"HTTP/1.1 200"), data[:80]


def test_slow_headers_get_the_strict_deadline_once_connections_are_scarce(guarded) -> None:
    port, _ = guarded
    held = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(2)]
    for h in held:  # one answered request each: the server has surely counted them (kept alive after)
        h.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert h.recv(65536).startswith(b"HTTP/1.1 200")
    try:  # 3 of 4 connections open: more than half, so a slow client now costs others their slot
        with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            data = _read_all(s)
        assert data.startswith(b"HTTP/1.1 408") and b"within 0.5 s" in data
    finally:
        for h in held:
            h.close()


def test_connections_past_the_limit_get_an_immediate_503(guarded) -> None:
    port, _ = guarded
    held = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(4)]
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
            data = _read_all(s)
        assert data.startswith(b"HTTP/1.1 503") and b"too many connections (limit 4)" in data
    finally:
        for h in held:
            h.close()


def test_a_chunked_body_is_refused_as_it_streams(guarded) -> None:
    port, _ = guarded
    chunk = b"x" * 65536
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(
            b"POST /web/abc/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer t\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        reply = b""
        while sent < (1 << 30):  # a 1 GiB body, unless the server answers first
            try:
                s.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(chunk)
            if select.select([s], [], [], 0)[0]:
                reply = s.recv(65536)
                break
        if not reply:
            reply = s.recv(65536)
    assert reply.startswith(b"HTTP/1.1 413") or reply.startswith(b"HTTP/1.1 404"), reply[:80]
    assert sent <= 32 * MAX_BODY  # refused after the limit (plus socket buffers), not after a gigabyte


def test_a_chunked_control_body_past_the_limit_is_413(guarded) -> None:
    port, _ = guarded

    def body():
        for _ in range(40):
            yield b"y" * 65536

    r = httpx2.post(f"http://127.0.0.1:{port}/sessions", content=body(), headers=CONTROL)
    assert r.status_code == 413


def test_a_lone_surrogate_is_a_400_and_control_calls_renew_the_lease(guarded) -> None:
    port, store = guarded
    url = f"http://127.0.0.1:{port}"
    made = httpx2.post(f"{url}/sessions", json={"services": ["email"]}, headers=CONTROL).json()
    sid = made["session_id"]
    r = httpx2.post(
        f"{url}/sessions",
        content=b'{"services": ["email"], "size": "\\ud800"}',
        headers={**CONTROL, "content-type": "application/json"},
    )
    assert r.status_code == 400 and "lone surrogate" in r.json()["error"]["message"]
    store.sessions[sid].last_used -= 30  # as if idle for half its timeout
    before = store.sessions[sid].last_used
    assert httpx2.get(f"{url}/sessions/{sid}/state", headers=CONTROL).status_code == 200
    assert store.sessions[sid].last_used > before
