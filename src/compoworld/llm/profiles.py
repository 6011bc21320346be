"""Known OpenAI-compatible servers and how each wants its requests shaped.

A profile is chosen with `--server-profile` (or `LLMConfig.profile`), or detected from the server's
`/models` answer. What a profile cannot know in advance (a server that rejects `content: null`, the
context window) the client also learns from the server's own errors and records.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Profile:
    name: str
    # `tool_choice: "auto"` with every request that offers tools. llama.cpp's servers ignore
    # `tools` without it; the others accept it. Off only for servers that reject the field.
    tool_choice: bool = True
    # Assistant messages go back with `content: ""` instead of `null` (llama.cpp's chat templates
    # concatenate content as a string and answer 500 to null).
    string_content: bool = False
    # The request field for the completion cap: OpenAI's reasoning models refuse `max_tokens`.
    max_tokens_field: str = "max_tokens"
    note: str = ""


PROFILES: dict[str, Profile] = {
    "generic": Profile("generic", note="unknown server: tool_choice auto; null content learned from a 500"),
    "openai": Profile("openai", max_tokens_field="max_completion_tokens", note="OpenAI and hosted APIs"),
    "vllm": Profile(
        "vllm",
        note="needs --enable-auto-tool-choice --tool-call-parser for tool_choice auto",
    ),
    "sglang": Profile("sglang", note="needs --tool-call-parser for tool calls"),
    "llamacpp": Profile(
        "llamacpp",
        string_content=True,
        note="llama.cpp server / llama-cpp-python: ignores tools without tool_choice; 500 on null content",
    ),
    "ollama": Profile("ollama", string_content=True, note="Ollama's /v1: truncates past num_ctx"),
}
PROFILE_NAMES = ("auto", *PROFILES)


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(
            f"unknown server profile {name!r}: expected one of {', '.join(PROFILE_NAMES)}"
        ) from None


def detect(models: dict[str, Any]) -> tuple[str, int | None]:
    """(profile name, context window or None) from a `/models` answer.

    vLLM says `owned_by: "vllm"` and `max_model_len`; SGLang `owned_by: "sglang"`; llama-cpp-python
    `owned_by: "me"`, llama.cpp's own server `owned_by: "llamacpp"` with `meta.n_ctx_train`; Ollama
    `owned_by: "library"` (or an `ollama` id); OpenAI `owned_by: "openai"` / `"system"`.
    """
    data = models.get("data") if isinstance(models, dict) else None
    first = data[0] if isinstance(data, list) and data and isinstance(data[0], dict) else {}
    owner = str(first.get("owned_by", "")).lower()
    ctx = None
    for key in ("max_model_len", "context_length", "context_window", "n_ctx"):
        if isinstance(first.get(key), int):
            ctx = first[key]
            break
    meta = first.get("meta")
    if ctx is None and isinstance(meta, dict):
        for key in ("n_ctx", "n_ctx_train"):
            if isinstance(meta.get(key), int):
                ctx = meta[key]
                break
    if owner == "vllm":
        return "vllm", ctx
    if owner == "sglang":
        return "sglang", ctx
    if owner in ("me", "llamacpp", "llama.cpp") or isinstance(meta, dict) and "n_ctx_train" in meta:
        return "llamacpp", ctx
    if owner in ("library", "ollama") or "ollama" in str(models.get("object", "")):
        return "ollama", ctx
    if owner in ("openai", "system", "openai-internal"):
        return "openai", ctx
    return "generic", ctx


# What servers say when a prompt does not fit (vLLM, SGLang, llama.cpp, llama-cpp-python, OpenAI).
_OVERFLOW = re.compile(
    r"context_length_exceeded|exceed_context_size|maximum context length|context window|"
    r"context length|context size|exceeds? the (?:available )?context|too many tokens|prompt is too long|"
    r"maximum allowed length",
    re.I,
)
_LIMIT = re.compile(
    r"(?:maximum context length(?: is)?|context window(?: of)?|context length(?: of| is)?|"
    r"context size(?: of| is)?|n_ctx\W{0,3}|model's context length \(|maximum allowed length \()\s*(\d{3,8})",
    re.I,
)


def is_overflow(status: int | None, text: str) -> bool:
    return status in (400, 413, 422, 500) and bool(_OVERFLOW.search(text))


def overflow_limit(text: str) -> int | None:
    m = _LIMIT.search(text)
    return int(m.group(1)) if m else None


def estimate_tokens(text: str) -> int:
    """A conservative token count without a tokenizer: one token per 3 characters (BPE tokenizers
    give 3.5 to 4.5 characters per token on English and JSON, so this overestimates)."""
    return (len(text) + 2) // 3
