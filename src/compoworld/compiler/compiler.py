"""Infer the resources a server manages and map each tool to an operation: a service manifest.

No LLM: names, descriptions and parameter schemas are enough for most real tools. A tool name is
split into tokens; a leading server prefix is dropped; the first verb gives the operation kind and
the words after it the resource (`add_comment_to_issue` -> create `comment` under parent `issue`;
`get_issue_comments` -> list `comment`; `get_user_by_email` -> get `user` by its `email` field).
Tools whose operation cannot be inferred are marked `simulated` (served by the world model).
The manifest is data: the engine's generic runtime (`spec.runtime`) executes it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections import Counter
from typing import Any

from compoworld.compiler.compute import (
    described_default,
    match_clock,
    match_compute,
    match_geo,
    match_info,
    match_service_info,
)
from compoworld.compiler.ingest import Dispatch, Spec, SpecTool, dispatch_of

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
# verbs that are also nouns (`record`, `log`, `track`): a create only as a name's first word, with no
# other verb in it (`log_rejection`, `store_memory`; never `record_get` or `get_track`)
SOFT_CREATE = {"store", "record", "log", "track", "enlist", "enroll", "mkdir", "remember", "memorize"}
GET = {"get", "read", "retrieve", "fetch", "describe", "show", "view", "download", "lookup", "info"}
LIST = {"list", "search", "find", "query", "filter", "browse"}
UPDATE = {
    "update",
    "edit",
    "modify",
    "set",
    "patch",
    "put",
    "rename",
    "move",
    "change",
    "reprioritize",
    "upsert",
    "replace",
}
DELETE = {"delete", "remove", "trash", "destroy", "erase", "purge", "deregister", "uninstall", "drop"}
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
    "start": ("status", "running"),
    "stop": ("status", "stopped"),
    "pause": ("status", "paused"),
    "resume": ("status", "running"),
    "suspend": ("status", "suspended"),
    "unsuspend": ("status", "active"),
    "terminate": ("status", "terminated"),
    "restart": ("status", "running"),
    "unpublish": ("status", "unpublished"),
    "revoke": ("status", "revoked"),
    "void": ("status", "void"),
    "finalize": ("status", "finalized"),
    "share": ("shared", True),
    "unshare": ("shared", False),
    "follow": ("following", True),
    "unfollow": ("following", False),
    "watch": ("watching", True),
    "unwatch": ("watching", False),
    "subscribe": ("subscribed", True),
    "unsubscribe": ("subscribed", False),
    "mute": ("muted", True),
    "unmute": ("muted", False),
    "hide": ("hidden", True),
    "unhide": ("hidden", False),
    "block": ("blocked", True),
    "unblock": ("blocked", False),
}
# verbs that make something new, or move an existing record on: "send an existing invoice or draft",
# "publish the draft", "void the invoice". With an id named for the record they are a transition of it
EXISTING_STATES = {
    "send": "sent",
    "publish": "published",
    "submit": "submitted",
    "post": "posted",
    "void": "void",
    "finalize": "finalized",
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
# generic words that name a part of a record, not a record (`issue_state`, `page_content`; never
# `pull_request` or `list_member`)
FIELD_WORDS = {"content", "status", "state", "data", "info", "setting", "type", "field", "property", "detail"}
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
    "marker",
    "paginationtoken",
    "currentpage",
    "skipcount",
    "continuationtoken",
    "nexttoken",
    "pagecursor",
    "endingbefore",
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
    # a free-text search by another name (`search_text`, `searchString`): a search, never a stored field
    "searchtext",
    "searchstring",
    "searchphrase",
    "searchkeyword",
    "searchkeywords",
    "searchterms",
}
PATH_RESOURCES = {"file", "folder", "path", "document", "directory", "item", "entry", "object"}
# format markers of a REST path or a name (`/products.json`, `get_orders_xml`): never the resource
FORMAT_WORDS = {"json", "xml", "yaml", "yml", "html", "htm", "txt"}
FORMAT_SUFFIX = re.compile(r"\.(json|xml|ya?ml|html?|txt)$", re.I)
# API switches: they choose the shape of the answer (`response_format`, `fields`, `verbose`), never a
# record's content or a filter
SWITCH_PARAMS = {
    "responseformat",
    "outputformat",
    "returnformat",
    "verbose",
    "pretty",
    "prettyprint",
    "detailed",
    "brief",
    "briefrepresentation",
    "includedetails",
    "concise",
    "fieldstoreturn",
    "returnfields",
    "select",
    "expand",
    "mixin",
    "raw",
    "dryrun",
}
FIELDS_SWITCHES = {"fields", "select", "fieldstoreturn", "returnfields", "properties", "attributes"}
FORMAT_VALUES = {"json", "markdown", "md", "text", "xml", "csv", "html", "yaml", "concise", "detailed"}


def switch_param(name: str, schema: Any) -> str | None:
    """The kind of API switch a parameter is: `format` (json / markdown), `fields` (which fields to
    return), `flag` (verbose, pretty, ...); None where it is content or a filter. `fields` and
    `properties` are switches only as lists of names, never as objects of the record's fields."""
    n = norm(name)
    s = schema if isinstance(schema, dict) else {}
    t = _type_of(s)
    desc = str(s.get("description", "")).lower()
    listed = n in FIELDS_SWITCHES and t in ("array", "string") or n in ("fieldstoreturn", "returnfields")
    if listed and (t == "array" or n in ("fields", "fieldstoreturn", "returnfields") or "comma" in desc):
        return "fields"
    if n in ("responseformat", "outputformat", "returnformat"):
        return "format"
    if n == "format" and t == "string":
        values = {str(v).lower() for v in s.get("enum") or []}
        if values and values <= FORMAT_VALUES:
            return "format"
    if n in SWITCH_PARAMS and n not in ("select",):
        return "flag" if t in ("boolean", "string", "integer", "array", "any") else None
    return None


def tokens(name: str) -> list[str]:
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return [t for t in re.split(r"[^a-zA-Z0-9]+", name.lower()) if t]


def norm(param: str) -> str:
    return re.sub(r"[^a-z0-9]", "", param.lower())


IRREGULAR = {
    "people": "person",
    "persons": "person",
    "children": "child",
    "men": "man",
    "women": "woman",
    "indices": "index",
    "aliases": "alias",
    "analyses": "analysis",
    "statuses": "status",
    "addresses": "address",
    "data": "data",
    "media": "media",
    "series": "series",
    "species": "species",
    "news": "news",
}
# nouns whose singular ends in -ie (movies -> movie, not "movy"; cookies -> cookie)
IE_NOUNS = frozenset(
    ("movie", "cookie", "calorie", "rookie", "zombie", "selfie", "hoodie", "brownie", "smoothie", "sortie")
    + ("prairie", "goalie", "newbie", "freebie", "birdie", "veggie", "techie", "foodie", "pie", "tie")
    + ("lie", "genie", "auntie", "bookie", "junkie", "groupie", "pixie", "cutie")
)


def singular(word: str) -> str:
    """`people` -> `person`, `companies` -> `company`, `statuses` -> `status`: one name per resource."""
    if word in IRREGULAR:
        return IRREGULAR[word]
    if len(word) <= 3 or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("uses"):
        return word[:-2]
    if word.endswith("ies"):
        return word[:-1] if word[:-1] in IE_NOUNS else word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes", "zes")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


SOURCE_WORDS = {"klavis", "official", "mcp", "archived", "community", "server", "openmcp", "docker"}
TLD_WORDS = {"com", "io", "net", "org", "co", "dev", "app"}
SERVICE_MAX = 24


def service_name(spec: Spec | str) -> str:
    """An engine-safe service name from the spec file (or the server name), cut at a word boundary."""
    if isinstance(spec, str):
        base = spec
    else:
        base = spec.source if spec.source not in ("", "<memory>") else spec.server
    base = re.sub(r"\(.*?\)", "", base.rsplit("/", 1)[-1].removesuffix(".json"))
    toks = [t for t in tokens(base) if t not in SOURCE_WORDS]
    toks = [t for t in toks if t not in TLD_WORDS] or toks
    name = ""
    for t in toks or ["server"]:
        if name and len(name) + 1 + len(t) > SERVICE_MAX:
            break
        name = f"{name}_{t}" if name else t
    if not name[0].isalpha():
        name = "s_" + name
    return name[:SERVICE_MAX].strip("_")


def unique_service_names(
    files: list[Any], reserved: set[str] | frozenset[str] = frozenset()
) -> dict[Any, str]:
    """One service name per spec file, unique across `files` and apart from `reserved` (the hand-built
    services): `_2`, `_3`, ... on a clash, in file order."""
    out: dict[Any, str] = {}
    taken: set[str] = set(reserved)
    for f in files:
        base = name = service_name(str(f))
        k = 2
        while name in taken:
            name = f"{base[: SERVICE_MAX - len(str(k)) - 1].rstrip('_')}_{k}"
            k += 1
        taken.add(name)
        out[f] = name
    return out


def fit_names(tools: list[dict[str, Any]], service: str) -> None:
    """Shorten tool names so that `service__tool` fits 64 characters; each stays unique and keeps its
    `original_name`. A shortened name keeps its readable start and ends in a hash of the original."""
    budget = 64 - len(service) - 2
    taken = {t["name"] for t in tools if len(t["name"]) <= budget}
    for t in tools:
        if len(t["name"]) <= budget:
            continue
        digest = hashlib.sha1(t["original_name"].encode()).hexdigest()
        for width in (6, 8, 12, 40):
            short = f"{t['name'][: budget - width - 1].rstrip('_')}_{digest[:width]}"
            if short not in taken:
                break
        t["shortened_from"] = t["name"]
        t["name"] = short
        taken.add(short)


def _prefix(tools: list[SpecTool]) -> list[str]:
    """Leading tokens most tools share (`jira_`, `google_calendar_`, `outlook_mail_`).

    A shared token that is also a verb (`close_` of Close, `get_` of nothing) is a prefix only when the
    tools that carry it name another verb after it (`close_get_lead`, `close_delete_lead`): otherwise
    it is the operation (`close_ticket`, `close_issue`)."""
    if len(tools) < 2:
        return []
    out: list[str] = []
    toks = [tokens(t.name) for t in tools]
    for i in range(3):
        c = Counter(tk[i] for tk in toks if len(tk) > i + 1 and tk[:i] == out)
        if not c:
            break
        word, n = c.most_common(1)[0]
        if n < (0.5 if i == 0 else 0.8) * len(tools):  # a second word most share is often a resource
            break
        if word in VERBS:
            carriers = [tk for tk in toks if len(tk) > i + 1 and tk[: i + 1] == [*out, word]]
            verb_after = sum(1 for tk in carriers if any(t in VERBS for t in tk[i + 1 :]))
            if verb_after < 0.8 * len(carriers):
                break
        out.append(word)
    return out


def _tool_prefix(tool: SpecTool, prefix: list[str], name_words: set[str]) -> list[str]:
    """The prefix to strip from this tool's name: none where stripping it leaves no noun and the prefix
    is not the server's name (`ticket_create`, `ticket_list` of mcp-ticketer: `ticket` is the resource,
    in the noun-verb order; `jira_search` of Jira stays a prefix)."""
    if not prefix:
        return prefix
    toks = tokens(tool.name)
    if toks[: len(prefix)] != prefix or len(toks) <= len(prefix):
        return prefix
    rest = _split_verb(toks[len(prefix) :])
    if any(t not in VERBS and t not in STOP and t not in PREPS and not t.isdigit() for t in rest):
        return prefix
    if not any(t in VERBS for t in rest):
        return prefix
    if any(w in name_words or singular(w) in name_words or w in SOURCE_WORDS for w in prefix):
        return prefix
    if prefix[-1] in VERBS:
        return prefix
    return []


def _name_words(spec: Spec) -> set[str]:
    """The words of the server's own name (its prefix is no resource)."""
    words = set(tokens(spec.server or ""))
    if spec.source not in ("", "<memory>"):
        words |= set(tokens(re.sub(r"\.json$", "", spec.source.rsplit("/", 1)[-1])))
    return words | {singular(w) for w in words}


VERSION_SEGMENT = re.compile(r"^(v\d+(\.\d+)*|api|rest|beta|alpha|latest)$", re.I)


def infer_http(tool: SpecTool) -> dict[str, Any] | None:
    """`_infer_http`, with the wrapper object of each path parameter it reads (`{"id": "path"}`)."""
    used: dict[str, str] = {}
    op = _infer_http(tool, used)
    if op is not None and used:
        op["wrapped"] = used
    return op


def _infer_http(tool: SpecTool, used: dict[str, str]) -> dict[str, Any] | None:
    """The operation of a tool that names its REST method and path (open-mcp): `GET /pets/{petId}` is a
    get of `pet` by `petId`, `POST /accounts/{accountId}/users` a create of `user` under `account`,
    `POST /tickets/{id}/close` a transition. None when the path says nothing usable."""
    method, path = tool.http_method, tool.http_path
    if not method or not path:
        return None
    segs = [FORMAT_SUFFIX.sub("", x) for x in path.strip("/").split("/")]  # `/products.json`
    segs = [x for x in segs if x and not VERSION_SEGMENT.match(x)]
    if not segs:
        return None
    props = tool.input_schema.get("properties", {})
    by_norm = {norm(p): p for p in props}
    inner_of: dict[str, str] = {}  # path parameters inside a `path: {...}` object (apideck, ...)
    for w in ("path", "pathparams", "pathparameters", "params"):
        box = next((p for p in props if norm(p) == w), None)
        inner = (props.get(box) or {}).get("properties") if box else None
        if isinstance(inner, dict):
            for q in inner:
                if norm(q) not in by_norm:
                    by_norm[norm(q)] = q
                    inner_of[q] = box

    def param(seg: str) -> str | None:
        m = re.fullmatch(r"\{([^}]+)\}", seg) or re.fullmatch(r":(\w+)", seg)
        found = by_norm.get(norm(m.group(1))) if m else None
        if found in inner_of:
            used[found] = inner_of[found]
        return found

    def is_param(seg: str) -> bool:
        return bool(re.fullmatch(r"\{[^}]+\}|:\w+", seg))

    last_param = is_param(segs[-1])
    literals = [(i, x) for i, x in enumerate(segs) if not is_param(x)]
    if not literals:
        return None
    li, lit = literals[-1]
    words = tokens(lit)
    if words and words[0] in PREPS and li > 0 and not is_param(segs[li - 1]):
        li, lit = li - 1, segs[li - 1]  # `/variants/from-base`: a variant made from a base
        words = tokens(lit)
        last_param = False
    action = words[0] if words else ""
    # a trailing action segment: POST /tickets/{id}/close, POST /pet/findByStatus
    if (
        not last_param
        and li > 0
        and is_param(segs[li - 1])
        and (action in TRANSITIONS or action in EXISTING_STATES)
        and len(words) == 1
    ):
        idp = param(segs[li - 1])
        prev = [x for x in segs[: li - 1] if not is_param(x)]
        if idp and prev:
            field, value = TRANSITIONS.get(action) or ("status", EXISTING_STATES[action])
            resource, _ = _resource_of(tokens(prev[-1]))
            if resource and value is not None:
                return {
                    "resource": resource,
                    "verb": action,
                    "kind": "transition",
                    "id_param": idp,
                    "field": field,
                    "value": value,
                }
        return None
    if action in LIST or action in GET and len(words) > 1:  # /pet/findByStatus: a search of `pet`
        prev = [x for x in segs[:li] if not is_param(x)]
        resource = _resource_of(tokens(prev[-1]))[0] if prev else None
        return (
            {"resource": resource, "verb": "list", "kind": "list"} if resource and method == "get" else None
        )
    resource, _ = _resource_of(words)
    if resource is None:
        return None
    op: dict[str, Any] = {"resource": resource, "verb": method}
    if li > 0 and is_param(segs[li - 1]):  # /accounts/{accountId}/users: under an account
        pp = param(segs[li - 1])
        parents = [x for x in segs[: li - 1] if not is_param(x)]
        parent = _resource_of(tokens(parents[-1]))[0] if parents else None
        if pp and parent and parent != resource:
            op["parent"] = {"resource": parent, "param": pp}
    idp = param(segs[-1]) if last_param else None
    if last_param and idp is None:
        return None
    if method == "get":
        return {**op, "kind": "get", "id_param": idp} if idp else {**op, "kind": "list"}
    if method == "post":
        return {**op, "kind": "update", "id_param": idp} if idp else {**op, "kind": "create"}
    if method in ("put", "patch"):
        required = list(tool.input_schema.get("required", []))
        # `PUT /pet` with `{id?, name, ...}`: the body's own id names the record, not a unique name
        idp = (
            idp
            or id_param(resource, props, required, strings=False)
            or (
                None  # the path names the record by a parameter the schema lacks: unusable as given
                if _path_names_missing_param(tool)
                else id_param(
                    resource, props, [p for p in props if p not in required], own=True, strings=False
                )
            )
            or id_param(resource, props, required)
        )
        return {**op, "kind": "update", "id_param": idp} if idp else None
    if method == "delete":
        return {**op, "kind": "delete", "id_param": idp} if idp else None
    return None


def _type_of(schema: dict[str, Any]) -> str:
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), None)
    if t in ("string", "integer", "number", "boolean", "array", "object"):
        return t
    if "enum" in schema:
        return "string"
    return "any"


# abbreviations that are part of a noun (`qr_code`, `api_key`, `sms_message`, `dns_record`)
ACRONYMS = {
    "qr",
    "sms",
    "mms",
    "ip",
    "dns",
    "api",
    "ssh",
    "ssl",
    "tls",
    "url",
    "vpn",
    "vm",
    "db",
    "mfa",
    "otp",
}
ACRONYMS |= {
    "pdf",
    "csv",
    "sql",
    "ai",
    "llm",
    "faq",
    "kb",
    "crm",
    "cdn",
    "gpg",
    "pgp",
    "jwt",
    "oauth",
    "saml",
}


def _resource_of(words: list[str]) -> tuple[str | None, bool]:
    words = [w for w in words if w not in STOP and not w.isdigit()]
    while len(words) > 1 and words[-1] in FORMAT_WORDS:  # `orders_json`: the format is no noun
        words = words[:-1]
    if not words:
        return None, False
    head = words[-1]
    plural = singular(head) != head
    name = singular(head)
    if (name in GENERIC or words[-2] in ACRONYMS) if len(words) > 1 else False:
        name = f"{singular(words[-2])}_{name}"
    return name, plural


def id_param(
    resource: str,
    props: dict[str, Any],
    required: list[str],
    any_param: bool = False,
    own: bool = False,
    strings: bool = True,
    bare: bool = False,
) -> str | None:
    """The parameter that names one `resource` record (`issue_id`, `issueKey`, `id`, `path`, ...).
    `own`: only a parameter named for the resource itself (not the one id a call requires, which may
    name another record); `strings`: also what is unique about it (`name`, `slug`, `full_name`)."""
    pool = list(props) if any_param else required
    by_norm = {norm(p): p for p in pool}
    r = resource.replace("_", "")
    last = resource.rsplit("_", 1)[-1]
    rtoks = resource.split("_")
    for cand in (
        f"{r}id",
        f"{r}key",
        f"{r}gid",
        f"{r}iid",  # GitLab's `issue_iid`: the record's number within its project
        f"{r}number",
        # `pullNumber` of a pull request: the record's number under the first words of its name (only
        # where the name is the record's own: `issue_number` is no id of an `issue_state`)
        *(f"{''.join(rtoks[:k])}number" for k in range(1, len(rtoks)) if own),
        f"{last}id",
        f"{last}key",
        f"{last}gid",
        f"{last}iid",
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
    for cand in (f"{r}identifier", f"{r}uid", f"{r}uuid", f"{r}slug", f"{last}slug", r if bare else ""):
        # `page_identifier`; with `bare`, `cancel_subscription(subscription)`: named for the record itself
        if cand and cand in by_norm and _type_of(props.get(by_norm[cand], {})) in ("string", "integer"):
            return by_norm[cand]
    if not any_param and not own:
        ids = [p for p in required if re.search(r"(id|key|gid)$", norm(p))]
        if len(ids) == 1:
            # `update_contact(audienceId, id?)`: the one required id is the parent's; an optional id
            # named for the record (or a bare `id`) names the record itself
            mine = id_param(resource, props, [p for p in props if p not in required], own=True, strings=False)
            if mine and _type_of(props.get(mine, {})) in ("string", "integer", "number"):
                return mine
            return ids[0]
    if not any_param and strings:
        return _unique_string(resource, props, required)
    return None


def bulk_id_param(resource: str, props: dict[str, Any], required: list[str]) -> str | None:
    """A required list of ids of `resource` (`ticket_ids`, `record_ids`, `ids`, `databases`): the records a
    bulk delete names."""
    by_norm = {norm(p): p for p in required if _type_of(props.get(p, {})) == "array"}
    r = resource.replace("_", "")
    last = resource.rsplit("_", 1)[-1]
    for cand in (f"{r}ids", f"{last}ids", f"{r}keys", "ids", f"{r}s", f"{last}s"):
        if cand in by_norm:
            items = props[by_norm[cand]].get("items") or {}
            if _type_of(items) in ("string", "integer", "any") and "properties" not in items:
                return by_norm[cand]
    return None


PEOPLE = {"user", "member", "contact", "person", "subscriber", "customer", "employee", "lead", "invitee"}
NUMBER_SUFFIXES = ("number", "num", "no", "id", "key", "name", "slug")


def _unique_string(resource: str, props: dict[str, Any], required: list[str]) -> str | None:
    """A record named by what is unique about it rather than an id: `pullNumber` of a pull request,
    `full_name` of a Unity Catalog volume, the `name` of a catalog, the `slug` of an object type, the
    `uri` of an SAP object, the `email` of a user. Only a required string (or numbered) parameter."""
    r = resource.replace("_", "")
    last = resource.rsplit("_", 1)[-1]
    rtoks = resource.split("_")

    def ok(p: str) -> bool:
        # a JSON `number` holds a record's number too (GitHub's `pullNumber: {type: number}`)
        numbered = tokens(p)[-1] in ("number", "num", "no")
        return _type_of(props.get(p, {})) in ("string", "integer", "any", *(("number",) if numbered else ()))

    by_norm = {norm(p): p for p in required if ok(p)}
    for p in required:  # `pull_number` / `pullNumber` of `pull_request`: a prefix of the resource's words
        toks = tokens(p)
        if (
            ok(p)
            and len(toks) >= 2
            and toks[-1] in NUMBER_SUFFIXES
            and toks[:-1] == rtoks[: len(toks) - 1]
            and rtoks[-1] not in FIELD_WORDS  # `issue_number` names the issue, not an `issue_state`
        ):
            return p
    cands = [f"{r}slug", f"{last}slug", "slug", f"{r}uri", f"{last}uri", "uri", "fullname", f"{last}name"]
    cands += ["name", "handle"] + (["email", f"{last}email", "username"] if last in PEOPLE else [])
    for cand in cands:
        if cand in by_norm:
            return by_norm[cand]
    return None


UPSERT = {"set", "put", "upsert", "save"}
# verbs that also start something new (`start_conversation`, `follow` a feed, `drop` a table one
# names): an operation on an existing record only with an id named for that record
RUN_TRANSITIONS = {"start", "stop", "pause", "resume", "suspend", "unsuspend", "terminate", "restart"}
RUN_TRANSITIONS |= {"unpublish", "revoke", "void", "follow", "unfollow", "watch", "unwatch", "subscribe"}
RUN_TRANSITIONS |= {"unsubscribe", "mute", "unmute", "hide", "unhide", "block", "unblock"}
RUN_TRANSITIONS |= {"deregister", "uninstall", "drop", "finalize", "share", "unshare"}


def _path_names_missing_param(tool: SpecTool) -> bool:
    """The REST path names the record by a parameter that the tool's schema does not have."""
    if not tool.http_path:
        return False
    props = {norm(p) for p in tool.input_schema.get("properties", {})}
    holes = re.findall(r"\{([^}]+)\}", tool.http_path)
    return any(norm(h) not in props for h in holes)


NOT_VERB_WORDS = {"settings", "setup", "address", "addon", "addons", "getaway", "listener", "listeners"}


def _split_verb(toks: list[str]) -> list[str]:
    """`deleteclient` -> `delete client`, `retrieveapplications` -> `retrieve applications`: names
    generated from operation ids run the verb into the noun."""
    out = list(toks)
    for i, t in enumerate(out):
        if t in NOT_VERB_WORDS:
            continue
        verb = next(
            (v for v in sorted(VERBS, key=len, reverse=True) if t.startswith(v) and len(t) - len(v) >= 3),
            None,
        )
        if verb:
            return [*out[:i], verb, t[len(verb) :], *out[i + 1 :]]
    return out


def _compute_op(tool: SpecTool, prefix: list[str]) -> dict[str, Any] | None:
    toks = tokens(tool.name)
    if toks[: len(prefix)] == prefix and len(toks) > len(prefix):
        toks = toks[len(prefix) :]
    if tool.http_kind and tool.http_method is None:  # not an operation: nothing to compute
        return None
    split = _split_verb(toks)
    op = (
        match_compute(toks, tool.input_schema)
        or match_clock(split, tool.input_schema)
        or match_info(split, tool.input_schema)
    )
    if op is not None or tool.http_method in ("post", "put", "patch", "delete"):  # a REST write is no lookup
        return op
    return match_geo(split, tool.input_schema) or match_service_info(
        split, tool.input_schema, tool.description
    )


def _expand_op(spec: Spec) -> dict[str, Any] | None:
    """open-mcp's `expandSchema(toolName, jsonPointers)`: answered from each tool's `x-expandSchema`."""
    tool = next((t for t in spec.tools if t.name == "expandSchema"), None)
    if tool is None:
        return None
    props = tool.input_schema.get("properties", {})
    name_p = next((p for p in props if norm(p) == "toolname"), None)
    ptr_p = next((p for p in props if norm(p) == "jsonpointers"), None)
    schemas = {t.original_name: t.expand for t in spec.tools if t.expand}
    if not (name_p and ptr_p and schemas) or set(props) != {name_p, ptr_p}:
        return None
    aliases = {t.name: t.original_name for t in spec.tools if t.expand and t.name != t.original_name}
    op = {"kind": "compute", "fn": "expand_schema", "params": [name_p, ptr_p], "resource": None}
    return {**op, "expand": True, "schemas": schemas, **({"aliases": aliases} if aliases else {})}


BY_ID_WORDS = {"id", "key", "uuid", "gid", "identifier", "uid"}
# fields that name one record where no id is given (`get_company_details(domain)`)
UNIQUE_FIELDS = {"domain", "email", "slug", "username", "handle", "uri", "url", "code", "number", "name"}


def _named_for(param: str, resource: str, generic: bool = False) -> bool:
    """`invoice_id` / `invoiceId` names an `invoice`; with `generic`, so does a bare `id`."""
    n = norm(param)
    r, last = resource.replace("_", ""), resource.rsplit("_", 1)[-1]
    return (generic and n in GENERIC_IDS) or n.startswith(r) or n.startswith(last)


def infer_op(tool: SpecTool, prefix: list[str]) -> dict[str, Any]:
    """The operation of one tool, or `{"kind": "simulated", "reason": ...}`."""
    http = infer_http(tool)
    if http is not None:
        toks = tokens(tool.name)
        toks = toks[len(prefix) :] if toks[: len(prefix)] == prefix and len(toks) > len(prefix) else toks
        if http["kind"] in ("create", "update", "delete") and toks and toks[0] in TRANSITIONS:
            # `follow_playlist` = `PUT /playlists/{id}/followers`: the name says which state changes
            named = infer_op(
                dataclasses.replace(tool, http_method=None, http_path=None, http_kind=None), prefix
            )
            if named["kind"] == "transition":
                return named
        return http
    if tool.http_method == "delete" and tool.http_path:
        # `DELETE /playlists/{id}/tracks` (`remove_tracks_playlist`) removes part of a playlist: a name
        # read without the path would delete the playlist itself
        segs = [x for x in tool.http_path.strip("/").split("/") if x]
        if (
            len(segs) >= 2
            and not re.fullmatch(r"\{[^}]+\}|:\w+", segs[-1])
            and re.fullmatch(r"\{[^}]+\}|:\w+", segs[-2])
        ):
            named = infer_op(
                dataclasses.replace(tool, http_method=None, http_path=None, http_kind=None), prefix
            )
            last = _resource_of(tokens(segs[-1]))[0]
            if named["kind"] == "delete" and named.get("resource") != last:
                return {
                    "kind": "simulated",
                    "cause": "removes_part_of_record",
                    "reason": f"DELETE {tool.http_path} removes {segs[-1]} of a record, not the record",
                }
    if tool.http_kind and tool.http_method is None:  # open-mcp's `parameters` / `servers` entries
        return {
            "kind": "simulated",
            "cause": "not_an_operation",
            "reason": f"x-http-method {tool.http_kind!r} is an OpenAPI path field, not an HTTP operation",
        }
    toks = tokens(tool.name)
    if toks[: len(prefix)] == prefix and len(toks) > len(prefix):
        toks = toks[len(prefix) :]
    if not any(t in VERBS for t in toks):
        toks = _split_verb(toks)
    vi = next((i for i, t in enumerate(toks) if t in VERBS), None)
    if vi is None and toks and toks[0] in SOFT_CREATE and len(toks) > 1:
        vi = 0
    if vi is None:
        return {"kind": "simulated", "cause": "no_verb", "reason": "no operation verb in the name"}
    verb, rest = toks[vi], toks[vi + 1 :]
    before = [w for w in toks[:vi] if w not in STOP]
    if before and not [w for w in rest if w not in STOP and w not in PREPS and w != "by"]:
        rest = before + rest  # noun before verb: `products_get`, `woo_orders_list`
    elif before and rest and rest[0] == "by":
        rest = before + rest  # `products_get_by_sku`
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
    # `invoices_fetch_by_id(invoice_id)`: the name says the record is named by its id: one record
    by_id = by in BY_ID_WORDS
    if by_id:
        by = None
    pi = next((i for i, t in enumerate(rest) if t in PREPS), None)
    head, parent_words = (rest[:pi], rest[pi + 1 :]) if pi is not None else (rest, [])
    resource, plural = _resource_of(head)
    parent, _ = _resource_of(parent_words)
    content = [w for w in head if w not in STOP and not w.isdigit()]
    # the record before the last word, as a noun of its own (`update_pull_request_title`: the pull request's)
    qualifier = (
        _resource_of(content[:-1])[0] if len(content) > 1 and resource == singular(content[-1]) else None
    )
    if (
        qualifier is None
        and len(content) > 1
        and singular(content[-1]) in FIELD_WORDS
        and resource == f"{singular(content[-2])}_{singular(content[-1])}"
    ):
        # `update_page_content(page_identifier)`: the page's content
        qualifier = _resource_of(content[:-1])[0]
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
    # a record is named by what is unique about it only where the call reads or changes one that
    # exists (`set_cookie(name)` and `put` create what they name), and never where the path names it
    by_string = verb not in UPSERT and not _path_names_missing_param(tool) and by is None
    # a required parameter named just for the resource names the record only in a name of one verb and
    # one noun (`get_tag(tag)`, `cancel_subscription(subscription)`; never `set_log_level(level)`, where
    # it is the value); a transition takes nothing else (`approve_token(token, spender)` is no transition)
    bare = (
        vi == 0
        and not any(t in VERBS for t in toks[1:])
        and len(content) == 1
        and (
            verb not in TRANSITIONS
            or set(required) == {next((p for p in props if norm(p) == norm(resource)), "")}
        )
    )
    idp = id_param(resource, props, required, strings=by_string, bare=bare)
    if verb in RUN_TRANSITIONS:  # `start_conversation(space_id)` starts a new one: not a transition
        idp = id_param(resource, props, required, own=True, strings=by_string, bare=bare)
    parent_param = id_param(parent, props, required, any_param=True) if parent else None
    op: dict[str, Any] = {"resource": resource, "verb": verb}
    if qualifier:
        op["qualifier"] = qualifier  # `contact` of `list_contact_notes`: resolved against the others
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
    # a plural read with an id named for the record itself (`customers_fetch(customer_id)`) or a name
    # that says `by_id` fetches that one record; a plural read by another's id lists its children
    own_id = idp if idp and (by_id or _named_for(idp, resource)) else None
    if verb in GET and idp is None and by is None and not plural or by_id and idp is None:
        # `get_company_details(company_id?, domain?)`: an optional own id, or a unique field, names it
        opt = id_param(resource, props, [p for p in props if p not in required], own=True, strings=False)
        if opt and _named_for(opt, resource, generic=True):
            alts = [
                p for p in props if p != opt and norm(p) in UNIQUE_FIELDS and _type_of(props[p]) == "string"
            ]
            return {**op, "kind": "get", "id_param": opt, "optional_id": True, "lookups": alts}
    if verb in GET and ((plural and not own_id) or (idp is None and by is None)) or verb in LIST:
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
    if verb in EXISTING_STATES and verb not in TRANSITIONS:
        # `send_invoice(invoice_id)`: the record the id names moves on (sent), no new one is made
        own = id_param(resource, props, required, own=True, strings=False)
        if own and own != parent_param and _named_for(own, resource, generic=True):
            return {
                **op,
                "kind": "transition",
                "id_param": own,
                "field": "status",
                "value": EXISTING_STATES[verb],
            }
    if verb in CREATE or verb in SEND or verb in SOFT_CREATE:
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
    if verb in UPDATE and idp is None and qualifier:
        # `update_issue_title(issue_number, title)`: a field of the record the id names
        qidp = id_param(qualifier, props, required, own=True, strings=False)
        if qidp and qidp != parent_param:
            op.pop("qualifier", None)
            return {**op, "resource": qualifier, "kind": "update", "id_param": qidp}
    if verb in DELETE and idp is None and (bulk := bulk_id_param(resource, props, required)):
        return {**op, "kind": "delete", "id_param": bulk, "bulk": True}
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


RANGE = re.compile(r"^(min|max|from|to|since|until|before|after|start|end)_?(.+)$", re.I)
LOWER_BOUND = {"min", "from", "since", "after", "start"}
GENERIC_IDS = {"id", "key", "gid", "identifier", "uuid"}
ENVELOPE_PARAMS = {
    "body",
    "data",
    "payload",
    "input",
    "attributes",
    "fields",
    "properties",
    "record",
    "params",
    "request",
    "updates",
    "changes",
}


# `created_date_start`, `updated_after`, `amount_max`: the bound after the field
RANGE_AFTER = re.compile(r"^(.+?)_?(min|max|from|to|since|until|before|after|start|end)$", re.I)
TIME_WORDS = ("date", "time", "datetime", "timestamp", "on", "at")
ENGINE_TIME = ("created_at",)  # every record has it, though no tool writes it


def _range_target(param: str, fields: dict[str, str]) -> tuple[str, str | None]:
    """The bound (`start`, `max`, ...) and the stored field a range filter compares with, where one is:
    `minEmployees` -> `employees`, `created_date_start` / `createdAfter` -> `created_at`, a bare
    `since` / `until` -> `created_at`; else no field (the filter is reported unsupported)."""
    n = norm(param)
    if n in ("since", "until"):  # when it changed, where the record says, else when it was made
        return n, next((f for f in fields if norm(f) in ("updatedat", "modifiedat")), "created_at")
    cands = []
    if m := RANGE.match(param):
        cands.append((m.group(1).lower(), norm(m.group(2))))
    if m := RANGE_AFTER.match(re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", param)):
        cands.append((m.group(2).lower(), norm(m.group(1))))
    pool = [*fields, *ENGINE_TIME]
    for bound, stem in cands:
        if not stem:
            continue
        core = stem
        for w in TIME_WORDS:  # `created_date` / `createdtime` / `created_on` is `created_at`
            if core.endswith(w) and len(core) > len(w) + 2:
                core = core[: -len(w)]
                break
        for f in pool:
            nf = norm(f)
            if nf in (stem, stem + "at", stem + "date") or (core != stem and nf in (core + "at", core)):
                return bound, f
    return "", None


def _merge_field(fields: dict[str, str], name: str, t: str) -> None:
    """A stored field's type follows every tool that writes it: one tool's string `status` and
    another's integer one make a field of either (`any`); integer and number make a number."""
    old = fields.get(name)
    if old is None or old == t:
        fields[name] = t
    elif {old, t} == {"integer", "number"}:
        fields[name] = "number"
    else:
        fields[name] = "any"


def _is_envelope_param(name: str) -> bool:
    """A parameter that wraps the record's fields (`body`, `productData`, `contact_input`)."""
    toks = tokens(name)
    return bool(toks) and (norm(name) in ENVELOPE_PARAMS or toks[-1] in ENVELOPE_PARAMS)


OPEN_QUALIFIERS = {"additional", "extra", "update", "updated", "new", "other", "record", "row", "input"}


def _open_envelope(name: str, resource: str) -> bool:
    """A free-form object whose keys are the record's fields: `properties`, `updates`, `contact_data`,
    `additional_properties`; never a field the record keeps as an object (`custom_fields`, `merge_fields`)."""
    toks = tokens(name)
    if not _is_envelope_param(name):
        return False
    if norm(name) in ENVELOPE_PARAMS:
        return True
    return "_".join(singular(t) for t in toks[:-1]) == resource or toks[0] in OPEN_QUALIFIERS


def _skip_field(name: str) -> bool:
    n = norm(name)
    return n in LIMIT_PARAMS or n in OFFSET_PARAMS or n in QUERY_PARAMS


def _skip_write_field(name: str, schema: Any, required: list[str] | set[str]) -> bool:
    """A write's parameter that is no field of the record: an API switch, or a paging cursor it does
    not require. Content named like a list control (a tweet's `text`, a budget's `limit`, a file's
    `size`, a shape's `top`) is stored, and so is every required parameter."""
    if switch_param(name, schema):
        return True
    return name not in required and norm(name) in OFFSET_PARAMS


QUERY_WRAPPERS = {"query", "path", "params", "pathparams", "queryparams", "searchparams", "parameters"}
TRANSPORT_WRAPPERS = {"header", "headers", "cookie", "cookies"}


def _list_params(tool: SpecTool, op: dict[str, Any]) -> list[str]:
    """The parameters a list reads, those inside a `query: {...}` / `path: {...}` object lifted up
    (recorded in `op["wrapped"]`, so the runtime reads them there); transport objects (`header`) are
    no filters."""
    props = tool.input_schema.get("properties", {})
    out = []
    for p, s in props.items():
        inner = s.get("properties") if isinstance(s, dict) else None
        if norm(p) in TRANSPORT_WRAPPERS and isinstance(inner, dict):
            continue
        if norm(p) in QUERY_WRAPPERS and isinstance(inner, dict):
            for q in inner:
                if q not in props:
                    op.setdefault("wrapped", {}).setdefault(q, p)
                    out.append(q)
            continue
        out.append(p)
    return out


SEARCH_VERBS = {"search", "find", "query", "lookup"}
SEARCH_STOPS = {
    "in",
    "by",
    "using",
    "with",
    "from",
    "across",
    "within",
    "on",
    "via",
    "through",
    "of",
    "to",
    "for",
}


def _bare_searches(tools: list[SpecTool], ops: dict[str, dict[str, Any]]) -> None:
    """`jira_search(jql)`, gdrive's `search(query)`: a search whose name has no noun searches the records
    the first sentence of its description names ("Search Jira issues", "Search for files in Google
    Drive"), where the server keeps that record type; otherwise it stays simulated (`no_resource`)."""
    named = {op["resource"] for op in ops.values() if op.get("resource") and op["kind"] not in ("simulated",)}
    for t in tools:
        op = ops.get(t.name) or {}
        if op.get("cause") != "no_resource" or not SEARCH_VERBS & set(tokens(t.name)):
            continue
        words = re.findall(r"[A-Za-z]+", t.description.split(".")[0])
        # what it searches comes before how or where ("Search Jira issues using JQL", "Search for files
        # in Google Drive"; "objects by a property" names no record type, "the web using an engine" none)
        cut = next((i for i, w in enumerate(words) if i > 1 and w.lower() in SEARCH_STOPS), len(words))
        for w in words[:cut]:
            if singular(w.lower()) in named and w[:1].islower():
                ops[t.name] = {"resource": singular(w.lower()), "verb": "search", "kind": "list"}
                break


def _sub_key(tool: SpecTool, idp: str) -> bool:
    """Another required parameter names a part of the record (`column_name`, `template_name`): the
    call changes that part, keyed by both, not the record itself."""
    for p in tool.input_schema.get("required", []):
        toks = tokens(p)
        if p != idp and len(toks) >= 2 and toks[-1] in ("id", "key", "name", "number", "slug", "uuid", "gid"):
            return True
    return False


# ---- the current user's saved collections and the player: relations and a singleton record ----------
# words that say a tool reads or changes what the current user keeps (`get_user_saved_tracks`,
# `save_tracks_to_user_library`, `add_to_liked`, `check_user_follows`)
COLLECTION_WORDS = {"saved", "library", "liked", "likes", "follows", "followed", "following", "favorites"}
FOLLOW_WORDS = {"follow", "unfollow", "follows", "followed", "following"}
COLLECTION_VERBS = {
    "save": "save",
    "add": "save",
    "follow": "save",
    "remove": "unsave",
    "delete": "unsave",
    "unsave": "unsave",
    "unfollow": "unsave",
    "check": "check",
    "get": "list",
    "list": "list",
    "retrieve": "list",
    "fetch": "list",
}
OWNER_WORDS = {
    "user",
    "users",
    "current",
    "me",
    "my",
    "for",
    "to",
    "from",
    "in",
    "of",
    "if",
    "the",
    "or",
    "and",
}
OWNER_WORDS |= {"contains", "contain", "spotify", "a", "an", "multiple", "one", "more", "all"}
ITEM_WORDS = {
    "track",
    "album",
    "show",
    "episode",
    "audiobook",
    "artist",
    "playlist",
    "song",
    "user",
    "chapter",
}
ITEM_WORDS |= {
    "video",
    "podcast",
    "book",
    "movie",
    "channel",
    "station",
    "item",
    "post",
    "repo",
    "repository",
}


def _collection_paths(spec: Spec) -> set[str]:
    """REST paths of the current user's collections: `/me/tracks` where the spec both writes (PUT / DELETE)
    and reads it. Its `contains` is the membership check."""
    writes = {
        t.http_path.rstrip("/") for t in spec.tools if t.http_method in ("put", "delete") and t.http_path
    }
    reads = {t.http_path.rstrip("/") for t in spec.tools if t.http_method == "get" and t.http_path}
    return {
        p for p in writes if re.fullmatch(r"/(me|user|users/me)/[a-z_-]+", p) and f"{p}/contains" in reads
    }


def _ids_params(props: dict[str, Any], item: str | None) -> list[str]:
    """The parameters that carry the ids of a collection call (`ids`, `track_ids`, `song_ids`, `b_ids`)."""
    out = []
    for p, s in props.items():
        n, t = norm(p), _type_of(s) if isinstance(s, dict) else "any"
        if t not in ("array", "string"):
            continue
        if (
            n in ("ids", "bids", "uris", "itemids")
            or (item and n in (f"{item}ids", f"{item}uris"))
            or t == "array"
            and n.endswith("ids")
            and len(out) == 0
        ):
            out.append(p)
    return out


def _collection_op(tool: SpecTool, prefix: list[str], paths: set[str]) -> dict[str, Any] | None:
    """A save / remove / check / list of the current user's saved collection (a relation table keyed by
    the ids it holds), or a follow / unfollow / check / list of whom the user follows. None otherwise."""
    toks = tokens(tool.name)
    if toks[: len(prefix)] == prefix and len(toks) > len(prefix):
        toks = toks[len(prefix) :]
    props = tool.input_schema.get("properties", {})
    path = (tool.http_path or "").rstrip("/")
    base = path.removesuffix("/contains")
    by_path = base in paths
    verb = next((COLLECTION_VERBS[t] for t in toks[:2] if t in COLLECTION_VERBS), None)
    if by_path:
        verb = {
            "put": "save",
            "delete": "unsave",
            "get": "check" if path.endswith("/contains") else "list",
        }.get(tool.http_method or "")
    mine = "current" in toks and "user" in toks  # `save_tracks_for_current_user`
    signal = by_path or any(t in COLLECTION_WORDS for t in toks)
    signal = signal or (verb in ("save", "unsave") and (mine or toks[0] in FOLLOW_WORDS))
    if verb is None or not signal:
        return None
    follows = any(t in FOLLOW_WORDS for t in toks) or base.endswith("/following")
    nouns = [singular(t) for t in toks if t not in COLLECTION_VERBS and t not in COLLECTION_WORDS]
    nouns = [w for w in nouns if w in ITEM_WORDS or w not in OWNER_WORDS | STOP | VERBS]
    if follows and "or" in toks and "user" in {singular(t) for t in toks[toks.index("or") + 1 :]}:
        nouns.append("user")  # `follow_artists_or_users`: users are followed too
    if by_path and not follows:
        nouns = [singular(tokens(base.rsplit("/", 1)[-1])[-1])]
    if not follows:  # the user owns a saved collection; only a follow names users as items
        nouns = [w for w in nouns if w != "user"]
    item = next((w for w in nouns if w in ITEM_WORDS), nouns[0] if nouns else None)
    ids = _ids_params(props, item)
    if item is None and ids:
        stem = re.sub(r"(ids|uris)$", "", norm(ids[0]))
        item = singular(stem) if stem else None
    if item is None and not follows:
        m = re.search(r"\b(?:liked|saved|favou?rite)\s+([a-z]+)", tool.description.lower())
        item = singular(m.group(1)) if m else None
    if item is None and not follows:
        return None
    # an id named for one record (`follow_playlist(playlist_id)`) changes that record: not this class
    own = [
        p
        for p in props
        for w in {*nouns, item} - {None, "user"}
        if norm(p) in (f"{w}id", f"{w}key") and _type_of(props[p]) != "array"
    ]
    if own:
        if verb == "check":  # `check_if_user_follows_playlist(playlist_id, ids)`: other users' follows
            return {
                "kind": "simulated",
                "cause": "other_users_state",
                "reason": "checks what other users follow; only the current user's state is kept",
            }
        return None
    type_param = next((p for p in props if norm(p) == "type" and follows), None)
    resource = "followed" if follows else f"saved_{item}"
    op: dict[str, Any] = {"resource": resource, "verb": verb, "collection": True}
    if follows:  # what is followed: a kind the name gives, else the type parameter's default
        kinds = [w for w in nouns if w in ITEM_WORDS and w != "user"]
        tdef = (
            (described_default(props[type_param]) or (props[type_param].get("enum") or [None])[0])
            if type_param
            else None
        )
        op["item"] = kinds[0] if kinds else str(tdef) if tdef else "user" if "user" in nouns else "artist"
        if type_param:
            op["type_param"] = type_param
    else:
        op["item"] = item
    if verb == "list":
        if ids:  # `get_user_saved_tracks(ids)` is no list of the collection
            return None
        if follows and not type_param and item in ITEM_WORDS:
            op["where"] = {"type": item}
        return {**op, "kind": "list"}
    if not ids:
        return None
    return {**op, "kind": verb, "ids_params": ids}


PLAYER_WORDS = {"playback", "player", "playing"}
PLAYER_ACTIONS = (  # first match wins: (words any of which the name has, action)
    ({"currently", "current"}, "state"),
    ({"queue"}, "queue"),
    ({"next"}, "next"),
    ({"previous", "prev", "back"}, "previous"),
    ({"pause"}, "pause"),
    ({"seek"}, "seek"),
    ({"volume"}, "volume"),
    ({"shuffle"}, "shuffle"),
    ({"repeat"}, "repeat"),
    ({"transfer"}, "transfer"),
    ({"play", "start", "resume"}, "play"),
)
PLAYER_ITEMS = ("track", "song", "episode", "playlist", "album", "artist", "show", "audiobook")


def _player_signal(tool: SpecTool) -> bool:
    toks = set(tokens(tool.name)) | set(tokens(tool.http_path or ""))
    words = set(re.findall(r"[a-z]+", tool.description.lower()))
    return bool(toks & PLAYER_WORDS or words & {"playback", "player"})


def _player_op(tool: SpecTool, prefix: list[str], service_plays: bool) -> dict[str, Any] | None:
    """A transition of the service's one player record (play, pause, next, seek, volume, shuffle, ...),
    or a read of it (currently playing, the queue): only where the tool, or the service around a track
    or song tool, clearly says player / playback."""
    toks = tokens(tool.name)
    if toks[: len(prefix)] == prefix and len(toks) > len(prefix):
        toks = toks[len(prefix) :]
    lead = {"play", "pause", "skip", "seek", "next", "previous", "shuffle", "repeat", "resume"}
    if not service_plays or not (
        _player_signal(tool) or set(toks) & {"track", "song", "position"} or toks[0] in lead
    ):
        return None
    if set(toks) & {"recently", "played", "top", "devices", "device", "recommendations"} - {"device"}:
        return None
    if "device" in toks and "transfer" not in toks:
        return None
    action = next((a for words, a in PLAYER_ACTIONS if set(toks) & words), None)
    if action is None:
        return None
    props = tool.input_schema.get("properties", {})
    if action == "state" and not (set(toks) & {"playing", "playback", "currently"}):
        return None
    if action == "queue":
        if toks[0] in GET or toks[0] in LIST:
            action = "queue_get"
        elif toks[0] in ("add", "append", "enqueue", "queue"):
            action = "enqueue"
        else:
            return None
    if action == "previous" and "back" in toks and "skip" not in toks:
        action = "previous"
    if toks[0] in GET and action not in ("queue_get",) and action != "state":
        action = "state"  # `get_information_about_the_users_current_playback`
    params: dict[str, str] = {}
    for p, s in props.items():
        n, t = norm(p), _type_of(s)
        if n in ("deviceid", "deviceids"):
            params["device"] = p
        elif n in ("uris", "trackids", "songids") and t == "array":
            params["items"] = p
        elif n in ("uri", "trackid", "songid", "spotifyidoruri", "itemid", "id", "trackuri"):
            params["item"] = p
        elif n in ("contexturi", "context"):
            params["context"] = p
        elif n in ("positionms", "position", "progressms"):
            params["position"] = p
        elif n in ("volumepercent", "volume", "level"):
            params["volume"] = p
        elif n in ("state", "enabled", "mode") and action in ("shuffle", "repeat"):
            params["state"] = p
        elif n in ("name", "query", "songname", "trackname") and action == "play":
            params["name"] = p
        elif n == "play" and action == "transfer":
            params["play"] = p
    need = {"seek": "position", "volume": "volume", "shuffle": "state", "repeat": "state", "enqueue": "item"}
    if action in need and need[action] not in params:
        return None
    if action == "transfer" and "device" not in params:
        return None
    if action == "repeat":
        modes = [m for m in ("track", "context", "off") if m in json_text(props[params["state"]])]
        params_modes = modes if len(modes) >= 2 else []
    op: dict[str, Any] = {"kind": "player", "resource": "player", "verb": toks[0], "action": action}
    op["params"] = params
    if action == "repeat" and params_modes:
        op["modes"] = params_modes
    return op


def json_text(schema: Any) -> str:
    return str(schema).lower()


# a resource named by a word that is no noun (`skip_to_next_track` -> `next`, `check_saved` ->
# `contain`, `get_current` -> `current`, `redirect_to` -> `to`): a made-up table, never the tool's
# semantics; such tools are simulated with this cause
NOT_NOUNS = PREPS | {"next", "previous", "prev", "contain", "contains", "current", "all", "me", "up", "out"}
NOT_NOUNS |= {"about", "back", "off", "down", "away", "again", "now", "recent", "recently", "latest"}
NOT_NOUNS |= {"playing", "played", "liked", "missing", "started", "used", "unmasked", "combined"}
NOT_NOUNS |= {"cancel", "restart", "terminate", "pause", "resume", "uninstall", "remove", "delete", "add"}
NOT_NOUNS |= {"create", "fetch", "enable", "disable", "stop", "start", "edit", "fork", "assign", "revoke"}
NOT_NOUNS |= {"get", "send", "register", "unsubscribe", "publish", "anything", "granted", "rotated"}
NOT_NOUNS |= {"rescued", "weighted", "enriched", "annotated", "received", "predicted", "returning"}


def _not_a_noun(op: dict[str, Any]) -> bool:
    r = op.get("resource")
    return bool(r) and op["kind"] not in ("compute", "simulated") and r.rsplit("_", 1)[-1] in NOT_NOUNS


PLAYER_FIELDS = {
    "is_playing": "boolean",
    "item": "any",
    "context_uri": "any",
    "progress_ms": "integer",
    "volume_percent": "integer",
    "shuffle_state": "boolean",
    "repeat_state": "string",
    "device_id": "any",
    "queue": "array",
    "history": "array",
}


def _library_resources(ops: dict[str, dict[str, Any]], resources: dict[str, dict[str, Any]]) -> None:
    """The tables behind saved collections (one row per saved id, the followed ones with their `type`)
    and the service's one player record; each names the tables its ids come from."""
    items = [r for r in PLAYER_ITEMS if r in resources]
    for op in ops.values():
        r = resources.get(op.get("resource") or "")
        if r is None:
            continue
        if op.get("collection"):
            r["collection_of"] = op["item"]
            if op["resource"] == "followed":
                r["fields"]["type"] = "string"
        elif op["kind"] == "player":
            r["singleton"] = True
            r["fields"] = dict(PLAYER_FIELDS)
            r["items_from"] = items
            op["items_from"] = items
            if "device" in resources:
                op["device_resource"] = "device"
    for op in ops.values():  # a saved id must name a record where the service keeps that kind
        if (
            op.get("collection")
            and op["item"] in resources
            and not resources[op["item"]].get("collection_of")
        ):
            op["item_resource"] = op["item"]


def compile_manifest(spec: Spec, name: str | None = None) -> dict[str, Any]:
    """The manifest of `spec` before adversarial testing (every inferred tool `compiled`)."""
    shared = _prefix(spec.tools)
    name_words = _name_words(spec)
    paths = _collection_paths(spec)
    plays = sum(1 for t in spec.tools if _player_signal(t)) >= 2  # a service with a player
    ops = {}
    # an action-dispatch tool (`gitlab_issue(action, params)`) compiles as one sub-tool per action,
    # `issue_get(project_id, issue_iid)`, which take part in the service's resources like any tool
    work: list[SpecTool] = []
    dispatch: dict[str, tuple[Dispatch, dict[str, SpecTool]]] = {}
    taken = {t.name for t in spec.tools}
    for t in spec.tools:
        d = dispatch_of(t)
        if d is None:
            work.append(t)
            continue
        noun = "_".join(tokens(t.name)[len(_tool_prefix(t, shared, name_words)) :]) or t.name
        subs = {}
        for action, schema in d.actions.items():
            sub_name = f"{noun}_{action}"
            if sub_name in taken:
                sub_name = f"{t.name}_{action}"
            taken.add(sub_name)
            subs[action] = SpecTool(
                name=sub_name, original_name=f"{t.name}.{action}", description="", input_schema=schema
            )
            ops[sub_name] = infer_op(subs[action], [])
            work.append(subs[action])
        dispatch[t.name] = (d, subs)
    for t in spec.tools:
        if t.name in dispatch:
            continue
        prefix = _tool_prefix(t, shared, name_words)
        ops[t.name] = (
            _collection_op(t, prefix, paths)
            or _player_op(t, prefix, plays)
            or _compute_op(t, prefix)
            or infer_op(t, prefix)
        )
    _bare_searches(spec.tools, ops)
    _one_resource_per_object(ops)
    if (expand := _expand_op(spec)) is not None:
        ops["expandSchema"] = expand
    resources: dict[str, dict[str, Any]] = {}
    # a create / list / update that takes `<other resource>_id` belongs under that resource
    named = {norm(op["resource"]): op["resource"] for op in ops.values() if op.get("resource")}
    for t in work:  # `create_contact_note(id)`, `remove_contact_tag(id, tag)`: the id is the contact's
        op = ops[t.name]
        q = op.pop("qualifier", None)
        if q is None or q not in named.values() or op.get("parent") or op["kind"] == "simulated":
            continue
        props = t.input_schema.get("properties", {})
        own_q = next((p for p in props if _named_for(p, q) and re.search(r"(id|key|gid)$", norm(p))), None)
        if own_q and op["verb"] in RELATION and op["kind"] in ("create", "delete"):
            # `remove_contact_tag(contact_id, tag_id)`: the link between the contact and the tag goes,
            # never the tag itself; `add_contact_tag(contact_id, tag_id)` links an existing tag
            member = next(
                (
                    p
                    for p in props
                    if p != own_q
                    and (_named_for(p, op["resource"]) or norm(p) == norm(op["resource"]))
                    and _type_of(props[p]) in ("string", "integer", "array")
                ),
                None,
            )
            if member:
                ops[t.name] = {
                    **op,
                    "kind": "relate" if op["verb"] in {"add", "attach", "link"} else "unrelate",
                    "resource": q,
                    "member": op["resource"],
                    "member_param": member,
                    "id_param": own_q,
                }
                ops[t.name].pop("parent", None)
                continue
        generic = next((p for p in props if norm(p) in GENERIC_IDS), None)
        if generic is None:
            continue
        if op["kind"] in ("create", "list"):
            op["parent"] = {"resource": q, "param": generic}
        elif op["kind"] == "delete" and op["verb"] in RELATION and op["id_param"] == generic:
            member = next(
                (p for p in props if p != generic and norm(p).startswith(norm(op["resource"]))), None
            )
            if member:
                ops[t.name] = {
                    **op,
                    "kind": "unrelate",
                    "resource": q,
                    "member": op["resource"],
                    "member_param": member,
                    "id_param": generic,
                }
    uses = Counter(op.get("resource") for op in ops.values() if op.get("resource"))
    # a resource only ever changed through another's id (`update_bucket_description(bucket_id)`) is a field
    kinds = {(op.get("resource"), op["kind"]) for op in ops.values() if op.get("resource")}
    for t in work:  # `update_table_description(table_id)`, `set_start(clip_id)`: a field of the table
        op = ops[t.name]
        idp = op.get("id_param")
        if op["kind"] not in ("update", "transition") or not idp:
            continue
        parent = op.get("parent")
        if parent:  # `update_variant_parameters(variant_id)`: the id names the parent, not a child
            if parent["param"] != idp or _sub_key(t, idp):
                continue
            stem, other = norm(parent["resource"]), parent["resource"]
        elif op.get("wrapped"):
            continue
        else:
            stem = re.sub(r"(id|key|gid)$", "", norm(idp))
            other = named.get(stem)
        own = {k for r, k in kinds if r == op["resource"]}
        named_in = other in {singular(w) for w in tokens(t.name)} if other else False
        alone = uses[op["resource"]] == 1 or (named_in and not own & {"create", "get", "list", "delete"})
        if other and other != op["resource"] and stem != norm(idp) and alone:
            uses[op["resource"]] -= 1
            op["resource"] = other
            op.pop("parent", None)
    for t in work:
        op = ops[t.name]
        if op["kind"] not in ("create", "list", "update") or op.get("collection"):
            continue
        for p, psch in t.input_schema.get("properties", {}).items():
            stem = re.sub(r"(id|key|gid)$", "", norm(p))
            other = named.get(stem) or (named.get(stem[6:]) if stem.startswith("parent") else None)
            if not other and stem != norm(p) and stem in PERSON_ROLES:  # `author_id` names a user
                other = next((named[w] for w in PEOPLE_TABLES if w in named), None)
            bare = (  # Stripe's `customer`: "The ID of the customer ..." names a customer record
                stem == norm(p)
                and other is not None
                and isinstance(psch, dict)
                and _type_of(psch) in ("string", "integer")
                and re.search(r"\bid\b", str(psch.get("description", "")), re.I)
            )
            if not other or other == op["resource"] or (stem == norm(p) and not bare):
                continue
            if not op.get("parent"):
                op["parent"] = {"resource": other, "param": p}
            elif op["kind"] != "list" and p not in (op["parent"]["param"], op.get("id_param")):
                # `create_note(parent_record_id, author_id)`: every record a write names must exist
                ref = {"param": p, "resource": other}
                d = described_default(t.input_schema["properties"][p])
                if isinstance(d, str | int) and not isinstance(d, bool):
                    ref["default"] = d  # the spec's own default (`primary`, `me`) always exists
                op.setdefault("ref_ids", []).append(ref)

    for t in work:  # `create_deal(contact_ids: [...])`: every id in the list names a contact
        op = ops[t.name]
        if op["kind"] not in ("create", "update"):
            continue
        for p, sch in t.input_schema.get("properties", {}).items():
            stem = re.sub(r"(ids|keys)$", "", norm(p))
            other = named.get(stem) or named.get(singular(stem))
            items = (sch.get("items") or {}) if isinstance(sch, dict) else {}
            if (
                other
                and stem != norm(p)
                and _type_of(sch) == "array"
                and _type_of(items) in ("string", "integer", "any")
                and p != op.get("id_param")
            ):
                op.setdefault("ref_lists", []).append({"param": p, "resource": other})
    for t in work:
        if _not_a_noun(ops[t.name]):
            ops[t.name] = {
                "kind": "simulated",
                "cause": "resource_not_a_noun",
                "reason": f"the resource the name gives, {ops[t.name]['resource']!r}, is no noun",
            }

    def res(r: str) -> dict[str, Any]:
        return resources.setdefault(
            r, {"table": f"{r}s", "fields": {}, "id_params": Counter(), "id_type": "string"}
        )

    for t in work:
        op = ops[t.name]
        if op["kind"] in ("simulated", "compute"):
            continue
        r = res(op["resource"])
        props = t.input_schema.get("properties", {})
        if op.get("id_param"):
            r["id_params"][op["id_param"]] += 1
            box = (op.get("wrapped") or {}).get(op["id_param"])
            id_schema = (props.get(box, {}).get("properties") or {}) if box else props
            _key_schema(r, id_schema.get(op["id_param"], {}))
        if op.get("parent"):  # a parent's keys must also fit the parameter that names it
            pp = op["parent"]["param"]
            box = (op.get("wrapped") or {}).get(pp)
            p_schema = (props.get(box, {}).get("properties") or {}) if box else props
            _key_schema(res(op["parent"]["resource"]), p_schema.get(pp, {}))
        parent_param = (op.get("parent") or {}).get("param")
        if op["kind"] in ("create", "update"):
            req = t.input_schema.get("required", [])
            for p, s in props.items():
                if (
                    p in (op.get("id_param"), parent_param)
                    or _skip_write_field(p, s, req)
                    or p in (op.get("wrapped") or {}).values()
                ):
                    continue
                inner = s.get("properties") if _type_of(s) == "object" else None
                if norm(p) in TRANSPORT_WRAPPERS:
                    continue  # `header: {...}`: how the call travels, never what the record holds
                if isinstance(inner, dict) and inner and _is_envelope_param(p):
                    op.setdefault("nested", []).append(
                        p
                    )  # `body`, `productData`: its fields are the record's
                    inner_req = s.get("required", []) if isinstance(s.get("required"), list) else []
                    for q2, s2 in inner.items():
                        if not _skip_write_field(q2, s2, inner_req) and q2 not in ("id", op.get("id_param")):
                            _merge_field(r["fields"], q2, _type_of(s2) if isinstance(s2, dict) else "any")
                    continue
                if _type_of(s) == "object" and not inner and _open_envelope(p, op["resource"]):
                    # `update_contact(contact_id, properties: {})`: a free-form object of the record's
                    # fields, those no tool declares too (kept on the record, never as `properties`)
                    op.setdefault("nested", []).append(p)
                    op.setdefault("open_nested", []).append(p)
                    r["open"] = True
                    continue
                _merge_field(r["fields"], p, _type_of(s))
        if op.get("parent"):
            res(op["parent"]["resource"])
            op["parent"]["field"] = f"{op['parent']['resource']}_id"
            r["fields"][op["parent"]["field"]] = "any"  # holds a parent's key, whatever the param's type
        if op["kind"] == "transition":
            _merge_field(
                r["fields"],
                op["field"],
                "any" if "from_param" in op else _type_of({"type": _json_type(op["value"])}),
            )
        if op["kind"] in ("relate", "unrelate"):
            _merge_field(r["fields"], f"{op['member']}_ids", "array")
        if op["kind"] == "get" and op.get("lookup"):
            _merge_field(r["fields"], op["lookup"], _type_of(props.get(op["lookup"], {})))
    _library_resources(ops, resources)
    for r in resources.values():
        ids = r.pop("id_params")
        r["id_param"] = ids.most_common(1)[0][0] if ids else None
        r["fields"].pop("id", None)  # the engine's own: the record's key and when it was made
        r["fields"].pop("created_at", None)
    _field_semantics(work, ops, resources)
    for r in resources.values():
        for f in ("id", "created_at"):
            r["fields"].pop(f, None)
            r.get("enums", {}).pop(f, None)
    for t in work:  # a read of a record type that holds nothing the spec names is no code
        op = ops[t.name]
        r = resources.get(op.get("resource") or "")
        if (
            op["kind"] in ("get", "list")
            and r is not None
            and not content_fields(r)
            and not r.get("collection_of")
            and not r.get("singleton")
        ):
            ops[t.name] = {
                "kind": "simulated",
                "cause": "no_content_fields",
                "reason": f"no tool writes a {op['resource'].replace('_', ' ')}, and neither a return schema "
                "nor a description names what one holds",
            }
    for t in work:  # `get_employee(id, fields, response_format)`: switches shape the record read
        op = ops[t.name]
        if op["kind"] == "get":
            sw = {p: k for p, sch in _schemas_of(t) if (k := switch_param(p, sch)) and k == "fields"}
            if sw:
                op["switches"] = sw
    for t in work:  # what each list does with each of its filters: match, range, or unsupported
        op = ops[t.name]
        if op["kind"] != "list":
            continue
        fields = resources[op["resource"]]["fields"]
        ranges, unsupported = {}, []
        props_all = dict(_schemas_of(t))
        for p in _list_params(t, op):
            if (
                _skip_field(p)
                or p in fields
                or p == (op.get("parent") or {}).get("param")
                or p in op.get("contains", {})
            ):
                continue
            if kind := switch_param(p, props_all.get(p, {})):
                op.setdefault("switches", {})[p] = kind
                continue
            if norm(p) in CREDENTIAL_PARAMS:
                continue  # a credential: no filter
            rn, pn = norm(op["resource"]), norm(p)
            alias = next((f for f in fields if norm(f) == pn), None)  # `Name` filters `name`
            if alias is None and pn in ("id", f"{rn}id", "ids", f"{rn}ids"):
                alias = "id"  # `list_flows(flow_ids)`: these records, by their own key
            if alias is not None:
                op.setdefault("aliases", {})[p] = alias
                if _type_of(props_all.get(p, {})) == "array":
                    op.setdefault("any_of", []).append(p)
                continue
            bound, target = _range_target(p, fields)
            if target:
                ranges[p] = {"field": target, "op": ">=" if bound in LOWER_BOUND else "<="}
            else:
                unsupported.append(p)
        if ranges:
            op["ranges"] = ranges
        if unsupported:
            op["unsupported_filters"] = unsupported

    def finish(t: SpecTool, entry: dict[str, Any]) -> dict[str, Any]:
        op = ops[t.name]
        if op["kind"] == "simulated":
            entry.update(status="simulated", cause=op["cause"], reason=op["reason"], op={"kind": "simulated"})
        else:
            _defaults(op, t.input_schema, resources.get(op.get("resource") or "", {}).get("fields", {}))
            _rules(op, t, resources.get(op.get("resource") or "", {}).get("fields", {}))
            if op["kind"] == "create":
                natural = resources[op["resource"]]["id_param"]
                parent_param = (op.get("parent") or {}).get("param")
                if natural and natural != parent_param and natural in t.input_schema.get("properties", {}):
                    op["natural_key"] = natural
            entry.update(status="compiled", cause="", reason="", op=op)
        return entry

    tools = []
    for t in spec.tools:
        if t.name in dispatch:
            tools.append(_dispatch_entry(t, *dispatch[t.name], finish))
            continue
        op = ops[t.name]
        entry: dict[str, Any] = {
            "name": t.name,
            "original_name": t.original_name,
            "description": t.description,
            "input_schema": t.input_schema,
            "read_only": (
                (op["kind"] in ("get", "list") or (op["kind"] == "compute" and not op.get("random")))
                if t.read_only is None
                else t.read_only and not op.get("random")  # a seeded draw advances its counter
            ),
        }
        tools.append(finish(t, entry))
    service = name or service_name(spec)
    fit_names(tools, service)
    defects = [{"tool": d.tool, "kind": d.kind, "detail": d.detail} for d in spec.defects]
    for t in tools:
        if "shortened_from" in t:
            defects.append(
                {
                    "tool": t["original_name"],
                    "kind": "long_name",
                    "detail": f"served as {t['name']!r} so that {service}__tool fits 64 characters",
                }
            )
    return {
        "manifest_version": MANIFEST_VERSION,
        "service": service,
        "server": spec.server,
        "domain": spec.domain or "compiled",
        "source": spec.source,
        "resources": dict(sorted(resources.items())),
        "tools": tools,
        "excluded": [
            {"name": e.name, "original_name": e.original_name, "cause": e.cause, "reason": e.reason}
            for e in spec.excluded
        ],
        "defects": defects,
    }


def _dispatch_entry(t: SpecTool, d: Dispatch, subs: dict[str, SpecTool], finish: Any) -> dict[str, Any]:
    """The entry of an action-dispatch tool: one op per action, each compiled or simulated with its
    cause. The tool runs as code when one of its actions does (each is tested on its own)."""
    actions = {}
    for action, sub in subs.items():
        e = finish(sub, {"input_schema": sub.input_schema})
        e["read_only"] = e["op"]["kind"] in ("get", "list")
        e["tool"] = sub.name  # the name its op was inferred under (`issue_get`)
        actions[action] = e
    code = [a for a, e in actions.items() if e["status"] == "compiled"]
    entry: dict[str, Any] = {
        "name": t.name,
        "original_name": t.original_name,
        "description": t.description,
        "input_schema": t.input_schema,
        "read_only": bool(t.read_only)
        if t.read_only is not None
        else all(e["read_only"] for e in actions.values()),
        "op": {
            "kind": "dispatch",
            "action_param": d.action_param,
            "params_param": d.params_param,
            "actions": actions,
        },
        "actions_compiled": len(code),
    }
    if code:
        entry.update(status="compiled", cause="", reason="")
    else:
        entry.update(
            status="simulated",
            cause="no_action_compiled",
            reason=f"none of its {len(actions)} actions has an operation the compiler knows",
        )
    return entry


NUM_RE = r"(-?\d+(?:\.\d+)?)"
RANGE_IN_TEXT = (
    re.compile(rf"between\s+{NUM_RE}\s+and\s+{NUM_RE}", re.I),
    re.compile(rf"(?:^|[\s(\[]){NUM_RE}\s*(?:-|–|\.\.)\s*{NUM_RE}(?=[\s)\],.;]|$)"),
)
MAX_IN_TEXT = re.compile(
    rf"\b(?:max(?:imum)?|at most|up to|no more than)\b\s*(?:of|is|value|:|=)?\s*{NUM_RE}\b", re.I
)
MIN_IN_TEXT = re.compile(
    rf"\b(?:min(?:imum)?|at least|no less than)\b\s*(?:of|is|value|:|=)?\s*{NUM_RE}\b", re.I
)


def stated_bounds(schema: dict[str, Any]) -> tuple[float | None, float | None] | None:
    """The range a numeric parameter's description states ("1-100", "between 1 and 100", "max 50",
    "minimum 24") where its schema has none; None when it states none, or one its default breaks."""
    if not isinstance(schema, dict) or _type_of(schema) not in ("integer", "number"):
        return None
    if "minimum" in schema or "maximum" in schema or "exclusiveMinimum" in schema:
        return None
    text = str(schema.get("description", ""))
    lo = hi = None
    for rx in RANGE_IN_TEXT:
        m = rx.search(text)
        if m and float(m.group(1)) < float(m.group(2)):
            lo, hi = float(m.group(1)), float(m.group(2))
            break
    if lo is None and (m := MIN_IN_TEXT.search(text)):
        lo = float(m.group(1))
    if hi is None and (m := MAX_IN_TEXT.search(text)):
        hi = float(m.group(1))
    if lo is None and hi is None or (lo is not None and hi is not None and lo > hi):
        return None
    d = schema.get("default")
    if isinstance(d, int | float) and ((lo is not None and d < lo) or (hi is not None and d > hi)):
        return None  # the spec contradicts itself: enforce neither
    return lo, hi


# "must be stopped first", "only draft invoices can be deleted", "completed pipelines cannot be cancelled"
STATE_RULES = (
    (re.compile(r"\b(?:must|should|needs to) be (\w+) (?:first|beforehand|before)", re.I), False),
    (re.compile(r"\bonly (\w+) \w+ (?:can|may) be \w+", re.I), False),
    (
        re.compile(r"\bcan only be \w+ (?:when|if|while) (?:it is |it's |the \w+ is )?(?:in )?(\w+)", re.I),
        False,
    ),
    (re.compile(r"\b(\w+) \w+s? (?:cannot|can't|can not) be \w+", re.I), True),
)


def _state_rule(description: str, fields: dict[str, str]) -> dict[str, Any] | None:
    """A precondition on the record's state that the description states, for the states this
    service's own transitions write (`locked`, `status: stopped`, ...); None where it states none."""
    states: dict[str, tuple[str, Any]] = {}
    for field, value in TRANSITIONS.values():
        if isinstance(value, str) and value and field in fields:
            states[value] = (field, value)
        elif value is True and field in fields:
            states[field] = (field, True)
    for sentence in re.split(r"(?<=[.;!?])\s+", description):
        for rx, negate in STATE_RULES:
            m = rx.search(sentence)
            word = m.group(1).lower() if m else ""
            if word and word in states:
                field, value = states[word]
                return {"field": field, "value": value, "negate": negate, "text": sentence.strip()[:200]}
    return None


def _rules(op: dict[str, Any], tool: SpecTool, fields: dict[str, str]) -> None:
    bounds = {
        p: list(b) for p, s in tool.input_schema.get("properties", {}).items() if (b := stated_bounds(s))
    }
    if bounds:
        op["bounds"] = bounds
    if op["kind"] in ("update", "delete", "transition") and (rule := _state_rule(tool.description, fields)):
        op["requires"] = rule


def _defaults(op: dict[str, Any], schema: dict[str, Any], fields: dict[str, str]) -> None:
    """The spec's `default`s: a create stores the default of each field it is not given, and a parent
    named by its default (`calendar_id: "primary"`) is the one the spec means, never a 404."""
    props = schema.get("properties", {})
    parent = op.get("parent")
    if parent and parent["param"] in props:
        d = described_default(props[parent["param"]])
        if isinstance(d, str | int) and not isinstance(d, bool) and _fits(props[parent["param"]], d):
            parent["default"] = d
    if op["kind"] != "create":
        return
    out = {
        p: d
        for p, s in props.items()
        if isinstance(s, dict)
        and (d := described_default(s)) is not None
        and (p in fields or (parent and p == parent["param"]))
        and p != op.get("id_param")
        and not _skip_write_field(p, s, schema.get("required", []))
        and _fits(s, d)
        and fields.get(p, "any") in ("any", _json_type(d), "number" if _json_type(d) == "integer" else "")
    }
    if out:
        op["defaults"] = out


def _fits(schema: dict[str, Any], value: Any) -> bool:
    import jsonschema

    try:
        return jsonschema.Draft202012Validator(schema).is_valid(value)
    except Exception:  # a schema the validator cannot read: take no default from it
        return False


KEY_CONSTRAINTS = ("pattern", "enum", "format", "minLength", "maxLength", "minimum", "maximum")


def _key_schema(r: dict[str, Any], schema: dict[str, Any]) -> None:
    """What a record key of `r` must look like for the parameters that name it: numeric where one is
    an integer or number, and the first pattern / enum / format / length the spec states. Minted keys
    follow it, so an agent can pass a created record's id back to the tools that take it."""
    if not isinstance(schema, dict):
        return
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        schema = schema["items"]
    t = _type_of(schema)
    if t in ("integer", "number"):
        r["id_type"] = "integer"
    if t not in ("string", "integer", "number") or r.get("key_schema"):
        return
    ks = {k: schema[k] for k in KEY_CONSTRAINTS if k in schema}
    if isinstance(ks.get("enum"), list):
        ks["enum"] = [str(v) for v in ks["enum"] if isinstance(v, str | int) and not isinstance(v, bool)]
    if ks:
        r["key_schema"] = ks


def _json_type(v: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string"}.get(type(v), "any")


# ---- what a record holds, and the rules the spec states about it ------------------------------------
# list parameters that order, authenticate or page: no attribute of a record
ORDER_PARAMS = {
    "sort",
    "sortby",
    "order",
    "orderby",
    "direction",
    "sortdirection",
    "sortorder",
    "orderdirection",
}
CREDENTIAL_PARAMS = {"apikey", "token", "accesstoken", "auth", "authorization", "secret", "password"}
CONTAINS_RE = re.compile(r"^(.+?)_?(contains|like|startswith|prefix|search|filter)$", re.I)
# words of a description that name a record's content ("Get the status and results of a statement")
CONTENT_WORDS = {
    "status",
    "name",
    "title",
    "description",
    "amount",
    "price",
    "date",
    "type",
    "email",
    "url",
    "content",
    "results",
    "total",
    "count",
    "balance",
    "currency",
    "address",
    "phone",
    "score",
    "rating",
    "version",
    "size",
    "value",
    "quantity",
    "level",
    "state",
    "priority",
    "tags",
    "category",
    "language",
    "duration",
    "summary",
    "body",
    "text",
    "message",
    "subject",
    "owner",
    "author",
    "location",
    "timezone",
    "country",
    "city",
    "latitude",
    "longitude",
    "temperature",
    "symbol",
    "volume",
    "rate",
    "percentage",
    "label",
    "color",
    "notes",
    "path",
    "height",
    "width",
    "metrics",
    "statistics",
    "revenue",
    "cost",
    "fee",
    "tax",
    "discount",
    "stock",
    "inventory",
    "sku",
    "brand",
    "model",
    "year",
    "season",
    "team",
    "position",
    "role",
    "permissions",
    "members",
    "timestamp",
    "expiration",
    "enabled",
    "schedule",
    "frequency",
    "genre",
    "artist",
    "album",
    "isbn",
    "publisher",
    "region",
    "zone",
    "domain",
    "hostname",
    "port",
    "protocol",
    "uptime",
    "health",
    "usage",
    "quota",
    "plan",
    "tier",
    "forecast",
    "humidity",
    "wind",
    "pressure",
    "precipitation",
    "dividend",
    "earnings",
    "yield",
    "capacity",
    "availability",
    "distance",
    "speed",
    "weight",
    "severity",
    "progress",
    "output",
    "error",
    "response",
    "reason",
    "source",
    "format",
}
NUMBER_WORDS = {"amount", "price", "total", "count", "balance", "score", "rating", "size", "quantity"}
NUMBER_WORDS |= {"latitude", "longitude", "temperature", "volume", "rate", "percentage", "height", "width"}
NUMBER_WORDS |= {"revenue", "cost", "fee", "tax", "discount", "stock", "inventory", "year", "port", "uptime"}
NUMBER_WORDS |= {"quota", "humidity", "wind", "pressure", "precipitation", "dividend", "earnings", "yield"}
NUMBER_WORDS |= {"capacity", "distance", "speed", "weight", "progress", "duration", "credits", "funds"}
NUMBER_WORDS |= {"margin", "rank"}
CONTENT_WORDS |= {"credits", "funds", "margin", "trend", "mode", "slug", "expiry", "headline", "caption"}
CONTENT_WORDS |= {"rank", "occupation", "industry", "website", "bio", "origin", "checksum", "hash"}
ARRAY_WORDS = {"tags", "results", "members", "permissions", "metrics", "statistics"}
# words of API boilerplate ("Returns the response in JSON format", "Output format: ..."): no content
CONTENT_WORDS -= {"response", "output", "format"}
SELF_VALUED = NUMBER_WORDS | {"status", "version", "health", "usage", "forecast", "quota", "summary"}
IDENT_RE = re.compile(r"`?\b([a-z][a-z0-9]+(?:[A-Z][a-z0-9]+)+|[a-z][a-z0-9]+(?:_[a-z0-9]+)+)\b`?")
FORMATS = ("date-time", "date", "email", "uri", "url", "uuid", "ipv4")
OPEN_STATES = ("open", "active", "new", "draft", "pending", "todo", "created", "enabled", "live", "opened")
STATE_SYNONYMS = {
    "closed": {"close", "done", "complete", "completed", "resolved", "finished"},
    "open": {"opened", "active", "reopened", "new", "todo"},
    "cancelled": {"canceled", "cancel", "void", "voided"},
    "void": {"voided", "cancelled", "canceled"},
    "sent": {"send", "delivered", "submitted", "issued", "posted"},
    "published": {"publish", "live", "public", "active"},
    "archived": {"archive", "inactive"},
    "active": {"enabled", "live", "open", "activated"},
    "inactive": {"disabled", "deactivated", "archived"},
    "completed": {"complete", "done", "finished", "closed", "resolved"},
    "resolved": {"closed", "done", "solved", "completed"},
    "approved": {"approve", "accepted", "accept"},
    "rejected": {"declined", "denied", "refused", "reject"},
    "running": {"started", "inprogress", "active", "run", "running"},
    "stopped": {"stop", "halted", "terminated", "inactive"},
    "paused": {"pause", "suspended", "onhold"},
    "submitted": {"submit", "sent", "pending"},
    "posted": {"post", "sent", "published"},
    "finalized": {"final", "finalised", "open", "issued"},
    "merged": {"merge"},
    "dismissed": {"dismiss", "closed"},
    "revoked": {"revoke", "inactive", "disabled"},
    "suspended": {"suspend", "paused", "inactive"},
    "terminated": {"terminate", "stopped", "deleted"},
    "enabled": {"enable", "active", "on"},
    "disabled": {"disable", "inactive", "off"},
    "unpublished": {"draft", "hidden", "private"},
}
UNIQUE_RE = re.compile(
    r"\b(?:must|should) be unique\b|\bunique (?:across|within|per|among|in)\b|"
    r"\bno two\b|\bmust not already exist\b|\bis unique\b|\bduplicates? (?:are|is) not allowed\b",
    re.I,
)
CASCADE_RE = re.compile(
    r"\b(?:also|will also|and)\s+(?:permanently\s+)?(?:deletes?|removes?|cancels?)\s+(?:all\s+)?(?:of\s+)?"
    r"(?:its|their|the|any|associated|related|child)?\s*(?:associated\s+|related\s+|child\s+)?([a-z_]+)",
    re.I,
)
ZERO_RE = re.compile(
    r"\b(?:zero(?:e?s)?(?:\s+out)?|sets?|resets?)\s+(?:the\s+|its\s+|all\s+)?([a-z_ ]{3,40}?)\s*(?:to\s+(?:zero|0)\b|$)"
    r"|\b([a-z_]+)\s+(?:is|are|becomes?)\s+(?:set to\s+)?(?:zero|0)\b",
    re.I,
)


def _sentence(text: str, m: re.Match[str]) -> str:
    """The sentence of `text` around a match: quoted in the errors that enforce it."""
    start = max(text.rfind(".", 0, m.start()), text.rfind("\n", 0, m.start())) + 1
    ends = [i for i in (text.find(".", m.end()), text.find("\n", m.end())) if i != -1]
    return text[start : (min(ends) + 1 if ends else len(text))].strip()[:240]


def _field_of(word: str, fields: dict[str, str]) -> str | None:
    """The stored field a word of a sentence names (`display name` -> `DisplayName`)."""
    w = norm(word)
    if not w:
        return None
    for f in fields:
        if norm(f) == w or norm(f) == singular(w):
            return f
    return None


def _schemas_of(tool: SpecTool) -> list[tuple[str, dict[str, Any]]]:
    """Each parameter with its schema, those inside wrapper objects (`body`, `query`) lifted up."""
    out = []
    for p, s in tool.input_schema.get("properties", {}).items():
        if not isinstance(s, dict):
            continue
        inner = s.get("properties")
        if isinstance(inner, dict) and inner and (_is_envelope_param(p) or norm(p) in QUERY_WRAPPERS):
            out += [(q, sq) for q, sq in inner.items() if isinstance(sq, dict)]
        else:
            out.append((p, s))
    return out


def _value_rules(schema: dict[str, Any]) -> tuple[list[Any] | None, str | None]:
    """The enum and the format a parameter's schema states (through a list's items and anyOf)."""
    if _type_of(schema) == "array" and isinstance(schema.get("items"), dict):
        return None, None
    enum = schema.get("enum")
    for key in ("anyOf", "oneOf"):
        alts = [a for a in schema.get(key) or [] if isinstance(a, dict) and a.get("type") != "null"]
        if enum is None and alts and all(a.get("enum") for a in alts):  # a free alternative: no enum
            enum = [v for a in alts for v in a["enum"]]
    fmt = schema.get("format") if schema.get("format") in FORMATS else None
    if isinstance(enum, list):
        enum = [v for v in enum if isinstance(v, str | int | float | bool)]
    return (enum or None), fmt


def _state_member(value: Any, enum: list[Any]) -> Any:
    """The member of a status enum that means `value` (`closed` -> `CLOSED`, `cancelled` -> `canceled`)."""
    want = norm(str(value))
    members = {norm(str(v)): v for v in enum}
    if want in members:
        return members[want]
    for n, v in members.items():
        if len(want) >= 4 and len(n) >= 4 and (n.startswith(want[:5]) or want.startswith(n[:5])):
            return v
    for syn in STATE_SYNONYMS.get(str(value), ()):
        if syn in members:
            return members[syn]
    return None


def _field_semantics(work: list[SpecTool], ops: dict[str, dict[str, Any]], resources: dict[str, Any]) -> None:
    """What each record type holds and the rules the spec states about it:
    - enums and formats of every field, from every tool that writes (or, failing that, filters) it;
    - filter parameters as the record's attributes (a list `by status` says records have a status),
      and, for a record no tool writes, the content its description names;
    - a transition's state, a create's first state and a seeded status from the field's own enum;
    - stated uniqueness, delete cascades and "void zeroes the amount", each with its sentence."""
    writers: dict[str, set[str]] = {}
    for op in ops.values():
        if op["kind"] in ("create", "update") and op.get("resource") in resources:
            writers.setdefault(op["resource"], set()).add(op["kind"])
    filter_enums: dict[tuple[str, str], list[Any]] = {}
    for t in work:
        op = ops[t.name]
        rname = op.get("resource")
        if op["kind"] in ("simulated", "compute") or rname not in resources or op.get("collection"):
            continue
        r = resources[rname]
        if op["kind"] in ("create", "update"):
            req = t.input_schema.get("required", [])
            for p, s in _schemas_of(t):
                if p not in r["fields"] or _skip_write_field(p, s, req):
                    continue
                enum, fmt = _value_rules(s)
                if enum:
                    have = r.setdefault("enums", {}).get(p)
                    r["enums"][p] = list(dict.fromkeys([*(have or []), *enum]))
                elif _type_of(s) in ("string", "integer", "number") and "enum" not in s:
                    r.setdefault("free", []).append(p)  # a writer that takes any value
                if fmt:
                    r.setdefault("formats", {})[p] = fmt
        if op["kind"] == "list":
            for p, s in _schemas_of(t):
                n = norm(p)
                if (
                    _skip_field(p)
                    or switch_param(p, s)
                    or n in ORDER_PARAMS
                    or n in CREDENTIAL_PARAMS
                    or p == (op.get("parent") or {}).get("param")
                    or _range_target(p, r["fields"])[1]
                    or RANGE.match(p)
                    or RANGE_AFTER.match(re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", p))
                    or _type_of(s) in ("object",)
                ):
                    continue
                m = CONTAINS_RE.match(re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", p))
                if m and norm(m.group(1)) not in ("", "name") or m and m.group(2).lower() == "contains":
                    field = next((f for f in r["fields"] if norm(f) == norm(m.group(1))), m.group(1))
                    if field not in r["fields"]:
                        r["fields"][field] = "string"
                    op.setdefault("contains", {})[p] = field
                    continue
                if p not in r["fields"] and rname not in writers:
                    # a record no tool writes holds what its reads filter on; one written here holds
                    # what its writers store (another filter stays reported: no created record has it)
                    t_ = _type_of(s)
                    r["fields"][p] = "string" if t_ == "array" else t_ if t_ != "any" else "any"
                    if t_ == "array":  # `statuses: [..]`: any of these values of the field
                        op.setdefault("any_of", []).append(p)
                    r.setdefault("lifted", []).append(p)
                enum, fmt = _value_rules(s if _type_of(s) != "array" else s.get("items") or {})
                if enum:
                    filter_enums[(rname, p)] = [
                        v for v in enum if str(v).lower() not in ("all", "any", "*", "")
                    ]
                if fmt:
                    r.setdefault("formats", {}).setdefault(p, fmt)
    for (rname, p), enum in filter_enums.items():  # the vocabulary a filter states, where no writer does
        r = resources[rname]
        if enum and p not in r.get("enums", {}) and p not in r.get("free", []):
            r.setdefault("enums", {})[p] = enum
    for rname, r in resources.items():  # a record no tool writes: the content its reads describe
        r.pop("free", None)
        if rname in writers or r.get("collection_of") or r.get("singleton"):
            continue
        reads = [
            t for t in work if ops[t.name].get("resource") == rname and ops[t.name]["kind"] in ("get", "list")
        ]
        texts = [  # the tool's words and its filters' (never a switch's: "Output format: json ...")
            t.description
            + " "
            + " ".join(
                str(s.get("description", ""))
                for p, s in _schemas_of(t)
                # a search's own words name what it searches ("name or email"); a page's do not
                if not switch_param(p, s)
                and norm(p) not in LIMIT_PARAMS
                and norm(p) not in OFFSET_PARAMS
                and norm(p) not in SWITCH_PARAMS
            )
            for t in reads
        ]
        inputs = {p for t in reads for p in [*t.input_schema.get("properties", {}), *dict(_schemas_of(t))]}
        # "call `asana_get_workspaces` first": another tool's name is no field of what this one returns
        inputs |= {t.name for t in work} | {norm(t.name) for t in work}
        for text in texts:
            for w in re.findall(r"[A-Za-z]+", text):
                lw = w.lower()
                if lw not in CONTENT_WORDS and singular(lw) in CONTENT_WORDS and lw not in ARRAY_WORDS:
                    lw = singular(lw)  # "the counts and prices": a count and a price
                # a record named for a value holds that value (a `balance`'s balance, a `version`'s
                # version); a record named for a thing is not its own field (a `team` has no `team`)
                own = lw == rname.rsplit("_", 1)[-1] and lw not in SELF_VALUED
                if lw in CONTENT_WORDS and lw not in r["fields"] and not own:
                    r["fields"][lw] = (
                        "number" if lw in NUMBER_WORDS else "array" if lw in ARRAY_WORDS else "string"
                    )
                    r.setdefault("described", []).append(lw)
            for ident in IDENT_RE.findall(text):
                if (
                    ident in inputs
                    or norm(ident) in inputs
                    or switch_param(ident, {})
                    or norm(ident) in SWITCH_PARAMS
                ):
                    continue  # a parameter the description names is an input, not what it returns
                if len(ident) >= 5 and ident not in r["fields"] and not ident.endswith(("_id", "Id")):
                    last = tokens(ident)[-1]
                    r["fields"][ident] = "number" if last in NUMBER_WORDS else "string"
                    r.setdefault("described", []).append(ident)
    for t in work:  # state values from the field's own vocabulary
        op = ops[t.name]
        r = resources.get(op.get("resource") or "")
        if r is None or op["kind"] in ("simulated", "compute"):
            continue
        enums = r.get("enums", {})
        if op["kind"] == "transition" and "value" in op and op["field"] in enums:
            member = _state_member(op["value"], enums[op["field"]])
            if member is None:
                ops[t.name] = {
                    "kind": "simulated",
                    "cause": "state_not_in_enum",
                    "reason": f"{op['verb']!r} would set {op['field']} to {op['value']!r}, which is not one of "
                    f"{', '.join(map(str, enums[op['field']]))}",
                }
                continue
            if member != op["value"]:
                op["state_word"] = op["value"]  # `cancel` is still a cancel where the enum says `canceled`
            op["value"] = member
        if op["kind"] == "create" and "status" in r["fields"]:
            if "status" in enums:
                first = next((v for s in OPEN_STATES for v in enums["status"] if norm(str(v)) == s), None)
                if first is not None:
                    op["initial"] = {"status": first}
            elif r["fields"]["status"] in ("string", "any"):
                op["initial"] = {"status": "open"}
        text = t.description
        if op["kind"] in ("create", "update"):
            for p, s in _schemas_of(t):
                d = str(s.get("description", ""))
                if p in r["fields"] and (m := UNIQUE_RE.search(d)):
                    r.setdefault("unique", {})[p] = f"{p}: {_sentence(d, m)}"
            for m in re.finditer(r"\b([A-Za-z_][\w ]{1,30}?)\s+(?:must|should) be unique\b", text):
                f = _field_of(m.group(1).split()[-1], r["fields"]) or _field_of(
                    "".join(m.group(1).split()[-2:]), r["fields"]
                )
                if f:
                    r.setdefault("unique", {})[f] = _sentence(text, m)
        if op["kind"] == "delete":
            for m in CASCADE_RE.finditer(text):
                child = singular(m.group(1).lower())
                c = resources.get(child)
                field = f"{op['resource']}_id"
                if c is not None and child != op["resource"] and field in c["fields"]:
                    op.setdefault("cascade", []).append(
                        {"resource": child, "field": field, "text": _sentence(text, m)}
                    )
        if op["kind"] == "transition":
            for m in ZERO_RE.finditer(text):
                words = (m.group(1) or m.group(2) or "").strip().split()
                for k in range(len(words)):
                    f = _field_of("".join(words[k:]), r["fields"])
                    if f and r["fields"][f] in ("integer", "number", "any"):
                        op.setdefault("sets", {})[f] = 0
                        op["sets_text"] = _sentence(text, m)
                        break


def content_fields(resource: dict[str, Any]) -> list[str]:
    """The fields of a record type that hold content: not its parents' keys, not lists of ids."""
    return [f for f in resource.get("fields", {}) if not f.endswith(("_id", "_ids")) and f not in ("id",)]


def meaningful(tool: dict[str, Any], manifest: dict[str, Any]) -> bool:
    """A compiled tool that runs as code over state that means something: a computation, or an
    operation on a record type that holds content (not only an id, a time and its parents' keys)."""
    if tool.get("status") != "compiled":
        return False
    op = tool.get("op") or {}
    if op.get("kind") == "dispatch":
        return any(meaningful({**e, "op": e["op"]}, manifest) for e in op["actions"].values())
    r = manifest.get("resources", {}).get(op.get("resource") or "")
    if r is None or r.get("collection_of") or r.get("singleton"):
        return True
    return op.get("kind") not in ("get", "list") or bool(content_fields(r))


def blind_list(tool: dict[str, Any]) -> bool | None:
    """For a compiled list with filters: True when it supports none of them (each is only reported
    back as unsupported); None for a tool that is no list, or a list with no filter to support."""
    op = tool.get("op") or {}
    if tool.get("status") != "compiled" or op.get("kind") != "list":
        return None
    wrappers = set((op.get("wrapped") or {}).values())
    parent = (op.get("parent") or {}).get("param")
    props = dict(tool["input_schema"].get("properties", {}))
    for inner, box in (op.get("wrapped") or {}).items():
        props[inner] = ((props.get(box) or {}).get("properties") or {}).get(inner, {})
    filters = [
        p
        for p in props
        if p not in wrappers
        and p != parent
        and norm(p) not in TRANSPORT_WRAPPERS
        and norm(p) not in LIMIT_PARAMS
        and norm(p) not in OFFSET_PARAMS
        and norm(p) not in ORDER_PARAMS
        and norm(p) not in CREDENTIAL_PARAMS
        and p not in (op.get("switches") or {})
        and not switch_param(p, props[p])
    ]
    if not filters:
        return None
    return all(p in op.get("unsupported_filters", ()) for p in filters)


# names one object goes by across a server's tools (`upload_file`, `get_item`, `delete_drive_item`)
OBJECT_SYNONYMS = (
    frozenset({"file", "item", "drive_item", "driveitem", "object", "blob", "entry", "document"}),
    frozenset({"folder", "directory", "dir"}),
)
PART_WORDS = ("content", "data", "body", "text", "raw")


PERSON_ROLES = {"author", "owner", "creator", "assignee", "reporter", "requester", "createdby", "assignedto"}
PEOPLE_TABLES = ("user", "member", "person", "employee", "agent")


def _one_resource_per_object(ops: dict[str, dict[str, Any]]) -> None:
    """One table per object, whatever its tools call it: a read of a record's part (`read_file_content`
    by the file's id) reads the record, and names that are synonyms for one object (a `file` only
    created, an `item` read, moved and deleted) are merged where their operations complement each
    other (neither both creates nor both reads it: then they are two kinds of record)."""
    for op in ops.values():
        r = op.get("resource") or ""
        head, _, part = r.rpartition("_")
        idp = op.get("id_param")
        if (
            head
            and part in PART_WORDS
            and op["kind"] in ("get", "update")
            and idp
            and _named_for(idp, head, True)
        ):
            op["resource"] = head
            op.pop("qualifier", None)
    kinds: dict[str, set[str]] = {}
    for op in ops.values():
        if op.get("resource") and op["kind"] not in ("simulated", "compute"):
            kinds.setdefault(op["resource"], set()).add(op["kind"])
    for group in OBJECT_SYNONYMS:
        present = sorted(r for r in kinds if r in group)
        if len(present) < 2:
            continue
        keep = max(present, key=lambda r: (len(kinds[r]), r))
        for r in present:
            if r == keep or kinds[r] & kinds[keep] & {"create", "list"}:
                continue
            for op in ops.values():
                if op.get("resource") == r:
                    op["resource"] = keep
                if (op.get("parent") or {}).get("resource") == r:
                    op["parent"]["resource"] = keep
            kinds[keep] |= kinds.pop(r)
