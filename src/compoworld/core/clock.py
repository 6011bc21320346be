"""Simulated time, deterministic ids and seeded randomness.

Nothing in an environment reads the wall clock, `uuid4` or the global `random` state: time comes
from `SimClock`, ids from `IdFactory`, randomness from `derive_rng`. All three are pure functions of
the environment's seed and state, so the same seed and calls give the same bytes everywhere.
"""

from __future__ import annotations

import hashlib
import random
from datetime import UTC, datetime, timedelta

DEFAULT_START = datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC)  # a Monday, 09:00 UTC


def parse_time(value: str) -> datetime:
    """Parse ISO 8601 (``Z`` or offsets accepted); naive times are taken as UTC."""
    dt = datetime.fromisoformat(value.strip().replace("z", "Z"))
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)


def format_time(dt: datetime) -> str:
    """Canonical form used in all state: UTC, seconds precision, trailing Z."""
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class SimClock:
    """The environment's clock. Tool calls read it; only the harness advances it."""

    __slots__ = ("_now", "_iso")

    def __init__(self, start: datetime | str | None = None) -> None:
        if start is None:
            start = DEFAULT_START
        elif isinstance(start, str):
            start = parse_time(start)
        elif start.tzinfo is None:
            start = start.replace(tzinfo=UTC)
        self._now = start.astimezone(UTC)
        self._iso: str | None = None

    def now(self) -> datetime:
        return self._now

    def iso(self) -> str:
        """The canonical form of now, formatted once per tick (tools stamp it on every write)."""
        s = self._iso
        if s is None:
            s = self._iso = format_time(self._now)
        return s

    def epoch(self) -> float:
        return self._now.timestamp()

    def advance(self, seconds: float = 0, **kwargs: float) -> None:
        self._now += timedelta(seconds=seconds, **kwargs)
        self._iso = None

    def set(self, when: datetime | str) -> None:
        if isinstance(when, str) and when == self._iso and not self._now.microsecond:
            return  # a restore to the time it already is
        self._now = SimClock(when)._now
        self._iso = None


def derive_seed(*parts: object) -> int:
    """A 64-bit seed from any parts, stable across processes (unlike ``hash()``)."""
    digest = hashlib.blake2b(":".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def derive_rng(*parts: object) -> random.Random:
    """A private ``random.Random`` seeded from parts; never the global generator."""
    return random.Random(derive_seed(*parts))


class IdFactory:
    """Deterministic ids: ``prefix`` + a short hash of (seed, namespace, prefix, counter).

    The counters live in the owning service's state, so snapshots restore them and two runs of the
    same calls mint the same ids. Ids look opaque, like real APIs' ids, so agents cannot guess them.
    """

    __slots__ = ("_salt",)

    def __init__(self, seed: int, namespace: str) -> None:
        self._salt = f"{seed}:{namespace}"

    def make(self, prefix: str, n: int, width: int = 12, alphabet: str = "hex") -> str:
        digest = hashlib.blake2b(f"{self._salt}:{prefix}:{n}".encode(), digest_size=16).digest()
        if alphabet == "upper":  # Slack-like ids: C0ABC123...
            chars = "0123456789ABCDEFGHJKLMNPQRSTUVWXYZ"
            num = int.from_bytes(digest, "big")
            out = []
            for _ in range(width):
                num, r = divmod(num, len(chars))
                out.append(chars[r])
            return prefix + "".join(out)
        return prefix + digest.hex()[:width]
