"""A local OpenAI-compatible chat-completions server that answers from a script.

Tests start it on 127.0.0.1, point the real client at it over HTTP, and inspect what it received.
It shows the plumbing; it is never presented as a model's result.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Action = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]


def tool_calls(*calls: tuple[str, Any], content: str | None = None) -> dict[str, Any]:
    """An assistant message with tool calls; arguments may be a dict or a raw string (to send bad JSON)."""
    return {
        "message": {
            "role": "assistant",
            "content": content,
            "tool_calls": [
                {
                    "id": f"call_{i}_{name}",
                    "type": "function",
                    "function": {
                        "name": name,
                        "arguments": args if isinstance(args, str) else json.dumps(args),
                    },
                }
                for i, (name, args) in enumerate(calls)
            ],
        }
    }


def say(text: str) -> dict[str, Any]:
    return {"message": {"role": "assistant", "content": text}}


class ScriptedServer:
    def __init__(self, script: list[Action] | None = None, default: Action | None = None) -> None:
        self.script: deque[Action] = deque(script or [])
        self.default = default
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                with server.lock:
                    server.requests.append(body)
                    action = server.script.popleft() if server.script else server.default
                if callable(action):
                    action = action(body)
                if action is None:
                    return self._send(500, {"error": {"message": "script exhausted"}})
                if "sleep" in action:
                    time.sleep(action["sleep"])
                if "status" in action:
                    return self._send(
                        action["status"],
                        {"error": {"message": action.get("error", "scripted error"), "type": "scripted"}},
                    )
                msg = action["message"]
                payload = {
                    "id": f"chatcmpl-{len(server.requests)}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", "m"),
                    "choices": [
                        {
                            "index": 0,
                            "message": msg,
                            "finish_reason": "tool_calls" if msg.get("tool_calls") else "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                }
                self._send(200, payload)

            def _send(self, code: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
