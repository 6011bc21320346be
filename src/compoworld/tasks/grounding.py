"""Grounded reference trajectories: every identifying argument value was shown before it is used.

An agent sees the system prompt, the instruction and the observations of its earlier turns, and
nothing else. A reference call may use an identifying value (an id, a key, an email, a phone
number, a code, a path, a name used as a lookup key) only if one of those already showed it. Free
text the agent composes is exempt, and so are dates (derived from the current date), but an
identifying token *inside* composed text (an amount, an email, a code) is not.

`sources` gives each identifying value its first source: "instruction", "system" or "obs:N".
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from collections.abc import Iterator
from typing import Any

from compoworld.verify.forms import phone_digits

# Arguments whose value the agent writes in its own words.
FREE_TEXT = {
    "body",
    "text",
    "content",
    "description",
    "message",
    "note",
    "note_body",
    "notes",
    "comment",
    "subject",
    "summary",
    "title",
    "html",
    "htmlbody",
    "reason",
    "signature",
    "topic",
    "purpose",
    "details",
    "caption",
    "markdown",
    "page_content",
    "value",
    "hs_note_body",
    "subject_line",
    "preview_text",
    "status_message",
    "answer",
    "insight",
    "desc",
    "command",
    "cmd",
    "script",
    "sql",
    "statement",
    "formula",
}
_TEXTY = (
    "_body",
    "_subject",
    "_description",
    "_text",
    "_note",
    "_message",
    "_content",
    "_comment",
    "_summary",
)
# Paging and sizing: numbers the agent picks, never identifying.
SIZING = {"limit", "count", "per_page", "page", "maxresults", "max_results", "page_size", "pagesize", "top"}
SIZING |= {"size", "offset", "batchsize", "max", "n", "num", "duration", "duration_minutes", "minutes"}
# Arguments that look a record up: the value must have been shown, even a plain word.
LOOKUP = {"name", "query", "term", "email", "to", "channel", "channel_id", "q", "jql", "path", "username"}
_ID_KEY = re.compile(r"(^|_)(id|ids|key|gid|sku|number|no|ref|email|emails|phone|path|to|cc|bcc)$", re.I)
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$")
_TOKENS = (
    # emails: an apostrophe may sit inside the local part (o'brien@), never open it (SQL's 'a@b.com')
    re.compile(r"(?<![\w.%+-])[A-Za-z0-9._%+-][A-Za-z0-9._%+'-]*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+"),
    re.compile(r"\b[A-Z]{2,6}-\d+\b"),  # codes and keys: PO-12345, ENG-7, INV-20042
    re.compile(r"(?<![\w.])\d+\.\d{2}(?![\w])"),  # amounts
    re.compile(r"\+?\d[\d ()-]{8,}\d"),  # phone numbers
    re.compile(r"(?<![\w-])\d{4,}(?![\w-])"),  # long numbers (ids, order numbers)
    # generated record ids written into free text: letters and digits run together (COMda943657)
    re.compile(r"(?<![\w-])(?=[A-Za-z_]*\d)(?=\d*[A-Za-z])[A-Za-z0-9_]{8,}(?![\w-])"),
)


def _leaf_key(path: str) -> str:
    parts = [p for p in path.split(".") if not p.isdigit()]
    return parts[-1].lower() if parts else ""


def leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted path, value) of every leaf, depth first in order (gathered by plain calls: a
    generator frame per level costs more than the walk over every envelope of a reference)."""
    out: list[tuple[str, Any]] = []
    _leaves(value, path, out)
    return iter(out)


def _leaves(value: Any, path: str, out: list[tuple[str, Any]]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            p = f"{path}.{k}" if path else str(k)
            if isinstance(v, dict | list):
                _leaves(v, p, out)
            else:
                out.append((p, v))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            p = f"{path}.{i}"
            if isinstance(v, dict | list):
                _leaves(v, p, out)
            else:
                out.append((p, v))
    else:
        out.append((path, value))


def tokens(text: str) -> list[str]:
    out: list[str] = []
    for rx in _TOKENS:
        for m in rx.findall(text):
            if not any(m in t for t in out):
                out.append(m.strip())
    return out


def identifying(args: dict[str, Any], enums: dict[str, set] | None = None) -> list[tuple[str, str]]:
    """(argument path, value) pairs that must have been shown before the call that uses them."""
    out: list[tuple[str, str]] = []
    for path, v in leaves(args):
        key = _leaf_key(path)
        if v is None or isinstance(v, bool) or (enums and key in enums and v in enums[key]) or key in SIZING:
            continue
        if isinstance(v, int | float):
            if _ID_KEY.search(key) or abs(v) >= 1000 or (isinstance(v, float) and v != int(v)):
                out.append((path, _num_text(v)))
            continue
        s = str(v).strip()
        if not s or _DATE.match(s) or s == "/":  # the root of a site or file tree is where one starts
            continue
        if key in FREE_TEXT or key.endswith(_TEXTY) or len(s) > 80:
            out.extend((f"{path}~", t) for t in tokens(s) if not _DATE.match(t))
        elif key in ("query", "q", "jql", "filter", "search", "where", "formula"):
            out.extend((f"{path}~", t) for t in query_tokens(s))
        elif key in LOOKUP or _ID_KEY.search(key) or any(ch.isdigit() for ch in s) or "@" in s or "/" in s:
            out.append((path, s))
    return out


def query_tokens(s: str) -> list[str]:
    """What a search query must have been shown: quoted names (a proper noun, a code, an email),
    identifying tokens, and capitalised words; dates, operators and plain lower-case words are the
    agent's own."""
    quoted = [q for q in re.findall(r"['\"]([^'\"]+)['\"]", s) if not _DATE.match(q)]
    named = [q for q in quoted if any(ch.isupper() or ch.isdigit() or ch == "@" for ch in q)]
    bare = re.sub(r"['\"][^'\"]*['\"]", " ", s)
    caps = [
        w
        for w in re.findall(r"\b[A-Z][a-z]{2,}\b", bare)
        if w.upper() not in ("AND", "OR", "NOT", "SELECT", "FROM", "WHERE", "ORDER", "GROUP", "LIMIT")
    ]
    return [*named, *(t for t in tokens(s) if not _DATE.match(t) and t not in " ".join(named)), *caps]


def _num_text(v: int | float) -> str:
    return str(int(v)) if isinstance(v, int) or v == int(v) else f"{v:.2f}"


class Transcript:
    """What the agent has been shown so far, searchable for values."""

    def __init__(self, system: str, instruction: str) -> None:
        self.parts: list[tuple[str, str]] = [
            ("instruction", instruction.casefold()),
            ("system", system.casefold()),
        ]
        self._phones: list[set[str]] = [_phones(instruction), _phones(system)]
        self._nums: list[list[float] | None] = [None, None]  # a part's numbers, sorted, once asked

    def add(self, source: str, observation: Any) -> None:
        text = observation if isinstance(observation, str) else json.dumps(observation, ensure_ascii=False)
        self.parts.append((source, text.casefold()))
        self._phones.append(_phones(text))
        self._nums.append(None)

    def source_of(self, value: str) -> str | None:
        """The first part that shows the value, or None. A number is shown by the same number in
        any notation (16385.00 by 16385.0)."""
        if _NUM.fullmatch(value):
            want = float(value.replace(",", ""))
            for i, (src, text) in enumerate(self.parts):
                nums = self._nums[i]
                if nums is None:  # parsed once per part, not once per value looked for
                    nums = self._nums[i] = sorted(float(m.replace(",", "")) for m in _NUM.findall(text))
                k = bisect_left(nums, want - 2e-9)
                while k < len(nums) and nums[k] <= want + 2e-9:
                    if abs(nums[k] - want) < 1e-9:
                        return src
                    k += 1
        v = value.casefold()
        esc = json.dumps(value, ensure_ascii=False)[1:-1].casefold()
        digits = phone_digits(value) if re.fullmatch(r"\+?[\d ()-]{7,}", value) else None
        alnum = v.isalnum()
        bounded = None  # compiled only where the value is there (a bounded match needs it inside)
        for i, (src, text) in enumerate(self.parts):
            if alnum:
                if v in text:
                    if bounded is None:
                        bounded = re.compile(r"(?<![\w])" + re.escape(v) + r"(?![\w])")
                    if bounded.search(text):
                        return src
            elif v in text or esc in text:
                return src
            if digits and digits in self._phones[i]:
                return src
        return None


_NUM = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?(?![\w])")


def _phones(text: str) -> set[str]:
    return {phone_digits(m) for m in re.findall(r"\+?\d[\d ()-]{6,}\d", text)}


def ground(
    system: str,
    instruction: str,
    calls: list[dict[str, Any]],
    results: list[dict[str, Any]],
    enums: dict[str, dict[str, set]] | None = None,
    composed: list[str] = (),  # type: ignore[assignment]
) -> tuple[list[dict[str, str]], list[str]]:
    """Sources of every call's identifying values, and the problems: values used before shown.

    Calls of one turn see only the observations of earlier turns. `composed` values are ones the
    agent works out itself (a sum, a count, a derived date): they are sourced as "composed"."""
    made = {str(x).casefold() for x in composed}
    t = Transcript(system, instruction)
    sources: list[dict[str, str]] = [{} for _ in calls]
    problems: list[str] = []
    i = 0
    while i < len(calls):
        turn = calls[i].get("turn", i)
        j = i
        while j < len(calls) and calls[j].get("turn", j) == turn:
            j += 1
        for k in range(i, j):
            c = calls[k]
            for path, value in identifying(c["arguments"], (enums or {}).get(c["tool"])):
                src = t.source_of(value) or ("composed" if value.casefold() in made else None)
                if src is None:
                    problems.append(f"call {k} ({c['tool']}) uses {path}={value!r} before it was shown")
                else:
                    sources[k][path] = src
        for k in range(i, j):
            t.add(f"obs:{k}", results[k])
        i = j
    return sources, problems


def ground_key(
    system: str,
    instruction: str,
    calls: list[dict[str, Any]],
    results: list[dict[str, Any]],
    enums: dict[str, dict[str, set]] | None = None,
    composed: list[str] = (),  # type: ignore[assignment]
) -> bytes:
    """A digest of everything `ground` reads (it is a pure function of it): equal keys, equal
    groundings. The generator records its grounding's key so the gate need not ground the same
    replay again."""
    import hashlib

    import orjson

    blob = orjson.dumps(
        [
            system,
            instruction,
            [(c["tool"], c["arguments"], c.get("turn", i)) for i, c in enumerate(calls)],
            results,
            {t: {k: sorted(map(repr, v)) for k, v in e.items()} for t, e in (enums or {}).items()},
            list(composed),
        ],
        option=orjson.OPT_NON_STR_KEYS,
        default=repr,
    )
    return hashlib.blake2b(blob, digest_size=16).digest()


def tool_enums(env: Any, tool: str) -> dict[str, set]:
    """Argument names whose schema lists allowed values (a status, an object type): never identifying."""
    spec = env.tool_spec(tool)
    out: dict[str, set] = {}
    if spec is None:
        return out
    schema = getattr(spec, "input_schema", None) or {}
    for name, prop in (schema.get("properties") or {}).items():
        vals = prop.get("enum") or [x.get("const") for x in prop.get("anyOf", []) if "const" in x]
        for alt in prop.get("anyOf", []):
            vals = [*vals, *(alt.get("enum") or [])]
        if vals:
            out[name.lower()] = set(vals)
    return out


def is_text(key: str, value: Any) -> bool:
    """A value an agent writes in its own words (a body, a note, a comment) of three words or more."""
    k = key.lower()
    return (
        isinstance(value, str)
        and (
            (k in FREE_TEXT and k not in ("value", "command", "cmd", "script", "sql", "statement", "formula"))
            or k.endswith(_TEXTY)
        )
        and len(value.split()) >= 3
    )
