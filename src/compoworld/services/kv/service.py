"""Key-value store: Redis, modelled on mcp-official-archived_redis.json (the official Redis server).

All four tools of the spec are modelled with their real names and parameters. Expiry follows the
simulated clock, so a key set with expireSeconds disappears when the harness advances time past it;
patterns use Redis glob syntax (*, ?, [abc]).
"""

from __future__ import annotations

import fnmatch
from datetime import timedelta
from typing import Any

from compoworld.core.envelope import InvalidArguments, NotFound
from compoworld.core.resource import Resource
from compoworld.core.service import SeedContext, Service
from compoworld.core.tool import tool
from compoworld.services.kv.state import Key

MAX_VALUE = 512 * 1024


class KvService(Service):
    """Redis: string keys with expiry, glob listing, and deletion."""

    name = "kv"
    domain = "database"
    spec = "mcp-official-archived_redis.json"

    keys = Resource("keys", Key, label="key")

    def seed_data(self, ctx: SeedContext) -> None:
        company, rng = ctx.company, ctx.rng
        for cust in company.customers:
            self.keys.create({"value": cust.tier}, id=f"customer:{cust.id}:tier")
        for p in company.products:
            self.keys.create({"value": str(rng.randrange(0, 500))}, id=f"stock:{p.sku}")
        self.keys.create({"value": "on"}, id="feature:new-dashboard")
        self.keys.create({"value": "off"}, id="feature:beta-api")
        self.keys.create(
            {"value": company.me.email},
            id=f"session:{rng.randrange(10**6):06d}",
        )
        soon = (ctx.clock.now() + timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.keys.create({"value": "1", "expires_at": soon}, id="lock:nightly-report")

    def _live(self, key: str) -> dict[str, Any] | None:
        rec = self.keys.get(key)
        if rec is None or (rec["expires_at"] and rec["expires_at"] <= self.clock.iso()):
            return None
        return rec

    @tool(mutates=True)
    def set(self, key: str, value: str, expireSeconds: float | None = None) -> dict[str, Any]:
        """Set a Redis key-value pair with optional expiration

        Args:
            key: Redis key
            value: Value to store
            expireSeconds: Optional expiration time in seconds
        """
        if not key or len(key) > 1024:
            raise InvalidArguments("'key' must be 1 to 1024 characters")
        if len(value) > MAX_VALUE:
            raise InvalidArguments("'value' is larger than 512 KB")
        expires = None
        if expireSeconds is not None:
            if expireSeconds <= 0 or expireSeconds > 10**9:
                raise InvalidArguments("'expireSeconds' must be a positive number of seconds")
            expires = (self.clock.now() + timedelta(seconds=expireSeconds)).strftime("%Y-%m-%dT%H:%M:%SZ")
        if self.keys.get(key):
            self.keys.update(key, {"value": value, "expires_at": expires})
        else:
            self.keys.create({"value": value, "expires_at": expires}, id=key)
        return {"result": "OK", "key": key}

    @tool
    def get(self, key: str) -> dict[str, Any]:
        """Get value by key from Redis

        Args:
            key: Redis key to retrieve
        """
        rec = self._live(key)
        if rec is None:
            raise NotFound(f"key '{key}' does not exist", type="key_not_found")
        return {"key": key, "value": rec["value"]}

    @tool(mutates=True)
    def delete(self, key: str | list[str]) -> dict[str, Any]:
        """Delete one or more keys from Redis

        Args:
            key: Key or array of keys to delete
        """
        keys = [key] if isinstance(key, str) else key
        if not keys:
            raise InvalidArguments("'key' must name at least one key")
        gone = [k for k in dict.fromkeys(keys) if self._live(k) is not None]
        for k in dict.fromkeys(keys):
            if self.keys.get(k):
                self.keys.delete(k)
        return {"deleted": len(gone)}

    @tool
    def list(self, pattern: str = "*") -> dict[str, Any]:
        """List Redis keys matching a pattern

        Args:
            pattern: Pattern to match keys (default: *)
        """
        keys = sorted(
            k for k in self.keys.rows if fnmatch.fnmatchcase(k, pattern) and self._live(k) is not None
        )
        return {"keys": keys, "count": len(keys)}
