"""Facts matched by meaning: what a careful reader takes as the same amount, date, person or verb.

A text *carries* a fact when some span of it means the fact's value:
- numbers and money, in any notation and with their currency ("$12,000.00" == "12000.00" ==
  "12,000 USD"); a different currency is a different amount;
- dates and instants in any common written form and zone (through `forms`);
- people by full name or address (a first name alone only where the task says it is unique);
- a required verb or state through a small synonym set ("rotated" / "replaced" / "regenerated",
  "cancel" / "call off", "enable" / "turn on", "waitlist" / "waiting list"), inflections included.

Values whose case matters to the system (enum values, keys, flags) are compared exactly by the
predicates; here only free text is read.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from compoworld.verify.forms import contains_phone, contains_when, norm_text

# ---- synonyms -----------------------------------------------------------------------------------
# Each group: phrases a person would accept for one another when a text must say the verb or state.
SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = (
    ("rotate", "replace", "regenerate", "reissue", "reset", "roll", "renew", "new key"),
    ("cancel", "call off", "scrap", "scrub"),
    ("enable", "turn on", "switch on", "activate", "grant access", "give access"),
    ("disable", "turn off", "switch off", "deactivate", "revoke"),
    ("waitlist", "waiting list", "wait list", "wait-list", "queue"),
    ("approve", "accept", "grant", "sign off", "green-light", "greenlight", "okay"),
    ("deny", "decline", "reject", "refuse", "turn down"),
    ("refund", "reimburse", "credit back", "pay back", "money back"),
    ("escalate", "raise", "bump up", "prioritise", "prioritize"),
    ("reschedule", "rebook", "move", "push"),
    ("postpone", "delay", "push back", "defer"),
    ("close", "resolve", "wrap up"),
    ("unsubscribe", "opt out", "take off", "remove from"),
    ("remove", "take off", "delete", "drop"),
    ("assign", "hand over", "reassign", "route", "give"),
    ("pause", "suspend", "put on hold", "hold"),
    ("resume", "restart", "unpause", "reactivate"),
    ("ship", "dispatch", "send out"),
    ("overdue", "past due", "late", "outstanding"),
    ("paid", "settle", "pay"),
    ("confirm", "verify", "double-check"),
    ("flag", "mark"),
    ("book", "schedule", "set up", "arrange"),
    ("invite", "add"),
    ("urgent", "critical", "high priority", "top priority"),
    ("churn", "lost", "leave"),
    ("deadline", "due date", "due"),
    # an access review's reasons, as a careful colleague words them (from play: "revoked for inactivity")
    ("inactive", "inactivity", "idle", "unused", "not used"),
    ("moved", "transferred", "changed team", "changed teams", "changed department", "moved team"),
)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A crude English stem, enough to join inflections: cancelled/cancelling/cancels -> cancel."""
    w = word.casefold()
    if len(w) > 4 and w.endswith(("ied", "ies")):
        return w[:-3] + "y"  # denied, denies -> deny
    for suf in ("ation", "ing", "ed", "es", "s", "e"):
        if len(w) > len(suf) + 2 and w.endswith(suf):
            w = w[: -len(suf)]
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiou":
        w = w[:-1]  # cancell -> cancel, stopp -> stop
    return w


def _stems(text: str) -> list[str]:
    return [stem(w) for w in re.findall(r"[a-z0-9]+", norm_text(text).replace("-", " "))]


@lru_cache(maxsize=4096)
def _phrase_stems(phrase: str) -> tuple[str, ...]:
    return tuple(_stems(phrase))


def _phrase_in(words: list[str], phrase: str) -> bool:
    p = list(_phrase_stems(phrase))
    n = len(p)
    return n > 0 and any(words[i : i + n] == p for i in range(len(words) - n + 1))


@lru_cache(maxsize=4096)
def _synonyms(phrase: str) -> tuple[str, ...]:
    p = _phrase_stems(phrase)
    out = [phrase]
    for group in SYNONYM_GROUPS:
        if any(_phrase_stems(g) == p for g in group):
            out.extend(g for g in group if g not in out)
    return tuple(out)


def synonyms(phrase: str) -> list[str]:
    """The phrase and every phrase sharing a synonym group with it (by stem)."""
    return list(_synonyms(phrase))


def says(text: str, phrase: str) -> bool:
    """The text says the phrase or a synonym of it, in any inflection, as whole words."""
    words = _stems(text)
    return any(_phrase_in(words, s) for s in synonyms(phrase))


# ---- numbers and money --------------------------------------------------------------------------
_SYMBOL = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR"}
_CODES = {"usd", "eur", "gbp", "cad", "aud", "jpy", "chf", "inr", "sek", "nok", "dkk", "sgd", "nzd", "mxn"}
_WORDS = {
    "dollar": "USD",
    "dollars": "USD",
    "euro": "EUR",
    "euros": "EUR",
    "pound": "GBP",
    "pounds": "GBP",
    "yen": "JPY",
}
_AMOUNT = re.compile(
    r"(?P<pre>(?:[A-Z]{3}|US)?\s?[$€£¥₹]|\b[A-Za-z]{3}\s)?\s*"
    r"(?<![\w.#/:-])(?P<num>-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?)(?![\w/-]|:\d|\.\d)"
    r"(?P<k>\s?[kK]\b)?"
    r"(?:\s?(?P<post>[A-Za-z]{3,7}\b|%))?"
)


def amounts(text: str) -> list[tuple[float, str | None, int, int]]:
    """(value, currency or None, start, end) of each number written in the text; dates, times,
    references (#1016, INV-204) and codes are not numbers."""
    return list(_amounts(text))


@lru_cache(maxsize=8192)
def _amounts(text: str) -> tuple[tuple[float, str | None, int, int], ...]:
    # a gate run reads the same texts against many facts and rival values: parse each text once
    clean = re.sub(
        r"\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?", lambda m: " " * len(m.group()), text
    )
    clean = re.sub(r"\b\d{1,2}:\d{2}(?::\d{2})?\b", lambda m: " " * len(m.group()), clean)
    clean = re.sub(r"\b\d{1,2}/\d{1,2}/\d{2,4}\b", lambda m: " " * len(m.group()), clean)
    out = []
    for m in _AMOUNT.finditer(clean):
        num = m.group("num")
        start = m.start("num")
        if start > 0 and clean[start - 1] in "#":
            continue
        try:
            v = float(num.replace(",", ""))
        except ValueError:
            continue
        if m.group("k"):
            v *= 1000
        cur = None
        pre, post = (m.group("pre") or "").strip(), (m.group("post") or "").strip()
        for ch, code in _SYMBOL.items():
            if ch in pre:
                cur = code
                if pre[:3].isalpha() and pre[:3].casefold() in _CODES:
                    cur = pre[:3].upper()
        if cur is None and pre.casefold() in _CODES:
            cur = pre.upper()
        if post.casefold() in _CODES:
            cur = post.upper()
        elif post.casefold() in _WORDS:
            cur = _WORDS[post.casefold()]
        out.append((v, cur, m.start(), m.end()))
    return tuple(out)


def num_of(value: Any) -> float | None:
    try:
        return float(str(value).replace(",", "").replace("$", "").strip())
    except (TypeError, ValueError):
        return None


_NUMERIC = re.compile(r"^\s*[$€£]?\s*-?\d[\d,]*(\.\d+)?\s*([A-Za-z]{3})?\s*$")


def is_numeric(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        or (isinstance(value, str) and bool(_NUMERIC.match(value)) and any(ch.isdigit() for ch in value))
    )


def carries_amount(text: str, value: Any, currency: str | None = None, tol: float = 0.005) -> bool:
    """Some number in the text is the value (and, where the text names a currency, the right one)."""
    want = num_of(re.sub(r"[A-Za-z€£$\s]", "", str(value))) if not isinstance(value, int | float) else value
    if want is None:
        return False
    for v, cur, _, _ in amounts(text):
        if abs(v - float(want)) <= tol and (currency is None or cur is None or cur == currency.upper()):
            return True
    return False


# ---- one fact ----------------------------------------------------------------------------------
_ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}")
_PHONE = re.compile(r"^\+?[\d\s().-]{7,}$")


def word_in(text: str, value: str) -> bool:
    """The value as a whole word or phrase of the text (case and spacing aside)."""
    v = norm_text(value)
    if not v:
        return False
    t = norm_text(text)
    return v in t and _word_rx(v).search(t) is not None


def at_name(text: str, name: str) -> bool:
    """A full name @-mentioned as chat apps write a display name: "@Hannah Singh, please ..." (the
    "@" that `word_in` reads as part of an address; never inside an address or "<@ID>")."""
    v = norm_text(name)
    if " " not in v or "@" not in text:
        return False
    return re.search(r"(?<![\w.<@-])@" + re.escape(v) + r"(?![\w@-])", norm_text(text)) is not None


@lru_cache(maxsize=16384)
def _word_rx(v: str) -> re.Pattern[str]:
    # digits inside a number are not a word: "1016" is not named by "$1016.75" or "1016,500.00"
    # (a decimal part or a thousands group), but is by "tickets 1016,1017"
    return re.compile(r"(?<![\w@.-])" + re.escape(v) + r"(?![\w@-])(?!\.\d)(?!,\d{3}(?![\d,]))")


def carries(text: str, fact: Any) -> bool:
    """The text carries the fact. A fact is a plain value (typed by its form) or a typed object:
    {"kind": "amount", "value": 12000.0, "currency": "USD"}, {"kind": "date", "value": ISO},
    {"kind": "person", "forms": [email, name]}, {"kind": "phrase", "value": "waitlist"},
    {"kind": "exact", "value": "WAITLIST"} (case kept), {"kind": "code", "value": "RMA-66787"}."""
    if type(text) is str and type(fact) is str:  # the same texts meet the same facts in every state
        return _carries_str(text, fact)
    return _carries(text, fact)


@lru_cache(maxsize=16384)
def _carries_str(text: str, fact: str) -> bool:
    return _carries(text, fact)


def _carries(text: str, fact: Any) -> bool:
    text = text or ""
    if isinstance(fact, dict):
        kind, value = fact.get("kind", "text"), fact.get("value")
        if kind == "amount":
            return carries_amount(text, value, fact.get("currency"))
        if kind == "date":
            return contains_when(text, str(value))
        if kind == "person":
            return any(word_in(text, f) or at_name(text, f) for f in fact.get("forms", []) if f)
        if kind == "exact":
            return re.search(r"(?<![\w-])" + re.escape(str(value)) + r"(?![\w-])", text) is not None
        if kind == "phrase":
            return says(text, str(value))
        if kind == "code":
            v = str(value)
            return word_in(text, v) or (v.startswith("#") and word_in(text, v[1:]))
        if kind == "any":
            return any(carries(text, f) for f in fact.get("of", []))
        if kind == "promise":
            return promises_amount(text, value, fact.get("currency"))
        fact = value
    f = str(fact if fact is not None else "").strip()
    if not f:
        return True
    if norm_text(f) in norm_text(text) and not f.isalpha():
        return True
    if re.fullmatch(r"[$€£]?\s*-?\d[\d,]*(\.\d+)?(\s*[A-Za-z]{3})?", f):
        cur = next((c for s, c in _SYMBOL.items() if s in f), None)
        code = re.search(r"[A-Za-z]{3}$", f)
        cur = code.group().upper() if code and code.group().casefold() in _CODES else cur
        return carries_amount(text, re.sub(r"[^\d.,-]", "", f), cur)
    if _PHONE.fullmatch(f) and sum(ch.isdigit() for ch in f) >= 10:
        return contains_phone(text, f)
    if _ISO_DAY.match(f):
        return contains_when(text, f)
    if re.fullmatch(r"[A-Za-z][A-Za-z' -]*", f):
        return says(text, f) or word_in(text, f)
    return word_in(text, f) or norm_text(f) in norm_text(text)


def names_value(text: str, value: Any) -> bool:
    """The text names the (rival or secret) value, normalised: "$12,000.00" names "12000.00"; a
    word names only itself as a whole word."""
    if type(text) is str and type(value) is str:  # a guard reads every leaf against one rival value
        return _names_str(text, value)
    return _names_value(text, value)


@lru_cache(maxsize=16384)
def _names_str(text: str, value: str) -> bool:
    return _names_value(text, value)


def _names_value(text: str, value: Any) -> bool:
    v = str(value).strip()
    if not v:
        return False
    if re.fullmatch(r"[$€£]?\s*-?\d{1,3}(,\d{3})*(\.\d+)?|[$€£]?\s*-?\d+\.\d+", v) and ("." in v or "," in v):
        return carries_amount(text, re.sub(r"[^\d.,-]", "", v))
    return word_in(text, v)


# ---- promises ----------------------------------------------------------------------------------
# what gives an amount to someone: done ("we credited", "has been applied") or pledged ("we will
# credit", "you'll receive"), unless negated or made conditional just before ("not yet credited",
# "until it is approved")
_PLEDGE = re.compile(
    r"\b(?:we|i)(?:'ve|'ll| have| will| shall| are going to| are| am)?\s+(?:now\s+|already\s+|just\s+|gladly\s+)?"
    r"(?:credited|crediting|applied|applying|issued|issuing|added|adding|refunded|refunding|processed|approved|"
    r"credit|apply|issue|add|refund|process|approve)(?:\s+you)?\b(?<!\bwe credit)(?<!\bi credit)"
    r"|\b(?:has|have|had|is|was|were|will|'ll)\s+(?:(?!not\b|never\b)\w+\s+)?(?:been\s+|be\s+)?(?:credited|applied|issued|added|"
    r"refunded|processed|approved|granted)\b"
    r"|\byou(?:'ll| will| would| should| are going to)\s+(?:\w+\s+)?(?:receive|get|see)\b"
    r"|\b(?:credit|refund) (?:is|was) (?:approved|on (?:its|the) way)\b",
    re.I,
)
_UNPLEDGE = re.compile(
    r"\b(?:not|n't|never|no|once|if|until|unless|when|after|before|whether|as soon as)\W+(?:\w+\W+){0,3}$",
    re.I,
)
# what says the amount is still only asked for or under review
_UNDER_REVIEW = re.compile(
    r"\b(?:under review|being reviewed|reviewing|review(?:ed)?|pending|awaiting|await|approval|"
    r"not (?:yet )?(?:been )?approved|escalat\w*|referred|request(?:ed|ing|s)?|claim(?:ed|s)?|asked for)\b",
    re.I,
)
_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n+")


def promises_amount(text: str, value: Any, currency: str | None = None) -> bool:
    """The text gives the customer the amount before it is approved: a sentence that carries it
    pledges it ("we credited $X", "we will credit $X once approved"), or quotes it without saying it
    is only requested or under review. "Your request for $X is under review" promises nothing."""
    for sent in _SENTENCES.split(text or ""):
        if not carries_amount(sent, re.sub(r"[^\d.,-]", "", str(value)), currency):
            continue
        pledged = any(not _UNPLEDGE.search(sent[: m.start()]) for m in _PLEDGE.finditer(sent))
        if pledged or not _UNDER_REVIEW.search(sent):
            return True
    return False
