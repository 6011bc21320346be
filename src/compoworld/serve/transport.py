"""Transport hygiene for `serve http` and the router: what uvicorn's HTTP/1.1 protocol leaves open.

- TCP_NODELAY on every socket (`listen_socket` makes the listening socket with IPPROTO_TCP, so
  asyncio sets it on each accepted one, and the protocol sets it again): without it every small
  reply waits for the client's delayed ACK (~40 ms per call);
- a header deadline: a client has `header_timeout` seconds from connecting (or from its next
  request's first byte) to finish a request's headers, or it gets a 408 and is closed (slowloris).
  A slow client costs only a file descriptor, so the deadline is strict only while descriptors are
  scarce (more than half of `max_connections` open); otherwise it is `PATIENCE` times longer, so a
  client process starved of CPU (200 sessions on a loaded box) is not refused for its own lag;
- a body deadline: a body that stalls for `body_timeout` seconds between chunks is cut off;
- a connection limit: past `max_connections` open connections a new one gets an immediate 503 and
  is closed, so file descriptors are freed at once and the server never stops accepting.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import resource
import socket
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_TIMEOUT = 10.0
BODY_TIMEOUT = 30.0
PATIENCE = 6  # the header deadline, as a multiple of header_timeout, while connections are plentiful


def max_connections_default() -> int:
    """What the process's file descriptors allow, leaving room for files, pipes and upstreams."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or soft < hard):
        with contextlib.suppress(ValueError, OSError):  # raise the soft limit as far as allowed
            resource.setrlimit(
                resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else 65536, hard)
            )
            soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return max(16, min(4096, int(soft) - 128))


def listen_socket(host: str, port: int) -> socket.socket:
    """A bound TCP socket made with IPPROTO_TCP (asyncio only sets TCP_NODELAY on such sockets)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    return sock


def _raw_response(status: int, reason: str, message: str) -> bytes:
    body = json.dumps({"error": {"code": status, "message": message}}).encode()
    return (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode() + body


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the deadlines and the connection limit above."""

    header_timeout = HEADER_TIMEOUT
    body_timeout = BODY_TIMEOUT
    max_connections = 1024

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._deadline: asyncio.TimerHandle | None = None
        self._waited = 0.0  # seconds of header deadline this request has had
        if len(self.connections) > self.max_connections:
            transport.write(
                _raw_response(
                    503,
                    "Service Unavailable",
                    f"too many connections (limit {self.max_connections}); retry later",
                )
            )
            transport.close()
            return
        self._arm(self.header_timeout, self._headers_late)

    def _arm(self, seconds: float, handler: Any) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        if handler == self._headers_late:
            self._waited = seconds
        self._deadline = self.loop.call_later(seconds, handler)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        state = self.conn.their_state
        if state is h11.IDLE:  # still reading a request's headers: the deadline keeps running
            if self._deadline is None:
                self._arm(self.header_timeout, self._headers_late)
        elif state is h11.SEND_BODY:  # each chunk of the body restarts the body deadline
            self._arm(self.body_timeout, self._body_late)
        else:
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._disarm()  # the keep-alive timer runs until the next request's first byte

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _headers_late(self) -> None:
        self._deadline = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        if self.cycle is not None and not self.cycle.response_complete:
            return  # a request is being answered; its own timers apply
        scarce = 2 * len(self.connections) > self.max_connections
        if not scarce and self._waited < PATIENCE * self.header_timeout:
            waited = self._waited
            self._arm(self.header_timeout, self._headers_late)
            self._waited = waited + self.header_timeout
            return
        self.transport.write(
            _raw_response(408, "Request Timeout", f"request headers not received within {self._waited:g} s")
        )
        self.transport.close()

    def _body_late(self) -> None:
        self._deadline = None
        if self.transport.is_closing() or self.conn.their_state is not h11.SEND_BODY:
            return
        self.transport.close()  # the app sees a disconnect; nothing of the request ran


def guarded_protocol(
    header_timeout: float = HEADER_TIMEOUT,
    body_timeout: float = BODY_TIMEOUT,
    max_connections: int | None = None,
) -> type[GuardedH11Protocol]:
    """The protocol class to give uvicorn (`uvicorn.Config(app, http=...)`)."""
    return type(
        "GuardedH11Protocol",
        (GuardedH11Protocol,),
        {
            "header_timeout": header_timeout,
            "body_timeout": body_timeout,
            "max_connections": max_connections or max_connections_default(),
        },
    )
