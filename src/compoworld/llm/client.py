"""The one client for OpenAI-compatible endpoints (vLLM, SGLang, llama.cpp, Ollama, hosted APIs).

Configured by arguments or COMPOWORLD_BASE_URL / COMPOWORLD_MODEL / COMPOWORLD_API_KEY. Requests go
through the `openai` SDK; this layer owns what real servers need:

- request shapes per server profile (`compoworld.llm.profiles`): `tool_choice: "auto"` whenever
  tools are offered, `content: ""` for servers that reject `null` (set by the profile, or learned
  from the server's 5xx on a request that carried a null content), the completion cap (`max_tokens`,
  always sent);
- context limits: an overflow is its own error, `ContextOverflow`, never retried, and the window it
  names (or that `/models` gives) is learned;
- retries with exponential backoff on 429, 5xx and connection errors that honour `Retry-After`;
  a request that times out is cancelled (its connection closed) and retried at most
  `timeout_retries` times, after a pause that lets a single-slot server drain the abandoned one;
- a record of every attempt, kept or abandoned, on the reply or on the error.

Callers see one of four outcomes: a `Reply`, `EndpointTimeout`, `ContextOverflow` or `EndpointError`
(with the HTTP status when there was one).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass, field
from typing import Any

import openai
from openai import AsyncOpenAI

from compoworld.llm.profiles import (
    PROFILE_NAMES,
    Profile,
    detect,
    estimate_tokens,
    get_profile,
    is_overflow,
    overflow_limit,
)


class EndpointError(RuntimeError):
    def __init__(self, message: str, status: int | None = None, attempts: list[dict] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.attempts: list[dict[str, Any]] = attempts or []


class EndpointTimeout(EndpointError):
    pass


class ServerOverrun(EndpointError):
    """The server ignored the request's `max_tokens` (it answered with more completion tokens), or
    ran past the deadline after having done so: waiting longer or retrying will not help."""

    def __init__(self, message: str, tokens: int, cap: int, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.tokens, self.cap = tokens, cap


class ContextOverflow(EndpointError):
    """The prompt does not fit the model's context window (`limit` tokens, when the server says)."""

    def __init__(self, message: str, limit: int | None, prompt_tokens: int, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.limit = limit
        self.prompt_tokens = prompt_tokens  # our estimate of what was sent


def check_base_url(url: str) -> str:
    """An endpoint URL the client can use, or ValueError in one line saying what to add."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(
            f"base URL {url!r} has no http:// or https:// scheme: add http:// (e.g. http://{url.split('://')[-1]})"
        )
    return url


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
    max_tokens: int = 4096  # completion cap of one request; always sent
    profile: str = "auto"  # a name from PROFILES, or auto: detect from /models
    context_window: int | None = None  # tokens; None: learn from /models or an overflow error
    timeout_retries: int = 1  # retries after a timeout (each can cost the server a whole timeout)
    max_retry_after: float = 120.0  # the longest Retry-After honoured, in seconds
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.profile not in PROFILE_NAMES:
            get_profile(self.profile)  # raises the one-line error
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, not {self.max_tokens}")

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
        check_base_url(url)
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
    attempts: tuple[dict[str, Any], ...] = ()  # the abandoned attempts before this reply
    seconds: float = 0.0


class LLMClient:
    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self._client = AsyncOpenAI(
            base_url=config.base_url, api_key=config.api_key, max_retries=0, timeout=config.timeout
        )
        self.profile: Profile | None = None if config.profile == "auto" else get_profile(config.profile)
        self.detected: str | None = None
        self.context_window: int | None = config.context_window
        self.string_content = bool(self.profile and self.profile.string_content)
        self.learned: list[str] = []  # what the server's answers taught us, in order
        self.overrun: tuple[int, int] | None = None  # (tokens, cap) of a reply past its max_tokens
        self._detect_lock = asyncio.Lock()
        self._tools_est: tuple[int, int] = (0, 0)  # (id of the tool list, its token estimate)

    # ---- the server ---------------------------------------------------------------------
    async def detect(self) -> Profile:
        """The profile: configured, or detected once from `/models` (generic when it says nothing).
        `/models` is asked once either way, for the context window."""
        if self.detected is None:
            async with self._detect_lock:
                if self.detected is None:
                    name, ctx = "generic", None
                    try:
                        raw = await self._client.models.with_raw_response.list(
                            timeout=min(self.config.timeout, 10.0)
                        )
                        name, ctx = detect(raw.http_response.json())
                    except (openai.OpenAIError, ValueError):
                        pass  # no /models: the chat request will say what is wrong
                    self.detected = name
                    if self.profile is None:
                        self.profile = get_profile(name)
                        self.string_content = self.string_content or self.profile.string_content
                    if self.context_window is None and ctx:
                        self.context_window = ctx
        assert self.profile is not None
        return self.profile

    async def tools_fit(self, tools: list[dict[str, Any]]) -> bool | None:
        """Whether a request offering `tools` fits the model's context, asked before any episode: a
        one-token request with the tools and a one-word prompt. False when the server answers with an
        overflow (its window is then learned from the 400), True when it answers, None when it fails
        some other way (the run will say how)."""
        try:
            await self.chat([{"role": "user", "content": "ok"}], tools=tools, max_tokens=1)
        except ContextOverflow:
            return False
        except ServerOverrun:
            return True  # it answered (past the one token): the prompt fit
        except EndpointError:
            return None
        return True

    async def probe(self) -> str | None:
        """None when the endpoint answers at all (any HTTP status), else why it cannot be reached.
        Detects the profile on the way."""
        try:
            await self._client.models.with_raw_response.list(timeout=min(self.config.timeout, 10.0))
        except openai.APIStatusError:
            pass  # it answered: /models is optional
        except openai.APITimeoutError:
            return f"{self.config.base_url} did not answer /models within {min(self.config.timeout, 10.0)}s"
        except openai.APIConnectionError as e:
            return f"cannot reach {self.config.base_url} ({str(e).rstrip('.').lower()})"
        await self.detect()
        return None

    def info(self) -> dict[str, Any]:
        """What a run records about the server: profile, how it was chosen, what was learned."""
        return {
            "profile": self.profile.name if self.profile else self.config.profile,
            "chosen": "detected" if self.config.profile == "auto" else "configured",
            "detected": self.detected,
            "context_window": self.context_window,
            "string_content": self.string_content,
            "max_tokens": self.config.max_tokens,
            "learned": list(self.learned),
        }

    def estimate(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> int:
        """Estimated prompt tokens of a request (conservative; see `estimate_tokens`)."""
        n = estimate_tokens(json.dumps(messages, ensure_ascii=False, default=str))
        if tools:
            if self._tools_est[0] != id(tools):
                self._tools_est = (id(tools), estimate_tokens(json.dumps(tools, ensure_ascii=False)))
            n += self._tools_est[1]
        return n

    # ---- one chat completion --------------------------------------------------------------
    async def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        **kw: Any,
    ) -> Reply:
        cfg = self.config
        profile = await self.detect()
        cap = max_tokens or cfg.max_tokens
        body: dict[str, Any] = {}
        if tools:
            # Same JSON on the wire, but the SDK does not re-validate and transform a list of
            # hundreds of plain-dict schemas on every request: ~20 ms -> ~5 ms of CPU per call
            # (measured by benchmarks/rollout.py).
            body["tools"] = tools
            if profile.tool_choice:
                body["tool_choice"] = "auto"
        if profile.max_tokens_field != "max_tokens":
            body[profile.max_tokens_field] = cap
        base: dict[str, Any] = {"model": cfg.model, **cfg.extra, **kw}
        if profile.max_tokens_field == "max_tokens":
            base.setdefault("max_tokens", cap)
        if cfg.temperature is not None:
            base.setdefault("temperature", cfg.temperature)
        base["extra_body"] = {**base.get("extra_body", {}), **body}
        est: list[int] = []

        def prompt_est() -> int:  # only failures need it: the happy path never serialises the prompt
            if not est:
                est.append(self.estimate(messages, tools))
            return est[0]

        attempts: list[dict[str, Any]] = []
        delay, timeouts, attempt = cfg.backoff, 0, 0
        while True:
            sent = _string_content(messages) if self.string_content else messages
            t0 = time.perf_counter()
            wait, give_up, status = 0.0, False, None
            try:
                resp = await self._client.chat.completions.create(messages=sent, **base)
                reply = self._reply(resp, attempt, attempts, time.perf_counter() - t0)
                got = reply.usage["completion_tokens"]
                if got > cap:  # the server ignored max_tokens: llama.cpp's function-calling path does
                    if self.overrun is None:
                        self.learned.append(f"ignores max_tokens: {got} completion tokens against {cap}")
                    self.overrun = (got, cap)
                    raise ServerOverrun(
                        f"the server ignored max_tokens: {got} completion tokens against a cap of {cap}",
                        tokens=got,
                        cap=cap,
                        attempts=attempts,
                    )
                return reply
            except openai.APITimeoutError:
                # The SDK closes the connection: the request is cancelled on our side.
                if self.overrun is not None:  # it ignores max_tokens: the deadline is its overrun too
                    got, was = self.overrun
                    raise ServerOverrun(
                        f"the endpoint ran past the {cfg.timeout}s deadline, and it ignores max_tokens "
                        f"({got} completion tokens against a cap of {was} earlier)",
                        tokens=got,
                        cap=cap,
                        attempts=[*attempts, _attempt(attempt, "timeout", t0, prompt_est(), None)],
                    ) from None
                timeouts += 1
                err: EndpointError = EndpointTimeout(
                    f"the endpoint did not answer within {cfg.timeout}s ({prompt_est()} prompt tokens "
                    f"estimated, max_tokens {cap})"
                )
                wait = min(cfg.timeout, cfg.max_backoff)  # let a single-slot server drain the abandoned one
                give_up = timeouts > cfg.timeout_retries
            except openai.APIConnectionError as e:
                err = EndpointError(f"cannot reach {cfg.base_url} ({str(e).rstrip('.').lower()})")
            except openai.APIStatusError as e:
                status, detail = e.status_code, _detail(e)
                attempts.append(_attempt(attempt, f"http {status}: {detail}", t0, prompt_est(), status))
                if is_overflow(status, detail):
                    limit = overflow_limit(detail)
                    if limit and limit != self.context_window:
                        self.context_window = limit
                        self.learned.append(f"context_window={limit} from a {status}")
                    raise ContextOverflow(
                        f"the prompt does not fit the model's context ({prompt_est()} tokens estimated"
                        f"{f', window {limit}' if limit else ''}): {detail}",
                        limit=limit or self.context_window,
                        prompt_tokens=prompt_est(),
                        status=status,
                        attempts=attempts,
                    ) from None
                if status >= 500 and not self.string_content and _has_null_content(messages):
                    # llama.cpp's templates fail on content: null; retry at once with "".
                    self.string_content = True
                    self.learned.append(f"string_content from a {status} on a null content")
                    attempt += 1
                    continue
                low = detail.lower()
                if status == 400 and "tool" in low and "auto" in low:
                    raise EndpointError(
                        f"the endpoint refused tool_choice auto ({detail}); start vLLM with "
                        "--enable-auto-tool-choice --tool-call-parser PARSER, SGLang with --tool-call-parser",
                        status,
                        attempts,
                    ) from None
                if status != 429 and status < 500:  # other 4xx will not get better by retrying
                    raise EndpointError(
                        f"the endpoint answered {status}: {detail}", status, attempts
                    ) from None
                err = EndpointError(f"the endpoint answered {status}: {detail}", status)
                wait = _retry_after(e, cfg.max_retry_after)
            except openai.APIResponseValidationError as e:
                raise EndpointError(
                    f"the endpoint's answer is not a chat completion: {e}", attempts=attempts
                ) from None
            if status is None:
                attempts.append(_attempt(attempt, str(err), t0, prompt_est(), None))
            if give_up or attempt >= cfg.max_retries:
                err.attempts = attempts
                raise err
            await asyncio.sleep(max(min(delay, cfg.max_backoff), wait))
            delay *= 2
            attempt += 1

    @staticmethod
    def _reply(resp: Any, retries: int, attempts: list[dict[str, Any]], seconds: float) -> Reply:
        if not resp.choices:
            raise EndpointError("the endpoint returned no choices", attempts=attempts)
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
        return Reply(
            message=message,
            usage=usage,
            finish_reason=choice.finish_reason,
            retries=retries,
            attempts=tuple(attempts),
            seconds=round(seconds, 4),
        )

    async def close(self) -> None:
        await self._client.close()


def _attempt(n: int, error: str, t0: float, prompt_est: int, status: int | None) -> dict[str, Any]:
    """One abandoned attempt: the server may have spent its prompt tokens (and up to max_tokens)."""
    return {
        "attempt": n,
        "error": error[:300],
        "status": status,
        "seconds": round(time.perf_counter() - t0, 4),
        "prompt_tokens_est": prompt_est,
    }


def _has_null_content(messages: list[dict[str, Any]]) -> bool:
    return any(m.get("content") is None for m in messages)


def _string_content(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages with `content: null` sent as `""` (copies only the messages that change)."""
    if not _has_null_content(messages):
        return messages
    return [{**m, "content": ""} if m.get("content") is None else m for m in messages]


def _retry_after(e: Any, cap: float) -> float:
    """Seconds from a Retry-After (or retry-after-ms) header; 0 without one."""
    try:
        headers = e.response.headers
    except AttributeError:
        return 0.0
    for key, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = headers.get(key)
        if raw:
            try:
                return min(max(float(raw) / scale, 0.0), cap)
            except ValueError:
                from email.utils import parsedate_to_datetime

                try:
                    return min(max(parsedate_to_datetime(raw).timestamp() - time.time(), 0.0), cap)
                except (TypeError, ValueError):
                    return 0.0
    return 0.0


def _detail(e: Any) -> str:
    try:
        body = e.response.json()
        if isinstance(body, dict):
            err = body.get("error", body)
            if isinstance(err, dict):
                parts = [str(err.get("message", err))]
                for key in ("code", "type"):
                    if err.get(key) and str(err[key]) not in parts[0]:
                        parts.append(f"({key} {err[key]})")
                return " ".join(parts)[:400]
            return str(err)[:400]
    except Exception:  # noqa: BLE001 (a body that is not JSON)
        pass
    return str(e)[:400]
