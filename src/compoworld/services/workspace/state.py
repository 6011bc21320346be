"""Typed state of the workspace: a virtual file tree, one record per file or directory."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str  # the absolute, normalised path
    kind: Literal["file", "dir"]
    content: str | None = None  # text of a file; None for a directory
    modified_at: str
