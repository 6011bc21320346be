"""A local OpenAI-compatible chat-completions server that answers from a script.

Tests start it on 127.0.0.1, point the real client at it over HTTP, and inspect what it received.
It shows the plumbing; it is never presented as a model's result.

`profile=` makes it behave as a real server does (`QUIRKS`): its `/models` answer, and
- llama.cpp (llama-cpp-python 0.3.x): ignores `tools` unless `tool_choice` is sent (answers text),
  answers 500 to an assistant `content: null` (its chat template concatenates strings), and 400
  `context_length_exceeded` past `context` tokens;
- vLLM, SGLang, OpenAI: their own overflow messages (vLLM also 400s on tool_choice auto when started
  without --enable-auto-tool-choice, with `tool_choice_ok=False`);
- Ollama: no overflow error (it truncates).
Any profile can be made slow (`slow=seconds` for the first `slow_requests` requests). Prompt tokens are
counted as one per 4 characters of the request's messages and tools.
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


def overflow_error(profile: str, tokens: int, limit: int) -> dict[str, Any]:
    """The 400 body each server sends when a prompt does not fit (as they word it)."""
    if profile == "llamacpp":
        return {
            "message": f"Requested tokens ({tokens}) exceed context window of {limit}",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    if profile == "sglang":
        return {
            "message": f"The input ({tokens} tokens) is longer than the model's context length ({limit} tokens).",
            "type": "BadRequestError",
        }
    if profile == "openai":
        return {
            "message": f"This model's maximum context length is {limit} tokens. However, your messages "
            f"resulted in {tokens} tokens. Please reduce the length of the messages.",
            "type": "invalid_request_error",
            "code": "context_length_exceeded",
        }
    return {  # vLLM
        "message": f"This model's maximum context length is {limit} tokens. However, you requested "
        f"{tokens} tokens in the messages, Please reduce the length of the messages.",
        "type": "BadRequestError",
        "code": 400,
    }


QUIRKS: dict[str, dict[str, Any]] = {
    "llamacpp": {"owned_by": "me", "needs_tool_choice": True, "null_content_500": True},
    "vllm": {"owned_by": "vllm", "max_model_len": True},
    "sglang": {"owned_by": "sglang", "max_model_len": True},
    "ollama": {"owned_by": "library", "no_overflow": True},
    "openai": {"owned_by": "system"},
    "unknown-llamacpp": {"owned_by": "someone", "needs_tool_choice": True, "null_content_500": True},
}


class ScriptedServer:
    def __init__(
        self,
        script: list[Action] | None = None,
        default: Action | None = None,
        profile: str | None = None,
        context: int | None = None,
        slow: float = 0.0,
        slow_requests: int = 1 << 30,
        tool_choice_ok: bool = True,
    ) -> None:
        self.script: deque[Action] = deque(script or [])
        self.default = default
        self.requests: list[dict[str, Any]] = []
        self.prompt_tokens: list[int] = []  # per chat request, as this server counts them
        self.quirks_hit: list[str] = []
        self.profile = profile
        self.quirks = QUIRKS.get(profile or "", {})
        self.context = context
        self.slow, self.slow_requests = slow, slow_requests
        self.tool_choice_ok = tool_choice_ok
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                if server.profile is None or not self.path.rstrip("/").endswith("/models"):
                    return self._send(404, {"error": {"message": "not found"}})
                model: dict[str, Any] = {
                    "id": "scripted",
                    "object": "model",
                    "owned_by": server.quirks["owned_by"],
                }
                if server.quirks.get("max_model_len") and server.context:
                    model["max_model_len"] = server.context
                self._send(200, {"object": "list", "data": [model]})

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                q = server.quirks
                tokens = len(json.dumps([body.get("messages"), body.get("tools")])) // 4
                with server.lock:
                    n = len(server.requests)
                    server.requests.append(body)
                    server.prompt_tokens.append(tokens)
                if server.slow and n < server.slow_requests:
                    time.sleep(server.slow)
                if body.get("tool_choice") == "auto" and not server.tool_choice_ok:
                    server.quirks_hit.append("tool_choice refused")
                    return self._send(
                        400,
                        {
                            "error": {
                                "message": '"auto" tool choice requires --enable-auto-tool-choice and '
                                "--tool-call-parser to be set",
                                "type": "BadRequestError",
                            }
                        },
                    )
                if q.get("null_content_500") and any(
                    m.get("content") is None for m in body.get("messages", [])
                ):
                    server.quirks_hit.append("null content")
                    return self._send(
                        500, {"error": {"message": 'can only concatenate str (not "NoneType") to str'}}
                    )
                if server.context and not q.get("no_overflow") and tokens > server.context:
                    server.quirks_hit.append("overflow")
                    return self._send(
                        400, {"error": overflow_error(server.profile or "vllm", tokens, server.context)}
                    )
                if q.get("needs_tool_choice") and body.get("tools") and "tool_choice" not in body:
                    server.quirks_hit.append("tools ignored")
                    return self._answer(body, {"role": "assistant", "content": "I will help with that."})
                with server.lock:
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
                        action.get("headers"),
                    )
                self._answer(body, action["message"], action.get("completion_tokens", 5))

            def _answer(self, body: dict[str, Any], msg: dict[str, Any], completion_tokens: int = 5) -> None:
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
                    "usage": {  # an action's completion_tokens: a server that ignores max_tokens
                        "prompt_tokens": 10,
                        "completion_tokens": completion_tokens,
                        "total_tokens": 10 + completion_tokens,
                    },
                }
                self._send(200, payload)

            def _send(
                self, code: int, payload: dict[str, Any], headers: dict[str, str] | None = None
            ) -> None:
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda *a: None  # a client that gave up (timeout) closed the socket
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
