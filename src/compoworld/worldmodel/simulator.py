"""The world model: an LLM proposes a tool's observation and a JSON Patch of the state; the engine
applies the patch to a copy, validates it against the service's typed state model, and commits it
only if it fits. Proposals are cached by (service, state hash, tool, arguments), so replays are
deterministic and cost no model call.

The prompt never carries the whole state (a CRM at the default size is ~32k tokens). It carries the
tables the tool can touch (a compiled tool's resource and its parent; for hand-built tools, the
tables whose names its name and parameters mention), cut to the records its arguments name plus a
bounded sample, and one line per other table (size and fields). It is fitted to `prompt_budget`
estimated tokens. Every request carries `max_tokens`; the client's timeout bounds its time.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
import threading
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from compoworld.core.envelope import failure
from compoworld.core.state import META, canonical_json, digest
from compoworld.llm.client import EndpointError, LLMClient, LLMConfig
from compoworld.llm.profiles import estimate_tokens

SYSTEM = (
    "You simulate one tool of a software service. You get the tool's spec, the relevant part of the "
    "service's current state (tables of records keyed by id: the records the arguments name and a sample; "
    "'tables' gives every table's record count and fields), and the call's arguments. "
    "Answer with one JSON object and nothing "
    'else: {"success": true, "data": <what the tool returns>, "patch": [<RFC 6902 operations on the '
    'state, paths like /table/record_id/field>]} or {"success": false, "error": {"code": <HTTP-style '
    'int>, "type": "<snake_case>", "message": "<why>"}, "patch": []}. A read-only tool has an empty '
    "patch. A failed call changes nothing. Keep every record's fields and types as they are in the state."
)


class SimulationError(ValueError):
    pass


def apply_patch(doc: Any, patch: Any) -> Any:
    """RFC 6902 JSON Patch on a deep copy of `doc` (add, remove, replace, move, copy, test)."""
    if not isinstance(patch, list):
        raise SimulationError("patch is not a list of operations")
    doc = copy.deepcopy(doc)
    for i, op in enumerate(patch):
        if not isinstance(op, dict) or op.get("op") not in (
            "add",
            "remove",
            "replace",
            "move",
            "copy",
            "test",
        ):
            raise SimulationError(f"patch operation {i} is not an RFC 6902 operation: {op!r}")
        if not isinstance(op.get("path"), str):
            raise SimulationError(f"patch operation {i} has no string 'path'")
        kind = op["op"]
        if kind in ("add", "replace", "test") and "value" not in op:
            raise SimulationError(f"patch operation {i} ({kind}) has no 'value'")
        if kind in ("move", "copy"):
            if not isinstance(op.get("from"), str):
                raise SimulationError(f"patch operation {i} ({kind}) has no 'from'")
            value = copy.deepcopy(_get(doc, op["from"], i))
            if kind == "move":
                doc = _remove(doc, op["from"], i)
            doc = _add(doc, op["path"], value, i)
        elif kind == "test":
            if _get(doc, op["path"], i) != op["value"]:
                raise SimulationError(f"patch operation {i}: test failed at {op['path']}")
        elif kind == "remove":
            doc = _remove(doc, op["path"], i)
        elif kind == "replace":
            doc = _remove(doc, op["path"], i)
            doc = _add(doc, op["path"], op["value"], i)
        else:
            doc = _add(doc, op["path"], op["value"], i)
    return doc


def _parts(path: str, i: int) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise SimulationError(f"patch operation {i}: path {path!r} does not start with '/'")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _walk(doc: Any, parts: list[str], i: int) -> Any:
    for p in parts:
        if isinstance(doc, dict) and p in doc:
            doc = doc[p]
        elif isinstance(doc, list) and p.isdigit() and int(p) < len(doc):
            doc = doc[int(p)]
        else:
            raise SimulationError(f"patch operation {i}: no such location /{'/'.join(parts)}")
    return doc


def _get(doc: Any, path: str, i: int) -> Any:
    return _walk(doc, _parts(path, i), i)


def _add(doc: Any, path: str, value: Any, i: int) -> Any:
    parts = _parts(path, i)
    if not parts:
        return value
    parent = _walk(doc, parts[:-1], i)
    last = parts[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        if last == "-":
            parent.append(value)
        elif last.isdigit() and int(last) <= len(parent):
            parent.insert(int(last), value)
        else:
            raise SimulationError(f"patch operation {i}: bad list index in {path}")
    else:
        raise SimulationError(f"patch operation {i}: {path} is inside a scalar")
    return doc


def _remove(doc: Any, path: str, i: int) -> Any:
    parts = _parts(path, i)
    if not parts:
        raise SimulationError(f"patch operation {i}: cannot remove the whole state")
    parent = _walk(doc, parts[:-1], i)
    last = parts[-1]
    if isinstance(parent, dict) and last in parent:
        del parent[last]
    elif isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        del parent[int(last)]
    else:
        raise SimulationError(f"patch operation {i}: nothing at {path} to remove")
    return doc


def parse_proposal(text: str | None) -> dict[str, Any]:
    """The model's JSON object (code fences tolerated), checked for the proposal's shape."""
    if not text or not text.strip():
        raise SimulationError("the world model returned no text")
    body = text.strip()
    fence = re.match(r"^```(?:json)?\s*(.*?)\s*```$", body, re.S)
    if fence:
        body = fence.group(1)
    try:
        prop = json.loads(body)
    except json.JSONDecodeError as e:
        raise SimulationError(f"the world model's answer is not JSON: {e}") from None
    if not isinstance(prop, dict) or not isinstance(prop.get("success"), bool):
        raise SimulationError("the world model's answer has no boolean 'success'")
    if not prop["success"]:
        err = prop.get("error")
        if not (
            isinstance(err, dict) and isinstance(err.get("code"), int) and isinstance(err.get("message"), str)
        ):
            raise SimulationError("a failed proposal needs error.code (int) and error.message")
    prop.setdefault("patch", [])
    return prop


class WorldModel:
    """Simulates tools through `compoworld.llm`; `simulate` returns an envelope and commits valid patches.

    `stats` counts what happened: model calls that answered (`calls`), cache hits, endpoint
    failures (with the last error) and the estimated prompt tokens of every proposal asked for."""

    def __init__(
        self,
        config: LLMConfig,
        cache_path: Path | None = None,
        max_records: int = 20,
        sample: int = 3,
        max_tokens: int = 1024,
        prompt_budget: int = 6000,
    ) -> None:
        self.config = config
        self.max_records = max_records  # records named by the arguments, per table
        self.sample = sample  # other records shown per relevant table
        self.max_tokens = max_tokens
        self.prompt_budget = prompt_budget
        self.cache: dict[str, str] = {}
        self.cache_path = cache_path
        self.calls = 0  # model calls actually made and answered (cache misses)
        self.cache_hits = 0
        self.failures = 0
        self.last_error: str | None = None
        self.prompt_tokens: list[tuple[str, int]] = []  # (service, estimated tokens) per model call
        if cache_path and cache_path.exists():
            for line in cache_path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    rec = json.loads(line)
                    self.cache[rec["key"]] = rec["response"]
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: LLMClient | None = None
        self._lock = threading.Lock()

    # the service call is synchronous; the client is async: run it on a private loop thread
    def _complete(self, messages: list[dict[str, Any]]) -> str | None:
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                threading.Thread(target=self._loop.run_forever, daemon=True, name="worldmodel").start()
                self._client = asyncio.run_coroutine_threadsafe(self._make(), self._loop).result()
        fut = asyncio.run_coroutine_threadsafe(
            self._client.chat(messages, temperature=0, max_tokens=self.max_tokens),  # type: ignore[union-attr]
            self._loop,
        )
        return fut.result().message.get("content")

    async def _make(self) -> LLMClient:
        return LLMClient(self.config)

    def probe(self) -> str | None:
        """None when the endpoint answers, else why it cannot be reached (see `LLMClient.probe`)."""
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                threading.Thread(target=self._loop.run_forever, daemon=True, name="worldmodel").start()
                self._client = asyncio.run_coroutine_threadsafe(self._make(), self._loop).result()
        return asyncio.run_coroutine_threadsafe(self._client.probe(), self._loop).result()  # type: ignore[union-attr]

    def close(self) -> None:
        if self._loop is not None:
            if self._client is not None:
                asyncio.run_coroutine_threadsafe(self._client.close(), self._loop).result()
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._loop = None

    def state_of(self, svc: Any) -> dict[str, Any]:
        return {t: dict(v) for t, v in svc.store.tables.items() if t != META}

    def relevant_tables(self, svc: Any, spec: Any) -> list[str]:
        """The tables the tool can touch: a compiled op's resource (and its parent), else the tables
        whose singular name appears among the words of the tool's name and parameters."""
        tables = [t for t in svc.store.tables if t != META and not t.startswith("_")]
        op = getattr(svc, "ops", {}).get(spec.name) if hasattr(svc, "ops") else None
        resources = getattr(svc, "manifest", {}).get("resources", {}) if op else {}
        if op and op.get("resource") in resources:
            out = [resources[op["resource"]]["table"]]
            parent = (op.get("parent") or {}).get("resource")
            if parent in resources:
                out.append(resources[parent]["table"])
            return [t for t in dict.fromkeys(out) if t in svc.store.tables]
        words = set(_words(spec.name))
        for p in spec.input_schema.get("properties", {}):
            words.update(_words(p))
        hit = [t for t in tables if _stems(t) & words]
        return hit or tables

    def prompt_state(self, svc: Any, spec: Any, args: dict[str, Any]) -> tuple[dict, dict]:
        """(state shown, every table's size and fields), fitted to the prompt budget."""
        values = set(_values(args))
        relevant = self.relevant_tables(svc, spec)
        summary = {}
        for t, rows in svc.store.tables.items():
            if t == META:
                continue
            first = next(iter(rows.values()), None)
            summary[t] = {
                "records": len(rows),
                "fields": sorted(first) if isinstance(first, dict) else [],
            }
        # the records the arguments name, in every table (an id of another table links there too)
        named: dict[str, dict[str, Any]] = {}
        if values:
            keys = {str(k) for t, rows in svc.store.tables.items() if t != META for k in rows}
            # a field names a record when it holds an id or an email from the arguments, never a
            # common value ("open", "high") that every record shares
            links = {v for v in values if v in keys or "@" in v}
            for t, rows in svc.store.tables.items():
                if t == META:
                    continue
                for k, rec in rows.items():
                    if str(k) in values or (
                        links
                        and isinstance(rec, dict)
                        and any(isinstance(v, str | int) and str(v) in links for v in rec.values())
                    ):
                        named.setdefault(t, {})[k] = rec
                        if len(named[t]) >= self.max_records:
                            break
        for sample, clip in ((self.sample, 400), (1, 200), (0, 120), (0, 40)):
            state: dict[str, dict[str, Any]] = {}
            for t in dict.fromkeys([*relevant, *named]):
                rows = dict(named.get(t, {}))
                for k, rec in list(svc.store.tables.get(t, {}).items())[:sample]:
                    rows.setdefault(k, rec)
                state[t] = {str(k): _clip(v, clip) for k, v in rows.items()}
            size = estimate_tokens(json.dumps([state, summary], default=str))
            if size <= self.prompt_budget:
                break
        return state, summary

    def prompt(self, svc: Any, spec: Any, args: dict[str, Any]) -> list[dict[str, Any]]:
        state, tables = self.prompt_state(svc, spec, args)
        user = {
            "service": svc.name,
            "tool": {"name": spec.name, "description": spec.description, "inputSchema": spec.input_schema},
            "arguments": args,
            "state": state,
            "tables": tables,
            "now": svc.clock.iso(),
        }
        return [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": json.dumps(user, default=str)},
        ]

    def prompt_tokens_of(self, svc: Any, spec: Any, args: dict[str, Any]) -> int:
        return estimate_tokens(json.dumps(self.prompt(svc, spec, args), default=str))

    def key(self, svc: Any, spec: Any, args: dict[str, Any]) -> str:
        return digest(canonical_json([svc.name, svc.state_hash(), spec.name, args]))

    def simulate(self, svc: Any, spec: Any, args: dict[str, Any]) -> dict[str, Any]:
        key = self.key(svc, spec, args)
        text = self.cache.get(key)
        if text is None:
            messages = self.prompt(svc, spec, args)
            self.prompt_tokens.append((svc.name, estimate_tokens(json.dumps(messages, default=str))))
            try:
                text = self._complete(messages) or ""
            except EndpointError as e:
                self.failures += 1
                self.last_error = str(e)
                return failure(500, "simulation_error", f"the world model endpoint failed: {e}")
            self.calls += 1
            self.cache[key] = text
            if self.cache_path:
                self.cache_path.parent.mkdir(parents=True, exist_ok=True)
                with self.cache_path.open("a", encoding="utf-8") as f:
                    f.write(json.dumps({"key": key, "tool": spec.name, "response": text}) + "\n")
        else:
            self.cache_hits += 1
        try:
            prop = parse_proposal(text)
            if not prop["success"]:
                e = prop["error"]
                return failure(e["code"], str(e.get("type") or "error"), e["message"])
            before = self.state_of(svc)
            after = apply_patch(before, prop["patch"])
            if not isinstance(after, dict) or set(after) != set(before):
                raise SimulationError("the patch adds or removes whole tables")
            if svc.state_model is not None:
                try:
                    svc.state_model.model_validate(after)
                except ValidationError as e:
                    first = e.errors(include_url=False)[0]
                    where = "/".join(str(x) for x in first["loc"])
                    raise SimulationError(
                        f"the patched state breaks the state model at /{where}: {first['msg']}"
                    ) from None
        except SimulationError as e:
            return failure(500, "simulation_error", f"{spec.name}: {e}")
        for table, rows in after.items():
            old = before[table]
            for k in old.keys() - rows.keys():
                svc.store.delete(table, k)
            for k, v in rows.items():
                if old.get(k) != v:
                    svc.store.put(table, k, v)
        svc.store.commit()
        return {"success": True, "data": prop.get("data")}


def _words(name: str) -> list[str]:
    """Lower-case words of a snake_case or camelCase name."""
    return [w.lower() for w in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", name)]


def _stems(table: str) -> set[str]:
    out = set()
    for w in _words(table):
        out.add(w)
        for suffix in ("ies", "es", "s"):
            if w.endswith(suffix) and len(w) > len(suffix) + 2:
                out.add(w[: -len(suffix)] + ("y" if suffix == "ies" else ""))
    return out


def _values(args: Any) -> list[str]:
    """The scalar values of the arguments that could name a record (ids, keys, emails)."""
    if isinstance(args, dict):
        return [v for x in args.values() for v in _values(x)]
    if isinstance(args, list):
        return [v for x in args for v in _values(x)]
    if isinstance(args, bool) or args is None:
        return []
    text = str(args)
    return [text] if 2 < len(text) <= 200 or isinstance(args, int) else []


def _clip(value: Any, n: int) -> Any:
    """Long strings shown cut (the record in the state is whole; patches address fields by path)."""
    if isinstance(value, str):
        return value if len(value) <= n else value[:n] + f"...[+{len(value) - n} chars]"
    if isinstance(value, dict):
        return {k: _clip(v, n) for k, v in value.items()}
    if isinstance(value, list):
        shown = [_clip(v, n) for v in value[:10]]
        return shown + [f"...[+{len(value) - 10} items]"] if len(value) > 10 else shown
    return value


def configure(model: WorldModel | None) -> None:
    """Serve simulated and quarantined compiled tools with `model` (None: they fail clearly)."""
    from compoworld.compiler.runtime import CompiledService

    CompiledService.world_model = model
