"""Reading structured answers out of model replies: the first JSON object in a text.

Models wrap JSON in prose, Markdown fences or both; small ones also emit a tool call's arguments as
text. Nothing here evaluates what it reads: a reply is parsed as JSON data or it is not.
"""

from __future__ import annotations

import json
from typing import Any


def first_json_object(text: str | None) -> dict[str, Any] | None:
    """The first `{...}` in `text` that parses as a JSON object (fenced or bare), else None."""
    if not text:
        return None
    dec = json.JSONDecoder()
    i = text.find("{")
    while i != -1:
        try:
            obj, _ = dec.raw_decode(text, i)
        except json.JSONDecodeError:
            obj = None
        if isinstance(obj, dict):
            return obj
        i = text.find("{", i + 1)
    return None


def call_arguments(raw: Any) -> dict[str, Any] | None:
    """A tool call's arguments as an object (a JSON string or already a dict), else None."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            v = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError:
            return first_json_object(raw)
        return v if isinstance(v, dict) else None
    return None
