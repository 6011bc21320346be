"""Helpers every service shares: cursors and pagination, text search, argument parsing."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, TypeVar

from compoworld.core.clock import parse_time
from compoworld.core.envelope import InvalidArguments

T = TypeVar("T")
EMAIL_RE = re.compile(r"^[A-Za-z0-9._%+'-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$")
_WS = re.compile(r"\s+")


def encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None, field: str = "cursor") -> int:
    if not cursor:
        return 0
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        kind, _, num = raw.partition(":")
        if kind != "o" or not num.isdigit():
            raise ValueError
        return int(num)
    except (ValueError, UnicodeDecodeError):
        raise InvalidArguments(
            f"'{field}' is not a cursor this service issued; pass the value of a previous response's "
            "next cursor, or omit it for the first page"
        ) from None


def paginate(
    items: Sequence[T], cursor: str | None, limit: int, field: str = "cursor"
) -> tuple[list[T], str | None]:
    """One page of `items` and the cursor of the next page (None on the last page)."""
    start = decode_cursor(cursor, field)
    page = list(items[start : start + limit])
    nxt = start + limit
    return page, (encode_cursor(nxt) if nxt < len(items) else None)


def check_limit(value: int, field: str, lo: int = 1, hi: int = 1000) -> int:
    if not lo <= value <= hi:
        raise InvalidArguments(f"'{field}' must be between {lo} and {hi}, got {value}")
    return value


def norm(text: Any) -> str:
    """Case- and whitespace-insensitive form used for matching text the way a person would."""
    return _WS.sub(" ", str(text)).strip().casefold()


def haystack(*fields: Any) -> str:
    """The text `matches` searches: the normalised fields, joined (cache it per record)."""
    return " ".join(norm(f) for f in fields if f)


def matches(query: str, *fields: Any) -> bool:
    """True when every word of `query` occurs in one of `fields` (case-insensitive)."""
    return matches_text(query, haystack(*fields))


def matches_text(query: str, hay: str) -> bool:
    """`matches` over a prepared `haystack`."""
    return all(w in hay for w in norm(query).split())


def valid_email(value: str) -> bool:
    return bool(EMAIL_RE.match(value or ""))


def check_emails(values: Iterable[str], field: str) -> list[str]:
    out = []
    for v in values:
        if not isinstance(v, str) or not valid_email(v.strip()):
            raise InvalidArguments(f"'{field}' contains {v!r}, which is not a valid email address")
        out.append(v.strip().lower())
    return out


def parse_datetime_arg(value: str, field: str) -> datetime:
    try:
        return parse_time(value)
    except (ValueError, TypeError, AttributeError):
        raise InvalidArguments(
            f"'{field}' must be an ISO 8601 datetime such as '2026-03-02T09:00:00Z', got {value!r}"
        ) from None
