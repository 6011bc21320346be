"""The one client for OpenAI-compatible endpoints (vLLM, SGLang, llama.cpp, hosted APIs).

Configured by arguments or COMPOWORLD_BASE_URL / COMPOWORLD_MODEL / COMPOWORLD_API_KEY. Requests go
through the `openai` SDK; this layer owns timeouts and retries with exponential backoff on 429,
5xx and connection errors, so callers see one of three outcomes: a reply, `EndpointTimeout`, or
`EndpointError` (with the HTTP status when there was one).
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from typing import Any

import openai
from openai import AsyncOpenAI


class EndpointError(RuntimeError):
    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class EndpointTimeout(EndpointError):
    pass


@dataclass(frozen=True)
class LLMConfig:
    base_url: str
    model: str
    api_key: str = "EMPTY"
    timeout: float = 120.0
    max_retries: int = 4
    backoff: float = 0.5  # first retry delay in seconds; doubles each retry
    max_backoff: float = 16.0
    temperature: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_env(
        cls, base_url: str | None = None, model: str | None = None, api_key: str | None = None, **kw: Any
    ) -> LLMConfig:
        url = base_url or os.environ.get("COMPOWORLD_BASE_URL")
        name = model or os.environ.get("COMPOWORLD_MODEL")
        if not url or not name:
            missing = [
                n
                for n, v in (("--base-url / COMPOWORLD_BASE_URL", url), ("--model / COMPOWORLD_MODEL", name))
                if not v
            ]
            raise ValueError(f"no model endpoint configured: set {' and '.join(missing)}")
        return cls(
            base_url=url.rstrip("/"),
            model=name,
            api_key=api_key or os.environ.get("COMPOWORLD_API_KEY") or "EMPTY",
            **kw,
        )


@dataclass(frozen=True)
class Reply:
    message: dict[str, Any]  # the assistant message as plain data (role, content, tool_calls)
    usage: dict[str, int]
    finish_reason: str | None
    retries: int


class LLMClient:
    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self._client = AsyncOpenAI(
            base_url=config.base_url, api_key=config.api_key, max_retries=0, timeout=config.timeout
        )

    async def chat(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None, **kw: Any
    ) -> Reply:
        cfg = self.config
        args: dict[str, Any] = {"model": cfg.model, "messages": messages, **cfg.extra, **kw}
        if tools:
            # Same JSON on the wire, but the SDK does not re-validate and transform a list of
            # hundreds of plain-dict schemas on every request: ~20 ms -> ~5 ms of CPU per call
            # (measured by benchmarks/rollout.py).
            args["extra_body"] = {**args.get("extra_body", {}), "tools": tools}
        if cfg.temperature is not None:
            args.setdefault("temperature", cfg.temperature)
        delay = cfg.backoff
        for attempt in range(cfg.max_retries + 1):
            try:
                resp = await self._client.chat.completions.create(**args)
                return self._reply(resp, attempt)
            except openai.APITimeoutError as e:
                err: EndpointError = EndpointTimeout(
                    f"the endpoint did not answer within {cfg.timeout}s: {e}"
                )
            except openai.APIConnectionError as e:
                err = EndpointError(f"cannot reach {cfg.base_url}: {e}")
            except openai.APIStatusError as e:
                err = EndpointError(f"the endpoint answered {e.status_code}: {_detail(e)}", e.status_code)
                if e.status_code != 429 and e.status_code < 500:
                    raise err from None  # 4xx other than 429 will not get better by retrying
            except openai.APIResponseValidationError as e:
                raise EndpointError(f"the endpoint's answer is not a chat completion: {e}") from None
            if attempt == cfg.max_retries:
                raise err
            await asyncio.sleep(min(delay, cfg.max_backoff))
            delay *= 2
        raise AssertionError("unreachable")

    @staticmethod
    def _reply(resp: Any, retries: int) -> Reply:
        if not resp.choices:
            raise EndpointError("the endpoint returned no choices")
        choice = resp.choices[0]
        msg = choice.message
        message: dict[str, Any] = {"role": "assistant", "content": msg.content}
        calls = []
        for tc in msg.tool_calls or []:
            fn = getattr(tc, "function", None)
            calls.append(
                {
                    "id": tc.id or f"call_{len(calls)}",
                    "type": "function",
                    "function": {
                        "name": getattr(fn, "name", None) or "",
                        "arguments": getattr(fn, "arguments", None) or "",
                    },
                }
            )
        if calls:
            message["tool_calls"] = calls
        u = resp.usage
        usage = {
            "prompt_tokens": getattr(u, "prompt_tokens", 0) or 0,
            "completion_tokens": getattr(u, "completion_tokens", 0) or 0,
        }
        return Reply(message=message, usage=usage, finish_reason=choice.finish_reason, retries=retries)

    async def close(self) -> None:
        await self._client.close()


def _detail(e: Any) -> str:
    try:
        body = e.response.json()
        if isinstance(body, dict):
            err = body.get("error", body)
            return str(err.get("message", err) if isinstance(err, dict) else err)[:300]
    except Exception:  # noqa: BLE001 (a body that is not JSON)
        pass
    return str(e)[:300]
