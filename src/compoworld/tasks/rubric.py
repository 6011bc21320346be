"""Checks derived from what the reference wrote: the content of its texts, its recipients, its answer.

A family states the goal (a reply on the ticket, a note on the contact); this module reads the
reference's effects and adds what a careful user would also check, for every family alike:

- **content**: every text the work writes (a note, a comment, a reply, a message, a description, a
  row, a tag) must carry the facts the reference's text carries that the agent had to find or work
  out (an amount, a date, an id, a person), matched by meaning, and must name no rival's value and
  no secret in clear text. A text with no such fact must still say what it is about (not "Done.");
- **recipients**: nobody outside the people the reference addressed, in to, cc or bcc of anything;
- **answers**: the currency and unit of an asked quantity (so "7528.00 EUR" fails a dollar total);
- **guards**: decoy values the target shares (its own name, a common word) guard nothing and are
  dropped; collateral allows a documented optional field the task leaves open, filled where it was
  empty with no rival's value, and an allowed record may be deleted only if the reference deleted it.

Every derived check is kept only if the reference passes it (and a goal only if s0 fails it).
"""

from __future__ import annotations

import contextlib
import re
from collections import Counter
from collections.abc import Iterable
from functools import cache, lru_cache
from typing import Any

from compoworld.tasks.grounding import FREE_TEXT, leaves
from compoworld.tasks.grounding import tokens as id_tokens
from compoworld.verify.forms import parse_when
from compoworld.verify.meaning import amounts, is_numeric, names_value, num_of, word_in
from compoworld.verify.predicates import RECIPIENT_FIELDS, changed_paths, changed_records
from compoworld.verify.state_view import StateView

# fields whose text is prose the agent writes (facts and substance are read)
PROSE = set(FREE_TEXT) - {"subject", "summary", "title", "topic", "caption", "subject_line", "preview_text"}
PROSE |= {"desc", "comments", "uncategorized_text", "hs_note_body", "notes", "body_text", "content_html"}
PROSE -= {"value", "command", "cmd", "script", "sql", "statement", "formula", "answer"}
# short labels (a subject, a title): only what they must not name is read
LABELS = {
    "subject",
    "summary",
    "title",
    "name",
    "topic",
    "caption",
    "subject_line",
    "preview_text",
    "dealname",
}
TAGS = {"tags", "labels", "tag_names", "label_names", "labelIds"}
ROW_SERVICES = {"sheets", "bases", "sql", "notion"}
MESSAGE_SERVICES = {"email", "chat", "sms", "helpdesk", "community"}
_HTML = ("htmlBody", "html", "html_body", "body_html")
_EMAIL = re.compile(r"(?<![\w.%+-])[A-Za-z0-9._%+-][A-Za-z0-9._%+'-]*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_SECRET = re.compile(r"api[_-]?key|apikey|secret|token|password|passwd|credential|private[_-]?key", re.I)
_VOLATILE = re.compile(
    r"(^|_)(id|ids|at|ts|version|etag)$|^_|(created|updated|modified|changed|sent|last_?activity)(_?at|_?time|_?date)?$"
    r"|^(date_?)?(created|updated|modified)|timestamp$",
    re.I,
)
_STOP = set(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "all",
        "also",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "before",
        "being",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "done",
        "each",
        "for",
        "from",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "just",
        "me",
        "more",
        "most",
        "my",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "hi",
        "hello",
        "dear",
        "thanks",
        "thank",
        "regards",
        "best",
        "cheers",
        "please",
        "update",
        "updated",
        "fyi",
        "note",
        "noted",
        "sent",
        "here",
        "ok",
        "okay",
        "sure",
        "complete",
        "completed",
        "finished",
        "handled",
        "taken",
        "care",
        "let",
        "know",
        "let's",
        "team",
        "all",
        "set",
        "via",
        "per",
        "new",
        "now",
        "today",
    ]
)


def _is_prose(path: str, value: str) -> bool:
    key = _leaf(path)
    if key in LABELS:
        return False
    return (
        key in PROSE
        or key.endswith(("_body", "_text", "_note", "_comment", "_message", "_content"))
        or (len(value.split()) >= 6)
    )


def _log_format(key: Any, after: dict[str, Any]) -> tuple[str | None, str]:
    """How a record is a log read row by row: a spreadsheet's cells ("cells"), a CSV file's lines
    ("csv", with the field holding its text), or not a log (None)."""
    if isinstance(after.get("sheets"), list):
        return "cells", "content"
    name = " ".join(str(after.get(f) or "") for f in ("path", "name", "path_lower", "title"))
    if re.search(r"\.csv\b", f"{key} {name}", re.I):
        path = next((f for f in ("content", "text", "body", "data") if isinstance(after.get(f), str)), "")
        return ("csv", path) if path else (None, "content")
    return None, "content"


@lru_cache(maxsize=1 << 14)  # a pure function of the path: every envelope's leaves ask it
def _leaf(path: str) -> str:
    parts = [p for p in path.split(".") if not p.isdigit()]
    return parts[-1] if parts else ""


def _people_index(people: Iterable[tuple[str, str]]) -> tuple[dict[str, tuple[str, str]], Counter]:
    by = {}
    firsts: Counter = Counter()
    for name, email in people:
        by[email.casefold()] = (name, email)
        by[name.casefold()] = (name, email)
        firsts[name.split()[0].casefold()] += 1
        firsts["~" + name.split()[-1].casefold()] += 1  # last names, counted apart
    return by, firsts


class Derivation:
    """What the reference showed, wrote and worked out, read once for every derived check."""

    def __init__(
        self,
        s0: dict[str, Any],
        s1: dict[str, Any],
        calls: list[dict[str, Any]],
        results: list[dict[str, Any]],
        instruction: str,
        made: list[str] = (),  # type: ignore[assignment]
        traps: list[dict[str, Any]] = (),  # type: ignore[assignment]
        people: Iterable[tuple[str, str]] = (),
        mutates: Any = None,
    ) -> None:
        self.s0, self.s1 = s0, s1
        self.v0, self.v1 = StateView(s0), StateView(s1)
        self.instruction = instruction
        self.made = [str(m) for m in made]
        self.traps = list(traps)
        self.people, self.firsts = _people_index(people)
        self.handles = _handles(s0)
        writes = [c for c in calls if mutates is None or mutates(c["tool"])]
        self.writes = writes
        self.arg_values = [v for c in writes for _, v in leaves(c["arguments"]) if v is not None]
        self.arg_strings = {str(v) for v in self.arg_values}
        # every envelope's leaves, walked once (the facts seen, the requests read, the currency)
        self.result_leaves = [list(leaves(r.get("data"))) for r in results]
        seen = [v for lv in self.result_leaves for _, v in lv if v is not None and not isinstance(v, bool)]
        self.seen_strings = {str(v).casefold() for v in seen}
        self.seen_long = [s for s in self.seen_strings if 10 < len(s) < 400]
        self.seen_days = {s[:10] for s in self.seen_strings if re.match(r"\d{4}-\d{2}-\d{2}", s)}
        self.seen_numbers = {round(float(v), 2) for v in seen if isinstance(v, int | float)}
        self.seen_numbers |= {round(float(v) / 100, 2) for v in seen if isinstance(v, int)}  # cents
        for v in seen:
            if isinstance(v, str) and re.fullmatch(r"-?\d[\d,]*(\.\d+)?", v.strip()):
                self.seen_numbers.add(round(float(v.replace(",", "")), 2))
        self.made_numbers = set()
        for m in self.made:
            with contextlib.suppress(ValueError):
                self.made_numbers.add(round(float(m.replace(",", "")), 2))
        self.arg_numbers = {round(float(v), 2) for v in self.arg_values if isinstance(v, int | float)}
        self.arg_numbers |= {round(float(v) / 100, 2) for v in self.arg_values if isinstance(v, int)}
        # what someone else's message already said (the request itself): restating it is no fact
        self.given: set[str] = set()
        prose: list[str] = []
        for c, lv in zip(calls, self.result_leaves, strict=False):
            if c["tool"].split("__", 1)[0] not in MESSAGE_SERVICES or (
                mutates is not None and mutates(c["tool"])
            ):
                continue  # a write's echo of what the work itself wrote is nobody's request
            for path, v in lv:
                if isinstance(v, str) and (_leaf(path) in PROSE or len(v.split()) >= 6):
                    self.given.update(t.casefold() for t in id_tokens(v))
                    self.given.update(m.casefold() for m in _EMAIL.findall(v))
                    self.given.update(d[:10] for d in _dates(v))
                    prose.append(v)
        for key, (name, email) in self.people.items():
            if " " in key and any(word_in(p, name) for p in prose):
                self.given.update({name.casefold(), email.casefold()})  # the person the request names
        self.rivals = self._rivals()
        self._persons: dict[tuple[str, str], dict[str, Any]] = {}
        self._rivals_text = " | ".join(self.rivals)
        self.subjects = self._subjects()
        self.covered: set[tuple[str, str]] = set()
        self.secrets = self._secrets()

    # ---- what must not be named -----------------------------------------------------------------
    def _rivals(self) -> list[str]:
        """Distinctive values of the trap candidates: ids, codes, amounts, addresses, full names."""
        out: list[str] = []
        for t in self.traps:
            vals = [*t.get("swap", {}).values(), *([t["answer"]] if t.get("answer") else [])]
            for v in vals:
                v = str(v)
                if self.distinctive(v):
                    out.append(v)
                    person = self.people.get(v.casefold())
                    if person and self.distinctive(person[0]):
                        out.append(person[0])
        return list(dict.fromkeys(out))

    def _subjects(self) -> set[str]:
        """The rivals' people (every form) whom the reference's own writes name in another role: a
        field of a record it wrote that is neither free text nor a recipient (a payee's cell, the
        employee of a claim it paid). A text may name them as it names anyone the work is about."""
        who = {self.people[r.casefold()] for r in self.rivals if r.casefold() in self.people}
        if not who:
            return set()
        out: set[str] = set()
        for service, table, key, op in changed_records(self.v0, self.v1):
            after = self.v1.table(service, table).get(key)
            if op == "remove" or not isinstance(after, dict):
                continue
            before = self.v0.table(service, table).get(key) if op == "change" else None
            from compoworld.verify.predicates import at_path, new_rows

            fmt, text_path = _log_format(key, after)
            if fmt == "csv":  # a CSV log's new lines are rows of cells, not one text (the payee's cell)
                for row in new_rows(before, after, fmt, text_path):
                    for v in row:
                        if isinstance(v, str) and not _is_prose("cell", v):
                            out.update(x for p in who if word_in(v, p[0]) or word_in(v, p[1]) for x in p)
                continue
            paths = changed_paths(before, after) if isinstance(before, dict) else _paths(after)
            for path in paths:
                v = at_path(after, path)
                top = path.split(".")[0]
                if not isinstance(v, str) or top in RECIPIENT_FIELDS or _is_prose(path, v):
                    continue
                out.update(x for p in who if word_in(v, p[0]) or word_in(v, p[1]) for x in p)
        return out

    def aside_for(self, forbid: list[str]) -> dict[str, list[str]]:
        """Which forbidden values of a free text are people it may name aside (`verify.asides`): the
        rivals' people, and apart from them those the work names in another role."""
        people = [r for r in forbid if r.casefold() in self.people]
        out = {
            "aside": [r for r in people if r not in self.subjects],
            "subjects": [r for r in people if r in self.subjects],
        }
        return {k: v for k, v in out.items() if v}

    def distinctive(self, v: str) -> bool:
        """A value that names one record: not a common word, not a lone name the target may share,
        and not something the instruction itself says."""
        s = v.strip()
        if len(s) < 4 or s.casefold() in _STOP or word_in(self.instruction, s):
            return False
        if s.isalpha():
            return False  # one word ("once", "Grace", "Acme") is shared too easily
        return not re.fullmatch(r"\d{1,3}", s)

    def _secrets(self) -> list[str]:
        """Credentials the work sets or replaces: they never belong in a message or note."""
        out = []
        for service, table, key, _op in changed_records(self.v0, self.v1):
            after = self.v1.table(service, table).get(key)
            before = self.v0.table(service, table).get(key)
            for rec, _where in ((after, "new"), (before, "old")):
                if not isinstance(rec, dict):
                    continue
                secret_record = bool(_SECRET.search(str(key)))
                for path, v in leaves(rec):
                    if not isinstance(v, str) or len(v) < 8 or " " in v.strip():
                        continue
                    if (
                        secret_record
                        and _leaf(path) in ("value", "secret", "token", "key")
                        or _SECRET.search(_leaf(path))
                    ):
                        out.append(v)
        return list(dict.fromkeys(out))

    # ---- facts ----------------------------------------------------------------------------------------
    def learnt(self, value: str) -> bool:
        v = value.casefold()
        if v in self.seen_strings or value in self.made:
            return True
        # a generated id inside a value shown (the key in a shared link's URL)
        return len(v) >= 10 and bool(re.search(r"\d", v)) and any(v in s for s in self.seen_long)

    def facts_of(self, text: str) -> list[Any]:
        """The facts of one reference text the agent had to find or work out."""
        facts: list[Any] = []
        taken: list[tuple[int, int]] = []
        for v, cur, s, e in amounts(text):
            raw = text[s:e]
            money = cur is not None or "." in raw.split()[0] if raw.split() else False
            key = round(v, 2)
            if word_in(self.instruction, raw.strip()) or any(
                abs(key - n) < 0.005 for n, _c, _s, _e in amounts(self.instruction)
            ):
                continue
            wanted = key in self.made_numbers or (
                (money or v >= 100) and (key in self.seen_numbers or key in self.arg_numbers)
            )
            if wanted:
                facts.append({"kind": "amount", "value": key, **({"currency": cur} if cur else {})})
                taken.append((s, e))
        for iso in _dates(text):
            if iso[:10] in self.given:
                continue  # the request named this day
            if not _date_in(self.instruction, iso) and self.asked_date(iso):
                facts.append({"kind": "date", "value": iso})
        for tok in id_tokens(text):
            t = tok.strip()
            if "@" in t or re.fullmatch(r"-?\d+\.\d{2}", t) or re.fullmatch(r"\+?\d[\d ()-]{8,}\d", t):
                continue  # addresses are people, amounts and phones are read above
            if re.fullmatch(r"\d{4}", t) and 1990 <= int(t) <= 2100:
                continue  # a year
            if re.fullmatch(r"\d+", t) and any(
                abs(float(t) - f["value"]) < 0.005 for f in facts if f.get("kind") == "amount"
            ):
                continue  # already read as an amount
            if word_in(self.instruction, t) or not (self.learnt(t) or t in self.made):
                continue
            if t.casefold() in self.given and t not in self.made:
                continue
            facts.append({"kind": "code", "value": t})
        for url in re.findall(r"https?://[^\s\"'<>]+", text):
            url = url.rstrip(".,;)")
            if self.learnt(url) and not word_in(self.instruction, url):
                facts.append({"kind": "code", "value": url})  # a link the work was given (a shared link)
        for person in self._people_in(text):
            facts.append(person)
        for m in self.made:
            numeric = re.fullmatch(r"-?\d[\d,]*(\.\d+)?", m)
            if len(m) >= 3 and not numeric and word_in(text, m) and not any(_fact_is(f, m) for f in facts):
                facts.append({"kind": "code", "value": m})
        return _dedupe(facts)

    def _people_in(self, text: str) -> list[dict[str, Any]]:
        out = []
        for email in _EMAIL.findall(text):
            p = self.people.get(email.casefold())
            if p and word_in(text, p[0]):
                # named and addressed: the address is the point ("Hannah Costa's email is ..."), exact
                out.append({"kind": "person", "forms": [email], "named": p[1]})
                continue
            out.append(self._person(p) if p else {"kind": "person", "forms": [email]})
        for key, p in self.people.items():
            if "@" in key or " " not in key:
                continue
            if word_in(text, p[0]) and not any(p[1] in f.get("forms", []) + [f.get("named")] for f in out):
                out.append(self._person(p))
        keep = [
            f
            for f in out
            if not any(word_in(self.instruction, x) or x.casefold() in self.given for x in f["forms"])
            and any(self.learnt(x) for x in f["forms"])
        ]
        return [{k: v for k, v in f.items() if k != "named"} for f in keep]

    def _person(self, p: tuple[str, str]) -> dict[str, Any]:
        known = self._persons.get(p)  # the same person is asked for by many checks (rivals are fixed)
        if known is None:
            known = self._persons[p] = self._person_forms(p)
        return {"kind": "person", "forms": list(known["forms"])}

    def _person_forms(self, p: tuple[str, str]) -> dict[str, Any]:
        name, email = p
        forms = [email, name]
        first, last = name.split()[0], name.split()[-1]
        if self.firsts[first.casefold()] == 1 and not self._a_rival_says(first):
            forms.append(first)  # a first name names them where nobody else in the company has it
        if self.firsts["~" + last.casefold()] == 1 and not self._a_rival_says(last):
            forms.append(last)  # so does a last name ("Ms Smyth")
        forms += [h for h in self.handles.get(email.casefold(), []) if h not in forms]
        return {"kind": "person", "forms": forms}

    def _a_rival_says(self, word: str) -> bool:
        """`any(word_in(r, word) for r in self.rivals)` for one word (a first or last name), in one
        search: " | " joins the rivals, and no word spans it."""
        return word_in(self._rivals_text, word)

    def _first_named(self, first: str) -> tuple[str, str] | None:
        who = {p for k, p in self.people.items() if "@" not in k and p[0].split()[0] == first}
        if len(who) > 1:
            who = {p for p in who if any(p[0] in a for a in self.arg_strings)}
        return next(iter(who)) if len(who) == 1 else None

    def containing(self, v: str) -> list[str]:
        """Longer names of the work's own (in the instruction or what the reference wrote) that
        contain a decoy value as words: "Acme Retail Group" where the decoy is "Acme Retail"."""
        if not re.search(r"[A-Za-z]", v) or len(v) < 3:
            return []
        # only capitalised words extend a name ("Acme Retail Group"), never "to" or "the"
        rx = None  # compiled only where a text holds the value (most decoy values are in none)
        out = []
        for text in [self.instruction, *self.arg_strings]:
            if not isinstance(text, str) or v.casefold() not in text.casefold():
                continue
            if rx is None:
                rx = re.compile(
                    r"(?:[A-Z][\w&'.-]*\s+){0,3}(?i:" + re.escape(v) + r")(?:\s+[A-Z0-9][\w&'.-]*){0,3}"
                )
            for m in rx.finditer(text):
                phrase = m.group(0).strip()
                if phrase.casefold() != v.casefold() and len(phrase) <= 80:
                    out.append(phrase)
        return sorted(set(out))[:8]

    def mentions(self, x: Any) -> list[str]:
        """The other forms that name the person a full name names ([] for anything else): their
        address, a first or last name nobody else has, their chat handle or @-mention."""
        p = self.people.get(x.strip().casefold()) if isinstance(x, str) and " " in x.strip() else None
        if not p or p[0].casefold() != x.strip().casefold():
            return []
        return [f for f in self._person(p)["forms"] if f.casefold() != x.strip().casefold()]

    def mentioned(self, x: Any) -> Any:
        """A full name a guarded message may carry, as the person named by it or by a mention."""
        more = self.mentions(x)
        return {"kind": "person", "forms": [x, *more]} if more else x

    def person_fact(self, x: Any, names: bool = False) -> Any:
        """An address a text must carry, as the person: their name passes too (the docs promise it).
        With `names`, a full name a message must carry is the person too: their address, a first or
        last name nobody else in the company has, their chat handle or @-mention."""
        if names and isinstance(x, str) and " " in x.strip() and "@" not in x:
            p = self.people.get(x.strip().casefold())
            if p and p[0].casefold() == x.strip().casefold():
                return self._person(p)
        if names and isinstance(x, str) and re.fullmatch(r"[A-Z][a-z'-]+", x.strip()):
            # a first name the family asks for: the person the work means (the one it writes about,
            # where others share it), who may be named or mentioned in any of their forms too
            p = self._first_named(x.strip())
            if p:
                fact = self._person(p)
                return {
                    **fact,
                    "forms": [*fact["forms"], *([x.strip()] if x.strip() not in fact["forms"] else [])],
                }
        if isinstance(x, str) and _EMAIL.fullmatch(x.strip()):
            p = self.people.get(x.strip().casefold())
            # where the reference writes the name beside the address, the address is what was asked
            # for ("the email on Hannah Costa is hannah.costa@..."): it stays exact
            both = p and any(
                p[0].casefold() in a.casefold() and p[1].casefold() in a.casefold() for a in self.arg_strings
            )
            if p and not both:
                return {"kind": "person", "forms": [p[1], p[0]]}
        return x

    def person_matcher(self, m: Any) -> Any:
        if isinstance(m, dict) and len(m) == 1:
            op, arg = next(iter(m.items()))
            if op == "contains":
                return {op: self.person_fact(arg)}
            if op == "contains_all" and isinstance(arg, list):
                return {op: [self.person_fact(x) for x in arg]}
        return m

    def substance(self, text: str) -> list[str]:
        """Words that say what a fact-less text is about; "Done." carries none of them."""
        # lower-case content words: names (a greeting, the customer) say nothing of what was done
        names = {w.casefold() for k in self.people if "@" not in k for w in k.split()}
        words = [
            w
            for w in re.findall(
                r"(?<![\w<&/])[a-z][a-z-]{3,}(?![\w>=])", re.sub(r"<[^>]*>|https?://\S+", " ", text)
            )
            if w not in _STOP and w not in names
        ]
        return list(dict.fromkeys(w.casefold() for w in words))[:16]

    def forbid_for(self, text: str) -> list[str]:
        out = [r for r in self.rivals if not names_value(text, r)]
        out += [s for s in self.secrets if s not in text]
        return list(dict.fromkeys(out))

    # ---- the checks -----------------------------------------------------------------------------------
    def authored(self, v: Any) -> bool:
        """The reference's arguments put this value here (not the service: an id, a timestamp)."""
        s = str(v)
        if s in self.arg_strings:
            return True
        if isinstance(v, str) and len(s) >= 12:
            return any(len(a) >= 12 and (a in s or s in a) for a in self.arg_strings)
        if isinstance(v, int | float) and not isinstance(v, bool):
            return round(float(v), 2) in {
                round(float(x), 2) for x in self.arg_values if isinstance(x, int | float)
            }
        return False

    def content_checks(self) -> list[dict[str, Any]]:
        specs: Counter = Counter()
        items: dict[str, dict[str, Any]] = {}
        for service, table, key, op in changed_records(self.v0, self.v1):
            if op == "remove":
                continue
            before = self.v0.table(service, table).get(key) if op == "change" else None
            after = self.v1.table(service, table).get(key)
            if not isinstance(after, dict):
                continue
            paths = changed_paths(before, after) if isinstance(before, dict) else _paths(after)
            row = service in ROW_SERVICES
            cells: list[tuple[str, Any]] = []
            labels: list[tuple[str, str]] = []
            for path in paths:
                from compoworld.verify.predicates import at_path

                v = at_path(after, path)
                leaf = _leaf(path)
                if leaf in TAGS and isinstance(v, list):
                    new = [x for x in v if isinstance(x, str) and x not in (at_path(before, path) or [])]
                    if new and all(self.authored(x) for x in new):
                        self._add(items, specs, service, table, key, op, [path], list(new), [], [], after)
                    continue
                if isinstance(v, list) and all(isinstance(x, dict) for x in v) and leaf in PROSE:
                    text = _list_text(v, at_path(before, path) or [])  # comments appended to a record
                    if text.strip():
                        facts = self.facts_of(text)
                        sub = [] if facts else self.substance(text)
                        forbid = self.forbid_for(text)
                        self._add(
                            items,
                            specs,
                            service,
                            table,
                            key,
                            op,
                            [path],
                            facts,
                            sub,
                            forbid,
                            after,
                            self.aside_for(forbid),
                        )
                    continue
                if (
                    not isinstance(v, str | int | float)
                    or isinstance(v, bool)
                    or v == ""
                    or _VOLATILE.search(leaf)
                ):
                    continue
                if not self.authored(v):
                    continue
                if isinstance(v, str) and _is_prose(path, v) and not row:
                    read = [path]
                    if leaf in ("body", "text") and "." not in path:
                        read += [h for h in _HTML if h in after]  # the same text may be sent as HTML
                    facts = self.facts_of(v)
                    sub = [] if facts or (service, leaf) in self.covered else self.substance(v)
                    forbid = self.forbid_for(v)
                    if facts or sub or forbid:
                        aside = self.aside_for(forbid)
                        self._add(
                            items, specs, service, table, key, op, read, facts, sub, forbid, after, aside
                        )
                elif row:
                    cells.append((path, v))
                elif isinstance(v, str) and _leaf(path) in LABELS:
                    labels.append((path, v))
                elif self._scalar_fact(v):
                    # a date or an amount the agent found or worked out, written as a field of its own
                    self._add(items, specs, service, table, key, op, [path], [_cell_fact(v)], [], [], after)
            if labels:
                text = " ".join(v for _, v in labels)
                forbid = self.forbid_for(text)
                # a title says what it is about: a word or name of the reference's own ("Done." does not)
                words = [w for w in re.findall(r"[A-Za-z][A-Za-z-]{2,}", text) if w.casefold() not in _STOP]
                sub = list(dict.fromkeys(w.casefold() for w in words))[:16]
                if forbid or sub:
                    self._add(
                        items, specs, service, table, key, op, [p for p, _ in labels], [], sub, forbid, after
                    )
            logged = self._rows_check(service, table, key, before, after)
            if logged:
                items[f"rows:{service}:{table}:{key}"] = logged
            if cells and logged and logged["check"]["format"] == "cells":
                # the rows check reads each row whole; what stays here is that no cell names a rival
                text = " ".join(str(v) for _, v in cells)
                forbid = self.forbid_for(text)
                if forbid:
                    self._add(
                        items, specs, service, table, key, op, [p for p, _ in cells], [], [], forbid, after
                    )
            elif cells:
                facts = [_cell_fact(v) for _, v in cells]
                text = " ".join(str(v) for _, v in cells)
                self._add(
                    items,
                    specs,
                    service,
                    table,
                    key,
                    op,
                    [p for p, _ in cells],
                    facts,
                    [],
                    self.forbid_for(text),
                    after,
                )
        out = []
        carried: dict[tuple[str, str], set[float]] = {}  # what the goals' texts carry, per table
        for item in items.values():
            c = item["check"]
            for f in c.get("facts") or []:
                x = f.get("value") if isinstance(f, dict) and f.get("kind") == "amount" else f
                v = num_of(x) if is_numeric(x) else None
                if v is not None:
                    carried.setdefault((c["service"], c["table"]), set()).add(round(v, 2))
        for sig, item in items.items():
            if item["check"]["key"] is None and item["kind"] == "guard":
                item["check"]["every"] = True  # no record may name a rival: not "N clean ones"
                worked = sorted(carried.get((item["check"]["service"], item["check"]["table"]), ()))
                if worked and item["check"].get("forbid"):
                    item["check"]["worked"] = worked
            elif item["check"]["key"] is None:
                item["check"]["count"] = specs[sig]
            out.append(item)
        return out

    def _currency(self) -> str | None:
        cur = getattr(self, "currency", None)  # set by `derive` from what the tools showed
        return cur() if callable(cur) else None

    def _rows_check(
        self, service: str, table: str, key: Any, before: Any, after: dict[str, Any]
    ) -> dict[str, Any] | None:
        """A log the work appends to (a sheet's rows, a CSV file's lines) is read row by row: each row
        the reference added must be there whole, once, and no other row (a wrong or mixed-up row fails;
        another order or cell format passes)."""
        from compoworld.verify.predicates import new_rows

        fmt, path = _log_format(key, after)
        if fmt is None:
            return None
        rows = new_rows(before, after, fmt, path)
        if not rows:
            return None
        where = f"{service}.{table}/{key}"
        return {
            "description": f"{where} gains exactly these {len(rows)} row(s), each whole: "
            + "; ".join(", ".join(map(str, r)) for r in rows[:3])[:200],
            "weight": 1.0,
            "kind": "goal",
            "check": {
                "predicate": "rows_written",
                "service": service,
                "table": table,
                "key": str(key),
                "rows": [[c if isinstance(c, str | int | float) else str(c) for c in r] for r in rows],
                "format": fmt,
                **({"path": path} if fmt == "csv" else {}),
                **({"currency": cur} if (cur := self._currency()) not in (None, "USD") else {}),
            },
        }

    def _add(
        self,
        items: dict[str, dict[str, Any]],
        specs: Counter,
        service: str,
        table: str,
        key: Any,
        op: str,
        paths: list[str],
        facts: list[Any],
        substance: list[str],
        forbid: list[str],
        after: dict[str, Any],
        aside: dict[str, list[str]] | None = None,  # free text: the people it may name aside
    ) -> None:
        check: dict[str, Any] = {
            "predicate": "text_carries",
            "service": service,
            "table": table,
            "paths": paths,
        }
        if op == "change":
            check["key"] = str(key)
        else:
            check["key"] = None
            where = self._anchors(after)
            if where:
                check["where"] = where
        check |= {"facts": facts, "substance": substance, "forbid": forbid, **(aside or {})}
        import json

        sig = json.dumps(check, sort_keys=True, default=str)
        specs[sig] += 1
        if sig in items:
            return
        what = "the text" if not facts else "the text carries " + ", ".join(_label(f) for f in facts[:4])
        kind = "goal" if facts or substance else "guard"
        desc = f"{service}.{table} {'/'.join(_leaf(p) for p in paths[:3])}: {what}"
        if forbid and kind == "guard":
            desc = f"{service}.{table} {_leaf(paths[0])} names no rival value or secret"
        items[sig] = {"description": desc, "weight": 1.0, "kind": kind, "check": check}

    def asked_date(self, iso: str) -> bool:
        """A date the agent found (shown by a tool) or worked out, or the day the request names
        ("today's date", "tomorrow"); a due date the reference picked itself is not asked for."""
        day = iso[:10]
        clock = str(self.s0.get("clock", ""))
        if near_today(clock, day) and day not in self.made:  # records touched lately show these days
            return relative_day(self.instruction, clock, day)
        if day in self.made or iso in self.made or any(day in x for x in self.seen_days):
            return True
        return relative_day(self.instruction, self.s0.get("clock", ""), day)

    def _scalar_fact(self, v: Any) -> bool:
        s = str(v).strip()
        if isinstance(v, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?", s):
            return not _date_in(self.instruction, s) and self.asked_date(s)
        if isinstance(v, float) or (isinstance(v, str) and re.fullmatch(r"-?\d[\d,]*\.\d{2}", s)):
            n = round(float(s.replace(",", "")), 2)
            return n in self.made_numbers or n in self.seen_numbers
        return False

    def _anchors(self, rec: dict[str, Any]) -> dict[str, Any]:
        """Identifying fields of a created record the reference set (the ticket it replies on)."""
        out = {}
        for k, v in rec.items():
            if isinstance(v, bool) or not isinstance(v, str | int) or k == "id" or "thread" in k.casefold():
                continue  # a thread is how a reply is sent, not what it is about (a new email is fine too)
            if re.search(r"(^|_)id$|Id$", k) and self.authored(v) and self.learnt(str(v)):
                out[k] = v
        return out

    def state_guards(self, declared: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The states of the records the work touches stay as the work leaves them: a ticket it only
        replies on stays open ("leave the ticket open"), a deal it only notes keeps its stage. A state
        a family's own check already asks for is left to that check."""
        import json

        said = [json.dumps(i.get("check", {}), default=str) for i in declared]
        out = []
        for service, table, key, op in changed_records(self.v0, self.v1):
            if op != "change":
                continue
            before, after = self.v0.table(service, table).get(key), self.v1.table(service, table).get(key)
            if not isinstance(before, dict) or not isinstance(after, dict):
                continue
            for path, was in leaves(before):
                leaf = _leaf(path)
                if leaf.casefold() not in STATE_FIELDS or path.count(".") > 1 or isinstance(was, dict | list):
                    continue
                from compoworld.verify.predicates import at_path

                now = at_path(after, path)
                if any(str(key) in c and f'"{leaf}' in c for c in said):
                    continue  # the family checks this state itself
                values = list(dict.fromkeys([was, now]))
                left = " or ".join(repr(v) for v in values)
                out.append(
                    {
                        "description": f"{service}.{table}/{key} {path} is left as the work leaves it ({left})",
                        "weight": 1.0,
                        "kind": "guard",
                        "check": {
                            "predicate": "field_kept",
                            "service": service,
                            "table": table,
                            "key": str(key),
                            "field": path,
                            "values": values,
                        },
                    }
                )
        return out

    def recipient_guard(self) -> dict[str, Any] | None:
        people: list[list[str]] = []
        sends = False
        for service, table, key, op in changed_records(self.v0, self.v1):
            rec = self.v1.table(service, table).get(key)
            if op == "remove" or not isinstance(rec, dict):
                continue
            sends = sends or any(f in rec for f in RECIPIENT_FIELDS)
            for f in RECIPIENT_FIELDS:
                for v in _list(rec.get(f)):
                    addr = v.get("email") or v.get("address") if isinstance(v, dict) else v
                    if isinstance(addr, dict):
                        addr = addr.get("address")
                    if not isinstance(addr, str) or not addr:
                        continue
                    m = re.search(r"<([^>]+)>", addr)
                    base = m.group(1) if m else addr
                    p = self.people.get(base.casefold())
                    forms = [addr, base, *(p if p else ())]
                    if not any(base in x for x in people):
                        people.append(list(dict.fromkeys(forms)))
        if not sends:
            return None  # the work sends nothing: nothing to copy anyone on
        return {
            "description": "every message goes only to the people the work needs (to, cc and bcc)",
            "weight": 1.0,
            "kind": "guard",
            "check": {"predicate": "recipients_only", "people": people},
        }


# fields that hold a record's state: what "leave it open" or "keep it as it is" is about
STATE_FIELDS = {
    "status",
    "state",
    "stage",
    "dealstage",
    "pipeline_stage",
    "hs_pipeline_stage",
    "lifecyclestage",
}
STATE_FIELDS |= {
    "priority",
    "closed",
    "is_closed",
    "archived",
    "is_archived",
    "resolved",
    "done",
    "completed",
}
STATE_FIELDS |= {"locked", "merged", "trashed", "subscribed", "enabled", "active", "paused", "visibility"}

# where a service keeps the people who can be mentioned (a chat's users): their handles and ids
_HANDLE_FIELDS = ("name", "username", "handle", "display_name", "login", "screen_name", "user_name")


def _handles(s0: dict[str, Any]) -> dict[str, list[str]]:
    """Address -> the forms a chat names a user by: "@handle", the handle where it is no plain word,
    "<@ID>" and "@ID" (a mention is by id). Each names one user, so each is unambiguous."""
    out: dict[str, list[str]] = {}
    for service in (s0.get("services") or {}).values():
        if not isinstance(service, dict):
            continue
        for table in ("users", "members", "people"):
            recs = service.get(table)
            if not isinstance(recs, dict):
                continue
            for r in recs.values():
                email = r.get("email") if isinstance(r, dict) else None
                if not isinstance(email, str) or "@" not in email:
                    continue
                forms = out.setdefault(email.casefold(), [])
                for f in _HANDLE_FIELDS:
                    h = r.get(f)
                    if isinstance(h, str) and h.strip() and " " not in h.strip() and "@" not in h:
                        forms.append("@" + h.strip())
                        if re.search(r"[._\d]", h):
                            forms.append(h.strip())
                uid = r.get("id")
                if isinstance(uid, str) and re.fullmatch(r"(?=.*\d)(?=.*[A-Za-z])[A-Za-z0-9_]{4,}", uid):
                    forms += [f"<@{uid}>", f"@{uid}"]
    return {k: list(dict.fromkeys(v)) for k, v in out.items()}


def _paths(rec: Any, prefix: str = "") -> list[str]:
    """Dotted paths of a new record's values: dicts walked, lists whole (tags, comments)."""
    if isinstance(rec, dict):
        return [p for k, v in rec.items() for p in _paths(v, f"{prefix}{k}.")]
    return [prefix[:-1]] if prefix else []


def relative_day(instruction: str, clock: str, day: str) -> bool:
    """The instruction names this day relative to the clock: today, tomorrow or yesterday."""
    from datetime import date

    try:
        today = date.fromisoformat(clock[:10])
        d = date.fromisoformat(day)
    except ValueError:
        return False
    text = instruction.casefold().replace("’", "'")
    words = {
        0: ("today's date", "dated today", "current date", "date of today", "for today", "due today"),
        1: ("tomorrow",),
        -1: ("yesterday",),
    }
    return any(w in text for w in words.get((d - today).days, ()))


def near_today(clock: str, day: str) -> bool:
    from datetime import date

    try:
        return abs((date.fromisoformat(day) - date.fromisoformat(clock[:10])).days) <= 1
    except ValueError:
        return False


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else [v] if v is not None else []


def _list_text(new: list[Any], old: list[Any]) -> str:
    parts = []
    for item in new:
        if item in old:
            continue
        for _, v in leaves(item):
            if isinstance(v, str) and len(v.split()) >= 2:
                parts.append(v)
    return " ".join(parts)


def _cell_fact(v: Any) -> Any:
    if isinstance(v, int | float) and not isinstance(v, bool):
        return {"kind": "amount", "value": float(v)}
    s = str(v).strip()
    w = parse_when(s) if re.match(r"\d{4}-\d{2}-\d{2}", s) else None
    if w is not None:
        return {"kind": "date", "value": s}
    if re.fullmatch(r"-?\d[\d,]*(\.\d+)?", s):
        return {"kind": "amount", "value": float(s.replace(",", ""))}
    if re.fullmatch(r"[A-Za-z0-9_:./#-]+", s) and "@" not in s:
        return {
            "kind": "exact",
            "value": s,
        }  # a single-select option, a status, a key: as the system spells it
    return s


def _dates(text: str) -> list[str]:
    from compoworld.verify.forms import _ISO, _MDY, _WORDY

    out = []
    for rx in (_ISO, _WORDY, _MDY):
        for m in rx.finditer(text):
            w = parse_when(text[m.start() : m.end() + 16]) or parse_when(m.group())
            if w is None:
                continue
            out.append(w.strftime("%Y-%m-%dT%H:%M:%SZ") if hasattr(w, "hour") else w.isoformat())
    return list(dict.fromkeys(out))


def _date_in(text: str, iso: str) -> bool:
    from compoworld.verify.forms import contains_when

    return contains_when(text, iso)


def _fact_is(f: Any, v: str) -> bool:
    return isinstance(f, dict) and (str(f.get("value")) == v or v in f.get("forms", []))


def _label(f: Any) -> str:
    if isinstance(f, dict):
        return str(f.get("value") if f.get("value") is not None else (f.get("forms") or ["?"])[-1])
    return str(f)


def _dedupe(facts: list[Any]) -> list[Any]:
    out, seen = [], set()
    for f in facts:
        k = repr(sorted(f.items())) if isinstance(f, dict) else repr(f)
        if k not in seen:
            seen.add(k)
            out.append(f)
    # a date and the instant on the same day: the instant says more
    days = {
        str(f["value"])[:10]
        for f in out
        if isinstance(f, dict) and f.get("kind") == "date" and "T" in str(f["value"])
    }
    return [
        f
        for f in out
        if not (
            isinstance(f, dict)
            and f.get("kind") == "date"
            and len(str(f["value"])) == 10
            and f["value"] in days
        )
    ]


# ---- refining what the family declared -------------------------------------------------------------
def refine(items: list[dict[str, Any]], d: Derivation) -> list[dict[str, Any]]:
    """Drop decoy values that name nothing distinctive (the target shares them, or they are common
    words), and give asked quantities their currency and unit."""
    out = []
    for item in items:
        check = dict(item["check"])
        p = check.get("predicate")
        if p == "value_not_written" and not _guardable(str(check.get("value", "")), d):
            continue
        if p == "value_not_written":
            shared = d.containing(str(check["value"]))
            if shared:
                check["unless_in"] = shared
            if str(check["value"]).strip().casefold() in d.people:
                check["person"] = True  # a sentence may name them aside ("X is no longer with us")
        if p in ("message_sent", "answer_matches") and check.get("exclude"):
            facts = [str(x) for x in check.get("contains", [])] + [str(check.get("value", ""))]
            check["exclude"] = [
                x
                for x in check["exclude"]
                if _guardable(str(x), d, words_ok=True) and not any(word_in(f, str(x)) for f in facts if f)
            ]
        if p in ("message_sent", "message_not_sent") and check.get("exclude"):
            # a rival person is named in their other forms too (a handle or @-mention names one user)
            check["exclude"] = list(dict.fromkeys(y for x in check["exclude"] for y in (x, *d.mentions(x))))
        if p == "message_sent" and check.get("contains"):
            check["contains"] = [d.person_fact(x, names=True) for x in check["contains"]]
        if p == "message_not_sent" and check.get("contains"):
            # a guard's person is named in their other forms too (a shared first name names nobody)
            check["contains"] = [d.mentioned(x) for x in check["contains"]]
        if p in ("record_exists", "record_absent") and check.get("where"):
            check["where"] = {k: d.person_matcher(m) for k, m in check["where"].items()}
        if p == "answer_matches" and check.get("kind") == "number":
            cur = d.currency()
            if cur and "." in str(check.get("value", "")):
                check.setdefault("currency", cur)
            unit = _unit_asked(d.instruction, item.get("description", ""))
            if unit:
                check.setdefault("unit", unit)
        out.append({**item, "check": check})
    return out


def _guardable(v: str, d: Derivation, words_ok: bool = False) -> bool:
    """A rival value worth guarding: not a common word and not what the instruction itself names;
    a lone word guards only where words are the values (a language, a tier)."""
    s = v.strip()
    if not s or s.casefold() in _STOP or word_in(d.instruction, s):
        return False
    return not (s.isalpha() and not words_ok)


def _currency_of(
    results: list[dict[str, Any]], walked: list[list[tuple[str, Any]]] | None = None
) -> str | None:
    """The currency the envelopes show most (`walked`: their leaves, if the caller has them)."""
    c: Counter = Counter()
    for lv in walked if walked is not None else (leaves(r.get("data")) for r in results):
        for path, v in lv:
            key = _leaf(path).casefold()
            if key in ("currency", "currency_code", "currencycode") and isinstance(v, str) and len(v) == 3:
                c[v.upper()] += 1
    return c.most_common(1)[0][0] if c else None


def _unit_asked(instruction: str, description: str) -> str | None:
    text = f"{instruction} {description}".casefold()
    m = re.search(r"how many (minutes|hours|days|weeks|months)|in (minutes|hours|days|weeks)\b", text)
    if m:
        u = m.group(1) or m.group(2)
        return u[:-1]
    if re.search(r"\bhow many\b|\bnumber of\b|\bcount of\b", description.casefold()):
        return "count"
    return None


def _covered(declared: list[dict[str, Any]]) -> set[tuple[str, str]]:
    """(service, text field) that a family's own goal already reads for facts: no substance needed."""
    from compoworld.verify.predicates import MESSAGE_TABLES

    out = set()
    for item in declared:
        c = item.get("check", {})
        if c.get("predicate") == "message_sent" and c.get("contains") and c.get("service") in MESSAGE_TABLES:
            out.add((c["service"], MESSAGE_TABLES[c["service"]][2]))
        if c.get("predicate") == "record_exists":
            for path, m in (c.get("where") or {}).items():
                if isinstance(m, dict) and ({"contains", "contains_all"} & set(m)):
                    out.add((c["service"], _leaf(path)))
    return out


# free-form objects that hold supplementary information (a dispute's evidence, metadata), not the
# record's own data: a field of them the task leaves open may be filled
SUPPLEMENTS = {"evidence", "metadata", "details", "extra", "notes"}


def optional_fields(env: Any, calls: list[dict[str, Any]], service: str) -> list[str]:
    """Documented fields of the service's write tools the reference left empty: free-form objects it
    wrote into (a dispute's evidence, metadata) and prose parameters it did not pass."""
    out: list[str] = []
    for c in calls:
        if c["tool"].split("__", 1)[0] != service:
            continue
        spec = env.tool_spec(c["tool"])
        if spec is None or not spec.mutates:
            continue
        props = (spec.input_schema or {}).get("properties", {})
        for name, sch in props.items():
            if not isinstance(sch, dict):
                continue
            if name in SUPPLEMENTS and sch.get("type") == "object":
                if name in c["arguments"]:
                    out.append(name)
                    out.extend(f"{name}.{k}" for k in sch.get("properties", {}))
            elif name not in c["arguments"] and (name in PROSE or name in ("description", "notes", "note")):
                out.append(name)
    return list(dict.fromkeys(out))


def derive(
    env: Any,
    s0: dict[str, Any],
    s1: dict[str, Any],
    calls: list[dict[str, Any]],
    results: list[dict[str, Any]],
    instruction: str,
    made: list[str],
    traps: list[dict[str, Any]],
    people: Iterable[tuple[str, str]],
    declared: list[dict[str, Any]],
    collateral: dict[str, Any],
    answer: str | None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(the declared checks refined plus the derived ones, the collateral guard refined), each
    derived check kept only where the reference passes it and, for a goal, s0 fails it."""
    from compoworld.verify.verifier import verify_checks

    def mutates(tool: str) -> bool:
        spec = env.tool_spec(tool)
        return bool(spec and spec.mutates)

    d = Derivation(s0, s1, calls, results, instruction, made, traps, people, mutates)
    # what the tools showed, read once (every log's rows check asks it)
    d.currency = cache(lambda: _currency_of(results, d.result_leaves) or "USD")  # type: ignore[method-assign]
    refined = refine(declared, d)
    d.covered = _covered(declared)
    derived = d.content_checks()
    guard = d.recipient_guard()
    if guard:
        derived.append(guard)
    derived += d.state_guards(declared)
    # each check's verdict is its own (a pure function of s0, the state and the answer), so all are
    # verified in one pass per state, the views (and what they decoded and paired) shared
    ref = verify_checks([{"id": "d", **item} for item in derived], s0, s1, answer, explain=False)
    # never against the reference
    held = [item for item, r in zip(derived, ref.checks, strict=True) if r.passed]
    goals = [item for item in held if item["kind"] == "goal"]
    at_s0 = verify_checks([{"id": "d", **item} for item in goals], s0, s0, None, explain=False)
    done = {id(item) for item, r in zip(goals, at_s0.checks, strict=True) if r.passed}
    keep = [item for item in held if id(item) not in done]  # s0 already has it: no progress to credit
    col = dict(collateral)
    check = dict(col["check"])
    allow = []
    for a in check.get("allow", []):
        a = dict(a)
        if a.get("fields") is not None:
            opt = [o for o in optional_fields(env, calls, a["service"]) if o not in a["fields"]]
            if opt:
                a["optional"] = opt
        allow.append(a)
    check["allow"] = allow
    if any(a.get("optional") for a in allow) and d.rivals:
        check["forbid"] = d.rivals
    if check.get("creates"):
        # every value of a trap candidate, short ones too: a post naming one is no part of a message
        # split in several (a spray's second post), so only a clean split counts once
        # (what the reference's own writes name is the work's, not a rival's)
        vals = [str(v) for t in traps for v in [*t.get("swap", {}).values(), t.get("answer")] if v]
        names = [d.people[v.casefold()][0] for v in vals if v.casefold() in d.people]
        wrote = " ".join(
            v for c in calls if mutates(c["tool"]) for _p, v in leaves(c["arguments"]) if isinstance(v, str)
        )
        check["rivals"] = sorted(
            {v for v in vals + names if len(v.strip()) >= 2 and not names_value(wrote, v)}
        )
    col["check"] = check
    return refined + keep, col
