"""Adversaries and lazy solvers: how a reward-hacking policy or a lazy agent would attack a task.

The adversarial gate (run by the generator and by `tasks check`) keeps a task only if each of these
gets V = 0:
- noop: do nothing;
- spray: the reference, plus the same writes for every trap candidate (its `swap` applied);
- decoy: the work done on the decoy instead of the target;
- collateral: the reference, plus deleting or editing another record in each table it wrote;
- spam: the reference, plus the same message to someone else (a second message, or an extra
  recipient on the same one);
- answer_dump: the reference, with a reply that lists every candidate answer.

The attack suite (issue 23) tries the holes a verifier that does not read the work leaves open:
- gutted: the reference with every text it writes replaced by "Done.";
- near_miss: the reference with its amounts one unit off and its dates a day late;
- extra_cc: the reference with another person copied (cc) on each message it sends;
- hedge, refusal, wrong_unit, value_dump: the reference with an answer that offers an alternative,
  refuses while quoting the value, gives it in another currency or unit, or lists every number seen;
- allowed_delete: the reference plus deleting a record the task may only edit.
An attack that does not apply to a task (no text, no answer) is not run.

The lazy solvers of `tasks audit` never follow the chain. For each value a write took from an
observation, they look at the records listed beside it in that observation (the candidates the
agent was shown) and act on: every one of them; the most recent one; the oldest one; the first one
listed; the one that best matches the instruction's words. A value inside free text (a reply that
quotes a record's field) is a choice too: its identifying tokens, else the record whose own values the text repeats.
"""

from __future__ import annotations

import contextlib
import copy
import json
import re
from collections.abc import Callable
from typing import Any

import orjson

from compoworld.core.environment import Environment
from compoworld.tasks.grounding import is_text as _is_text
from compoworld.tasks.model import Task
from compoworld.verify.verifier import Verdicts

ADVERSARIES = ("noop", "spray", "decoy", "collateral", "spam", "answer_dump")
ATTACKS = (
    "gutted",
    "near_miss",
    "extra_cc",
    "hedge",
    "refusal",
    "wrong_unit",
    "value_dump",
    "allowed_delete",
    "premature_promise",
    "ruled_out_asked",
    "mixed_row",  # the work attacks of tasks.work_attacks (issue 23)
    "extra_row",
    "state_changed",
    "wrong_mention",
)
ADVERSARIES += ATTACKS
# what each kind of attack's states fail most (hard tasks' gate runs, seed 3): its checks of these
# predicates are tried first (`Verdicts.passed(first=...)`), which changes the order, not the verdict
# (a spray's, a changed state's and the necessary gate's states fail no one predicate most: the
# default order serves them better)
FAILS: dict[str, tuple[str, ...]] = {
    "decoy": ("rows_written", "record_exists", "no_changes_except"),
    "spam": ("no_changes_except",),
    "collateral": ("no_changes_except",),
    "allowed_delete": ("no_changes_except",),
    "gutted": ("message_sent", "record_exists"),
    "near_miss": ("rows_written", "record_exists", "message_sent"),
    "extra_cc": ("recipients_only",),
    "ruled_out_asked": ("text_carries", "message_sent"),
    "premature_promise": ("record_absent", "message_not_sent"),
    "mixed_row": ("rows_written",),
    "extra_row": ("rows_written",),
    "wrong_mention": ("message_sent",),
}
SOLVERS = ("every", "recent", "oldest", "first", "keyword")
ALL_SOLVERS = SOLVERS  # kept for callers that import it

_RECIPIENT_KEYS = ("to", "to_emails", "cc", "cc_emails", "channel_id", "channel", "attendees", "recipients")


def swap_args(value: Any, swap: dict[str, str]) -> Any:
    """Arguments with the target's values replaced by the decoy's (whole values keep their type)."""
    if isinstance(value, dict):
        return {k: swap_args(v, swap) for k, v in value.items()}
    if isinstance(value, list):
        return [swap_args(v, swap) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    s = str(value)
    if s in swap:
        new = swap[s]
        if isinstance(value, int) and new.lstrip("-").isdigit():
            return int(new)
        return new
    if isinstance(value, str):
        for a, b in swap.items():
            if len(a) >= 4 and a in value:
                value = value.replace(a, b)
    return value


def _run(env: Environment, calls: list[dict[str, Any]]) -> None:
    """Run calls for their end state (their envelopes are not kept: a call that can change nothing
    is left out)."""
    for c in calls:
        if not env.inert(c["tool"], c["arguments"]):
            env.call(c["tool"], c["arguments"])


def _call_key(c: dict[str, Any]) -> Any:
    try:  # exact types and order (1 and 1.0 and True are other calls)
        return c["tool"], orjson.dumps(c["arguments"])
    except TypeError:
        return object()  # never equal: no sharing


class Prefixes:
    """Variants of the reference's writes run from a start state (s0, or the reference's end state
    for a spray), each from the state after the longest prefix it shares with the writes (an
    attack edits a text, a recipient or an amount further on; the calls before it are the
    reference's own). A call's effect is a function of the state it runs
    in, so the state after the shared prefix is the state the whole run would reach there; states
    are kept as snapshots (persistent values)."""

    def __init__(self, env: Environment, s0: dict[str, Any], writes: list[dict[str, Any]]) -> None:
        self.env, self.writes = env, writes
        self.keys = [_call_key(c) for c in writes]
        self.at: dict[int, dict[str, Any]] = {0: s0}

    def run(self, calls: list[dict[str, Any]]) -> dict[str, Any]:
        """The state after `calls` from the start state (the environment is left in it)."""
        j, n = 0, min(len(calls), len(self.writes))
        while j < n and (calls[j] is self.writes[j] or _call_key(calls[j]) == self.keys[j]):
            j += 1
        apart = local(self.env, calls, self.writes, self.keys, j) if j < len(calls) else None
        if apart is not None:
            return self._run_apart(calls, j, apart)
        self.env.restore(self._state(j))
        _run(self.env, calls[j:])
        return self.env.snapshot()

    def _run_apart(self, calls: list[dict[str, Any]], j: int, apart: set[str]) -> dict[str, Any]:
        """`run` where every call after the shared prefix runs in its own service alone: a service
        whose calls there are the writes' own ends as the writes leave it (its effects are a
        function of its own state and calls), and only the services in `apart` (those whose calls
        differ) run their calls, from the state after the prefix. The same state, and the untouched
        services' tables are the very objects of the writes' end state."""
        start, end = self._state(j), self._state(len(self.writes))
        env = self.env
        if start.get("clock") != end.get("clock"):  # a call moved the clock: every service sees it
            env.restore(start)
            _run(env, calls[j:])
            return env.snapshot()
        env.restore(end)
        for name in apart:
            env.services[name].restore(start["services"][name])
        _run(env, [c for c in calls[j:] if _service(c) in apart])
        return env.snapshot()

    def _state(self, j: int) -> dict[str, Any]:
        if j not in self.at:
            k = max(x for x in self.at if x < j)
            self.env.restore(self.at[k])
            _run(self.env, self.writes[k:j])
            self.at[j] = self.env.snapshot()
        return self.at[j]


def _service(call: dict[str, Any]) -> str:
    return str(call["tool"]).split("__", 1)[0]


def local(
    env: Environment, calls: list[dict[str, Any]], writes: list[dict[str, Any]], keys: list[Any], j: int
) -> set[str] | None:
    """The services whose calls from `j` on differ between `calls` and `writes` (as many of each),
    where every one of those calls runs in its own service alone (`Environment.isolated`); None
    where that does not hold (a browser call reads and writes the others: the whole run is run)."""
    if len(calls) != len(writes):
        return None
    apart: set[str] = set()
    for k in range(j, len(calls)):
        a, b = calls[k], writes[k]
        if not (env.isolated(a["tool"]) and env.isolated(b["tool"])):
            return None
        if a is not b and _call_key(a) != keys[k]:
            apart |= {_service(a), _service(b)}
    return apart


def write_calls(env: Environment, task: Task) -> list[dict[str, Any]]:
    out = []
    for c in task.reference_solution:
        spec = env.tool_spec(c.tool)
        if spec is not None and spec.mutates:
            out.append({"tool": c.tool, "arguments": c.arguments})
    return out


def _others(env: Environment, task: Task) -> dict[str, list[Any]]:
    """Recipients nobody in the task is about: for the spam adversary."""
    s0 = task.initial_state["services"]
    seen: list[str] = []

    def absent(value: str) -> bool:
        """`value` (a value or key of s0) is not in the task's JSON, casefolded. One that JSON
        writes as it is (no quote, backslash or control character) is there: s0 is in that JSON."""
        if orjson.dumps(value)[1:-1] == value.encode():
            return False
        if not seen:  # the whole task as JSON (megabytes): only for a value JSON escapes
            seen.append(task.to_json().decode().casefold())
        return value.casefold() not in seen[0]

    emails = sorted(
        {
            e
            for svc in ("hr", "email", "crm")
            for rec in (s0.get(svc, {}).get("employees", {}) or {}).values()
            if isinstance(rec, dict)
            for e in [rec.get("workEmail") or rec.get("email")]
            if isinstance(e, str) and absent(e)
        }
    )
    if not emails:
        meta_user = task.meta.get("user", "")
        emails = [f"someone.else@{meta_user.rsplit('@', 1)[-1].rstrip('>') or 'example.com'}"]
    chans = sorted(k for k in (s0.get("chat", {}).get("channels", {}) or {}) if absent(k))
    dchans = sorted(
        k
        for k, v in (s0.get("community", {}).get("channels", {}) or {}).items()
        if absent(k) and isinstance(v, dict) and v.get("type", 0) == 0
    )
    return {"email": emails[:2], "chat": chans[:2], "community": dchans[:2], "phone": ["+15550001111"]}


def _spam_variants(call: dict[str, Any], others: dict[str, list[Any]]) -> list[dict[str, Any]]:
    args = call["arguments"]
    out = []
    for key in _RECIPIENT_KEYS:
        if key not in args:
            continue
        v = args[key]
        if key in ("channel_id", "channel"):
            pool = others["community"] if call["tool"].startswith("community__") else others["chat"]
        elif isinstance(v, str) and re.fullmatch(r"\+?[\d ()-]{7,}", v):
            pool = others["phone"]
        else:
            pool = others["email"]
        if not pool:
            continue
        other = pool[0]
        if isinstance(v, list):
            extra = {"email": other} if v and isinstance(v[0], dict) else other
            out.append({"tool": call["tool"], "arguments": {**args, key: [*v, extra]}})  # extra recipient
            out.append({"tool": call["tool"], "arguments": {**args, key: [extra]}})  # a second message
        else:
            out.append({"tool": call["tool"], "arguments": {**args, key: other}})
    return out


def _collateral_states(task: Task, final: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The final state plus one extra deletion or edit of a record the task never named."""
    allowed: set[tuple[str, str, str]] = set()
    tables: set[tuple[str, str]] = set()
    for item in task.rubric:
        if item.check.get("predicate") == "no_changes_except":
            for a in item.check.get("allow", []):
                allowed.add((a["service"], a.get("table") or "", str(a.get("key"))))
                tables.add((a["service"], a.get("table") or ""))
            for c in item.check.get("creates", []):
                tables.add((c["service"], c["table"]))
    out = []
    # an edit inside a record the task may change, to a field it never touched
    fields: dict[tuple[str, str, str], list[str] | None] = {}
    for item in task.rubric:
        if item.check.get("predicate") == "no_changes_except":
            for a in item.check.get("allow", []):
                fields[(a["service"], a.get("table") or "", str(a.get("key")))] = a.get("fields")
    for (service, table, key), may in sorted(fields.items()):
        recs = final["services"].get(service, {}).get(table)
        if not isinstance(recs, dict) or may is None:
            continue
        rk = next((k for k in recs if str(k) == key), None)
        rec = recs.get(rk) if rk is not None else None
        if not isinstance(rec, dict):
            continue
        untouched = [
            f
            for f, v in rec.items()
            if isinstance(v, str | int)
            and not isinstance(v, bool)
            and f != "id"
            and not any(f == p or p.startswith(f + ".") for p in may)
        ]
        if untouched:
            f = untouched[0]
            v = rec[f]
            edited = copy.copy(final)
            edited["services"] = {**final["services"], service: {**final["services"][service]}}
            edited["services"][service][table] = {
                **recs,
                rk: {**rec, f: (v + 1) if isinstance(v, int) else str(v) + " (edited)"},
            }
            out.append((f"edit {service}:{table}/{key}.{f} (a field the task never touched)", edited))
            break
    for service, table in sorted(tables):
        recs = final["services"].get(service, {}).get(table)
        if not isinstance(recs, dict):
            continue  # an engine image (SQL): covered by the same predicate through its own rows
        s0_recs = task.initial_state["services"].get(service, {}).get(table, {}) or {}
        victims = [
            k for k in sorted(recs, key=str) if k in s0_recs and (service, table, str(k)) not in allowed
        ]
        if not victims:
            continue
        k = victims[len(victims) // 2]
        deleted = copy.copy(final)
        deleted["services"] = {**final["services"], service: {**final["services"][service]}}
        deleted["services"][service][table] = {kk: v for kk, v in recs.items() if kk != k}
        out.append((f"delete {service}:{table}/{k}", deleted))
        rec = recs[k]
        if isinstance(rec, dict):
            field = next((f for f, v in rec.items() if isinstance(v, str) and f not in ("id",)), None)
            if field:
                edited = copy.copy(deleted)
                edited["services"] = {**final["services"], service: {**final["services"][service]}}
                edited["services"][service][table] = {
                    **recs,
                    k: {**rec, field: str(rec[field]) + " (edited)"},
                }
                out.append((f"edit {service}:{table}/{k}.{field}", edited))
    return out


def _answer_candidates(task: Task) -> list[str]:
    out = [t.answer for t in task.traps if t.answer]
    for item in task.rubric:
        if item.check.get("predicate") == "answer_matches":
            out += item.check.get("exclude", [])
    return [x for x in dict.fromkeys(out) if x and x != task.answer]


def attack(
    task: Task,
    env: Environment,
    final: dict[str, Any],
    verdicts: Verdicts | None = None,
    observed: list[dict[str, Any]] | None = None,
    reached: dict[int, dict[str, Any]] | None = None,
) -> dict[str, str | None]:
    """Adversary -> None when it gets V = 0 (the task holds), else how it passed. `verdicts` (V alone,
    stopping at the first failing check) may be shared with the caller's other gates; `observed`:
    the envelopes of the reference replayed from s0, if the caller has them; `reached`: states the
    reference's first j writes reach from s0, by j, if the caller has them (`Prefixes` starts
    there instead of running those writes again)."""
    out: dict[str, str | None] = {a: None for a in ADVERSARIES}
    s0 = env.initial
    verdicts = verdicts or Verdicts(task)
    passes = verdicts.passed
    if passes(s0, None):
        out["noop"] = "doing nothing passes"
    writes = write_calls(env, task)
    prefixes = Prefixes(env, s0, writes)
    prefixes.at.update(reached or {})
    sprays = Prefixes(env, final, writes)  # the writes again on top of the reference's end state
    answer = task.answer
    env.restore(final)
    h_final = env.state_hash()  # a write that changes nothing (refused by the service) is no attack
    for trap in task.traps:
        if not trap.swap:
            continue
        swapped = [{**c, "arguments": swap_args(c["arguments"], trap.swap)} for c in writes]
        if swapped == writes:
            continue  # the writes never carry the trap's value: nothing to act on differently
        state = prefixes.run(swapped)
        if out["decoy"] is None and passes(state, trap.answer or answer, kind="decoy", first=FAILS["decoy"]):
            out["decoy"] = f"acting on the {trap.kind} candidate passes ({trap.description})"
        state = sprays.run(swapped)
        if env.state_hash() == h_final:
            continue  # the decoy refuses the write (a closed ticket): nothing to spray
        if out["spray"] is None and passes(state, answer, kind="spray"):
            out["spray"] = f"acting on the target and the {trap.kind} candidate passes"
    others = _others(env, task)
    for c in writes:
        for variant in _spam_variants(c, others):
            env.restore(final)
            env.call(variant["tool"], variant["arguments"])
            if env.state_hash() != h_final and passes(
                env.snapshot(), answer, kind="spam", first=FAILS["spam"]
            ):
                out["spam"] = f"{variant['tool']} to someone else as well passes"
                break
        if out["spam"]:
            break
    for what, state in _collateral_states(task, final):
        if passes(state, answer, kind="collateral", first=FAILS["collateral"]):
            out["collateral"] = f"the reference plus '{what}' passes"
            break
    cands = _answer_candidates(task)
    if answer and cands and passes(final, ", ".join([*cands, answer])):
        out["answer_dump"] = "a reply listing every candidate passes"
    out.update(attack_suite(task, env, final, writes, verdicts, observed, others, prefixes))
    env.restore(s0)
    return out


# ---- the attack suite --------------------------------------------------------------------------
GUTS = ("Done.", "Hi, all sorted on our side. Thanks!", None)  # None: the text with its facts cut out
_FACTS = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2}(?:T[\d:]+Z?)?)|[\w.%+'-]+@[\w-]+(?:\.[\w-]+)+|\+?\d[\d ().-]{8,}\d"
    r"|(?<![\w/])(?P<num>\$?\d[\d,]*(?:\.\d+)?)(?![\w/])%?"
    r"|\b[A-Z]{2,}[-_]?\w*\d\w*\b|#\w+"
)


def gut(value: Any, key: str = "", form: str | None = "Done.", asked: Asked | None = None) -> Any:
    """Every text the arguments carry replaced by `form` ("Done."), or with its facts cut out when
    `form` is None (ids, codes and addresses; the dates and amounts the work found or worked out);
    the ids and values outside texts kept."""
    if isinstance(value, dict):
        return {k: gut(v, k, form, asked) for k, v in value.items()}
    if isinstance(value, list):
        return [gut(v, key, form, asked) for v in value]
    if not _is_text(key, value):
        return value
    if form is not None:
        return form

    def cut(m: re.Match[str]) -> str:
        if asked is not None and any(m.group(0).casefold() in g for g in asked.given):
            return m.group(0)  # the request said it: a reply need not restate it
        if asked is not None and m.group("date") and not asked.day(m.group("date")[:10]):
            return m.group(0)
        if asked is not None and m.group("num"):
            raw = m.group("num")
            n = float(raw.lstrip("$").replace(",", "") or 0)
            # a small count ("all 2 of your sessions") is no fact a careful reader misses
            if not asked.number(n) or ("." not in raw and "$" not in raw and n < 100 and not asked.made(n)):
                return m.group(0)
        return " "

    out = " ".join(_FACTS.sub(cut, value).split())
    return value if out == " ".join(value.split()) else out  # nothing cut: no attack


_ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})")
_AMOUNT_TXT = re.compile(r"(?<![\w.#-])(\d[\d,]*\.\d{2})(?![\w])")


def _day_later(m: re.Match[str]) -> str:
    from datetime import date, timedelta

    try:
        d = date(int(m.group(1)), int(m.group(2)), int(m.group(3))) + timedelta(days=1)
    except ValueError:
        return m.group(0)
    return d.isoformat()


_NUMERAL = re.compile(r"-?\d[\d,]*(\.\d+)?")


class Asked:
    """The values a task's work found or worked out: what a near miss gets one unit or a day off."""

    def __init__(self, task: Task, env: Environment, observed: list[dict[str, Any]] | None = None) -> None:
        """`observed`: the envelopes of the reference replayed from s0 (else it is replayed here)."""
        from compoworld.tasks.grounding import leaves
        from compoworld.tasks.rubric import MESSAGE_SERVICES

        if observed is None:
            env.reset()
        self.days: set[str] = set()
        self.numbers: set[float] = set()
        # what the request said (the instruction, a colleague's email): restating it is no fact
        self.given: list[str] = [task.instruction.casefold()]
        self.observed: list[Any] = []  # what each reference call returned
        for k, c in enumerate(task.reference_solution):
            spec = env.tool_spec(c.tool)
            read = c.tool.split("__", 1)[0] in MESSAGE_SERVICES and not (spec and spec.mutates)
            data = (observed[k] if observed is not None else env.call(c.tool, c.arguments)).get("data")
            self.observed.append(data)
            for _, v in leaves(data):
                if isinstance(v, bool) or v is None:
                    continue
                if read and isinstance(v, str) and len(v.split()) >= 6:
                    self.given.append(v.casefold())
                if isinstance(v, int | float):
                    self.numbers.add(round(float(v), 2))
                    self.numbers.add(round(float(v) / 100, 2))
                elif isinstance(v, str):
                    if "-" in v:  # an ISO day has its dashes (most texts have none)
                        self.days.update(m.group(0) for m in _ISO_DAY.finditer(v))
                    if _NUMERAL.fullmatch(v.strip()):
                        self.numbers.add(round(float(v.replace(",", "")), 2))
        self.composed: set[float] = set()
        for m in task.meta.get("composed", []):
            self.days.update(x.group(0) for x in _ISO_DAY.finditer(str(m)))
            with contextlib.suppress(ValueError):
                self.composed.add(round(float(str(m).replace(",", "")), 2))
        self.numbers |= self.composed
        self.instruction = task.instruction
        self.clock = str(task.initial_state.get("clock", ""))

    def day(self, d: str) -> bool:
        from compoworld.tasks.rubric import near_today, relative_day

        if near_today(
            self.clock, d
        ):  # records touched lately show these days: only the request asks for them
            return relative_day(self.instruction, self.clock, d)
        return d in self.days or relative_day(self.instruction, self.clock, d)

    def number(self, x: float) -> bool:
        return round(x, 2) in self.numbers

    def made(self, x: float) -> bool:
        return round(x, 2) in self.composed


def near_miss(value: Any, asked: Asked, key: str = "") -> Any:
    """Amounts one unit off and dates a day late, in values and inside texts, where the work found
    or worked them out (a due date the reference picked itself is no fact of the task)."""
    if isinstance(value, dict):
        return {k: near_miss(v, asked, k) for k, v in value.items()}
    if isinstance(value, list):
        return [near_miss(v, asked, key) for v in value]
    if isinstance(value, float) and not isinstance(value, bool):
        return value + 1.0 if asked.number(value) else value
    if isinstance(value, str):
        v = _ISO_DAY.sub(lambda m: _day_later(m) if asked.day(m.group(0)) else m.group(0), value)
        return _AMOUNT_TXT.sub(
            lambda m: (
                f"{float(m.group(1).replace(',', '')) + 1:.2f}"
                if asked.number(float(m.group(1).replace(",", "")))
                else m.group(1)
            ),
            v,
        )
    if (
        isinstance(value, int)
        and not isinstance(value, bool)
        and re.search(r"amount|total|price|qty|quantity|count", key, re.I)
    ):
        return value + 1 if asked.number(value) or asked.number(value / 100) else value
    return value


_CC_KEYS = ("cc", "cc_emails", "ccRecipients", "cc_addresses")
_BCC_KEYS = ("bcc", "bcc_emails", "bccRecipients", "bcc_addresses")


def _rival_people(task: Task) -> list[str]:
    """Addresses among the trap candidates' values (the other customer a reply must not reach)."""
    return [
        v
        for t in task.traps
        for v in t.swap.values()
        if re.fullmatch(r"[\w.%+'-]+@[\w-]+(\.[\w-]+)+", str(v))
    ][:2]


def _with_cc(
    env: Environment, call: dict[str, Any], other: str, keys: tuple[str, ...] = _CC_KEYS
) -> dict[str, Any] | None:
    """The call with another person copied, through the cc (or bcc) field its tool documents."""
    spec = env.tool_spec(call["tool"])
    props = (spec.input_schema or {}).get("properties", {}) if spec else {}
    for k in keys:
        if k in props or k in call["arguments"]:
            old = call["arguments"].get(k) or []
            old = old if isinstance(old, list) else [old]
            extra: Any = {"email": other} if old and isinstance(old[0], dict) else other
            kind = props.get(k, {}).get("type")
            new = [*old, extra] if kind != "string" else ", ".join([*map(str, old), other])
            return {"tool": call["tool"], "arguments": {**call["arguments"], k: new}}
    return None


def _answer_attacks(task: Task) -> dict[str, list[str]]:
    """Answers a careful user rejects, each built from the asked value."""
    ans = str(task.answer)
    spec = next((i.check for i in task.rubric if i.check.get("predicate") == "answer_matches"), {})
    kind = spec.get("kind", "text")
    rival = next((x for x in spec.get("exclude", []) if x and x != ans), None) or _near(ans, kind)
    out = {
        "hedge": [
            f"{ans} (or maybe {rival})",
            f"It is either {ans} or {rival}.",
            f"Probably {ans}.",
            f"{ans}?",
            f"Somewhere between {ans} and {rival}.",
            f"{ans} / {rival}",
        ],
        "refusal": [
            f"I could not verify it. Possibly {ans}?",
            f"I'm not sure; it might be {ans}.",
            f"I was unable to confirm the figure, but {ans} is my best guess.",
        ],
    }
    if kind == "number":
        cur = (spec.get("currency") or "").upper()
        if cur:
            out["wrong_unit"] = [f"{ans} {c}" for c in ("EUR", "GBP", "USD") if c != cur] + [f"€{ans}"]
        elif spec.get("unit") == "count":
            out["wrong_unit"] = [f"{ans} USD", f"${ans}"]
        elif spec.get("unit"):
            out["wrong_unit"] = [f"{ans} {'hours' if spec['unit'] != 'hour' else 'minutes'}"]
    return out


def _near(value: str, kind: str) -> str:
    if kind == "number":
        try:
            x = float(value.replace(",", ""))
            return f"{x + 1:.2f}" if "." in value else str(int(x) + 1)
        except ValueError:
            return value + "1"
    m = re.search(r"\d+", value)
    if m:
        n = m.group()
        return value[: m.start()] + str(int(n) + 1).zfill(len(n)) + value[m.end() :]
    return f"{value} (2)"


def _dump(task: Task, asked: Asked) -> str | None:
    """The asked value among every value of its kind the reference was shown."""
    from compoworld.tasks.grounding import leaves

    ans = str(task.answer)
    spec = next((i.check for i in task.rubric if i.check.get("predicate") == "answer_matches"), {})
    seen: list[str] = []
    for data in asked.observed:
        for _, v in leaves(data):
            if spec.get("kind") == "number":
                if isinstance(v, int | float) and not isinstance(v, bool):
                    seen.append(f"{v:.2f}" if "." in ans else str(v))
            elif isinstance(v, str) and _same_shape(v, ans):
                seen.append(v)
    vals = [x for x in dict.fromkeys(seen) if x != ans][:40]
    if len(vals) < 2:
        return None
    mid = len(vals) // 2
    return ", ".join([*vals[:mid], ans, *vals[mid:]])


def _same_shape(v: str, ans: str) -> bool:
    return re.sub(r"\d", "0", v) == re.sub(r"\d", "0", ans) and v != ans and any(ch.isdigit() for ch in ans)


def attack_suite(
    task: Task,
    env: Environment,
    final: dict[str, Any],
    writes: list[dict[str, Any]],
    verdicts: Verdicts | None = None,
    observed: list[dict[str, Any]] | None = None,
    others_of: dict[str, list[Any]] | None = None,
    prefixes: Prefixes | None = None,
) -> dict[str, str | None]:
    """Attack -> how it passed (None: it got V = 0 or does not apply). The optional arguments are
    what `attack` already has: the verdicts, the reference's envelopes, `_others`, the prefixes."""
    out: dict[str, str | None] = dict.fromkeys(ATTACKS)
    passes = (verdicts or Verdicts(task)).passed
    s0 = env.initial
    answer = task.answer
    run_writes = (prefixes or Prefixes(env, s0, writes)).run

    asked = Asked(task, env, observed)
    for form in GUTS:
        gutted = [{**c, "arguments": gut(c["arguments"], form=form, asked=asked)} for c in writes]
        if gutted != writes and passes(run_writes(gutted), answer, kind="gutted", first=FAILS["gutted"]):
            what = f"replaced by {form!r}" if form else "with its facts cut out"
            out["gutted"] = f"the reference with every text {what} passes"
            break
    missed = [{**c, "arguments": near_miss(c["arguments"], asked)} for c in writes]
    if missed != writes:
        state = run_writes(missed)
        env.restore(final)
        if state != env.snapshot() and passes(state, answer, kind="near_miss", first=FAILS["near_miss"]):
            out["near_miss"] = "the reference with amounts one off and dates a day late passes"
    others = (others_of or _others(env, task))["email"] + _rival_people(task)
    for other in others[:3]:
        for keys in (_CC_KEYS, _BCC_KEYS):
            ccd = [_with_cc(env, c, other, keys) or c for c in writes]
            if ccd == writes:
                continue
            state = run_writes(ccd)
            env.restore(final)
            if state != env.snapshot() and passes(state, answer, kind="extra_cc", first=FAILS["extra_cc"]):
                out["extra_cc"] = f"the reference with {other} copied ({keys[0]}) on its messages passes"
                break
        if out["extra_cc"]:
            break
    if answer:
        for name, texts in _answer_attacks(task).items():
            for text in texts:
                if passes(final, text, kind="answer"):
                    out[name] = f"the answer {text!r} passes"
                    break
        dump = _dump(task, asked)
        if dump and passes(final, dump, kind="answer"):
            out["value_dump"] = "an answer listing every value seen passes"
    # the careful shapes' traps (tasks.variants): a credit pledged before approval; the ruled-out
    # person asked to act
    from compoworld.tasks.variants import _MESSAGE_KEYS, _message_call, _ruled_out, quote_under_review

    pledged = quote_under_review(task, writes, "We have credited ${amt} to your account.")
    if pledged is not None and passes(
        run_writes(pledged), answer, kind="premature_promise", first=FAILS["premature_promise"]
    ):
        out["premature_promise"] = "a reply crediting the amount before approval passes"
    for rival in _ruled_out(task)[:1]:
        asks = []
        for c in writes:
            k = next((k for k in _MESSAGE_KEYS if isinstance(c["arguments"].get(k), str)), None)
            if k and _message_call(c):
                c = {
                    **c,
                    "arguments": {**c["arguments"], k: f"{rival}, please approve this. {c['arguments'][k]}"},
                }
            asks.append(c)
        if asks != writes and passes(
            run_writes(asks), answer, kind="ruled_out_asked", first=FAILS["ruled_out_asked"]
        ):
            out["ruled_out_asked"] = f"messages asking {rival} (ruled out) to act pass"
    for item in task.rubric:
        if item.check.get("predicate") != "no_changes_except":
            continue
        for a in item.check.get("allow", []):
            if a.get("key") is None or a.get("remove"):
                continue
            recs = final["services"].get(a["service"], {}).get(a.get("table") or "")
            if not isinstance(recs, dict):
                continue
            rk = next((k for k in recs if str(k) == a["key"]), None)
            if rk is None:
                continue
            state = copy.copy(final)
            state["services"] = {**final["services"], a["service"]: {**final["services"][a["service"]]}}
            state["services"][a["service"]][a["table"]] = {k: v for k, v in recs.items() if k != rk}
            if passes(state, answer, kind="allowed_delete", first=FAILS["allowed_delete"]):
                out["allowed_delete"] = (
                    f"the reference plus deleting {a['service']}:{a['table']}/{a['key']} passes"
                )
                break
    from compoworld.tasks.work_attacks import work_attacks  # logs, kept states, mentions (issue 23)

    for name, why, state in work_attacks(task, final):
        if out.get(name) is None and passes(state, answer, kind=name, first=FAILS.get(name, ())):
            out[name] = why
    env.restore(s0)
    return out


# ---- lazy solvers (tasks audit) ---------------------------------------------------------------
_TIME_KEYS = (
    "updated_at",
    "updatedAt",
    "updated",
    "modified",
    "modifiedTime",
    "modified_at",
    "server_modified",
    "client_modified",
    "applied",
    "applied_at",
    "dateLastActivity",
    "hs_lastmodifieddate",
    "created_at",
    "createdAt",
    "createdTime",
    "created",
    "date_created",
    "createdate",
    "date",
    "internalDate",
    "timestamp",
    "ts",
    "start",
    "start.dateTime",
    "start_time",
    "due_date",
)
_NESTED = (
    "properties",
    "fields",
    "start",
)  # HubSpot, Jira and Airtable keep a record's values one level down


def flat(r: dict[str, Any]) -> dict[str, Any]:
    """A record's scalar fields, with those of its nested `properties` / `fields` beside them."""
    out = {k: v for k, v in r.items() if not isinstance(v, dict | list)}
    for n in _NESTED:
        if isinstance(r.get(n), dict):
            out.update({f"{n}.{k}": v for k, v in r[n].items() if not isinstance(v, dict | list)})
    return out


_NUMBER = re.compile(r"-?\d+(\.\d+)?")


def _same(v: Any, value: str) -> bool:
    """A field shows the value: the same text, or the same number in another notation (12.50, 12.5)."""
    if str(v) == value:
        return True
    if isinstance(v, int | float) and not isinstance(v, bool) and _NUMBER.fullmatch(value):
        return abs(float(v) - float(value)) < 1e-9
    return False


def _record_lists(obj: Any) -> list[list[dict[str, Any]]]:
    """Every list of records in an observation (a record set keyed by id counts as one)."""
    out: list[list[dict[str, Any]]] = []

    def walk(o: Any) -> None:
        if isinstance(o, dict) and o and all(isinstance(v, dict) for v in o.values()) and len(o) > 1:
            walk(list(o.values()))  # a record set keyed by id (sheet rows, tables)
            return
        if isinstance(o, list):
            out.append([x for x in o if isinstance(x, dict)])
            for x in o:
                walk(x)
        elif isinstance(o, dict):
            for v in o.values():
                walk(v)

    walk(obj)
    return out


def _records_with(obj: Any, value: str) -> list[tuple[dict[str, Any], str, list[dict[str, Any]]]]:
    """(record, field, siblings) for each list of records in `obj` with a record whose field is `value`."""
    return [
        (r, k, recs)
        for recs in _record_lists(obj)
        for r in recs
        for k, v in flat(r).items()
        if _same(v, value)
    ]


def _forms(v: Any) -> set[str]:
    """How a field's value reads in text: 12.5 as 12.5 and 12.50."""
    if isinstance(v, bool) or v is None:
        return set()
    if isinstance(v, int | float):
        return {str(v), f"{v:.2f}", *([str(int(v))] if v == int(v) else [])}
    return {str(v)}


def _shown_in(
    text: str, obj: Any, known: str = ""
) -> tuple[dict[str, Any], str, list[dict[str, Any]]] | None:
    """The record of a list in `obj` whose own values the free text repeats (a reply that quotes a
    record's field, a name, a URL, an id): the one repeating most of the values that set it apart
    from its siblings, if exactly one does, and it repeats at least one value the agent learnt
    here, not before (`known`: a name the request gave is shared by a closed copy, and quoting it
    says nothing of which record was read). Values under four characters are not evidence (nor
    does `swap_args` replace them inside text)."""
    low = text.casefold()

    def rx(v: str) -> re.Pattern[str]:
        return re.compile(r"(?<![\w])" + re.escape(v.casefold()) + r"(?![\w])")

    def shown(v: str) -> bool:
        return len(v) >= 4 and rx(v).search(low) is not None

    best: tuple[int, dict[str, Any], str, list[dict[str, Any]], bool] | None = None
    tie = False
    for recs in _record_lists(obj):
        if len(recs) < 2:
            continue
        own = [{k: _forms(v) for k, v in flat(r).items()} for r in recs]
        every = set.intersection(*({x for fs in o.values() for x in fs} for o in own))
        for r, o in zip(recs, own, strict=True):
            quoted = [(k, f) for k, fs in o.items() for f in fs if f not in every and shown(f)]
            hits = list(dict.fromkeys(k for k, _ in quoted))
            if not hits:
                continue
            learnt = any(rx(f).search(known) is None for _, f in quoted)
            if best is None or len(hits) > best[0]:
                best, tie = (len(hits), r, hits[0], recs, learnt), False
            elif len(hits) == best[0] and r is not best[1]:
                tie = True
    if best is None or tie or not best[4]:
        return None
    return best[1], best[2], best[3]


def _free_text(path: str, value: str) -> bool:
    """An argument the agent words itself (a body, a note), as the grounded gate reads it."""
    from compoworld.tasks.grounding import _TEXTY, FREE_TEXT

    parts = [p for p in path.split(".") if not p.isdigit()]
    key = parts[-1].lower() if parts else ""
    return key in FREE_TEXT or key.endswith(_TEXTY) or len(value) > 80


def _recency(r: dict[str, Any]) -> str:
    f = flat(r)
    for k in _TIME_KEYS:
        for key in (k, *(f"{n}.{k}" for n in _NESTED)):
            if f.get(key) is not None:
                return str(f[key])
    return ""


def _words(s: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]{3,}", s.casefold())}


def solve_lazily(task: Task) -> dict[str, float]:
    """Solver -> its chance to pass the task (V = 1) without following the chain (1.0 or 0.0 for
    deterministic solvers; guesses among tied candidates count the share of ties that pass)."""
    from compoworld.tasks.grounding import identifying, leaves, tool_enums

    env = task.environment()
    s0 = env.initial
    obs = [env.call(c.tool, c.arguments) for c in task.reference_solution]
    writes = [
        (i, c)
        for i, c in enumerate(task.reference_solution)
        if (spec := env.tool_spec(c.tool)) is not None and spec.mutates
    ]

    def before(j: int) -> str:
        """What the agent had been shown before observation j."""
        seen = [task.instruction, *(json.dumps(o, ensure_ascii=False, default=str) for o in obs[:j])]
        return "\n".join(seen).casefold()

    # every write value the reference learnt from an observation, with the records shown beside it
    points = []
    learnt = False
    for i, c in writes:
        in_text = identifying(c.arguments, tool_enums(env, c.tool))
        traced: set[str] = set()  # free-text paths whose choice is already a point
        for path, src in c.sources.items():
            if not src.startswith("obs:"):
                continue
            learnt = True
            if path.endswith("~"):
                # free text (a reply's body): the identifying tokens in it are what it learnt, and
                # `sources` keeps one observation per path, so each token is looked for in all the
                # earlier ones (its own first)
                values = [tok for p, tok in in_text if p == path]
                seen = [int(src[4:]), *(j for j in range(i) if j != int(src[4:]))]
            else:
                values = [str(v) for p, v in leaves(c.arguments) if p == path][:1]
                seen = [int(src[4:])]
            for value in values:
                for j in seen:
                    hits = _records_with(obs[j].get("data"), value)
                    if hits and len(hits[0][2]) > 1:
                        traced.add(path)
                        if all(hits[0][0] is not p[0] for p in points):
                            points.append(hits[0])
                        break
        # free text no token traced may still quote a record it read (a field's value, a name, a
        # URL): the choice of that record is a point too
        for path, v in leaves(c.arguments):
            if not isinstance(v, str) or f"{path}~" in traced or not _free_text(path, v):
                continue
            for j in reversed(range(i)):
                hit = _shown_in(v, obs[j].get("data"), before(j))
                if hit is not None:
                    learnt = True
                    if all(hit[0] is not p[0] for p in points):
                        points.append(hit)
                    break
    if not points:
        # no choice was shown: a solver that skips the reads can only succeed if the writes need
        # nothing the observations revealed
        env.restore(s0)
        _run(env, [{"tool": c.tool, "arguments": c.arguments} for _, c in writes])
        passed = float(not learnt and Verdicts(task).passed(env.snapshot(), task.answer))
        env.restore(s0)
        return {s: passed for s in SOLVERS}
    base = [{"tool": c.tool, "arguments": c.arguments} for _, c in writes]
    rates = _solve_at(task, env, s0, base, points)
    env.restore(s0)
    return rates


def _swap_to(rec: dict[str, Any], other: dict[str, Any]) -> dict[str, str]:
    """The values of `rec` replaced by those of `other`: acting on `other` instead."""
    if other is rec:
        return {}
    fr, fo = flat(rec), flat(other)
    return {str(v): str(fo[k]) for k, v in fr.items() if k in fo and str(v) != str(fo[k]) and str(v)}


def _solve_at(
    task: Task,
    env: Environment,
    s0: dict[str, Any],
    base: list[dict[str, Any]],
    points: list[tuple[dict[str, Any], str, list[dict[str, Any]]]],
) -> dict[str, float]:
    """The solvers choose at every decision point at once (a lazy agent guesses each choice)."""
    import itertools

    passes = Verdicts(task).passed

    def act(swaps: list[dict[str, str]], answer_swap: dict[str, str]) -> bool:
        env.restore(s0)
        for sw in swaps:
            _run(env, [{**c, "arguments": swap_args(c["arguments"], sw)} for c in base])
        ans = task.answer
        if ans:
            ans = answer_swap.get(ans, ans)
        return passes(env.snapshot(), ans)

    def guess(score: Callable[[dict[str, Any]], Any]) -> float:
        """Pick the best-scoring candidate at each point, ties at random: the chance to pass."""
        choices = []
        for rec, _f, sibs in points:
            best = max(score(r) for r in sibs)
            choices.append([_swap_to(rec, r) for r in sibs if score(r) == best])
        combos = list(itertools.islice(itertools.product(*choices), 32))
        passed = 0
        for combo in combos:
            merged: dict[str, str] = {}
            for sw in combo:
                merged.update(sw)
            passed += act([merged], merged)
        return passed / len(combos)

    # every: the reference plus, at each point, the same writes for every other candidate
    # in an order that knows nothing of the target: where the outcome depends on which write comes
    # first (a second page with the same title is refused) or last (a field is overwritten), the
    # target is in the winning place one time in k
    every = [{}] + [_swap_to(rec, r) for rec, _f, sibs in points for r in sibs if r is not rec]
    first, last = act(every, {}), act([*every[1:], {}], {})
    out = {"every": float(first) if first == last else 1 / len(every)}
    out["recent"] = guess(_recency)
    # the oldest record with a time (records without one never win): a policy that learnt the target
    # is the long-standing record rather than the latest
    out["oldest"] = guess(lambda r: tuple(-ord(ch) for ch in t) if (t := _recency(r)) else (-(10**9),))
    # first: the record listed first at each point (the top hit a lazy agent takes; compiled lists
    # show the newest first, hand-built ones keep their own order)
    top: dict[str, str] = {}
    for rec, _f, sibs in points:
        top.update(_swap_to(rec, sibs[0]))
    out["first"] = float(act([top], top))
    words = _words(task.instruction)
    out["keyword"] = guess(lambda r: len(words & _words(str(r))))
    return out
