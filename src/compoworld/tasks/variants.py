"""Honest variants of a task's reference: other correct ways to do the same work.

A verifier must pass each of these (the equivalence suite in tests/verify and the benchmark
`benchmarks/verifier_attacks.py` run them on generated tasks):
- extra_reads: every read done twice;
- reordered_writes: two independent writes (other services, neither using the other's result) swapped;
- paraphrase: every text the work writes in other words with the same facts: a greeting and a
  sign-off, a synonym for the verb, amounts as "$12,800.00" or "12,800.00 USD", dates as
  "April 9, 2026" and instants as "March 9, 2026 at 2:30 PM UTC";
- answer_forms: the answer in a sentence, money with its symbol and separators;
- labelled_context: the answer with a competing candidate named as labelled context;
- optional_field: a documented free-form field the task leaves open, filled with neutral text;
- new_thread: a reply sent as a new email to the same people rather than in the request's thread;
- names_for_addresses: people named in a text by their full name instead of their address;
- ruled_out_context: a ruled-out person named in each message as labelled context ("X is no longer
  the right person for this");
- first_name_greeting: a message to one colleague greets them by first name, surname never written;
- quote_under_review: the reply to a request under review quotes its amount as under review;
- mention_forms: a chat message names each person by @-mention of their id, their @handle, or a
  first name nobody else in the company has, in turn (never the full name);
- rows_reformatted: a log's rows written in the other order, amounts as "$1,234.50" and dates as
  "March 2, 2026" (sheet rows, CSV lines appended by shell, a cell written alone).
- split_message: a message of several sentences sent as two posts to the same place (the same
  channel, thread or addresses), its sentences in order.
A variant that does not apply to a task (no text, no answer, one write) is left out.
"""

from __future__ import annotations

import posixpath
import re
from datetime import datetime
from typing import Any

from compoworld.core.environment import Environment
from compoworld.services.workspace.service import HOME
from compoworld.tasks.grounding import is_text as _is_text
from compoworld.tasks.model import Task

Calls = list[dict[str, Any]]

# one synonym swap per group a person might use instead (issue 23's examples among them)
_SWAPS = (
    (r"\brotated\b", "replaced"),
    (r"\brotate\b", "replace"),
    (r"\bcancell?ed\b", "called off"),
    (r"\benabled\b", "turned on"),
    (r"\bwaitlist\b", "waiting list"),
    (r"\brefunded\b", "reimbursed"),
    (r"\bapproved\b", "signed off"),
    (r"\bdenied\b", "declined"),
    (r"\bescalated\b", "raised"),
    (r"\brescheduled\b", "moved"),
)
_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


def _date_words(m: re.Match[str]) -> str:
    s = m.group(0)
    try:
        if "T" in s:
            dt = datetime.fromisoformat(s.replace("Z", "+00:00"))
            hour = dt.hour % 12 or 12
            return f"{_MONTHS[dt.month - 1]} {dt.day}, {dt.year} at {hour}:{dt.minute:02d} {'PM' if dt.hour >= 12 else 'AM'} UTC"
        y, mo, d = (int(x) for x in s.split("-"))
        return f"{_MONTHS[mo - 1]} {d}, {y}"
    except (ValueError, IndexError):
        return s


_ISO = re.compile(r"(?<![\w/-])\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2})?Z)?(?![\w/-])")
_MONEY = re.compile(r"(\$)?(?<![\w.#-])(\d+)\.(\d{2})(?![\w%])")


def _money(m: re.Match[str]) -> str:
    whole = f"{int(m.group(2)):,}"
    return f"{whole}.{m.group(3)} USD" if m.group(1) else f"${whole}.{m.group(3)}"


def paraphrase(text: str, copied: tuple[str, ...] = (), corpus: str = "") -> str:
    """The same facts in other words and forms. A value the work copies from a record (a preview
    text: `copied`; a description the requester dictated inside their email: in `corpus`, the
    texts of s0) stays word for word, as a careful colleague copies it; a text that is only such a
    value is left as it is."""
    if text.strip() in copied or (len(text.split()) >= 2 and text.strip() in corpus):
        return text
    if "<" in text and ">" in text:  # markup (a wiki page): its structure stays, the words change
        return _ISO.sub(_date_words, text)
    held = [c for c in copied if c in text]
    out = text
    for i, c in enumerate(held):
        out = out.replace(c, chr(0xE000 + i))  # a private-use mark: no swap, date or amount touches it
    for rx, word in _SWAPS:
        out = re.sub(rx, word, out, flags=re.I)
    out = _ISO.sub(_date_words, out)
    out = _MONEY.sub(_money, out)
    for i, c in enumerate(held):
        out = out.replace(chr(0xE000 + i), c)
    return f"Hello, {out}\n\nThanks, and have a good day."


def copied_values(task: Task) -> tuple[tuple[str, ...], str]:
    """(phrases of three words or more that records of s0 hold, longest first: what a text quotes;
    every text of s0 in one string: where a dictated value is found)."""
    from compoworld.tasks.grounding import leaves

    texts = [v for _, v in leaves(task.initial_state.get("services", {})) if isinstance(v, str)]
    out = {v.strip() for v in texts if 3 <= len(v.split()) <= 12 and len(v) <= 160 and "\n" not in v}
    return tuple(sorted(out, key=len, reverse=True)), "\x00".join(texts)


def _rewrite(value: Any, key: str = "", copied: tuple[tuple[str, ...], str] = ((), "")) -> Any:
    if isinstance(value, dict):
        return {k: _rewrite(v, k, copied) for k, v in value.items()}
    if isinstance(value, list):
        return [_rewrite(v, key, copied) for v in value]
    return paraphrase(value, *copied) if _is_text(key, value) else value


def _calls(task: Task) -> Calls:
    return [{"tool": c.tool, "arguments": c.arguments, "sources": c.sources} for c in task.reference_solution]


def honest_variants(task: Task, env: Environment) -> dict[str, tuple[Calls, str | None]]:
    """Variant name -> (calls, final answer) for every variant that applies to the task."""
    ref = _calls(task)
    out: dict[str, tuple[Calls, str | None]] = {}

    def mutates(tool: str) -> bool:
        spec = env.tool_spec(tool)
        return bool(spec and spec.mutates)

    out["extra_reads"] = ([c for c in ref for _ in range(1 if mutates(c["tool"]) else 2)], task.answer)
    w = [i for i, c in enumerate(ref) if mutates(c["tool"])]
    for a, b in zip(w, w[1:], strict=False):
        ca, cb = ref[a], ref[b]
        if ca["tool"].split("__")[0] == cb["tool"].split("__")[0] or b != a + 1:
            continue
        if any(str(v).startswith(f"obs:{a}") for v in cb["sources"].values()):
            continue
        out["reordered_writes"] = ([*ref[:a], cb, ca, *ref[b + 1 :]], task.answer)
        break
    copied = copied_values(task)
    para = [
        {**c, "arguments": _rewrite(c["arguments"], "", copied)} if mutates(c["tool"]) else c for c in ref
    ]
    if para != ref:
        out["paraphrase"] = (para, task.answer)
    spec = next((i.check for i in task.rubric if i.check.get("predicate") == "answer_matches"), None)
    if task.answer and spec:
        ans = str(task.answer)
        if spec.get("kind") == "number" and "." in ans:
            x = float(ans.replace(",", ""))
            form = (
                f"${x:,.2f}" if (spec.get("currency") or "USD") == "USD" else f"{x:,.2f} {spec['currency']}"
            )
            out["answer_forms"] = (ref, f"The figure you asked for is {form}.")
        else:
            out["answer_forms"] = (ref, f"It is {ans}.")
        rivals = [x for x in spec.get("exclude", []) if x and x != ans]
        if rivals:
            out["labelled_context"] = (
                ref,
                f"It is {ans}. For context, {rivals[0]} was already closed and does not count.",
            )
    fresh = [
        {**c, "arguments": {k: v for k, v in c["arguments"].items() if k != "threadId"}}
        if c["tool"] == "email__gmail_send_email" and "threadId" in c["arguments"]
        else c
        for c in ref
    ]
    if fresh != ref:
        out["new_thread"] = (fresh, task.answer)
    people = _people(task)
    named = [
        {**c, "arguments": _name_people(c["arguments"], people)} if mutates(c["tool"]) else c for c in ref
    ]
    if named != ref:
        out["names_for_addresses"] = (named, task.answer)
    for vname, make in (
        ("ruled_out_context", ruled_out_context),
        ("first_name_greeting", first_name_greeting),
        ("quote_under_review", quote_under_review),
        ("mention_forms", mention_forms),
        ("rows_reformatted", rows_reformatted),
        ("split_message", split_message),
    ):
        calls = make(task, ref)
        if calls is not None:
            out[vname] = (calls, task.answer)
    filled = _with_optional(task, env, ref)
    if filled is not None:
        out["optional_field"] = (filled, task.answer)
    return out


_ADDR = re.compile(r"[A-Za-z0-9._%+'-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")


def _people(task: Task) -> dict[str, str]:
    """Address -> full name, from the people records of s0 (any record with an address and a name)."""
    out: dict[str, str] = {}

    def walk(o: Any) -> None:
        if isinstance(o, dict):
            email = next(
                (o[k] for k in ("email", "workEmail", "emailAddress") if isinstance(o.get(k), str)), None
            )
            first = o.get("firstName") or o.get("firstname") or o.get("first_name")
            last = o.get("lastName") or o.get("lastname") or o.get("last_name")
            name = f"{first} {last}" if first and last else o.get("name") or o.get("displayName")
            if email and isinstance(name, str) and " " in name and _ADDR.fullmatch(email):
                out.setdefault(email.casefold(), name)
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    walk(task.initial_state.get("services", {}))
    return out


def _name_people(value: Any, people: dict[str, str], key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _name_people(v, people, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_name_people(v, people, key) for v in value]
    if not _is_text(key, value):
        return value

    def name(m: re.Match[str]) -> str:
        who = people.get(m.group(0).casefold())
        # an address written beside the name is the value itself ("Hannah Costa's email is ..."): kept
        return who if who and who.casefold() not in value.casefold() else m.group(0)

    return _ADDR.sub(name, value)


def _with_optional(task: Task, env: Environment, ref: Calls) -> Calls | None:
    """A documented free-form field (a dispute's evidence, a record's metadata) the task leaves open,
    filled with neutral text."""
    opts = {
        (a["service"], o)
        for item in task.rubric
        if item.check.get("predicate") == "no_changes_except"
        for a in item.check.get("allow", [])
        for o in a.get("optional", [])
        if "." not in o
    }
    for i, c in enumerate(ref):
        svc = c["tool"].split("__", 1)[0]
        spec = env.tool_spec(c["tool"])
        if spec is None or not spec.mutates:
            continue
        props = (spec.input_schema or {}).get("properties", {})
        for name, sch in props.items():
            if (svc, name) not in opts or not isinstance(c["arguments"].get(name), dict):
                continue
            if not isinstance(sch, dict) or not sch.get("additionalProperties"):
                continue
            args = {**c["arguments"], name: {**c["arguments"][name], "product_description": "As ordered."}}
            return [*ref[:i], {**c, "arguments": args}, *ref[i + 1 :]]
    return None


def run_variant(task: Task, calls: Calls, answer: str | None) -> tuple[bool, str]:
    """(V = 1, why not) for one variant: every call must succeed and the end state verify."""
    from compoworld.verify.verifier import verify

    env = task.environment()
    for c in calls:
        r = env.call(c["tool"], c["arguments"])
        if not r["success"]:
            return False, f"{c['tool']} failed: {r['error']['message']}"
    v = verify(task, env.snapshot(), answer)
    return v.passed, "; ".join(f"{c.id}: {c.detail}" for c in v.checks if not c.passed)


# ---- shapes careful colleagues write (issue 23's hard-task play) ----------------------------------
_MESSAGE_KEYS = ("body", "text", "note_body", "htmlBody", "comment", "message", "description")
_FULL_NAME = re.compile(r"[A-Z][a-z]+(?: [A-Z][a-z'-]+)+")


def _message_call(c: dict[str, Any]) -> bool:
    return any(w in c["tool"] for w in ("reply", "send", "post", "note", "comment", "message"))


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9$#@<])")


def split_message(task: Task, ref: Calls) -> Calls | None:
    """The first message of two or more sentences sent as two posts to the same place: what a
    colleague does who asks about each item in its own message."""
    for i, c in enumerate(ref):
        args = c["arguments"]
        # posts that are records of their own (a comment or note inside another record is counted
        # by that record's list, item by item)
        if not _message_call(c) or "note" in c["tool"] or "comment" in c["tool"]:
            continue
        key = next((k for k in _MESSAGE_KEYS if _is_text(k, args.get(k))), None)
        if key is None:
            continue
        parts = _SENTENCE_END.split(args[key].strip())
        if len(parts) < 2:
            continue
        half = (len(parts) + 1) // 2
        one = {**c, "arguments": {**args, key: " ".join(parts[:half])}}
        two = {**c, "arguments": {**args, key: " ".join(parts[half:])}}
        return [*ref[:i], one, two, *ref[i + 1 :]]
    return None


def _ruled_out(task: Task) -> list[str]:
    """People the derived text checks forbid by name (the account manager who left, another
    customer), unless a guard bans the name from every write."""
    banned = {
        str(i.check.get("value")) for i in task.rubric if i.check.get("predicate") == "value_not_written"
    }
    out: list[str] = []
    for i in task.rubric:
        if i.check.get("predicate") != "text_carries":
            continue
        for v in i.check.get("forbid", []):
            if isinstance(v, str) and _FULL_NAME.fullmatch(v) and v not in banned and v not in out:
                out.append(v)
    return out


def ruled_out_context(task: Task, ref: Calls) -> Calls | None:
    """Every message names a ruled-out person as labelled context ("X is no longer the right person
    for this"): what a colleague writes when the approver is the fallback."""
    names = _ruled_out(task)
    if not names:
        return None
    note = f" For context, {names[0]} is no longer the right person for this, so it is not sent to them."
    out, changed = [], False
    for c in ref:
        args = c["arguments"]
        keys = [k for k in _MESSAGE_KEYS if _is_text(k, args.get(k))] if _message_call(c) else []
        if keys:
            args = {**args, keys[0]: args[keys[0]].rstrip() + note}
            changed = True
        out.append({**c, "arguments": args})
    return out if changed else None


def first_name_greeting(task: Task, ref: Calls) -> Calls | None:
    """A message to a colleague greets them by first name ("Hi Sofia,") and never writes the
    surname: the address in its to field names them."""
    people = _people(task)
    out, changed = [], False
    for c in ref:
        args = c["arguments"]
        to = args.get("to") or args.get("notify_emails") or []
        to = [to] if isinstance(to, str) else list(to)
        names = [people[a.casefold()] for a in to if isinstance(a, str) and a.casefold() in people]
        key = next((k for k in _MESSAGE_KEYS if _is_text(k, args.get(k))), None)
        if len(names) == 1 and key and _message_call(c) and names[0] in args[key]:
            full, first = names[0], names[0].split()[0]
            body = re.sub(rf"\b(?:Hi |Hello |Dear |FYI )?{re.escape(full)}\b[,:]?\s*", "", args[key]).strip()
            new = f"Hi {first}, {body}"
            if new != args[key]:
                args, changed = {**args, key: new}, True
        out.append({**c, "arguments": args})
    return out if changed else None


def _promise_guards(task: Task) -> list[tuple[dict[str, Any], str]]:
    """(where the reply goes, the amount) of each guard that no amount is promised before approval."""
    out = []
    for i in task.rubric:
        ch = i.check
        facts = [
            *ch.get("contains", []),
            *[v.get("contains") for v in ch.get("where", {}).values() if isinstance(v, dict)],
        ]
        for f in facts:
            if isinstance(f, dict) and f.get("kind") == "promise":
                where = {k: v for k, v in ch.get("where", {}).items() if not isinstance(v, dict)}
                if ch.get("to"):
                    where["to"] = ch["to"]
                out.append((where, str(f["value"])))
    return out


def _reply_for(c: dict[str, Any], where: dict[str, Any]) -> bool:
    args = c["arguments"]
    if "ticket_id" in where:
        return "reply" in c["tool"] and str(args.get("ticket_id")) == str(where["ticket_id"])
    to = args.get("to") or []
    to = [to] if isinstance(to, str) else to
    forms = {str(x).casefold() for x in where.get("to", [])}
    return "send" in c["tool"] and any(str(a).casefold() in forms for a in to)


def quote_under_review(
    task: Task, ref: Calls, sentence: str = "Your request for ${amt} is under review."
) -> Calls | None:
    """The reply to a request under review quotes its amount as under review: no promise."""
    guards = _promise_guards(task)
    out, changed = [], False
    for c in ref:
        args = c["arguments"]
        for where, amt in guards:
            key = next((k for k in _MESSAGE_KEYS if isinstance(args.get(k), str)), None)
            if key and _reply_for(c, where):
                args = {**args, key: args[key].rstrip() + " " + sentence.replace("{amt}", amt)}
                changed = True
        out.append({**c, "arguments": args})
    return out if changed else None


# ---- other forms of people and rows (issue 23's follow-ups) ---------------------------------------
def _chat_users(task: Task) -> list[dict[str, Any]]:
    users = task.initial_state.get("services", {}).get("chat", {}).get("users") or {}
    return [u for u in users.values() if isinstance(u, dict) and u.get("real_name") and u.get("id")]


def mention_forms(task: Task, ref: Calls) -> Calls | None:
    """Each chat user named by full name in a chat message is named another way instead: "<@ID>",
    "@handle", or their first name where it is theirs alone in the company, in turn."""
    users = _chat_users(task)
    firsts: dict[str, int] = {}  # a first name names one person only where one full name has it
    for name in {*_people(task).values(), *(str(u["real_name"]) for u in users)}:
        firsts[name.split()[0].casefold()] = firsts.get(name.split()[0].casefold(), 0) + 1
    out, changed, turn = [], False, 0
    for c in ref:
        args = c["arguments"]
        if c["tool"].startswith("chat__") and isinstance(args.get("text"), str):
            text = args["text"]
            for u in users:
                full = str(u["real_name"])
                if not re.search(rf"\b{re.escape(full)}\b", text):
                    continue
                first = full.split()[0]
                forms = [f"<@{u['id']}>", f"@{u['name']}" if u.get("name") else f"<@{u['id']}>"]
                if firsts.get(first.casefold()) == 1:
                    forms.append(first)
                text = re.sub(rf"\b{re.escape(full)}\b", forms[turn % len(forms)], text)
                turn += 1
            if text != args["text"]:
                args, changed = {**args, "text": text}, True
        out.append({**c, "arguments": args})
    return out if changed else None


def _cell_form(v: Any) -> Any:
    """A cell in the form a person might type it: "$1,234.50", "March 2, 2026"."""
    s = str(v)
    if re.fullmatch(r"\d+\.\d{2}", s):
        return f"${float(s):,.2f}"
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", s):
        return _ISO.sub(_date_words, s)
    return v


_ECHO = re.compile(r"^echo '([^']*)' >> (\S+)$")


def _free_cols(env: Any, service: str, key: str) -> frozenset[int]:
    """The free-text columns of a log of s0 (`verify.predicates.free_columns`, by its header)."""
    from compoworld.verify.predicates import log_free_columns

    table = "spreadsheets" if service == "sheets" else "entries"
    rec = env.services[service].store.tables.get(table, {}).get(key)
    if rec is None:
        return frozenset()
    return log_free_columns(rec, "cells" if service == "sheets" else "csv", "content")


def _detail(v: Any) -> Any:
    """A free-text cell as a colleague may write it: the wanted text and a word more."""
    return f"{v} (as requested)" if isinstance(v, str) and v.strip() else v


def rows_reformatted(task: Task, ref: Calls) -> Calls | None:
    """The rows appended to each log (a sheet tab's append calls, a CSV file's echo lines) in the
    other order, their amounts and dates in other written forms, and a free-text column's cell
    (a reference, a note) with a word more; a cell written alone in another form too."""
    import csv
    import io

    sheets: dict[str, list[int]] = {}
    files: dict[str, list[int]] = {}
    for i, c in enumerate(ref):
        a = c["arguments"]
        if c["tool"].endswith("append_rows") and isinstance(a.get("rows"), list):
            sheets.setdefault(f"{a.get('spreadsheet_id')}/{a.get('sheet_name')}", []).append(i)  # one tab
        elif isinstance(a.get("command"), str) and _ECHO.match(a["command"].strip()):
            path = _ECHO.match(a["command"].strip()).group(2)  # type: ignore[union-attr]
            if path.endswith(".csv"):
                files.setdefault(path, []).append(i)
    out = [dict(c) for c in ref]
    changed = False
    env: list[Any] = []

    def s0() -> Any:  # the task's initial state, built once and only where a log is rewritten
        if not env:
            env.append(task.environment())
        return env[0]

    for i, c in enumerate(ref):  # one cell written: the same value in another written form
        a = c["arguments"]
        if c["tool"].endswith("write_to_cell") and _cell_form(a.get("value")) != a.get("value"):
            out[i] = {**c, "arguments": {**a, "value": _cell_form(a["value"])}}
            changed = True
    for idx in sheets.values():
        rows = [r for i in idx for r in ref[i]["arguments"]["rows"]]
        if len(rows) < 2:
            continue
        free = _free_cols(s0(), "sheets", str(ref[idx[0]]["arguments"].get("spreadsheet_id")))
        rows = [[_detail(v) if j in free else _cell_form(v) for j, v in enumerate(r)] for r in reversed(rows)]
        sizes = [len(ref[i]["arguments"]["rows"]) for i in idx]
        for i, n in zip(idx, sizes, strict=True):
            out[i] = {**ref[i], "arguments": {**ref[i]["arguments"], "rows": rows[:n]}}
            rows = rows[n:]
        changed = True
    for path, idx in files.items():
        lines = [_ECHO.match(ref[i]["arguments"]["command"].strip()).group(1) for i in idx]  # type: ignore[union-attr]
        if len(lines) < 2:
            continue
        new = []
        free = _free_cols(s0(), "workspace", posixpath.join(HOME, path))  # the shell's own home
        for line in reversed(lines):
            buf = io.StringIO()
            cells = next(csv.reader([line]))
            csv.writer(buf, lineterminator="").writerow(
                [_detail(v) if j in free else _cell_form(v) for j, v in enumerate(cells)]
            )
            new.append(buf.getvalue())
        if any("'" in x for x in new):
            continue  # a quote the shell line cannot carry: this log stays as the reference writes it
        for i, line in zip(idx, new, strict=True):
            cmd = f"echo '{line}' >> {path}"
            out[i] = {**ref[i], "arguments": {**ref[i]["arguments"], "command": cmd}}
        changed = True
    return out if changed else None
