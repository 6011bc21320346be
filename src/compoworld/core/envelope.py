"""The result envelope every call returns, and the errors tools raise to produce it.

`{"success": true, "data": ...}` or
`{"success": false, "error": {"code": int, "type": str, "message": str}}`.
Codes follow HTTP: 400 bad arguments, 404 unknown tool or record, 409 conflict,
422 business rule, 500 a bug in the environment (kept apart from agent errors when scoring).
"""

from __future__ import annotations

import json
from typing import Any

import orjson


class ToolError(Exception):
    """Raised by a tool to fail the call; the environment rolls back and returns an error envelope."""

    code = 500
    type = "server_error"

    def __init__(self, message: str, *, type: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if type is not None:
            self.type = type

    def envelope(self) -> dict[str, Any]:
        return failure(self.code, self.type, self.message)


class InvalidArguments(ToolError):
    code = 400
    type = "invalid_arguments"


class NotFound(ToolError):
    code = 404
    type = "not_found"


class Conflict(ToolError):
    code = 409
    type = "conflict"


class RuleViolation(ToolError):
    """A call that is well formed but breaks a business rule (paying a paid invoice, ...)."""

    code = 422
    type = "business_rule"


def ok(data: Any) -> dict[str, Any]:
    return {"success": True, "data": data}


def failure(code: int, type: str, message: str) -> dict[str, Any]:
    return {"success": False, "error": {"code": code, "type": type, "message": message}}


def envelope_text(envelope: Any) -> str:
    """The envelope as compact JSON text, made by orjson (what an agent reads as the tool result).

    Falls back to the standard library for what orjson refuses (integers past 64 bits, lone
    surrogates), so any envelope a tool can return has a text."""
    try:
        return orjson.dumps(envelope).decode()
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(envelope, ensure_ascii=False, separators=(",", ":"), default=str)


def is_envelope(value: Any) -> bool:
    """True when `value` has exactly the envelope's shape (used by tests and by serving)."""
    if not isinstance(value, dict) or not isinstance(value.get("success"), bool):
        return False
    if "simulated" in value and not isinstance(value["simulated"], bool):
        return False
    keys = set(value) - {"simulated"}  # compiled services say whether the world model answered
    if value["success"]:
        return keys == {"success", "data"}
    err = value.get("error")
    return (
        keys == {"success", "error"}
        and isinstance(err, dict)
        and set(err) == {"code", "type", "message"}
        and isinstance(err["code"], int)
        and isinstance(err["type"], str)
        and isinstance(err["message"], str)
    )


ENVELOPE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "success": {"type": "boolean"},
        "data": {},
        "simulated": {"type": "boolean"},
        "error": {
            "type": "object",
            "properties": {
                "code": {"type": "integer"},
                "type": {"type": "string"},
                "message": {"type": "string"},
            },
            "required": ["code", "type", "message"],
        },
    },
    "required": ["success"],
}
