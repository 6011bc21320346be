"""Typed state of the key-value store: Redis string keys with optional expiry (simulated time)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Key(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str  # the key
    value: str
    expires_at: str | None = None
