"""Infer the resources a server manages and map each tool to an operation: a service manifest.

No LLM: names, descriptions and parameter schemas are enough for most real tools. A tool name is
split into tokens; a leading server prefix is dropped; the first verb gives the operation kind and
the words after it the resource (`add_comment_to_issue` -> create `comment` under parent `issue`;
`get_issue_comments` -> list `comment`; `get_user_by_email` -> get `user` by its `email` field).
Tools whose operation cannot be inferred are marked `simulated` (served by the world model).
The manifest is data: the engine's generic runtime (`spec.runtime`) executes it.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from compoworld.spec.ingest import Spec, SpecTool

MANIFEST_VERSION = 1

CREATE = {
    "create",
    "add",
    "new",
    "insert",
    "upload",
    "make",
    "submit",
    "fork",
    "copy",
    "save",
    "append",
    "schedule",
    "book",
    "invite",
    "register",
    "draft",
    "duplicate",
}
GET = {"get", "read", "retrieve", "fetch", "describe", "show", "view", "download", "lookup", "info"}
LIST = {"list", "search", "find", "query", "filter", "browse"}
UPDATE = {"update", "edit", "modify", "set", "patch", "rename", "move", "change", "reprioritize", "upsert"}
DELETE = {"delete", "remove", "trash", "destroy", "erase", "purge"}
SEND = {"send", "post", "reply", "forward", "comment", "publish", "message", "reply_to"}
# state transitions: verb -> (field, value)
TRANSITIONS: dict[str, tuple[str, Any]] = {
    "close": ("status", "closed"),
    "reopen": ("status", "open"),
    "archive": ("status", "archived"),
    "unarchive": ("status", "active"),
    "resolve": ("status", "resolved"),
    "unresolve": ("status", "open"),
    "complete": ("status", "completed"),
    "cancel": ("status", "cancelled"),
    "approve": ("status", "approved"),
    "reject": ("status", "rejected"),
    "dismiss": ("status", "dismissed"),
    "merge": ("status", "merged"),
    "restore": ("status", "active"),
    "activate": ("status", "active"),
    "deactivate": ("status", "inactive"),
    "enable": ("status", "enabled"),
    "disable": ("status", "disabled"),
    "lock": ("locked", True),
    "unlock": ("locked", False),
    "star": ("starred", True),
    "unstar": ("starred", False),
    "pin": ("pinned", True),
    "unpin": ("pinned", False),
    "assign": ("assignee", None),
    "unassign": ("assignee", ""),
    "mark": ("status", None),
}
RELATION = {"add", "remove", "attach", "detach", "link", "unlink"}
VERBS = CREATE | GET | LIST | UPDATE | DELETE | SEND | set(TRANSITIONS)
STOP = {
    "a",
    "an",
    "the",
    "all",
    "my",
    "new",
    "details",
    "detail",
    "info",
    "information",
    "by",
    "id",
    "ids",
    "batch",
    "bulk",
    "multiple",
    "single",
    "current",
    "specific",
    "existing",
    "v2",
    "v1",
    "as",
    "and",
}
PREPS = {"to", "from", "on", "in", "for", "of", "into", "under", "within", "with"}
GENERIC = {
    "request",
    "item",
    "detail",
    "type",
    "field",
    "member",
    "entry",
    "setting",
    "rule",
    "link",
    "status",
    "state",
    "info",
    "list",
    "data",
    "content",
    "message",
    "record",
    "property",
}
LIMIT_PARAMS = {
    "limit",
    "maxresults",
    "perpage",
    "pagesize",
    "count",
    "top",
    "first",
    "size",
    "max",
    "numresults",
    "maxcount",
    "pagelimit",
}
OFFSET_PARAMS = {
    "offset",
    "start",
    "startat",
    "skip",
    "cursor",
    "page",
    "pagetoken",
    "after",
    "nextpagetoken",
    "startingafter",
    "pagenumber",
    "startcursor",
}
QUERY_PARAMS = {
    "query",
    "q",
    "search",
    "searchquery",
    "keyword",
    "keywords",
    "text",
    "term",
    "jql",
    "filter",
    "filterbyformula",
    "namecontains",
    "contains",
    "searchterm",
    "querystring",
    "cql",
}
PATH_RESOURCES = {"file", "folder", "path", "document", "directory", "item", "entry", "object"}


def tokens(name: str) -> list[str]:
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return [t for t in re.split(r"[^a-zA-Z0-9]+", name.lower()) if t]


def norm(param: str) -> str:
    return re.sub(r"[^a-z0-9]", "", param.lower())


def singular(word: str) -> str:
    if len(word) <= 3 or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes", "zes")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


def service_name(spec: Spec) -> str:
    """An engine-safe service name from the spec file (or the server name)."""
    base = spec.source if spec.source not in ("", "<memory>") else spec.server
    base = re.sub(r"\(.*?\)", "", base.rsplit("/", 1)[-1].removesuffix(".json"))
    toks = [
        t for t in tokens(base) if t not in {"klavis", "official", "mcp", "archived", "community", "server"}
    ]
    name = "_".join(toks) or "server"
    if not name[0].isalpha():
        name = "s_" + name
    return name[:24].strip("_")


def _prefix(tools: list[SpecTool]) -> list[str]:
    """Leading tokens most tools share that are not verbs (`jira_`, `google_calendar_`, `outlook_mail_`)."""
    if len(tools) < 2:
        return []
    out: list[str] = []
    toks = [tokens(t.name) for t in tools]
    for i in range(3):
        c = Counter(tk[i] for tk in toks if len(tk) > i + 1 and tk[:i] == out)
        if not c:
            break
        word, n = c.most_common(1)[0]
        if word in VERBS or n < 0.5 * len(tools):
            break
        out.append(word)
    return out


def _type_of(schema: dict[str, Any]) -> str:
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), None)
    if t in ("string", "integer", "number", "boolean", "array", "object"):
        return t
    if "enum" in schema:
        return "string"
    return "any"


def _resource_of(words: list[str]) -> tuple[str | None, bool]:
    words = [w for w in words if w not in STOP and not w.isdigit()]
    if not words:
        return None, False
    head = words[-1]
    plural = singular(head) != head
    name = singular(head)
    if name in GENERIC and len(words) > 1:
        name = f"{singular(words[-2])}_{name}"
    return name, plural


def id_param(
    resource: str, props: dict[str, Any], required: list[str], any_param: bool = False
) -> str | None:
    """The parameter that names one `resource` record (`issue_id`, `issueKey`, `id`, `path`, ...)."""
    pool = list(props) if any_param else required
    by_norm = {norm(p): p for p in pool}
    r = resource.replace("_", "")
    last = resource.rsplit("_", 1)[-1]
    for cand in (
        f"{r}id",
        f"{r}key",
        f"{r}gid",
        f"{r}number",
        f"{last}id",
        f"{last}key",
        f"{last}gid",
        f"{r}name" if any_param is False else "",
        "id",
        "key",
        "gid",
        "identifier",
    ):
        if cand and cand in by_norm:
            return by_norm[cand]
    if resource in PATH_RESOURCES or last in PATH_RESOURCES:
        for cand in ("path", "filepath", "folderpath", "fileid", "documentid"):
            if cand in by_norm:
                return by_norm[cand]
    if not any_param:
        ids = [p for p in required if re.search(r"(id|key|gid)$", norm(p))]
        if len(ids) == 1:
            return ids[0]
    return None


def infer_op(tool: SpecTool, prefix: list[str]) -> dict[str, Any]:
    """The operation of one tool, or `{"kind": "simulated", "reason": ...}`."""
    toks = tokens(tool.name)
    if toks[: len(prefix)] == prefix and len(toks) > len(prefix):
        toks = toks[len(prefix) :]
    vi = next((i for i, t in enumerate(toks) if t in VERBS), None)
    if vi is None:
        return {"kind": "simulated", "cause": "no_verb", "reason": "no operation verb in the name"}
    verb, rest = toks[vi], toks[vi + 1 :]
    if verb == "reply" and rest[:1] == ["to"]:
        rest = rest[1:]
    extra = None
    if verb == "mark" and rest:
        extra = rest[-1]  # mark_as_read, mark_message_unread
        rest = [w for w in rest[:-1] if w != "as"] or rest
    by = None
    if "by" in rest:
        k = rest.index("by")
        by, rest = "_".join(rest[k + 1 :]), rest[:k]
    pi = next((i for i, t in enumerate(rest) if t in PREPS), None)
    head, parent_words = (rest[:pi], rest[pi + 1 :]) if pi is not None else (rest, [])
    resource, plural = _resource_of(head)
    parent, _ = _resource_of(parent_words)
    if resource is None and parent is not None:
        resource, parent = parent, None
    if resource is None:
        return {
            "kind": "simulated",
            "cause": "no_resource",
            "reason": f"no resource named after the verb {verb!r}",
        }
    props = tool.input_schema.get("properties", {})
    required = list(tool.input_schema.get("required", []))
    idp = id_param(resource, props, required)
    parent_param = id_param(parent, props, required, any_param=True) if parent else None
    op: dict[str, Any] = {"resource": resource, "verb": verb}
    if parent and parent_param:
        op["parent"] = {"resource": parent, "param": parent_param}

    if verb in RELATION and parent and parent_param and idp and idp != parent_param:
        kind = "relate" if verb in {"add", "attach", "link"} else "unrelate"
        return {
            **op,
            "kind": kind,
            "resource": parent,
            "member": resource,
            "member_param": idp,
            "id_param": parent_param,
            "parent": None,
        }
    if verb in GET and (plural or (idp is None and by is None)) or verb in LIST:
        return {**op, "kind": "list"}
    if verb in GET:
        if by and idp is None:
            field = next((p for p in required if norm(p) == norm(by)), None) or (
                required[0] if len(required) == 1 else None
            )
            if field is None:
                return {
                    "kind": "simulated",
                    "cause": "ambiguous_lookup",
                    "reason": f"cannot tell which parameter '{by}' is",
                }
            return {**op, "kind": "get", "lookup": field}
        return {**op, "kind": "get", "id_param": idp}
    if verb in CREATE or verb in SEND:
        return {**op, "kind": "create"}
    if verb in TRANSITIONS and verb != "restore" or (verb == "restore" and idp):
        field, value = TRANSITIONS[verb]
        if idp is None:
            return {
                "kind": "simulated",
                "cause": "no_id_parameter",
                "reason": f"{verb!r} names no {resource} to change",
            }
        if value is None and field == "status":
            value = extra or "done"
        if value is None:  # assign: the value comes from the first other parameter
            src = next((p for p in props if p != idp and p != parent_param), None)
            if src is None:
                return {
                    "kind": "simulated",
                    "cause": "no_value_parameter",
                    "reason": "assign without an assignee parameter",
                }
            return {**op, "kind": "transition", "id_param": idp, "field": field, "from_param": src}
        return {**op, "kind": "transition", "id_param": idp, "field": field, "value": value}
    if verb in UPDATE:
        if idp is None:
            return {
                "kind": "simulated",
                "cause": "no_id_parameter",
                "reason": f"update names no {resource} (no id parameter)",
            }
        return {**op, "kind": "update", "id_param": idp}
    if verb in DELETE:
        if idp is None:
            return {
                "kind": "simulated",
                "cause": "no_id_parameter",
                "reason": f"delete names no {resource} (no id parameter)",
            }
        return {**op, "kind": "delete", "id_param": idp}
    return {
        "kind": "simulated",
        "cause": "unsupported_verb",
        "reason": f"verb {verb!r} has no deterministic operation",
    }


def _skip_field(name: str) -> bool:
    n = norm(name)
    return n in LIMIT_PARAMS or n in OFFSET_PARAMS or n in QUERY_PARAMS


def compile_manifest(spec: Spec, name: str | None = None) -> dict[str, Any]:
    """The manifest of `spec` before adversarial testing (every inferred tool `compiled`)."""
    prefix = _prefix(spec.tools)
    ops = {t.name: infer_op(t, prefix) for t in spec.tools}
    resources: dict[str, dict[str, Any]] = {}
    # a create / list / update that takes `<other resource>_id` belongs under that resource
    named = {norm(op["resource"]): op["resource"] for op in ops.values() if op["kind"] != "simulated"}
    for t in spec.tools:
        op = ops[t.name]
        if op["kind"] not in ("create", "list", "update") or op.get("parent"):
            continue
        for p in t.input_schema.get("properties", {}):
            stem = re.sub(r"(id|key|gid)$", "", norm(p))
            other = named.get(stem)
            if other and other != op["resource"] and stem != norm(p):
                op["parent"] = {"resource": other, "param": p}
                break

    def res(r: str) -> dict[str, Any]:
        return resources.setdefault(
            r, {"table": f"{r}s", "fields": {}, "id_params": Counter(), "id_type": "string"}
        )

    for t in spec.tools:
        op = ops[t.name]
        if op["kind"] == "simulated":
            continue
        r = res(op["resource"])
        props = t.input_schema.get("properties", {})
        if op.get("id_param"):
            r["id_params"][op["id_param"]] += 1
            if _type_of(props.get(op["id_param"], {})) == "integer":
                r["id_type"] = "integer"
        if op["kind"] in ("create", "update"):
            for p, s in props.items():
                if p != op.get("id_param") and not _skip_field(p):
                    r["fields"].setdefault(p, _type_of(s))
        if op.get("parent"):
            res(op["parent"]["resource"])
            r["fields"].setdefault(op["parent"]["param"], "any")
        if op["kind"] == "transition":
            r["fields"][op["field"]] = (
                "any" if "from_param" in op else _type_of({"type": _json_type(op["value"])})
            )
        if op["kind"] in ("relate", "unrelate"):
            r["fields"].setdefault(f"{op['member']}_ids", "array")
        if op["kind"] == "get" and op.get("lookup"):
            r["fields"].setdefault(op["lookup"], _type_of(props.get(op["lookup"], {})))
    for r in resources.values():
        ids = r.pop("id_params")
        r["id_param"] = ids.most_common(1)[0][0] if ids else None
        r["fields"].pop("id", None)
    tools = []
    for t in spec.tools:
        op = ops[t.name]
        entry: dict[str, Any] = {
            "name": t.name,
            "original_name": t.original_name,
            "description": t.description,
            "input_schema": t.input_schema,
            "read_only": op.get("kind") in ("get", "list") if t.read_only is None else t.read_only,
        }
        if op["kind"] == "simulated":
            entry.update(status="simulated", cause=op["cause"], reason=op["reason"], op={"kind": "simulated"})
        else:
            if op["kind"] == "create":
                natural = resources[op["resource"]]["id_param"]
                if natural and natural in t.input_schema.get("properties", {}):
                    op["natural_key"] = natural
            entry.update(status="compiled", cause="", reason="", op=op)
        tools.append(entry)
    return {
        "manifest_version": MANIFEST_VERSION,
        "service": name or service_name(spec),
        "server": spec.server,
        "domain": spec.domain or "compiled",
        "source": spec.source,
        "resources": dict(sorted(resources.items())),
        "tools": tools,
        "defects": [{"tool": d.tool, "kind": d.kind, "detail": d.detail} for d in spec.defects],
    }


def _json_type(v: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string"}.get(type(v), "any")
