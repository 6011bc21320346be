"""A scripted OpenAI-compatible endpoint that also streams (`stream: true` as server-sent events), for
harnesses that only stream: chat completions (OpenCode's AI SDK) and the Responses API (Codex CLI). Its policy sees each request and answers with one
assistant message (content or tool calls); it is plumbing, never a model's result."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Policy = Callable[[dict[str, Any]], dict[str, Any]]  # request body -> {"content"} or {"tool", "args"}


class StreamingServer:
    def __init__(self, policy: Policy) -> None:
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                self._json(
                    {"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "scripted"}]}
                )

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                server.requests.append(body)
                if self.path.rstrip("/").endswith("/responses"):
                    return self._responses(body)
                p = policy(body)
                if p.get("tool"):
                    call = {
                        "index": 0,
                        "id": f"call_{len(server.requests)}",
                        "type": "function",
                        "function": {"name": p["tool"], "arguments": json.dumps(p.get("args", {}))},
                    }
                    delta, reason = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
                else:
                    delta, reason = {"role": "assistant", "content": p.get("content", "")}, "stop"
                usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
                if not body.get("stream"):
                    msg = {k: v for k, v in delta.items() if k != "index"}
                    return self._json(
                        {
                            "id": "c",
                            "object": "chat.completion",
                            "created": 0,
                            "model": "m",
                            "choices": [{"index": 0, "message": msg, "finish_reason": reason}],
                            "usage": usage,
                        }
                    )
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for choices in (
                    [{"index": 0, "delta": delta, "finish_reason": None}],
                    [{"index": 0, "delta": {}, "finish_reason": reason}],
                    [],
                ):
                    chunk = {
                        "id": "c",
                        "object": "chat.completion.chunk",
                        "created": 0,
                        "model": "m",
                        "choices": choices,
                        **({} if choices else {"usage": usage}),
                    }
                    self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

            def _responses(self, body: dict[str, Any]) -> None:
                """The Responses API (Codex CLI), streamed: the policy sees the request as chat
                completions would carry it (tools by name, tool results as role "tool")."""
                names, space = [], {}
                for t in body.get("tools") or []:
                    for u in t.get("tools", []) if t.get("type") == "namespace" else [t]:
                        if u.get("name"):
                            names.append(u["name"])
                            if t.get("type") == "namespace":
                                space[u["name"]] = t["name"]
                items = [i for i in body.get("input") or [] if isinstance(i, dict)]
                seen = {
                    "tools": [{"type": "function", "function": {"name": n}} for n in names],
                    "messages": [{"role": "tool"} for i in items if i.get("type") == "function_call_output"],
                }
                p = policy(seen)
                n = len(server.requests)
                if p.get("tool"):
                    item = {
                        "type": "function_call",
                        "id": f"fc_{n}",
                        "call_id": f"call_{n}",
                        "name": p["tool"],
                        "arguments": json.dumps(p.get("args", {})),
                        "status": "completed",
                    }
                    if p["tool"] in space:
                        item["namespace"] = space[p["tool"]]
                else:
                    item = {
                        "type": "message",
                        "id": f"msg_{n}",
                        "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "output_text", "text": p.get("content", ""), "annotations": []}],
                    }
                usage = {
                    "input_tokens": 10,
                    "output_tokens": 5,
                    "total_tokens": 15,
                    "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens_details": {"reasoning_tokens": 0},
                }
                resp = {
                    "id": f"resp_{n}",
                    "object": "response",
                    "created_at": 0,
                    "model": "m",
                    "status": "completed",
                    "output": [item],
                    "usage": usage,
                }
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for e in (
                    {"type": "response.created", "response": {**resp, "status": "in_progress", "output": []}},
                    {"type": "response.output_item.added", "output_index": 0, "item": item},
                    {"type": "response.output_item.done", "output_index": 0, "item": item},
                    {"type": "response.completed", "response": resp},
                ):
                    self.wfile.write(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode())
                self.wfile.flush()

            def _json(self, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> StreamingServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
